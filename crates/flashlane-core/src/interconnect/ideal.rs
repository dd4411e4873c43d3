//! The ideal (path-conflict-free) SSD: every chip has a private link at the channel rate.

use serde::{Deserialize, Serialize};

use super::{
    Acquire, BusArbitration, Grant, Interconnect, InterconnectKind, InterconnectReport, LinkPower,
    Links, Transfer,
};
use crate::geometry::Geometry;
use crate::timing::Timing;

/// `kind = "ideal"`: a private link per chip at the channel rate: no path
/// conflicts (Venice's ideal SSD).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdealConfig {
    #[serde(default, skip_serializing_if = "BusArbitration::is_commands_first")]
    pub arbitration: BusArbitration,
}

impl InterconnectKind for IdealConfig {
    type Built = Ideal;
    fn build(&self, geometry: &Geometry, timing: &Timing) -> Ideal {
        Ideal::new(geometry, timing, self.arbitration)
    }
    fn link_power(&self) -> LinkPower {
        LinkPower::Link
    }
    fn controllers_and_routers(&self, geometry: &Geometry) -> (u64, u64) {
        // A controller per private link would be one per chip; the ideal SSD's links are
        // driven by the baseline's per-channel controllers.
        (geometry.channels as u64, 0)
    }
}

pub struct Ideal {
    links: Links,
}

impl Ideal {
    pub fn new(geometry: &Geometry, timing: &Timing, arbitration: BusArbitration) -> Self {
        Ideal {
            links: Links::new(geometry.chips() as usize, timing).with_arbitration(arbitration),
        }
    }
}

impl Interconnect for Ideal {
    fn acquire(&mut self, now_ns: u64, chip: u32, die: u32, what: Transfer) -> Acquire {
        self.links.acquire(now_ns, chip as usize, die, what)
    }
    /// `key` is the link (channel or chip) the wake-up was asked for.
    fn wake(&mut self, now_ns: u64, key: u32, granted: &mut Vec<Grant>) -> Option<u64> {
        self.links.wake(now_ns, key as usize, granted)
    }
    fn report(&self) -> InterconnectReport {
        self.links.report()
    }
}
