//! PIQ (Parallel Issue Queuing) and its evaluation variants RWS, PIQ_R and PIQ_W.
//!
//! Reads and writes wait in separate batch lists (read/write separation, "RWS"). In a batched
//! direction a request joins the first batch, in creation order, whose location vector does
//! not intersect its own (Algorithm 1), else it opens a new batch; in an unbatched direction
//! every request is its own batch, which is plain FIFO. Batches are issued in creation order,
//! read batches before write batches, with the paper's write-starvation rule (see
//! [`RwPhase`]). A waiting request that shares a chip with an outstanding one is held back
//! (`hold_outstanding_conflicts`), which is how outstanding requests enter conflict detection.
//!
//! With `batch_cycles` a batch of a batched direction is a *cycle* instead: the head batch is
//! issued, stays at the head while any member is outstanding (its vector holds the chips of its
//! waiting and outstanding members, so a newcomer that misses them joins it and goes at once),
//! and only when every member has completed does the next batch, of either direction, go.

use std::collections::VecDeque;

use super::deadline::dir_index;
use super::{HostRequest, HostScheduler, HostSchedulerReport, HostView, RequestId, Tally};
use crate::geometry::ChipSet;
use crate::trace::Op;
use serde::{Deserialize, Serialize};

use super::piq_passes::PiqPasses;
use super::{is_false, yes, HostSchedulerKind, PiqIssueRule};

/// `kind = "rws"`: read-write separation, reads before writes, FIFO within each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RwsConfig {
    #[serde(default = "yes")]
    pub write_starvation_guard: bool,
    /// `ssdsim_passes` (the default, the reading validated against the public SSDsim fork
    /// with PIQ: every hand-over pass puts the waiting reads before the waiting writes, as
    /// that fork's PIQ does without its conflict passes) or `batch_lists` (two FIFO lists,
    /// reads first, with the write-starvation guard). Always in the config echo.
    #[serde(default)]
    pub issue_rule: PiqIssueRule,
}

impl HostSchedulerKind for RwsConfig {
    type Built = PiqIssue;
    fn build(&self) -> PiqIssue {
        match self.issue_rule {
            PiqIssueRule::SsdsimPasses => {
                PiqIssue::Passes(PiqPasses::new(PiqVariant::Rws.batched()))
            }
            PiqIssueRule::BatchLists => PiqIssue::Lists(Piq::new(
                PiqVariant::Rws,
                self.write_starvation_guard,
                false,
            )),
        }
    }
}

/// The config of a batching PIQ kind (`piq_r`, `piq_w`, `piq`): one struct per kind, so the
/// kind list can name each.
macro_rules! piq_config {
    ($(#[$doc:meta])* $Config:ident => $variant:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $Config {
            #[serde(default = "yes")]
            pub write_starvation_guard: bool,
            #[serde(default = "yes")]
            pub hold_outstanding_conflicts: bool,
            /// A batch is a cycle: once issued it must complete before the next batch goes.
            #[serde(default, skip_serializing_if = "is_false")]
            pub batch_cycles: bool,
            /// `ssdsim_passes` (the default, the reading validated against the public SSDsim
            /// fork with PIQ: reorder, never hold; piq_passes.rs) or `batch_lists` (Algorithm
            /// 1's batch lists with the rules above). Always in the config echo.
            #[serde(default)]
            pub issue_rule: PiqIssueRule,
        }

        impl HostSchedulerKind for $Config {
            type Built = PiqIssue;
            fn build(&self) -> PiqIssue {
                match self.issue_rule {
                    PiqIssueRule::SsdsimPasses => {
                        PiqIssue::Passes(PiqPasses::new(PiqVariant::$variant.batched()))
                    }
                    PiqIssueRule::BatchLists => PiqIssue::Lists(
                        Piq::new(
                            PiqVariant::$variant,
                            self.write_starvation_guard,
                            self.hold_outstanding_conflicts,
                        )
                        .with_batch_cycles(self.batch_cycles),
                    ),
                }
            }
        }
    };
}

piq_config!(
    /// `kind = "piq_r"`: PIQ with read batches only (writes FIFO after reads).
    PiqRConfig => PiqR
);
piq_config!(
    /// `kind = "piq_w"`: PIQ with write batches only (reads FIFO, before writes).
    PiqWConfig => PiqW
);
piq_config!(
    /// `kind = "piq"`: PIQ, read and write batches.
    PiqConfig => Piq
);

/// What a PIQ kind builds: its `issue_rule` picks the implementation.
#[derive(Debug)]
pub enum PiqIssue {
    /// `batch_lists`: Algorithm 1's batch lists.
    Lists(Piq),
    /// `ssdsim_passes`: the SSDsim fork's passes.
    Passes(PiqPasses),
}

impl PiqIssue {
    /// The batch lists, if this is that issue rule (tests read their dispatch records).
    pub fn lists(&self) -> Option<&Piq> {
        match self {
            PiqIssue::Lists(p) => Some(p),
            PiqIssue::Passes(_) => None,
        }
    }
}

macro_rules! each_rule {
    ($self:ident, $s:ident => $body:expr) => {
        match $self {
            PiqIssue::Lists($s) => $body,
            PiqIssue::Passes($s) => $body,
        }
    };
}

impl HostScheduler for PiqIssue {
    fn push(&mut self, request: HostRequest, view: &HostView) {
        each_rule!(self, s => s.push(request, view))
    }
    fn pop(&mut self, view: &HostView, out: &mut Vec<RequestId>) {
        each_rule!(self, s => s.pop(view, out))
    }
    fn complete(&mut self, request: &HostRequest, view: &HostView) {
        each_rule!(self, s => s.complete(request, view))
    }
    fn len(&self) -> usize {
        each_rule!(self, s => s.len())
    }
    fn wake_at_ns(&self) -> Option<u64> {
        each_rule!(self, s => s.wake_at_ns())
    }
    fn report(&self) -> HostSchedulerReport {
        each_rule!(self, s => s.report())
    }
}

/// Which of the paper's five schemes (minus NOOP) to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PiqVariant {
    /// Reads before writes, FIFO within each direction.
    Rws,
    /// RWS plus conflict-free batches of reads.
    PiqR,
    /// RWS plus conflict-free batches of writes.
    PiqW,
    /// Batches in both directions.
    Piq,
}

impl PiqVariant {
    /// Whether reads / writes are batched.
    pub(super) fn batched(self) -> [bool; 2] {
        match self {
            PiqVariant::Rws => [false, false],
            PiqVariant::PiqR => [true, false],
            PiqVariant::PiqW => [false, true],
            PiqVariant::Piq => [true, true],
        }
    }
}

/// Direction choice between read and write batches.
///
/// Reads go first. With `guard`, the paper's rule "once the read batches in the current queue
/// are serviced, the write batches are serviced" applies: a read phase covers the read batches
/// waiting when it starts; when it ends with writes waiting, a write phase covers the write
/// batches waiting then, even if new reads arrived (a guard activation). A write phase that
/// started with no read waiting yields as soon as a read arrives.
#[derive(Debug, Default)]
pub(super) struct RwPhase {
    guard: bool,
    /// (direction, batches left in the phase); None before the first dispatch.
    phase: Option<(usize, usize)>,
    /// The current write phase was forced by the guard while reads waited.
    pub guarded: bool,
}

impl RwPhase {
    pub fn new(guard: bool) -> Self {
        RwPhase {
            guard,
            ..RwPhase::default()
        }
    }

    /// Direction to serve given the number of waiting batches per direction.
    pub fn pick(&mut self, counts: [usize; 2], tally: &mut Tally) -> Option<usize> {
        if counts == [0, 0] {
            return None;
        }
        if !self.guard {
            self.guarded = false;
            return Some(if counts[0] > 0 { 0 } else { 1 });
        }
        if let Some((dir, left)) = self.phase {
            let yield_to_reads = dir == 1 && !self.guarded && counts[0] > 0;
            if left > 0 && counts[dir] > 0 && !yield_to_reads {
                return Some(dir);
            }
        }
        let dir = match self.phase {
            Some((0, _)) if counts[1] > 0 => 1,
            _ if counts[0] > 0 => 0,
            _ => 1,
        };
        self.guarded = dir == 1 && counts[0] > 0;
        if self.guarded {
            tally.report.starvation_guard_activations += 1;
        }
        self.phase = Some((dir, counts[dir]));
        Some(dir)
    }

    /// A batch of `dir` was fully issued.
    pub fn retired(&mut self, dir: usize) {
        if let Some((d, left)) = &mut self.phase {
            if *d == dir {
                *left = left.saturating_sub(1);
            }
        }
    }
}

#[derive(Debug)]
struct Batch {
    id: u64,
    /// Union of the members' location vectors, including members already issued.
    vector: ChipSet,
    members: Vec<HostRequest>,
    /// Members issued and not yet complete (counted only with `batch_cycles`).
    outstanding: u32,
}

/// What the last `pop` issued, for tests and tracing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PiqDispatch {
    /// Creation number of the batch the request came from (unique across both lists).
    pub batch_id: u64,
    pub op: Op,
    pub chips: ChipSet,
    /// It went out in a write phase the starvation guard forced.
    pub guarded: bool,
}

#[derive(Debug)]
pub struct Piq {
    batched: [bool; 2],
    hold_conflicts: bool,
    cycles: bool,
    /// With `cycles`: the direction whose head batch is issued and not yet complete.
    in_flight: Option<usize>,
    lists: [VecDeque<Batch>; 2],
    /// Member vectors of retired batches, reused to avoid allocating per batch.
    spare: Vec<Vec<HostRequest>>,
    next_batch_id: u64,
    phase: RwPhase,
    waiting: usize,
    last: Option<PiqDispatch>,
    tally: Tally,
}

impl Piq {
    pub fn new(variant: PiqVariant, write_starvation_guard: bool, hold_conflicts: bool) -> Self {
        Piq {
            batched: variant.batched(),
            hold_conflicts,
            cycles: false,
            in_flight: None,
            lists: Default::default(),
            spare: Vec::new(),
            next_batch_id: 0,
            phase: RwPhase::new(write_starvation_guard),
            waiting: 0,
            last: None,
            tally: Tally::default(),
        }
    }

    /// Make each batch of a batched direction a cycle (see the module comment); replaces
    /// `hold_conflicts` in batched directions.
    pub fn with_batch_cycles(mut self, cycles: bool) -> Self {
        self.cycles = cycles;
        self
    }

    /// Batches waiting in one direction.
    pub fn waiting_batches(&self, op: Op) -> usize {
        self.lists[dir_index(op)].len()
    }

    /// Waiting batches of one direction in creation order: (location vector, member ids).
    pub fn batches(&self, op: Op) -> Vec<(ChipSet, Vec<RequestId>)> {
        self.lists[dir_index(op)]
            .iter()
            .map(|b| (b.vector, b.members.iter().map(|r| r.id).collect()))
            .collect()
    }

    pub fn last_dispatch(&self) -> Option<PiqDispatch> {
        self.last
    }
}

/// Whether `chips` touches a chip with an outstanding request.
pub(super) fn busy(chips: &ChipSet, outstanding_per_chip: &[u32]) -> bool {
    chips
        .iter()
        .any(|c| outstanding_per_chip.get(c as usize).is_some_and(|n| *n > 0))
}

impl HostScheduler for Piq {
    fn push(&mut self, request: HostRequest, _view: &HostView) {
        self.tally.pushed(&request);
        self.waiting += 1;
        let dir = dir_index(request.op);
        if self.batched[dir] {
            if let Some(b) = self.lists[dir]
                .iter_mut()
                .find(|b| !b.vector.intersects(&request.chips))
            {
                b.vector.union_with(&request.chips);
                b.members.push(request);
                return;
            }
            self.tally.report.batches += 1;
        }
        let mut members = self.spare.pop().unwrap_or_default();
        members.push(request);
        self.lists[dir].push_back(Batch {
            id: self.next_batch_id,
            vector: request.chips,
            members,
            outstanding: 0,
        });
        self.next_batch_id += 1;
    }

    fn pop(&mut self, view: &HostView, out: &mut Vec<RequestId>) {
        let dir = match self.in_flight {
            // A cycle is under way: only its own (late-joining) members may go.
            Some(dir) => dir,
            None => {
                let counts = [self.lists[0].len(), self.lists[1].len()];
                let Some(dir) = self.phase.pick(counts, &mut self.tally) else {
                    return;
                };
                dir
            }
        };
        let cycle = self.cycles && self.batched[dir];
        let hold = self.hold_conflicts && self.batched[dir] && !cycle;
        let Some(batch) = self.lists[dir].front_mut() else {
            return;
        };
        if cycle && batch.members.is_empty() {
            // Every member is out: wait for them to complete.
            return;
        }
        let index = if hold {
            // Members of this batch never share chips, so its own issued members never block.
            match batch
                .members
                .iter()
                .position(|r| !busy(&r.chips, view.outstanding_per_chip))
            {
                Some(i) => i,
                None => return,
            }
        } else {
            0
        };
        let r = batch.members.remove(index);
        let batch_id = batch.id;
        if cycle {
            // The batch stays at the head until its members complete (see `complete`).
            batch.outstanding += 1;
            self.in_flight = Some(dir);
        } else if batch.members.is_empty() {
            if let Some(b) = self.lists[dir].pop_front() {
                self.spare.push(b.members);
            }
            self.phase.retired(dir);
        }
        if self.batched[dir] {
            self.tally.report.batched_requests += 1;
        }
        self.waiting -= 1;
        self.tally.dispatched(&r);
        self.last = Some(PiqDispatch {
            batch_id,
            op: r.op,
            chips: r.chips,
            guarded: self.phase.guarded,
        });
        out.push(r.id);
    }

    fn complete(&mut self, request: &HostRequest, _view: &HostView) {
        let dir = dir_index(request.op);
        if self.in_flight != Some(dir) {
            return;
        }
        // Only the cycle's head batch has outstanding members in this direction.
        let Some(batch) = self.lists[dir].front_mut() else {
            return;
        };
        debug_assert!(batch.outstanding > 0);
        batch.outstanding -= 1;
        batch.vector.remove_all(&request.chips);
        if batch.outstanding == 0 && batch.members.is_empty() {
            if let Some(b) = self.lists[dir].pop_front() {
                self.spare.push(b.members);
            }
            self.phase.retired(dir);
            self.in_flight = None;
        }
    }

    fn len(&self) -> usize {
        self.waiting
    }

    fn report(&self) -> HostSchedulerReport {
        self.tally.finish()
    }
}
