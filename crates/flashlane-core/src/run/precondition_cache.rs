//! The precondition cache: snapshots of preconditioned drives in a directory the user names
//! (`--precondition-cache DIR`, `precondition_cache=`), so that the runs of a sweep that share
//! a drive precondition it once (docs/sweeps.md, "Precondition cache").
//!
//! A snapshot's key is a hash of the drive's inputs (run/drive.rs, as JSON text), the trace's
//! footprint, the format version and the fingerprint of the simulator's source (build.rs).
//! The file holds those inputs and the footprint too, and loading compares them with the
//! run's: a file renamed, copied or met by a hash collision is refused, never loaded as the
//! wrong drive.
//!
//! Files in the directory:
//! - `drive-KEY.snapshot`: 16 bytes of magic, the format version (u32, little-endian), then one
//!   zstd frame with a checksum: the key's text, the footprint, the preconditioning report and
//!   the FTL's state (ftl/snapshot.rs). Written to a temporary file then renamed, so a reader
//!   sees it whole or not at all.
//! - `drive-KEY.lock`: empty; locked while that drive is preconditioned and written, so that
//!   workers (threads or processes) needing the same drive wait for the first one and load
//!   its snapshot rather than precondition it again.
//!
//! A damaged, truncated or foreign snapshot is an error naming the file and what is wrong
//! (delete it to precondition afresh): never a panic, never a drive loaded wrong. Anything but
//! a regular file at a snapshot's name (a directory, a FIFO that would block) is refused
//! unread. A temporary being written is removed by the CLI's signal handler
//! ([`remove_snapshot_temporaries`]).

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use super::drive::DriveInputs;
use crate::ftl::snapshot::{invalid, Decoder, Encoder, STATE_VERSION};
use crate::ftl::{Footprint, Ftl, PreconditionReport, SnapshotReport};
use crate::Error;

/// Start of every snapshot file.
const MAGIC: &[u8; 16] = b"flashlane drive\n";
/// Version of the file layout (this file's and ftl/snapshot.rs's); a file of another version
/// is refused, and the version is in the key, so files of two versions never share a name.
pub const FORMAT_VERSION: u32 = 1_000 + STATE_VERSION;
/// Last value of the stream: a stream cut at a field boundary still ends without it.
const END: u64 = 0x646e_6520_7661_6e73; // "snav end"
/// zstd level: 1 measured best for this data (docs/performance.md, "Precondition cache").
const ZSTD_LEVEL: i32 = 1;
/// Longest key text accepted when reading (a damaged length must not allocate gigabytes).
const MAX_KEY_TEXT: u32 = 1 << 20;

/// What identifies one drive: the text of its inputs and its footprint, and their hash.
struct Key<'a> {
    text: String,
    footprint: Option<&'a [u64]>,
    hex: String,
}

impl<'a> Key<'a> {
    fn of(inputs: &DriveInputs, footprint: Option<&'a Footprint>) -> Result<Self, Error> {
        let text = serde_json::to_string(&serde_json::json!({
            "format": FORMAT_VERSION,
            "source": env!("FLASHLANE_CORE_SOURCE_HASH"),
            "drive": inputs,
        }))
        .map_err(|e| Error::Config(format!("precondition cache: {e}")))?;
        let footprint = footprint.map(Footprint::words);
        let mut hash = Fnv::new();
        hash.write(text.as_bytes());
        match footprint {
            None => hash.write(&[0]),
            Some(words) => {
                hash.write(&[1]);
                for word in words {
                    hash.write(&word.to_le_bytes());
                }
            }
        }
        Ok(Key {
            text,
            footprint,
            hex: format!("{:016x}", hash.0),
        })
    }
}

/// FNV-1a, 64 bits: stable across builds and platforms (a file name must be), no dependency.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Give `ftl`, built by `inputs.build()`, its start state for a trace of `footprint`: loaded
/// from the snapshot in `dir` when there is one, else preconditioned and written there.
pub fn precondition_cached(
    dir: &Path,
    inputs: &DriveInputs,
    ftl: &mut Ftl,
    footprint: Option<&Footprint>,
) -> Result<PreconditionReport, Error> {
    let key = Key::of(inputs, footprint)?;
    let path = dir.join(format!("drive-{}.snapshot", key.hex));
    if let Some(report) = load(&path, &key, ftl)? {
        return Ok(report);
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::Output {
        path: dir.display().to_string(),
        message: format!("cannot create the precondition cache directory: {e}"),
    })?;
    let lock_path = dir.join(format!("drive-{}.lock", key.hex));
    let _lock = Lock::take(&lock_path).map_err(|e| Error::Output {
        path: lock_path.display().to_string(),
        message: format!("cannot lock the precondition cache: {e}"),
    })?;
    // Another worker may have written it while this one waited for the lock.
    if let Some(report) = load(&path, &key, ftl)? {
        return Ok(report);
    }
    let mut report = inputs.precondition(ftl, footprint)?;
    let started = Instant::now();
    write(dir, &path, &key, &report, ftl)?;
    report.snapshot = Some(SnapshotReport {
        key: key.hex,
        file: path.display().to_string(),
        loaded: false,
        write_wall_s: started.elapsed().as_secs_f64(),
    });
    Ok(report)
}

/// The refusal of a snapshot file: one line naming it, what is wrong and what to do.
fn refused(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::Config(format!(
        "precondition snapshot {}: {why}; delete the file to precondition the drive afresh",
        path.display()
    ))
}

/// The refusal of something other than a regular file where a snapshot belongs (a directory,
/// a FIFO that would block the run forever, a device): it is not ours to delete.
fn not_a_file(path: &Path, kind: &std::fs::FileType) -> Error {
    #[cfg(unix)]
    let what = {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "a device"
        }
    };
    #[cfg(not(unix))]
    let what = if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    };
    Error::Config(format!(
        "precondition snapshot {}: {what} where the snapshot file belongs; move it away or \
         name another precondition cache directory",
        path.display()
    ))
}

/// Open `path` for reading without waiting on it: a FIFO opened this way does not block
/// until a writer comes, so it can be refused.
fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// What a read error inside the compressed stream means.
fn damage(error: io::Error) -> String {
    match error.kind() {
        io::ErrorKind::UnexpectedEof => "truncated (the file ends early)".to_string(),
        _ => format!("damaged ({error})"),
    }
}

/// Load the snapshot at `path` into `ftl`; `None` when there is no such file.
fn load(path: &Path, key: &Key, ftl: &mut Ftl) -> Result<Option<PreconditionReport>, Error> {
    let started = Instant::now();
    let mut file = match open_nonblocking(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refused(path, format!("cannot be read ({e})"))),
    };
    // The type of what was opened, not of what the name pointed at a moment before.
    let kind = file
        .metadata()
        .map_err(|e| refused(path, format!("cannot be read ({e})")))?
        .file_type();
    if !kind.is_file() {
        return Err(not_a_file(path, &kind));
    }
    let mut head = [0u8; 20];
    file.read_exact(&mut head).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => refused(path, "not a flashlane drive snapshot (too short)"),
        _ => refused(path, format!("cannot be read ({e})")),
    })?;
    if head[..16] != MAGIC[..] {
        return Err(refused(path, "not a flashlane drive snapshot"));
    }
    let version = u32::from_le_bytes([head[16], head[17], head[18], head[19]]);
    if version != FORMAT_VERSION {
        return Err(refused(
            path,
            format!("format version {version}; this flashlane reads version {FORMAT_VERSION}"),
        ));
    }
    let stream = zstd::Decoder::new(file)
        .map_err(|e| refused(path, damage(e)))?
        .single_frame();
    let mut d = Decoder::new(BufReader::with_capacity(1 << 16, stream));
    let mut report = read_head(&mut d, key).map_err(|e| match e {
        Mismatch::Other(why) => refused(path, why),
        Mismatch::Io(e) => refused(path, damage(e)),
    })?;
    read_state(&mut d, ftl).map_err(|e| refused(path, damage(e)))?;
    report.wall_s = started.elapsed().as_secs_f64();
    report.snapshot = Some(SnapshotReport {
        key: key.hex.clone(),
        file: path.display().to_string(),
        loaded: true,
        write_wall_s: 0.0,
    });
    Ok(Some(report))
}

/// Why a snapshot's head does not fit the run.
enum Mismatch {
    Other(String),
    Io(io::Error),
}

impl From<io::Error> for Mismatch {
    fn from(e: io::Error) -> Self {
        Mismatch::Io(e)
    }
}

/// The key's text and the footprint (both must be the run's), then the report.
fn read_head<R: Read>(d: &mut Decoder<R>, key: &Key) -> Result<PreconditionReport, Mismatch> {
    let len = d.u32()?;
    if len > MAX_KEY_TEXT {
        return Err(Mismatch::Io(invalid(format!("key text of {len} bytes"))));
    }
    let text = d.bytes(len as usize)?;
    if text != key.text.as_bytes() {
        return Err(Mismatch::Other(
            "it holds the drive of other inputs (a copied or renamed file?)".into(),
        ));
    }
    let footprint = match d.u8()? {
        0 => None,
        1 => {
            let words = d.u64()?;
            if Some(words) != key.footprint.map(|w| w.len() as u64) {
                return Err(Mismatch::Other(
                    "it holds the drive of another trace footprint".into(),
                ));
            }
            Some(words)
        }
        other => return Err(Mismatch::Io(invalid(format!("footprint flag {other}")))),
    };
    if footprint.is_none() != key.footprint.is_none() {
        return Err(Mismatch::Other(
            "it holds the drive of another trace footprint".into(),
        ));
    }
    if let Some(expected) = key.footprint {
        for &word in expected {
            if d.u64()? != word {
                return Err(Mismatch::Other(
                    "it holds the drive of another trace footprint".into(),
                ));
            }
        }
    }
    Ok(PreconditionReport {
        footprint_pages: d.u64()?,
        fill_pages: d.u64()?,
        age_rounds: d.u32()?,
        age_final_waf: f64::from_bits(d.u64()?),
        wall_s: 0.0,
        snapshot: None,
    })
}

/// The FTL's state, the end marker, and the end of the frame (where zstd checks its checksum).
fn read_state<R: Read>(d: &mut Decoder<R>, ftl: &mut Ftl) -> io::Result<()> {
    ftl.load_state(d)?;
    if d.u64()? != END {
        return Err(invalid("no end marker after the drive's state"));
    }
    if d.at_end()? {
        Ok(())
    } else {
        Err(invalid("data after the end marker"))
    }
}

/// Snapshot temporaries being written now. Held while one is created or renamed, and by
/// [`remove_snapshot_temporaries`], so that a signal leaves none behind.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the list was held leaves it usable: it is a list of paths.
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remove every snapshot temporary being written (for a signal handler about to end the
/// process, as the CLI's is); the returned guard keeps new ones from being created while held.
pub fn remove_snapshot_temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    let mut list = temporaries();
    for path in list.drain(..) {
        let _ = std::fs::remove_file(path);
    }
    list
}

/// Write the snapshot: a temporary file in `dir`, renamed to `path` once complete and synced.
fn write(
    dir: &Path,
    path: &Path,
    key: &Key,
    report: &PreconditionReport,
    ftl: &Ftl,
) -> Result<(), Error> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let temporary = dir.join(format!(
        ".drive-{}.{}.{}.tmp",
        key.hex,
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let created = {
        let mut list = temporaries();
        let file = File::create(&temporary);
        if file.is_ok() {
            list.push(temporary.clone());
        }
        file
    };
    let written = created
        .and_then(|file| write_file(file, key, report, ftl))
        .and_then(|()| {
            let mut list = temporaries();
            let renamed = std::fs::rename(&temporary, path);
            if renamed.is_ok() {
                list.retain(|p| p != &temporary);
            }
            renamed
        });
    written.map_err(|e| {
        let mut list = temporaries();
        list.retain(|p| p != &temporary);
        let _ = std::fs::remove_file(&temporary);
        Error::Output {
            path: path.display().to_string(),
            message: format!("cannot write the precondition snapshot: {e}"),
        }
    })
}

fn write_file(mut file: File, key: &Key, report: &PreconditionReport, ftl: &Ftl) -> io::Result<()> {
    file.write_all(MAGIC)?;
    file.write_all(&FORMAT_VERSION.to_le_bytes())?;
    let mut stream = zstd::Encoder::new(file, ZSTD_LEVEL)?;
    stream.include_checksum(true)?;
    let mut e = Encoder::new(BufWriter::with_capacity(1 << 16, stream));
    e.u32(key.text.len() as u32)?;
    e.bytes(key.text.as_bytes())?;
    match key.footprint {
        None => e.u8(0)?,
        Some(words) => {
            e.u8(1)?;
            e.u64(words.len() as u64)?;
            for &word in words {
                e.u64(word)?;
            }
        }
    }
    e.u64(report.footprint_pages)?;
    e.u64(report.fill_pages)?;
    e.u32(report.age_rounds)?;
    e.u64(report.age_final_waf.to_bits())?;
    ftl.save_state(&mut e)?;
    e.u64(END)?;
    let stream = e.into_inner().into_inner().map_err(|e| e.into_error())?;
    stream.finish()?.sync_all()
}

/// An exclusive lock on a file, held until dropped (closing the file releases it).
struct Lock {
    _file: File,
}

impl Lock {
    fn take(path: &Path) -> io::Result<Lock> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        lock_exclusive(&file)?;
        Ok(Lock { _file: file })
    }
}

#[cfg(unix)]
fn lock_exclusive(file: &File) -> io::Result<()> {
    use std::os::unix::io::AsRawFd;
    loop {
        // SAFETY: flock on a descriptor this function's caller owns (open for the duration of
        // the call); it changes no memory.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Without flock, workers that need the same drive at once each precondition it; the rename
/// keeps the file whole either way.
#[cfg(not(unix))]
fn lock_exclusive(_file: &File) -> io::Result<()> {
    Ok(())
}
