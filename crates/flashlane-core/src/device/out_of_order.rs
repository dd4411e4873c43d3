//! HOS: one FIFO queue per chip; an idle chip starts its own queue's head.

use std::collections::VecDeque;

use super::{CompanionFit, DeviceContext, DeviceScheduler, Transaction};
use serde::{Deserialize, Serialize};

use super::DeviceSchedulerKind;
use crate::geometry::Geometry;

/// `kind = "out_of_order"`: HOS of the SOS paper: one FIFO queue per chip; any idle
/// chip takes its own queue's head.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutOfOrderConfig {}

impl DeviceSchedulerKind for OutOfOrderConfig {
    type Built = OutOfOrder;
    fn build(&self, geometry: &Geometry) -> OutOfOrder {
        OutOfOrder::new(geometry.chips())
    }
}

pub struct OutOfOrder {
    queues: Vec<VecDeque<Transaction>>,
    queued: Vec<u32>,
}

impl OutOfOrder {
    pub fn new(chips: u32) -> Self {
        OutOfOrder {
            queues: (0..chips).map(|_| VecDeque::with_capacity(64)).collect(),
            queued: vec![0; chips as usize],
        }
    }
}

impl DeviceScheduler for OutOfOrder {
    fn enqueue(&mut self, txn: Transaction, _ctx: &mut DeviceContext<'_>) {
        self.queued[txn.chip as usize] += 1;
        self.queues[txn.chip as usize].push_back(txn);
    }

    // In order within a chip: the head waits for its die (dies of a chip interleave only as
    // far as the head order allows).
    fn next(&mut self, chip: u32, ctx: &mut DeviceContext<'_>) -> Option<Transaction> {
        let queue = &mut self.queues[chip as usize];
        let head = queue.front()?;
        // A held program keeps its place and blocks its chip's queue.
        if ctx.die_busy[head.die as usize] || ctx.is_held(head) {
            return None;
        }
        let txn = queue.pop_front()?;
        self.queued[chip as usize] -= 1;
        Some(txn)
    }

    // `next` starts nothing from an empty queue or for a busy head die.
    fn may_issue(&self, chip: u32, die_busy: &[bool]) -> bool {
        self.queues[chip as usize]
            .front()
            .is_some_and(|head| !die_busy[head.die as usize])
    }

    fn queued_per_chip(&self) -> &[u32] {
        &self.queued
    }

    // The earliest fitting transaction of the chip's queue: pairing lets it overtake.
    fn take_companion(
        &mut self,
        chip: u32,
        _die: u32,
        fits: &CompanionFit<'_>,
    ) -> Option<Transaction> {
        let queue = &mut self.queues[chip as usize];
        let at = queue.iter().position(|t| fits.accepts(t))?;
        let txn = queue.remove(at)?;
        self.queued[chip as usize] -= 1;
        Some(txn)
    }
}
