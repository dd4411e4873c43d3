//! Config keys that would silently do nothing are refused, each kind's own keys have
//! defaults, and every error from the typed config names the full dotted key.

use flashlane_core::config::Config;
use flashlane_core::device::DeviceSchedulerConfig;

fn with(overrides: &[(&str, &str)]) -> Result<Config, String> {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_preset("mqsim-default", &overrides).map_err(|e| e.to_string())
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
        DeviceSchedulerConfig::Sos {
            queue_size_leveller: true,
            write_hit_manager: true
        }
    );
    let off = with(&[
        ("device.scheduler.kind", "sos"),
        ("device.scheduler.write_hit_manager", "false"),
    ])
    .unwrap();
    assert_eq!(
        off.device.scheduler,
        DeviceSchedulerConfig::Sos {
            queue_size_leveller: true,
            write_hit_manager: false
        }
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
    let text = flashlane_core::config::preset_text("mqsim-default")
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
    for name in ["mqsim-default", "mqsim-platform"] {
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
