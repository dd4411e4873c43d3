//! The baseline multi-channel shared bus: one bus per channel, chips of a channel take turns.

use super::{Acquire, BusArbitration, Grant, Interconnect, InterconnectReport, Links, Transfer};
use crate::geometry::Geometry;
use crate::timing::Timing;

pub struct SharedBus {
    links: Links,
    chips_per_channel: u32,
}

impl SharedBus {
    pub fn new(geometry: &Geometry, timing: &Timing, arbitration: BusArbitration) -> Self {
        SharedBus {
            links: Links::new(geometry.channels as usize, timing).with_arbitration(arbitration),
            chips_per_channel: geometry.chips_per_channel,
        }
    }
}

impl Interconnect for SharedBus {
    fn acquire(&mut self, now_ns: u64, chip: u32, die: u32, what: Transfer) -> Acquire {
        self.links
            .acquire(now_ns, (chip / self.chips_per_channel) as usize, die, what)
    }
    /// `key` is the link (channel or chip) the wake-up was asked for.
    fn wake(&mut self, now_ns: u64, key: u32, granted: &mut Vec<Grant>) -> Option<u64> {
        self.links.wake(now_ns, key as usize, granted)
    }
    fn report(&self) -> InterconnectReport {
        self.links.report()
    }
}
