//! NoSSD: a 2D mesh of chips (see [`MeshShape`]) with a buffered router inside each chip,
//! deterministic dimension-order (XY) routing and packet switching. A transfer is cut into
//! packets of at most one port buffer; each packet moves link by link and waits in the buffer of
//! the router it reached while its next link is busy (virtual cut-through: its head moves on
//! after one hop time when the next link is free, its tail cannot leave before it arrived).
//! Transfers use the controller nearest to the chip, whether it is busy or not (no adaptivity).
//!
//! Because routing is deterministic and buffers take whole packets, a transfer's schedule over
//! its path is known when it is asked for: every link keeps a calendar ("busy until"), and the
//! transfer is granted at once with the times it will start and end.

use serde::{Deserialize, Serialize};

use super::mesh::MeshShape;
use super::{
    transfer_ns, Acquire, Grant, Interconnect, InterconnectKind, InterconnectReport, LinkPower,
    Transfer,
};
use crate::geometry::Geometry;
use crate::timing::Timing;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoSsdConfig {
    /// Flash controllers attached to the mesh edge.
    #[serde(default = "default_controllers")]
    pub controllers_count: u32,
    /// Bytes one port buffer holds: the largest packet (the Venice paper: "16KB buffer per
    /// router port").
    #[serde(default = "default_buffer")]
    pub port_buffer_bytes: u32,
    /// Link data rate; 1.0 = 8-bit links at 1 GHz, the same links as Venice.
    #[serde(default = "default_link_rate")]
    pub link_bytes_per_ns: f64,
    /// Time a packet's head needs to cross one router and link.
    #[serde(default = "default_hop")]
    pub hop_ns: u64,
    /// Bytes of a command and address sequence.
    #[serde(default = "default_command_bytes")]
    pub command_bytes: u32,
}

fn default_controllers() -> u32 {
    8
}
fn default_buffer() -> u32 {
    16 * 1024
}
fn default_link_rate() -> f64 {
    1.0
}
fn default_hop() -> u64 {
    1
}
fn default_command_bytes() -> u32 {
    7
}

impl NoSsdConfig {
    fn check_params(&self) -> Result<(), String> {
        if self.port_buffer_bytes == 0 {
            return Err("interconnect.port_buffer_bytes must be at least 1".into());
        }
        if !(self.link_bytes_per_ns.is_finite() && self.link_bytes_per_ns > 0.0) {
            return Err("interconnect.link_bytes_per_ns must be a positive number".into());
        }
        Ok(())
    }
}

impl InterconnectKind for NoSsdConfig {
    type Built = Box<NoSsd>;
    fn build(&self, geometry: &Geometry, timing: &Timing) -> Box<NoSsd> {
        Box::new(NoSsd::new(geometry, timing, self))
    }
    fn validate(&self, geometry: &Geometry) -> Result<(), String> {
        MeshShape::check(geometry, self.controllers_count)?;
        self.check_params()
    }
    fn link_power(&self) -> LinkPower {
        LinkPower::Link
    }
    fn controllers_and_routers(&self, geometry: &Geometry) -> (u64, u64) {
        MeshShape::controllers_and_routers(geometry, self.controllers_count)
    }
}

pub struct NoSsd {
    shape: MeshShape,
    config: NoSsdConfig,
    busy_until_ns: Vec<u64>,
    busy_ns: Vec<u64>,
    /// Scratch: the links of the current transfer's path, in the direction of travel.
    path: Vec<usize>,
    report: InterconnectReport,
}

impl NoSsd {
    pub fn new(geometry: &Geometry, _timing: &Timing, config: &NoSsdConfig) -> Self {
        let shape = MeshShape::new(geometry, config.controllers_count);
        let links = shape.link_count();
        NoSsd {
            config: config.clone(),
            busy_until_ns: vec![0; links],
            busy_ns: vec![0; links],
            path: Vec::with_capacity(links),
            report: InterconnectReport::default(),
            shape,
        }
    }

    /// Fill `path` with controller link, XY mesh links and the chip port.
    fn route(&mut self, controller: usize, chip: u32) {
        self.path.clear();
        self.path.push(self.shape.controller_link(controller));
        let mut router = self.shape.controller_router[controller];
        while let Some(port) = self.shape.xy_port(router, chip) {
            let (next, link) = self
                .shape
                .neighbor(router, port)
                .expect("a minimal port has a neighbour");
            self.path.push(link);
            router = next;
        }
        self.path.push(self.shape.chip_port(chip));
    }
}

impl Interconnect for NoSsd {
    fn acquire(&mut self, now_ns: u64, chip: u32, die: u32, what: Transfer) -> Acquire {
        let controller = self.shape.controllers_by_distance[chip as usize][0] as usize;
        self.route(controller, chip);
        let bytes = match what {
            Transfer::Command | Transfer::ReadCommand => self.config.command_bytes,
            Transfer::DataOut { bytes } => {
                self.path.reverse();
                bytes
            }
            Transfer::ProgramIn { bytes } => self.config.command_bytes + bytes,
        };
        let hop = self.config.hop_ns;
        let mut first_start = u64::MAX;
        let mut last_end = now_ns;
        let mut unloaded_end = now_ns;
        let mut sent = 0u32;
        let mut ready = now_ns;
        while sent < bytes {
            let packet = (bytes - sent).min(self.config.port_buffer_bytes);
            sent += packet;
            let duration = transfer_ns(packet, self.config.link_bytes_per_ns);
            // `head` is when the packet's head may enter the next link, `tail` when its last
            // byte has crossed the previous one.
            let (mut head, mut tail) = (ready, 0u64);
            for (i, &link) in self.path.iter().enumerate() {
                let start = head.max(self.busy_until_ns[link]);
                let end = (start + duration).max(tail + hop);
                if i == 0 {
                    first_start = first_start.min(start);
                    // The next packet leaves the controller behind this one.
                    ready = end;
                }
                self.busy_until_ns[link] = end;
                self.busy_ns[link] += end - start;
                head = start + hop;
                tail = end;
            }
            last_end = tail;
            unloaded_end = unloaded_end.max(now_ns) + duration;
        }
        let hops = self.path.len() as u64;
        unloaded_end += hops.saturating_sub(1) * hop;
        self.report.transfers += 1;
        self.report.path_hops += hops - 1;
        self.report.minimal_hops += hops - 1;
        if last_end > unloaded_end {
            self.report.path_conflicts += 1;
            self.report.path_wait_ns += last_end - unloaded_end;
        }
        self.report.last_transfer_end_ns = self.report.last_transfer_end_ns.max(last_end);
        Acquire::Granted {
            grant: Grant {
                die,
                start_ns: first_start,
                end_ns: last_end,
                conflict_free: last_end <= unloaded_end,
            },
            wake: None,
        }
    }

    /// NoSSD never queues a transfer (packets wait inside the network), so never asks to wake.
    fn wake(&mut self, _now_ns: u64, _key: u32, _granted: &mut Vec<Grant>) -> Option<u64> {
        None
    }

    fn report(&self) -> InterconnectReport {
        self.report.finish(&self.busy_ns)
    }
}
