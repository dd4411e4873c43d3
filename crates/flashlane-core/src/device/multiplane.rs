//! Multi-plane operations (`device.multiplane = true`): when a die starts a page read or
//! program, queued transactions of the same kind for the same die, on other planes and at the
//! same page index inside their blocks, join it as one multi-plane command.
//!
//! The rule (docs/models/ssd-model.md, "Multi-plane operations"): the transaction the device
//! scheduler starts leads; companions are taken in the scheduler's order (the first fitting
//! one first), at most one per plane of the die. Host page reads pair with host reads and
//! programs with programs; under `device.multiplane_mapping_reads` a translation-page read also
//! leads a group and takes mapping reads and host reads as companions (MQSim's rule). Under
//! `ftl.gc_page_move = "read_and_program"` a GC read leads a group of GC reads, then host
//! reads, and a GC program one of GC programs, then host programs (MQSim's
//! `TSU_OutOfOrder` passes the GC queue first, then the user queue). Erases of one die's
//! planes pair too (MQSim's multi-plane erase). GC copybacks and mapping programs never pair.
//! The group runs as one transaction: one command, one array time (`page_read_ns`,
//! `page_program_ns` or `block_erase_ns`: the planes work in parallel), and the bytes of every
//! page over the channel back to back.

use super::{is_held, AnyDeviceScheduler, DeviceScheduler, Transaction, TxnKind};

/// Whether a queued `companion` may join a group led by `leader`: the same kind; under
/// `device.multiplane_mapping_reads` a mapping-read group also takes host reads (MQSim fills
/// from the mapping-read queue first, then the user-read queue; the scheduler's companion order
/// gives that).
fn joins(leader: TxnKind, companion: TxnKind, mapping_reads: bool) -> bool {
    companion == leader
        || match leader {
            TxnKind::MappingRead => {
                mapping_reads && matches!(companion, TxnKind::Read | TxnKind::GcRead)
            }
            // MQSim fills a GC command from its GC queue, then from the user queue of its kind.
            TxnKind::GcRead => companion == TxnKind::Read,
            TxnKind::GcProgram => companion == TxnKind::Program,
            _ => false,
        }
}

/// What a queued transaction must be to join the group `leader` leads
/// ([`super::DeviceScheduler::take_companion`]): of a kind that joins it, on its die, at its
/// page index inside the block, on a plane the group does not use yet, and not a held program.
/// A plain value rather than a closure, so a scheduler's scan of its queue tests it inline.
pub struct CompanionFit<'a> {
    leader: Transaction,
    mapping_reads: bool,
    planes_per_die: u32,
    /// Planes of the die (bit `plane % planes_per_die`) the group already uses.
    used_planes: u64,
    held: &'a [(u32, u32)],
}

impl<'a> CompanionFit<'a> {
    /// The test for a group of `leader` alone so far.
    pub fn new(
        leader: Transaction,
        mapping_reads: bool,
        planes_per_die: u32,
        held: &'a [(u32, u32)],
    ) -> Self {
        CompanionFit {
            leader,
            mapping_reads,
            planes_per_die,
            used_planes: 1 << (leader.plane % planes_per_die),
            held,
        }
    }

    /// Whether `t` may join the group. The page index first: it is what most queued
    /// transactions differ in.
    #[inline]
    pub fn accepts(&self, t: &Transaction) -> bool {
        let leader = &self.leader;
        t.page_in_block == leader.page_in_block
            && t.die == leader.die
            && joins(leader.kind, t.kind, self.mapping_reads)
            && self.used_planes & (1 << (t.plane % self.planes_per_die)) == 0
            && !is_held(self.held, t)
    }

    /// `companion` joined the group: its plane is taken.
    fn joined(&mut self, companion: &Transaction) {
        self.used_planes |= 1 << (companion.plane % self.planes_per_die);
    }
}

pub struct MultiPlane {
    enabled: bool,
    /// `device.multiplane_mapping_reads`.
    mapping_reads: bool,
    planes_per_die: u32,
    /// The companions each die's running group carries (empty: a single-plane operation).
    companions: Vec<Vec<Transaction>>,
}

impl MultiPlane {
    pub fn new(enabled: bool, mapping_reads: bool, dies: u32, planes_per_die: u32) -> Self {
        let capacity = planes_per_die.saturating_sub(1) as usize;
        MultiPlane {
            // The plane set of a group is a 64-bit mask.
            enabled: enabled && (2..=64).contains(&planes_per_die),
            mapping_reads,
            planes_per_die,
            companions: (0..dies).map(|_| Vec::with_capacity(capacity)).collect(),
        }
    }

    /// Gather companions for `leader`, about to start on its die, out of `device`. Returns the
    /// group as one transaction (the leader carrying every page's bytes); the companions stay
    /// here until [`MultiPlane::finish`].
    #[inline]
    pub fn gather(
        &mut self,
        device: &mut AnyDeviceScheduler,
        leader: Transaction,
        held: &[(u32, u32)],
    ) -> Transaction {
        // Off (the default) costs one test. On, `finish` left this die's list empty.
        let leads = match leader.kind {
            TxnKind::Read
            | TxnKind::Program
            | TxnKind::GcRead
            | TxnKind::GcProgram
            | TxnKind::Erase => true,
            TxnKind::MappingRead => self.mapping_reads,
            TxnKind::Copyback | TxnKind::MappingProgram => false,
        };
        if !self.enabled || !leads {
            return leader;
        }
        let members = &mut self.companions[leader.die as usize];
        let planes = self.planes_per_die;
        let mut fit = CompanionFit::new(leader, self.mapping_reads, planes, held);
        let mut group = leader;
        while (members.len() as u32) + 1 < planes {
            let Some(companion) = device.take_companion(leader.chip, leader.die, &fit) else {
                break;
            };
            fit.joined(&companion);
            group.bytes += companion.bytes;
            // Planes program in parallel: the group ends with its slowest block ([variation]).
            group.program_ns = group.program_ns.max(companion.program_ns);
            members.push(companion);
        }
        group
    }

    /// Whether groups form at all (`device.multiplane` and two or more planes per die).
    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The companions of the group running on `die` (empty for a single-plane operation).
    pub fn companions(&self, die: u32) -> &[Transaction] {
        &self.companions[die as usize]
    }

    /// The group on `die` ended: its companions move into `out` (which must be empty; it
    /// leaves its capacity to the die's list).
    #[inline]
    pub fn finish(&mut self, die: u32, out: &mut Vec<Transaction>) {
        debug_assert!(out.is_empty());
        std::mem::swap(&mut self.companions[die as usize], out);
    }
}
