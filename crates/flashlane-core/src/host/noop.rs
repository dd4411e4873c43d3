//! NOOP: first in, first out, no reordering; optionally merges back-to-back contiguous requests.

use std::collections::VecDeque;

use super::MAX_MERGE_BYTES;
use super::{HostRequest, HostScheduler, HostSchedulerReport, HostView, RequestId, Tally};
use serde::{Deserialize, Serialize};

use super::HostSchedulerKind;

/// `kind = "noop"`: first in, first out; `merge` joins a request with the contiguous
/// same-direction requests right behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoopConfig {
    #[serde(default)]
    pub merge: bool,
}

impl HostSchedulerKind for NoopConfig {
    type Built = Noop;
    fn build(&self) -> Noop {
        Noop::new(self.merge)
    }
}

#[derive(Debug, Default)]
pub struct Noop {
    queue: VecDeque<HostRequest>,
    /// Merge the head with the requests right behind it when they continue it.
    merge: bool,
    tally: Tally,
}

impl Noop {
    pub fn new(merge: bool) -> Self {
        Noop {
            merge,
            ..Noop::default()
        }
    }
}

impl HostScheduler for Noop {
    fn push(&mut self, request: HostRequest, _view: &HostView) {
        self.tally.pushed(&request);
        self.queue.push_back(request);
    }

    fn pop(&mut self, _view: &HostView, out: &mut Vec<RequestId>) {
        let Some(head) = self.queue.pop_front() else {
            return;
        };
        self.tally.dispatched(&head);
        out.push(head.id);
        if !self.merge {
            return;
        }
        // Only the FIFO neighbour is considered: NOOP never reorders to find a merge partner.
        let mut end = head.offset_bytes + head.size_bytes;
        let mut size = head.size_bytes;
        while let Some(next) = self.queue.front().copied() {
            if next.op != head.op
                || next.offset_bytes != end
                || size + next.size_bytes > MAX_MERGE_BYTES
            {
                break;
            }
            self.queue.pop_front();
            self.tally.dispatched(&next);
            self.tally.report.merges += 1;
            out.push(next.id);
            end += next.size_bytes;
            size += next.size_bytes;
        }
    }

    fn complete(&mut self, _request: &HostRequest, _view: &HostView) {}

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn report(&self) -> HostSchedulerReport {
        self.tally.finish()
    }
}
