//! A binary copy of the records a reader returned, so a second pass over a trace (the
//! simulation after the footprint pass) replays them instead of parsing the text again.
//!
//! [`SpillRecorder`] wraps a reader and writes each record it returns (40 bytes, fixed width:
//! cheaper to write and read back than any variable-length code we tried) to an unnamed
//! temporary file: memory stays constant however long the trace is, and nothing is left on
//! disk, even after a crash (the file is unlinked as soon as it is created).
//! [`SpillRecorder::into_replay`] turns it into a reader that returns the same records with
//! the same counters (bad lines, skipped events, clamped back-steps) at every point, then goes
//! on with the wrapped reader where the first pass stopped. When no temporary file can be
//! written, or the copy would pass [`MAX_SPILL_BYTES`], recording stops and `into_replay`
//! says so: the caller opens the trace again, which gives the same records.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Op, TraceError, TraceFormat, TraceReader, TraceRecord};

/// Largest temporary copy kept (bytes, about 107 M records); a longer trace is parsed twice.
pub const MAX_SPILL_BYTES: u64 = 4 << 30;

// Each entry starts with a little-endian u64 of flags: the op, whether the reader's counters
// changed (three u64 follow), the end of the trace (counters follow, no record). A record is
// then time, offset and size (u64) and device and stream (u32).
const FLAG_WRITE: u64 = 1;
const FLAG_COUNTERS: u64 = 2;
const FLAG_END: u64 = 4;
const RECORD_BYTES: usize = 3 * 8 + 2 * 4;
const COUNTER_BYTES: usize = 3 * 8;
const MAX_ENTRY_BYTES: usize = 8 + COUNTER_BYTES + RECORD_BYTES;

// Below glibc's mmap threshold: freeing a larger buffer raises that threshold, and the
// mapping table's later chunk allocations were then zeroed by hand (3 % more instructions).
const BUFFER_BYTES: usize = 1 << 16;

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
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

/// Passes a reader's records through and keeps a binary copy of them.
pub struct SpillRecorder {
    inner: Box<dyn TraceReader>,
    /// `None` once recording stopped (no temporary file, a write failed, or too long).
    out: Option<BufWriter<File>>,
    written: u64,
    counters: [u64; 3],
    ended: bool,
}

impl SpillRecorder {
    pub fn new(inner: Box<dyn TraceReader>) -> SpillRecorder {
        let out = unnamed_temp_file()
            .ok()
            .map(|file| BufWriter::with_capacity(BUFFER_BYTES, file));
        SpillRecorder {
            inner,
            out,
            written: 0,
            counters: [0; 3],
            ended: false,
        }
    }

    fn encode(&mut self, record: Option<&TraceRecord>) {
        let mut entry = [0u8; MAX_ENTRY_BYTES];
        let mut len = 8;
        let mut flags = 0;
        let counters = self.inner.counters();
        if counters != self.counters || record.is_none() {
            flags |= FLAG_COUNTERS;
            for c in counters {
                entry[len..len + 8].copy_from_slice(&c.to_le_bytes());
                len += 8;
            }
            self.counters = counters;
        }
        match record {
            None => flags |= FLAG_END,
            Some(r) => {
                if r.op == Op::Write {
                    flags |= FLAG_WRITE;
                }
                let e = &mut entry[len..len + RECORD_BYTES];
                e[0..8].copy_from_slice(&r.time_ns.to_le_bytes());
                e[8..16].copy_from_slice(&r.offset_bytes.to_le_bytes());
                e[16..24].copy_from_slice(&r.size_bytes.to_le_bytes());
                e[24..28].copy_from_slice(&r.device.to_le_bytes());
                e[28..32].copy_from_slice(&r.stream.to_le_bytes());
                len += RECORD_BYTES;
            }
        }
        entry[..8].copy_from_slice(&flags.to_le_bytes());
        self.written += len as u64;
        let fits = self.written <= MAX_SPILL_BYTES;
        if let Some(out) = &mut self.out {
            if !fits || out.write_all(&entry[..len]).is_err() {
                self.out = None;
            }
        }
    }

    /// A reader that replays the recorded records from the first, then continues with the
    /// wrapped reader; `None` when the copy is incomplete (open the trace again instead).
    pub fn into_replay(self) -> Option<Box<dyn TraceReader>> {
        let mut file = self.out?.into_inner().ok()?;
        file.seek(SeekFrom::Start(0)).ok()?;
        Some(Box::new(SpillReplay {
            inner: self.inner,
            file,
            buffer: vec![0; BUFFER_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
            file_done: false,
            spill_done: false,
            trace_done: false,
            counters: [0; 3],
        }))
    }
}

impl TraceReader for SpillRecorder {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        let record = self.inner.next_record()?;
        if self.out.is_some() && !self.ended {
            self.ended = record.is_none();
            self.encode(record.as_ref());
        }
        Ok(record)
    }
    fn format(&self) -> TraceFormat {
        self.inner.format()
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
    fn bad_lines(&self) -> u64 {
        self.inner.bad_lines()
    }
    fn skipped_events(&self) -> u64 {
        self.inner.skipped_events()
    }
    fn clamped_backsteps(&self) -> u64 {
        self.inner.clamped_backsteps()
    }
}

/// Replays a [`SpillRecorder`]'s copy, then reads on from the wrapped reader.
struct SpillReplay {
    inner: Box<dyn TraceReader>,
    file: File,
    buffer: Box<[u8]>,
    start: usize,
    end: usize,
    file_done: bool,
    /// The copy is used up: records and counters come from `inner`.
    spill_done: bool,
    /// The copy ended with the end of the trace.
    trace_done: bool,
    counters: [u64; 3],
}

impl SpillReplay {
    fn damaged(&self, why: &str) -> TraceError {
        TraceError::File {
            path: self.inner.path().to_path_buf(),
            message: format!(
                "the temporary binary copy of this trace could not be read back: {why}"
            ),
        }
    }

    /// Make at least one whole entry available unless the file is used up.
    fn fill(&mut self) -> Result<(), TraceError> {
        if self.end - self.start >= MAX_ENTRY_BYTES || self.file_done {
            return Ok(());
        }
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

    /// The next `n` bytes of the copy.
    fn take(&mut self, n: usize) -> Result<&[u8], TraceError> {
        if self.end - self.start < n {
            return Err(self.damaged("it ends inside an entry"));
        }
        self.start += n;
        Ok(&self.buffer[self.start - n..self.start])
    }

    fn next_from_spill(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        self.fill()?;
        if self.start == self.end {
            // The first pass stopped before the end of the trace: read on.
            self.spill_done = true;
            return self.inner.next_record();
        }
        let flags = u64_at(self.take(8)?, 0);
        if flags & FLAG_COUNTERS != 0 {
            let c = self.take(COUNTER_BYTES)?;
            self.counters = [u64_at(c, 0), u64_at(c, 8), u64_at(c, 16)];
        }
        if flags & FLAG_END != 0 {
            self.trace_done = true;
            return Ok(None);
        }
        let e = self.take(RECORD_BYTES)?;
        Ok(Some(TraceRecord {
            time_ns: u64_at(e, 0),
            offset_bytes: u64_at(e, 8),
            size_bytes: u64_at(e, 16),
            device: u32_at(e, 24),
            stream: u32_at(e, 28),
            op: if flags & FLAG_WRITE != 0 {
                Op::Write
            } else {
                Op::Read
            },
        }))
    }
}

impl TraceReader for SpillReplay {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        if self.trace_done {
            Ok(None)
        } else if self.spill_done {
            self.inner.next_record()
        } else {
            self.next_from_spill()
        }
    }
    fn format(&self) -> TraceFormat {
        self.inner.format()
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
    fn bad_lines(&self) -> u64 {
        if self.spill_done {
            self.inner.bad_lines()
        } else {
            self.counters[0]
        }
    }
    fn skipped_events(&self) -> u64 {
        if self.spill_done {
            self.inner.skipped_events()
        } else {
            self.counters[1]
        }
    }
    fn clamped_backsteps(&self) -> u64 {
        if self.spill_done {
            self.inner.clamped_backsteps()
        } else {
            self.counters[2]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Returns scripted records; its counters move as a real reader's would.
    struct Scripted {
        steps: Vec<(TraceRecord, [u64; 3])>,
        next: usize,
        counters: [u64; 3],
    }

    impl TraceReader for Scripted {
        fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
            let Some(&(record, counters)) = self.steps.get(self.next) else {
                return Ok(None);
            };
            self.next += 1;
            self.counters = counters;
            Ok(Some(record))
        }
        fn format(&self) -> TraceFormat {
            TraceFormat::Mqsim
        }
        fn path(&self) -> &Path {
            Path::new("scripted")
        }
        fn bad_lines(&self) -> u64 {
            self.counters[0]
        }
        fn skipped_events(&self) -> u64 {
            self.counters[1]
        }
        fn clamped_backsteps(&self) -> u64 {
            self.counters[2]
        }
    }

    /// Records with extreme and random values: times that step back, offsets near 2^64,
    /// huge sizes, device and stream changes, counters that move now and then.
    fn script(n: usize, seed: u64) -> Vec<(TraceRecord, [u64; 3])> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut counters = [0u64; 3];
        let mut time_ns = 0u64;
        (0..n)
            .map(|i| {
                if rng.random_bool(0.05) {
                    counters[0] += rng.random_range(0..3);
                    counters[1] += rng.random_range(0..1000);
                    counters[2] += 1;
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
                    size_bytes: if i % 11 == 0 {
                        u64::MAX
                    } else {
                        rng.random_range(1..1 << 20)
                    },
                    op: if rng.random_bool(0.3) {
                        Op::Write
                    } else {
                        Op::Read
                    },
                };
                (record, counters)
            })
            .collect()
    }

    fn reader(steps: &[(TraceRecord, [u64; 3])]) -> Box<dyn TraceReader> {
        Box::new(Scripted {
            steps: steps.to_vec(),
            next: 0,
            counters: [0; 3],
        })
    }

    /// Every record and the counters after it, then the end.
    fn drain(reader: &mut dyn TraceReader, n: usize) -> Vec<(Option<TraceRecord>, [u64; 3])> {
        (0..n)
            .map(|_| (reader.next_record().unwrap(), reader.counters()))
            .collect()
    }

    #[test]
    fn replay_returns_what_the_reader_returned_to_the_end() {
        let steps = script(20_000, 1);
        let expected = drain(reader(&steps).as_mut(), steps.len() + 3);
        let mut recorder = SpillRecorder::new(reader(&steps));
        assert_eq!(drain(&mut recorder, steps.len() + 3), expected);
        let mut replay = recorder
            .into_replay()
            .expect("a temporary file can be written");
        assert_eq!(drain(replay.as_mut(), steps.len() + 3), expected);
    }

    #[test]
    fn replay_reads_on_where_the_first_pass_stopped() {
        let steps = script(5_000, 2);
        let expected = drain(reader(&steps).as_mut(), steps.len() + 1);
        for stop in [0, 1, 1234, steps.len() - 1, steps.len()] {
            let mut recorder = SpillRecorder::new(reader(&steps));
            assert_eq!(drain(&mut recorder, stop), expected[..stop]);
            let mut replay = recorder
                .into_replay()
                .expect("a temporary file can be written");
            assert_eq!(
                drain(replay.as_mut(), steps.len() + 1),
                expected,
                "stop {stop}"
            );
        }
    }
}
