//! The input pipeline between trace readers and the simulator: device selection, address
//! policy (strict, fold, remap), mixing several traces into one stream, replay timing.

use std::path::PathBuf;

use super::spill::{self, Counters, Recorder};
use crate::replay::{AddressPolicy, Arrival, Replay, SourceReport};
use crate::trace::{
    self, ReaderNotes, ReaderOptions, SpilledStream, TraceFormat, TraceReader, TraceRecord,
};
use crate::workload::{SyntheticReader, SyntheticSpec};
use crate::Error;

/// One trace to replay: a file, or a synthetic workload generated on the fly.
#[derive(Debug, Clone)]
pub struct TraceInput {
    /// The trace file; for a synthetic workload, the name it is reported under.
    pub path: PathBuf,
    /// Layout; `None` = detect from content.
    pub format: Option<TraceFormat>,
    pub options: ReaderOptions,
    /// Keep only records of this device / disk number (`None` = all).
    pub device: Option<u32>,
    /// Generate the records from this spec instead of reading `path`.
    pub synthetic: Option<SyntheticSpec>,
    /// A pipe's bytes, copied once by [`TraceInput::spill_if_stream`] and read from there;
    /// shared by clones, so every run of a comparison reads the one copy.
    pub spilled: Option<SpilledStream>,
}

impl TraceInput {
    pub fn new(path: impl Into<PathBuf>, format: Option<TraceFormat>) -> Self {
        TraceInput {
            path: path.into(),
            format,
            options: ReaderOptions::default(),
            device: None,
            synthetic: None,
            spilled: None,
        }
    }

    /// Copy the input now if it is a pipe, FIFO or standard input (see [`trace::is_stream`]),
    /// so that it can be read more than once; files are left alone.
    pub fn spill_if_stream(&mut self) -> Result<(), Error> {
        if self.synthetic.is_none() && self.spilled.is_none() && trace::is_stream(&self.path) {
            self.spilled = Some(SpilledStream::copy(&self.path)?);
        }
        Ok(())
    }

    /// A synthetic workload reported under `name` (its records are generated, not read).
    pub fn synthetic(name: impl Into<PathBuf>, spec: SyntheticSpec) -> Self {
        TraceInput {
            synthetic: Some(spec),
            ..TraceInput::new(name, None)
        }
    }

    pub(crate) fn open(&self) -> Result<RecordStream, Error> {
        if let Some(spec) = &self.synthetic {
            return Ok(RecordStream::Synthetic(Box::new(SyntheticReader::new(
                spec,
            )?)));
        }
        // One open: a pipe's layout is detected on the bytes its reader then reads.
        let reader = match &self.spilled {
            Some(copy) => copy.open(&self.path, self.format, &self.options)?,
            None => trace::open_detected(&self.path, self.format, &self.options)?,
        };
        Ok(RecordStream::Trace(reader.format(), reader))
    }
}

/// Where a source's records come from.
pub(crate) enum RecordStream {
    Trace(TraceFormat, Box<dyn TraceReader>),
    Synthetic(Box<SyntheticReader>),
}

/// Records a source reads at a time (see [`TraceReader::next_records`]).
const BATCH_RECORDS: usize = 128;

impl RecordStream {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, Error> {
        Ok(match self {
            RecordStream::Trace(_, reader) => reader.next_record()?,
            RecordStream::Synthetic(reader) => reader.next_record()?,
        })
    }

    /// Appends the next records (see [`TraceReader::next_records`]).
    fn next_records(&mut self, out: &mut Vec<TraceRecord>) -> Result<(), Error> {
        match self {
            RecordStream::Trace(_, reader) => reader.next_records(out, BATCH_RECORDS)?,
            RecordStream::Synthetic(reader) => out.extend(reader.next_record()?),
        }
        Ok(())
    }

    fn format_name(&self) -> &'static str {
        match self {
            RecordStream::Trace(format, _) => format.name(),
            RecordStream::Synthetic(_) => "synthetic",
        }
    }

    fn label(&self) -> Option<String> {
        match self {
            RecordStream::Trace(..) => None,
            RecordStream::Synthetic(reader) => Some(reader.label().to_string()),
        }
    }

    fn notes(&self) -> ReaderNotes {
        match self {
            RecordStream::Trace(_, r) => r.notes(),
            RecordStream::Synthetic(_) => ReaderNotes::default(),
        }
    }

    /// (bad lines, skipped events, clamped back-steps) of a trace reader.
    fn reader_counters(&self) -> [u64; 3] {
        match self {
            RecordStream::Trace(_, r) => r.counters(),
            RecordStream::Synthetic(_) => [0; 3],
        }
    }
}

/// Latest arrival time a request may have after rebasing and scaling, ns (about 36.5 years):
/// simulated time then stays far below 2^64 ns, whatever the device does after it.
pub const MAX_ARRIVAL_NS: u64 = 1 << 60;

struct Source {
    input: TraceInput,
    reader: RecordStream,
    base_ns: Option<u64>,
    /// Records read, `read[next]` the look-ahead (none when `next` is past the end: the
    /// trace ended). A batch changes no reader counter after its first record, so the reports
    /// are those of reading one record ahead.
    read: Vec<TraceRecord>,
    next: usize,
    /// The counters of [`Inputs::counters`] may have moved since the recorder last saw them.
    counters_moved: bool,
    address_base: u64,
    span: u64,
    /// Sorted distinct original page numbers (remap policy).
    remap_pages: Option<Vec<u64>>,
    report: SourceReport,
}

impl Source {
    /// The report counters a replay cannot count itself (see [`spill::Counters`]).
    fn counters(&self) -> Counters {
        let [bad, skipped, clamped] = self.reader.reader_counters();
        [
            self.report.filtered_records,
            self.report.folded_records,
            bad,
            skipped,
            clamped,
        ]
    }

    /// The look-ahead record.
    #[inline]
    fn lookahead(&self) -> Option<&TraceRecord> {
        self.read.get(self.next)
    }

    /// The next batch of records in place of the used-up one; true when the trace ended.
    #[inline(never)]
    fn read_more(&mut self) -> Result<bool, Error> {
        self.read.clear();
        self.next = 0;
        self.counters_moved = true;
        self.reader.next_records(&mut self.read)?;
        Ok(self.read.is_empty())
    }
}

/// Merges the traces by (rebased) time and applies the address policy.
pub struct Inputs {
    sources: Vec<Source>,
    policy: AddressPolicy,
    page_bytes: u64,
    time_scale: f64,
    /// First pass of [`Inputs::open_recording`]: the copy of its arrivals.
    recorder: Option<Recorder>,
    /// After [`Inputs::rewind`]: the copy replayed, until used up.
    replay: Option<spill::Replay>,
}

impl Inputs {
    /// Open every trace. The logical space (`capacity_bytes`) is split in equal page-aligned
    /// shares, one per trace, in the order given.
    pub fn open(
        traces: &[TraceInput],
        policy: AddressPolicy,
        replay: Replay,
        capacity_bytes: u64,
        page_bytes: u64,
    ) -> Result<Inputs, Error> {
        Self::open_with(traces, policy, replay, capacity_bytes, page_bytes, false)
    }

    /// As [`Inputs::open`], keeping a binary copy of the arrivals so that [`Inputs::rewind`]
    /// replays them without reading the traces again.
    pub(crate) fn open_recording(
        traces: &[TraceInput],
        policy: AddressPolicy,
        replay: Replay,
        capacity_bytes: u64,
        page_bytes: u64,
    ) -> Result<Inputs, Error> {
        Self::open_with(traces, policy, replay, capacity_bytes, page_bytes, true)
    }

    fn open_with(
        traces: &[TraceInput],
        policy: AddressPolicy,
        replay: Replay,
        capacity_bytes: u64,
        page_bytes: u64,
        record: bool,
    ) -> Result<Inputs, Error> {
        if traces.is_empty() {
            return Err(Error::Workload("no trace given".into()));
        }
        let share = capacity_bytes / traces.len() as u64 / page_bytes * page_bytes;
        let mut sources = Vec::with_capacity(traces.len());
        for (i, input) in traces.iter().enumerate() {
            let mut input = input.clone();
            if policy == AddressPolicy::Remap {
                // The remap pre-pass reads the input before the pass proper: a pipe is copied
                // first. (A recording pass needs no copy: `rewind` replays its own.)
                input.spill_if_stream()?;
            }
            let remap_pages = match policy {
                AddressPolicy::Remap => Some(distinct_pages(&input, page_bytes)?),
                _ => None,
            };
            let reader = input.open()?;
            let report = SourceReport {
                path: input.path.display().to_string(),
                format: reader.format_name().to_string(),
                label: reader.label(),
                address_base_bytes: share * i as u64,
                address_span_bytes: share,
                ..SourceReport::default()
            };
            sources.push(Source {
                input,
                reader,
                base_ns: None,
                read: Vec::with_capacity(BATCH_RECORDS),
                next: 0,
                counters_moved: true,
                address_base: share * i as u64,
                span: share,
                remap_pages,
                report,
            });
        }
        let time_scale = match replay {
            Replay::OpenLoop { time_scale } => time_scale,
            _ => 1.0,
        };
        let mut inputs = Inputs {
            sources,
            policy,
            page_bytes,
            time_scale,
            recorder: None,
            replay: None,
        };
        for i in 0..inputs.sources.len() {
            inputs.refill(i)?;
        }
        if record {
            let initial = (0..inputs.sources.len())
                .map(|i| inputs.counters(i))
                .collect();
            inputs.recorder = Some(Recorder::new(initial));
        }
        Ok(inputs)
    }

    /// Source `i`'s report counters a replay cannot count itself (see [`spill::Counters`]).
    fn counters(&self, i: usize) -> Counters {
        self.sources[i].counters()
    }

    /// The same inputs from their first record again, every counter back to zero: inputs
    /// opened by [`Inputs::open_recording`] replay their binary copy (then read on where this
    /// pass stopped), anything else is opened again. Either way the arrivals are the same.
    pub(crate) fn rewind(mut self) -> Result<Inputs, Error> {
        let path = self.sources[0].input.path.clone();
        if let Some(replay) = self.recorder.take().and_then(|r| r.into_replay(path)) {
            self.replay = Some(replay);
            return Ok(self);
        }
        // No copy: the inputs are opened again, which a pipe cannot be.
        if let Some(source) = self.sources.iter().find(|s| {
            s.input.synthetic.is_none()
                && s.input.spilled.is_none()
                && trace::is_stream(&s.input.path)
        }) {
            return Err(Error::Workload(format!(
                "{}: a pipe or standard input can be read only once, and the copy of its \
                 records for the run after the footprint pass could not be kept (over {} GiB, \
                 or no temporary file in {}); save the trace to a file and pass that",
                source.input.path.display(),
                spill::MAX_SPILL_BYTES >> 30,
                std::env::temp_dir().display()
            )));
        }
        let mut sources = Vec::with_capacity(self.sources.len());
        for source in self.sources {
            let r = source.report;
            let report = SourceReport {
                path: r.path,
                format: r.format,
                label: r.label,
                address_base_bytes: r.address_base_bytes,
                address_span_bytes: r.address_span_bytes,
                ..SourceReport::default()
            };
            sources.push(Source {
                reader: source.input.open()?,
                input: source.input,
                base_ns: None,
                read: Vec::with_capacity(BATCH_RECORDS),
                next: 0,
                counters_moved: true,
                address_base: source.address_base,
                span: source.span,
                remap_pages: source.remap_pages,
                report,
            });
        }
        let mut inputs = Inputs {
            sources,
            recorder: None,
            replay: None,
            ..self
        };
        for i in 0..inputs.sources.len() {
            inputs.refill(i)?;
        }
        Ok(inputs)
    }

    pub fn reports(&self) -> Vec<SourceReport> {
        (0..self.sources.len())
            .map(|i| {
                let mut r = self.sources[i].report.clone();
                let (records, counters) = match &self.replay {
                    Some(replay) => replay.report(i),
                    None => (r.records, self.counters(i)),
                };
                r.records = records;
                [
                    r.filtered_records,
                    r.folded_records,
                    r.bad_lines,
                    r.skipped_events,
                    r.clamped_backsteps,
                ] = counters;
                r
            })
            .collect()
    }

    /// Each source's reader notes (for the run's warnings), over every record read so far.
    pub fn notes(&self) -> Vec<ReaderNotes> {
        self.sources.iter().map(|s| s.reader.notes()).collect()
    }

    /// Move source `i`'s look-ahead to its next record that passes the device filter, reading
    /// on when none is left (the first call finds the first record).
    #[inline]
    fn refill(&mut self, i: usize) -> Result<(), Error> {
        let source = &mut self.sources[i];
        loop {
            match source.read.get(source.next) {
                Some(record) => {
                    if source.input.device.is_none_or(|d| d == record.device) {
                        return Ok(());
                    }
                    source.report.filtered_records += 1;
                    source.counters_moved = true;
                    source.next += 1;
                }
                None => {
                    if source.read_more()? {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// The next record over all traces, earliest rebased time first (ties: first trace).
    pub fn next_arrival(&mut self) -> Result<Option<Arrival>, Error> {
        // Both ways the arrival is returned as built, straight into the caller's result (a
        // local moved into `Ok(..)` was copied).
        if let Some(replay) = &mut self.replay {
            if replay.has_more()? {
                let hint = self.sources.len() == 1 && self.sources[0].remap_pages.is_none();
                return replay.next(hint);
            }
            // The copy is used up: the first pass's inputs stopped here, and go on.
            self.replay = None;
        }
        self.read_arrival()
    }

    /// The end of the inputs, kept by the recorder of a first pass.
    fn ended(&mut self) -> Result<Option<Arrival>, Error> {
        if let Some(recorder) = self.recorder.as_mut().filter(|r| r.recording()) {
            recorder.end();
        }
        Ok(None)
    }

    /// Keep the arrival of `record` from source `i` (a first pass's recorder).
    #[inline]
    fn record(&mut self, record: &TraceRecord, i: usize) {
        if let Some(recorder) = self.recorder.as_mut().filter(|r| r.recording()) {
            let source = &mut self.sources[i];
            // Only a read, a filtered or a folded record moves a counter.
            let counters = source.counters_moved.then(|| source.counters());
            source.counters_moved = false;
            recorder.record(record, i as u16, counters);
        }
    }

    /// [`Inputs::next_arrival`] from the traces themselves.
    fn read_arrival(&mut self) -> Result<Option<Arrival>, Error> {
        let (t, i) = match self.sources.as_mut_slice() {
            // One trace (the usual case): no merge.
            [source] => {
                let Some(&TraceRecord { time_ns, .. }) = source.lookahead() else {
                    return self.ended();
                };
                let base = *source.base_ns.get_or_insert(time_ns);
                (time_ns.saturating_sub(base), 0)
            }
            sources => {
                let mut best: Option<(u64, usize)> = None;
                for (i, source) in sources.iter_mut().enumerate() {
                    if let Some(record) = source.read.get(source.next) {
                        let base = *source.base_ns.get_or_insert(record.time_ns);
                        let t = record.time_ns.saturating_sub(base);
                        if best.is_none_or(|(bt, _)| t < bt) {
                            best = Some((t, i));
                        }
                    }
                }
                let Some(best) = best else {
                    return self.ended();
                };
                best
            }
        };
        let source = &mut self.sources[i];
        let Some(&record) = source.read.get(source.next) else {
            return self.ended();
        };
        let mut record = record;
        source.next += 1;
        self.refill(i)?;
        record.time_ns = if self.time_scale == 1.0 {
            // Unscaled times stay exact integers (f64 holds only 53 bits), and within the
            // limit whenever `t` is.
            if t > MAX_ARRIVAL_NS {
                return Err(self.too_late(i, t, t as f64));
            }
            t
        } else {
            let scaled = (t as f64 * self.time_scale).round();
            if scaled as u64 > MAX_ARRIVAL_NS || scaled > MAX_ARRIVAL_NS as f64 {
                return Err(self.too_late(i, t, scaled));
            }
            scaled as u64
        };
        self.place(i, &mut record)?;
        if self.sources.len() > 1 {
            // In a mix each trace is one application: its own stream for per-stream schedulers.
            record.stream = i as u32;
        }
        let single = self.sources.len() == 1;
        let source = &mut self.sources[i];
        source.report.records += 1;
        let next_offset_hint = match (source.lookahead(), &source.remap_pages) {
            (Some(next), None) if single => Some(next.offset_bytes),
            _ => None,
        };
        self.record(&record, i);
        Ok(Some(Arrival {
            record,
            source: i as u16,
            next_offset_hint,
        }))
    }

    /// The error for a record of source `i` that arrives `t` ns (`scaled` after the time
    /// scale) after the trace's first record, past [`MAX_ARRIVAL_NS`].
    #[cold]
    fn too_late(&self, i: usize, t: u64, scaled: f64) -> Error {
        let source = &self.sources[i];
        Error::Workload(format!(
            "{}: record {} arrives {t} ns after the trace's first record{}, past the \
             2^60 ns (36.5 years) the simulator's clock allows: a wrong time (or --format \
             with the wrong time unit)",
            source.input.path.display(),
            source.report.records + source.report.filtered_records + 1,
            if self.time_scale == 1.0 {
                String::new()
            } else {
                format!(" ({scaled:e} ns at --time-scale {})", self.time_scale)
            }
        ))
    }

    /// Move the record into its trace's share of the logical space under the address policy.
    fn place(&mut self, i: usize, record: &mut TraceRecord) -> Result<(), Error> {
        let page = self.page_bytes;
        let source = &mut self.sources[i];
        let span = source.span;
        if let Some(pages) = &source.remap_pages {
            let first = record.offset_bytes / page;
            let index = pages.binary_search(&first).map_err(|_| {
                Error::Workload(format!(
                    "{}: page {first} was not seen by the remap pass (the trace changed while reading?)",
                    source.input.path.display()
                ))
            })?;
            record.offset_bytes = index as u64 * page + record.offset_bytes % page;
        }
        let end = record.offset_bytes + record.size_bytes;
        if end > span {
            match self.policy {
                AddressPolicy::Fold if record.size_bytes <= span => {
                    let mut offset = record.offset_bytes % span;
                    if offset + record.size_bytes > span {
                        offset = (span - record.size_bytes) / 512 * 512;
                    }
                    record.offset_bytes = offset;
                    source.report.folded_records += 1;
                    source.counters_moved = true;
                }
                _ => {
                    return Err(Error::Workload(format!(
                        "{}: record {} ({:?} of {} bytes at byte offset {}) ends past the {} bytes of logical space this trace may use{}",
                        source.input.path.display(),
                        source.report.records + source.report.filtered_records + 1,
                        record.op,
                        record.size_bytes,
                        record.offset_bytes,
                        span,
                        match self.policy {
                            AddressPolicy::Strict => "; use --fold-addresses or --remap-addresses, or a larger device",
                            AddressPolicy::Remap => "; its footprint is larger than the device",
                            AddressPolicy::Fold => "; the request itself is larger than the space",
                        }
                    )))
                }
            }
        }
        record.offset_bytes += source.address_base;
        Ok(())
    }
}

/// Sorted distinct page numbers a trace touches (the remap pre-pass).
fn distinct_pages(input: &TraceInput, page_bytes: u64) -> Result<Vec<u64>, Error> {
    let mut reader = input.open()?;
    let mut pages = Vec::new();
    // Deduplicate whenever the buffer doubles, so memory stays near twice the footprint.
    let mut limit = 1usize << 20;
    while let Some(record) = reader.next_record()? {
        if input.device.is_some_and(|d| d != record.device) {
            continue;
        }
        let first = record.offset_bytes / page_bytes;
        let last = (record.offset_bytes + record.size_bytes - 1) / page_bytes;
        pages.extend(first..=last);
        if pages.len() > limit {
            pages.sort_unstable();
            pages.dedup();
            limit = limit.max(pages.len() * 2);
        }
    }
    pages.sort_unstable();
    pages.dedup();
    Ok(pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every arrival (without its prefetch hint: a replay may know it less often) and the
    /// reports after it, the reports before the first one leading.
    fn drain(inputs: &mut Inputs) -> (Vec<Arrival>, Vec<Vec<SourceReport>>) {
        let mut arrivals = Vec::new();
        let mut reports = vec![inputs.reports()];
        while let Some(a) = inputs.next_arrival().unwrap() {
            arrivals.push(Arrival {
                next_offset_hint: None,
                ..a
            });
            reports.push(inputs.reports());
        }
        reports.push(inputs.reports());
        (arrivals, reports)
    }

    /// Rewound inputs give every arrival and every counter a fresh open gives, at every point
    /// and wherever the first pass stopped: bad lines skipped, another device filtered out,
    /// addresses folded, two traces mixed.
    #[test]
    fn rewound_inputs_replay_the_trace_exactly() {
        let path =
            std::env::temp_dir().join(format!("flashlane-rewind-{}.mqsim", std::process::id()));
        let mut text = String::new();
        for i in 0..3000u64 {
            match i % 97 {
                13 => text.push_str("not a record\n"),
                _ => {
                    let device = u64::from(i % 5 == 0);
                    let sector = (i * 7919 % 4096) * 8 + if i % 31 == 0 { 1 << 40 } else { 0 };
                    text.push_str(&format!("{} {device} {sector} 8 {}\n", i * 1000, i % 2));
                }
            }
        }
        std::fs::write(&path, text).unwrap();
        let mut input = TraceInput::new(&path, Some(TraceFormat::Mqsim));
        input.options.max_bad_lines = 100;
        input.device = Some(0);
        let mut other = input.clone();
        other.device = Some(1);
        for traces in [vec![input], vec![other.clone(), other]] {
            let open = |recording: bool| {
                let open = if recording {
                    Inputs::open_recording
                } else {
                    Inputs::open
                };
                open(
                    &traces,
                    AddressPolicy::Fold,
                    Replay::default(),
                    1 << 30,
                    4096,
                )
                .unwrap()
            };
            let (expected, expected_reports) = drain(&mut open(false));
            let last = expected_reports.last().unwrap();
            assert!(last[0].bad_lines == 31 && last[0].folded_records > 0);
            assert!(last[0].filtered_records > 0);
            for stop in [0, 1, 500, expected.len()] {
                let mut first = open(true);
                for arrival in expected.iter().take(stop) {
                    let got = first.next_arrival().unwrap().unwrap();
                    assert_eq!((got.record, got.source), (arrival.record, arrival.source));
                }
                let mut again = first.rewind().unwrap();
                let (arrivals, reports) = drain(&mut again);
                assert_eq!(arrivals, expected, "stopped after {stop}");
                assert_eq!(reports, expected_reports, "stopped after {stop}");
            }
        }
        std::fs::remove_file(path).unwrap();
    }
}
