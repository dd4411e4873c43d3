//! SSDsim's sub-request service order (the simulator of the PIQ and VIOS papers).
//!
//! SSDsim (`flash.c: process`) visits each idle channel and, reads first, starts the first
//! waiting read sub-request of that channel whose **chip** is idle (`services_2_r_wait`: busy
//! chips are skipped, so service is out of order within a channel); only if no read used the
//! channel does it start a write (`services_2_write`, which under static allocation also takes
//! the first waiting write of an idle chip). Without advanced commands (the shipped
//! `page.parameters` has `advanced command = 0`) the busy unit is the whole chip: a chip runs
//! one operation at a time, on either of its dies.
//!
//! Here: one read queue (host and mapping reads) and one queue for everything else (programs,
//! mapping programs, GC copybacks, erases) per chip, both in arrival order. An idle chip (no die busy) starts the head of its read queue,
//! or if that is empty the head of its other queue. The channel itself (one transfer at a time)
//! is the interconnect's business; skipping busy chips is what per-chip queues give.

use std::collections::VecDeque;

use super::{DeviceContext, DeviceScheduler, Transaction, TxnKind};

pub struct Ssdsim {
    reads: Vec<VecDeque<Transaction>>,
    /// Programs and GC work, in arrival order.
    others: Vec<VecDeque<Transaction>>,
    queued: Vec<u32>,
}

impl Ssdsim {
    pub fn new(chips: u32) -> Self {
        Ssdsim {
            reads: (0..chips).map(|_| VecDeque::with_capacity(64)).collect(),
            others: (0..chips).map(|_| VecDeque::with_capacity(64)).collect(),
            queued: vec![0; chips as usize],
        }
    }
}

impl DeviceScheduler for Ssdsim {
    fn enqueue(&mut self, txn: Transaction, _ctx: &mut DeviceContext<'_>) {
        self.queued[txn.chip as usize] += 1;
        let queues = match txn.kind {
            // A mapping (translation page) read is a flash read like any other.
            TxnKind::Read | TxnKind::MappingRead | TxnKind::GcRead => &mut self.reads,
            TxnKind::Program
            | TxnKind::MappingProgram
            | TxnKind::Copyback
            | TxnKind::Erase
            | TxnKind::GcProgram => &mut self.others,
        };
        queues[txn.chip as usize].push_back(txn);
    }

    fn next(&mut self, chip: u32, ctx: &mut DeviceContext<'_>) -> Option<Transaction> {
        let die_busy = ctx.die_busy;
        // Dies are numbered chip-major (chip * dies_per_chip + die).
        let dies_per_chip = die_busy.len() / self.queued.len();
        let first = chip as usize * dies_per_chip;
        if die_busy[first..first + dies_per_chip].iter().any(|b| *b) {
            return None;
        }
        let c = chip as usize;
        let txn = match self.reads[c].pop_front() {
            Some(txn) => txn,
            // A held program keeps its place at the head of the chip's other work.
            None if self.others[c].front().is_some_and(|t| ctx.is_held(t)) => return None,
            None => self.others[c].pop_front()?,
        };
        self.queued[c] -= 1;
        Some(txn)
    }

    fn queued_per_chip(&self) -> &[u32] {
        &self.queued
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::testing::{enq, nxt, txn};
    use crate::device::NO_REQUEST;

    /// Two chips with two dies each: dies 0,1 belong to chip 0 and dies 2,3 to chip 1.
    #[test]
    fn a_busy_die_makes_its_whole_chip_busy() {
        let mut s = Ssdsim::new(2);
        enq(&mut s, txn(TxnKind::Read, 0, 0, 1));
        enq(&mut s, txn(TxnKind::Read, 0, 1, 2));
        let mut busy = vec![false; 4];
        // Chip 0 idle: the first read goes, onto die 0.
        let first = nxt(&mut s, 0, &busy).unwrap();
        assert_eq!(first.request, 1);
        busy[0] = true;
        // Die 1 is idle but its chip is not: SSDsim's chip state blocks the second read
        // (a per-die scheduler would start it now).
        assert_eq!(nxt(&mut s, 0, &busy), None);
        assert_eq!(s.queued_per_chip(), &[1, 0]);
        // Chip 1 is unaffected by chip 0 being busy.
        enq(&mut s, txn(TxnKind::Program, 1, 3, 3));
        assert_eq!(nxt(&mut s, 1, &busy).unwrap().request, 3);
        // Die 0 finishes: the second read may start.
        busy[0] = false;
        assert_eq!(nxt(&mut s, 0, &busy).unwrap().request, 2);
        assert_eq!(nxt(&mut s, 0, &busy), None);
    }

    /// A program queued before a read on the same chip: the read starts first; the program
    /// and the GC erase queued after it then follow in arrival order.
    #[test]
    fn reads_go_before_earlier_writes_and_gc_on_their_chip() {
        let mut s = Ssdsim::new(1);
        enq(&mut s, txn(TxnKind::Program, 0, 0, 1));
        enq(&mut s, txn(TxnKind::Erase, 0, 1, NO_REQUEST));
        enq(&mut s, txn(TxnKind::Read, 0, 1, 2));
        let idle = vec![false; 2];
        let order: Vec<(TxnKind, u32)> = std::iter::from_fn(|| nxt(&mut s, 0, &idle))
            .map(|t| (t.kind, t.request))
            .collect();
        assert_eq!(
            order,
            vec![
                (TxnKind::Read, 2),
                (TxnKind::Program, 1),
                (TxnKind::Erase, NO_REQUEST)
            ]
        );
        assert_eq!(s.queued_per_chip(), &[0]);
    }
}
