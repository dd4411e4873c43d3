//! The one recorder the event flow (`sim/`) reports to. The flow says what happened (a
//! request arrived, was handed over, completed; an operation started on a die; a die became
//! busy or idle; a transfer got its path; the measured window opened) and this recorder alone
//! turns those reports into the figures of [`SimResults`]. A new statistic is a field here (or
//! a recorder of its own in `stats/`), not a field of the simulation.

use super::{
    ChipActivityRecorder, ChipStats, CmtStats, ConflictStats, DeviceQueueRecorder,
    DeviceQueueStats, FlashCounts, FlashOperationRecorder, GcStats, HostQueueRecorder, LatencyByOp,
    RegionSlowdownRecorder, RegionSlowdownStats, RequestCounts, RequestFigures, RequestMarks,
    RequestPathRecorder, RequestPathStats, RequestRecorder,
};
use crate::device::{Transaction, WriteBuffer, WriteBufferCounters, WriteBufferStats};
use crate::ftl::cmt::{CmtCounters, MappingCache};
use crate::ftl::{Ftl, FtlCounters, VariationCounters, VariationStats};
use crate::trace::Op;

/// Results of the simulation proper, turned into a [`super::Summary`] by `run`.
#[derive(Debug, Clone)]
pub struct SimResults {
    pub records: u64,
    pub figures: RequestFigures,
    pub sim_time_ns: u64,
    pub chips: ChipStats,
    pub conflicts: ConflictStats,
    pub flash: FlashCounts,
    pub gc: GcStats,
    pub cmt: Option<CmtStats>,
    pub variation: Option<VariationStats>,
    pub waf: f64,
    pub waf_host_gc: f64,
    pub events: u64,
    pub request_paths: RequestPathStats,
    pub per_source: Vec<(RequestCounts, LatencyByOp)>,
    pub device: DeviceQueueStats,
    pub write_buffer: Option<WriteBufferStats>,
    pub region_slowdown: Option<RegionSlowdownStats>,
    pub shape: RunShape,
}

/// How the run went, for its warnings (`stats::warnings`): not figures of the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunShape {
    /// Most requests waiting in the host scheduler at once (after an admission).
    pub host_queue_max: u64,
    /// Open loop: the latest (rebased, scaled) trace time of a request; else 0.
    pub last_arrival_ns: u64,
    /// Start and end of the measured window (start = end when nothing was measured).
    pub window_start_ns: u64,
    pub window_end_ns: u64,
    /// When the input ended (the last record was admitted), and the requests then in the
    /// host queue or the device; `None` if the run never reached the end of its input.
    pub input_end: Option<(u64, u64)>,
}

/// The models whose own counters the recorder reads when the window opens and at the end.
pub struct Models<'a> {
    pub ftl: &'a Ftl,
    pub cmt: Option<&'a MappingCache>,
    pub buffer: Option<&'a WriteBuffer>,
}

/// What the flow knows at the end of the run besides the models.
pub struct RunEnd {
    pub records: u64,
    pub events: u64,
    pub last_arrival_ns: u64,
}

/// The models' counters when the measured window opened (figures are differences from them).
#[derive(Debug, Clone, Default)]
struct AtWindowStart {
    ftl: FtlCounters,
    variation: VariationCounters,
    cmt: CmtCounters,
    buffer: WriteBufferCounters,
}

#[derive(Debug, Clone)]
pub struct SimRecorder {
    warmup_requests: u64,
    /// `u64::MAX` until the window opens.
    window_start_ns: u64,
    at_window_start: AtWindowStart,
    /// When the last flash operation ended.
    last_flash_end_ns: u64,
    requests: RequestRecorder,
    operations: FlashOperationRecorder,
    chips: ChipActivityRecorder,
    queues: DeviceQueueRecorder,
    paths: RequestPathRecorder,
    host_queue: HostQueueRecorder,
    host_queue_max: u64,
    /// PASS's drive behaviour, when a region key is on.
    region_slowdown: Option<RegionSlowdownRecorder>,
    input_end: Option<(u64, u64)>,
    /// The hand-over order, when asked for (`--dispatch-log`).
    dispatch_log: Option<super::DispatchLog>,
}

impl SimRecorder {
    pub fn new(
        chips: usize,
        dies: usize,
        sources: usize,
        warmup_requests: u64,
        host_queue_capacity: u64,
    ) -> Self {
        SimRecorder {
            warmup_requests,
            window_start_ns: u64::MAX,
            at_window_start: AtWindowStart::default(),
            last_flash_end_ns: 0,
            requests: RequestRecorder::new(sources),
            operations: FlashOperationRecorder::new(dies),
            chips: ChipActivityRecorder::new(chips),
            queues: DeviceQueueRecorder::new(chips),
            paths: RequestPathRecorder::default(),
            host_queue: HostQueueRecorder::new(host_queue_capacity),
            host_queue_max: 0,
            region_slowdown: None,
            input_end: None,
            dispatch_log: None,
        }
    }

    /// Keep the order in which requests are handed to the device.
    pub fn enable_dispatch_log(&mut self) {
        self.dispatch_log = Some(super::DispatchLog::default());
    }

    /// Is the hand-over order kept?
    #[inline]
    pub fn logs_dispatches(&self) -> bool {
        self.dispatch_log.is_some()
    }

    /// `members` were handed to the device at `now` as one command (only kept when
    /// [`SimRecorder::logs_dispatches`]).
    pub fn command_dispatched<'a>(
        &mut self,
        now: u64,
        members: impl IntoIterator<Item = &'a crate::host::HostRequest>,
    ) {
        if let Some(log) = &mut self.dispatch_log {
            log.command(now, members);
        }
    }

    /// The hand-over order kept (None unless enabled).
    pub fn take_dispatch_log(&mut self) -> Option<super::DispatchLog> {
        self.dispatch_log.take()
    }

    /// Does the measured window open when the request numbered `seq` (0-based) arrives?
    #[inline]
    pub fn window_opens_at(&self, seq: u64) -> bool {
        seq == self.warmup_requests && self.window_start_ns == u64::MAX
    }

    /// The measured window opens at `now`: remember the models' counters.
    pub fn open_window(&mut self, now: u64, models: Models) {
        self.window_start_ns = now;
        self.at_window_start.ftl = models.ftl.counters();
        self.queues.start_window(now);
        self.host_queue.start_window(now);
        if let Some(variation) = models.ftl.variation() {
            self.at_window_start.variation = variation.counters();
        }
        if let Some(cmt) = models.cmt {
            self.at_window_start.cmt = cmt.counters();
        }
        if let Some(buffer) = models.buffer {
            self.at_window_start.buffer = buffer.counters();
        }
    }

    #[inline]
    fn in_window(&self, now: u64) -> bool {
        now >= self.window_start_ns
    }

    /// The request numbered `seq`, from trace `source`, entered the host queue, which now holds
    /// `host_queue_len`; `conflict`: its chip set met that of a request ahead of it.
    #[inline]
    pub fn request_admitted(
        &mut self,
        seq: u64,
        source: u16,
        op: Op,
        conflict: bool,
        host_queue_len: usize,
    ) -> RequestMarks {
        let measured = seq >= self.warmup_requests;
        if measured && conflict {
            self.requests.conflicts[super::requests::op_index(op)] += 1;
        }
        self.host_queue_max = self.host_queue_max.max(host_queue_len as u64);
        RequestMarks {
            dispatched_ns: 0,
            source,
            measured,
            path_conflict: false,
        }
    }

    /// The host queue holds `len` requests from `now` on (as `HostQueueStats` counts them).
    #[inline]
    pub fn host_queue_length(&mut self, now: u64, len: u64) {
        self.host_queue.length(now, len);
    }

    /// The request was handed to the device at `now`.
    #[inline]
    pub fn request_dispatched(&mut self, now: u64, marks: &mut RequestMarks) {
        marks.dispatched_ns = now;
    }

    /// The request completed at `now`.
    #[inline]
    pub fn request_completed(
        &mut self,
        now: u64,
        marks: RequestMarks,
        op: Op,
        arrival_ns: u64,
        bytes: u64,
    ) {
        if marks.measured {
            self.paths.complete(marks.path_conflict);
        }
        self.requests.completed(now, marks, op, arrival_ns, bytes);
    }

    /// The input ended at `now` with `live` requests in the host queue or the device (once).
    pub fn input_ended(&mut self, now: u64, live: u64) {
        if self.input_end.is_none() {
            self.input_end = Some((now, live));
        }
    }

    /// `txn` starts on its die at `now` (a multi-plane command: its leader).
    #[inline]
    pub fn operation_started(&mut self, now: u64, txn: &Transaction) {
        let counted = self.in_window(now);
        self.operations.started(txn, counted);
    }

    /// The pages a multi-plane command carries besides its leader start at `now`.
    #[inline(never)]
    pub fn companions_started(&mut self, now: u64, companions: &[Transaction]) {
        let counted = self.in_window(now);
        self.operations.multiplane_started(counted);
        for companion in companions {
            self.operations.companion_started(companion, counted);
        }
    }

    /// A page of a host request of `op` started at `now`, queued since `enqueued_ns`.
    #[inline]
    pub fn host_page_started(&mut self, now: u64, marks: &RequestMarks, op: Op, enqueued_ns: u64) {
        self.operations
            .host_page_started(now, marks, op, enqueued_ns);
    }

    /// `die` asks for a path at `now`.
    #[inline]
    pub fn path_asked(&mut self, now: u64, die: u32) {
        self.operations.path_asked(now, die);
    }

    /// A transfer of `die` for a host page got its path from `start_ns`.
    #[inline]
    pub fn host_path_granted(
        &mut self,
        die: u32,
        start_ns: u64,
        conflict_free: bool,
        marks: &mut RequestMarks,
        op: Op,
    ) {
        self.operations
            .host_path_granted(die, start_ns, conflict_free, marks, op);
    }

    /// A die of `chip` starts working at `at` (its first bus cycle).
    #[inline]
    pub fn die_started(&mut self, at: u64, chip: u32) {
        self.chips.die_started(at, chip as usize);
    }

    /// A die of `chip` finished its operation at `now`.
    #[inline]
    pub fn die_finished(&mut self, now: u64, chip: u32) {
        self.last_flash_end_ns = now;
        self.chips
            .die_finished(now, chip as usize, self.window_start_ns);
    }

    /// `chip`'s device queue holds `len` waiting transactions from `now` on.
    #[inline]
    pub fn queue_length(&mut self, now: u64, chip: u32, len: u32) {
        self.queues.queue_length(now, chip, len);
    }

    /// Record PASS's drive behaviour's slowdown (`SimRecorder::host_array_time`) from now on.
    pub fn enable_region_slowdown(&mut self) {
        self.region_slowdown = Some(RegionSlowdownRecorder::default());
    }

    /// A host page operation's array time starts at `now`: `nominal_ns` as the timing gives
    /// it, `actual_ns` as PASS's drive behaviour slowed it.
    #[inline]
    pub fn host_array_time(&mut self, now: u64, nominal_ns: u64, actual_ns: u64) {
        if self.in_window(now) {
            if let Some(r) = &mut self.region_slowdown {
                r.host_array_time(nominal_ns, actual_ns);
            }
        }
    }

    /// A host page write started on another chip than the one it was queued on (SOS).
    #[inline]
    pub fn write_moved(&mut self, now: u64) {
        self.queues.moved_write(now);
    }

    /// A queued write was cancelled by a newer write of its page (SOS).
    #[inline]
    pub fn write_hit(&mut self, now: u64) {
        self.queues.write_hit(now);
    }

    /// The figures of the run.
    pub fn results(&self, models: Models, end: RunEnd) -> SimResults {
        // Not the last event: a host-scheduler timer may fire after the last flash operation.
        let window_end = self.last_flash_end_ns.max(self.requests.last_completion_ns);
        let start = if self.window_start_ns == u64::MAX {
            window_end
        } else {
            self.window_start_ns
        };
        let window = window_end.saturating_sub(start);
        let busy = self.chips.busy_total_ns();
        let active_ns = self.chips.active_total_ns();
        let chips = busy.len() as u32;
        let per_chip: Vec<f64> = busy
            .iter()
            .map(|busy| {
                if window == 0 {
                    0.0
                } else {
                    *busy as f64 / window as f64
                }
            })
            .collect();
        let utilization = per_chip.iter().sum::<f64>() / chips as f64;
        let ftl = models.ftl.counters();
        let base = &self.at_window_start.ftl;
        let host_writes = ftl.host_page_writes - base.host_page_writes;
        let moved = ftl.gc_pages_moved - base.gc_pages_moved;
        let (mut lo, mut hi) = (u32::MAX, 0);
        for c in models.ftl.erase_counts() {
            lo = lo.min(c);
            hi = hi.max(c);
        }
        let flash = &self.operations.flash;
        let waits = &self.operations.waits;
        SimResults {
            variation: models
                .ftl
                .variation()
                .map(|v| v.stats(&self.at_window_start.variation)),
            records: end.records,
            figures: RequestFigures::from_recorders(
                &self.requests,
                &self.host_queue,
                window,
                window_end,
            ),
            sim_time_ns: window,
            chips: ChipStats {
                count: chips,
                utilization,
                active_utilization: if active_ns == 0 {
                    0.0
                } else {
                    busy.iter().sum::<u64>() as f64 / (active_ns as f64 * chips as f64)
                },
                active_ns,
                per_chip_utilization: per_chip,
            },
            conflicts: ConflictStats {
                read: self.requests.conflicts[0],
                write: self.requests.conflicts[1],
                read_chip_wait_us: waits[0].mean_us(waits[0].chip_wait_ns),
                write_chip_wait_us: waits[1].mean_us(waits[1].chip_wait_ns),
                read_path_wait_us: waits[0].mean_us(waits[0].path_wait_ns),
                write_path_wait_us: waits[1].mean_us(waits[1].path_wait_ns),
            },
            flash: flash.clone(),
            gc: GcStats {
                runs: ftl.gc_runs - base.gc_runs,
                pages_moved: moved,
                unmapped_reads: ftl.unmapped_reads - base.unmapped_reads,
                erase_count_spread: hi.saturating_sub(lo.min(hi)),
            },
            cmt: models.cmt.map(|cache| {
                let now = cache.counters();
                let base = &self.at_window_start.cmt;
                let (hits, misses) = (now.hits - base.hits, now.misses - base.misses);
                CmtStats {
                    hits,
                    misses,
                    hit_ratio: if hits + misses == 0 {
                        0.0
                    } else {
                        hits as f64 / (hits + misses) as f64
                    },
                    capacity_entries: u64::from(cache.capacity_entries()),
                    entry_bytes: u64::from(cache.entry_bytes()),
                    entries_per_translation_page: cache.entries_per_translation_page(),
                    writebacks: now.mapping_programs - base.mapping_programs,
                }
            }),
            // Every program over host programs: mapping-table write-backs are flash work too.
            waf: if host_writes == 0 {
                0.0
            } else {
                (host_writes + moved + flash.mapping_programs) as f64 / host_writes as f64
            },
            waf_host_gc: if host_writes == 0 {
                0.0
            } else {
                (host_writes + moved) as f64 / host_writes as f64
            },
            events: end.events,
            request_paths: self.paths.stats(),
            device: self.queues.stats(window_end, busy, active_ns, host_writes),
            write_buffer: models.buffer.map(|b| b.stats(&self.at_window_start.buffer)),
            region_slowdown: self.region_slowdown.as_ref().map(|r| r.stats()),
            shape: RunShape {
                host_queue_max: self.host_queue_max,
                last_arrival_ns: end.last_arrival_ns,
                window_start_ns: start,
                window_end_ns: window_end,
                input_end: self.input_end,
            },
            per_source: self.requests.per_source(),
        }
    }
}
