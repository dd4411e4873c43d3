//! The paths between flash controllers and chips.
//!
//! Every interconnect implements [`Interconnect`]; [`InterconnectConfig`] lists them.

mod ideal;
mod shared_bus;

use serde::{Deserialize, Serialize};

use crate::config::Timing;
use crate::geometry::Geometry;

pub use ideal::Ideal;
pub use shared_bus::SharedBus;

/// A granted transfer: it occupies its path from `start_ns` to `end_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub start_ns: u64,
    pub end_ns: u64,
}

/// Counters an interconnect reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct InterconnectReport {
    /// Transfers that could not start at the moment they were requested (path busy).
    pub path_conflicts: u64,
    /// Sum over transfers of (start - request time), ns.
    pub path_wait_ns: u64,
    /// Transfers granted.
    pub transfers: u64,
}

/// Contract: `transfer` is called in non-decreasing `now_ns` order (the engine's order) and
/// returns the interval the transfer occupies, starting no earlier than `now_ns`. An
/// implementation keeps whatever path state it needs; it never sees schedulers or the FTL.
pub trait Interconnect {
    /// Reserve a path between `chip`'s controller and `chip` for `bytes` bytes (commands are
    /// transfers too: pass `Transfer::Command`).
    fn transfer(&mut self, now_ns: u64, chip: u32, what: Transfer) -> Grant;
    fn report(&self) -> InterconnectReport;
}

/// What crosses the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transfer {
    Command,
    Data { bytes: u32 },
}

/// Interconnect choice in a config (`[interconnect] kind = "shared_bus"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum InterconnectConfig {
    /// One shared bus per channel: the chips of a channel take turns (the baseline SSD).
    SharedBus {},
    /// A private link per chip at the channel rate: no path conflicts (Venice's ideal SSD).
    Ideal {},
}

impl InterconnectConfig {
    pub fn name(&self) -> &'static str {
        match self {
            InterconnectConfig::SharedBus {} => "shared_bus",
            InterconnectConfig::Ideal {} => "ideal",
        }
    }

    pub fn build(&self, geometry: &Geometry, timing: &Timing) -> AnyInterconnect {
        match self {
            InterconnectConfig::SharedBus {} => AnyInterconnect::SharedBus(SharedBus::new(geometry, timing)),
            InterconnectConfig::Ideal {} => AnyInterconnect::Ideal(Ideal::new(geometry, timing)),
        }
    }
}

/// Every interconnect, for static dispatch.
pub enum AnyInterconnect {
    SharedBus(SharedBus),
    Ideal(Ideal),
}

impl Interconnect for AnyInterconnect {
    fn transfer(&mut self, now_ns: u64, chip: u32, what: Transfer) -> Grant {
        match self {
            AnyInterconnect::SharedBus(i) => i.transfer(now_ns, chip, what),
            AnyInterconnect::Ideal(i) => i.transfer(now_ns, chip, what),
        }
    }
    fn report(&self) -> InterconnectReport {
        match self {
            AnyInterconnect::SharedBus(i) => i.report(),
            AnyInterconnect::Ideal(i) => i.report(),
        }
    }
}

/// Nanoseconds to move `bytes` at `bytes_per_ns`, rounded up.
pub fn transfer_ns(bytes: u32, bytes_per_ns: f64) -> u64 {
    (bytes as f64 / bytes_per_ns).ceil() as u64
}

/// "Busy until T" links: a transfer starts when its link frees, in request order.
#[derive(Debug, Clone)]
pub(crate) struct Links {
    free_at_ns: Vec<u64>,
    command_ns: u64,
    bytes_per_ns: f64,
    report: InterconnectReport,
}

impl Links {
    pub(crate) fn new(count: usize, timing: &Timing) -> Self {
        Links {
            free_at_ns: vec![0; count],
            command_ns: timing.command_transfer_ns,
            bytes_per_ns: timing.channel_bytes_per_ns,
            report: InterconnectReport::default(),
        }
    }

    pub(crate) fn reserve(&mut self, now_ns: u64, link: usize, what: Transfer) -> Grant {
        let duration = match what {
            Transfer::Command => self.command_ns,
            Transfer::Data { bytes } => transfer_ns(bytes, self.bytes_per_ns),
        };
        let start_ns = now_ns.max(self.free_at_ns[link]);
        let end_ns = start_ns + duration;
        self.free_at_ns[link] = end_ns;
        self.report.transfers += 1;
        if start_ns > now_ns {
            self.report.path_conflicts += 1;
            self.report.path_wait_ns += start_ns - now_ns;
        }
        Grant { start_ns, end_ns }
    }

    pub(crate) fn report(&self) -> InterconnectReport {
        self.report
    }
}
