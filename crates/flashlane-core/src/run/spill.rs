//! A binary copy of the arrivals the input pipeline produced, so the simulation after the
//! footprint pass replays them instead of reading, filtering, mixing and placing the traces
//! again.
//!
//! [`Recorder`] writes each [`Arrival`] the first pass returns (32 bytes, fixed width: cheaper
//! to write and read back than any variable-length code we tried) to an unnamed temporary
//! file: memory stays constant however long the trace is, and nothing is left on disk, even
//! after a crash (the file is unlinked as soon as it is created). Whenever the counters of a
//! source's report change (records filtered or folded, the reader's bad lines, skipped events,
//! clamped back-steps), their new values follow the arrival, so [`Replay`] gives the same
//! reports at every point. When no temporary file can be written, or the copy would pass
//! [`MAX_SPILL_BYTES`], recording stops and [`Recorder::into_replay`] says so: the caller
//! opens the traces again, which gives the same arrivals.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::replay::Arrival;
use crate::trace::{Op, TraceError, TraceRecord};
use crate::Error;

/// Largest temporary copy kept (bytes, about 130 M arrivals); a longer run reads its traces
/// twice.
pub const MAX_SPILL_BYTES: u64 = 4 << 30;

/// Counters of one source's report that a replay cannot count itself: [filtered, folded, bad
/// lines, skipped events, clamped back-steps].
pub(crate) type Counters = [u64; 5];

// An entry is time and offset (u64), the low 32 bits of the size, stream and device (u32),
// source and flags (u16), little-endian; then the whole size (u64) when it does not fit 32
// bits, then the source's counters (5 x u64) when they changed. An end entry has only flags.
const FLAG_WRITE: u16 = 1;
const FLAG_COUNTERS: u16 = 2;
const FLAG_WIDE_SIZE: u16 = 4;
const FLAG_END: u16 = 8;
const ENTRY_BYTES: usize = 32;
const COUNTER_BYTES: usize = 5 * 8;
const MAX_ENTRY_BYTES: usize = ENTRY_BYTES + 8 + COUNTER_BYTES;

// Below glibc's mmap threshold: freeing a larger buffer raises that threshold, and the
// mapping table's later chunk allocations were then zeroed by hand (3 % more instructions).
const BUFFER_BYTES: usize = 1 << 16;

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(bytes[at..at + 2].try_into().expect("two bytes"))
}

/// A unique unnamed file in the temporary directory (unlinked at once).
fn unnamed_temp_file() -> std::io::Result<File> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "flashlane-spill-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// Keeps a binary copy of the arrivals of a first pass.
pub(crate) struct Recorder {
    /// `None` once recording stopped (no temporary file, a write failed, or too long).
    file: Option<File>,
    /// Entries not yet written to `file` (its own buffer, so an entry is encoded in place).
    buffer: Box<[u8]>,
    used: usize,
    written: u64,
    ended: bool,
    /// Each source's counters when the first pass began, and as last written.
    initial: Vec<Counters>,
    last: Vec<Counters>,
}

impl Recorder {
    /// `initial`: each source's counters before the first arrival.
    pub(crate) fn new(initial: Vec<Counters>) -> Recorder {
        Recorder {
            file: unnamed_temp_file().ok(),
            buffer: vec![0; BUFFER_BYTES].into_boxed_slice(),
            used: 0,
            written: 0,
            ended: false,
            last: initial.clone(),
            initial,
        }
    }

    /// Whether arrivals are still being recorded (their counters need not be gathered
    /// otherwise).
    pub(crate) fn recording(&self) -> bool {
        self.file.is_some() && !self.ended
    }

    /// Write out the buffer; a failed write stops recording.
    #[inline(never)]
    fn flush(&mut self) {
        if let Some(file) = &mut self.file {
            if file.write_all(&self.buffer[..self.used]).is_err() {
                self.file = None;
            }
        }
        self.used = 0;
    }

    /// The next whole entry's room in the buffer.
    #[inline]
    fn entry(&mut self) -> &mut [u8; MAX_ENTRY_BYTES] {
        if self.used + MAX_ENTRY_BYTES > self.buffer.len() {
            self.flush();
        }
        (&mut self.buffer[self.used..self.used + MAX_ENTRY_BYTES])
            .try_into()
            .expect("a whole entry")
    }

    /// Keep the end of the inputs.
    pub(crate) fn end(&mut self) {
        self.ended = true;
        let entry = self.entry();
        entry[30..32].copy_from_slice(&FLAG_END.to_le_bytes());
        self.add(ENTRY_BYTES);
    }

    /// Keep the arrival of `r` from `source` and the source's counters after it (`None`: the
    /// same as after its last arrival). Inlined into the per-record path (codegen-unit
    /// boundaries otherwise move with unrelated code).
    #[inline]
    pub(crate) fn record(&mut self, r: &TraceRecord, source: u16, counters: Option<Counters>) {
        let last = &mut self.last[source as usize];
        // Element by element: comparing the arrays calls `memcmp`.
        let counters = counters.filter(|c| last.iter().zip(c).any(|(a, b)| a != b));
        if let Some(counters) = counters {
            *last = counters;
        }
        let entry = self.entry();
        let mut len = ENTRY_BYTES;
        let mut flags = match r.op {
            Op::Write => FLAG_WRITE,
            Op::Read => 0,
        };
        entry[0..8].copy_from_slice(&r.time_ns.to_le_bytes());
        entry[8..16].copy_from_slice(&r.offset_bytes.to_le_bytes());
        entry[16..20].copy_from_slice(&(r.size_bytes as u32).to_le_bytes());
        entry[20..24].copy_from_slice(&r.stream.to_le_bytes());
        entry[24..28].copy_from_slice(&r.device.to_le_bytes());
        entry[28..30].copy_from_slice(&source.to_le_bytes());
        if r.size_bytes > u64::from(u32::MAX) {
            flags |= FLAG_WIDE_SIZE;
            entry[len..len + 8].copy_from_slice(&r.size_bytes.to_le_bytes());
            len += 8;
        }
        if let Some(counters) = counters {
            flags |= FLAG_COUNTERS;
            for c in counters {
                entry[len..len + 8].copy_from_slice(&c.to_le_bytes());
                len += 8;
            }
        }
        entry[30..32].copy_from_slice(&flags.to_le_bytes());
        self.add(len);
    }

    /// Count an entry of `len` bytes just written into the buffer.
    #[inline]
    fn add(&mut self, len: usize) {
        self.used += len;
        self.written += len as u64;
        if self.written > MAX_SPILL_BYTES {
            self.file = None;
        }
    }

    /// A replay of the recorded arrivals from the first; `None` when the copy is incomplete
    /// (open the traces again instead). `path` names the copy in the error a damaged copy
    /// gives.
    pub(crate) fn into_replay(mut self, path: PathBuf) -> Option<Replay> {
        self.flush();
        let mut file = self.file?;
        file.seek(SeekFrom::Start(0)).ok()?;
        let sources = self.initial.len();
        Some(Replay {
            file,
            path,
            buffer: self.buffer,
            start: 0,
            end: 0,
            file_done: false,
            ended: false,
            counters: self.initial,
            records: vec![0; sources],
        })
    }
}

/// Replays a [`Recorder`]'s copy.
pub(crate) struct Replay {
    file: File,
    path: PathBuf,
    buffer: Box<[u8]>,
    start: usize,
    end: usize,
    file_done: bool,
    ended: bool,
    /// Each source's counters and arrivals so far.
    counters: Vec<Counters>,
    records: Vec<u64>,
}

impl Replay {
    fn damaged(&self, why: &str) -> Error {
        Error::Trace(TraceError::File {
            path: self.path.clone(),
            message: format!(
                "the temporary binary copy of this trace could not be read back: {why}"
            ),
        })
    }

    #[inline(never)]
    fn read_more(&mut self) -> Result<(), Error> {
        self.buffer.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        while self.end < self.buffer.len() {
            match self.file.read(&mut self.buffer[self.end..]) {
                Ok(0) => {
                    self.file_done = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.damaged(&e.to_string())),
            }
        }
        Ok(())
    }

    /// At least one whole entry in the buffer, unless the file is used up.
    #[inline]
    fn fill(&mut self) -> Result<(), Error> {
        if self.end - self.start < MAX_ENTRY_BYTES && !self.file_done {
            self.read_more()?;
        }
        Ok(())
    }

    /// Whether [`Replay::next`] has an arrival or the end to give, rather than a copy used up
    /// without an end (the first pass stopped there: read on from it).
    #[inline]
    pub(crate) fn has_more(&mut self) -> Result<bool, Error> {
        self.fill()?;
        Ok(self.ended || self.end > self.start)
    }

    /// The next arrival; `None` when the inputs ended (see [`Replay::ended`]: then at every
    /// later call) or the copy is used up (see [`Replay::has_more`]). With `hint`, its
    /// `next_offset_hint` is the offset of the arrival after it when that one is already
    /// buffered.
    #[inline]
    pub(crate) fn next(&mut self, hint: bool) -> Result<Option<Arrival>, Error> {
        if self.ended {
            return Ok(None);
        }
        self.fill()?;
        let available = self.end - self.start;
        if available < ENTRY_BYTES {
            return match available {
                0 => Ok(None),
                _ => Err(self.damaged("it ends inside an entry")),
            };
        }
        let e: &[u8; ENTRY_BYTES] = self.buffer[self.start..self.start + ENTRY_BYTES]
            .try_into()
            .expect("a whole entry");
        let flags = u16_at(e, 30);
        if flags & FLAG_END != 0 {
            self.ended = true;
            return Ok(None);
        }
        let source = u16_at(e, 28);
        let mut record = TraceRecord {
            time_ns: u64_at(e, 0),
            offset_bytes: u64_at(e, 8),
            size_bytes: u64::from(u32_at(e, 16)),
            stream: u32_at(e, 20),
            device: u32_at(e, 24),
            op: if flags & FLAG_WRITE != 0 {
                Op::Write
            } else {
                Op::Read
            },
        };
        let mut len = ENTRY_BYTES;
        if flags & (FLAG_WIDE_SIZE | FLAG_COUNTERS) != 0 {
            len += self.extra(flags, source, &mut record)?;
        }
        self.start += len;
        self.records[source as usize] += 1;
        // Only a hint: the next entry when it is whole in the buffer and not the end.
        let next = &self.buffer[self.start..self.end];
        let next_offset_hint =
            (hint && next.len() >= ENTRY_BYTES && u16_at(next, 30) & FLAG_END == 0)
                .then(|| u64_at(next, 8));
        Ok(Some(Arrival {
            record,
            source,
            next_offset_hint,
        }))
    }

    /// An entry's wide size and counters; the bytes they take.
    #[cold]
    fn extra(&mut self, flags: u16, source: u16, record: &mut TraceRecord) -> Result<usize, Error> {
        let extra = usize::from(flags & FLAG_WIDE_SIZE != 0) * 8
            + usize::from(flags & FLAG_COUNTERS != 0) * COUNTER_BYTES;
        let at = self.start + ENTRY_BYTES;
        if self.end - at < extra {
            return Err(self.damaged("it ends inside an entry"));
        }
        let e = &self.buffer[at..at + extra];
        let mut at = 0;
        if flags & FLAG_WIDE_SIZE != 0 {
            record.size_bytes = u64_at(e, 0);
            at += 8;
        }
        if flags & FLAG_COUNTERS != 0 {
            let counters = &mut self.counters[source as usize];
            for (i, c) in counters.iter_mut().enumerate() {
                *c = u64_at(e, at + 8 * i);
            }
        }
        Ok(extra)
    }

    /// Whether the inputs ended (rather than the copy being used up).
    #[cfg(test)]
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Arrivals replayed so far from source `i`, and its counters after the last of them.
    pub(crate) fn report(&self, i: usize) -> (u64, Counters) {
        (self.records[i], self.counters[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Arrivals with extreme and random values (times that step back, offsets near 2^64,
    /// sizes past 32 bits, several sources), each with its source's counters after it, which
    /// move now and then.
    fn script(n: usize, seed: u64) -> Vec<(Arrival, Counters)> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut counters = [[0u64; 5]; 3];
        let mut time_ns = 0u64;
        (0..n)
            .map(|i| {
                let source = rng.random_range(0..3u16);
                let c = &mut counters[source as usize];
                if rng.random_bool(0.05) {
                    let k = rng.random_range(0..5);
                    c[k] += rng.random_range(1..1000);
                }
                time_ns = match i % 7 {
                    0 => time_ns.saturating_sub(rng.random_range(0..1000)),
                    1 => u64::MAX - rng.random_range(0..10),
                    _ => time_ns.wrapping_add(rng.random_range(0..1 << 40)),
                };
                let record = TraceRecord {
                    time_ns,
                    device: if rng.random_bool(0.1) {
                        rng.random()
                    } else {
                        0
                    },
                    stream: if rng.random_bool(0.1) { u32::MAX } else { 3 },
                    offset_bytes: if i % 5 == 0 {
                        u64::MAX - 511
                    } else {
                        rng.random()
                    },
                    size_bytes: match i % 11 {
                        0 => u64::MAX,
                        1 => 1 << 32,
                        _ => rng.random_range(1..1 << 20),
                    },
                    op: if rng.random_bool(0.3) {
                        Op::Write
                    } else {
                        Op::Read
                    },
                };
                let arrival = Arrival {
                    record,
                    source,
                    next_offset_hint: None,
                };
                (arrival, *c)
            })
            .collect()
    }

    fn recorded(steps: &[(Arrival, Counters)], end: bool) -> Replay {
        let mut recorder = Recorder::new(vec![[7, 0, 0, 0, 1]; 3]);
        for (arrival, counters) in steps {
            assert!(recorder.recording());
            recorder.record(&arrival.record, arrival.source, Some(*counters));
        }
        if end {
            recorder.end();
            assert!(!recorder.recording());
        }
        recorder
            .into_replay(PathBuf::from("scripted"))
            .expect("a temporary file can be written")
    }

    /// Every arrival comes back with its source's record count and counters after it, then
    /// the end (every time it is asked again) or, when the copy stopped early, its being used up.
    #[test]
    fn replay_returns_the_arrivals_and_counters_recorded() {
        let steps = script(20_000, 1);
        for (stop, end) in [(steps.len(), true), (1234, false), (0, false), (0, true)] {
            let mut replay = recorded(&steps[..stop], end);
            let mut records = [0u64; 3];
            let mut counters = [[7, 0, 0, 0, 1]; 3];
            for (i, (arrival, after)) in steps[..stop].iter().enumerate() {
                let Some(got) = replay.next(true).unwrap() else {
                    panic!("arrival {i} missing");
                };
                assert_eq!((got.record, got.source), (arrival.record, arrival.source));
                let s = arrival.source as usize;
                records[s] += 1;
                counters[s] = *after;
                for s in 0..3 {
                    assert_eq!(replay.report(s), (records[s], counters[s]), "arrival {i}");
                }
                // The hint is the next arrival's offset when it is known.
                if let Some(hint) = got.next_offset_hint {
                    assert_eq!(hint, steps[i + 1].0.record.offset_bytes);
                }
            }
            for _ in 0..2 {
                assert!(
                    replay.next(true).unwrap().is_none(),
                    "more arrivals than recorded"
                );
                assert_eq!(replay.ended(), end);
            }
        }
    }
}
