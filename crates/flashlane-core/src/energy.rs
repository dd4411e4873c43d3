//! The SSD's power and energy constants (`[energy]` in a config), a model parameter like
//! `timing.rs`; `stats/energy.rs` turns them and the run's counters into joules. Every
//! constant's source is in `docs/models/venice.md` ("Energy").

use serde::{Deserialize, Serialize};

use crate::timing::Timing;

/// Power and energy constants (`[energy]` in a config; every key optional).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EnergyConfig {
    /// Power a chip draws while its array reads, programs or erases (mW); used to derive the
    /// per-operation energies that are not given. 33 mW = 10 mA typical operating current
    /// (IDD1/IDD2/IDD3) x 3.3 V (Numonyx NAND01G-B2B datasheet, Table 23, 3 V devices).
    pub flash_active_mw: f64,
    /// Energy of one page read (array part, nJ); default `flash_active_mw x page_read_ns`.
    pub flash_read_nj: Option<f64>,
    /// Energy of one page program (nJ); default `flash_active_mw x page_program_ns`.
    pub flash_program_nj: Option<f64>,
    /// Energy of one block erase (nJ); default `flash_active_mw x block_erase_ns`.
    pub flash_erase_nj: Option<f64>,
    /// Power of a chip whose array is idle (mW): 10 uA typical standby x 3.3 V (same
    /// datasheet). Drawn by every chip over the whole window (the active power comes on top).
    pub chip_idle_mw: f64,
    /// Power of a shared bus while it carries a transfer (mW): 10.8, the Venice paper's
    /// link power 1.08 mW read as "90% less power consumption than that of a shared channel
    /// bus". Used for shared_bus, packetized (pSSD) and pnssd buses.
    pub bus_active_mw: f64,
    /// Power of a point-to-point link while it carries a transfer (mW): the Venice paper's
    /// "each link consumes about 1.08 mW for a 4KB NAND flash page transfer". Used for
    /// Venice, NoSSD and ideal links.
    pub link_active_mw: f64,
    /// Static power of one router (mW): the Venice paper's "each router consumes 0.241 mW"
    /// (also used for NoSSD's routers, for which the paper gives no number).
    pub router_static_mw: f64,
    /// Static power of one flash controller (mW). 0 by default: the Venice paper's power
    /// model (Table 4, Sec. 6.4) counts flash operations, routers and links only.
    pub controller_static_mw: f64,
}

impl Default for EnergyConfig {
    fn default() -> Self {
        EnergyConfig {
            flash_active_mw: 33.0,
            flash_read_nj: None,
            flash_program_nj: None,
            flash_erase_nj: None,
            chip_idle_mw: 0.033,
            bus_active_mw: 10.8,
            link_active_mw: 1.08,
            router_static_mw: 0.241,
            controller_static_mw: 0.0,
        }
    }
}

impl EnergyConfig {
    /// Every value must be a finite number >= 0; messages name the key.
    pub fn validate(&self) -> Result<(), String> {
        let keys = [
            ("flash_active_mw", Some(self.flash_active_mw)),
            ("flash_read_nj", self.flash_read_nj),
            ("flash_program_nj", self.flash_program_nj),
            ("flash_erase_nj", self.flash_erase_nj),
            ("chip_idle_mw", Some(self.chip_idle_mw)),
            ("bus_active_mw", Some(self.bus_active_mw)),
            ("link_active_mw", Some(self.link_active_mw)),
            ("router_static_mw", Some(self.router_static_mw)),
            ("controller_static_mw", Some(self.controller_static_mw)),
        ];
        for (key, value) in keys {
            if let Some(v) = value {
                if !(v.is_finite() && v >= 0.0) {
                    return Err(format!(
                        "energy.{key} must be a finite number >= 0, got {v}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// (read, program, erase) energy per operation in nJ: given, or active power x op time
    /// (mW x ns = pJ, / 1000 = nJ).
    pub fn operation_nj(&self, timing: &Timing) -> (f64, f64, f64) {
        let derived = |ns: u64| self.flash_active_mw * ns as f64 / 1000.0;
        (
            self.flash_read_nj
                .unwrap_or_else(|| derived(timing.page_read_ns)),
            self.flash_program_nj
                .unwrap_or_else(|| derived(timing.page_program_ns)),
            self.flash_erase_nj
                .unwrap_or_else(|| derived(timing.block_erase_ns)),
        )
    }
}
