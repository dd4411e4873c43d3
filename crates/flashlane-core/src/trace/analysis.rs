//! Workload statistics of a trace, computed in one streaming pass over any [`TraceReader`].
//!
//! Memory does not grow with the number of requests except where noted:
//! - request sizes: one map entry per *distinct* size (exact percentiles; real traces have tens
//!   to hundreds of distinct sizes, and a size is at most 1 GiB);
//! - inter-arrival times: an HDR histogram with 3 significant digits (a few tens of KiB);
//! - footprint: a bitset of 4 KiB pages, allocated in 4 KiB chunks that each cover 128 MiB of one
//!   device's address space, so memory is at most 1/32768 of the address range touched
//!   (32 MiB per TiB) plus a hash entry per chunk;
//! - devices: one entry per device.

use std::collections::{BTreeMap, HashMap};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::{Op, TraceError, TraceReader, TraceRecord};

/// Granularity of the footprint.
pub const FOOTPRINT_PAGE_BYTES: u64 = 4096;
/// Pages per footprint chunk: 512 words of 64 bits, i.e. 4 KiB of bitset covering 128 MiB.
const CHUNK_PAGES: u64 = 512 * 64;

/// Workload statistics of one trace. Times are nanoseconds, sizes bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceStats {
    /// Layout the trace was read as (`TraceFormat::name`).
    pub format: String,
    /// Path of the trace.
    pub path: String,
    /// Requests (reads + writes) read from the trace.
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Sum of the sizes of the read requests.
    pub bytes_read: u64,
    /// Sum of the sizes of the write requests.
    pub bytes_written: u64,
    /// Request size distribution; `null` for an empty trace.
    pub size: Option<SizeStats>,
    /// Gaps between consecutive arrivals (all devices together, in trace order); `null` with
    /// fewer than two requests.
    pub inter_arrival: Option<InterArrivalStats>,
    /// Distinct bytes touched, counted in whole 4 KiB pages per device: a request touches every
    /// page `[offset / 4096, (offset + size - 1) / 4096]`; footprint = pages × 4096.
    pub footprint_bytes: u64,
    /// Arrival time of the first request (trace clock); `null` for an empty trace.
    pub first_ns: Option<u64>,
    /// Arrival time of the last request (trace clock); `null` for an empty trace.
    pub last_ns: Option<u64>,
    /// Last arrival − first arrival (0 for fewer than two requests).
    pub span_ns: u64,
    /// Requests that start exactly where the previous request of the same device ended.
    pub sequential: SequentialStats,
    /// Number of distinct device ids.
    pub device_count: u64,
    /// Requests per device, sorted by device id.
    pub devices: Vec<DeviceRequests>,
    /// Malformed lines the reader skipped (under `--max-bad-lines`).
    pub bad_lines: u64,
    /// Non-data events the reader dropped (trim, discard, flush, sync).
    pub skipped_events: u64,
    /// Records whose time stepped back within the tolerance and were clamped.
    pub clamped_backsteps: u64,
}

/// Request size distribution. Percentiles are nearest-rank and exact: the smallest size `s`
/// such that at least `ceil(q × requests)` requests are no larger than `s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeStats {
    /// Smallest request.
    pub min: u64,
    /// Total bytes / requests.
    pub mean: f64,
    /// Median (nearest rank).
    pub p50: u64,
    /// 90th percentile (nearest rank).
    pub p90: u64,
    /// 99th percentile (nearest rank).
    pub p99: u64,
    /// Largest request.
    pub max: u64,
    /// Non-empty power-of-two buckets: sizes in `[min_bytes, max_bytes]` = `[2^k, 2^(k+1) − 1]`.
    pub histogram: Vec<SizeBucket>,
}

/// One power-of-two size bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeBucket {
    /// Smallest size in the bucket (a power of two).
    pub min_bytes: u64,
    /// Largest size in the bucket (twice `min_bytes`, minus one).
    pub max_bytes: u64,
    /// Requests whose size falls in the bucket.
    pub count: u64,
}

/// Inter-arrival gaps (`time[i] − time[i−1]`, nanoseconds) over the whole trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterArrivalStats {
    /// Number of gaps (requests − 1).
    pub count: u64,
    /// Mean gap, exact: `span_ns / count`.
    pub mean: f64,
    /// Median gap (nearest rank; from a histogram with buckets at most 0.1 % wide, reported as
    /// the bucket's upper edge, never above `max`; exact below 2048 ns).
    pub p50: u64,
    /// 99th-percentile gap (same precision as `p50`).
    pub p99: u64,
    /// Largest gap, exact.
    pub max: u64,
    /// Coefficient of variation: population standard deviation / mean (0 when the mean is 0).
    pub cv: f64,
}

/// Sequential requests: a request is sequential if it starts at the byte where the previous
/// request (or, per direction, the previous request of that direction) *of the same device*
/// ended. The first request of a device is never sequential. Fractions are over all requests,
/// reads or writes respectively (0 when there are none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SequentialStats {
    /// Requests starting where the device's previous request ended.
    pub requests: u64,
    /// `requests` / all requests.
    pub fraction: f64,
    /// Reads starting where the device's previous read ended.
    pub reads: u64,
    /// `reads` / all reads.
    pub read_fraction: f64,
    /// Writes starting where the device's previous write ended.
    pub writes: u64,
    /// `writes` / all writes.
    pub write_fraction: f64,
}

/// Requests addressed to one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRequests {
    /// Device id as the trace gives it.
    pub device: u32,
    /// Requests (reads + writes) to it.
    pub requests: u64,
}

/// Per-device state: request count and where the last request of each kind ended.
#[derive(Default)]
struct DeviceState {
    requests: u64,
    last_end: Option<u64>,
    last_read_end: Option<u64>,
    last_write_end: Option<u64>,
}

/// Set of 4 KiB pages touched, per device, as lazily allocated bitset chunks.
#[derive(Default)]
struct PageSet {
    chunks: HashMap<(u32, u64), Box<[u64; 512]>>,
    pages: u64,
}

impl PageSet {
    /// Marks pages `first..=last` of `device`, counting the ones not seen before.
    fn insert_range(&mut self, device: u32, first: u64, last: u64) {
        let mut page = first;
        while page <= last {
            let chunk_index = page / CHUNK_PAGES;
            let chunk_last = (chunk_index * CHUNK_PAGES + (CHUNK_PAGES - 1)).min(last);
            let chunk = self
                .chunks
                .entry((device, chunk_index))
                .or_insert_with(|| Box::new([0u64; 512]));
            // Whole words at a time: a 1 GiB request is 4096 words, not 262144 bit operations.
            let mut bit = page % CHUNK_PAGES;
            let end_bit = chunk_last % CHUNK_PAGES;
            while bit <= end_bit {
                let word = (bit / 64) as usize;
                let lo = bit % 64;
                let hi = if end_bit / 64 == bit / 64 {
                    end_bit % 64
                } else {
                    63
                };
                let width = hi - lo + 1;
                let mask = if width == 64 {
                    u64::MAX
                } else {
                    ((1u64 << width) - 1) << lo
                };
                self.pages += u64::from((mask & !chunk[word]).count_ones());
                chunk[word] |= mask;
                bit += width;
            }
            if chunk_last == u64::MAX {
                break;
            }
            page = chunk_last + 1;
        }
    }
}

/// Accumulates [`TraceStats`] one record at a time. Use [`TraceStats::from_reader`] for a
/// whole trace; this is for callers that already iterate over records.
pub struct StatsBuilder {
    requests: u64,
    reads: u64,
    writes: u64,
    bytes_read: u64,
    bytes_written: u64,
    sizes: BTreeMap<u64, u64>,
    size_buckets: [u64; 64],
    gaps: Option<Histogram<u64>>,
    gap_count: u64,
    gap_max: u64,
    gap_mean: f64,
    gap_m2: f64,
    first_ns: Option<u64>,
    last_ns: Option<u64>,
    pages: PageSet,
    devices: BTreeMap<u32, DeviceState>,
    sequential: u64,
    sequential_reads: u64,
    sequential_writes: u64,
}

impl Default for StatsBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl StatsBuilder {
    pub fn new() -> Self {
        StatsBuilder {
            requests: 0,
            reads: 0,
            writes: 0,
            bytes_read: 0,
            bytes_written: 0,
            sizes: BTreeMap::new(),
            size_buckets: [0; 64],
            // 3 significant digits; `None` only if the library rejects the arguments.
            gaps: Histogram::new(3).ok(),
            gap_count: 0,
            gap_max: 0,
            gap_mean: 0.0,
            gap_m2: 0.0,
            first_ns: None,
            last_ns: None,
            pages: PageSet::default(),
            devices: BTreeMap::new(),
            sequential: 0,
            sequential_reads: 0,
            sequential_writes: 0,
        }
    }

    /// Adds one request. Records with size 0 are counted as requests but touch no page.
    pub fn add(&mut self, record: &TraceRecord) {
        self.requests += 1;
        let size = record.size_bytes;
        match record.op {
            Op::Read => {
                self.reads += 1;
                self.bytes_read = self.bytes_read.saturating_add(size);
            }
            Op::Write => {
                self.writes += 1;
                self.bytes_written = self.bytes_written.saturating_add(size);
            }
        }
        *self.sizes.entry(size).or_insert(0) += 1;
        let bucket = if size == 0 { 0 } else { size.ilog2() as usize };
        self.size_buckets[bucket] += 1;

        if let Some(last) = self.last_ns {
            // Readers never go back in time; a caller that does gets a zero gap.
            self.add_gap(record.time_ns.saturating_sub(last));
        } else {
            self.first_ns = Some(record.time_ns);
        }
        self.last_ns = Some(record.time_ns);

        let end = record.offset_bytes.saturating_add(size);
        if size > 0 {
            let first_page = record.offset_bytes / FOOTPRINT_PAGE_BYTES;
            let last_page = (end - 1) / FOOTPRINT_PAGE_BYTES;
            self.pages
                .insert_range(record.device, first_page, last_page);
        }

        let device = self.devices.entry(record.device).or_default();
        device.requests += 1;
        if device.last_end == Some(record.offset_bytes) {
            self.sequential += 1;
        }
        device.last_end = Some(end);
        let last_same_op = match record.op {
            Op::Read => &mut device.last_read_end,
            Op::Write => &mut device.last_write_end,
        };
        if *last_same_op == Some(record.offset_bytes) {
            match record.op {
                Op::Read => self.sequential_reads += 1,
                Op::Write => self.sequential_writes += 1,
            }
        }
        *last_same_op = Some(end);
    }

    fn add_gap(&mut self, gap: u64) {
        self.gap_count += 1;
        self.gap_max = self.gap_max.max(gap);
        // Welford's update: numerically stable without holding the gaps.
        let x = gap as f64;
        let delta = x - self.gap_mean;
        self.gap_mean += delta / self.gap_count as f64;
        self.gap_m2 += delta * (x - self.gap_mean);
        if let Some(histogram) = &mut self.gaps {
            // Grows as needed; only a gap beyond ~2^62 ns cannot be held and is clamped.
            if histogram.record(gap).is_err() {
                histogram.saturating_record(gap);
            }
        }
    }

    /// The statistics so far; the reader counters are taken as arguments.
    pub fn finish(
        &self,
        bad_lines: u64,
        skipped_events: u64,
        clamped_backsteps: u64,
    ) -> TraceStats {
        let ratio = |part: u64, whole: u64| {
            if whole == 0 {
                0.0
            } else {
                part as f64 / whole as f64
            }
        };
        let span_ns = match (self.first_ns, self.last_ns) {
            (Some(first), Some(last)) => last.saturating_sub(first),
            _ => 0,
        };
        let size = (self.requests > 0).then(|| SizeStats {
            min: self.sizes.keys().next().copied().unwrap_or(0),
            mean: (u128::from(self.bytes_read) + u128::from(self.bytes_written)) as f64
                / self.requests as f64,
            p50: self.size_percentile(0.50),
            p90: self.size_percentile(0.90),
            p99: self.size_percentile(0.99),
            max: self.sizes.keys().next_back().copied().unwrap_or(0),
            histogram: self
                .size_buckets
                .iter()
                .enumerate()
                .filter(|(_, &count)| count > 0)
                .map(|(k, &count)| SizeBucket {
                    min_bytes: if k == 0 { 0 } else { 1u64 << k },
                    max_bytes: if k == 63 {
                        u64::MAX
                    } else {
                        (1u64 << (k + 1)) - 1
                    },
                    count,
                })
                .collect(),
        });
        let inter_arrival = (self.gap_count > 0).then(|| {
            let mean = span_ns as f64 / self.gap_count as f64;
            let std_dev = (self.gap_m2 / self.gap_count as f64).max(0.0).sqrt();
            let quantile = |q: f64| {
                self.gaps
                    .as_ref()
                    .map_or(self.gap_max, |h| h.value_at_quantile(q))
                    .min(self.gap_max)
            };
            InterArrivalStats {
                count: self.gap_count,
                mean,
                p50: quantile(0.50),
                p99: quantile(0.99),
                max: self.gap_max,
                cv: if mean > 0.0 { std_dev / mean } else { 0.0 },
            }
        });
        TraceStats {
            format: String::new(),
            path: String::new(),
            requests: self.requests,
            reads: self.reads,
            writes: self.writes,
            bytes_read: self.bytes_read,
            bytes_written: self.bytes_written,
            size,
            inter_arrival,
            footprint_bytes: self.pages.pages.saturating_mul(FOOTPRINT_PAGE_BYTES),
            first_ns: self.first_ns,
            last_ns: self.last_ns,
            span_ns,
            sequential: SequentialStats {
                requests: self.sequential,
                fraction: ratio(self.sequential, self.requests),
                reads: self.sequential_reads,
                read_fraction: ratio(self.sequential_reads, self.reads),
                writes: self.sequential_writes,
                write_fraction: ratio(self.sequential_writes, self.writes),
            },
            device_count: self.devices.len() as u64,
            devices: self
                .devices
                .iter()
                .map(|(&device, state)| DeviceRequests {
                    device,
                    requests: state.requests,
                })
                .collect(),
            bad_lines,
            skipped_events,
            clamped_backsteps,
        }
    }

    /// Nearest-rank percentile over the exact size counts.
    fn size_percentile(&self, q: f64) -> u64 {
        let rank = ((q * self.requests as f64).ceil() as u64).clamp(1, self.requests.max(1));
        let mut seen = 0;
        for (&size, &count) in &self.sizes {
            seen += count;
            if seen >= rank {
                return size;
            }
        }
        0
    }
}

impl TraceStats {
    /// Reads `reader` to the end and computes its statistics. Stops at the first read error.
    pub fn from_reader(reader: &mut dyn TraceReader) -> Result<TraceStats, TraceError> {
        let mut builder = StatsBuilder::new();
        while let Some(record) = reader.next_record()? {
            builder.add(&record);
        }
        let mut stats = builder.finish(
            reader.bad_lines(),
            reader.skipped_events(),
            reader.clamped_backsteps(),
        );
        stats.format = reader.format().name().to_string();
        stats.path = reader.path().display().to_string();
        Ok(stats)
    }
}
