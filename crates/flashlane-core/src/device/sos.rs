//! SOS: software out-of-order scheduling in the FTL. HOS's per-chip FIFO queues, plus
//!
//! - the **queue-size leveller** (QSL): when a chip is idle with an empty queue, the oldest
//!   queued host write of the chip with the longest queue (at least two transactions, counting
//!   the one in service) is remapped to a page of the idle chip and starts there at once;
//! - the **write-hit manager** (WHM): a host write of a logical page whose previous write is
//!   still queued cancels that queued write (it never reaches flash).
//!
//! Readings of the paper are in `docs/models/sos.md`.

use std::collections::VecDeque;

use super::{CompanionFit, DeviceContext, DeviceScheduler, Transaction, TxnKind, NO_LPN};
use serde::{Deserialize, Serialize};

use super::DeviceSchedulerKind;
use crate::geometry::Geometry;
use crate::int_map::IntMap;

/// `kind = "sos"`: SOS: HOS's per-chip queues plus the queue-size leveller (an idle chip with
/// an empty queue takes a queued host write from a longer queue, remapped) and the write-hit
/// manager (a queued host write superseded by a newer one is cancelled). Both switches default
/// to on (SOS as the paper runs it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SosConfig {
    #[serde(default = "switch_on")]
    pub queue_size_leveller: bool,
    #[serde(default = "switch_on")]
    pub write_hit_manager: bool,
}

fn switch_on() -> bool {
    true
}

impl DeviceSchedulerKind for SosConfig {
    type Built = Sos;
    fn build(&self, geometry: &Geometry) -> Sos {
        Sos::new(
            geometry.chips(),
            self.queue_size_leveller,
            self.write_hit_manager,
        )
    }
}

pub struct Sos {
    queues: Vec<VecDeque<Transaction>>,
    queued: Vec<u32>,
    /// Chips whose queue is empty (QSL skips its search for an idle, empty chip when 0).
    empty_queues: u32,
    /// Host programs waiting in each chip's queue (QSL's movable candidates).
    waiting_writes: Vec<u32>,
    queue_size_leveller: bool,
    write_hit_manager: bool,
    /// WHM's completion flags: a logical page present here has a host program still queued
    /// (flag 0 in the paper), at this (chip, physical page). Absent = written or in flight.
    pending: IntMap<u32, (u32, u32)>,
}

impl Sos {
    pub fn new(chips: u32, queue_size_leveller: bool, write_hit_manager: bool) -> Self {
        Sos {
            queues: (0..chips).map(|_| VecDeque::with_capacity(64)).collect(),
            queued: vec![0; chips as usize],
            empty_queues: chips,
            waiting_writes: vec![0; chips as usize],
            queue_size_leveller,
            write_hit_manager,
            pending: IntMap::default(),
        }
    }

    fn dies_per_chip(&self, die_busy: &[bool]) -> usize {
        die_busy.len() / self.queues.len()
    }

    fn busy_dies(&self, chip: usize, die_busy: &[bool]) -> u32 {
        let dies = self.dies_per_chip(die_busy);
        die_busy[chip * dies..(chip + 1) * dies]
            .iter()
            .map(|b| u32::from(*b))
            .sum()
    }

    /// First idle die of `chip` if its queue is empty, else `None`.
    fn idle_empty_die(&self, chip: usize, die_busy: &[bool]) -> Option<u32> {
        if self.queued[chip] != 0 {
            return None;
        }
        let dies = self.dies_per_chip(die_busy);
        (chip * dies..(chip + 1) * dies)
            .find(|d| !die_busy[*d])
            .map(|d| d as u32)
    }

    /// May `chip` give a write away? Its queue holds at least two transactions counting those
    /// in service, and at least one waiting host program.
    fn is_donor(&self, chip: usize, die_busy: &[bool]) -> bool {
        self.waiting_writes[chip] > 0 && self.queued[chip] + self.busy_dies(chip, die_busy) > 1
    }

    /// One transaction left `chip`'s queue.
    #[inline]
    fn dequeued(&mut self, chip: usize) {
        self.queued[chip] -= 1;
        self.empty_queues += u32::from(self.queued[chip] == 0);
    }

    /// Take `txn` (a waiting program) out of `chip`'s queue at `index`.
    fn remove_at(&mut self, chip: usize, index: usize) -> Transaction {
        let txn = self.queues[chip].remove(index).expect("index inside queue");
        self.dequeued(chip);
        self.waiting_writes[chip] -= 1;
        txn
    }

    /// QSL: move the oldest movable write of donor `from` to idle die `die` of `to`.
    fn move_write(
        &mut self,
        from: usize,
        to: u32,
        die: u32,
        ctx: &mut DeviceContext<'_>,
    ) -> Option<Transaction> {
        let queue = &self.queues[from];
        for index in 0..queue.len() {
            let txn = queue[index];
            if txn.kind != TxnKind::Program || txn.lpn == NO_LPN {
                continue;
            }
            // A read queued behind it on this chip expects the data at the old page.
            if queue
                .iter()
                .skip(index + 1)
                .any(|t| t.kind == TxnKind::Read && t.ppn == txn.ppn)
            {
                continue;
            }
            let Some(target) = ctx.ftl.relocate_queued_write(txn.lpn, txn.ppn, to, die) else {
                continue;
            };
            let mut moved = self.remove_at(from, index);
            moved.chip = target.chip;
            moved.die = target.die;
            moved.plane = target.plane;
            moved.page_in_block = ctx.ftl.page_in_block(target.ppn);
            // With per-block variation the new page's block sets the program time.
            if let Some(ns) = ctx.ftl.program_ns(target.ppn) {
                moved.program_ns = ns;
            }
            moved.ppn = target.ppn;
            // It starts at once, so WHM no longer sees it as queued.
            if self.write_hit_manager {
                self.pending.remove(&moved.lpn);
            }
            return Some(moved);
        }
        None
    }

    /// Donor with the longest queue (ties: lowest chip index).
    fn longest_donor(&self, die_busy: &[bool]) -> Option<usize> {
        let mut best: Option<(usize, u32)> = None;
        for chip in 0..self.queues.len() {
            if self.is_donor(chip, die_busy) {
                let size = self.queued[chip];
                if best.is_none_or(|(_, s)| size > s) {
                    best = Some((chip, size));
                }
            }
        }
        best.map(|(chip, _)| chip)
    }
}

impl DeviceScheduler for Sos {
    fn enqueue(&mut self, txn: Transaction, ctx: &mut DeviceContext<'_>) {
        let chip = txn.chip as usize;
        let host_write = txn.kind == TxnKind::Program && txn.lpn != NO_LPN;
        if host_write && self.write_hit_manager {
            if let Some((old_chip, old_ppn)) = self.pending.insert(txn.lpn, (txn.chip, txn.ppn)) {
                // The queued write holds data this one supersedes: cancel it.
                let old = old_chip as usize;
                if let Some(index) = self.queues[old]
                    .iter()
                    .position(|t| t.kind == TxnKind::Program && t.ppn == old_ppn)
                {
                    let cancelled = self.remove_at(old, index);
                    ctx.cancelled.push(cancelled);
                }
            }
        }
        if host_write {
            self.waiting_writes[chip] += 1;
        }
        self.empty_queues -= u32::from(self.queued[chip] == 0);
        self.queued[chip] += 1;
        self.queues[chip].push_back(txn);
    }

    fn next(&mut self, chip: u32, ctx: &mut DeviceContext<'_>) -> Option<Transaction> {
        let c = chip as usize;
        if let Some(head) = self.queues[c].front() {
            if !ctx.die_busy[head.die as usize] {
                let txn = self.queues[c].pop_front()?;
                self.dequeued(c);
                if txn.kind == TxnKind::Program && txn.lpn != NO_LPN {
                    self.waiting_writes[c] -= 1;
                    if self.write_hit_manager
                        && self.pending.get(&txn.lpn).is_some_and(|p| p.1 == txn.ppn)
                    {
                        self.pending.remove(&txn.lpn);
                    }
                }
                return Some(txn);
            }
        }
        if !self.queue_size_leveller {
            return None;
        }
        if let Some(die) = self.idle_empty_die(c, ctx.die_busy) {
            // This chip is idle with nothing queued: take a write from the longest queue.
            let from = self.longest_donor(ctx.die_busy)?;
            return self.move_write(from, chip, die, ctx);
        }
        if self.empty_queues > 0 && self.is_donor(c, ctx.die_busy) {
            // This chip's queue grew while another chip sits idle and empty.
            for other in 0..self.queues.len() as u32 {
                if let Some(die) = self.idle_empty_die(other as usize, ctx.die_busy) {
                    return self.move_write(c, other, die, ctx);
                }
            }
        }
        None
    }

    fn queued_per_chip(&self) -> &[u32] {
        &self.queued
    }

    fn take_companion(
        &mut self,
        chip: u32,
        _die: u32,
        fits: &CompanionFit<'_>,
    ) -> Option<Transaction> {
        let c = chip as usize;
        let at = self.queues[c].iter().position(|t| fits.accepts(t))?;
        let txn = self.queues[c].remove(at)?;
        self.dequeued(c);
        if txn.kind == TxnKind::Program && txn.lpn != NO_LPN {
            self.waiting_writes[c] -= 1;
            if self.write_hit_manager && self.pending.get(&txn.lpn).is_some_and(|p| p.1 == txn.ppn)
            {
                self.pending.remove(&txn.lpn);
            }
        }
        Some(txn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{AnyDeviceScheduler, OutOfOrder, NO_REQUEST};
    use crate::ftl::{Ftl, FtlConfig};
    use crate::geometry::{Geometry, Level, StaticMap};

    const READ_NS: u64 = 400;
    const PROGRAM_NS: u64 = 1000;
    const ERASE_NS: u64 = 3000;

    /// `chips` chips of one die and one plane each; logical page n lives on chip n % chips.
    fn ftl(chips: u32) -> Ftl {
        let g = Geometry {
            channels: chips,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 16,
            pages_per_block: 8,
            page_bytes: 4096,
        };
        let order = [Level::Channel, Level::Chip, Level::Die, Level::Plane];
        let config = FtlConfig::plain(0.25, 0.125);
        Ftl::new(&g, &config, StaticMap::new(&g, order), true)
    }

    fn txn(kind: TxnKind, request: u32, chip: u32, lpn: u32, ppn: u32) -> Transaction {
        Transaction {
            kind,
            request,
            chip,
            die: chip,
            plane: chip,
            page_in_block: ppn % 8,
            bytes: 4096,
            program_ns: PROGRAM_NS as u32,
            enqueued_ns: 0,
            lpn,
            ppn,
            from_chip: chip,
        }
    }

    fn host_write(ftl: &mut Ftl, request: u32, lpn: u32) -> Transaction {
        let target = ftl.write(u64::from(lpn), &[0; 4], &mut Vec::new()).unwrap();
        txn(TxnKind::Program, request, target.chip, lpn, target.ppn)
    }

    /// A started transaction: what ran, where, when.
    #[derive(Debug)]
    struct Run {
        txn: Transaction,
        end_ns: u64,
    }

    /// Minimal device: each chip one die, fixed operation times, no bus. Enqueues `batches`
    /// (each at its time), offering every touched chip after a batch, and every chip that
    /// finishes an operation, to the scheduler, as the simulation does.
    fn replay(
        scheduler: &mut AnyDeviceScheduler,
        ftl: &mut Ftl,
        chips: u32,
        batch: Vec<Transaction>,
        cancelled: &mut Vec<Transaction>,
    ) -> Vec<Run> {
        let mut die_busy = vec![false; chips as usize];
        let mut busy_until = vec![u64::MAX; chips as usize];
        let mut runs = Vec::new();
        let mut now = 0;
        let issue = |chip: u32,
                     now: u64,
                     scheduler: &mut AnyDeviceScheduler,
                     ftl: &mut Ftl,
                     die_busy: &mut Vec<bool>,
                     busy_until: &mut Vec<u64>,
                     runs: &mut Vec<Run>,
                     cancelled: &mut Vec<Transaction>| {
            loop {
                let mut ctx = DeviceContext {
                    now_ns: now,
                    die_busy,
                    held: &[],
                    ftl,
                    cancelled,
                };
                let Some(t) = scheduler.next(chip, &mut ctx) else {
                    break;
                };
                assert!(!die_busy[t.die as usize], "started on a busy die");
                let duration = match t.kind {
                    TxnKind::Read | TxnKind::MappingRead | TxnKind::GcRead => READ_NS,
                    TxnKind::Program
                    | TxnKind::Copyback
                    | TxnKind::MappingProgram
                    | TxnKind::GcProgram => PROGRAM_NS,
                    TxnKind::Erase => ERASE_NS,
                };
                die_busy[t.die as usize] = true;
                busy_until[t.chip as usize] = now + duration;
                runs.push(Run {
                    txn: t,
                    end_ns: now + duration,
                });
            }
        };
        let touched: Vec<u32> = batch.iter().map(|t| t.chip).collect();
        for t in batch {
            let mut ctx = DeviceContext {
                now_ns: now,
                die_busy: &die_busy,
                held: &[],
                ftl,
                cancelled,
            };
            scheduler.enqueue(t, &mut ctx);
        }
        for chip in touched {
            issue(
                chip,
                now,
                scheduler,
                ftl,
                &mut die_busy,
                &mut busy_until,
                &mut runs,
                cancelled,
            );
        }
        while let Some((chip, at)) = busy_until
            .iter()
            .enumerate()
            .filter(|(_, t)| **t != u64::MAX)
            .min_by_key(|(c, t)| (**t, *c))
            .map(|(c, t)| (c as u32, *t))
        {
            now = at;
            die_busy[chip as usize] = false;
            busy_until[chip as usize] = u64::MAX;
            issue(
                chip,
                now,
                scheduler,
                ftl,
                &mut die_busy,
                &mut busy_until,
                &mut runs,
                cancelled,
            );
        }
        assert!(
            scheduler.queued_per_chip().iter().all(|q| *q == 0),
            "transactions left queued"
        );
        runs
    }

    fn sos(qsl: bool, whm: bool, chips: u32) -> AnyDeviceScheduler {
        AnyDeviceScheduler::Sos(Sos::new(chips, qsl, whm))
    }

    fn completion(runs: &[Run], request: u32) -> u64 {
        runs.iter()
            .filter(|r| r.txn.request == request)
            .map(|r| r.end_ns)
            .max()
            .unwrap()
    }

    /// The paper's Fig. 4 (our timeline; see docs/models/sos.md): Chip0 is busy with a GC
    /// erase when a five-page write arrives; pages W0..W4 go round-robin to Chip0..Chip3, so
    /// W0 and W4 queue on Chip0. QSL moves W0 to Chip1 and W4 to Chip2 as those become idle
    /// with empty queues; the write completes at two program times instead of erase + two.
    #[test]
    fn fig4_qsl_moves_two_writes_off_the_skewed_chip() {
        let run = |scheduler: &mut AnyDeviceScheduler| {
            let mut ftl = ftl(4);
            // The erase the skewed chip is running (block 15, untouched by these writes).
            let erase = txn(TxnKind::Erase, NO_REQUEST, 0, NO_LPN, 15 * 8);
            let mut batch = vec![erase];
            for lpn in 0..5 {
                batch.push(host_write(&mut ftl, 1, lpn));
            }
            assert_eq!(
                batch.iter().map(|t| t.chip).collect::<Vec<_>>(),
                [0, 0, 1, 2, 3, 0]
            );
            let mut cancelled = Vec::new();
            let runs = replay(scheduler, &mut ftl, 4, batch, &mut cancelled);
            assert!(cancelled.is_empty());
            (runs, ftl)
        };
        let (hos_runs, _) = run(&mut AnyDeviceScheduler::OutOfOrder(OutOfOrder::new(4)));
        assert_eq!(completion(&hos_runs, 1), ERASE_NS + 2 * PROGRAM_NS);

        let (runs, mut ftl) = run(&mut sos(true, false, 4));
        let moved: Vec<(u32, u32, u32)> = runs
            .iter()
            .filter(|r| r.txn.from_chip != r.txn.chip)
            .map(|r| (r.txn.lpn, r.txn.from_chip, r.txn.chip))
            .collect();
        assert_eq!(moved, [(0, 0, 1), (4, 0, 2)], "W0 -> Chip1, W4 -> Chip2");
        assert_eq!(completion(&runs, 1), 2 * PROGRAM_NS);
        // The mapping follows the moves.
        assert_eq!(ftl.read(0).unwrap().chip, 1);
        assert_eq!(ftl.read(4).unwrap().chip, 2);
        assert_eq!(ftl.integrity_violations(), Some(0));
    }

    /// The paper's Fig. 5: Q0 = R(20) E(10) W(100), Q1 = E(200), Q2 = R(300); a new write of
    /// logical page 101 (queued at physical page 100) cancels W(100) and goes to Q2 as W(301).
    #[test]
    fn fig5_whm_cancels_the_superseded_queued_write() {
        let mut scheduler = sos(false, true, 3);
        let mut ftl = ftl(3);
        let mut cancelled = Vec::new();
        let die_busy = [true, true, true];
        let queued = [
            txn(TxnKind::Read, 7, 0, 40, 20),
            txn(TxnKind::Erase, NO_REQUEST, 0, NO_LPN, 10),
            txn(TxnKind::Program, 8, 0, 101, 100),
            txn(TxnKind::Erase, NO_REQUEST, 1, NO_LPN, 200),
            txn(TxnKind::Read, 9, 2, 41, 300),
            txn(TxnKind::Program, 10, 2, 101, 301),
        ];
        for t in queued {
            let mut ctx = DeviceContext {
                now_ns: 0,
                die_busy: &die_busy,
                held: &[],
                ftl: &mut ftl,
                cancelled: &mut cancelled,
            };
            scheduler.enqueue(t, &mut ctx);
        }
        assert_eq!(
            cancelled,
            [queued[2]],
            "W(100) is cancelled with its request"
        );
        assert_eq!(scheduler.queued_per_chip(), [2, 1, 2]);
        let AnyDeviceScheduler::Sos(s) = &scheduler else {
            unreachable!()
        };
        let q0: Vec<u32> = s.queues[0].iter().map(|t| t.ppn).collect();
        let q2: Vec<u32> = s.queues[2].iter().map(|t| t.ppn).collect();
        assert_eq!(q0, [20, 10]);
        assert_eq!(q2, [300, 301]);
        // Without WHM nothing is cancelled.
        let mut plain = sos(false, false, 3);
        let mut cancelled = Vec::new();
        for t in queued {
            let mut ctx = DeviceContext {
                now_ns: 0,
                die_busy: &die_busy,
                held: &[],
                ftl: &mut ftl,
                cancelled: &mut cancelled,
            };
            plain.enqueue(t, &mut ctx);
        }
        assert!(cancelled.is_empty());
        assert_eq!(plain.queued_per_chip(), [3, 1, 2]);
    }

    /// Only host programs move: a long queue of reads and erases stays where it is while
    /// other chips idle, and a write with a read of its page queued behind it stays too.
    #[test]
    fn qsl_never_moves_a_read_an_erase_or_a_write_a_queued_read_depends_on() {
        let mut ftl = ftl(4);
        let written = host_write(&mut ftl, 1, 0);
        assert_eq!(written.chip, 0);
        let read_same_page = txn(TxnKind::Read, 2, 0, 0, written.ppn);
        let batch = vec![
            txn(TxnKind::Read, 3, 0, 8, 8 * 4),
            txn(TxnKind::Erase, NO_REQUEST, 0, NO_LPN, 15 * 8),
            txn(TxnKind::Read, 4, 0, 12, 12 * 4),
            written,
            read_same_page,
            txn(TxnKind::Erase, NO_REQUEST, 0, NO_LPN, 14 * 8),
        ];
        let mut cancelled = Vec::new();
        let runs = replay(&mut sos(true, true, 4), &mut ftl, 4, batch, &mut cancelled);
        assert_eq!(runs.len(), 6);
        assert!(runs.iter().all(|r| r.txn.chip == 0 && r.txn.from_chip == 0));

        // The same write with no dependent read moves.
        let mut ftl2 = self::ftl(4);
        let written = host_write(&mut ftl2, 1, 0);
        let batch = vec![
            txn(TxnKind::Read, 3, 0, 8, 8 * 4),
            txn(TxnKind::Erase, NO_REQUEST, 0, NO_LPN, 15 * 8),
            written,
        ];
        let runs = replay(&mut sos(true, true, 4), &mut ftl2, 4, batch, &mut cancelled);
        let moved: Vec<TxnKind> = runs
            .iter()
            .filter(|r| r.txn.chip != r.txn.from_chip)
            .map(|r| r.txn.kind)
            .collect();
        assert_eq!(moved, [TxnKind::Program]);
    }

    /// The integrity check sees a broken move: a relocation that records the wrong data at
    /// the new page is flagged on the next read.
    #[test]
    fn integrity_check_catches_a_bad_relocation() {
        let mut ftl = ftl(4);
        let w = host_write(&mut ftl, 1, 0);
        let moved = ftl.relocate_queued_write(0, w.ppn, 1, 1).unwrap();
        assert_eq!(moved.chip, 1);
        ftl.read(0).unwrap();
        assert_eq!(ftl.integrity_violations(), Some(0));
        // A stale reservation is never moved.
        assert!(ftl.relocate_queued_write(0, w.ppn, 2, 2).is_none());
        ftl.break_relocation_for_test();
        let w = host_write(&mut ftl, 1, 4);
        ftl.relocate_queued_write(4, w.ppn, 3, 3).unwrap();
        ftl.read(4).unwrap();
        assert_eq!(ftl.integrity_violations(), Some(1));
    }
}
