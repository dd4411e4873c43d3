//! The ideal (path-conflict-free) SSD: every chip has a private link at the channel rate.

use super::{Acquire, BusArbitration, Grant, Interconnect, InterconnectReport, Links, Transfer};
use crate::geometry::Geometry;
use crate::timing::Timing;

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
