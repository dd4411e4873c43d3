//! IOS: transactions start strictly in arrival order over the whole device.

use std::collections::VecDeque;

use super::{CompanionFit, DeviceContext, DeviceScheduler, Transaction};
use serde::{Deserialize, Serialize};

use super::DeviceSchedulerKind;
use crate::geometry::Geometry;

/// `kind = "in_order"`: IOS of the SOS paper: one queue in arrival order; the head
/// waits for its chip and blocks everything behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InOrderConfig {}

impl DeviceSchedulerKind for InOrderConfig {
    type Built = InOrder;
    fn build(&self, geometry: &Geometry) -> InOrder {
        InOrder::new(geometry.chips())
    }
}

pub struct InOrder {
    queue: VecDeque<Transaction>,
    queued: Vec<u32>,
}

impl InOrder {
    pub fn new(chips: u32) -> Self {
        InOrder {
            queue: VecDeque::with_capacity(1024),
            queued: vec![0; chips as usize],
        }
    }
}

impl DeviceScheduler for InOrder {
    fn enqueue(&mut self, txn: Transaction, _ctx: &mut DeviceContext<'_>) {
        self.queued[txn.chip as usize] += 1;
        self.queue.push_back(txn);
    }

    // The head goes when its die is idle; while it waits, nothing behind it may start
    // ("If the chip is busy, it waits until the chip becomes idle", SOS Sec. II-A).
    fn next(&mut self, _chip: u32, ctx: &mut DeviceContext<'_>) -> Option<Transaction> {
        let head = self.queue.front()?;
        // A held program keeps its place and blocks the queue behind it.
        if ctx.die_busy[head.die as usize] || ctx.is_held(head) {
            return None;
        }
        let txn = self.queue.pop_front()?;
        self.queued[txn.chip as usize] -= 1;
        Some(txn)
    }

    fn queued_per_chip(&self) -> &[u32] {
        &self.queued
    }

    // The earliest fitting transaction anywhere in the queue: pairing lets it overtake.
    fn take_companion(
        &mut self,
        chip: u32,
        _die: u32,
        fits: &CompanionFit<'_>,
    ) -> Option<Transaction> {
        let at = self.queue.iter().position(|t| t.chip == chip && fits.accepts(t))?;
        let txn = self.queue.remove(at)?;
        self.queued[chip as usize] -= 1;
        Some(txn)
    }
}
