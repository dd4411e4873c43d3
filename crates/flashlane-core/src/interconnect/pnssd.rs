//! pnSSD (packetized network SSD): the chips form a `channels` x `chips_per_channel` array;
//! every chip sits on its row's horizontal packetized bus (the baseline channel) and on its
//! column's vertical packetized bus, each with a controller. A transfer takes the chip's bus
//! that is free now (horizontal first); if both are busy it queues on the one expected to free
//! first: fewer transfers waiting, then the earlier end of the current transfer, then horizontal.

use serde::{Deserialize, Serialize};

use super::packetized::PacketizedConfig;
use super::{
    Acquire, Grant, Interconnect, InterconnectKind, InterconnectReport, LinkPower, Links, Transfer,
};
use crate::geometry::Geometry;
use crate::timing::Timing;

/// `kind = "pnssd"`: every chip on a horizontal (channel) and a vertical packetized bus, both
/// with [`PacketizedConfig`]'s keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PnssdConfig(pub PacketizedConfig);

impl InterconnectKind for PnssdConfig {
    type Built = PnSsd;
    fn build(&self, geometry: &Geometry, timing: &Timing) -> PnSsd {
        PnSsd::new(geometry, timing, &self.0)
    }
    fn validate(&self, _geometry: &Geometry) -> Result<(), String> {
        self.0.check_params()
    }
    fn link_power(&self) -> LinkPower {
        LinkPower::Bus
    }
    fn controllers_and_routers(&self, geometry: &Geometry) -> (u64, u64) {
        ((geometry.channels + geometry.chips_per_channel) as u64, 0)
    }
}

pub struct PnSsd {
    /// Links `0..rows` are the horizontal buses, `rows..rows + columns` the vertical ones.
    links: Links,
    rows: u32,
    columns: u32,
}

impl PnSsd {
    pub fn new(geometry: &Geometry, timing: &Timing, config: &PacketizedConfig) -> Self {
        let (rows, columns) = (geometry.channels, geometry.chips_per_channel);
        PnSsd {
            links: Links::packetized(
                (rows + columns) as usize,
                timing,
                config.rate_ratio,
                config.packet_header_bytes,
            ),
            rows,
            columns,
        }
    }
}

impl Interconnect for PnSsd {
    fn acquire(&mut self, now_ns: u64, chip: u32, die: u32, what: Transfer) -> Acquire {
        let horizontal = (chip / self.columns) as usize;
        let vertical = (self.rows + chip % self.columns) as usize;
        let idle_now = |link: usize| self.links.free_from(link).is_some_and(|t| t <= now_ns);
        let link = if idle_now(horizontal) {
            horizontal
        } else if idle_now(vertical) {
            vertical
        } else {
            let expected = |link: usize| {
                (
                    self.links.waiting(link),
                    self.links.free_from(link).unwrap_or(u64::MAX),
                )
            };
            if expected(vertical) < expected(horizontal) {
                vertical
            } else {
                horizontal
            }
        };
        self.links.acquire(now_ns, link, die, what)
    }
    /// `key` is the bus the wake-up was asked for.
    fn wake(&mut self, now_ns: u64, key: u32, granted: &mut Vec<Grant>) -> Option<u64> {
        self.links.wake(now_ns, key as usize, granted)
    }
    fn report(&self) -> InterconnectReport {
        self.links.report()
    }
}
