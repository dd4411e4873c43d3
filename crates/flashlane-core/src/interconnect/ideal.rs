//! The ideal (path-conflict-free) SSD: every chip has a private link at the channel rate.

use super::{Grant, Interconnect, InterconnectReport, Links, Transfer};
use crate::config::Timing;
use crate::geometry::Geometry;

pub struct Ideal {
    links: Links,
}

impl Ideal {
    pub fn new(geometry: &Geometry, timing: &Timing) -> Self {
        Ideal { links: Links::new(geometry.chips() as usize, timing) }
    }
}

impl Interconnect for Ideal {
    fn transfer(&mut self, now_ns: u64, chip: u32, what: Transfer) -> Grant {
        self.links.reserve(now_ns, chip as usize, what)
    }
    fn report(&self) -> InterconnectReport {
        self.links.report()
    }
}
