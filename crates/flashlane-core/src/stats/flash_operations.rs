//! Flash operations started in the measured window, by kind, and the waits of host page
//! operations for their chip and for their path (`FlashCounts`, `ConflictStats`' waits).

use super::requests::{op_index, RequestMarks};
use super::FlashCounts;
use crate::device::{Transaction, TxnKind, NO_LPN, NO_REQUEST};
use crate::trace::Op;

/// Sums for the mean waits of host page operations, by direction.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct WaitSums {
    pub(super) pages: u64,
    pub(super) chip_wait_ns: u64,
    pub(super) path_wait_ns: u64,
}

impl WaitSums {
    /// Mean of `sum_ns` per page, microseconds.
    pub(super) fn mean_us(&self, sum_ns: u64) -> f64 {
        if self.pages == 0 {
            0.0
        } else {
            sum_ns as f64 / self.pages as f64 / 1000.0
        }
    }
}

#[derive(Debug, Clone)]
pub struct FlashOperationRecorder {
    pub(super) flash: FlashCounts,
    pub(super) waits: [WaitSums; 2],
    /// When each die last asked for a path.
    asked_ns: Vec<u64>,
}

impl FlashOperationRecorder {
    pub fn new(dies: usize) -> Self {
        FlashOperationRecorder {
            flash: FlashCounts::default(),
            waits: [WaitSums::default(); 2],
            asked_ns: vec![0; dies],
        }
    }

    /// `txn` starts on its die; `counted`: inside the measured window.
    #[inline]
    pub fn started(&mut self, txn: &Transaction, counted: bool) {
        self.count(txn, u64::from(counted));
    }

    /// Count one page operation (a command's leader or companion) under its kind.
    #[inline]
    fn count(&mut self, txn: &Transaction, counted: u64) {
        let f = &mut self.flash;
        match txn.kind {
            TxnKind::Read => {
                // A read with a logical page and no host request fetches a partial write's
                // other sectors.
                if txn.request != NO_REQUEST || txn.lpn == NO_LPN {
                    f.reads += counted;
                } else {
                    f.read_modify_write_reads += counted;
                }
            }
            TxnKind::Program => f.programs += counted,
            // A page move counts once, when it ends in its program.
            TxnKind::Copyback | TxnKind::GcProgram => f.copybacks += counted,
            TxnKind::GcRead => {}
            TxnKind::Erase => f.erases += counted,
            TxnKind::MappingRead => f.mapping_reads += counted,
            TxnKind::MappingProgram => f.mapping_programs += counted,
        }
    }

    /// A multi-plane command starts (its leader is reported through `started`).
    #[inline]
    pub fn multiplane_started(&mut self, counted: bool) {
        self.flash.multiplane_operations += u64::from(counted);
    }

    /// One of the pages a multi-plane command carries besides its leader starts.
    #[inline]
    pub fn companion_started(&mut self, txn: &Transaction, counted: bool) {
        self.count(txn, u64::from(counted));
    }

    /// A page operation of a host request of `op` started at `now`, queued since `enqueued_ns`.
    #[inline]
    pub fn host_page_started(&mut self, now: u64, marks: &RequestMarks, op: Op, enqueued_ns: u64) {
        if marks.measured {
            let sums = &mut self.waits[op_index(op)];
            sums.pages += 1;
            sums.chip_wait_ns += now - enqueued_ns;
        }
    }

    /// `die` asks for a path at `now`.
    #[inline]
    pub fn path_asked(&mut self, now: u64, die: u32) {
        self.asked_ns[die as usize] = now;
    }

    /// `die`'s transfer for a host page got its path starting at `start_ns`.
    #[inline]
    pub fn host_path_granted(
        &mut self,
        die: u32,
        start_ns: u64,
        conflict_free: bool,
        marks: &mut RequestMarks,
        op: Op,
    ) {
        marks.path_conflict |= !conflict_free;
        if marks.measured {
            self.waits[op_index(op)].path_wait_ns += start_ns - self.asked_ns[die as usize];
        }
    }
}
