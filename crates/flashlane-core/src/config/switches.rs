//! The switches of the `combined-8x8` preset (docs/models/combined.md): each paper's technique,
//! and each drive behaviour a technique rests on, as the `--set`s that turn it on with the
//! paper's settings. The preset has all of them off; a combination is the union of its
//! switches' settings. Techniques that fill the same slot (the host scheduler, the
//! interconnect, the device scheduler) exclude each other.

/// What a switch changes; two techniques of one slot cannot be on together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    HostScheduler,
    Interconnect,
    DeviceScheduler,
    /// A behaviour of the drive itself (any number can be on).
    Drive,
}

#[derive(Debug)]
pub struct Switch {
    pub name: &'static str,
    /// The paper it comes from, by its short name.
    pub paper: &'static str,
    pub slot: Slot,
    /// `KEY=VALUE` settings, as `--set` takes them.
    pub settings: &'static [&'static str],
    /// Drive behaviours the technique acts on: without them it has nothing to act on (VIOS
    /// without process variation has no fast blocks; PASS's gain rests on regions that slow
    /// when crowded or given long runs). Turned on with it by [`settings_of`].
    pub needs: &'static [&'static str],
}

/// Every switch of `combined-8x8`.
pub const COMBINED_SWITCHES: &[Switch] = &[
    Switch {
        // The public SSDsim fork's PIQ (docs/models/piq.md, "Two issue rules"): conflict-free
        // passes, every waiting request handed over at once while every channel is idle.
        name: "piq",
        paper: "PIQ",
        slot: Slot::HostScheduler,
        settings: &[
            "host.scheduler.kind=piq",
            "host.handover_per_pass=all",
            "host.handover_needs_idle_channels=true",
        ],
        needs: &[],
    },
    Switch {
        // VIOS's chip and channel batches with the fork's hand-over, and conflicting writes
        // sent to fast blocks (docs/models/vios.md).
        name: "vios",
        paper: "VIOS",
        slot: Slot::HostScheduler,
        settings: &[
            "host.scheduler.kind=vios",
            "ftl.block_choice=fastest_for_conflicts",
            "host.handover_per_pass=all",
            "host.handover_needs_idle_channels=true",
        ],
        needs: &["variation"],
    },
    Switch {
        // PASS with the paper's 4 GB regions and batches of 16 (docs/models/pass.md). It needs
        // both readings of its drive behaviour: with the outstanding one alone it has almost
        // nothing to act on here, since it only reorders what waits and never holds a request
        // back (docs/models/combined.md, "PASS on `combined-8x8`").
        name: "pass",
        paper: "PASS",
        slot: Slot::HostScheduler,
        settings: &["host.scheduler.kind=pass"],
        needs: &["crowded_regions", "region_runs"],
    },
    Switch {
        // Venice's mesh with path reservation and non-minimal adaptive routing. Its links run
        // at the channel's rate, as the paper's do (8-bit 1 GHz links beside 1.2 GB/s
        // channels; a flash node's router talks to its chip over the chip's own I/O pins):
        // one byte per 25 ns is the preset's 0.04 B/ns. Venice's default 1 ns cycle would be
        // 25 times the bus it replaces.
        name: "venice",
        paper: "Venice",
        slot: Slot::Interconnect,
        settings: &["interconnect.kind=venice", "interconnect.link_cycle_ns=25"],
        needs: &[],
    },
    Switch {
        // SOS with both mechanisms: queue-size levelling and write-hit cancelling.
        name: "sos",
        paper: "SOS",
        slot: Slot::DeviceScheduler,
        settings: &["device.scheduler.kind=sos"],
        needs: &[],
    },
    Switch {
        // VIOS's process-variation model at the paper's main stage, 12K P/E cycles.
        name: "variation",
        paper: "VIOS",
        slot: Slot::Drive,
        settings: &[
            "variation.enabled=true",
            "variation.initial_pe_cycles=12000",
        ],
        needs: &[],
    },
    Switch {
        // PASS's drive behaviour (Sec. 2, Fig. 2): a 4 GB region slows past 8 requests
        // outstanding in it. The curve is the assumption docs/models/pass.md states, not a
        // measured one.
        name: "crowded_regions",
        paper: "PASS",
        slot: Slot::Drive,
        settings: &[
            "device.region_contention.region_bytes=4294967296",
            "device.region_contention.outstanding_requests=[1, 8, 16, 64]",
            "device.region_contention.service_time_factor=[1.0, 1.0, 1.25, 2.0]",
        ],
        needs: &[],
    },
    Switch {
        // PASS's drive behaviour read from its scheduler text (Sec. 3.2-3.3): a 4 GB region
        // slows past 8 requests handed to it in a row. The same assumed curve and the same N
        // (Fig. 2's best Qdep of a 4 GB region) as `crowded_regions`, not PASS's batch
        // threshold of 16, so PASS's own turns are not exempt by construction.
        name: "region_runs",
        paper: "PASS",
        slot: Slot::Drive,
        settings: &[
            "device.region_runs.region_bytes=4294967296",
            "device.region_runs.run_length_requests=[1, 8, 16, 64]",
            "device.region_runs.service_time_factor=[1.0, 1.0, 1.25, 2.0]",
        ],
        needs: &[],
    },
];

pub fn switch(name: &str) -> Option<&'static Switch> {
    COMBINED_SWITCHES.iter().find(|s| s.name == name)
}

/// The `(key, value)` overrides of a combination of switches, with the drive behaviours they
/// need; an unknown name or two techniques of one slot is an error that names them.
pub fn settings_of(names: &[&str]) -> Result<Vec<(String, String)>, String> {
    let mut on: Vec<&Switch> = Vec::new();
    for name in names {
        let s = switch(name).ok_or_else(|| {
            let known: Vec<&str> = COMBINED_SWITCHES.iter().map(|s| s.name).collect();
            format!(
                "unknown switch `{name}`; the switches: {}",
                known.join(", ")
            )
        })?;
        if let Some(other) = on
            .iter()
            .find(|o| o.slot == s.slot && s.slot != Slot::Drive)
        {
            return Err(format!(
                "switches `{}` and `{}` both set the {:?}: one at a time",
                other.name, s.name, s.slot
            ));
        }
        on.push(s);
    }
    for name in on.iter().flat_map(|s| s.needs).copied().collect::<Vec<_>>() {
        if !on.iter().any(|s| s.name == name) {
            on.push(switch(name).expect("`needs` names a switch"));
        }
    }
    Ok(on
        .iter()
        .flat_map(|s| s.settings)
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("a setting is KEY=VALUE");
            (k.to_string(), v.to_string())
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn every_switch_alone_and_with_its_needs_makes_a_valid_config() {
        for s in COMBINED_SWITCHES {
            for need in s.needs {
                assert!(switch(need).is_some(), "{}: needs {need}", s.name);
            }
            let overrides = settings_of(&[s.name]).unwrap();
            Config::from_preset("combined-8x8", &overrides)
                .unwrap_or_else(|e| panic!("{}: {e}", s.name));
        }
    }

    #[test]
    fn techniques_of_one_slot_exclude_each_other_and_names_are_checked() {
        let e = settings_of(&["piq", "pass"]).unwrap_err();
        assert!(e.contains("`piq` and `pass`"), "{e}");
        let e = settings_of(&["nope"]).unwrap_err();
        assert!(e.contains("unknown switch `nope`"), "{e}");
        let all = settings_of(&["vios", "venice", "sos", "crowded_regions"]).unwrap();
        assert!(all.contains(&("variation.enabled".into(), "true".into())));
        Config::from_preset("combined-8x8", &all).unwrap();
    }

    #[test]
    fn pass_turns_on_both_readings_of_its_drive_behaviour() {
        let keys = |names: &[&str]| -> Vec<String> {
            settings_of(names)
                .unwrap()
                .into_iter()
                .map(|(k, _)| k)
                .collect()
        };
        let pass = keys(&["pass"]);
        for key in [
            "host.scheduler.kind",
            "device.region_contention.region_bytes",
            "device.region_runs.region_bytes",
        ] {
            assert!(pass.contains(&key.to_string()), "{key}: {pass:?}");
        }
        // The same drive, without PASS: what PASS is compared with.
        let drive = keys(&["crowded_regions", "region_runs"]);
        assert_eq!(pass.len(), drive.len() + 1, "{pass:?}");
        assert!(drive.iter().all(|k| pass.contains(k)));
        // Named already, a need is not added twice.
        assert_eq!(keys(&["pass", "region_runs"]).len(), pass.len());
    }
}
