//! Every kind of every pluggable list (host scheduler, device scheduler, interconnect): its
//! defaults round-trip, and it refuses a key it does not have, parameterless kinds included
//! (serde's `deny_unknown_fields` does not reach a unit variant; `registry!` wants `{}`).

use std::collections::BTreeSet;
use std::fmt::Debug;

use flashlane_core::config::Config;
use flashlane_core::device::DeviceSchedulerConfig;
use flashlane_core::host::HostSchedulerConfig;
use flashlane_core::interconnect::InterconnectConfig;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// `all` holds the defaults of every kind in `names`, each named by `name`.
fn check_list<C>(names: &[&str], all: Vec<C>, name: impl Fn(&C) -> &'static str)
where
    C: Serialize + DeserializeOwned + PartialEq + Debug,
{
    assert_eq!(
        names.iter().collect::<BTreeSet<_>>().len(),
        names.len(),
        "a kind name twice: {names:?}"
    );
    for cfg in all {
        let text = serde_json::to_string(&cfg).unwrap();
        assert_eq!(serde_json::from_str::<C>(&text).unwrap(), cfg, "{text}");
        let bad = format!(r#"{{"kind":"{}","no_such_key_bytes":1}}"#, name(&cfg));
        let err = serde_json::from_str::<C>(&bad).expect_err(&bad).to_string();
        assert!(err.contains("no_such_key_bytes"), "{bad}: {err}");
    }
}

/// Through `--set`, as a user meets it: the unknown key is named in the error.
fn check_overrides(table: &str, names: &[&str]) {
    for kind in names {
        let overrides = [
            (format!("{table}.kind"), kind.to_string()),
            (format!("{table}.no_such_key_bytes"), "1".to_string()),
        ];
        let err = Config::from_preset("mqsim-ssd", &overrides)
            .expect_err(kind)
            .to_string();
        assert!(err.contains("no_such_key_bytes"), "{kind}: {err}");
    }
}

#[test]
fn every_host_scheduler_refuses_unknown_keys() {
    check_list(
        HostSchedulerConfig::NAMES,
        HostSchedulerConfig::all_defaults(),
        HostSchedulerConfig::name,
    );
    check_overrides("host.scheduler", HostSchedulerConfig::NAMES);
}

#[test]
fn every_device_scheduler_refuses_unknown_keys() {
    check_list(
        DeviceSchedulerConfig::NAMES,
        DeviceSchedulerConfig::all_defaults(),
        DeviceSchedulerConfig::name,
    );
    check_overrides("device.scheduler", DeviceSchedulerConfig::NAMES);
}

#[test]
fn every_interconnect_refuses_unknown_keys() {
    check_list(
        InterconnectConfig::NAMES,
        InterconnectConfig::all_defaults(),
        InterconnectConfig::name,
    );
    check_overrides("interconnect", InterconnectConfig::NAMES);
}
