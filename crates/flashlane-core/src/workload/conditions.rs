//! The workload conditions a paper's effect depends on, measured on any trace under a preset's
//! static allocation (`flashlane trace stats --preset P`): how pages spread over channels and
//! chips (over the whole trace and in windows), how bursty arrivals are, the offered load
//! against the drive's bandwidth, and the length of sequential runs. The synthetic spec's
//! `hot_units`, `on_off` and `runs` keys set the same conditions (docs/workloads.md).

use std::collections::HashMap;

use serde::Serialize;

use crate::config::{AllocationConfig, Config};
use crate::geometry::{Geometry, StaticMap};
use crate::timing::Timing;
use crate::trace::{self, Op, ReaderOptions, TraceFormat, TraceReader, TraceRecord};
use crate::Error;

/// Window lengths of the windowed figures, ns.
pub const WINDOWS_NS: [u64; 2] = [1_000_000, 100_000_000];

/// A window counts toward `hottest_*_share_max` only with at least this many pages per unit
/// (channel or chip): fewer pages make the hottest share a matter of chance.
const MIN_PAGES_PER_UNIT: u64 = 8;

/// The conditions, every figure defined on its field (docs/workloads.md, "Conditions").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadConditions {
    /// The preset whose allocation and bandwidth the figures use.
    pub preset: String,
    /// The `--set` overrides applied to it (`key=value`, in order).
    pub overrides: Vec<String>,
    /// Why the channel and chip figures may not be where the drive puts the data (dynamic
    /// allocation); absent when the static map is the drive's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_note: Option<String>,
    /// How addresses were taken: `fold` (logical page modulo the logical capacity, as
    /// `--fold-addresses`; unchanged when the trace fits) or `remap` (`--remap-addresses`).
    pub addresses: String,
    /// Share of the trace's page accesses (a request touches every page it overlaps) that
    /// fall on each channel, under the preset's static allocation; channel order.
    pub channel_page_share: Vec<f64>,
    /// The same per chip (index = channel * chips_per_channel + way).
    pub chip_page_share: Vec<f64>,
    /// Figures per window length (1 ms, 100 ms).
    pub windows: Vec<WindowConditions>,
    /// Offered bytes per second (all request bytes over the span from first to last
    /// arrival) divided by the channels' bandwidth (channels x `timing.channel_bytes_per_ns`).
    /// 0 when the span is 0.
    pub offered_load_channel_fraction: f64,
    /// Array time the trace asks for (page reads x tR + page programs x tPROG) over the span,
    /// divided by the dies' time (dies x span): the load on the flash arrays, one operation
    /// per die at a time. 0 when the span is 0.
    pub offered_load_array_fraction: f64,
    /// Requests per sequential run: a request continues a run when it starts where the
    /// previous request of its device ended. Requests / runs.
    pub mean_run_requests: f64,
}

/// Figures over windows of one length, from the first arrival to the last.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowConditions {
    pub window_ns: u64,
    /// Per window, the share of its page accesses on its busiest channel; the mean over
    /// windows weighted by their page accesses (1 / channels when every window is even).
    pub hottest_channel_share_mean: f64,
    /// The largest of those shares over windows with at least 8 page accesses per channel;
    /// None (JSON null) when no window has that many: a share of a handful of pages says
    /// nothing of skew, and 0 would read as "no busiest channel".
    pub hottest_channel_share_max: Option<f64>,
    /// The same two figures per chip.
    pub hottest_chip_share_mean: f64,
    pub hottest_chip_share_max: Option<f64>,
    /// Most arrivals in one window over the mean arrivals per window (empty windows
    /// included): the peak-to-mean arrival rate.
    pub peak_to_mean_arrivals: f64,
}

/// Per window length: the open window's counts and the sums over closed ones.
#[derive(Debug, Clone)]
struct WindowMeter {
    window_ns: u64,
    index: Option<u64>,
    arrivals: u64,
    channel_pages: Vec<u64>,
    chip_pages: Vec<u64>,
    pages: u64,
    hottest_channel_sum: u64,
    hottest_chip_sum: u64,
    pages_sum: u64,
    hottest_channel_max: Option<f64>,
    hottest_chip_max: Option<f64>,
    peak_arrivals: u64,
}

impl WindowMeter {
    fn new(window_ns: u64, channels: usize, chips: usize) -> Self {
        WindowMeter {
            window_ns,
            index: None,
            arrivals: 0,
            channel_pages: vec![0; channels],
            chip_pages: vec![0; chips],
            pages: 0,
            hottest_channel_sum: 0,
            hottest_chip_sum: 0,
            pages_sum: 0,
            hottest_channel_max: None,
            hottest_chip_max: None,
            peak_arrivals: 0,
        }
    }

    fn close(&mut self) {
        let channel = self.channel_pages.iter().copied().max().unwrap_or(0);
        let chip = self.chip_pages.iter().copied().max().unwrap_or(0);
        self.hottest_channel_sum += channel;
        self.hottest_chip_sum += chip;
        self.pages_sum += self.pages;
        let share = |hot: u64| hot as f64 / self.pages as f64;
        let larger = |kept: Option<f64>, new: f64| Some(kept.map_or(new, |k| k.max(new)));
        if self.pages >= MIN_PAGES_PER_UNIT * self.channel_pages.len() as u64 {
            self.hottest_channel_max = larger(self.hottest_channel_max, share(channel));
        }
        if self.pages >= MIN_PAGES_PER_UNIT * self.chip_pages.len() as u64 {
            self.hottest_chip_max = larger(self.hottest_chip_max, share(chip));
        }
        self.peak_arrivals = self.peak_arrivals.max(self.arrivals);
        self.arrivals = 0;
        self.pages = 0;
        self.channel_pages.iter_mut().for_each(|c| *c = 0);
        self.chip_pages.iter_mut().for_each(|c| *c = 0);
    }

    fn arrival(&mut self, time_ns: u64) {
        let index = time_ns / self.window_ns;
        if self.index.is_some_and(|i| i != index) {
            self.close();
        }
        self.index = Some(index);
        self.arrivals += 1;
    }

    fn page(&mut self, channel: usize, chip: usize) {
        self.channel_pages[channel] += 1;
        self.chip_pages[chip] += 1;
        self.pages += 1;
    }

    fn finish(mut self, first_ns: u64, last_ns: u64, requests: u64) -> WindowConditions {
        if self.index.is_some() {
            self.close();
        }
        let windows = last_ns / self.window_ns - first_ns / self.window_ns + 1;
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        WindowConditions {
            window_ns: self.window_ns,
            hottest_channel_share_mean: ratio(self.hottest_channel_sum, self.pages_sum),
            hottest_channel_share_max: self.hottest_channel_max,
            hottest_chip_share_mean: ratio(self.hottest_chip_sum, self.pages_sum),
            hottest_chip_share_max: self.hottest_chip_max,
            peak_to_mean_arrivals: if requests == 0 {
                0.0
            } else {
                self.peak_arrivals as f64 * windows as f64 / requests as f64
            },
        }
    }
}

/// Fed every record of a trace in order; `finish` gives the conditions.
pub struct ConditionsMeter {
    preset: String,
    overrides: Vec<String>,
    placement_note: Option<String>,
    map: StaticMap,
    chips_per_channel: u32,
    page_bytes: u64,
    logical_pages: u64,
    /// Remapped addresses: the distinct pages the trace touches, sorted (a page's rank is its
    /// new number).
    remap: Option<Vec<u64>>,
    channel_pages: Vec<u64>,
    chip_pages: Vec<u64>,
    windows: Vec<WindowMeter>,
    requests: u64,
    bytes: u64,
    array_ns: u128,
    page_read_ns: u64,
    page_program_ns: u64,
    dies: u64,
    channel_bytes_per_s: f64,
    first_ns: Option<u64>,
    last_ns: u64,
    runs: u64,
    /// Where each device's last request ended.
    ends: HashMap<u32, u64>,
}

impl ConditionsMeter {
    /// `logical_pages`: the preset's logical capacity in pages; `remap`: the sorted distinct
    /// pages of the trace, for `--remap-addresses`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        preset: &str,
        overrides: Vec<String>,
        placement_note: Option<String>,
        geometry: &Geometry,
        map: StaticMap,
        timing: &Timing,
        logical_pages: u64,
        remap: Option<Vec<u64>>,
    ) -> Self {
        let channels = geometry.channels as usize;
        let chips = geometry.chips() as usize;
        ConditionsMeter {
            preset: preset.to_string(),
            overrides,
            placement_note,
            map,
            chips_per_channel: geometry.chips_per_channel,
            page_bytes: u64::from(geometry.page_bytes),
            logical_pages: logical_pages.max(1),
            remap,
            channel_pages: vec![0; channels],
            chip_pages: vec![0; chips],
            windows: WINDOWS_NS
                .iter()
                .map(|w| WindowMeter::new(*w, channels, chips))
                .collect(),
            requests: 0,
            bytes: 0,
            array_ns: 0,
            page_read_ns: timing.page_read_ns,
            page_program_ns: timing.page_program_ns,
            dies: u64::from(geometry.dies()),
            channel_bytes_per_s: f64::from(geometry.channels) * timing.channel_bytes_per_ns * 1e9,
            first_ns: None,
            last_ns: 0,
            runs: 0,
            ends: HashMap::new(),
        }
    }

    /// The meter of `config` (preset `preset` with the overrides `shown`, as the user gave
    /// them): its static allocation, channel bandwidth and logical capacity. `remap`: the
    /// trace's pages, [`touched_pages`], for `--remap-addresses`; None folds addresses.
    pub fn for_config(
        preset: &str,
        shown: Vec<String>,
        config: &Config,
        remap: Option<Vec<u64>>,
    ) -> Self {
        let g = &config.geometry;
        // The FTL's logical capacity: the physical pages less the spare share.
        let logical_pages = (g.physical_pages() as f64
            * (1.0 - config.ftl.overprovisioning_fraction))
            .floor() as u64;
        let placement_note =
            matches!(config.ftl.allocation, AllocationConfig::Dynamic {}).then(|| {
                "ftl.allocation.kind = dynamic: the drive places each write on its least loaded \
                 chip; the channel and chip figures use the static map the host assumes \
                 (ftl.host_visible_order), not where the drive puts the data"
                    .to_string()
            });
        ConditionsMeter::new(
            preset,
            shown,
            placement_note,
            g,
            config.static_map(),
            &config.timing,
            logical_pages,
            remap,
        )
    }

    fn logical_page(&self, page: u64) -> u64 {
        match &self.remap {
            // Every page of the trace is in the list (it came from the same trace).
            Some(pages) => pages.binary_search(&page).unwrap_or_else(|i| i) as u64,
            None => page % self.logical_pages,
        }
    }

    pub fn observe(&mut self, record: &TraceRecord) {
        self.requests += 1;
        self.bytes += record.size_bytes;
        self.first_ns.get_or_insert(record.time_ns);
        self.last_ns = self.last_ns.max(record.time_ns);
        for w in &mut self.windows {
            w.arrival(record.time_ns);
        }
        let end = record.offset_bytes + record.size_bytes;
        if self.ends.insert(record.device, end) != Some(record.offset_bytes) {
            self.runs += 1;
        }
        let first = record.offset_bytes / self.page_bytes;
        let last = (end - 1) / self.page_bytes;
        let op_ns = match record.op {
            Op::Read => self.page_read_ns,
            Op::Write => self.page_program_ns,
        };
        self.array_ns += u128::from(op_ns) * u128::from(last - first + 1);
        for page in first..=last {
            let chip = self.map.chip_of(self.logical_page(page));
            let channel = (chip / self.chips_per_channel) as usize;
            self.channel_pages[channel] += 1;
            self.chip_pages[chip as usize] += 1;
            for w in &mut self.windows {
                w.page(channel, chip as usize);
            }
        }
    }

    pub fn finish(self) -> WorkloadConditions {
        let first_ns = self.first_ns.unwrap_or(0);
        let span_ns = self.last_ns - first_ns;
        let pages: u64 = self.channel_pages.iter().sum();
        let share = |v: &[u64]| -> Vec<f64> {
            v.iter()
                .map(|c| {
                    if pages == 0 {
                        0.0
                    } else {
                        *c as f64 / pages as f64
                    }
                })
                .collect()
        };
        WorkloadConditions {
            preset: self.preset.clone(),
            overrides: self.overrides.clone(),
            placement_note: self.placement_note.clone(),
            addresses: if self.remap.is_some() {
                "remap"
            } else {
                "fold"
            }
            .into(),
            channel_page_share: share(&self.channel_pages),
            chip_page_share: share(&self.chip_pages),
            offered_load_channel_fraction: if span_ns == 0 {
                0.0
            } else {
                self.bytes as f64 / (span_ns as f64 / 1e9) / self.channel_bytes_per_s
            },
            offered_load_array_fraction: if span_ns == 0 {
                0.0
            } else {
                self.array_ns as f64 / (span_ns as f64 * self.dies as f64)
            },
            mean_run_requests: if self.runs == 0 {
                0.0
            } else {
                self.requests as f64 / self.runs as f64
            },
            windows: {
                let (last_ns, requests) = (self.last_ns, self.requests);
                self.windows
                    .into_iter()
                    .map(|w| w.finish(first_ns, last_ns, requests))
                    .collect()
            },
        }
    }
}

/// The sorted distinct pages of `page_bytes` that `reader`'s records touch: the first pass of
/// `--remap-addresses`, which numbers them densely.
pub fn touched_pages(reader: &mut dyn TraceReader, page_bytes: u64) -> Result<Vec<u64>, Error> {
    let mut pages = Vec::new();
    while let Some(r) = reader.next_record()? {
        pages
            .extend(r.offset_bytes / page_bytes..=(r.offset_bytes + r.size_bytes - 1) / page_bytes);
        // Bound the memory on long traces: most of their pages repeat.
        if pages.len() > 1 << 22 {
            pages.sort_unstable();
            pages.dedup();
        }
    }
    pages.sort_unstable();
    pages.dedup();
    Ok(pages)
}

/// The conditions of the trace at `path` (a file: with `remap` it is read twice) under preset
/// `preset` with `overrides`: what `flashlane trace stats FILE --preset P` prints, for the
/// trace replayed with its arrival times multiplied by `time_scale` (as `run --time-scale`).
pub fn measure(
    path: &std::path::Path,
    format: Option<TraceFormat>,
    options: &ReaderOptions,
    preset: &str,
    overrides: &[(String, String)],
    remap: bool,
    time_scale: f64,
) -> Result<WorkloadConditions, Error> {
    if !(time_scale.is_finite() && time_scale > 0.0) {
        return Err(Error::Config(format!(
            "time scale must be a positive number, got {time_scale}"
        )));
    }
    let config = Config::from_preset(preset, overrides)?;
    let remap = if remap {
        let mut reader = trace::open_detected(path, format, options)?;
        Some(touched_pages(
            reader.as_mut(),
            u64::from(config.geometry.page_bytes),
        )?)
    } else {
        None
    };
    let shown = overrides.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut meter = ConditionsMeter::for_config(preset, shown, &config, remap);
    let mut reader = trace::open_detected(path, format, options)?;
    while let Some(mut record) = reader.next_record()? {
        if time_scale != 1.0 {
            record.time_ns = (record.time_ns as f64 * time_scale).round() as u64;
        }
        meter.observe(&record);
    }
    Ok(meter.finish())
}
