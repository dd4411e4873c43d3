//! VIOS (variation-aware I/O scheduler), host-queue part: a hierarchical batch queue per
//! direction — chip batches (no two members share a chip) each split into channel batches (no
//! two members share a channel) — and the global chip-state vector (waiting requests per
//! chip) that variation-aware block allocation reads through [`Vios::chip_state`].

use std::collections::VecDeque;

use super::deadline::dir_index;
use super::piq::RwPhase;
use super::{HostRequest, HostScheduler, HostSchedulerReport, HostView, RequestId, Tally};
use crate::geometry::ChipSet;
use crate::trace::Op;
use serde::{Deserialize, Serialize};

use super::{yes, HostSchedulerKind};

/// `kind = "vios"`: VIOS hierarchical (chip, channel) batches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViosConfig {
    #[serde(default = "yes")]
    pub write_starvation_guard: bool,
}

impl HostSchedulerKind for ViosConfig {
    type Built = Vios;
    fn build(&self) -> Vios {
        Vios::new(self.write_starvation_guard)
    }
}

#[derive(Debug)]
struct ChannelBatch {
    /// Channels touched by the members (A_channel), stored as a bit set of channel indices.
    channels: ChipSet,
    members: Vec<HostRequest>,
}

#[derive(Debug)]
struct ChipBatch {
    /// Chips touched by the members (A_chip), including members already issued.
    chips: ChipSet,
    channel_batches: VecDeque<ChannelBatch>,
}

/// Waiting batches of one direction: per chip batch its A_chip and, per channel batch, its
/// A_channel and member ids.
pub type ViosBatches = Vec<(ChipSet, Vec<(ChipSet, Vec<RequestId>)>)>;

#[derive(Debug, Default)]
pub struct Vios {
    lists: [VecDeque<ChipBatch>; 2],
    /// NR_i: requests waiting in the queue that touch chip i (+1 on arrival, -1 on issue).
    chip_state: Vec<u32>,
    phase: RwPhase,
    spare_members: Vec<Vec<HostRequest>>,
    spare_channel_batches: Vec<VecDeque<ChannelBatch>>,
    waiting: usize,
    tally: Tally,
}

impl Vios {
    pub fn new(write_starvation_guard: bool) -> Self {
        Vios {
            phase: RwPhase::new(write_starvation_guard),
            ..Vios::default()
        }
    }

    /// Global chip-state vector: for each chip, the number of waiting requests touching it.
    /// A chip with a non-zero entry has a conflict pending, so a write to it should get a
    /// fast block.
    pub fn chip_state(&self) -> &[u32] {
        &self.chip_state
    }

    /// Waiting batches of one direction, in issue order.
    pub fn batches(&self, op: Op) -> ViosBatches {
        self.lists[dir_index(op)]
            .iter()
            .map(|cb| {
                let channel_batches = cb
                    .channel_batches
                    .iter()
                    .map(|ch| (ch.channels, ch.members.iter().map(|r| r.id).collect()))
                    .collect();
                (cb.chips, channel_batches)
            })
            .collect()
    }

    fn new_channel_batch(&mut self, channels: ChipSet, r: HostRequest) -> ChannelBatch {
        let mut members = self.spare_members.pop().unwrap_or_default();
        members.push(r);
        ChannelBatch { channels, members }
    }
}

impl HostScheduler for Vios {
    fn push(&mut self, request: HostRequest, view: &HostView) {
        self.tally.pushed(&request);
        self.waiting += 1;
        let chips_total = view.geometry.chips() as usize;
        if self.chip_state.len() < chips_total {
            self.chip_state.resize(chips_total, 0);
        }
        let mut channels = ChipSet::EMPTY;
        for chip in request.chips.iter() {
            channels.insert(view.geometry.channel_of_chip(chip));
            if let Some(n) = self.chip_state.get_mut(chip as usize) {
                *n += 1;
            }
        }
        let dir = dir_index(request.op);
        // Chip-level conflicts first, then channel-level conflicts inside the chosen chip batch.
        if let Some(i) = self.lists[dir]
            .iter()
            .position(|cb| !cb.chips.intersects(&request.chips))
        {
            let cb = &mut self.lists[dir][i];
            cb.chips.union_with(&request.chips);
            if let Some(ch) = cb
                .channel_batches
                .iter_mut()
                .find(|ch| !ch.channels.intersects(&channels))
            {
                ch.channels.union_with(&channels);
                ch.members.push(request);
                return;
            }
            let ch = self.new_channel_batch(channels, request);
            self.lists[dir][i].channel_batches.push_back(ch);
            return;
        }
        self.tally.report.batches += 1;
        let ch = self.new_channel_batch(channels, request);
        let mut channel_batches = self.spare_channel_batches.pop().unwrap_or_default();
        channel_batches.push_back(ch);
        self.lists[dir].push_back(ChipBatch {
            chips: request.chips,
            channel_batches,
        });
    }

    fn pop(&mut self, _view: &HostView, out: &mut Vec<RequestId>) {
        let counts = [self.lists[0].len(), self.lists[1].len()];
        let Some(dir) = self.phase.pick(counts, &mut self.tally) else {
            return;
        };
        let Some(cb) = self.lists[dir].front_mut() else {
            return;
        };
        let Some(ch) = cb.channel_batches.front_mut() else {
            return;
        };
        if ch.members.is_empty() {
            return;
        }
        let r = ch.members.remove(0);
        if ch.members.is_empty() {
            if let Some(ch) = cb.channel_batches.pop_front() {
                self.spare_members.push(ch.members);
            }
        }
        if cb.channel_batches.is_empty() {
            if let Some(cb) = self.lists[dir].pop_front() {
                self.spare_channel_batches.push(cb.channel_batches);
            }
            self.phase.retired(dir);
        }
        for chip in r.chips.iter() {
            if let Some(n) = self.chip_state.get_mut(chip as usize) {
                *n = n.saturating_sub(1);
            }
        }
        self.waiting -= 1;
        self.tally.report.batched_requests += 1;
        self.tally.dispatched(&r);
        out.push(r.id);
    }

    fn complete(&mut self, _request: &HostRequest, _view: &HostView) {}

    fn len(&self) -> usize {
        self.waiting
    }

    fn report(&self) -> HostSchedulerReport {
        self.tally.finish()
    }
}
