//! A request's arrival: the look-ahead record, admission into the host queue (PIQ's conflict
//! at arrival), and the hand-over of what the host scheduler pops to the device (with SSDsim's
//! hand-over rules).

use super::{Event, Request, Simulation};
use crate::host::QueueBound;
use crate::host::{page_span, HostRequest, HostScheduler};
use crate::replay::Arrival;
use crate::replay::Pacing;
use crate::stats::Models;
use crate::trace::Op;
use crate::Error;

/// The admission stage's state: the look-ahead record, the host queue's bound and timers.
pub(super) struct Admission {
    /// `host.queue_length_requests`, and whether it also bounds outstanding requests
    /// (SSDsim's request queue).
    pub(super) host_queue: QueueBound,
    /// The next record of the input, read ahead.
    pub(super) lookahead: Option<Arrival>,
    /// Open loop: when the look-ahead arrives.
    pub(super) next_arrival_ns: Option<u64>,
    /// The look-ahead's arrival time has come (it waits only for host-queue room).
    pub(super) lookahead_arrived: bool,
    /// Where the look-ahead write's page currently is (plane, block, page in block), when it
    /// overwrites one: a prefetch hint for its admission.
    pub(super) lookahead_overwrites: Option<(u32, u32, u32)>,
    /// The replay mode's rules: records read, their arrival times, `max_requests`.
    pub(super) pacing: Pacing,
    /// Sequence number of the next request admitted.
    pub(super) next_seq: u64,
    /// When the host scheduler asked to be woken.
    pub(super) host_wake_at: Option<u64>,
    /// A request completed: offer the device's free slot to the host scheduler.
    pub(super) dispatch_pending: bool,
}

impl Simulation {
    /// Read the next record into the look-ahead. Open loop: schedule its arrival at its trace
    /// time. Paced replay (closed loop, as fast as possible): it is ready at once and arrives
    /// when it is admitted.
    pub(super) fn fetch_next(
        &mut self,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        self.admission.lookahead = None;
        self.admission.lookahead_arrived = false;
        let Some(arrival) = self.admission.pacing.next(next_record)? else {
            self.note_input_end();
            return Ok(());
        };
        // The look-ahead is translated a few events from now: start loading its mapping entry
        // (usually under way already: it was the previous record's hint). A write also
        // updates the block holding the page's current data: its map entry (prefetched a
        // request ago) gives the block, whose metadata is loaded next.
        let page = self.drive.geometry.page_bytes as u64;
        let lpn = arrival.record.offset_bytes / page;
        self.ftl.prefetch(lpn);
        if let Some(cmt) = &self.dispatch.cmt {
            cmt.cache.prefetch(lpn);
        }
        self.admission.lookahead_overwrites = match arrival.record.op {
            Op::Write => self.ftl.prefetch_overwritten(lpn),
            Op::Read => None,
        };
        // The record after it: its mapping entry, a whole request ahead.
        if let Some(offset) = arrival.next_offset_hint {
            self.ftl.prefetch(offset / page);
            if let Some(cmt) = &self.dispatch.cmt {
                cmt.cache.prefetch(offset / page);
            }
        }
        // Open loop: the input pipeline rebases and scales time. A record read late (the host
        // queue was full) keeps its trace time as its arrival: the time it waited to enter the
        // host queue is part of its latency.
        match self.admission.pacing.arrival_ns(&arrival) {
            Some(at) => self.admission.next_arrival_ns = Some(at.max(self.events.now_ns())),
            None => self.admission.lookahead_arrived = true,
        }
        self.admission.lookahead = Some(arrival);
        Ok(())
    }

    /// Remember when the input ended and how many requests were then in the system (once).
    pub(super) fn note_input_end(&mut self) {
        self.recorder
            .input_ended(self.events.now_ns(), self.inflight.live_requests);
    }

    pub(super) fn on_arrival(
        &mut self,
        now: u64,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        if self.platform.ssdsim_loop.deferred_admission {
            return self.ssdsim_arrival(now, next_record);
        }
        if self.recorder.window_opens_at(self.admission.next_seq) {
            self.open_window(now);
        }
        self.admission.lookahead_arrived = true;
        if self.platform.rules.at_next_event {
            // Into SSDsim's request queue now; handed over in a pass once every arrival of
            // this instant is in.
            self.admit_arrived(now, next_record)?;
            if self.platform.rules.pass_queued_at != Some(now) {
                self.platform.rules.pass_queued_at = Some(now);
                self.events.schedule(now, Event::HandoverPass);
            }
            return Ok(());
        }
        self.try_dispatch(now, next_record)
    }

    /// Admit arrived records into the host queue while it has room.
    pub(super) fn admit_arrived(
        &mut self,
        now: u64,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        while self.admission.lookahead_arrived && self.has_room() {
            self.admit(now)?;
            self.fetch_next(next_record)?;
        }
        Ok(())
    }

    /// May the arrived look-ahead enter the host queue now?
    pub(super) fn has_room(&self) -> bool {
        let host_room = self
            .admission
            .host_queue
            .has_room(self.host.len(), self.inflight.outstanding_requests);
        self.admission
            .pacing
            .admits(host_room, self.inflight.live_requests)
    }

    pub(super) fn open_window(&mut self, now: u64) {
        let models = Models {
            ftl: &self.ftl,
            cmt: self.dispatch.cmt.as_ref().map(|c| &c.cache),
            buffer: self.dispatch.buffer.as_ref().map(|b| &b.buffer),
        };
        self.recorder.open_window(now, models);
    }

    /// Turn the look-ahead record into a request in the host queue.
    pub(super) fn admit(&mut self, now: u64) -> Result<(), Error> {
        let Some(Arrival { record, source, .. }) = self.admission.lookahead.take() else {
            return Ok(());
        };
        self.admission.lookahead_arrived = false;
        // Paced replay: the request arrives now, and the measured window may open with it.
        if self.admission.pacing.paced() && self.recorder.window_opens_at(self.admission.next_seq) {
            self.open_window(now);
        }
        let arrival_ns = self.admission.pacing.admitted_arrival_ns(now);
        let page = self.drive.geometry.page_bytes as u64;
        let (first_lpn, pages) = page_span(record.offset_bytes, record.size_bytes, page);
        if first_lpn + pages > self.ftl.logical_pages() {
            return Err(Error::Workload(format!(
                "trace record {} ({:?} of {} bytes at byte offset {}) reaches past the simulated capacity of {} bytes",
                self.admission.next_seq + 1,
                record.op,
                record.size_bytes,
                record.offset_bytes,
                self.ftl.logical_pages() * page
            )));
        }
        let pages = u32::try_from(pages).map_err(|_| {
            Error::Workload(format!(
                "trace record {} is too large",
                self.admission.next_seq + 1
            ))
        })?;
        if let Some(page) = self.admission.lookahead_overwrites.take() {
            // Its old block's metadata was prefetched when it was read; the reverse-map entry
            // the overwrite invalidates is next.
            self.ftl.prefetch_reverse_entry(page);
        }
        let chips = self
            .drive
            .static_map
            .chips_of_range(first_lpn, pages as u64);
        let id = self.inflight.free_request_id(chips);
        let seq = self.admission.next_seq;
        self.admission.next_seq += 1;
        let host = HostRequest::new(id, seq, arrival_ns, &record, (first_lpn, pages), chips);
        // PIQ's conflict: the chip set meets that of a request outstanding or waiting ahead.
        let conflict = self.inflight.chip_load.admitted(chips);
        self.inflight.live_requests += 1;
        if let Some(link) = &mut self.platform.link {
            // The host rings the submission doorbell for the new entry.
            link.doorbell(now);
        }
        let view = host_view!(self, now);
        self.host.push(host, &view);
        let marks =
            self.recorder
                .request_admitted(seq, source, record.op, conflict, self.host.len());
        self.host_queue_changed(now);
        self.inflight.requests[id as usize] = Request {
            host,
            remaining_pages: pages,
            slot: 0,
            live: true,
            marks,
        };
        Ok(())
    }

    /// Move requests from the host scheduler to the device while it has room, admitting
    /// blocked arrivals as the host queue drains.
    pub(super) fn try_dispatch(
        &mut self,
        now: u64,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        // SSDsim hands over in passes: whether this one may, decided once at its start (its
        // distribution creates sub-requests; channels turn busy only after the pass).
        if self.platform.rules.at_next_event && self.dies.dies_working == 0 {
            self.platform.rules.pass_open_at = Some(now);
        }
        let pass_allowed = !self.platform.rules.transfer_events || self.pass_allowed(now);
        loop {
            // Under `second_device_event` records enter at the end of an instant.
            if !self.platform.ssdsim_loop.deferred_admission {
                self.admit_arrived(now, next_record)?;
            }
            if self.inflight.device_full() || self.host.is_empty() {
                break;
            }
            if !pass_allowed
                || (self.platform.rules.one_per_pass
                    && self.platform.rules.last_handover_ns == Some(now))
            {
                break;
            }
            self.dispatch.pop_buffer.clear();
            let view = host_view!(self, now);
            self.host.pop(&view, &mut self.dispatch.pop_buffer);
            if self.dispatch.pop_buffer.is_empty() {
                break;
            }
            if self.recorder.logs_dispatches() {
                self.log_command(now);
            }
            let slot = self
                .inflight
                .take_slot(self.dispatch.pop_buffer.len() as u32);
            for i in 0..self.dispatch.pop_buffer.len() {
                let id = self.dispatch.pop_buffer[i];
                self.dispatch_request(now, id, slot)?;
            }
            self.platform.rules.last_handover_ns = Some(now);
            self.host_queue_changed(now);
        }
        if let Some(wake) = self.host.wake_at_ns() {
            let wake = wake.max(now + 1);
            if self
                .admission
                .host_wake_at
                .is_none_or(|pending| wake < pending)
            {
                self.admission.host_wake_at = Some(wake);
                self.events.schedule(wake, Event::HostWake);
            }
        }
        Ok(())
    }

    /// Keep the command just popped in the dispatch log (`--dispatch-log`; off the hot path).
    #[cold]
    #[inline(never)]
    fn log_command(&mut self, now: u64) {
        let requests = &self.inflight.requests;
        self.recorder.command_dispatched(
            now,
            self.dispatch
                .pop_buffer
                .iter()
                .map(|&id| &requests[id as usize].host),
        );
    }

    /// SSDsim's hand-over rules: may waiting requests go to the device in a pass now?
    /// (`one_per_pass` is checked per request: one pass per distinct time.)
    pub(super) fn pass_allowed(&self, now: u64) -> bool {
        let r = &self.platform.rules;
        // SSDsim tests its channels' *state* when its clock reaches the event, before it
        // starts new work at that instant: a channel whose transfer ends now is idle, even if
        // another transfer waits for it. So only a transfer begun before now and still running
        // makes a channel busy.
        if r.needs_idle_channels
            && self
                .dies
                .transfer_spans
                .iter()
                .any(|&(start, end)| start < now && now < end)
        {
            return false;
        }
        // SSDsim distributes when its clock reaches an event; an idle device has none, and its
        // clock jumps to the arrival (with the hand-over fix, docs/validation.md).
        !r.at_next_event || r.pass_open_at == Some(now)
    }

    /// Report the host queue's occupancy (as `host.queue_length_requests` bounds it).
    #[inline]
    pub(super) fn host_queue_changed(&mut self, now: u64) {
        let len = self
            .admission
            .host_queue
            .occupancy(self.host.len(), self.inflight.outstanding_requests);
        self.recorder.host_queue_length(now, len as u64);
    }
}
