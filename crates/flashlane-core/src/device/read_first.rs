//! MQSim's transaction order (`TSU_OutOfOrder`, GC not preemptible): per chip, mapping reads
//! first, then garbage collection (its reads, its programs, its erases), then host reads, then
//! writes.
//!
//! MQSim keeps separate queues per chip for each source (user, GC, mapping) and kind (read,
//! write, erase). `TSU_Base::process_chip_requests` tries `service_read_transaction`, then
//! `service_write_transaction`, then `service_erase_transaction`. With preemptible GC off
//! (`GC_is_in_urgent_mode` is then always true, MQSim's shipped setting) the reads step serves
//! mapping reads, else GC reads, else — unless GC writes or erases are queued — user reads; the
//! writes step serves GC writes, else — unless a GC erase is queued — user writes
//! (docs/models/ssd-model.md, "Read-first device scheduler", has the exact rule). So on a chip:
//! mapping reads > any queued GC work > host reads > writes.
//!
//! Here, per die, six FIFO queues: mapping reads; GC reads (`ftl.gc_page_move =
//! "read_and_program"`); GC programs and copybacks (a copyback is MQSim's GC read and GC write
//! in one, which MQSim queues with its GC writes); erases (a victim's erase cannot overtake its
//! page moves: they are GC reads and programs, served first); host page reads; writes (host
//! programs, buffer flushes, mapping programs — MQSim never serves its mapping-write queue at
//! all, see docs/validation.md). `next(chip)` takes the
//! highest class that has a transaction on an idle die of the chip; inside a class the oldest
//! head over the chip's idle dies goes first. Per-die queues keep the order of one die's work
//! and let an idle die go while another die of the chip is busy (MQSim's chip-wide issue rule
//! is `device.die_issue`, orthogonal to this order). A held program (waiting for its update
//! read) keeps its place: as in MQSim, it lets only later work of its own die pass.

use std::collections::VecDeque;

use super::{CompanionFit, DeviceContext, DeviceScheduler, Transaction, TxnKind};
use serde::{Deserialize, Serialize};

use super::DeviceSchedulerKind;
use crate::geometry::Geometry;

/// `kind = "read_first"`: MQSim's `TSU_OutOfOrder` order (GC not preemptible): per
/// die, mapping reads, then GC reads, GC programs and copybacks, erases, then host reads, then
/// writes; an idle die of the chip takes the head of the highest non-empty class, the oldest
/// head first inside a class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFirstConfig {}

impl DeviceSchedulerKind for ReadFirstConfig {
    type Built = ReadFirst;
    fn build(&self, geometry: &Geometry) -> ReadFirst {
        ReadFirst::new(geometry.chips())
    }
}

/// Queue classes in service order.
const CLASSES: usize = 6;

fn class_of(kind: TxnKind) -> usize {
    match kind {
        TxnKind::MappingRead => 0,
        TxnKind::GcRead => 1,
        TxnKind::GcProgram | TxnKind::Copyback => 2,
        TxnKind::Erase => 3,
        TxnKind::Read => 4,
        TxnKind::Program | TxnKind::MappingProgram => 5,
    }
}

pub struct ReadFirst {
    chips: usize,
    /// Learned from the first `next` (the die-busy slice covers every die, chip-major).
    dies_per_chip: usize,
    /// `queues[die][class]`: (arrival sequence, transaction), oldest first.
    queues: Vec<[VecDeque<(u64, Transaction)>; CLASSES]>,
    /// Bit `class` of `nonempty[die]` is set while `queues[die][class]` holds a transaction:
    /// `next` finds the highest class with work from these bits instead of every queue.
    nonempty: Vec<u8>,
    queued: Vec<u32>,
    sequence: u64,
}

impl ReadFirst {
    pub fn new(chips: u32) -> Self {
        ReadFirst {
            chips: chips as usize,
            dies_per_chip: 0,
            queues: Vec::new(),
            nonempty: Vec::new(),
            queued: vec![0; chips as usize],
            sequence: 0,
        }
    }

    fn chip_dies(&self, chip: u32) -> std::ops::Range<usize> {
        let first = chip as usize * self.dies_per_chip;
        first..(first + self.dies_per_chip).min(self.queues.len())
    }

    /// The classes with work on `die` if it may start an operation (bit `class`), else 0.
    #[inline]
    fn idle_work(&self, die: usize, die_busy: &[bool]) -> u8 {
        if die_busy[die] {
            0
        } else {
            self.nonempty[die]
        }
    }

    /// Remove the transaction at `at` of `die`'s queue of `class`, of `chip`.
    fn take(&mut self, chip: u32, die: usize, class: usize, at: usize) -> Option<Transaction> {
        let queue = &mut self.queues[die][class];
        // Nearly always the head: `pop_front` is a few instructions, `remove(0)` a general
        // shift (about a hundred on `mqsim-platform`).
        let (_, txn) = if at == 0 {
            queue.pop_front()?
        } else {
            queue.remove(at)?
        };
        if queue.is_empty() {
            self.nonempty[die] &= !(1 << class);
        }
        self.queued[chip as usize] -= 1;
        Some(txn)
    }
}

impl DeviceScheduler for ReadFirst {
    fn enqueue(&mut self, txn: Transaction, _ctx: &mut DeviceContext<'_>) {
        let die = txn.die as usize;
        if die >= self.queues.len() {
            self.queues.resize_with(die + 1, Default::default);
            self.nonempty.resize(die + 1, 0);
        }
        let class = class_of(txn.kind);
        self.queues[die][class].push_back((self.sequence, txn));
        self.nonempty[die] |= 1 << class;
        self.sequence += 1;
        self.queued[txn.chip as usize] += 1;
    }

    fn next(&mut self, chip: u32, ctx: &mut DeviceContext<'_>) -> Option<Transaction> {
        if self.queued[chip as usize] == 0 {
            return None;
        }
        if self.dies_per_chip == 0 {
            // Once: a run's dies do not change (not a division a call).
            self.dies_per_chip = ctx.die_busy.len() / self.chips;
        }
        let dies = self.chip_dies(chip);
        // The highest class with work on an idle die of the chip.
        let idle_work = |die: usize| self.idle_work(die, ctx.die_busy);
        let class = dies
            .clone()
            .map(|die| idle_work(die).trailing_zeros() as usize)
            .min()
            .filter(|&class| class < CLASSES)?;
        // Its oldest head over those dies.
        let mut best: Option<(u64, usize)> = None;
        for die in dies {
            if idle_work(die) & (1 << class) == 0 {
                continue;
            }
            if let Some(&(seq, _)) = self.queues[die][class].front() {
                if best.is_none_or(|(oldest, _)| seq < oldest) {
                    best = Some((seq, die));
                }
            }
        }
        let (_, die) = best?;
        let queue = &self.queues[die][class];
        // MQSim's issue rule (`TSU_Base::issue_command_to_chip`): the oldest head names the die;
        // when it is a held program (`transaction_is_ready` false) the die's first ready
        // transaction of the class goes instead, and nothing else of the chip.
        let at = if ctx.is_held(&queue[0].1) {
            queue.iter().position(|(_, t)| !ctx.is_held(t))?
        } else {
            0
        };
        self.take(chip, die, class, at)
    }

    // Most asks find every die of the chip busy or without work: answered here from the bits,
    // without the call to `next`.
    fn may_issue(&self, chip: u32, die_busy: &[bool]) -> bool {
        if self.queued[chip as usize] == 0 {
            return false;
        }
        // Before the first `next` the dies per chip are not known yet: let it decide.
        self.dies_per_chip == 0
            || self
                .chip_dies(chip)
                .any(|die| self.idle_work(die, die_busy) != 0)
    }

    fn queued_per_chip(&self) -> &[u32] {
        &self.queued
    }

    // MQSim fills a multi-plane command from the leader's queue first, then the next one
    // (`TSU_Base::issue_command_to_chip`): here the classes in service order.
    fn take_companion(
        &mut self,
        chip: u32,
        die: u32,
        fits: &CompanionFit<'_>,
    ) -> Option<Transaction> {
        // Only `die`'s queues can hold a companion (the trait's contract).
        let die = die as usize;
        for class in 0..CLASSES {
            if self.nonempty.get(die).is_none_or(|bits| bits & (1 << class) == 0) {
                continue;
            }
            if let Some(at) = self.queues[die][class].iter().position(|(_, t)| fits.accepts(t)) {
                return self.take(chip, die, class, at);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::testing::{enq, nxt, nxt_held, txn};
    use crate::device::NO_REQUEST;

    /// A write queued first on a busy die, then a read: when the die frees, the read goes.
    #[test]
    fn a_read_queued_after_a_write_starts_first() {
        let mut s = ReadFirst::new(1);
        enq(&mut s, txn(TxnKind::Program, 0, 0, 1));
        enq(&mut s, txn(TxnKind::Program, 0, 0, 2));
        enq(&mut s, txn(TxnKind::Read, 0, 0, 3));
        assert_eq!(nxt(&mut s, 0, &[true]), None);
        assert_eq!(s.queued_per_chip(), &[3]);
        let order: Vec<u32> = std::iter::from_fn(|| nxt(&mut s, 0, &[false]))
            .map(|t| t.request)
            .collect();
        assert_eq!(order, vec![3, 1, 2]);
        assert_eq!(s.queued_per_chip(), &[0]);
    }

    /// Service order on one die: mapping reads, GC reads, GC programs and copybacks (in their
    /// own order), erases, host reads, writes.
    #[test]
    fn classes_go_in_mqsim_order() {
        let mut s = ReadFirst::new(1);
        enq(&mut s, txn(TxnKind::Program, 0, 0, 1));
        enq(&mut s, txn(TxnKind::Read, 0, 0, 2));
        enq(&mut s, txn(TxnKind::Erase, 0, 0, NO_REQUEST));
        enq(&mut s, txn(TxnKind::GcProgram, 0, 0, 0));
        enq(&mut s, txn(TxnKind::Copyback, 0, 0, NO_REQUEST));
        enq(&mut s, txn(TxnKind::GcRead, 0, 0, 0));
        enq(&mut s, txn(TxnKind::MappingProgram, 0, 0, 7));
        enq(&mut s, txn(TxnKind::MappingRead, 0, 0, 8));
        let order: Vec<TxnKind> = std::iter::from_fn(|| nxt(&mut s, 0, &[false]))
            .map(|t| t.kind)
            .collect();
        assert_eq!(
            order,
            vec![
                TxnKind::MappingRead,
                TxnKind::GcRead,
                TxnKind::GcProgram,
                TxnKind::Copyback,
                TxnKind::Erase,
                TxnKind::Read,
                TxnKind::Program,
                TxnKind::MappingProgram
            ]
        );
    }

    /// Two dies on one chip: a busy die does not hold back the other die's work, and inside
    /// a class the oldest head of the idle dies goes first.
    #[test]
    fn an_idle_die_goes_while_its_sibling_is_busy() {
        let mut s = ReadFirst::new(2);
        enq(&mut s, txn(TxnKind::Read, 0, 0, 1));
        enq(&mut s, txn(TxnKind::Read, 0, 1, 2));
        enq(&mut s, txn(TxnKind::Read, 0, 0, 3));
        // Chip 1 (dies 2, 3) has its own queues.
        enq(&mut s, txn(TxnKind::Program, 1, 3, 4));
        assert_eq!(
            nxt(&mut s, 0, &[true, false, false, false])
                .unwrap()
                .request,
            2
        );
        assert_eq!(nxt(&mut s, 0, &[true, true, false, false]), None);
        assert_eq!(
            nxt(&mut s, 0, &[false, true, false, false])
                .unwrap()
                .request,
            1
        );
        assert_eq!(nxt(&mut s, 1, &[false; 4]).unwrap().request, 4);
        assert_eq!(nxt(&mut s, 0, &[false; 4]).unwrap().request, 3);
        assert_eq!(s.queued_per_chip(), &[0, 0]);
    }

    /// MQSim's rule for a held head: the oldest write names the die; while it waits for its
    /// update read, the next ready write of that die goes, and a write of the other die
    /// (younger than the held one) waits although its die is idle.
    #[test]
    fn a_held_program_lets_only_its_own_die_pass() {
        let mut s = ReadFirst::new(1);
        let mut held = txn(TxnKind::Program, 0, 0, 1);
        held.lpn = 10;
        let mut other_die = txn(TxnKind::Program, 0, 1, 2);
        other_die.lpn = 11;
        let mut same_die = txn(TxnKind::Program, 0, 0, 3);
        same_die.lpn = 12;
        enq(&mut s, held);
        enq(&mut s, other_die);
        enq(&mut s, same_die);
        let waiting = [(1, 10)];
        let busy = [false, false];
        assert_eq!(nxt_held(&mut s, 0, &busy, &waiting).unwrap().request, 3);
        // Only the held program is left on die 0: nothing goes, not even die 1's write.
        assert_eq!(nxt_held(&mut s, 0, &busy, &waiting), None);
        // Released: it goes first (it kept its place), then die 1's.
        assert_eq!(nxt_held(&mut s, 0, &busy, &[]).unwrap().request, 1);
        assert_eq!(nxt_held(&mut s, 0, &busy, &[]).unwrap().request, 2);
        assert_eq!(s.queued_per_chip(), &[0]);
    }

    /// `may_issue` says no only when `next` finds nothing: random work on 2 chips of 3 dies,
    /// random busy dies (and it says yes where work can start, or it would spare no call).
    #[test]
    fn may_issue_is_false_only_when_next_finds_nothing() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(43);
        let kinds = [TxnKind::Read, TxnKind::Program, TxnKind::MappingRead, TxnKind::GcRead];
        let mut s = ReadFirst::new(2);
        let (mut refused, mut started) = (0, 0);
        for request in 0..5_000u32 {
            if rng.random_bool(0.5) {
                let die = rng.random_range(0..6);
                let kind = kinds[rng.random_range(0..kinds.len())];
                enq(&mut s, txn(kind, die / 3, die, request));
                continue;
            }
            let busy: Vec<bool> = (0..6).map(|_| rng.random_bool(0.5)).collect();
            let chip = rng.random_range(0..2);
            let known = s.dies_per_chip > 0;
            let may = s.may_issue(chip, &busy);
            let got = nxt(&mut s, chip, &busy);
            assert!(may || got.is_none(), "request {request}: may_issue false, next {got:?}");
            if known {
                assert_eq!(may, got.is_some(), "request {request}");
            }
            refused += usize::from(!may);
            started += usize::from(got.is_some());
        }
        assert!(refused > 200 && started > 200, "{refused} refused, {started} started");
    }

    /// Companions come from any class in service order, and leave the queue counted.
    #[test]
    fn companions_are_taken_once() {
        let mut s = ReadFirst::new(1);
        let mut a = txn(TxnKind::Read, 0, 0, 1);
        a.plane = 1;
        enq(&mut s, txn(TxnKind::Read, 0, 0, 0));
        enq(&mut s, a);
        let lead = nxt(&mut s, 0, &[false]).unwrap();
        assert_eq!(lead.request, 0);
        let fit = CompanionFit::new(lead, false, 2, &[]);
        let got = s.take_companion(0, 0, &fit);
        assert_eq!(got.map(|t| t.request), Some(1));
        assert_eq!(s.take_companion(0, 0, &fit), None);
        assert_eq!(s.queued_per_chip(), &[0]);
    }
}
