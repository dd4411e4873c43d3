//! Host side: the I/O scheduler queue in front of the device.
//!
//! Every host scheduler implements [`HostScheduler`]; [`HostSchedulerConfig`] lists them all
//! (static dispatch through [`AnyHostScheduler`], no registration at start-up).

mod noop;

use serde::{Deserialize, Serialize};

use crate::geometry::{ChipSet, Geometry, StaticMap};
use crate::trace::Op;

pub use noop::Noop;

/// Index of a request in the simulator's request table. Valid while the request is live.
pub type RequestId = u32;

/// What a host scheduler knows of one request. Cheap to copy; schedulers keep their own copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostRequest {
    pub id: RequestId,
    /// Sequence number in trace order (0-based), unique over the run.
    pub seq: u64,
    /// Arrival time at the host queue, ns since the start of the run.
    pub arrival_ns: u64,
    pub op: Op,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    /// First logical page touched and number of pages touched.
    pub first_lpn: u64,
    pub pages: u32,
    /// Stream (process / device) id from the trace, for per-stream schedulers.
    pub stream: u32,
    /// Chips the request touches under the static allocation (PIQ's location vector).
    pub chips: ChipSet,
}

/// Read-only view of the device that a host scheduler may consult.
pub struct HostView<'a> {
    pub now_ns: u64,
    pub geometry: &'a Geometry,
    /// The static logical-page -> chip function host-side papers assume.
    pub static_map: &'a StaticMap,
    /// For each chip, the number of requests dispatched to the device and not yet completed
    /// that touch it (PIQ's "outstanding" requests).
    pub outstanding_per_chip: &'a [u32],
    /// Requests dispatched to the device and not yet completed.
    pub outstanding: u32,
    /// How many more requests the device queue accepts now.
    pub device_free_slots: u32,
}

/// Counters a scheduler reports at the end of a run (zero where not applicable).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HostSchedulerReport {
    /// Batches formed (PIQ, VIOS, PASS); 0 for schedulers without batches.
    pub batches: u64,
    /// Requests that went out in those batches.
    pub batched_requests: u64,
    /// Requests merged into an adjacent request before dispatch.
    pub merges: u64,
}

/// Contract: a host scheduler holds every request given to [`HostScheduler::push`] until it
/// returns it exactly once from [`HostScheduler::pop`]; it never drops or duplicates one. It may
/// read the [`HostView`] but changes nothing outside itself.
pub trait HostScheduler {
    /// A request entered the host queue.
    fn push(&mut self, request: HostRequest, view: &HostView);
    /// The device has a free slot: append to `out` the request to dispatch now (more than one
    /// only when they are merged into one device command: same direction, contiguous), or
    /// nothing to hold back.
    fn pop(&mut self, view: &HostView, out: &mut Vec<RequestId>);
    /// A dispatched request completed.
    fn complete(&mut self, request: &HostRequest, view: &HostView);
    /// Requests waiting in the scheduler.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A time at which the scheduler wants `pop` to be called even if nothing else happens
    /// (deadline expiry, anticipation timeout); `None` if it has no timer.
    fn wake_at_ns(&self) -> Option<u64> {
        None
    }
    fn report(&self) -> HostSchedulerReport {
        HostSchedulerReport::default()
    }
}

/// Host scheduler choice in a config (`[host.scheduler] kind = "noop"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum HostSchedulerConfig {
    /// First in, first out.
    Noop {},
}

impl HostSchedulerConfig {
    pub fn name(&self) -> &'static str {
        match self {
            HostSchedulerConfig::Noop {} => "noop",
        }
    }

    pub fn build(&self) -> AnyHostScheduler {
        match self {
            HostSchedulerConfig::Noop {} => AnyHostScheduler::Noop(Noop::default()),
        }
    }
}

/// Every host scheduler, for static dispatch.
pub enum AnyHostScheduler {
    Noop(Noop),
}

macro_rules! each_scheduler {
    ($self:ident, $s:ident => $body:expr) => {
        match $self {
            AnyHostScheduler::Noop($s) => $body,
        }
    };
}

impl HostScheduler for AnyHostScheduler {
    fn push(&mut self, request: HostRequest, view: &HostView) {
        each_scheduler!(self, s => s.push(request, view))
    }
    fn pop(&mut self, view: &HostView, out: &mut Vec<RequestId>) {
        each_scheduler!(self, s => s.pop(view, out))
    }
    fn complete(&mut self, request: &HostRequest, view: &HostView) {
        each_scheduler!(self, s => s.complete(request, view))
    }
    fn len(&self) -> usize {
        each_scheduler!(self, s => s.len())
    }
    fn wake_at_ns(&self) -> Option<u64> {
        each_scheduler!(self, s => s.wake_at_ns())
    }
    fn report(&self) -> HostSchedulerReport {
        each_scheduler!(self, s => s.report())
    }
}
