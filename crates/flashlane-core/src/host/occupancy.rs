//! What the host side counts around its scheduler, shared by the simulator and the real-drive
//! replay: how full the host queue is (and whether it has room), and the requests per chip
//! under the static map that PIQ and VIOS consult (`HostView::outstanding_per_chip`).

use super::{HostConfig, HostRequest};
use crate::geometry::ChipSet;
use crate::trace::TraceRecord;

/// The host queue's bound: `host.queue_length_requests`, and whether requests in the device
/// keep their place in it (`host.queue_includes_outstanding`, SSDsim's request queue).
#[derive(Debug, Clone, Copy)]
pub struct QueueBound {
    length: usize,
    includes_outstanding: bool,
}

impl QueueBound {
    pub fn new(config: &HostConfig) -> Self {
        QueueBound {
            length: config.queue_length_requests as usize,
            includes_outstanding: config.queue_includes_outstanding,
        }
    }

    /// Requests the queue holds with `waiting` in the scheduler and `outstanding` in the device.
    #[inline]
    pub fn occupancy(&self, waiting: usize, outstanding: u32) -> usize {
        if self.includes_outstanding {
            waiting + outstanding as usize
        } else {
            waiting
        }
    }

    /// May one more request enter?
    #[inline]
    pub fn has_room(&self, waiting: usize, outstanding: u32) -> bool {
        self.occupancy(waiting, outstanding) < self.length
    }

    /// Does a completion change the occupancy?
    #[inline]
    pub fn includes_outstanding(&self) -> bool {
        self.includes_outstanding
    }
}

/// Host requests per chip under the static map (a request counts on every chip of its set).
#[derive(Debug, Clone)]
pub struct ChipLoad {
    /// Dispatched to the device and not yet complete (PIQ's outstanding requests).
    pub outstanding: Vec<u32>,
    /// Waiting in the host queue or outstanding (conflict detection; VIOS's allocation).
    pub claims: Vec<u32>,
}

impl ChipLoad {
    pub fn new(chips: usize) -> Self {
        ChipLoad {
            outstanding: vec![0; chips],
            claims: vec![0; chips],
        }
    }

    /// A request of chip set `chips` entered the host queue. True when it conflicts (PIQ's
    /// definition): a request waiting ahead of it or outstanding touches one of its chips.
    #[inline]
    pub fn admitted(&mut self, chips: ChipSet) -> bool {
        let mut conflict = false;
        for chip in chips.iter() {
            let claims = &mut self.claims[chip as usize];
            conflict |= *claims > 0;
            *claims += 1;
        }
        conflict
    }

    #[inline]
    pub fn dispatched(&mut self, chips: ChipSet) {
        for chip in chips.iter() {
            self.outstanding[chip as usize] += 1;
        }
    }

    #[inline]
    pub fn completed(&mut self, chips: ChipSet) {
        for chip in chips.iter() {
            self.outstanding[chip as usize] -= 1;
            self.claims[chip as usize] -= 1;
        }
    }
}

/// First logical page and number of pages a request of `size_bytes` at `offset_bytes` touches.
#[inline]
pub fn page_span(offset_bytes: u64, size_bytes: u64, page_bytes: u64) -> (u64, u64) {
    let first = offset_bytes / page_bytes;
    let last = (offset_bytes + size_bytes - 1) / page_bytes;
    (first, last - first + 1)
}

impl HostRequest {
    /// The host scheduler's copy of trace record `record`, numbered `seq` in trace order, in
    /// slot `id`, arrived at `arrival_ns`, touching `pages` pages from `first_lpn` (see
    /// [`page_span`]) on the chips `chips` of the static map.
    #[inline]
    pub fn new(
        id: super::RequestId,
        seq: u64,
        arrival_ns: u64,
        record: &TraceRecord,
        (first_lpn, pages): (u64, u32),
        chips: ChipSet,
    ) -> Self {
        HostRequest {
            id,
            seq,
            arrival_ns,
            op: record.op,
            offset_bytes: record.offset_bytes,
            size_bytes: record.size_bytes,
            first_lpn,
            pages,
            stream: record.stream,
            chips,
        }
    }
}
