//! Config keys that would silently do nothing are refused, each kind's own keys have
//! defaults, and every error from the typed config names the full dotted key.

use flashlane_core::config::Config;
use flashlane_core::device::{DeviceSchedulerConfig, SosConfig};

fn with(overrides: &[(&str, &str)]) -> Result<Config, String> {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_preset("mqsim-ssd", &overrides).map_err(|e| e.to_string())
}

#[test]
fn a_key_of_a_disabled_section_is_an_error_naming_the_switch() {
    let e = with(&[("variation.initial_pe_cycles", "12000")]).unwrap_err();
    assert!(
        e.contains("variation.initial_pe_cycles") && e.contains("variation.enabled = true"),
        "{e}"
    );
    let on = with(&[
        ("variation.initial_pe_cycles", "12000"),
        ("variation.enabled", "true"),
    ])
    .unwrap();
    assert_eq!(on.variation.initial_pe_cycles, 12000);
    let e = with(&[("device.write_buffer_page_ns", "5")]).unwrap_err();
    assert!(
        e.contains("device.write_buffer_page_ns") && e.contains("device.write_buffer_bytes"),
        "{e}"
    );
    let e = with(&[("device.write_buffer_flush_threshold_fraction", "0.9")]).unwrap_err();
    assert!(
        e.contains("device.write_buffer_flush_threshold_fraction"),
        "{e}"
    );
}

#[test]
fn sos_alone_takes_both_switches_on() {
    let config = with(&[("device.scheduler.kind", "sos")]).unwrap();
    assert_eq!(
        config.device.scheduler,
        DeviceSchedulerConfig::Sos(SosConfig {
            queue_size_leveller: true,
            write_hit_manager: true
        })
    );
    let off = with(&[
        ("device.scheduler.kind", "sos"),
        ("device.scheduler.write_hit_manager", "false"),
    ])
    .unwrap();
    assert_eq!(
        off.device.scheduler,
        DeviceSchedulerConfig::Sos(SosConfig {
            queue_size_leveller: true,
            write_hit_manager: false
        })
    );
}

#[test]
fn type_and_field_errors_name_the_full_key() {
    let e = with(&[
        ("device.scheduler.kind", "sos"),
        ("device.scheduler.queue_size_leveller", "maybe"),
    ])
    .unwrap_err();
    assert!(e.contains("device.scheduler.queue_size_leveller"), "{e}");
    let e = with(&[("device.scheduler.leveller", "true")]).unwrap_err();
    assert!(
        e.contains(": device.scheduler.leveller: unknown field"),
        "{e}"
    );
    // A config file: the missing key by its full name, with the file's line.
    let text = flashlane_core::config::preset_text("mqsim-ssd")
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("page_read_ns"))
        .collect::<Vec<_>>()
        .join("\n");
    let e = Config::from_text(&text, "my.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("my.toml") && e.contains("timing.page_read_ns"),
        "{e}"
    );
}

/// MQSim's shipped ssdconfig.xml (commit 7ec40e3) says PRIORITY_OUT_OF_ORDER; the presets that
/// cite it must not say OUT_OF_ORDER alone.
#[test]
fn mqsim_presets_name_the_shipped_scheduling_policy() {
    for name in ["mqsim-ssd", "mqsim-platform"] {
        let source = Config::from_preset(name, &[]).unwrap().source;
        assert!(source.contains("PRIORITY_OUT_OF_ORDER"), "{name}: {source}");
        assert!(
            !source
                .replace("PRIORITY_OUT_OF_ORDER", "")
                .contains("OUT_OF_ORDER"),
            "{name}: {source}"
        );
    }
}

fn over_preset(text: &str, overrides: &[(&str, &str)]) -> Result<Config, String> {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_preset_and_text("mqsim-ssd", text, "partial.toml", &overrides)
        .map_err(|e| e.to_string())
}

#[test]
fn a_partial_file_merges_over_a_preset_key_by_key() {
    let preset = Config::from_preset("mqsim-ssd", &[]).unwrap();
    let merged = over_preset(
        "[host]\nqueue_length_requests = 8\n\n[ftl]\nmapping_cache_bytes = 0\n",
        &[],
    )
    .unwrap();
    assert_eq!(merged.host.queue_length_requests, 8);
    assert_eq!(merged.ftl.mapping_cache_bytes, 0);
    // Everything the file does not name is the preset's.
    assert_eq!(merged.geometry, preset.geometry);
    assert_eq!(merged.timing, preset.timing);
    assert_eq!(merged.host.scheduler, preset.host.scheduler);
    assert_eq!(
        merged.ftl.overprovisioning_fraction,
        preset.ftl.overprovisioning_fraction
    );
    // The same as the --set chain.
    let set = with(&[
        ("host.queue_length_requests", "8"),
        ("ftl.mapping_cache_bytes", "0"),
    ])
    .unwrap();
    assert_eq!(merged, set);
    // --set applies after the file.
    let both = over_preset(
        "[host]\nqueue_length_requests = 8\n",
        &[("host.queue_length_requests", "16")],
    )
    .unwrap();
    assert_eq!(both.host.queue_length_requests, 16);
}

#[test]
fn a_partial_file_that_changes_a_kind_replaces_the_presets_table() {
    // The preset's device scheduler has no `queue_size_leveller`; a file switching to SOS
    // gets SOS's defaults for what it does not set, not the old kind's keys.
    let merged = over_preset(
        "[device.scheduler]\nkind = \"sos\"\nwrite_hit_manager = false\n",
        &[],
    )
    .unwrap();
    let set = with(&[
        ("device.scheduler.kind", "sos"),
        ("device.scheduler.write_hit_manager", "false"),
    ])
    .unwrap();
    assert_eq!(merged.device.scheduler, set.device.scheduler);
    assert!(matches!(
        merged.device.scheduler,
        DeviceSchedulerConfig::Sos { .. }
    ));
}

#[test]
fn errors_in_a_partial_file_name_the_file_the_key_and_its_line() {
    let e = over_preset("# comment\n[ftl]\nmaping_cache_bytes = 0\n", &[]).unwrap_err();
    assert!(
        e.contains("partial.toml over preset mqsim-ssd")
            && e.contains("ftl.maping_cache_bytes")
            && e.contains("line 3"),
        "{e}"
    );
    let e = over_preset("[host]\nqueue_length_requests = \"x\"\n", &[]).unwrap_err();
    assert!(
        e.contains("host.queue_length_requests") && e.contains("line 2"),
        "{e}"
    );
    let e = over_preset("[host\n", &[]).unwrap_err();
    assert!(e.contains("partial.toml") && e.contains("line 1"), "{e}");
    let e = Config::from_preset_and_text("no-such", "", "partial.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown preset `no-such`"), "{e}");
}

#[test]
fn the_renamed_preset_says_its_new_name() {
    let e = Config::from_preset("mqsim-default", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("renamed `mqsim-ssd`") && e.contains("mqsim-platform"),
        "{e}"
    );
    // The same settings under the new name.
    let c = Config::from_preset("mqsim-ssd", &[]).unwrap();
    assert_eq!(c.name, "mqsim-ssd");
    assert_eq!(c.geometry.channels, 8);
    assert_eq!(c.ftl.mapping_cache_bytes, 2 << 20);
}
