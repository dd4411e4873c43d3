//! SSD energy: flash operations, interconnect transfers and static power over the run.
//!
//! The energy is computed once at the end of a run from counters the simulation keeps anyway
//! (flash operations started, link time spent carrying bits, the measured window), so it costs
//! nothing on the hot path. Every constant's source is in `docs/models/venice.md` ("Energy").

use serde::{Deserialize, Serialize};

use crate::config::{Config, Timing};
use crate::geometry::Geometry;
use crate::interconnect::{InterconnectConfig, InterconnectReport, MeshShape};

use super::FlashCounts;

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

/// Energy of the run, joules. Window: the measured window (`sim_time_ns`) for flash
/// operations and static power; interconnect transfers over the whole run (its counters are
/// not windowed, so warm-up transfers are included when `--warmup` is used).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct EnergyStats {
    /// Sum of every part below.
    pub total_j: f64,
    /// `total_j / sim_time_ns` (W); 0 for an empty window.
    pub average_power_w: f64,
    /// `total_j / completed requests`, in microjoules; 0 without requests.
    pub per_request_uj: f64,
    /// Flash array operations: page reads (host and mapping) x read energy + page programs
    /// (host and mapping) x program energy + GC copybacks x (read + program) + erases x erase
    /// energy.
    pub flash_j: f64,
    /// Interconnect transfers: time links spent carrying bits (`link_active_ns`, every link
    /// of a path counted) x the bus or link active power.
    pub interconnect_j: f64,
    /// Static and idle power over the window: chips' idle power + routers' static power +
    /// controllers' static power.
    pub static_j: f64,
    /// Of `static_j`: routers (Venice, NoSSD) only.
    pub router_static_j: f64,
    /// Of `static_j`: flash controllers only.
    pub controller_static_j: f64,
    /// Of `static_j`: chips' idle power only.
    pub chip_idle_j: f64,
}

/// Flash controllers and routers of an interconnect (what draws static power).
fn controllers_and_routers(interconnect: &InterconnectConfig, geometry: &Geometry) -> (u64, u64) {
    let (rows, columns) = (geometry.channels as u64, geometry.chips_per_channel as u64);
    match interconnect {
        InterconnectConfig::SharedBus { .. } | InterconnectConfig::Packetized(_) => (rows, 0),
        // One controller per chip's private link would be a controller per chip; the ideal
        // SSD's links are driven by the baseline's per-channel controllers.
        InterconnectConfig::Ideal { .. } => (rows, 0),
        InterconnectConfig::Pnssd(_) => (rows + columns, 0),
        InterconnectConfig::Nossd(c) => (
            c.controllers_count as u64,
            MeshShape::new(geometry, c.controllers_count).routers() as u64,
        ),
        InterconnectConfig::Venice(c) => (
            c.controllers_count as u64,
            MeshShape::new(geometry, c.controllers_count).routers() as u64,
        ),
    }
}

/// Energy of a run from its counters (see [`EnergyStats`] for every definition).
pub fn energy_stats(
    full: &Config,
    flash: &FlashCounts,
    report: &InterconnectReport,
    window_ns: u64,
    completed_requests: u64,
) -> EnergyStats {
    // mW x ns = pJ; 1e-12 J.
    const PJ: f64 = 1e-12;
    let (config, geometry, timing, interconnect) = (
        &full.energy,
        &full.geometry,
        &full.timing,
        &full.interconnect,
    );
    let (read_nj, program_nj, erase_nj) = config.operation_nj(timing);
    let reads = (flash.reads + flash.mapping_reads + flash.copybacks) as f64;
    let programs = (flash.programs + flash.mapping_programs + flash.copybacks) as f64;
    let flash_j = (reads * read_nj + programs * program_nj + flash.erases as f64 * erase_nj) * 1e-9;
    let active_mw = match interconnect {
        InterconnectConfig::SharedBus { .. }
        | InterconnectConfig::Packetized(_)
        | InterconnectConfig::Pnssd(_) => config.bus_active_mw,
        InterconnectConfig::Ideal { .. }
        | InterconnectConfig::Nossd(_)
        | InterconnectConfig::Venice(_) => config.link_active_mw,
    };
    let interconnect_j = report.link_active_ns as f64 * active_mw * PJ;
    let (controllers, routers) = controllers_and_routers(interconnect, geometry);
    let window = window_ns as f64;
    let router_static_j = routers as f64 * config.router_static_mw * window * PJ;
    let controller_static_j = controllers as f64 * config.controller_static_mw * window * PJ;
    let chip_idle_j = geometry.chips() as f64 * config.chip_idle_mw * window * PJ;
    let static_j = router_static_j + controller_static_j + chip_idle_j;
    let total_j = flash_j + interconnect_j + static_j;
    EnergyStats {
        total_j,
        average_power_w: if window_ns > 0 {
            total_j / (window * 1e-9)
        } else {
            0.0
        },
        per_request_uj: if completed_requests > 0 {
            total_j * 1e6 / completed_requests as f64
        } else {
            0.0
        },
        flash_j,
        interconnect_j,
        static_j,
        router_static_j,
        controller_static_j,
        chip_idle_j,
    }
}
