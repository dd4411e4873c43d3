//! The baseline multi-channel shared bus: one bus per channel, chips of a channel take turns.

use serde::{Deserialize, Serialize};

use super::{
    Acquire, BusArbitration, Grant, Interconnect, InterconnectKind, InterconnectReport, LinkPower,
    Links, Transfer,
};
use crate::geometry::Geometry;
use crate::timing::Timing;

/// `kind = "shared_bus"`: one shared bus per channel: the chips of a channel take
/// turns (the baseline SSD).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedBusConfig {
    #[serde(default, skip_serializing_if = "BusArbitration::is_commands_first")]
    pub arbitration: BusArbitration,
}

impl InterconnectKind for SharedBusConfig {
    type Built = SharedBus;
    fn build(&self, geometry: &Geometry, timing: &Timing) -> SharedBus {
        SharedBus::new(geometry, timing, self.arbitration)
    }
    fn link_power(&self) -> LinkPower {
        LinkPower::Bus
    }
    fn controllers_and_routers(&self, geometry: &Geometry) -> (u64, u64) {
        (geometry.channels as u64, 0)
    }
}

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

impl SharedBus {
    /// Whether `chip`'s channel is free at `now_ns` with no transfer waiting for it.
    pub fn channel_idle(&self, now_ns: u64, chip: u32) -> bool {
        self.links
            .idle_at(now_ns, (chip / self.chips_per_channel) as usize)
    }

    /// Keep `chip`'s channel, idle at `now_ns`, busy until `until_ns` (SSDsim's GC); false
    /// if it is not idle.
    pub fn hold_channel(&mut self, now_ns: u64, chip: u32, until_ns: u64) -> bool {
        self.links
            .hold(now_ns, (chip / self.chips_per_channel) as usize, until_ns)
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
