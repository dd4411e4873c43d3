//! SSDsim's rules that act at the end of an instant of its main loop, and on the sub-requests
//! it creates (docs/models/ssd-model.md, "SSDsim's platform rules"; all off by default).
//!
//! SSDsim (`ssd.c: simulate`) runs one pass of its loop per internal event: it distributes
//! requests, then serves every idle channel (`flash.c: process`: read commands, read data,
//! then programs, or garbage collection on a channel without work), then reads the trace
//! records that are due (`get_requests`). flashlane processes the events of an instant one by
//! one; what SSDsim does after the whole instant is done here, once the instant's last event
//! has been processed ([`Simulation::end_instant`]):
//! - `device.scheduler.program_binding = "at_transfer"`: a free channel with no command or
//!   read data waiting for it takes a program (`services_2_write`), in
//!   `device.scheduler.program_order`;
//! - `device.scheduler.gc = "holds_channel"`: a free channel without host work runs one
//!   victim's garbage collection and is held for all of it (`gc_for_channel`,
//!   `uninterrupt_gc`);
//! - `host.handover_at = "second_device_event"`: the records that arrived by the instant enter
//!   the request queue after its hand-over pass (`get_requests` runs before the clock moves).
//!
//! And when a host read is queued: `device.scheduler.read_transfer = "held_sectors"` (its data
//! is every sector its page holds) and `device.scheduler.merged_read_ns` (a read of a page
//! already being read completes without flash work, `creat_sub_request`).

use crate::int_map::IntMap;

use super::{Event, Simulation, Stage};
use crate::config::Config;
use crate::device::{
    AnyDeviceScheduler, GcJob, GcService, ProgramBinding, ReadTransfer, Transaction, TxnKind,
};
use crate::ftl::partial_pages::SECTOR_BYTES;
use crate::host::{HandoverAt, HostScheduler};
use crate::interconnect::{transfer_ns, AnyInterconnect};
use crate::replay::Arrival;
use crate::Error;

/// State of the rules above; inert (`active` false) unless one of them is on.
#[derive(Debug, Default)]
pub(super) struct SsdsimLoop {
    /// Any rule that needs [`Simulation::end_instant`].
    pub(super) active: bool,
    /// The instant whose end is still to be run.
    pub(super) pending: Option<u64>,
    programs_at_transfer: bool,
    gc_holds_channel: bool,
    /// `host.handover_at = "second_device_event"` in an open-loop replay.
    pub(super) deferred_admission: bool,
    /// The instant of the last extra pass of an idle device (at most one per instant).
    idle_pass_at: Option<u64>,
    /// The instant at which the last request left an empty request queue (SSDsim's clock
    /// while its queue is empty), or `None` while it holds requests.
    emptied_at: Option<u64>,
    read_held_sectors: bool,
    merged_read_ns: Option<u64>,
    /// Under `merged_read_ns`: reads per logical page (host and read-modify-write reads) that
    /// are queued, or under way with their data not yet leaving the chip (SSDsim's channel
    /// read list). SSDsim compares physical pages; a page's reads find it at one physical
    /// page until a write of it reaches the chip, which flashlane places at hand-over: the
    /// logical page is that physical page (a write's read-modify-write read of the old one
    /// included).
    reads_by_lpn: IntMap<u32, u32>,
    /// Channel time of one GC page move without its data: two commands, tR and tPROG.
    gc_move_ns: u64,
    /// Channel time of one page's data out and back in.
    gc_move_data_ns: u64,
}

impl SsdsimLoop {
    pub(super) fn new(config: &Config, paced: bool) -> Self {
        let (binding, gc, read_transfer, merged_read_ns) =
            match config.device.scheduler.ssdsim_switches() {
                Some(s) => {
                    let (read_transfer, merged) = config.device.scheduler.ssdsim_read_rules();
                    (s.program_binding, s.gc, read_transfer, merged)
                }
                None => (
                    ProgramBinding::AtIssue,
                    GcService::Queued,
                    ReadTransfer::Requested,
                    None,
                ),
            };
        let t = &config.timing;
        let deferred_admission = config.host.handover_at == HandoverAt::SecondDeviceEvent && !paced;
        let programs_at_transfer = binding == ProgramBinding::AtTransfer;
        let gc_holds_channel = gc == GcService::HoldsChannel;
        SsdsimLoop {
            active: programs_at_transfer || gc_holds_channel || deferred_admission,
            pending: None,
            programs_at_transfer,
            gc_holds_channel,
            deferred_admission,
            emptied_at: Some(0),
            idle_pass_at: None,
            read_held_sectors: read_transfer == ReadTransfer::HeldSectors,
            merged_read_ns,
            reads_by_lpn: IntMap::default(),
            gc_move_ns: 2 * t.command_transfer_ns + t.page_read_ns + t.page_program_ns,
            gc_move_data_ns: 2 * transfer_ns(config.geometry.page_bytes, t.channel_bytes_per_ns),
        }
    }

    /// Whether queued host reads pass through [`Simulation::ssdsim_read`].
    #[inline]
    pub(super) fn read_rules(&self) -> bool {
        self.read_held_sectors || self.merged_read_ns.is_some()
    }

    /// Whether reads whose data starts to move must be reported to
    /// [`Simulation::ssdsim_read_leaves`].
    #[inline]
    pub(super) fn tracks_reads(&self) -> bool {
        self.merged_read_ns.is_some()
    }

    /// Transfer ends must be events (a channel frees at them).
    pub(super) fn needs_transfer_events(&self) -> bool {
        self.programs_at_transfer || self.gc_holds_channel
    }
}

impl Simulation {
    /// The end of instant `now` (every event of `now` processed): SSDsim's channel service,
    /// then its reading of due records.
    pub(super) fn end_instant(
        &mut self,
        now: u64,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        self.platform.ssdsim_loop.pending = None;
        if self.platform.ssdsim_loop.programs_at_transfer
            || self.platform.ssdsim_loop.gc_holds_channel
        {
            self.serve_free_channels(now);
        }
        if self.platform.ssdsim_loop.deferred_admission {
            self.read_due_records(now, next_record)?;
        }
        Ok(())
    }

    /// Every channel free at `now` with nothing waiting for it: garbage collection if the
    /// channel has no host work, else a program (SSDsim's `process` on an idle channel, after
    /// read commands and read data, which the interconnect has served already).
    fn serve_free_channels(&mut self, now: u64) {
        if let AnyDeviceScheduler::Ssdsim(s) = &self.device {
            if !s.channel_work_queued() {
                return;
            }
        }
        let per_channel = self.drive.geometry.chips_per_channel;
        for channel in 0..self.drive.geometry.channels {
            let chips = channel * per_channel..(channel + 1) * per_channel;
            let AnyInterconnect::SharedBus(bus) = &self.interconnect else {
                return;
            };
            if !bus.channel_idle(now, chips.start) {
                continue;
            }
            let dies = self.dies_of(chips.clone());
            let AnyDeviceScheduler::Ssdsim(s) = &mut self.device else {
                return;
            };
            if self.platform.ssdsim_loop.gc_holds_channel && s.gc_jobs_waiting(chips.clone()) {
                // SSDsim's channel read list holds its reads until they end.
                let reading = self.dies.die_txn[dies.clone()]
                    .iter()
                    .zip(&self.dies.die_issue.blocked()[dies])
                    .any(|(txn, busy)| *busy && txn.kind == TxnKind::Read);
                if !reading && !s.host_work_waiting(chips.clone()) {
                    if let Some(job) = s.take_gc_job(chips.clone(), self.dies.die_issue.blocked()) {
                        self.start_gc_job(now, job);
                    }
                    // SSDsim's `process` skips the channel after `gc` (its queues are empty).
                    continue;
                }
            }
            if self.platform.ssdsim_loop.programs_at_transfer {
                if let Some(txn) = s.take_program(chips, self.dies.die_issue.blocked()) {
                    self.queue_changed(now, txn.chip);
                    self.start(now, txn);
                }
            }
        }
    }

    fn dies_of(&self, chips: std::ops::Range<u32>) -> std::ops::Range<usize> {
        let d = self.drive.geometry.dies_per_chip as usize;
        chips.start as usize * d..chips.end as usize * d
    }

    /// SSDsim's `uninterrupt_gc` without copyback: the channel is busy for every valid page's
    /// move (two commands, tR, tPROG, and its data out of the chip and back in) and the chip
    /// for that and the erase (`t_BERS`).
    fn start_gc_job(&mut self, now: u64, job: GcJob) {
        let erase = job.erase;
        let moves = job.moves.len() as u64;
        let channel_ns = moves
            * (self.platform.ssdsim_loop.gc_move_ns + self.platform.ssdsim_loop.gc_move_data_ns);
        let held_until = now + channel_ns;
        let AnyInterconnect::SharedBus(bus) = &mut self.interconnect else {
            unreachable!("holds_channel is validated to need a shared bus");
        };
        let held = bus.hold_channel(now, erase.chip, held_until);
        debug_assert!(held, "GC job started on a busy channel");
        let die = erase.die;
        self.queue_changed(now, erase.chip);
        self.dies.die_issue.started(erase.chip, die);
        self.dies.die_txn[die as usize] = erase;
        self.dies.die_stage[die as usize] = Stage::EraseCommand;
        self.dies.dies_working += 1;
        for moved in &job.moves {
            self.recorder.operation_started(now, moved);
        }
        self.recorder.operation_started(now, &erase);
        self.recorder.die_started(now, erase.chip);
        if !self.dies.transfer_spans.is_empty() {
            self.dies.transfer_spans[die as usize] = (now, held_until);
        }
        // The channel's release is an internal event of SSDsim (a hand-over pass).
        self.events.schedule(held_until, Event::TransferEnd { die });
        self.events
            .schedule(held_until + self.drive.block_erase_ns, Event::Done { die });
    }

    /// SSDsim reads every trace record due by `now` into its request queue after the pass
    /// of a loop instant (`get_requests` at the top of the next pass, before the clock
    /// moves): they can be handed over from the next instant on.
    fn read_due_records(
        &mut self,
        now: u64,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        if self.inflight.live_requests == 0 {
            self.platform.ssdsim_loop.emptied_at.get_or_insert(now);
        } else {
            self.platform.ssdsim_loop.emptied_at = None;
        }
        if self.platform.rules.pass_open_at != Some(now) {
            // Not an instant of SSDsim's loop: nothing is read.
            return Ok(());
        }
        while self.admission.lookahead_arrived && self.has_room() {
            self.admit(now)?;
            self.fetch_next(next_record)?;
            if self.admission.next_arrival_ns.is_some_and(|at| at <= now) {
                self.admission.next_arrival_ns = None;
                self.record_arrived(now);
            }
        }
        if self.inflight.live_requests > 0 {
            self.platform.ssdsim_loop.emptied_at = None;
        }
        if self.dies.dies_working == 0
            && !self.host.is_empty()
            && self.platform.ssdsim_loop.idle_pass_at != Some(now)
        {
            // No internal event is pending: SSDsim's clock stays (with the hand-over fix,
            // `current_time = max(current_time, head's arrival)`) and its next pass, at this
            // same instant, distributes.
            self.platform.ssdsim_loop.idle_pass_at = Some(now);
            self.platform.rules.last_handover_ns = None;
            self.platform.rules.pass_queued_at = Some(now);
            self.events.schedule(now, Event::HandoverPass);
        }
        Ok(())
    }

    /// The look-ahead record's arrival time has come.
    pub(super) fn record_arrived(&mut self, now: u64) {
        if self.recorder.window_opens_at(self.admission.next_seq) {
            self.open_window(now);
        }
        self.admission.lookahead_arrived = true;
    }

    /// An arrival under `host.handover_at = "second_device_event"`. Into an empty request
    /// queue SSDsim reads the record ahead of time (`ssd->empty`) and moves its clock to the
    /// arrival, unless the next internal event after the instant the queue emptied lies at
    /// or after the arrival (then to that event): handed over at the arrival if a device
    /// event came since the queue emptied or none is pending, else at the next device event.
    /// Into a queue that holds requests it is read at the end of the next loop instant.
    pub(super) fn ssdsim_arrival(
        &mut self,
        now: u64,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        self.record_arrived(now);
        if self.inflight.live_requests != 0 {
            if self.dies.dies_working == 0 {
                // No internal event is pending (the requests in the queue wait for none, e.g.
                // a merged read): read it at this instant rather than never.
                self.platform.rules.pass_open_at = Some(now);
            }
            return Ok(());
        }
        if self.platform.ssdsim_loop.emptied_at == Some(now) {
            // Due at SSDsim's clock (its start, 0): read with every record due, at the end of
            // this instant, which is one of its loop's.
            self.platform.rules.pass_open_at = Some(now);
            return Ok(());
        }
        let event_since_empty = match (
            self.platform.rules.pass_open_at,
            self.platform.ssdsim_loop.emptied_at,
        ) {
            (Some(event), Some(emptied)) => event > emptied,
            _ => false,
        };
        // The record is read now (only it: the next one waits for a loop instant).
        if self.has_room() {
            self.admit(now)?;
            self.fetch_next(next_record)?;
        }
        self.platform.ssdsim_loop.emptied_at = None;
        if self.dies.dies_working == 0 || event_since_empty {
            self.platform.rules.pass_open_at = Some(now);
            if self.platform.rules.pass_queued_at != Some(now) {
                self.platform.rules.pass_queued_at = Some(now);
                self.events.schedule(now, Event::HandoverPass);
            }
        }
        Ok(())
    }

    /// A read entering the device queues under SSDsim's read rules: its data size, and
    /// whether it merges with a read of its page already queued or under way (then it is
    /// done `merged_read_ns` later and must not be queued: returns true).
    #[inline(never)]
    pub(super) fn ssdsim_read(&mut self, now: u64, txn: &mut Transaction) -> bool {
        if txn.kind != TxnKind::Read {
            return false;
        }
        let host = txn.host_request();
        if let (Some(ns), Some(id)) = (self.platform.ssdsim_loop.merged_read_ns, host) {
            if self
                .platform
                .ssdsim_loop
                .reads_by_lpn
                .contains_key(&txn.lpn)
            {
                self.events
                    .schedule(now + ns, Event::ReadMerged { request: id });
                return true;
            }
        }
        if self.platform.ssdsim_loop.merged_read_ns.is_some() {
            *self
                .platform
                .ssdsim_loop
                .reads_by_lpn
                .entry(txn.lpn)
                .or_insert(0) += 1;
        }
        if self.platform.ssdsim_loop.read_held_sectors && host.is_some() {
            let lpn = u64::from(txn.lpn);
            let mapped = self.ftl.mapped_target(lpn).is_some();
            let held = match &self.platform.partial {
                Some(partial) => partial.held(lpn, mapped).count_ones() * SECTOR_BYTES as u32,
                None if mapped => self.drive.geometry.page_bytes,
                None => 0,
            };
            // A page holding nothing (never written; SSDsim writes every page a trace reads
            // before it starts) moves what was asked for.
            if held > 0 {
                txn.bytes = held;
            }
        }
        false
    }

    /// A read's data starts to leave its chip (under `merged_read_ns`): SSDsim takes the
    /// sub-request off its channel's read list then (`services_2_r_data_trans`,
    /// `find_read_sub_request`), so later reads of the page no longer merge with it.
    #[inline(never)]
    pub(super) fn ssdsim_read_leaves(&mut self, txn: &Transaction) {
        let reads = &mut self.platform.ssdsim_loop.reads_by_lpn;
        if let Some(count) = reads.get_mut(&txn.lpn) {
            *count -= 1;
            if *count == 0 {
                reads.remove(&txn.lpn);
            }
        }
    }

    /// A merged read's page is done.
    pub(super) fn on_read_merged(&mut self, now: u64, request: u32) {
        self.on_buffer_done(now, request, 1);
    }
}
