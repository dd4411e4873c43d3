//! The simulation proper: wires trace, host scheduler, HIL, FTL, device scheduler,
//! interconnect and flash timing together around the event queue. The event flow only: every
//! measurement is reported to the recorder (`stats::SimRecorder`).
//!
//! Along a request's life: `admission.rs` (arrival, host queue, hand-over), `dispatch.rs`
//! (HIL and FTL into the device queues), `flash.rs` (dies, paths, array times),
//! `completion.rs` (pages done, request complete); `stuck.rs` says why a run ended with
//! requests left. This file holds the state, the event loop and the results.

use crate::config::Config;
use crate::device::{
    AnyDeviceScheduler, DeviceConfig, DieIssue, MultiPlane, RegionContention, RegionRuns,
    Transaction, TxnKind, WriteBuffer, WriteCompletion, NO_LPN, NO_REQUEST,
};
use crate::engine::EventQueue;
use crate::ftl::cmt::{CmtRules, MappingCache, MappingOp};
use crate::ftl::{Ftl, GcPageMove, PartialPageWrites, PartialPages, PhysicalTarget};
use crate::geometry::{ChipSet, Geometry, StaticMap};
use crate::host::{
    AnyHostScheduler, ChipLoad, HandoverAt, HandoverPerPass, HostRequest, PcieLink, QueueBound,
};
use crate::interconnect::AnyInterconnect;
use crate::replay::{Arrival, Pacing, Replay};
use crate::stats::{Models, RequestMarks, RunEnd, SimRecorder, SimResults};
use crate::trace::Op;
use crate::Error;

/// The host scheduler's view of the device. A macro, not a method: the view borrows fields
/// of the simulation while its host scheduler (another field) is borrowed mutably.
macro_rules! host_view {
    ($sim:ident, $now:expr) => {
        crate::host::HostView {
            now_ns: $now,
            geometry: &$sim.drive.geometry,
            static_map: &$sim.drive.static_map,
            outstanding_per_chip: &$sim.inflight.chip_load.outstanding,
            outstanding: $sim.inflight.outstanding_requests,
            device_free_slots: $sim.inflight.device_queue_depth - $sim.inflight.outstanding_slots,
        }
    };
}

/// What the device scheduler may see and change (see [`crate::device::DeviceContext`]). A
/// macro for the same reason as `host_view!`.
macro_rules! device_ctx {
    ($sim:ident, $now:expr) => {
        crate::device::DeviceContext {
            now_ns: $now,
            die_busy: $sim.dies.die_issue.blocked(),
            held: &$sim.platform.held_programs,
            ftl: &mut $sim.ftl,
            cancelled: &mut $sim.dispatch.cancelled,
        }
    };
}

mod admission;
mod completion;
mod dispatch;
mod flash;
mod ssdsim_loop;
mod stuck;

use admission::Admission;
use dispatch::Dispatch;
use flash::Dies;

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
    /// `host.link`: the device holds the command (and a write's data) of `request`.
    CommandAtDevice { request: u32 },
    /// `host.link`: the completion of `request` reached the host.
    HostCompletion { request: u32 },
    /// `device.scheduler.merged_read_ns`: a page of `request` merged with a read of its page
    /// is done (not an internal event of SSDsim's: no hand-over pass).
    ReadMerged { request: u32 },
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

/// PASS's drive behaviour (docs/models/pass.md): a region's host array times slow with the
/// requests outstanding in it (`device.region_contention`) and with a request's place in a run
/// sent to it in a row (`device.region_runs`); with both on, the factors multiply.
#[derive(Debug, Clone)]
struct RegionSlowdown {
    contention: Option<RegionContention>,
    runs: Option<RegionRuns>,
}

impl RegionSlowdown {
    /// `None` when both keys are off.
    fn new(device: &DeviceConfig, page_bytes: u32, logical_bytes: u64) -> Option<Self> {
        let contention = device
            .region_contention
            .as_ref()
            .map(|c| RegionContention::new(c, page_bytes, logical_bytes));
        let runs = device
            .region_runs
            .as_ref()
            .map(|c| RegionRuns::new(c, logical_bytes));
        (contention.is_some() || runs.is_some()).then_some(RegionSlowdown { contention, runs })
    }

    /// Host request `request`, whose first byte is at `offset_bytes`, was handed to the device.
    fn dispatched(&mut self, request: u32, offset_bytes: u64) {
        if let Some(c) = &mut self.contention {
            c.dispatched(offset_bytes);
        }
        if let Some(r) = &mut self.runs {
            r.dispatched(request, offset_bytes);
        }
    }

    /// That request completed.
    fn completed(&mut self, offset_bytes: u64) {
        if let Some(c) = &mut self.contention {
            c.completed(offset_bytes);
        }
        if let Some(r) = &mut self.runs {
            r.completed(offset_bytes);
        }
    }

    /// Array time of a page operation of host request `request` on logical page `lpn` whose
    /// nominal array time is `ns`: ns x the crowd's factor x the run's, rounded to the ns.
    fn array_ns(&self, ns: u64, request: u32, lpn: u32) -> u64 {
        match (&self.contention, &self.runs) {
            (Some(c), None) => c.array_ns(ns, lpn),
            (c, Some(r)) => {
                let crowd = c.as_ref().map_or(1.0, |c| c.factor_at(lpn));
                (ns as f64 * (crowd * r.factor_of(request))).round() as u64
            }
            (None, None) => ns,
        }
    }
}

/// Run options that are not part of the device config.
#[derive(Debug, Clone)]
pub struct SimOptions {
    pub warmup_requests: u64,
    pub max_requests: Option<u64>,
    pub replay: Replay,
    /// Number of traces mixed (per-source statistics are kept for each).
    pub sources: usize,
    /// Keep the order in which requests are handed to the device (`--dispatch-log`).
    pub dispatch_log: bool,
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

/// The event flow: the models it drives and one struct of state per stage of a request's
/// life, so a stage's hot data sits together and its code borrows only its part.
pub struct Simulation {
    /// The drive's fixed figures.
    drive: Drive,

    // The event queue and the models the flow drives.
    events: EventQueue<Event>,
    pub(crate) host: AnyHostScheduler,
    device: AnyDeviceScheduler,
    pub(crate) interconnect: AnyInterconnect,
    pub(crate) ftl: Ftl,
    /// PASS's drive behaviour, when either of its readings is on: one check when both are off.
    regions: Option<RegionSlowdown>,

    /// Requests in the system and what they hold of the device and its chips.
    inflight: InFlight,
    /// Arrival, host queue, hand-over (admission.rs).
    admission: Admission,
    /// HIL and FTL into the device queues (dispatch.rs).
    dispatch: Dispatch,
    /// The dies and their current operation (flash.rs).
    dies: Dies,
    /// MQSim's and SSDsim's platform rules, each off unless its key is set.
    platform: PlatformRules,

    /// Every measurement: the flow reports what happened, the recorder keeps the figures.
    recorder: SimRecorder,
}

/// The drive's fixed figures: its shape, its static address map and its array times.
struct Drive {
    geometry: Geometry,
    static_map: StaticMap,
    page_read_ns: u64,
    page_program_ns: u64,
    block_erase_ns: u64,
}

/// Requests in the system (a slab) and what they hold of the device and its chips.
struct InFlight {
    requests: Vec<Request>,
    free_requests: Vec<u32>,
    live_requests: u64,
    /// How many requests each device-queue slot's command still holds, and the free slots.
    slot_members: Vec<u32>,
    free_slots: Vec<u32>,
    outstanding_slots: u32,
    outstanding_requests: u32,
    /// `device.queue_depth_requests`.
    device_queue_depth: u32,
    /// Requests outstanding, and waiting or outstanding, per chip (PIQ's view, conflicts).
    chip_load: ChipLoad,
}

impl InFlight {
    /// A free index of the request slab (its entry is overwritten when the request is
    /// admitted).
    fn free_request_id(&mut self, chips: ChipSet) -> u32 {
        if let Some(id) = self.free_requests.pop() {
            return id;
        }
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

    /// Every device-queue slot is taken.
    #[inline]
    fn device_full(&self) -> bool {
        self.outstanding_slots >= self.device_queue_depth
    }

    /// Take a device-queue slot for one command of `members` requests.
    fn take_slot(&mut self, members: u32) -> u32 {
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.slot_members.push(0);
                (self.slot_members.len() - 1) as u32
            }
        };
        self.slot_members[slot as usize] = members;
        self.outstanding_slots += 1;
        slot
    }

    /// A request of `slot`'s command completed: the slot is free once all of them did.
    fn slot_member_done(&mut self, slot: u32) {
        let members = &mut self.slot_members[slot as usize];
        *members -= 1;
        if *members == 0 {
            self.outstanding_slots -= 1;
            self.free_slots.push(slot);
        }
    }
}

/// MQSim's and SSDsim's platform rules (docs/models/ssd-model.md), each off by default.
struct PlatformRules {
    /// SSDsim's hand-over and write-completion rules.
    rules: SsdsimRules,
    /// SSDsim's rules run at the end of an instant, and on its reads (ssdsim_loop.rs).
    ssdsim_loop: ssdsim_loop::SsdsimLoop,
    /// Sector bitmaps of partly written pages (`ftl.partial_page_writes =
    /// "read_modify_write"`), and the host programs waiting for their page's read, with the
    /// physical page that read fetches.
    partial: Option<PartialPages>,
    rmw_held: Vec<(u32, Transaction)>,
    /// `ftl.partial_page_writes = "update_read"`: programs queued on the device that no
    /// scheduler may start yet, as (request, logical page) ...
    held_programs: Vec<(u32, u32)>,
    /// ... and their reads, until each read ends.
    update_reads: Vec<UpdateRead>,
    /// `ftl.partial_page_writes = "update_read"` (else `read_modify_write`'s rule, when
    /// `partial` is kept).
    update_read_rule: bool,
    /// `ftl.gc_page_move = "read_and_program"`: the victims whose pages are moving (a slab:
    /// GC reads and programs carry their victim's index), and the free indexes.
    gc_victims: Option<GcVictims>,
    /// MQSim's PCIe link (`host.link`): commands and data cross it before and after the
    /// device's work.
    link: Option<PcieLink>,
}

/// MQSim's update read (`ftl.partial_page_writes = "update_read"`): the read a partial-page
/// program waits for in the device queue.
#[derive(Debug, Clone, Copy)]
struct UpdateRead {
    read: Transaction,
    /// The program's request and chip.
    request: u32,
    program_chip: u32,
    /// Whether the read is in the device queue (it enters right after its program, which may
    /// first wait for its mapping entry).
    queued: bool,
}

/// GC victims whose pages move by read and program (`ftl.gc_page_move = "read_and_program"`).
#[derive(Debug, Default)]
struct GcVictims {
    victims: Vec<GcVictim>,
    free: Vec<u32>,
    /// The moves of the victim the FTL is reporting (its erase closes the list).
    pending: Vec<(PhysicalTarget, MoveTarget)>,
}

/// Where a GC move's page goes: chosen with its victim, or (`GcOp::MoveRead`) when its read
/// ends.
#[derive(Debug, Clone, Copy)]
enum MoveTarget {
    Chosen(PhysicalTarget),
    AtReadEnd,
}

/// A victim under collection: its erase waits until each of its moves is programmed.
#[derive(Debug, Default)]
struct GcVictim {
    erase: Option<Transaction>,
    /// (source page, target) of each move whose read has not ended yet.
    moves: Vec<(PhysicalTarget, MoveTarget)>,
    /// Moves not yet programmed.
    left: u32,
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
        let logical_bytes = ftl.logical_pages() * u64::from(g.page_bytes);
        let pacing = Pacing::new(options.replay, options.max_requests);
        let ssdsim_loop = ssdsim_loop::SsdsimLoop::new(config, pacing.paced());
        let mut recorder = SimRecorder::new(
            chips,
            dies,
            options.sources,
            options.warmup_requests,
            u64::from(config.host.queue_length_requests),
        );
        if options.dispatch_log {
            recorder.enable_dispatch_log();
        }
        if config.device.region_contention.is_some() || config.device.region_runs.is_some() {
            recorder.enable_region_slowdown();
        }
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
                |entries_per_tpage| ftl.mapped_groups(entries_per_tpage),
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
            events: EventQueue::new(),
            host: config.host.scheduler.build(),
            device: config.device.scheduler.build(&g),
            interconnect: config.interconnect.build(&g, &config.timing),
            ftl,
            regions: RegionSlowdown::new(&config.device, g.page_bytes, logical_bytes),
            inflight: InFlight {
                requests: Vec::with_capacity(1024),
                free_requests: Vec::new(),
                live_requests: 0,
                slot_members: Vec::new(),
                free_slots: Vec::new(),
                outstanding_slots: 0,
                outstanding_requests: 0,
                device_queue_depth: config.device.queue_depth_requests,
                chip_load: ChipLoad::new(chips),
            },
            admission: Admission {
                host_queue: QueueBound::new(&config.host),
                lookahead: None,
                next_arrival_ns: None,
                lookahead_arrived: false,
                lookahead_overwrites: None,
                pacing,
                next_seq: 0,
                host_wake_at: None,
                dispatch_pending: false,
            },
            dispatch: Dispatch {
                pop_buffer: Vec::with_capacity(8),
                gc_buffer: Vec::with_capacity(256),
                stalled_writes,
                touched_chips: Vec::with_capacity(chips),
                cancelled: Vec::with_capacity(8),
                cmt,
                buffer,
            },
            dies: Dies {
                die_issue: DieIssue::new(config.device.die_issue, g.chips(), g.dies_per_chip),
                die_txn: vec![idle_txn; dies],
                die_stage: vec![Stage::ReadCommand; dies],
                grants: Vec::with_capacity(4),
                dies_working: 0,
                transfer_spans: if config.host.handover_needs_idle_channels {
                    vec![(0, 0); dies]
                } else {
                    Vec::new()
                },
                multiplane: MultiPlane::new(
                    config.device.multiplane,
                    config.device.multiplane_mapping_reads,
                    g.dies(),
                    g.planes_per_die,
                ),
                finished_companions: Vec::with_capacity(g.planes_per_die as usize),
            },
            platform: PlatformRules {
                rules: SsdsimRules {
                    at_next_event: config.host.handover_at != HandoverAt::Arrival,
                    one_per_pass: config.host.handover_per_pass == HandoverPerPass::One,
                    needs_idle_channels: config.host.handover_needs_idle_channels,
                    ack_at_transfer: config.device.write_completion
                        == WriteCompletion::DataTransferred,
                    transfer_events: config.host.handover_at != HandoverAt::Arrival
                        || ssdsim_loop.needs_transfer_events()
                        || config.host.handover_needs_idle_channels
                        || config.device.write_completion == WriteCompletion::DataTransferred,
                    pass_open_at: None,
                    pass_queued_at: None,
                    last_handover_ns: None,
                },
                ssdsim_loop,
                partial: config
                    .ftl
                    .partial_page_writes
                    .reads_first()
                    .then(|| PartialPages::new(g.page_bytes).expect("validated page size")),
                rmw_held: Vec::new(),
                held_programs: Vec::new(),
                update_reads: Vec::new(),
                update_read_rule: config.ftl.partial_page_writes == PartialPageWrites::UpdateRead,
                gc_victims: (config.ftl.gc_page_move == GcPageMove::ReadAndProgram)
                    .then(GcVictims::default),
                link: config.host.link.build(),
            },
            recorder,
            drive: Drive {
                static_map: config.static_map(),
                page_read_ns: config.timing.page_read_ns,
                page_program_ns: config.timing.page_program_ns,
                block_erase_ns: config.timing.block_erase_ns,
                geometry: g,
            },
        }
    }

    /// Sectors that exist before the trace starts, for read-modify-write
    /// (`precondition.footprint_requests = "reads"`: the sectors the trace reads).
    pub fn preload_sectors(&mut self, preload: impl Iterator<Item = (u64, u32)>) {
        if let Some(partial) = &mut self.platform.partial {
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
            if let Some(instant) = self.platform.ssdsim_loop.pending {
                // SSDsim's rules: the instant's last event is done when nothing else is due
                // at it.
                let next = match (self.admission.next_arrival_ns, self.events.peek_time_ns()) {
                    (Some(a), Some(e)) => Some(a.min(e)),
                    (a, e) => a.or(e),
                };
                if next.is_none_or(|t| t > instant) {
                    self.end_instant(instant, next_record)?;
                    continue;
                }
            }
            let arrival_due = self
                .admission
                .next_arrival_ns
                .filter(|at| self.events.peek_time_ns().is_none_or(|t| *at <= t));
            let (now, event) = match arrival_due {
                Some(at) => {
                    self.admission.next_arrival_ns = None;
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
                    if self.admission.host_wake_at == Some(now) {
                        self.admission.host_wake_at = None;
                    }
                    self.try_dispatch(now, next_record)?;
                }
                Event::BufferDone { request, pages } => self.on_buffer_done(now, request, pages),
                Event::TransferEnd { die } => self.on_transfer_end(now, die),
                Event::HandoverPass => self.try_dispatch(now, next_record)?,
                Event::CommandAtDevice { request } => self.split_request(now, request)?,
                Event::HostCompletion { request } => self.complete_for_host(now, request),
                Event::ReadMerged { request } => self.on_read_merged(now, request),
            }
            if self.platform.ssdsim_loop.active {
                self.platform.ssdsim_loop.pending = Some(now);
            }
            if self.platform.rules.transfer_events
                && !matches!(
                    event,
                    Event::Arrival
                        | Event::HostWake
                        | Event::HandoverPass
                        | Event::CommandAtDevice { .. }
                        | Event::HostCompletion { .. }
                        | Event::ReadMerged { .. }
                )
            {
                // Every other event is the device's: SSDsim's loop makes a hand-over pass.
                self.platform.rules.pass_open_at = Some(now);
                self.admission.dispatch_pending = true;
            }
            if self.admission.dispatch_pending {
                self.admission.dispatch_pending = false;
                self.try_dispatch(now, next_record)?;
            }
            if self.dispatch.buffer.is_some() {
                self.flush_buffer(now)?;
            }
            if self.events.processed().is_multiple_of(65_536)
                && !progress(self.admission.pacing.records())
            {
                return Err(Error::Interrupted {
                    records: self.admission.pacing.records(),
                });
            }
        }
        progress(self.admission.pacing.records());
        if self.inflight.live_requests != 0 {
            return Err(self.requests_left_error());
        }
        Ok(())
    }

    /// Reads that found stale data, in the FTL's or the write buffer's shadow (None without
    /// `--check-integrity`).
    pub fn integrity_violations(&self) -> Option<u64> {
        let buffer = self
            .dispatch
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
        if let Some(b) = &mut self.dispatch.buffer {
            b.buffer.lose_rewrites_for_test();
        }
    }

    /// The order in which requests were handed to the device (None unless
    /// `SimOptions::dispatch_log`).
    pub fn take_dispatch_log(&mut self) -> Option<crate::stats::DispatchLog> {
        self.recorder.take_dispatch_log()
    }

    /// Gather the results.
    pub fn results(&self) -> SimResults {
        let models = Models {
            ftl: &self.ftl,
            cmt: self.dispatch.cmt.as_ref().map(|c| &c.cache),
            buffer: self.dispatch.buffer.as_ref().map(|b| &b.buffer),
        };
        let end = RunEnd {
            records: self.admission.pacing.records(),
            events: self.events.processed(),
            last_arrival_ns: self.admission.pacing.last_arrival_ns(),
        };
        self.recorder.results(models, end)
    }
}
