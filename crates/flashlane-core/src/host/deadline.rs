//! Deadline (Linux mq-deadline semantics): per direction an offset-sorted list and a FIFO list;
//! dispatch continues in offset order for up to `fifo_batch_requests`, then re-picks the
//! direction (reads first unless writes were passed over `writes_starved_batches` times) and
//! starts from the FIFO head if it has expired.

use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Unbounded};

use super::{
    HostRequest, HostScheduler, HostSchedulerReport, HostView, RequestId, Tally, MAX_MERGE_BYTES,
};
use crate::trace::Op;
use serde::{Deserialize, Serialize};

use super::{
    d_fifo_batch_requests, d_read_expire_ns, d_write_expire_ns, d_writes_starved_batches, yes,
    HostSchedulerKind,
};

/// `kind = "deadline"`: Linux mq-deadline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeadlineConfig {
    #[serde(default = "d_read_expire_ns")]
    pub read_expire_ns: u64,
    #[serde(default = "d_write_expire_ns")]
    pub write_expire_ns: u64,
    #[serde(default = "d_fifo_batch_requests")]
    pub fifo_batch_requests: u32,
    #[serde(default = "d_writes_starved_batches")]
    pub writes_starved_batches: u32,
    #[serde(default = "yes")]
    pub front_merges: bool,
}

impl HostSchedulerKind for DeadlineConfig {
    type Built = Deadline;
    fn build(&self) -> Deadline {
        Deadline::new(DeadlineParams {
            read_expire_ns: self.read_expire_ns,
            write_expire_ns: self.write_expire_ns,
            fifo_batch_requests: self.fifo_batch_requests,
            writes_starved_batches: self.writes_starved_batches,
            front_merges: self.front_merges,
            back_merges: true,
        })
    }
}

/// Key in the sorted list: (offset, seq) so equal offsets stay distinct and ordered by arrival.
pub(super) type SortKey = (u64, u64);

/// One direction's waiting requests, sorted by offset and by arrival.
#[derive(Debug, Default)]
pub(super) struct DirQueue {
    sorted: BTreeMap<SortKey, HostRequest>,
    /// seq -> offset, so the FIFO head finds its sorted entry.
    fifo: BTreeMap<u64, u64>,
}

impl DirQueue {
    pub fn insert(&mut self, r: HostRequest) {
        self.sorted.insert((r.offset_bytes, r.seq), r);
        self.fifo.insert(r.seq, r.offset_bytes);
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// Oldest request.
    pub fn fifo_head(&self) -> Option<&HostRequest> {
        let (seq, off) = self.fifo.first_key_value()?;
        self.sorted.get(&(*off, *seq))
    }

    /// First request in offset order strictly after `key` (or the lowest if `key` is None).
    pub fn after(&self, key: Option<SortKey>) -> Option<SortKey> {
        match key {
            Some(k) => self.sorted.range((Excluded(k), Unbounded)).next(),
            None => self.sorted.iter().next(),
        }
        .map(|(k, _)| *k)
    }

    /// Requests in offset order (for scans such as the anticipatory stream search).
    pub fn iter(&self) -> impl Iterator<Item = &HostRequest> {
        self.sorted.values()
    }

    fn remove(&mut self, key: SortKey) -> Option<HostRequest> {
        let r = self.sorted.remove(&key)?;
        self.fifo.remove(&r.seq);
        Some(r)
    }

    /// Dispatch the request at `key` and, with `merge`, the waiting requests that continue it
    /// (back merge) or end where it starts (front merge, when `front_merges`); `sent` sees each
    /// request sent and whether it was merged into the first. Returns the
    /// sort key of the highest-offset request sent, where the next sorted dispatch continues.
    pub fn take(
        &mut self,
        key: SortKey,
        merge: bool,
        front_merges: bool,
        out: &mut Vec<RequestId>,
        mut sent: impl FnMut(&HostRequest, bool),
    ) -> Option<SortKey> {
        let head = self.remove(key)?;
        sent(&head, false);
        out.push(head.id);
        let mut last = key;
        if !merge {
            return Some(last);
        }
        let mut start = head.offset_bytes;
        let mut end = head.offset_bytes + head.size_bytes;
        let mut size = head.size_bytes;
        // Back merges: the lowest-offset request starting exactly at `end`.
        while let Some((&k, r)) = self.sorted.range((end, 0)..).next() {
            if r.offset_bytes != end || size + r.size_bytes > MAX_MERGE_BYTES {
                break;
            }
            let Some(r) = self.remove(k) else { break };
            sent(&r, true);
            out.push(r.id);
            end += r.size_bytes;
            size += r.size_bytes;
            last = k;
        }
        // Front merges: the nearest lower-offset request ending exactly at `start`.
        while let Some((&k, r)) = self
            .sorted
            .range(..(start, 0))
            .next_back()
            .filter(|_| front_merges)
        {
            if r.offset_bytes + r.size_bytes != start || size + r.size_bytes > MAX_MERGE_BYTES {
                break;
            }
            let Some(r) = self.remove(k) else { break };
            sent(&r, true);
            out.push(r.id);
            start = r.offset_bytes;
            size += r.size_bytes;
        }
        Some(last)
    }
}

pub(super) fn dir_index(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
    }
}

/// Parameters of [`Deadline`]; see `docs/models/linux-schedulers.md`.
#[derive(Debug, Clone, Copy)]
pub struct DeadlineParams {
    pub read_expire_ns: u64,
    pub write_expire_ns: u64,
    pub fifo_batch_requests: u32,
    pub writes_starved_batches: u32,
    pub front_merges: bool,
    /// Back merges (always on in Linux; off only to model a scheduler without merging).
    pub back_merges: bool,
}

#[derive(Debug)]
pub struct Deadline {
    p: DeadlineParams,
    queues: [DirQueue; 2],
    /// Where sorted dispatch continues in each direction.
    pos: [Option<SortKey>; 2],
    /// Direction of the batch in progress.
    batch_dir: Option<usize>,
    batching: u32,
    starved: u32,
    pub(super) tally: Tally,
}

impl Deadline {
    pub fn new(p: DeadlineParams) -> Self {
        Deadline {
            p,
            queues: Default::default(),
            pos: [None, None],
            batch_dir: None,
            batching: 0,
            starved: 0,
            tally: Tally::default(),
        }
    }

    fn expire_ns(&self, dir: usize) -> u64 {
        if dir == 0 {
            self.p.read_expire_ns
        } else {
            self.p.write_expire_ns
        }
    }

    /// Whether the oldest request of `dir` has passed its deadline.
    pub(super) fn fifo_expired(&self, dir: usize, now_ns: u64) -> bool {
        self.queues[dir]
            .fifo_head()
            .is_some_and(|r| r.arrival_ns.saturating_add(self.expire_ns(dir)) <= now_ns)
    }

    pub(super) fn reads(&self) -> &DirQueue {
        &self.queues[0]
    }

    /// Dispatch the waiting read at `key` out of the normal order (anticipation hit); the
    /// sorted position moves there so the stream's next reads follow in offset order.
    pub(super) fn take_read(&mut self, key: SortKey, out: &mut Vec<RequestId>) {
        let merge = self.p.back_merges;
        let tally = &mut self.tally;
        if let Some(last) = self.queues[0].take(key, merge, self.p.front_merges, out, |r, m| {
            tally.sent(r, m)
        }) {
            self.pos[0] = Some(last);
        }
    }

    fn dispatch(&mut self, dir: usize, key: SortKey, out: &mut Vec<RequestId>) {
        let merge = self.p.back_merges;
        let tally = &mut self.tally;
        if let Some(last) = self.queues[dir].take(key, merge, self.p.front_merges, out, |r, m| {
            tally.sent(r, m)
        }) {
            self.pos[dir] = Some(last);
            self.pos[1 - dir] = None;
            self.batch_dir = Some(dir);
            self.batching += 1;
        }
    }
}

impl HostScheduler for Deadline {
    fn push(&mut self, request: HostRequest, _view: &HostView) {
        self.tally.pushed(&request);
        self.queues[dir_index(request.op)].insert(request);
    }

    fn pop(&mut self, view: &HostView, out: &mut Vec<RequestId>) {
        // Continue the sorted batch in progress.
        if let Some(d) = self.batch_dir {
            if self.batching < self.p.fifo_batch_requests.max(1) {
                if let Some(k) = self.queues[d]
                    .after(self.pos[d])
                    .filter(|_| self.pos[d].is_some())
                {
                    self.dispatch(d, k, out);
                    return;
                }
            }
        }
        let reads = !self.queues[0].is_empty();
        let writes = !self.queues[1].is_empty();
        let dir = if reads {
            if writes && self.starved >= self.p.writes_starved_batches {
                self.starved = 0;
                self.tally.report.starvation_guard_activations += 1;
                1
            } else {
                if writes {
                    self.starved += 1;
                }
                0
            }
        } else if writes {
            self.starved = 0;
            1
        } else {
            return;
        };
        self.batching = 0;
        let next = self.pos[dir].and_then(|p| self.queues[dir].after(Some(p)));
        let key = match next {
            Some(k) if !self.fifo_expired(dir, view.now_ns) => k,
            _ => {
                if self.fifo_expired(dir, view.now_ns) {
                    self.tally.report.expired_dispatches += 1;
                }
                match self.queues[dir].fifo_head() {
                    Some(r) => (r.offset_bytes, r.seq),
                    None => return,
                }
            }
        };
        self.dispatch(dir, key, out);
    }

    fn complete(&mut self, _request: &HostRequest, _view: &HostView) {}

    fn len(&self) -> usize {
        self.queues[0].len() + self.queues[1].len()
    }

    fn report(&self) -> HostSchedulerReport {
        self.tally.finish()
    }
}
