//! PASS (parallelism-aware scheduler): the logical space is cut into fixed-size regions, each
//! with its own deadline-style sub-queue (FIFO and offset-sorted lists per direction). Regions
//! with waiting requests are served round-robin; each turn dispatches, in offset order, up to
//! `batch_threshold_requests` requests of one direction, and a region's next turn takes the
//! other direction. Requests past their deadline go first; adjacent requests are merged.

use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Unbounded};

use super::deadline::{dir_index, DirQueue, SortKey};
use super::{HostRequest, HostScheduler, HostSchedulerReport, HostView, RequestId, Tally};
use serde::{Deserialize, Serialize};

use super::{d_read_expire_ns, d_write_expire_ns, yes, HostSchedulerKind};

/// `kind = "pass"`: PASS region sub-queues.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassConfig {
    #[serde(default = "d_region_bytes")]
    pub region_bytes: u64,
    #[serde(default = "d_batch_threshold_requests")]
    pub batch_threshold_requests: u32,
    #[serde(default = "d_read_expire_ns")]
    pub read_expire_ns: u64,
    #[serde(default = "d_write_expire_ns")]
    pub write_expire_ns: u64,
    #[serde(default = "yes")]
    pub merge: bool,
}

/// PASS evaluation: 4 GB regions.
fn d_region_bytes() -> u64 {
    4 << 30
}
/// PASS evaluation: read/write batch threshold 16.
fn d_batch_threshold_requests() -> u32 {
    16
}

impl HostSchedulerKind for PassConfig {
    type Built = Pass;
    fn build(&self) -> Pass {
        Pass::new(PassParams {
            region_bytes: self.region_bytes,
            batch_threshold_requests: self.batch_threshold_requests,
            read_expire_ns: self.read_expire_ns,
            write_expire_ns: self.write_expire_ns,
            merge: self.merge,
        })
    }
}

#[derive(Debug, Default)]
struct Region {
    queues: [DirQueue; 2],
    /// Where the sorted dispatch of each direction continues.
    pos: [Option<SortKey>; 2],
    /// Direction this region's next turn prefers (turns alternate read / write).
    next_dir: usize,
}

impl Region {
    fn is_empty(&self) -> bool {
        self.queues[0].is_empty() && self.queues[1].is_empty()
    }

    /// Next request of `dir` in offset order, wrapping to the lowest (one-way elevator).
    fn next_key(&self, dir: usize) -> Option<SortKey> {
        self.queues[dir]
            .after(self.pos[dir])
            .or_else(|| self.queues[dir].after(None))
    }
}

/// Parameters of [`Pass`]; see `docs/models/pass.md`.
#[derive(Debug, Clone, Copy)]
pub struct PassParams {
    pub region_bytes: u64,
    pub batch_threshold_requests: u32,
    pub read_expire_ns: u64,
    pub write_expire_ns: u64,
    pub merge: bool,
}

#[derive(Debug)]
pub struct Pass {
    p: PassParams,
    /// Only regions with waiting requests are present; key = region index.
    regions: BTreeMap<u64, Region>,
    /// Global arrival order per direction, seq -> (arrival_ns, region), for deadline checks.
    fifo: [BTreeMap<u64, (u64, u64)>; 2],
    /// Current turn: (region, direction, requests dispatched in it).
    turn: Option<(u64, usize, u32)>,
    waiting: usize,
    tally: Tally,
}

impl Pass {
    pub fn new(p: PassParams) -> Self {
        Pass {
            p,
            regions: BTreeMap::new(),
            fifo: Default::default(),
            turn: None,
            waiting: 0,
            tally: Tally::default(),
        }
    }

    fn region_of(&self, offset_bytes: u64) -> u64 {
        offset_bytes / self.p.region_bytes.max(1)
    }

    fn expire_ns(&self, dir: usize) -> u64 {
        if dir == 0 {
            self.p.read_expire_ns
        } else {
            self.p.write_expire_ns
        }
    }

    fn dispatch(&mut self, region: u64, dir: usize, key: SortKey, out: &mut Vec<RequestId>) {
        let Some(reg) = self.regions.get_mut(&region) else {
            return;
        };
        let before = out.len();
        let (tally, fifo, waiting) = (&mut self.tally, &mut self.fifo[dir], &mut self.waiting);
        let last = reg.queues[dir].take(key, self.p.merge, self.p.merge, out, |r, merged| {
            tally.sent(r, merged);
            fifo.remove(&r.seq);
            *waiting -= 1;
        });
        reg.pos[dir] = last;
        if reg.is_empty() {
            self.regions.remove(&region);
        }
        if let Some((_, _, n)) = &mut self.turn {
            *n += 1;
        }
        self.tally.report.batched_requests += (out.len() - before) as u64;
    }

    fn start_turn(&mut self, region: u64, dir: usize) {
        self.turn = Some((region, dir, 0));
        self.tally.report.batches += 1;
        if let Some(reg) = self.regions.get_mut(&region) {
            reg.next_dir = 1 - dir;
        }
    }
}

impl HostScheduler for Pass {
    fn push(&mut self, request: HostRequest, _view: &HostView) {
        self.tally.pushed(&request);
        self.waiting += 1;
        let region = self.region_of(request.offset_bytes);
        let dir = dir_index(request.op);
        self.fifo[dir].insert(request.seq, (request.arrival_ns, region));
        self.regions.entry(region).or_default().queues[dir].insert(request);
    }

    fn pop(&mut self, view: &HostView, out: &mut Vec<RequestId>) {
        // Expired requests first (reads before writes): a new turn starts at them.
        for dir in 0..2 {
            let Some((&seq, &(arrival_ns, region))) = self.fifo[dir].first_key_value() else {
                continue;
            };
            if arrival_ns.saturating_add(self.expire_ns(dir)) > view.now_ns {
                continue;
            }
            let Some(offset) = self
                .regions
                .get(&region)
                .and_then(|reg| reg.queues[dir].fifo_head())
                .map(|r| r.offset_bytes)
            else {
                continue;
            };
            self.tally.report.expired_dispatches += 1;
            self.start_turn(region, dir);
            self.dispatch(region, dir, (offset, seq), out);
            return;
        }
        // Continue the current turn while under the threshold and its direction has requests.
        if let Some((region, dir, n)) = self.turn {
            if n < self.p.batch_threshold_requests.max(1) {
                if let Some(key) = self.regions.get(&region).and_then(|r| r.next_key(dir)) {
                    self.dispatch(region, dir, key, out);
                    return;
                }
            }
        }
        // Next region round-robin, wrapping around.
        let next = match self.turn {
            Some((region, _, _)) => self
                .regions
                .range((Excluded(region), Unbounded))
                .next()
                .or_else(|| self.regions.iter().next()),
            None => self.regions.iter().next(),
        };
        let Some((&region, reg)) = next else {
            return;
        };
        let dir = if reg.queues[reg.next_dir].is_empty() {
            1 - reg.next_dir
        } else {
            reg.next_dir
        };
        let Some(key) = reg.next_key(dir) else {
            return;
        };
        self.start_turn(region, dir);
        self.dispatch(region, dir, key, out);
    }

    fn complete(&mut self, _request: &HostRequest, _view: &HostView) {}

    fn len(&self) -> usize {
        self.waiting
    }

    fn report(&self) -> HostSchedulerReport {
        self.tally.finish()
    }
}
