//! Host side: the I/O scheduler queue in front of the device.
//!
//! Every host scheduler implements [`HostScheduler`]; [`HostSchedulerConfig`] lists them all
//! (static dispatch through [`AnyHostScheduler`], no registration at start-up).

mod deadline;
mod occupancy;
mod pcie_link;
mod piq;
mod piq_passes;

use serde::{Deserialize, Serialize};

use crate::geometry::{ChipSet, Geometry, StaticMap};
use crate::trace::Op;

pub use deadline::{Deadline, DeadlineConfig, DeadlineParams};
pub use occupancy::{page_span, ChipLoad, QueueBound};
pub use pcie_link::{HostLinkConfig, PcieLink};
pub use piq::{
    Piq, PiqConfig, PiqDispatch, PiqIssue, PiqRConfig, PiqVariant, PiqWConfig, RwsConfig,
};
pub use piq_passes::PiqPasses;

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
    /// Batches formed (PIQ, VIOS chip batches, PASS turns); 0 for schedulers without batches.
    pub batches: u64,
    /// Requests that went out in those batches.
    pub batched_requests: u64,
    /// `batched_requests / batches`, 0 when no batch was formed.
    pub mean_batch_size: f64,
    /// Requests merged into an adjacent request before dispatch.
    pub merges: u64,
    /// Reads dispatched (merged reads count once per request).
    pub reads_dispatched: u64,
    /// Reads dispatched while a write that arrived earlier was still waiting.
    pub reads_prioritized: u64,
    /// `reads_prioritized / reads_dispatched`, 0 when no read was dispatched.
    pub reads_prioritized_share: f64,
    /// Times a starvation guard overrode the normal order (PIQ/VIOS write phases started while
    /// reads waited, deadline/mq-deadline `writes_starved` write picks).
    pub starvation_guard_activations: u64,
    /// Requests dispatched because their deadline had expired (deadline, anticipatory, PASS).
    pub expired_dispatches: u64,
    /// Anticipation windows opened after a read completed (anticipatory).
    pub anticipation_windows: u64,
    /// Anticipation windows that ended with a read of the awaited stream (anticipatory).
    pub anticipation_hits: u64,
    /// Scheduler time slices started (CFQ).
    pub slices: u64,
}

/// Shared bookkeeping for the report fields every scheduler can give.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Sequence numbers of waiting writes, to tell whether a read overtakes one.
    waiting_writes: std::collections::BTreeSet<u64>,
    pub report: HostSchedulerReport,
}

impl Tally {
    pub fn pushed(&mut self, r: &HostRequest) {
        if r.op == Op::Write {
            self.waiting_writes.insert(r.seq);
        }
    }

    pub fn dispatched(&mut self, r: &HostRequest) {
        match r.op {
            Op::Write => {
                self.waiting_writes.remove(&r.seq);
            }
            Op::Read => {
                self.report.reads_dispatched += 1;
                if self.waiting_writes.first().is_some_and(|w| *w < r.seq) {
                    self.report.reads_prioritized += 1;
                }
            }
        }
    }

    /// A request went out, `merged` into the command of the one before it.
    pub fn sent(&mut self, r: &HostRequest, merged: bool) {
        self.dispatched(r);
        if merged {
            self.report.merges += 1;
        }
    }

    pub fn finish(&self) -> HostSchedulerReport {
        let mut r = self.report.clone();
        if r.batches > 0 {
            r.mean_batch_size = r.batched_requests as f64 / r.batches as f64;
        }
        if r.reads_dispatched > 0 {
            r.reads_prioritized_share = r.reads_prioritized as f64 / r.reads_dispatched as f64;
        }
        r
    }
}

/// Largest command a merge may build (Linux `max_sectors_kb` default on SATA: 512 KiB).
pub const MAX_MERGE_BYTES: u64 = 512 * 1024;

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

crate::registry::registry! {
    /// Host scheduler choice in a config (`[host.scheduler] kind = "noop"`). Parameter names
    /// carry their unit; defaults come from the papers or Linux (see `docs/models/`).
    config HostSchedulerConfig;

    #[derive(Debug)]
    dispatch AnyHostScheduler: HostScheduler {
        fn push(&mut self, request: HostRequest, view: &HostView);
        fn pop(&mut self, view: &HostView, out: &mut Vec<RequestId>);
        fn complete(&mut self, request: &HostRequest, view: &HostView);
        fn len(&self) -> usize;
        fn wake_at_ns(&self) -> Option<u64>;
        fn report(&self) -> HostSchedulerReport;
    }

    /// A host scheduler's config struct (`[host.scheduler]` minus `kind`): builds it.
    kind trait HostSchedulerKind {
        fn build(&self);
    }

    // One line per host scheduler, in documentation order: `mod FILE: "kind" => Variant(Config)`
    // declares FILE.rs and re-exports its public items; a line without `mod` names a module
    // declared above, which serves more than that kind.
    kinds [
        mod noop: "noop" => Noop(NoopConfig),
        "deadline" => Deadline(DeadlineConfig),
        mod cfq: "cfq" => Cfq(CfqConfig),
        mod anticipatory: "anticipatory" => Anticipatory(AnticipatoryConfig),
        "rws" => Rws(RwsConfig),
        "piq_r" => PiqR(PiqRConfig),
        "piq_w" => PiqW(PiqWConfig),
        "piq" => Piq(PiqConfig),
        mod vios: "vios" => Vios(ViosConfig),
        mod pass: "pass" => Pass(PassConfig),
    ]
}

pub(crate) fn yes() -> bool {
    true
}

/// Host side: the I/O scheduler queue in front of the device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Requests the host scheduler queue holds; later arrivals wait in arrival order.
    pub queue_length_requests: u32,
    /// SSDsim's request queue (PIQ/VIOS platform): `queue_length_requests` bounds the requests
    /// waiting in the host scheduler *plus* those issued to the device and not yet complete,
    /// so a queue length of 1 means one request inside the SSD at a time.
    #[serde(default, skip_serializing_if = "is_false")]
    pub queue_includes_outstanding: bool,
    pub scheduler: HostSchedulerConfig,
    /// When a waiting request may be handed to the device: `arrival` (the default: at once,
    /// whenever the device has room), `next_device_event` (SSDsim: at the first internal
    /// event of the device, a transfer or flash operation ending, at or after its arrival;
    /// at its arrival only when no flash operation is under way) or `second_device_event`
    /// (SSDsim's loop order: the event after that, see [`HandoverAt`]).
    /// docs/models/ssd-model.md, "SSDsim's platform rules".
    #[serde(default, skip_serializing_if = "HandoverAt::is_default")]
    pub handover_at: HandoverAt,
    /// Requests handed over per hand-over pass: `all` (the default: while the device has
    /// room) or `one` (SSDsim's FIFO and NOOP-D distribute one request per loop pass).
    #[serde(default, skip_serializing_if = "HandoverPerPass::is_default")]
    pub handover_per_pass: HandoverPerPass,
    /// Hand requests over only while no channel (no path of the interconnect) carries or
    /// waits for a transfer (SSDsim's NOOP-D and PIQ, `no_buffer_distribute_s`). Default false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub handover_needs_idle_channels: bool,
    /// The link between host and device: `none` (the default: requests reach the device and
    /// complete for the host at no link cost) or `pcie` (MQSim's NVMe over PCIe: commands,
    /// write data, read data and completions cross it in timed messages; host/pcie_link.rs).
    #[serde(default, skip_serializing_if = "HostLinkConfig::is_none")]
    pub link: HostLinkConfig,
}

/// When a request waiting in the host queue may be handed to the device (`host.handover_at`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoverAt {
    /// Whenever the device has room (a real host's submission).
    #[default]
    Arrival,
    /// At the device's next internal event at or after the arrival (SSDsim's main loop,
    /// which distributes requests only when it advances its clock to an event).
    NextDeviceEvent,
    /// SSDsim's loop as it runs (`ssd.c: simulate`): it reads the trace records that are due
    /// (`get_requests`) *before* it moves its clock to the next internal event and
    /// distributes there, so a request that arrives while its request queue holds others
    /// enters the queue at the first device event at or after its arrival, after that
    /// event's hand-over, and is handed over at a later event. Into an empty queue a record is
    /// read ahead of its time and handed over at its arrival, unless no device event came
    /// since the queue emptied while one is pending: then at that event. Open-loop replay
    /// only (paced replay admits as `next_device_event`).
    SecondDeviceEvent,
}

impl HandoverAt {
    pub fn is_default(&self) -> bool {
        *self == HandoverAt::Arrival
    }
}

/// How many waiting requests one hand-over pass gives the device (`host.handover_per_pass`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoverPerPass {
    /// As many as the device accepts.
    #[default]
    All,
    /// One (SSDsim's FIFO and NOOP-D).
    One,
}

impl HandoverPerPass {
    pub fn is_default(&self) -> bool {
        *self == HandoverPerPass::All
    }
}

/// How PIQ turns its conflict detection into an issue order (`host.scheduler.issue_rule`;
/// docs/models/piq.md, "Two issue rules").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PiqIssueRule {
    /// Algorithm 1's read and write batch lists, issued in creation order, with
    /// `hold_outstanding_conflicts` / `batch_cycles` deciding what waits for outstanding
    /// requests (piq.rs). A named option: no public code runs it.
    BatchLists,
    /// `schedule_PIQ` of the public SSDsim fork: every pass reorders the waiting requests into
    /// greedy conflict-free passes, reads first; outstanding requests are ignored and nothing
    /// is held (piq_passes.rs). The default: the reading validated against public code
    /// (docs/validation.md, "SSDsim").
    #[default]
    SsdsimPasses,
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}
/// mq-deadline `read_expire`: 500 ms.
pub(crate) fn d_read_expire_ns() -> u64 {
    500_000_000
}
/// mq-deadline `write_expire`: 5 s.
pub(crate) fn d_write_expire_ns() -> u64 {
    5_000_000_000
}
/// mq-deadline `fifo_batch`.
pub(crate) fn d_fifo_batch_requests() -> u32 {
    16
}
/// mq-deadline `writes_starved`.
pub(crate) fn d_writes_starved_batches() -> u32 {
    2
}

impl HostSchedulerConfig {
    /// A PIQ kind with `batch_cycles` under the `ssdsim_passes` issue rule (a contradiction).
    pub fn piq_cycles_with_ssdsim_passes(&self) -> bool {
        let (cycles, rule) = match self {
            HostSchedulerConfig::PiqR(PiqRConfig {
                batch_cycles,
                issue_rule,
                ..
            })
            | HostSchedulerConfig::PiqW(PiqWConfig {
                batch_cycles,
                issue_rule,
                ..
            })
            | HostSchedulerConfig::Piq(PiqConfig {
                batch_cycles,
                issue_rule,
                ..
            }) => (*batch_cycles, *issue_rule),
            _ => return false,
        };
        cycles && rule == PiqIssueRule::SsdsimPasses
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Level;

    fn geometry() -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 16,
            pages_per_block: 8,
            page_bytes: 4096,
        }
    }

    /// Calls `f` with a view at `now_ns` over an idle 4-chip device.
    fn with_view<R>(now_ns: u64, f: impl FnOnce(&HostView) -> R) -> R {
        let g = geometry();
        let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
        let per_chip = [0u32; 4];
        f(&HostView {
            now_ns,
            geometry: &g,
            static_map: &map,
            outstanding_per_chip: &per_chip,
            outstanding: 0,
            device_free_slots: 4,
        })
    }

    fn req(id: u32, op: Op, lpn: u64, arrival_ns: u64) -> HostRequest {
        let mut chips = ChipSet::EMPTY;
        chips.insert((lpn % 4) as u32);
        HostRequest {
            id,
            seq: id as u64,
            arrival_ns,
            op,
            offset_bytes: lpn * 4096,
            size_bytes: 4096,
            first_lpn: lpn,
            pages: 1,
            stream: 0,
            chips,
        }
    }

    fn pop(s: &mut AnyHostScheduler, now_ns: u64) -> Vec<RequestId> {
        let mut out = Vec::new();
        with_view(now_ns, |v| s.pop(v, &mut out));
        out
    }

    fn build(json: &str) -> AnyHostScheduler {
        serde_json::from_str::<HostSchedulerConfig>(json)
            .unwrap()
            .build()
    }

    #[test]
    fn noop_merges_only_contiguous_same_direction_neighbours() {
        let mut s = build(r#"{"kind":"noop","merge":true}"#);
        for r in [
            req(0, Op::Read, 10, 0),
            req(1, Op::Read, 11, 0),
            req(2, Op::Write, 12, 0),
            req(3, Op::Write, 20, 0),
        ] {
            with_view(0, |v| s.push(r, v));
        }
        assert_eq!(pop(&mut s, 0), vec![0, 1]);
        assert_eq!(pop(&mut s, 0), vec![2]);
        assert_eq!(s.report().merges, 1);
    }

    #[test]
    fn deadline_sends_an_expired_request_before_the_sorted_successor() {
        let json = r#"{"kind":"deadline","read_expire_ns":1000000,"fifo_batch_requests":1}"#;
        for (now, expect) in [(2_000_000, 1), (500_000, 2)] {
            let mut s = build(json);
            with_view(0, |v| s.push(req(0, Op::Read, 0, 0), v));
            assert_eq!(pop(&mut s, 0), vec![0]);
            with_view(0, |v| s.push(req(1, Op::Read, 1000, 100_000), v));
            with_view(0, |v| s.push(req(2, Op::Read, 5, 400_000), v));
            // Sorted order after offset 0 is request 2; request 1 expires at 1.1 ms.
            assert_eq!(pop(&mut s, now), vec![expect], "now {now}");
        }
    }

    #[test]
    fn deadline_serves_writes_after_writes_starved_read_picks() {
        let mut s = build(r#"{"kind":"deadline","fifo_batch_requests":1}"#);
        with_view(0, |v| {
            s.push(req(0, Op::Write, 100, 0), v);
            for i in 1..5 {
                s.push(req(i, Op::Read, i as u64 * 2, 0), v);
            }
        });
        let order: Vec<_> = (0..4).flat_map(|_| pop(&mut s, 0)).collect();
        assert_eq!(order, vec![1, 2, 0, 3]);
        assert_eq!(s.report().starvation_guard_activations, 1);
    }

    #[test]
    fn pass_round_robins_regions_and_alternates_directions() {
        // Regions of 8 pages; threshold 2.
        let mut s = build(r#"{"kind":"pass","region_bytes":32768,"batch_threshold_requests":2}"#);
        with_view(0, |v| {
            s.push(req(0, Op::Read, 0, 0), v);
            s.push(req(1, Op::Read, 2, 0), v);
            s.push(req(2, Op::Read, 4, 0), v);
            s.push(req(3, Op::Write, 6, 0), v);
            s.push(req(4, Op::Read, 8, 0), v);
        });
        let order: Vec<_> = (0..5).flat_map(|_| pop(&mut s, 0)).collect();
        // Region 0 reads (2), region 1 reads, region 0 writes (its next turn), region 0 reads.
        assert_eq!(order, vec![0, 1, 4, 3, 2]);
        assert_eq!(s.report().batches, 4);
    }

    #[test]
    fn pass_expired_request_goes_first() {
        let mut s = build(r#"{"kind":"pass","region_bytes":32768,"read_expire_ns":1000}"#);
        with_view(0, |v| {
            s.push(req(0, Op::Write, 0, 0), v);
            s.push(req(1, Op::Read, 9, 0), v);
        });
        assert_eq!(pop(&mut s, 5_000), vec![1]);
        assert_eq!(s.report().expired_dispatches, 1);
    }

    #[test]
    fn anticipatory_holds_then_times_out() {
        let mut s = build(r#"{"kind":"anticipatory","antic_expire_ns":1000}"#);
        let mut r0 = req(0, Op::Read, 0, 0);
        r0.stream = 7;
        with_view(0, |v| s.complete(&r0, v));
        with_view(0, |v| s.push(req(1, Op::Read, 3, 0), v));
        assert!(pop(&mut s, 10).is_empty());
        assert_eq!(s.wake_at_ns(), Some(1000));
        assert_eq!(pop(&mut s, 1000), vec![1]);
        let mut r2 = req(2, Op::Read, 1, 0);
        r2.stream = 7;
        with_view(1000, |v| s.complete(&r0, v));
        with_view(1000, |v| s.push(req(3, Op::Read, 5, 0), v));
        with_view(1000, |v| s.push(r2, v));
        assert_eq!(pop(&mut s, 1001), vec![2]);
        assert_eq!(s.report().anticipation_hits, 1);
    }

    #[test]
    fn cfq_rotates_streams_by_slice() {
        let mut s = build(r#"{"kind":"cfq","slice_sync_ns":100}"#);
        with_view(0, |v| {
            for i in 0..4 {
                let mut r = req(i, Op::Read, i as u64 * 3, 0);
                r.stream = i % 2;
                s.push(r, v);
            }
        });
        assert_eq!(pop(&mut s, 0), vec![0]);
        assert_eq!(pop(&mut s, 50), vec![2]);
        assert_eq!(pop(&mut s, 150), vec![1]);
        assert_eq!(pop(&mut s, 160), vec![3]);
    }

    #[test]
    fn piq_guard_serves_write_phase_after_read_phase() {
        // The guard belongs to the batch lists (the ssdsim_passes default has no phases).
        let mut s = build(r#"{"kind":"rws","issue_rule":"batch_lists"}"#);
        with_view(0, |v| {
            s.push(req(0, Op::Write, 0, 0), v);
            s.push(req(1, Op::Read, 1, 0), v);
        });
        assert_eq!(pop(&mut s, 0), vec![1]);
        with_view(0, |v| s.push(req(2, Op::Read, 2, 0), v));
        // The read phase covered one read; the write goes before the newer read.
        assert_eq!(pop(&mut s, 0), vec![0]);
        assert_eq!(pop(&mut s, 0), vec![2]);
        let r = s.report();
        assert_eq!(r.starvation_guard_activations, 1);
        assert_eq!(r.reads_prioritized, 1);
        assert!((r.reads_prioritized_share - 0.5).abs() < 1e-9);
    }
}
