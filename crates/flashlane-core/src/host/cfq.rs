//! CFQ-style fair queuing: one FIFO queue per (stream, direction), served round-robin, each
//! owning the dispatch for a time slice (`slice_sync_ns` for reads, `slice_async_ns` for
//! writes, as CFQ treats reads as synchronous and writes as asynchronous).

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound::{Excluded, Unbounded};

use super::deadline::dir_index;
use super::{HostRequest, HostScheduler, HostSchedulerReport, HostView, RequestId, Tally};
use serde::{Deserialize, Serialize};

use super::HostSchedulerKind;

/// `kind = "cfq"`: CFQ-style round-robin time slices over per-stream queues.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CfqConfig {
    #[serde(default = "d_slice_sync_ns")]
    pub slice_sync_ns: u64,
    #[serde(default = "d_slice_async_ns")]
    pub slice_async_ns: u64,
}

/// CFQ `slice_sync` 100 ms scaled by 1/100 (flash read ~100x faster than a disk seek).
fn d_slice_sync_ns() -> u64 {
    1_000_000
}
/// CFQ `slice_async` 40 ms scaled the same way.
fn d_slice_async_ns() -> u64 {
    400_000
}

impl HostSchedulerKind for CfqConfig {
    type Built = Cfq;
    fn build(&self) -> Cfq {
        Cfq::new(self.slice_sync_ns, self.slice_async_ns)
    }
}

/// (stream, direction index): BTreeMap order gives a deterministic round-robin.
type QueueKey = (u32, usize);

#[derive(Debug)]
pub struct Cfq {
    slice_sync_ns: u64,
    slice_async_ns: u64,
    queues: BTreeMap<QueueKey, VecDeque<HostRequest>>,
    /// Queue owning the current slice and when the slice ends.
    active: Option<(QueueKey, u64)>,
    waiting: usize,
    tally: Tally,
}

impl Cfq {
    pub fn new(slice_sync_ns: u64, slice_async_ns: u64) -> Self {
        Cfq {
            slice_sync_ns,
            slice_async_ns,
            queues: BTreeMap::new(),
            active: None,
            waiting: 0,
            tally: Tally::default(),
        }
    }

    fn take_front(&mut self, key: QueueKey, out: &mut Vec<RequestId>) -> bool {
        let Some(q) = self.queues.get_mut(&key) else {
            return false;
        };
        let Some(r) = q.pop_front() else {
            return false;
        };
        // Empty queues are dropped so the round-robin scan only sees busy streams.
        if q.is_empty() {
            self.queues.remove(&key);
        }
        self.waiting -= 1;
        self.tally.dispatched(&r);
        out.push(r.id);
        true
    }
}

impl HostScheduler for Cfq {
    fn push(&mut self, request: HostRequest, _view: &HostView) {
        self.tally.pushed(&request);
        self.waiting += 1;
        self.queues
            .entry((request.stream, dir_index(request.op)))
            .or_default()
            .push_back(request);
    }

    fn pop(&mut self, view: &HostView, out: &mut Vec<RequestId>) {
        if let Some((key, end_ns)) = self.active {
            if view.now_ns < end_ns && self.take_front(key, out) {
                return;
            }
        }
        // Next queue after the active one, wrapping around.
        let next = match self.active {
            Some((key, _)) => self
                .queues
                .range((Excluded(key), Unbounded))
                .next()
                .or_else(|| self.queues.iter().next()),
            None => self.queues.iter().next(),
        }
        .map(|(k, _)| *k);
        let Some(key) = next else {
            self.active = None;
            return;
        };
        let slice = if key.1 == 0 {
            self.slice_sync_ns
        } else {
            self.slice_async_ns
        };
        self.active = Some((key, view.now_ns.saturating_add(slice)));
        self.tally.report.slices += 1;
        self.take_front(key, out);
    }

    fn complete(&mut self, _request: &HostRequest, _view: &HostView) {}

    fn len(&self) -> usize {
        self.waiting
    }

    fn report(&self) -> HostSchedulerReport {
        self.tally.finish()
    }
}
