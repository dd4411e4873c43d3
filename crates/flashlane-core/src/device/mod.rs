//! Device-side transaction scheduling: the queues between the FTL and the flash chips.
//!
//! Every device scheduler implements [`DeviceScheduler`]; [`DeviceSchedulerConfig`] lists them.

mod die_issue;
mod drive_probe;
mod multiplane;
mod region_contention;
mod region_runs;
mod ssdsim;
#[cfg(test)]
mod testing;
mod write_buffer;

use serde::{Deserialize, Serialize};

use crate::ftl::Ftl;
use crate::geometry::Geometry;
pub use crate::transaction::{Transaction, TxnKind, NO_LPN, NO_REQUEST};

pub use die_issue::{DieIssue, DieIssueRule};
pub use drive_probe::{
    curve_from_probe, service_time_factors, CurvePoint, ParallelismCurve, ProbeOperation,
    MAX_SERVICE_TIME_FACTOR, PROBE_SCHEMA_VERSION,
};
pub use multiplane::{CompanionFit, MultiPlane};
pub use region_contention::{RegionContention, RegionContentionConfig};
pub use region_runs::{RegionRuns, RegionRunsConfig};
pub use ssdsim::{
    GcJob, GcService, ProgramBinding, ProgramOrder, ReadTransfer, Ssdsim, SsdsimConfig,
    SsdsimSwitches,
};
pub use write_buffer::{WriteBuffer, WriteBufferCounters, WriteBufferStats};

/// When a host page program counts as done for its request (`device.write_completion`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteCompletion {
    /// At the end of the array program (tPROG).
    #[default]
    ProgramDone,
    /// When the page's data has crossed the channel into the chip (SSDsim's `static_write`
    /// and `go_one_step`: the sub-request completes at the end of its data transfer while the
    /// chip programs on).
    DataTransferred,
}

impl WriteCompletion {
    pub fn is_default(&self) -> bool {
        *self == WriteCompletion::ProgramDone
    }
}

/// Device side: the submission queue and the per-chip transaction scheduler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Requests the device accepts at once (NVMe submission-queue depth).
    pub queue_depth_requests: u32,
    pub scheduler: DeviceSchedulerConfig,
    /// Pair page reads (programs) of one die at the same page index on different planes into
    /// multi-plane commands (device/multiplane.rs). Off by default.
    #[serde(default)]
    pub multiplane: bool,
    /// With `multiplane`: translation-page reads form groups too, led by a mapping read and
    /// filled with mapping reads, then host reads (MQSim's `TSU_Base::issue_command_to_chip`
    /// fills a command from the mapping-read queue, then the user-read queue). Off by default:
    /// only host reads pair with host reads, host programs with host programs.
    #[serde(default, skip_serializing_if = "is_false")]
    pub multiplane_mapping_reads: bool,
    /// When a die may start: `independent` (whenever it is idle, the default) or
    /// `whole_chip_idle` (only while no die of its chip works, MQSim's rule;
    /// device/die_issue.rs).
    #[serde(default)]
    pub die_issue: DieIssueRule,
    /// DRAM write buffer in front of the FTL, bytes; 0 = none (device/write_buffer.rs).
    #[serde(default)]
    pub write_buffer_bytes: u64,
    /// DRAM time to move one page into the write buffer or out of it to the host, ns
    /// (4 KiB in 1000 ns is about 4 GB/s).
    #[serde(default = "default_write_buffer_page_ns")]
    pub write_buffer_page_ns: u64,
    /// Flushing starts while more than this fraction of the buffer's slots hold dirty pages.
    #[serde(default = "default_write_buffer_flush_threshold_fraction")]
    pub write_buffer_flush_threshold_fraction: f64,
    /// When a host page program counts as done for its request: `program_done` (the
    /// default: at the end of tPROG) or `data_transferred` (SSDsim: when its data has crossed
    /// the channel into the chip; the chip stays busy through tPROG). docs/models/ssd-model.md.
    #[serde(default, skip_serializing_if = "WriteCompletion::is_default")]
    pub write_completion: WriteCompletion,
    /// PASS's drive behaviour: a region's operations slow down when too many requests are
    /// outstanding to it (device/region_contention.rs). Absent = off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region_contention: Option<RegionContentionConfig>,
    /// PASS's drive behaviour, second reading: a region's operations slow down when many
    /// requests are sent to it in a row (device/region_runs.rs). Absent = off. With
    /// `region_contention` also on, an operation's factors multiply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region_runs: Option<RegionRunsConfig>,
}

pub(crate) fn default_write_buffer_page_ns() -> u64 {
    1000
}

pub(crate) fn default_write_buffer_flush_threshold_fraction() -> f64 {
    0.5
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What a device scheduler may consult and change while it queues and picks transactions.
pub struct DeviceContext<'a> {
    pub now_ns: u64,
    /// Per die (global index): true while it may not start an operation — it works, or, under
    /// `device.die_issue = "whole_chip_idle"`, another die of its chip works.
    pub die_busy: &'a [bool],
    /// Programs in the queue that may not start yet, as (request, logical page): each waits
    /// for the read of its page's other sectors (`ftl.partial_page_writes = "update_read"`).
    /// See [`DeviceContext::is_held`].
    pub held: &'a [(u32, u32)],
    /// The FTL, for schedulers that remap queued writes (SOS).
    pub ftl: &'a mut Ftl,
    /// Queued transactions the scheduler dropped because a newer write of the same logical
    /// page superseded them; the simulation completes their page of the host request.
    pub cancelled: &'a mut Vec<Transaction>,
}

impl DeviceContext<'_> {
    /// Whether `txn` must stay queued: a program waiting for its update read.
    #[inline]
    pub fn is_held(&self, txn: &Transaction) -> bool {
        is_held(self.held, txn)
    }
}

/// Whether `txn` is one of the `held` programs (request, logical page).
#[inline]
pub fn is_held(held: &[(u32, u32)], txn: &Transaction) -> bool {
    !held.is_empty() && txn.kind == TxnKind::Program && held.contains(&(txn.request, txn.lpn))
}

/// Contract: every enqueued transaction is returned exactly once, either by
/// [`DeviceScheduler::next`] (only when its die is idle and it is not held, see
/// [`DeviceContext::is_held`]: a held transaction keeps its place in the scheduler's order,
/// and the simulation asks for its chip again when it is released) or, for a host program
/// superseded by a newer program of the same logical page, in `ctx.cancelled`. A scheduler may reorder
/// transactions and may move a queued host program to another chip (remapping it through
/// `ctx.ftl`, updating `chip`, `die` and `ppn`), but never moves a read, copyback or erase and
/// never drops a transaction.
pub trait DeviceScheduler {
    fn enqueue(&mut self, txn: Transaction, ctx: &mut DeviceContext<'_>);
    /// A die of `chip` became idle or a transaction for `chip` arrived: return a transaction
    /// that may start now (its die is idle per `ctx.die_busy`; it may belong to another chip),
    /// or `None`. Called repeatedly until `None`.
    fn next(&mut self, chip: u32, ctx: &mut DeviceContext<'_>) -> Option<Transaction>;
    /// False only when [`DeviceScheduler::next`] for `chip` would surely return `None` with
    /// these busy dies: a cheap check that spares the call (most calls find nothing to
    /// start). The default always lets `next` decide.
    fn may_issue(&self, _chip: u32, _die_busy: &[bool]) -> bool {
        true
    }
    /// Transactions queued (not yet started) for each chip.
    fn queued_per_chip(&self) -> &[u32];
    /// Multi-plane pairing (`device.multiplane`): remove and return the first queued
    /// transaction of `chip`, in this scheduler's order, that `fits` accepts. `fits` accepts
    /// only transactions of die `die` (a group is one die's planes), so a scheduler with
    /// queues per die may look at that die's alone. A scheduler that cannot look past its
    /// head may keep the default, which never pairs.
    fn take_companion(
        &mut self,
        _chip: u32,
        _die: u32,
        _fits: &CompanionFit<'_>,
    ) -> Option<Transaction> {
        None
    }
}

crate::registry::registry! {
    /// Device scheduler choice in a config (`[device.scheduler] kind = "out_of_order"`).
    config DeviceSchedulerConfig;

    dispatch AnyDeviceScheduler: DeviceScheduler {
        fn enqueue(&mut self, txn: Transaction, ctx: &mut DeviceContext<'_>);
        fn next(&mut self, chip: u32, ctx: &mut DeviceContext<'_>) -> Option<Transaction>;
        fn may_issue(&self, chip: u32, die_busy: &[bool]) -> bool;
        fn queued_per_chip(&self) -> &[u32];
        fn take_companion(
            &mut self,
            chip: u32,
            die: u32,
            fits: &CompanionFit<'_>
        ) -> Option<Transaction>;
    }

    /// A device scheduler's config struct (`[device.scheduler]` minus `kind`): builds it for
    /// a drive of `geometry`.
    kind trait DeviceSchedulerKind {
        fn build(&self, geometry: &Geometry);
    }

    // One line per device scheduler, in documentation order: `mod FILE: "kind" => Variant(Config)`
    // declares FILE.rs and re-exports its public items; a line without `mod` names a module
    // declared above, which serves more than that kind.
    kinds [
        mod in_order: "in_order" => InOrder(InOrderConfig),
        mod out_of_order: "out_of_order" => OutOfOrder(OutOfOrderConfig),
        mod sos: "sos" => Sos(SosConfig),
        "ssdsim" => Ssdsim(SsdsimConfig),
        mod read_first: "read_first" => ReadFirst(ReadFirstConfig),
    ]
}

impl DeviceSchedulerConfig {
    /// The `ssdsim` scheduler's switches (`None` for other kinds).
    pub fn ssdsim_switches(&self) -> Option<SsdsimSwitches> {
        match self {
            DeviceSchedulerConfig::Ssdsim(c) => Some(c.switches()),
            _ => None,
        }
    }

    /// The `ssdsim` scheduler's read rules: `read_transfer` and `merged_read_ns` (the
    /// defaults for other kinds).
    pub fn ssdsim_read_rules(&self) -> (ReadTransfer, Option<u64>) {
        match self {
            DeviceSchedulerConfig::Ssdsim(c) => (c.read_transfer, c.merged_read_ns),
            _ => (ReadTransfer::Requested, None),
        }
    }
}
