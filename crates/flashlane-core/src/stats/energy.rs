//! SSD energy: flash operations, interconnect transfers and static power over the run.
//!
//! The energy is computed once at the end of a run from counters the simulation keeps anyway
//! (flash operations started, link time spent carrying bits, the measured window), so it costs
//! nothing on the hot path. Every constant's source is in `docs/models/venice.md` ("Energy").

use serde::Serialize;

use crate::config::Config;
use crate::interconnect::{InterconnectReport, LinkPower};

use super::FlashCounts;

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
    let active_mw = match interconnect.link_power() {
        LinkPower::Bus => config.bus_active_mw,
        LinkPower::Link => config.link_active_mw,
    };
    let interconnect_j = report.link_active_ns as f64 * active_mw * PJ;
    let (controllers, routers) = interconnect.controllers_and_routers(geometry);
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
