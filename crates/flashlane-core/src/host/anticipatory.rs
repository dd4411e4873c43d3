//! Anticipatory (after Linux AS): deadline ordering, plus after a read of stream S completes,
//! dispatch is held for up to `antic_expire_ns` in the hope that S issues another read, which
//! then goes first (the nearest by offset to where the completed read ended).

use super::deadline::{Deadline, DeadlineParams, SortKey};
use super::{HostRequest, HostScheduler, HostSchedulerReport, HostView, RequestId};
use crate::trace::Op;
use serde::{Deserialize, Serialize};

use super::{d_fifo_batch_requests, d_writes_starved_batches, HostSchedulerKind};

/// `kind = "anticipatory"`: Linux AS-style anticipation on top of deadline ordering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnticipatoryConfig {
    #[serde(default = "d_antic_expire_ns")]
    pub antic_expire_ns: u64,
    #[serde(default = "d_as_read_expire_ns")]
    pub read_expire_ns: u64,
    #[serde(default = "d_as_write_expire_ns")]
    pub write_expire_ns: u64,
    #[serde(default = "d_fifo_batch_requests")]
    pub fifo_batch_requests: u32,
    #[serde(default = "d_writes_starved_batches")]
    pub writes_starved_batches: u32,
}

/// Linux AS `antic_expire`: 6 ms.
fn d_antic_expire_ns() -> u64 {
    6_000_000
}
/// Linux AS `read_expire`: 125 ms.
fn d_as_read_expire_ns() -> u64 {
    125_000_000
}
/// Linux AS `write_expire`: 250 ms.
fn d_as_write_expire_ns() -> u64 {
    250_000_000
}

impl HostSchedulerKind for AnticipatoryConfig {
    type Built = Anticipatory;
    fn build(&self) -> Anticipatory {
        Anticipatory::new(
            DeadlineParams {
                read_expire_ns: self.read_expire_ns,
                write_expire_ns: self.write_expire_ns,
                fifo_batch_requests: self.fifo_batch_requests,
                writes_starved_batches: self.writes_starved_batches,
                front_merges: true,
                back_merges: true,
            },
            self.antic_expire_ns,
        )
    }
}

/// The read stream being waited for.
#[derive(Debug, Clone, Copy)]
struct Window {
    stream: u32,
    /// Byte just past the completed read: "nearby" is measured from here.
    end_bytes: u64,
    until_ns: u64,
}

#[derive(Debug)]
pub struct Anticipatory {
    inner: Deadline,
    antic_expire_ns: u64,
    window: Option<Window>,
}

impl Anticipatory {
    pub fn new(p: DeadlineParams, antic_expire_ns: u64) -> Self {
        Anticipatory {
            inner: Deadline::new(p),
            antic_expire_ns,
            window: None,
        }
    }

    /// The waiting read of `stream` nearest to `end_bytes` (ties: lower offset, then older).
    fn nearest_read(&self, stream: u32, end_bytes: u64) -> Option<SortKey> {
        self.inner
            .reads()
            .iter()
            .filter(|r| r.stream == stream)
            .min_by_key(|r| (r.offset_bytes.abs_diff(end_bytes), r.offset_bytes, r.seq))
            .map(|r| (r.offset_bytes, r.seq))
    }
}

impl HostScheduler for Anticipatory {
    fn push(&mut self, request: HostRequest, view: &HostView) {
        self.inner.push(request, view);
    }

    fn pop(&mut self, view: &HostView, out: &mut Vec<RequestId>) {
        if let Some(w) = self.window {
            if let Some(key) = self.nearest_read(w.stream, w.end_bytes) {
                self.window = None;
                self.inner.tally.report.anticipation_hits += 1;
                self.inner.take_read(key, out);
                return;
            }
            // An expired deadline breaks anticipation, as in AS.
            let expired =
                self.inner.fifo_expired(0, view.now_ns) || self.inner.fifo_expired(1, view.now_ns);
            if view.now_ns < w.until_ns && !expired {
                return;
            }
            self.window = None;
        }
        self.inner.pop(view, out);
    }

    fn complete(&mut self, request: &HostRequest, view: &HostView) {
        if request.op == Op::Read && self.antic_expire_ns > 0 {
            self.inner.tally.report.anticipation_windows += 1;
            self.window = Some(Window {
                stream: request.stream,
                end_bytes: request.offset_bytes + request.size_bytes,
                until_ns: view.now_ns.saturating_add(self.antic_expire_ns),
            });
        }
    }

    fn len(&self) -> usize {
        self.inner.len()
    }

    fn wake_at_ns(&self) -> Option<u64> {
        // Nothing to release when empty; a push makes the simulator call `pop` anyway.
        self.window
            .filter(|_| !self.inner.is_empty())
            .map(|w| w.until_ns)
    }

    fn report(&self) -> HostSchedulerReport {
        self.inner.tally.finish()
    }
}
