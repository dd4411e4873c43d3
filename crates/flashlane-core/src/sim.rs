//! The simulation proper: wires trace, host scheduler, HIL, FTL, device scheduler,
//! interconnect and flash timing together around the event queue.

use crate::config::Config;
use crate::device::{
    AnyDeviceScheduler, DeviceContext, DeviceScheduler, DieIssue, MultiPlane, Transaction, TxnKind,
    WriteBuffer, WriteCompletion, NO_LPN, NO_REQUEST,
};
use crate::engine::EventQueue;
use crate::ftl::cmt::{Access, CmtRules, MappingCache, MappingOp, MAPPING_READ_BYTES};
use crate::ftl::partial_pages::SECTOR_BYTES;
use crate::ftl::{Ftl, GcOp, PartialPageWrites, PartialPages, PhysicalTarget};
use crate::geometry::{Geometry, StaticMap};
use crate::host::{
    AnyHostScheduler, HandoverAt, HandoverPerPass, HostRequest, HostScheduler, HostView, RequestId,
};
use crate::interconnect::{Acquire, AnyInterconnect, Grant, Interconnect, Transfer};
use crate::run::{Arrival, Replay};
use crate::stats::{Models, RequestMarks, RunEnd, SimRecorder, SimResults};
use crate::trace::Op;
use crate::Error;

/// The host scheduler's view of the device. A macro, not a method: the view borrows fields
/// of the simulation while its host scheduler (another field) is borrowed mutably.
macro_rules! host_view {
    ($sim:ident, $now:expr) => {
        HostView {
            now_ns: $now,
            geometry: &$sim.geometry,
            static_map: &$sim.static_map,
            outstanding_per_chip: &$sim.outstanding_per_chip,
            outstanding: $sim.outstanding_requests,
            device_free_slots: $sim.device_queue_depth - $sim.outstanding_slots,
        }
    };
}

/// What the device scheduler may see and change (see [`DeviceContext`]). A macro for the same
/// reason as `host_view!`.
macro_rules! device_ctx {
    ($sim:ident, $now:expr) => {
        DeviceContext {
            now_ns: $now,
            die_busy: $sim.die_issue.blocked(),
            ftl: &mut $sim.ftl,
            cancelled: &mut $sim.cancelled,
        }
    };
}

#[derive(Debug, Clone, Copy)]
enum Event {
    /// The look-ahead trace record arrives at the host (never queued: see `next_arrival_ns`).
    Arrival,
    /// The interconnect asked to be woken for `key` (a link, or its whole network): waiting
    /// transfers may start.
    LinkWake { key: u32 },
    /// A die finished the array part of a read or copyback.
    ArrayDone { die: u32 },
    /// A die finished its transaction.
    Done { die: u32 },
    /// The host scheduler asked to be woken.
    HostWake,
    /// `pages` pages of `request` finished moving through the DRAM write buffer.
    BufferDone { request: u32, pages: u32 },
    /// A transfer of the die ended (scheduled only under SSDsim's rules, `SsdsimRules`): an
    /// internal event of the device, and the moment a host program's data is in the chip.
    TransferEnd { die: u32 },
    /// SSDsim's rules: the hand-over pass after every arrival of this instant entered the
    /// queue (SSDsim reads all records due before it distributes).
    HandoverPass,
}

/// What a die's current transfer is for (what follows when it ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    ReadCommand,
    ReadData,
    ProgramIn,
    EraseCommand,
    CopybackReadCommand,
    CopybackProgramCommand,
}

#[derive(Debug, Clone, Copy)]
struct Request {
    host: HostRequest,
    remaining_pages: u32,
    slot: u32,
    live: bool,
    /// The recorder's marks (measured or warm-up, trace of a mix, ...).
    marks: RequestMarks,
}

/// Run options that are not part of the device config.
#[derive(Debug, Clone)]
pub struct SimOptions {
    pub warmup_requests: u64,
    pub max_requests: Option<u64>,
    pub replay: Replay,
    /// Number of traces mixed (per-source statistics are kept for each).
    pub sources: usize,
}

/// SSDsim's platform rules (each off by default; docs/models/ssd-model.md, "SSDsim's platform
/// rules"): when waiting requests are handed to the device, and when a write completes.
#[derive(Debug, Clone, Copy, Default)]
struct SsdsimRules {
    /// Hand over only at a device event (or to an idle device): `host.handover_at`.
    at_next_event: bool,
    /// At most one request per hand-over pass (one pass per distinct event time).
    one_per_pass: bool,
    /// Hand over only while no path carries a transfer begun before the pass's instant.
    needs_idle_channels: bool,
    /// A host program completes for its request when its data transfer ends.
    ack_at_transfer: bool,
    /// Any of the above: transfer ends are events.
    transfer_events: bool,
    /// The instant at which a hand-over pass is open (a device event happened then, or the
    /// device was idle).
    pass_open_at: Option<u64>,
    /// A `HandoverPass` event is queued for this instant.
    pass_queued_at: Option<u64>,
    /// When the last request was handed over (for `one_per_pass`).
    last_handover_ns: Option<u64>,
}

pub struct Simulation {
    geometry: Geometry,
    static_map: StaticMap,
    page_read_ns: u64,
    page_program_ns: u64,
    block_erase_ns: u64,
    host_queue_length: usize,
    /// The host queue length also bounds outstanding requests (SSDsim's request queue).
    queue_includes_outstanding: bool,
    device_queue_depth: u32,
    options: SimOptions,

    events: EventQueue<Event>,
    pub(crate) host: AnyHostScheduler,
    device: AnyDeviceScheduler,
    pub(crate) interconnect: AnyInterconnect,
    pub(crate) ftl: Ftl,

    requests: Vec<Request>,
    free_requests: Vec<u32>,
    live_requests: u64,
    slot_members: Vec<u32>,
    free_slots: Vec<u32>,
    outstanding_slots: u32,
    outstanding_requests: u32,
    outstanding_per_chip: Vec<u32>,
    /// Requests waiting or outstanding that touch each chip (for conflict detection).
    claims_per_chip: Vec<u32>,

    /// Which dies may start an operation (`device.die_issue`).
    die_issue: DieIssue,
    die_txn: Vec<Transaction>,
    die_stage: Vec<Stage>,
    grants: Vec<Grant>,

    lookahead: Option<Arrival>,
    /// Open loop: when the look-ahead arrives.
    next_arrival_ns: Option<u64>,
    /// The look-ahead's arrival time has come (it waits only for host-queue room).
    lookahead_arrived: bool,
    /// Where the look-ahead write's page currently is (plane, block, page in block), when it
    /// overwrites one: a prefetch hint for its admission.
    lookahead_overwrites: Option<(u32, u32, u32)>,
    last_arrival_ns: u64,
    records: u64,
    next_seq: u64,
    host_wake_at: Option<u64>,
    /// A request completed: offer the device's free slot to the host scheduler.
    dispatch_pending: bool,

    /// Every measurement: the flow reports what happened, the recorder keeps the figures.
    recorder: SimRecorder,

    pop_buffer: Vec<RequestId>,
    gc_buffer: Vec<GcOp>,
    /// Host write pages waiting for their plane's free pool, per plane: (request, logical
    /// page, bytes). Only under `ftl.gc_block_release = "erase_done"` (else empty).
    stalled_writes: Vec<std::collections::VecDeque<(RequestId, u32, u32)>>,
    touched_chips: Vec<u32>,
    /// Writes the device scheduler cancelled (SOS write hits), to complete.
    cancelled: Vec<Transaction>,
    /// Cached mapping table, when `ftl.mapping_cache_bytes` > 0.
    cmt: Option<CachedTranslation>,
    /// Multi-plane grouping (`device.multiplane`) and the companions of each die's group.
    multiplane: MultiPlane,
    /// Scratch list for the companions of the group that just finished (kept for its capacity).
    finished_companions: Vec<Transaction>,
    /// DRAM write buffer, when `device.write_buffer_bytes` > 0.
    buffer: Option<BufferedWrites>,
    rules: SsdsimRules,
    /// Dies with a started, unfinished transaction (the device is idle at 0).
    dies_working: u32,
    /// Under `host.handover_needs_idle_channels`: each die's last granted transfer (start,
    /// end), to tell whether a path carries a transfer begun before an instant.
    transfer_spans: Vec<(u64, u64)>,
    /// Sector bitmaps of partly written pages (`ftl.partial_page_writes =
    /// "read_modify_write"`), and the host programs waiting for their page's read, with the
    /// physical page that read fetches.
    partial: Option<PartialPages>,
    rmw_held: Vec<(u32, Transaction)>,
}

/// The write buffer with its scratch list.
struct BufferedWrites {
    buffer: WriteBuffer,
    admitted: Vec<(u32, u64)>,
    /// A flush may be due (checked after the current event).
    flush_due: bool,
}

/// The cached mapping table with the buffers the event flow hands it.
struct CachedTranslation {
    cache: MappingCache,
    ops: Vec<MappingOp>,
    released: Vec<Transaction>,
}

impl Simulation {
    pub fn new(config: &Config, mut ftl: Ftl, options: SimOptions) -> Self {
        // Preconditioning is over: under `ftl.gc_block_release = "erase_done"` victims now wait
        // for their erase.
        ftl.start_deferred_release();
        let stalled_writes = if ftl.defers_release() {
            vec![std::collections::VecDeque::new(); config.geometry.planes() as usize]
        } else {
            Vec::new()
        };
        let g = config.geometry.clone();
        let chips = g.chips() as usize;
        let dies = g.dies() as usize;
        let recorder = SimRecorder::new(chips, dies, options.sources, options.warmup_requests);
        let idle_txn = Transaction {
            kind: TxnKind::Read,
            request: NO_REQUEST,
            chip: 0,
            die: 0,
            plane: 0,
            page_in_block: 0,
            bytes: 0,
            program_ns: 0,
            enqueued_ns: 0,
            lpn: NO_LPN,
            ppn: 0,
            from_chip: 0,
        };
        let cmt = (config.ftl.mapping_cache_bytes > 0).then(|| CachedTranslation {
            cache: MappingCache::new(
                &g,
                config.static_map(),
                config.ftl.mapping_cache_bytes,
                ftl.logical_pages(),
                ftl.mapped_lpns(),
                CmtRules {
                    on_flash_at_start: config.ftl.translation_pages_on_flash,
                    writebacks: config.ftl.mapping_writebacks,
                },
            ),
            ops: Vec::with_capacity(8),
            released: Vec::with_capacity(64),
        });
        let buffer = (config.device.write_buffer_bytes > 0).then(|| BufferedWrites {
            buffer: WriteBuffer::new(
                (config.device.write_buffer_bytes / u64::from(g.page_bytes)) as u32,
                config.device.write_buffer_flush_threshold_fraction,
                config.device.write_buffer_page_ns,
                ftl.integrity_violations().is_some(),
            ),
            admitted: Vec::with_capacity(64),
            flush_due: false,
        });
        Simulation {
            buffer,
            cmt,
            finished_companions: Vec::with_capacity(g.planes_per_die as usize),
            multiplane: MultiPlane::new(
                config.device.multiplane,
                config.device.multiplane_mapping_reads,
                g.dies(),
                g.planes_per_die,
            ),
            static_map: config.static_map(),
            page_read_ns: config.timing.page_read_ns,
            page_program_ns: config.timing.page_program_ns,
            block_erase_ns: config.timing.block_erase_ns,
            host_queue_length: config.host.queue_length_requests as usize,
            queue_includes_outstanding: config.host.queue_includes_outstanding,
            device_queue_depth: config.device.queue_depth_requests,
            options,
            events: EventQueue::new(),
            host: config.host.scheduler.build(),
            device: config.device.scheduler.build(g.chips()),
            interconnect: config.interconnect.build(&g, &config.timing),
            ftl,
            requests: Vec::with_capacity(1024),
            free_requests: Vec::new(),
            live_requests: 0,
            slot_members: Vec::new(),
            free_slots: Vec::new(),
            outstanding_slots: 0,
            outstanding_requests: 0,
            outstanding_per_chip: vec![0; chips],
            claims_per_chip: vec![0; chips],
            die_issue: DieIssue::new(config.device.die_issue, g.chips(), g.dies_per_chip),
            die_txn: vec![idle_txn; dies],
            die_stage: vec![Stage::ReadCommand; dies],
            grants: Vec::with_capacity(4),
            lookahead: None,
            next_arrival_ns: None,
            lookahead_arrived: false,
            lookahead_overwrites: None,
            last_arrival_ns: 0,
            records: 0,
            next_seq: 0,
            host_wake_at: None,
            dispatch_pending: false,
            recorder,
            pop_buffer: Vec::with_capacity(8),
            gc_buffer: Vec::with_capacity(256),
            stalled_writes,
            touched_chips: Vec::with_capacity(chips),
            cancelled: Vec::with_capacity(8),
            rules: SsdsimRules {
                at_next_event: config.host.handover_at == HandoverAt::NextDeviceEvent,
                one_per_pass: config.host.handover_per_pass == HandoverPerPass::One,
                needs_idle_channels: config.host.handover_needs_idle_channels,
                ack_at_transfer: config.device.write_completion == WriteCompletion::DataTransferred,
                transfer_events: config.host.handover_at == HandoverAt::NextDeviceEvent
                    || config.host.handover_needs_idle_channels
                    || config.device.write_completion == WriteCompletion::DataTransferred,
                pass_open_at: None,
                pass_queued_at: None,
                last_handover_ns: None,
            },
            dies_working: 0,
            transfer_spans: if config.host.handover_needs_idle_channels {
                vec![(0, 0); dies]
            } else {
                Vec::new()
            },
            partial: (config.ftl.partial_page_writes == PartialPageWrites::ReadModifyWrite)
                .then(|| PartialPages::new(g.page_bytes).expect("validated page size")),
            rmw_held: Vec::new(),
            geometry: g,
        }
    }

    /// Sectors that exist before the trace starts, for read-modify-write
    /// (`precondition.footprint_requests = "reads"`: the sectors the trace reads).
    pub fn preload_sectors(&mut self, preload: impl Iterator<Item = (u64, u32)>) {
        if let Some(partial) = &mut self.partial {
            for (lpn, sectors) in preload {
                partial.preload(lpn, sectors);
            }
        }
    }

    /// Simulate the whole trace. `next_record` yields records in trace order; `progress` is
    /// called now and then with the number of records read.
    pub fn run(
        &mut self,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
        progress: &mut dyn FnMut(u64) -> bool,
    ) -> Result<(), Error> {
        self.fetch_next(next_record)?;
        // Paced replay admits without an arrival event.
        self.try_dispatch(0, next_record)?;
        self.flush_buffer(0)?;
        loop {
            // The next open-loop arrival is not kept in the event queue: it is taken when it is
            // due, before queued events of the same time (one heap operation less per request).
            let arrival_due = self
                .next_arrival_ns
                .filter(|at| self.events.peek_time_ns().is_none_or(|t| *at <= t));
            let (now, event) = match arrival_due {
                Some(at) => {
                    self.next_arrival_ns = None;
                    self.events.advance_to(at);
                    (at, Event::Arrival)
                }
                None => match self.events.pop() {
                    Some(next) => next,
                    None => break,
                },
            };
            match event {
                Event::Arrival => self.on_arrival(now, next_record)?,
                Event::LinkWake { key } => self.on_link_wake(now, key),
                Event::ArrayDone { die } => self.on_array_done(now, die),
                Event::Done { die } => self.on_done(now, die)?,
                Event::HostWake => {
                    if self.host_wake_at == Some(now) {
                        self.host_wake_at = None;
                    }
                    self.try_dispatch(now, next_record)?;
                }
                Event::BufferDone { request, pages } => self.on_buffer_done(now, request, pages),
                Event::TransferEnd { die } => self.on_transfer_end(now, die),
                Event::HandoverPass => self.try_dispatch(now, next_record)?,
            }
            if self.rules.transfer_events
                && !matches!(
                    event,
                    Event::Arrival | Event::HostWake | Event::HandoverPass
                )
            {
                // Every other event is the device's: SSDsim's loop makes a hand-over pass.
                self.rules.pass_open_at = Some(now);
                self.dispatch_pending = true;
            }
            if self.dispatch_pending {
                self.dispatch_pending = false;
                self.try_dispatch(now, next_record)?;
            }
            if self.buffer.is_some() {
                self.flush_buffer(now)?;
            }
            if self.events.processed().is_multiple_of(65_536) && !progress(self.records) {
                return Err(Error::Interrupted {
                    records: self.records,
                });
            }
        }
        progress(self.records);
        if self.live_requests != 0 {
            return Err(Error::Workload(format!(
                "internal error: {} requests never completed (host scheduler held them with no timer set)",
                self.live_requests
            )));
        }
        Ok(())
    }

    /// Read the next record into the look-ahead. Open loop: schedule its arrival at its trace
    /// time. Paced replay (closed loop, as fast as possible): it is ready at once and arrives
    /// when it is admitted.
    fn fetch_next(
        &mut self,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        self.lookahead = None;
        self.lookahead_arrived = false;
        if self
            .options
            .max_requests
            .is_some_and(|max| self.records >= max)
        {
            self.note_input_end();
            return Ok(());
        }
        let Some(arrival) = next_record()? else {
            self.note_input_end();
            return Ok(());
        };
        self.records += 1;
        // The look-ahead is translated a few events from now: start loading its mapping entry
        // (usually under way already: it was the previous record's hint). A write also
        // updates the block holding the page's current data: its map entry (prefetched a
        // request ago) gives the block, whose metadata is loaded next.
        let page = self.geometry.page_bytes as u64;
        let lpn = arrival.record.offset_bytes / page;
        self.ftl.prefetch(lpn);
        if let Some(cmt) = &self.cmt {
            cmt.cache.prefetch(lpn);
        }
        self.lookahead_overwrites = match arrival.record.op {
            Op::Write => self.ftl.prefetch_overwritten(lpn),
            Op::Read => None,
        };
        // The record after it: its mapping entry, a whole request ahead.
        if let Some(offset) = arrival.next_offset_hint {
            self.ftl.prefetch(offset / page);
            if let Some(cmt) = &self.cmt {
                cmt.cache.prefetch(offset / page);
            }
        }
        self.lookahead = Some(arrival);
        match self.options.replay {
            Replay::OpenLoop { .. } => {
                // The input pipeline rebases and scales time; a record earlier than its
                // predecessor arrives with it (readers bound how far back a trace may step).
                // A record read late (the host queue was full) keeps its trace time as its
                // arrival: the time it waited to enter the host queue is part of its latency.
                self.last_arrival_ns = arrival.record.time_ns.max(self.last_arrival_ns);
                self.next_arrival_ns = Some(self.last_arrival_ns.max(self.events.now_ns()));
            }
            Replay::ClosedLoop { .. } | Replay::AsFastAsPossible => self.lookahead_arrived = true,
        }
        Ok(())
    }

    /// Remember when the input ended and how many requests were then in the system (once).
    fn note_input_end(&mut self) {
        self.recorder
            .input_ended(self.events.now_ns(), self.live_requests);
    }

    fn on_arrival(
        &mut self,
        now: u64,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        if self.recorder.window_opens_at(self.next_seq) {
            self.open_window(now);
        }
        self.lookahead_arrived = true;
        if self.rules.at_next_event {
            // Into SSDsim's request queue now; handed over in a pass once every arrival of
            // this instant is in.
            self.admit_arrived(now, next_record)?;
            if self.rules.pass_queued_at != Some(now) {
                self.rules.pass_queued_at = Some(now);
                self.events.schedule(now, Event::HandoverPass);
            }
            return Ok(());
        }
        self.try_dispatch(now, next_record)
    }

    /// Admit arrived records into the host queue while it has room.
    fn admit_arrived(
        &mut self,
        now: u64,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        while self.lookahead_arrived && self.has_room() {
            self.admit(now)?;
            self.fetch_next(next_record)?;
        }
        Ok(())
    }

    /// May the arrived look-ahead enter the host queue now?
    fn has_room(&self) -> bool {
        let mut queued = self.host.len();
        if self.queue_includes_outstanding {
            queued += self.outstanding_requests as usize;
        }
        let host_room = queued < self.host_queue_length;
        match self.options.replay {
            Replay::ClosedLoop { outstanding } => {
                host_room && self.live_requests < outstanding as u64
            }
            Replay::OpenLoop { .. } | Replay::AsFastAsPossible => host_room,
        }
    }

    fn open_window(&mut self, now: u64) {
        let models = Models {
            ftl: &self.ftl,
            cmt: self.cmt.as_ref().map(|c| &c.cache),
            buffer: self.buffer.as_ref().map(|b| &b.buffer),
        };
        self.recorder.open_window(now, models);
    }

    /// Turn the look-ahead record into a request in the host queue.
    fn admit(&mut self, now: u64) -> Result<(), Error> {
        let Some(Arrival { record, source, .. }) = self.lookahead.take() else {
            return Ok(());
        };
        self.lookahead_arrived = false;
        let arrival_ns = match self.options.replay {
            Replay::OpenLoop { .. } => self.last_arrival_ns,
            Replay::ClosedLoop { .. } | Replay::AsFastAsPossible => {
                if self.recorder.window_opens_at(self.next_seq) {
                    self.open_window(now);
                }
                now
            }
        };
        let page = self.geometry.page_bytes as u64;
        let first_lpn = record.offset_bytes / page;
        let last_lpn = (record.offset_bytes + record.size_bytes - 1) / page;
        let pages = last_lpn - first_lpn + 1;
        if last_lpn >= self.ftl.logical_pages() {
            return Err(Error::Workload(format!(
                "trace record {} ({:?} of {} bytes at byte offset {}) reaches past the simulated capacity of {} bytes",
                self.next_seq + 1,
                record.op,
                record.size_bytes,
                record.offset_bytes,
                self.ftl.logical_pages() * page
            )));
        }
        let pages = u32::try_from(pages).map_err(|_| {
            Error::Workload(format!("trace record {} is too large", self.next_seq + 1))
        })?;
        if let Some(page) = self.lookahead_overwrites.take() {
            // Its old block's metadata was prefetched when it was read; the reverse-map entry
            // the overwrite invalidates is next.
            self.ftl.prefetch_reverse_entry(page);
        }
        let chips = self.static_map.chips_of_range(first_lpn, pages as u64);
        let id = match self.free_requests.pop() {
            Some(id) => id,
            None => {
                self.requests.push(Request {
                    host: HostRequest {
                        id: 0,
                        seq: 0,
                        arrival_ns: 0,
                        op: Op::Read,
                        offset_bytes: 0,
                        size_bytes: 0,
                        first_lpn: 0,
                        pages: 0,
                        stream: 0,
                        chips,
                    },
                    remaining_pages: 0,
                    slot: 0,
                    live: false,
                    marks: RequestMarks::default(),
                });
                (self.requests.len() - 1) as u32
            }
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        let host = HostRequest {
            id,
            seq,
            arrival_ns,
            op: record.op,
            offset_bytes: record.offset_bytes,
            size_bytes: record.size_bytes,
            first_lpn,
            pages,
            stream: record.stream,
            chips,
        };
        // PIQ's conflict: the chip set meets that of a request outstanding or waiting ahead.
        let mut conflict = false;
        for chip in chips.iter() {
            let claims = &mut self.claims_per_chip[chip as usize];
            conflict |= *claims > 0;
            *claims += 1;
        }
        self.live_requests += 1;
        let view = host_view!(self, now);
        self.host.push(host, &view);
        let marks =
            self.recorder
                .request_admitted(seq, source, record.op, conflict, self.host.len());
        self.requests[id as usize] = Request {
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
    fn try_dispatch(
        &mut self,
        now: u64,
        next_record: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        // SSDsim hands over in passes: whether this one may, decided once at its start (its
        // distribution creates sub-requests; channels turn busy only after the pass).
        if self.rules.at_next_event && self.dies_working == 0 {
            self.rules.pass_open_at = Some(now);
        }
        let pass_allowed = !self.rules.transfer_events || self.pass_allowed(now);
        loop {
            self.admit_arrived(now, next_record)?;
            if self.outstanding_slots >= self.device_queue_depth || self.host.is_empty() {
                break;
            }
            if !pass_allowed
                || (self.rules.one_per_pass && self.rules.last_handover_ns == Some(now))
            {
                break;
            }
            self.pop_buffer.clear();
            let view = host_view!(self, now);
            self.host.pop(&view, &mut self.pop_buffer);
            if self.pop_buffer.is_empty() {
                break;
            }
            let slot = match self.free_slots.pop() {
                Some(s) => s,
                None => {
                    self.slot_members.push(0);
                    (self.slot_members.len() - 1) as u32
                }
            };
            self.slot_members[slot as usize] = self.pop_buffer.len() as u32;
            self.outstanding_slots += 1;
            for i in 0..self.pop_buffer.len() {
                let id = self.pop_buffer[i];
                self.dispatch_request(now, id, slot)?;
            }
            self.rules.last_handover_ns = Some(now);
        }
        if let Some(wake) = self.host.wake_at_ns() {
            let wake = wake.max(now + 1);
            if self.host_wake_at.is_none_or(|pending| wake < pending) {
                self.host_wake_at = Some(wake);
                self.events.schedule(wake, Event::HostWake);
            }
        }
        Ok(())
    }

    /// SSDsim's hand-over rules: may waiting requests go to the device in a pass now?
    /// (`one_per_pass` is checked per request: one pass per distinct time.)
    fn pass_allowed(&self, now: u64) -> bool {
        let r = &self.rules;
        // SSDsim tests its channels' *state* when its clock reaches the event, before it
        // starts new work at that instant: a channel whose transfer ends now is idle, even if
        // another transfer waits for it. So only a transfer begun before now and still running
        // makes a channel busy.
        if r.needs_idle_channels
            && self
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

    /// HIL + FTL: split the request into page operations and queue them on their chips.
    fn dispatch_request(&mut self, now: u64, id: RequestId, slot: u32) -> Result<(), Error> {
        let request = &mut self.requests[id as usize];
        debug_assert!(
            request.live,
            "host scheduler dispatched a request that is not waiting"
        );
        self.recorder.request_dispatched(now, &mut request.marks);
        request.slot = slot;
        let host = request.host;
        self.outstanding_requests += 1;
        for chip in host.chips.iter() {
            self.outstanding_per_chip[chip as usize] += 1;
        }
        if self.buffer.is_some() {
            return self.dispatch_buffered(now, id);
        }
        let page = self.geometry.page_bytes as u64;
        let end = host.offset_bytes + host.size_bytes;
        self.touched_chips.clear();
        for i in 0..host.pages as u64 {
            let lpn = host.first_lpn + i;
            let page_start = lpn * page;
            let bytes = (end.min(page_start + page) - host.offset_bytes.max(page_start)) as u32;
            let (kind, target, remapped) = match host.op {
                Op::Read => {
                    let (target, allocated) = self.ftl.read_host(lpn, &mut self.gc_buffer)?;
                    (TxnKind::Read, target, allocated)
                }
                Op::Write => {
                    if let Some(plane) = self.ftl.write_stall_plane(lpn) {
                        // Its plane's pool is too low: the page waits for an erase there.
                        self.stalled_writes[plane as usize].push_back((id, lpn as u32, bytes));
                        continue;
                    }
                    let rmw = if self.partial.is_some() {
                        self.read_modify_write_source(lpn, host.offset_bytes, end)
                    } else {
                        None
                    };
                    self.gc_buffer.clear();
                    let target = self.ftl.write_with_claims(
                        lpn,
                        self.device.queued_per_chip(),
                        &self.claims_per_chip,
                        &mut self.gc_buffer,
                    )?;
                    if let Some((source, bytes_read, merged)) = rmw {
                        let program = self.host_page_txn(
                            TxnKind::Program,
                            id,
                            lpn as u32,
                            merged,
                            target,
                            now,
                        );
                        self.start_read_modify_write(now, lpn, source, bytes_read, program);
                        self.touched_chips.push(source.chip);
                        self.enqueue_gc_ops(now);
                        continue;
                    }
                    (TxnKind::Program, target, true)
                }
            };
            let txn = self.host_page_txn(kind, id, lpn as u32, bytes, target, now);
            self.enqueue_translated(lpn, remapped, txn);
            self.touched_chips.push(target.chip);
            self.enqueue_gc_ops(now);
        }
        for i in 0..self.touched_chips.len() {
            let chip = self.touched_chips[i];
            self.try_issue(now, chip);
        }
        Ok(())
    }

    /// Read-modify-write: the page's current location and the bytes to read when a write of
    /// bytes `[offset, end)` to `lpn` leaves sectors holding data uncovered.
    #[inline(never)]
    fn read_modify_write_source(
        &mut self,
        lpn: u64,
        offset: u64,
        end: u64,
    ) -> Option<(PhysicalTarget, u32, u32)> {
        let source = self.ftl.mapped_target(lpn);
        let partial = self.partial.as_mut()?;
        let written = partial.sectors(lpn, offset, end);
        let held = partial.held(lpn, source.is_some());
        if !partial.write(lpn, written, source.is_some()) {
            return None;
        }
        // A page that holds sectors is mapped (preconditioning maps what it preloads).
        let source = source?;
        let sector = SECTOR_BYTES as u32;
        // The program then carries the merged page: the sectors read back and the host's
        // (SSDsim's allocate_location sets the write's size to the merged state).
        Some((
            source,
            (held & !written).count_ones() * sector,
            (held | written).count_ones() * sector,
        ))
    }

    /// Queue the read of a partial write's page; its program waits for it (`rmw_read_done`).
    #[inline(never)]
    fn start_read_modify_write(
        &mut self,
        now: u64,
        lpn: u64,
        source: PhysicalTarget,
        bytes: u32,
        program: Transaction,
    ) {
        let read = Transaction {
            kind: TxnKind::Read,
            request: NO_REQUEST,
            chip: source.chip,
            die: source.die,
            plane: source.plane,
            page_in_block: self.ftl.page_in_block(source.ppn),
            bytes,
            program_ns: 0,
            enqueued_ns: now,
            lpn: lpn as u32,
            ppn: source.ppn,
            from_chip: source.chip,
        };
        self.rmw_held.push((source.ppn, program));
        self.enqueue_device(now, read);
    }

    /// A read-modify-write's read finished: its program may go.
    #[inline(never)]
    fn rmw_read_done(&mut self, now: u64, read: Transaction) {
        let at = self
            .rmw_held
            .iter()
            .position(|(ppn, program)| *ppn == read.ppn && program.lpn == read.lpn)
            .expect("every read-modify-write read has a held program");
        let (_, program) = self.rmw_held.swap_remove(at);
        let program = Transaction {
            enqueued_ns: now,
            ..program
        };
        // A host write remaps its page.
        self.enqueue_translated(u64::from(program.lpn), true, program);
        self.try_issue(now, program.chip);
    }

    /// Queue the garbage-collection operations the last FTL write asked for.
    #[inline]
    fn enqueue_gc_ops(&mut self, now: u64) {
        for g in 0..self.gc_buffer.len() {
            let (kind, target) = match self.gc_buffer[g] {
                GcOp::Copyback { target } => (TxnKind::Copyback, target),
                GcOp::Erase { target } => (TxnKind::Erase, target),
            };
            self.enqueue_device(
                now,
                Transaction {
                    kind,
                    request: NO_REQUEST,
                    chip: target.chip,
                    die: target.die,
                    plane: target.plane,
                    page_in_block: target.ppn % self.geometry.pages_per_block,
                    bytes: 0,
                    program_ns: self.program_ns_at(target.ppn),
                    enqueued_ns: now,
                    lpn: NO_LPN,
                    ppn: target.ppn,
                    from_chip: target.chip,
                },
            );
            self.touched_chips.push(target.chip);
        }
        self.gc_buffer.clear();
    }

    /// HIL with the DRAM write buffer: writes go into the buffer, reads it holds are served
    /// from DRAM, the other reads go to flash as without a buffer.
    #[inline(never)]
    fn dispatch_buffered(&mut self, now: u64, id: RequestId) -> Result<(), Error> {
        let host = self.requests[id as usize].host;
        let page = self.geometry.page_bytes as u64;
        let end = host.offset_bytes + host.size_bytes;
        self.touched_chips.clear();
        let (mut in_dram, mut last_done) = (0, now);
        for i in 0..host.pages as u64 {
            let lpn = host.first_lpn + i;
            let Some(b) = &mut self.buffer else {
                break;
            };
            let done = match host.op {
                Op::Write => {
                    b.flush_due = true;
                    match b.buffer.write(now, id, lpn as u32) {
                        Some(done) => done,
                        // Waits for a slot; `on_flush_done` lets it in.
                        None => continue,
                    }
                }
                Op::Read => match b.buffer.read(now, lpn as u32) {
                    Some(done) => done,
                    None => {
                        let page_start = lpn * page;
                        let bytes =
                            (end.min(page_start + page) - host.offset_bytes.max(page_start)) as u32;
                        let (target, allocated) = self.ftl.read_host(lpn, &mut self.gc_buffer)?;
                        let txn =
                            self.host_page_txn(TxnKind::Read, id, lpn as u32, bytes, target, now);
                        self.enqueue_translated(lpn, allocated, txn);
                        self.touched_chips.push(target.chip);
                        self.enqueue_gc_ops(now);
                        continue;
                    }
                },
            };
            in_dram += 1;
            last_done = done;
        }
        if in_dram > 0 {
            self.events.schedule(
                last_done,
                Event::BufferDone {
                    request: id,
                    pages: in_dram,
                },
            );
        }
        for i in 0..self.touched_chips.len() {
            let chip = self.touched_chips[i];
            self.try_issue(now, chip);
        }
        Ok(())
    }

    /// Pages of a request finished in the DRAM write buffer.
    fn on_buffer_done(&mut self, now: u64, id: RequestId, pages: u32) {
        let request = &mut self.requests[id as usize];
        request.remaining_pages -= pages;
        if request.remaining_pages == 0 {
            self.complete(now, id);
            self.dispatch_pending = true;
        }
    }

    /// Send every flush the write buffer's trigger asks for to the FTL and the device queues.
    #[inline(never)]
    fn flush_buffer(&mut self, now: u64) -> Result<(), Error> {
        match &mut self.buffer {
            Some(b) if b.flush_due => b.flush_due = false,
            _ => return Ok(()),
        }
        self.touched_chips.clear();
        while let Some(lpn) = self.buffer.as_mut().and_then(|b| b.buffer.next_flush()) {
            self.gc_buffer.clear();
            let target = self.ftl.write_with_claims(
                u64::from(lpn),
                self.device.queued_per_chip(),
                &self.claims_per_chip,
                &mut self.gc_buffer,
            )?;
            // A program with a logical page and no host request is a buffer flush.
            let txn = Transaction {
                kind: TxnKind::Program,
                request: NO_REQUEST,
                chip: target.chip,
                die: target.die,
                plane: target.plane,
                page_in_block: target.ppn % self.geometry.pages_per_block,
                bytes: self.geometry.page_bytes,
                program_ns: self.program_ns_at(target.ppn),
                enqueued_ns: now,
                lpn,
                ppn: target.ppn,
                from_chip: target.chip,
            };
            self.enqueue_translated(u64::from(lpn), true, txn);
            self.touched_chips.push(target.chip);
            self.enqueue_gc_ops(now);
        }
        for i in 0..self.touched_chips.len() {
            let chip = self.touched_chips[i];
            self.try_issue(now, chip);
        }
        Ok(())
    }

    /// A buffer flush ended (or was cancelled by a newer program of its page): its slot may
    /// take waiting writes.
    fn on_flush_done(&mut self, now: u64, lpn: u32) {
        let Some(b) = &mut self.buffer else { return };
        b.buffer.flush_done(lpn);
        b.flush_due = true;
        let mut admitted = std::mem::take(&mut b.admitted);
        b.buffer.admit_waiting(now, &mut admitted);
        for (request, done) in admitted.drain(..) {
            self.events
                .schedule(done, Event::BufferDone { request, pages: 1 });
        }
        if let Some(b) = &mut self.buffer {
            b.admitted = admitted;
        }
    }

    /// Reads that found stale data, in the FTL's or the write buffer's shadow (None without
    /// `--check-integrity`).
    pub fn integrity_violations(&self) -> Option<u64> {
        let buffer = self
            .buffer
            .as_ref()
            .and_then(|b| b.buffer.integrity_violations())
            .unwrap_or(0);
        self.ftl.integrity_violations().map(|v| v + buffer)
    }

    /// Test hook: the write buffer forgets rewrites of pages being flushed (the integrity
    /// check must then flag reads).
    #[doc(hidden)]
    pub fn lose_buffer_rewrites_for_test(&mut self) {
        if let Some(b) = &mut self.buffer {
            b.buffer.lose_rewrites_for_test();
        }
    }

    /// Array program time at physical page `ppn`: its block's latency under `[variation]`,
    /// else `timing.page_program_ns`.
    /// The flash operation of one page of host request `id`, placed at `target`.
    #[inline]
    fn host_page_txn(
        &self,
        kind: TxnKind,
        id: RequestId,
        lpn: u32,
        bytes: u32,
        target: PhysicalTarget,
        now: u64,
    ) -> Transaction {
        Transaction {
            kind,
            request: id,
            chip: target.chip,
            die: target.die,
            plane: target.plane,
            page_in_block: target.ppn % self.geometry.pages_per_block,
            bytes,
            program_ns: self.program_ns_at(target.ppn),
            enqueued_ns: now,
            lpn,
            ppn: target.ppn,
            from_chip: target.chip,
        }
    }

    #[inline]
    fn program_ns_at(&self, ppn: u32) -> u32 {
        self.ftl
            .program_ns(ppn)
            .unwrap_or(self.page_program_ns as u32)
    }

    /// Queue a host page operation, or park it in the cached mapping table until its
    /// translation page has been read; queue the mapping operations the look-up needs.
    /// `remapped`: the operation gave `lpn` a new physical page (a write, or a read that
    /// allocated under `ftl.unwritten_reads = "allocate"`), so its cached entry becomes dirty.
    #[inline]
    fn enqueue_translated(&mut self, lpn: u64, remapped: bool, txn: Transaction) {
        let now = txn.enqueued_ns;
        let Some(cmt) = &mut self.cmt else {
            self.enqueue_device(now, txn);
            return;
        };
        if cmt.cache.access(lpn, remapped, txn, &mut cmt.ops) == Access::Ready {
            self.enqueue_device(now, txn);
        }
        let Some(cmt) = &mut self.cmt else { return };
        let page_bytes = self.geometry.page_bytes;
        for mapping in cmt.ops.drain(..) {
            let (kind, tpage, bytes) = match mapping {
                MappingOp::Read { tpage } => (
                    TxnKind::MappingRead,
                    tpage,
                    MAPPING_READ_BYTES.min(page_bytes),
                ),
                MappingOp::Program { tpage } => (TxnKind::MappingProgram, tpage, page_bytes),
            };
            let (chip, die, plane) = cmt.cache.location(tpage);
            let mapping_txn = Transaction {
                kind,
                request: tpage,
                chip,
                die,
                plane,
                // Translation pages sit in their planes in page order (MQSim writes the table
                // at start, page after page per plane): page t is the (t / planes)-th of its
                // plane. Only multi-plane grouping reads this.
                page_in_block: (tpage / self.geometry.planes()) % self.geometry.pages_per_block,
                bytes,
                // Translation pages have no block of their own in the model: nominal time.
                program_ns: self.page_program_ns as u32,
                enqueued_ns: txn.enqueued_ns,
                lpn: NO_LPN,
                ppn: 0,
                from_chip: chip,
            };
            self.device
                .enqueue(mapping_txn, &mut device_ctx!(self, now));
            self.recorder
                .queue_length(now, chip, self.device.queued_per_chip()[chip as usize]);
            self.touched_chips.push(chip);
        }
    }

    /// A mapping operation finished: a read releases the page operations that waited for it.
    fn on_mapping_done(&mut self, now: u64, txn: Transaction) {
        let Some(cmt) = &mut self.cmt else { return };
        match txn.kind {
            TxnKind::MappingRead => cmt.cache.read_done(txn.request, &mut cmt.released),
            TxnKind::MappingProgram => cmt.cache.program_done(txn.request),
            _ => return,
        }
        self.touched_chips.clear();
        let mut released_txns = std::mem::take(&mut cmt.released);
        for mut released in released_txns.drain(..) {
            // Its chip wait starts now: the translation was the request's wait, not the chip's.
            released.enqueued_ns = now;
            self.enqueue_device(now, released);
            self.touched_chips.push(released.chip);
        }
        if let Some(cmt) = &mut self.cmt {
            cmt.released = released_txns;
        }
        for i in 0..self.touched_chips.len() {
            let chip = self.touched_chips[i];
            self.try_issue(now, chip);
        }
    }

    /// Start every transaction the device scheduler lets go on `chip`.
    fn try_issue(&mut self, now: u64, chip: u32) {
        while let Some(txn) = self.device.next(chip, &mut device_ctx!(self, now)) {
            self.queue_changed(now, txn.from_chip);
            if txn.from_chip != txn.chip {
                self.recorder.write_moved(now);
            }
            if self.multiplane.enabled() {
                let group = self.multiplane.gather(&mut self.device, txn);
                self.queue_changed(now, txn.chip);
                self.start_companions(now, txn.die);
                self.start(now, group);
            } else {
                self.start(now, txn);
            }
        }
    }

    /// Count the companions of a multi-plane group as started page operations.
    #[inline(never)]
    fn start_companions(&mut self, now: u64, die: u32) {
        let companions = self.multiplane.companions(die);
        if companions.is_empty() {
            return;
        }
        self.recorder.companions_started(now, companions);
        for companion in companions {
            if let Some(id) = companion.host_request() {
                let request = &self.requests[id as usize];
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
    fn enqueue_device(&mut self, now: u64, txn: Transaction) {
        self.device.enqueue(txn, &mut device_ctx!(self, now));
        self.queue_changed(now, txn.chip);
        self.finish_cancelled(now);
    }

    /// Report `chip`'s queue length to the recorder after it may have changed.
    #[inline]
    fn queue_changed(&mut self, now: u64, chip: u32) {
        let len = self.device.queued_per_chip()[chip as usize];
        self.recorder.queue_length(now, chip, len);
    }

    /// Complete the host page of every write the device scheduler cancelled (superseded while
    /// queued: the newer write carries the data, so this page's part of its request is done).
    fn finish_cancelled(&mut self, now: u64) {
        while let Some(txn) = self.cancelled.pop() {
            self.queue_changed(now, txn.chip);
            self.recorder.write_hit(now);
            if txn.request == NO_REQUEST {
                // A buffer flush superseded by a newer flush of its page.
                self.on_flush_done(now, txn.lpn);
                continue;
            }
            let request = &mut self.requests[txn.request as usize];
            request.remaining_pages -= 1;
            if request.remaining_pages == 0 {
                self.complete(now, txn.request);
                self.dispatch_pending = true;
            }
        }
    }

    fn start(&mut self, now: u64, txn: Transaction) {
        let die = txn.die as usize;
        self.die_issue.started(txn.die);
        self.die_txn[die] = txn;
        self.dies_working += 1;
        self.recorder.operation_started(now, &txn);
        let (stage, transfer) = match txn.kind {
            TxnKind::Read | TxnKind::MappingRead => (Stage::ReadCommand, Transfer::ReadCommand),
            TxnKind::Program | TxnKind::MappingProgram => {
                (Stage::ProgramIn, Transfer::ProgramIn { bytes: txn.bytes })
            }
            TxnKind::Copyback => (Stage::CopybackReadCommand, Transfer::Command),
            TxnKind::Erase => (Stage::EraseCommand, Transfer::Command),
        };
        if let Some(id) = txn.host_request() {
            let request = &self.requests[id as usize];
            self.recorder
                .host_page_started(now, &request.marks, request.host.op, txn.enqueued_ns);
        }
        self.ask_path(now, txn.die, stage, transfer);
    }

    /// Ask the interconnect for a path for the die's next transfer.
    fn ask_path(&mut self, now: u64, die: u32, stage: Stage, transfer: Transfer) {
        self.die_stage[die as usize] = stage;
        self.recorder.path_asked(now, die);
        let chip = self.die_txn[die as usize].chip;
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
    fn granted(&mut self, grant: Grant) {
        let die = grant.die;
        let txn = self.die_txn[die as usize];
        if !self.transfer_spans.is_empty() {
            self.transfer_spans[die as usize] = (grant.start_ns, grant.end_ns);
        }
        if let Some(id) = txn.host_request() {
            let request = &mut self.requests[id as usize];
            self.recorder.host_path_granted(
                die,
                grant.start_ns,
                grant.conflict_free,
                &mut request.marks,
                request.host.op,
            );
        }
        let stage = self.die_stage[die as usize];
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
        let end = grant.end_ns;
        if self.rules.transfer_events && stage != Stage::ReadData {
            // Scheduled before the stage's own event, so a program's data is acknowledged
            // first even when tPROG is 0.
            self.events.schedule(end, Event::TransferEnd { die });
        }
        let (at, event) = match stage {
            Stage::ReadCommand | Stage::CopybackReadCommand => {
                (end + self.page_read_ns, Event::ArrayDone { die })
            }
            Stage::ReadData => (end, Event::Done { die }),
            Stage::ProgramIn | Stage::CopybackProgramCommand => {
                (end + txn.program_ns as u64, Event::Done { die })
            }
            Stage::EraseCommand => (end + self.block_erase_ns, Event::Done { die }),
        };
        self.events.schedule(at, event);
    }

    fn on_link_wake(&mut self, now: u64, key: u32) {
        let mut grants = std::mem::take(&mut self.grants);
        let next_wake = self.interconnect.wake(now, key, &mut grants);
        for grant in grants.drain(..) {
            self.granted(grant);
        }
        self.grants = grants;
        if let Some(at) = next_wake {
            self.events.schedule(at, Event::LinkWake { key });
        }
    }

    fn on_array_done(&mut self, now: u64, die: u32) {
        let txn = self.die_txn[die as usize];
        match self.die_stage[die as usize] {
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
    fn on_done(&mut self, now: u64, die: u32) -> Result<(), Error> {
        let txn = self.die_txn[die as usize];
        self.die_issue.finished(die);
        self.dies_working -= 1;
        self.recorder.die_finished(now, txn.chip);
        if self.multiplane.enabled() {
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
    fn group_done(&mut self, now: u64, die: u32, leader: Transaction) -> Result<(), Error> {
        let mut companions = std::mem::take(&mut self.finished_companions);
        self.multiplane.finish(die, &mut companions);
        self.page_done(now, leader)?;
        for companion in companions.drain(..) {
            self.page_done(now, companion)?;
        }
        self.finished_companions = companions;
        Ok(())
    }

    /// One page operation of a finished command is done: its request, translation or flush.
    #[inline]
    fn page_done(&mut self, now: u64, txn: Transaction) -> Result<(), Error> {
        if let Some(id) = txn.host_request() {
            if self.rules.ack_at_transfer && txn.kind == TxnKind::Program {
                // Counted when its data transfer ended (`on_transfer_end`).
                return Ok(());
            }
            let request = &mut self.requests[id as usize];
            request.remaining_pages -= 1;
            if request.remaining_pages == 0 {
                self.complete(now, id);
                self.dispatch_pending = true;
            }
        } else if matches!(txn.kind, TxnKind::MappingRead | TxnKind::MappingProgram) {
            self.on_mapping_done(now, txn);
        } else if txn.kind == TxnKind::Program && txn.lpn != NO_LPN {
            self.on_flush_done(now, txn.lpn);
        } else if txn.kind == TxnKind::Erase && self.ftl.defers_release() {
            self.on_erase_done(now, txn.ppn)?;
        } else if txn.kind == TxnKind::Read && txn.lpn != NO_LPN {
            self.rmw_read_done(now, txn);
        }
        Ok(())
    }

    /// SSDsim's rules: a transfer of `die` ended. Under `device.write_completion =
    /// "data_transferred"` a host program's page (and its multi-plane companions') is done for
    /// its request now, while the die programs on.
    #[inline(never)]
    fn on_transfer_end(&mut self, now: u64, die: u32) {
        if !self.rules.ack_at_transfer || self.die_stage[die as usize] != Stage::ProgramIn {
            return;
        }
        let leader = self.die_txn[die as usize];
        self.ack_program(now, leader);
        if self.multiplane.enabled() {
            for i in 0..self.multiplane.companions(die).len() {
                let companion = self.multiplane.companions(die)[i];
                self.ack_program(now, companion);
            }
        }
    }

    fn ack_program(&mut self, now: u64, txn: Transaction) {
        if txn.kind != TxnKind::Program {
            return;
        }
        if let Some(id) = txn.host_request() {
            let request = &mut self.requests[id as usize];
            request.remaining_pages -= 1;
            if request.remaining_pages == 0 {
                self.complete(now, id);
                self.dispatch_pending = true;
            }
        }
    }

    /// Deferred release (`ftl.gc_block_release = "erase_done"`): a victim's erase completed.
    /// Its block joins the free pool; the host writes waiting for the plane are placed while the
    /// pool allows (MQSim's Start_servicing_writes_for_overfull_plane), then GC may start
    /// another victim.
    #[inline(never)]
    fn on_erase_done(&mut self, now: u64, ppn: u32) -> Result<(), Error> {
        let plane = self.ftl.erase_done(ppn) as usize;
        self.touched_chips.clear();
        while let Some(&(id, lpn, bytes)) = self.stalled_writes[plane].front() {
            if self.ftl.write_stall_plane(lpn as u64).is_some() {
                break;
            }
            self.stalled_writes[plane].pop_front();
            self.gc_buffer.clear();
            let target = self.ftl.write_with_claims(
                lpn as u64,
                self.device.queued_per_chip(),
                &self.claims_per_chip,
                &mut self.gc_buffer,
            )?;
            let txn = self.host_page_txn(TxnKind::Program, id, lpn, bytes, target, now);
            self.enqueue_translated(lpn as u64, true, txn);
            self.touched_chips.push(target.chip);
            self.enqueue_gc_ops(now);
        }
        self.gc_buffer.clear();
        self.ftl.gc_after_erase(plane as u32, &mut self.gc_buffer)?;
        self.enqueue_gc_ops(now);
        for i in 0..self.touched_chips.len() {
            let chip = self.touched_chips[i];
            self.try_issue(now, chip);
        }
        Ok(())
    }

    fn complete(&mut self, now: u64, id: RequestId) {
        let request = self.requests[id as usize];
        debug_assert!(request.live);
        self.requests[id as usize].live = false;
        self.live_requests -= 1;
        let host = request.host;
        self.recorder.request_completed(
            now,
            request.marks,
            host.op,
            host.arrival_ns,
            host.size_bytes,
        );
        for chip in host.chips.iter() {
            self.outstanding_per_chip[chip as usize] -= 1;
            self.claims_per_chip[chip as usize] -= 1;
        }
        self.outstanding_requests -= 1;
        let members = &mut self.slot_members[request.slot as usize];
        *members -= 1;
        if *members == 0 {
            self.outstanding_slots -= 1;
            self.free_slots.push(request.slot);
        }
        let view = host_view!(self, now);
        self.host.complete(&host, &view);
        self.free_requests.push(id);
    }

    /// Gather the results.
    pub fn results(&self) -> SimResults {
        let models = Models {
            ftl: &self.ftl,
            cmt: self.cmt.as_ref().map(|c| &c.cache),
            buffer: self.buffer.as_ref().map(|b| &b.buffer),
        };
        let end = RunEnd {
            records: self.records,
            events: self.events.processed(),
            last_arrival_ns: self.last_arrival_ns,
        };
        self.recorder.results(models, end)
    }
}
