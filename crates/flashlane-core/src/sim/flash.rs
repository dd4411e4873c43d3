//! Flash operations on the dies: the device scheduler picks the next one per chip, each
//! transfer asks the interconnect for its path, and array times run to the operation's end.

use super::{Event, Simulation, Stage};
use crate::device::{DeviceScheduler, Transaction, TxnKind};
use crate::device::{DieIssue, MultiPlane};
use crate::interconnect::{Acquire, Grant, Interconnect, Transfer};
use crate::Error;

/// The flash stage's state: each die's current operation and the paths granted.
pub(super) struct Dies {
    /// Which dies may start an operation (`device.die_issue`).
    pub(super) die_issue: DieIssue,
    pub(super) die_txn: Vec<Transaction>,
    pub(super) die_stage: Vec<Stage>,
    /// Scratch list of the paths the interconnect granted (kept for its capacity).
    pub(super) grants: Vec<Grant>,
    /// Dies with a started, unfinished transaction (the device is idle at 0).
    pub(super) dies_working: u32,
    /// Under `host.handover_needs_idle_channels`: each die's last granted transfer (start,
    /// end), to tell whether a path carries a transfer begun before an instant.
    pub(super) transfer_spans: Vec<(u64, u64)>,
    /// Multi-plane grouping (`device.multiplane`) and the companions of each die's group.
    pub(super) multiplane: MultiPlane,
    /// Scratch list for the companions of the group that just finished (kept for its
    /// capacity).
    pub(super) finished_companions: Vec<Transaction>,
}

impl Simulation {
    /// Start every transaction the device scheduler lets go on `chip`. Inlined, as its
    /// check: most calls find nothing to start (the queue is empty or its head's die busy)
    /// and cost that check, not a call.
    #[inline]
    pub(super) fn try_issue(&mut self, now: u64, chip: u32) {
        if self.device.may_issue(chip, self.dies.die_issue.blocked()) {
            self.issue(now, chip);
        }
    }

    fn issue(&mut self, now: u64, chip: u32) {
        while let Some(txn) = self.device.next(chip, &mut device_ctx!(self, now)) {
            self.queue_changed(now, txn.from_chip);
            if txn.from_chip != txn.chip {
                self.recorder.write_moved(now);
            }
            if self.dies.multiplane.enabled() {
                let group = self.dies.multiplane.gather(
                    &mut self.device,
                    txn,
                    &self.platform.held_programs,
                );
                self.queue_changed(now, txn.chip);
                self.start_companions(now, txn.die);
                self.start(now, group);
            } else {
                self.start(now, txn);
            }
            if !self.device.may_issue(chip, self.dies.die_issue.blocked()) {
                break;
            }
        }
    }

    /// Count the companions of a multi-plane group as started page operations.
    #[inline(never)]
    pub(super) fn start_companions(&mut self, now: u64, die: u32) {
        let companions = self.dies.multiplane.companions(die);
        if companions.is_empty() {
            return;
        }
        self.recorder.companions_started(now, companions);
        for companion in companions {
            if let Some(id) = companion.host_request() {
                let request = &self.inflight.requests[id as usize];
                self.recorder.host_page_started(
                    now,
                    &request.marks,
                    request.host.op,
                    companion.enqueued_ns,
                );
            }
        }
    }

    /// Hand a transaction to the device scheduler; complete the writes it cancelled.
    pub(super) fn enqueue_device(&mut self, now: u64, mut txn: Transaction) {
        if self.platform.ssdsim_loop.read_rules() && self.ssdsim_read(now, &mut txn) {
            return;
        }
        self.device.enqueue(txn, &mut device_ctx!(self, now));
        self.queue_changed(now, txn.chip);
        self.finish_cancelled(now);
    }

    /// Report `chip`'s queue length to the recorder after it may have changed.
    #[inline]
    pub(super) fn queue_changed(&mut self, now: u64, chip: u32) {
        let len = self.device.queued_per_chip()[chip as usize];
        self.recorder.queue_length(now, chip, len);
    }

    pub(super) fn start(&mut self, now: u64, txn: Transaction) {
        let die = txn.die as usize;
        self.dies.die_issue.started(txn.chip, txn.die);
        self.dies.die_txn[die] = txn;
        self.dies.dies_working += 1;
        self.recorder.operation_started(now, &txn);
        let (stage, transfer) = match txn.kind {
            TxnKind::Read | TxnKind::MappingRead | TxnKind::GcRead => {
                (Stage::ReadCommand, Transfer::ReadCommand)
            }
            TxnKind::Program | TxnKind::MappingProgram | TxnKind::GcProgram => {
                (Stage::ProgramIn, Transfer::ProgramIn { bytes: txn.bytes })
            }
            TxnKind::Copyback => (Stage::CopybackReadCommand, Transfer::Command),
            TxnKind::Erase => (Stage::EraseCommand, Transfer::Command),
        };
        if let Some(id) = txn.host_request() {
            let request = &self.inflight.requests[id as usize];
            self.recorder
                .host_page_started(now, &request.marks, request.host.op, txn.enqueued_ns);
        }
        self.ask_path(now, txn.die, stage, transfer);
    }

    /// Ask the interconnect for a path for the die's next transfer.
    pub(super) fn ask_path(&mut self, now: u64, die: u32, stage: Stage, transfer: Transfer) {
        self.dies.die_stage[die as usize] = stage;
        self.recorder.path_asked(now, die);
        let chip = self.dies.die_txn[die as usize].chip;
        let wake = match self.interconnect.acquire(now, chip, die, transfer) {
            Acquire::Granted { grant, wake } => {
                self.granted(grant);
                wake
            }
            Acquire::Queued { wake } => wake,
        };
        if let Some(wake) = wake {
            self.events
                .schedule(wake.at_ns, Event::LinkWake { key: wake.key });
        }
    }

    /// A transfer got its path: schedule what follows its end.
    pub(super) fn granted(&mut self, grant: Grant) {
        let die = grant.die;
        let txn = self.dies.die_txn[die as usize];
        if !self.dies.transfer_spans.is_empty() {
            self.dies.transfer_spans[die as usize] = (grant.start_ns, grant.end_ns);
        }
        if let Some(id) = txn.host_request() {
            let request = &mut self.inflight.requests[id as usize];
            self.recorder.host_path_granted(
                die,
                grant.start_ns,
                grant.conflict_free,
                &mut request.marks,
                request.host.op,
            );
        }
        let stage = self.dies.die_stage[die as usize];
        if matches!(
            stage,
            Stage::ReadCommand
                | Stage::ProgramIn
                | Stage::EraseCommand
                | Stage::CopybackReadCommand
        ) {
            // The die starts working with its first bus cycle; waiting for the bus to send the
            // command is the controller's wait, not the chip's work.
            self.recorder.die_started(grant.start_ns, txn.chip);
        }
        if stage == Stage::ReadData && self.platform.ssdsim_loop.tracks_reads() {
            self.ssdsim_read_leaves(&txn);
        }
        let end = grant.end_ns;
        if self.platform.rules.transfer_events && stage != Stage::ReadData {
            // Scheduled before the stage's own event, so a program's data is acknowledged
            // first even when tPROG is 0.
            self.events.schedule(end, Event::TransferEnd { die });
        }
        let (at, event) = match stage {
            Stage::ReadCommand | Stage::CopybackReadCommand => (
                end + self.array_ns(end, self.drive.page_read_ns, &txn),
                Event::ArrayDone { die },
            ),
            Stage::ReadData => (end, Event::Done { die }),
            Stage::ProgramIn | Stage::CopybackProgramCommand => (
                end + self.array_ns(end, txn.program_ns as u64, &txn),
                Event::Done { die },
            ),
            Stage::EraseCommand => (end + self.drive.block_erase_ns, Event::Done { die }),
        };
        self.events.schedule(at, event);
    }

    pub(super) fn on_link_wake(&mut self, now: u64, key: u32) {
        let mut grants = std::mem::take(&mut self.dies.grants);
        let next_wake = self.interconnect.wake(now, key, &mut grants);
        for grant in grants.drain(..) {
            self.granted(grant);
        }
        self.dies.grants = grants;
        if let Some(at) = next_wake {
            self.events.schedule(at, Event::LinkWake { key });
        }
    }

    pub(super) fn on_array_done(&mut self, now: u64, die: u32) {
        let txn = self.dies.die_txn[die as usize];
        match self.dies.die_stage[die as usize] {
            Stage::ReadCommand => self.ask_path(
                now,
                die,
                Stage::ReadData,
                Transfer::DataOut { bytes: txn.bytes },
            ),
            Stage::CopybackReadCommand => {
                self.ask_path(now, die, Stage::CopybackProgramCommand, Transfer::Command)
            }
            stage => unreachable!("array done in stage {stage:?}"),
        }
    }

    /// The die's transaction finished. Sets `dispatch_pending` when a request completed.
    pub(super) fn on_done(&mut self, now: u64, die: u32) -> Result<(), Error> {
        let txn = self.dies.die_txn[die as usize];
        self.dies.die_issue.finished(txn.chip, die);
        self.dies.dies_working -= 1;
        self.recorder.die_finished(now, txn.chip);
        if self.dies.multiplane.enabled() {
            self.group_done(now, die, txn)?;
        } else {
            self.page_done(now, txn)?;
        }
        self.try_issue(now, txn.chip);
        Ok(())
    }

    /// A multi-plane group (or a single operation with grouping on) finished on `die`. Its
    /// companions leave the die first: finishing a page (a mapping read releasing the operations
    /// that waited for it) may start the die's next group.
    #[inline(never)]
    pub(super) fn group_done(
        &mut self,
        now: u64,
        die: u32,
        leader: Transaction,
    ) -> Result<(), Error> {
        let mut companions = std::mem::take(&mut self.dies.finished_companions);
        self.dies.multiplane.finish(die, &mut companions);
        self.page_done(now, leader)?;
        for companion in companions.drain(..) {
            self.page_done(now, companion)?;
        }
        self.dies.finished_companions = companions;
        Ok(())
    }

    /// SSDsim's rules: a transfer of `die` ended. Under `device.write_completion =
    /// "data_transferred"` a host program's page (and its multi-plane companions') is done for
    /// its request now, while the die programs on.
    #[inline(never)]
    pub(super) fn on_transfer_end(&mut self, now: u64, die: u32) {
        if !self.platform.rules.ack_at_transfer
            || self.dies.die_stage[die as usize] != Stage::ProgramIn
        {
            return;
        }
        let leader = self.dies.die_txn[die as usize];
        self.ack_program(now, leader);
        if self.dies.multiplane.enabled() {
            for i in 0..self.dies.multiplane.companions(die).len() {
                let companion = self.dies.multiplane.companions(die)[i];
                self.ack_program(now, companion);
            }
        }
    }

    /// Array time `ns` of `txn`, starting at `at`, slowed by PASS's drive behaviour when it is
    /// on (`device.region_contention`, `device.region_runs`; host page operations only, whose
    /// slowdown the recorder keeps).
    #[inline]
    fn array_ns(&mut self, at: u64, ns: u64, txn: &Transaction) -> u64 {
        match &self.regions {
            Some(r) => match txn.host_request() {
                Some(request) => {
                    let slowed = r.array_ns(ns, request, txn.lpn);
                    self.recorder.host_array_time(at, ns, slowed);
                    slowed
                }
                None => ns,
            },
            None => ns,
        }
    }
}
