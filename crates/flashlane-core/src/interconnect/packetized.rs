//! pSSD (packetized SSD): one bus per channel as in the baseline, but commands and data travel
//! as packets at a multiple of the baseline channel rate (the Venice paper: "uses packetization
//! to double the flash channel bandwidth"), each packet carrying a header.

use serde::{Deserialize, Serialize};

use super::{
    Acquire, Grant, Interconnect, InterconnectKind, InterconnectReport, LinkPower, Links, Transfer,
};
use crate::geometry::Geometry;
use crate::timing::Timing;

/// `kind = "packetized"`, pSSD: one packetized bus per channel, faster than the baseline
/// bus. Also the parameters of pnSSD's buses ([`super::PnssdConfig`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketizedConfig {
    /// Packet rate over the baseline channel rate (`timing.channel_bytes_per_ns`).
    #[serde(default = "default_rate_ratio")]
    pub rate_ratio: f64,
    /// Header bytes added to every packet (command packets and data packets).
    #[serde(default = "default_header_bytes")]
    pub packet_header_bytes: u32,
}

fn default_rate_ratio() -> f64 {
    2.0
}

fn default_header_bytes() -> u32 {
    8
}

impl Default for PacketizedConfig {
    fn default() -> Self {
        PacketizedConfig {
            rate_ratio: default_rate_ratio(),
            packet_header_bytes: default_header_bytes(),
        }
    }
}

impl PacketizedConfig {
    pub(crate) fn check_params(&self) -> Result<(), String> {
        if !(self.rate_ratio.is_finite() && self.rate_ratio >= 1.0) {
            return Err(format!(
                "interconnect.rate_ratio must be a number >= 1, got {}",
                self.rate_ratio
            ));
        }
        Ok(())
    }
}

impl InterconnectKind for PacketizedConfig {
    type Built = Packetized;
    fn build(&self, geometry: &Geometry, timing: &Timing) -> Packetized {
        Packetized::new(geometry, timing, self)
    }
    fn validate(&self, _geometry: &Geometry) -> Result<(), String> {
        self.check_params()
    }
    fn link_power(&self) -> LinkPower {
        LinkPower::Bus
    }
    fn controllers_and_routers(&self, geometry: &Geometry) -> (u64, u64) {
        (geometry.channels as u64, 0)
    }
}

pub struct Packetized {
    links: Links,
    chips_per_channel: u32,
}

impl Packetized {
    pub fn new(geometry: &Geometry, timing: &Timing, config: &PacketizedConfig) -> Self {
        Packetized {
            links: Links::packetized(
                geometry.channels as usize,
                timing,
                config.rate_ratio,
                config.packet_header_bytes,
            ),
            chips_per_channel: geometry.chips_per_channel,
        }
    }
}

impl Interconnect for Packetized {
    fn acquire(&mut self, now_ns: u64, chip: u32, die: u32, what: Transfer) -> Acquire {
        self.links
            .acquire(now_ns, (chip / self.chips_per_channel) as usize, die, what)
    }
    /// `key` is the channel the wake-up was asked for.
    fn wake(&mut self, now_ns: u64, key: u32, granted: &mut Vec<Grant>) -> Option<u64> {
        self.links.wake(now_ns, key as usize, granted)
    }
    fn report(&self) -> InterconnectReport {
        self.links.report()
    }
}
