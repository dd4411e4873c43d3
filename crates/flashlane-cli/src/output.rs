//! Human-readable summary and output files.
//!
//! Every output file is written whole or not at all: a regular file (or a new one) through a
//! temporary beside it, unique to this process and call, renamed over it at the end; the
//! outputs of one command are renamed together ([`write_all_or_none`]). A FIFO, device or
//! socket is written through, never replaced. Temporaries are registered so that a signal
//! removes them ([`remove_temporaries`], called by `crate::signals`).

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use flashlane_core::stats::{DispatchLog, SourceSummary, Summary};
use flashlane_core::Error;

/// `n` and the noun, singular for one ("1 request", "2 requests"): for the counts of messages;
/// the statistic lines of a summary keep their plural labels ("1 writes" reads as a column).
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Temporaries that exist now. Held while a temporary is created or renamed, and by the
/// signal handler until the process ends, so a signal never races a rename.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while holding the list leaves it usable: it is only a list of paths.
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remove `path` if a signal ends the process before [`forget_on_signal`] (a target file a
/// replay created).
pub fn remove_on_signal(path: &Path) {
    temporaries().push(path.to_path_buf());
}

/// Stop removing `path` on a signal.
pub fn forget_on_signal(path: &Path) {
    temporaries().retain(|p| p != path);
}

/// Remove every registered temporary; the returned guard keeps new ones from being created
/// or renamed until the process exits.
pub fn remove_temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    let mut list = temporaries();
    for path in list.drain(..) {
        let _ = std::fs::remove_file(path);
    }
    list
}

fn output_error(path: &Path, message: impl Into<String>) -> Error {
    Error::Output {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// Where an output goes.
enum Target {
    /// A regular file, or none yet: filled through a temporary beside this path, then renamed
    /// over it. For a symlink this is the file it points to (resolved), so the link stays a
    /// link and its target is replaced atomically.
    Replace(PathBuf),
    /// A FIFO, character or block device or socket (`/dev/null`, a named pipe): opened and
    /// written in place, never replaced.
    WriteThrough(PathBuf),
    /// A name of one of our open descriptors (`-`, `/dev/stdout`, `/dev/fd/N`), whatever it
    /// leads to: written through that descriptor, so `>` and `>>` mean what the shell said
    /// and later writers of the same descriptor go on after us.
    Descriptor(i32),
}

/// The descriptor a path of the form `/proc/self/fd/N` or `/dev/fd/N` names.
fn descriptor_of(path: &Path) -> Option<i32> {
    let rest = path
        .strip_prefix("/proc/self/fd")
        .or_else(|_| path.strip_prefix("/dev/fd"))
        .ok()?;
    rest.to_str()?.parse().ok()
}

/// Follow `path` through symlinks (even a dangling one, whose target is then created); also
/// the descriptor it names, if the chain passes through one (`/dev/stdout` ->
/// `/proc/self/fd/1` -> `pipe:[...]`): such a link is no file to replace.
fn resolve_links(path: &Path) -> Result<(PathBuf, Option<i32>), Error> {
    let mut current = path.to_path_buf();
    let mut descriptor = descriptor_of(&current);
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&current)
                    .map_err(|e| output_error(path, format!("cannot read the symlink: {e}")))?;
                current = match current.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
                descriptor = descriptor.or_else(|| descriptor_of(&current));
            }
            _ => return Ok((current, descriptor)),
        }
    }
    Err(output_error(path, "too many levels of symbolic links"))
}

/// The node an output path names: `-` is standard output, as for trace inputs.
fn node(path: &Path) -> &Path {
    if path.as_os_str() == "-" {
        Path::new("/dev/stdout")
    } else {
        path
    }
}

fn target(shown: &Path) -> Result<Target, Error> {
    let path = node(shown);
    let (resolved, descriptor) = resolve_links(path)?;
    // The kernel follows every link here, /proc's too.
    match (std::fs::metadata(path), descriptor) {
        (Ok(m), _) if m.is_dir() => Err(output_error(shown, "is a directory, not a file path")),
        (Ok(_), Some(fd)) if cfg!(unix) => Ok(Target::Descriptor(fd)),
        (Ok(m), _) if !m.is_file() => Ok(Target::WriteThrough(path.to_path_buf())),
        _ => Ok(Target::Replace(resolved)),
    }
}

/// True when `path` is written in place (a FIFO, device or socket, e.g. `/dev/stdout`): a
/// command then keeps its own messages off stdout and writes no file beside it.
pub fn writes_through(path: &Path) -> bool {
    matches!(
        target(path),
        Ok(Target::WriteThrough(_) | Target::Descriptor(_))
    )
}

/// True when `path` is this process's standard output (`/dev/stdout`, or the file stdout is
/// redirected to): a command writing an output there prints its text report to stderr, so
/// the output stays clean for the next program in the pipe.
pub fn is_stdout(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(target) = std::fs::metadata(node(path)) else {
            return false;
        };
        // SAFETY: fstat(2) fills the zeroed struct we own; fd 1 may be closed (then -1).
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(1, &mut stat) } != 0 {
            return false;
        }
        // dev_t and ino_t differ in width and sign between systems.
        #[allow(clippy::unnecessary_cast)]
        let same = target.dev() == stat.st_dev as u64 && target.ino() == stat.st_ino as u64;
        same
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Print a command's text report: on stdout, or on stderr when one of its `outputs` is
/// stdout itself (see [`is_stdout`]).
pub fn print_report<'a>(
    text: &str,
    outputs: impl IntoIterator<Item = Option<&'a Path>>,
) -> Result<(), Error> {
    if outputs.into_iter().flatten().any(is_stdout) {
        print_err(text);
        Ok(())
    } else {
        print_out(text)
    }
}

/// Standard error could not be written at some point (a full disk, a closed descriptor):
/// the command then ends with status 2 (see `main`).
static STDERR_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Write `text` to standard output. A write error (a full disk behind a redirection) is the
/// command's error, never a panic; a closed pipe ends the process by SIGPIPE, as other tools.
pub fn print_out(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Error::Output {
            path: "standard output".into(),
            message: e.to_string(),
        })
}

/// Write `text` to standard error; a write error is remembered for the exit status, never a
/// panic.
pub fn print_err(text: &str) {
    let mut err = std::io::stderr().lock();
    if err
        .write_all(text.as_bytes())
        .and_then(|()| err.flush())
        .is_err()
    {
        STDERR_FAILED.store(true, Ordering::Relaxed);
    }
}

/// Whether a write to standard error failed during the command.
pub fn stderr_failed() -> bool {
    STDERR_FAILED.load(Ordering::Relaxed)
}

/// A registered temporary: removed when dropped, unless renamed into place.
struct Temporary {
    path: PathBuf,
}

impl Temporary {
    /// A new, empty temporary beside `target`, under a name no other process or call uses.
    fn create(target: &Path) -> Result<(Temporary, File), String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = target.file_name().ok_or("not a file path")?;
        let mut list = temporaries();
        loop {
            let path = dir.join(format!(
                ".{}.{}.{}.tmp",
                name.to_string_lossy(),
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    list.push(path.clone());
                    return Ok((Temporary { path }, file));
                }
                // Left by an earlier process with our pid (killed): take the next name.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("cannot write: {e}")),
            }
        }
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        let mut list = temporaries();
        if let Some(i) = list.iter().position(|p| *p == self.path) {
            list.swap_remove(i);
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Rename every temporary over its target under one hold of the list, so a signal sees all
/// of them renamed or none. A rename fails only if the directory changed under us (the
/// temporaries sit beside their targets); the rest are then removed.
fn rename_all(staged: Vec<(Temporary, PathBuf, &Path)>) -> Result<(), Error> {
    let mut list = temporaries();
    let mut failure = None;
    for (temp, target, shown) in &staged {
        if failure.is_none() {
            match std::fs::rename(&temp.path, target) {
                Ok(()) => list.retain(|p| *p != temp.path),
                Err(e) => failure = Some(output_error(shown, format!("cannot write: {e}"))),
            }
        }
    }
    drop(list);
    // Dropping removes the temporaries that were not renamed.
    drop(staged);
    failure.map_or(Ok(()), Err)
}

/// What fills one output: writes the content, or returns the error to report.
pub type Fill<'a> = Box<dyn FnOnce(&mut dyn Write) -> Result<(), Error> + 'a>;

/// Write the outputs of one command as a unit: every regular file is filled through its
/// temporary first, then the written-through ones (FIFOs, devices) in order, then every
/// temporary is renamed into place together. On any error no regular output is left changed
/// and every temporary is removed. (A FIFO or device written before the error cannot be taken
/// back; they come last for that reason.)
pub fn write_all_or_none(outputs: Vec<(&Path, Fill<'_>)>) -> Result<(), Error> {
    let mut replace = Vec::new();
    let mut through = Vec::new();
    for (path, fill) in outputs {
        match target(path)? {
            Target::Replace(resolved) => replace.push((path, resolved, fill)),
            Target::WriteThrough(node) => through.push((path, Through::Node(node), fill)),
            Target::Descriptor(fd) => through.push((path, Through::Descriptor(fd), fill)),
        }
    }
    let mut staged = Vec::with_capacity(replace.len());
    for (shown, resolved, fill) in replace {
        let (temp, file) = Temporary::create(&resolved).map_err(|m| output_error(shown, m))?;
        let mut writer = BufWriter::with_capacity(1 << 16, file);
        if let Err(e) = fill(&mut writer) {
            // Not flushed: the temporary goes anyway.
            let _ = writer.into_parts();
            return Err(e);
        }
        let file = writer
            .into_inner()
            .map_err(|e| output_error(shown, e.error().to_string()))?;
        file.sync_all()
            .map_err(|e| output_error(shown, e.to_string()))?;
        staged.push((temp, resolved, shown));
    }
    for (shown, through, fill) in through {
        let file = through
            .open()
            .map_err(|e| output_error(shown, format!("cannot write: {e}")))?;
        // A pipe whose reader is gone must not kill us before the temporaries are removed.
        let quiet = SigpipeIgnored::new();
        let mut writer = BufWriter::with_capacity(1 << 16, PipeWatch::new(file));
        let result = fill(&mut writer).and_then(|()| {
            writer
                .flush()
                .map_err(|e| output_error(shown, e.to_string()))
        });
        if let Err(e) = result {
            // What is still buffered stays out of the node: as little as possible is written.
            let (watch, _) = writer.into_parts();
            if watch.broken {
                // The reader went away (`| head`): clean up, then end as SIGPIPE ends any
                // tool in a pipeline, quietly.
                drop(staged);
                drop(quiet);
                #[cfg(unix)]
                // SAFETY: raise(2) with SIGPIPE back at its default: the process ends here.
                unsafe {
                    libc::raise(libc::SIGPIPE);
                }
            }
            return Err(e);
        }
    }
    rename_all(staged)
}

/// What a written-through output is opened as.
enum Through {
    Node(PathBuf),
    Descriptor(i32),
}

impl Through {
    fn open(&self) -> std::io::Result<File> {
        match self {
            // No truncation and no rename: the node stays what it is.
            Through::Node(node) => OpenOptions::new().write(true).open(node),
            #[cfg(unix)]
            Through::Descriptor(fd) => {
                use std::os::fd::FromRawFd;
                // SAFETY: dup(2) of a descriptor number; a failure is -1, checked below.
                let copy = unsafe { libc::dup(*fd) };
                if copy < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // SAFETY: `copy` is a new descriptor that only this File owns and closes.
                Ok(unsafe { File::from_raw_fd(copy) })
            }
            #[cfg(not(unix))]
            Through::Descriptor(_) => Err(std::io::Error::other("descriptors are unix-only")),
        }
    }
}

/// SIGPIPE ignored while this lives (writes into a closed pipe then fail with `BrokenPipe`),
/// back to its default (`main` sets it) after.
struct SigpipeIgnored;

impl SigpipeIgnored {
    fn new() -> SigpipeIgnored {
        #[cfg(unix)]
        // SAFETY: changing a signal's disposition; no handler code runs.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
        SigpipeIgnored
    }
}

impl Drop for SigpipeIgnored {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: as in `new`.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
}

/// A writer that remembers whether its reader went away.
struct PipeWatch<W: Write> {
    inner: W,
    broken: bool,
}

impl<W: Write> PipeWatch<W> {
    fn new(inner: W) -> Self {
        PipeWatch {
            inner,
            broken: false,
        }
    }

    fn watch<T>(&mut self, result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &result {
            self.broken |= e.kind() == std::io::ErrorKind::BrokenPipe;
        }
        result
    }
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let result = self.inner.write(buf);
        self.watch(result)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let result = self.inner.flush();
        self.watch(result)
    }
}

/// Write `path` alone (see [`write_all_or_none`]).
pub fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<(), Error>,
) -> Result<(), Error> {
    write_all_or_none(vec![(path, Box::new(fill))])
}

/// Write `bytes` to `path` (see [`write_all_or_none`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomically(path, bytes_fill(path, bytes))
}

/// A [`Fill`] that writes `bytes`.
pub fn bytes_fill<'a>(
    path: &'a Path,
    bytes: &'a [u8],
) -> impl FnOnce(&mut dyn Write) -> Result<(), Error> + 'a {
    move |out| {
        out.write_all(bytes)
            .map_err(|e| output_error(path, e.to_string()))
    }
}

/// `value` as pretty JSON with a final newline.
pub fn json_text<T: serde::Serialize>(path: &Path, value: &T) -> Result<String, Error> {
    let mut text =
        serde_json::to_string_pretty(value).map_err(|e| output_error(path, e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// Write `value` as pretty JSON to `path` (see [`write_all_or_none`]).
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), Error> {
    write_atomic(path, json_text(path, value)?.as_bytes())
}

/// Write a run's JSON summary and its dispatch log (each if asked for) as one unit (see
/// [`write_all_or_none`]).
pub fn write_summary_outputs<T: serde::Serialize>(
    json: Option<&Path>,
    summary: &T,
    dispatch_log: Option<(&Path, &DispatchLog)>,
) -> Result<(), Error> {
    let text = match json {
        Some(path) => Some((path, json_text(path, summary)?)),
        None => None,
    };
    let mut outputs: Vec<(&Path, Fill<'_>)> = Vec::new();
    if let Some((path, text)) = &text {
        outputs.push((path, Box::new(bytes_fill(path, text.as_bytes()))));
    }
    if let Some((path, log)) = dispatch_log {
        outputs.push((
            path,
            Box::new(move |out: &mut dyn Write| {
                log.write_csv(out)
                    .map_err(|e| output_error(path, e.to_string()))
            }),
        ));
    }
    write_all_or_none(outputs)
}

/// Fail now, before any simulation, if `path` cannot be written later: it names a directory,
/// its directory is missing, or a file cannot be created there. Probes with a temporary as
/// [`write_all_or_none`] does and removes it, so nothing is left behind. A FIFO or device is
/// not opened here (opening a FIFO waits for its reader).
pub fn check_writable(path: &Path) -> Result<(), Error> {
    let resolved = match target(path)? {
        Target::WriteThrough(_) | Target::Descriptor(_) => return Ok(()),
        Target::Replace(resolved) => resolved,
    };
    let dir = resolved
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(output_error(
            path,
            format!("cannot write: directory {} does not exist", dir.display()),
        ));
    }
    Temporary::create(&resolved).map_err(|m| output_error(path, m))?;
    Ok(())
}

/// What names a file when outputs and inputs are compared: its device and inode when it
/// exists (so a link or another name for it is the same file), else its directory's
/// canonical path with its name, or standard output.
#[derive(Debug, PartialEq, Eq)]
enum FileId {
    Inode(u64, u64),
    Named(PathBuf),
    Stdout,
}

impl FileId {
    fn of(path: &Path) -> FileId {
        if path.as_os_str() == "-" || is_stdout(path) {
            return FileId::Stdout;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if let Ok(m) = std::fs::metadata(path) {
                return FileId::Inode(m.dev(), m.ino());
            }
        }
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        FileId::Named(dir.join(path.file_name().unwrap_or_default()))
    }

    /// Several outputs may share `path`: a device such as /dev/null, or a pipe, takes them all
    /// one after the other.
    fn shared(path: &Path) -> bool {
        std::fs::metadata(node(path)).is_ok_and(|m| !m.is_file() && !m.is_dir())
    }
}

/// Refuse, before anything runs, an output that would be written onto one of the command's
/// inputs or targets (`inputs`: what each is, and its path; compared by device and inode,
/// through links), and two outputs that name the same file (one would replace the other).
/// `outputs` pairs each output's option name with its path; `None`s are skipped.
pub fn check_outputs(
    outputs: &[(&str, Option<&Path>)],
    inputs: &[(&str, &Path)],
) -> Result<(), Error> {
    let inputs: Vec<(&str, &Path, FileId)> = inputs
        .iter()
        .filter(|(_, path)| path.as_os_str() != "-")
        .map(|&(what, path)| (what, path, FileId::of(path)))
        .collect();
    let mut seen: Vec<(FileId, &str)> = Vec::new();
    for &(flag, path) in outputs {
        let Some(path) = path else { continue };
        let id = FileId::of(path);
        if let Some((what, input, _)) = inputs.iter().find(|(_, _, other)| *other == id) {
            return Err(output_error(
                path,
                format!(
                    "is {what} {} of this command: {flag} would write over it; choose another file",
                    input.display()
                ),
            ));
        }
        if FileId::shared(path) {
            continue;
        }
        if let Some((_, other)) = seen.iter().find(|(other, _)| *other == id) {
            return Err(output_error(
                path,
                format!("is named by both {other} and {flag}: one would replace the other"),
            ));
        }
        seen.push((id, flag));
    }
    Ok(())
}

/// Check every output path of a command (see [`check_writable`]); `None`s are skipped.
pub fn check_all_writable<'a>(
    paths: impl IntoIterator<Item = Option<&'a Path>>,
) -> Result<(), Error> {
    paths.into_iter().flatten().try_for_each(check_writable)
}

/// What the input pipeline did to the records, when it did anything (summed over traces).
/// "  workload PATH: LABEL" for every input with a label (a simulation's and a real replay's
/// text summaries).
pub fn workload_labels(out: &mut String, sources: &[SourceSummary]) {
    for source in sources {
        if let Some(label) = &source.input.label {
            let _ = writeln!(out, "  workload {}: {label}", source.input.path);
        }
    }
}

/// The `input:` line of the text summary (what the readers skipped, folded or clamped), or
/// nothing when they did none of it.
pub fn input_line(sources: &[SourceSummary]) -> String {
    let sum = |f: fn(&flashlane_core::run::SourceReport) -> u64| {
        sources.iter().map(|src| f(&src.input)).sum::<u64>()
    };
    let parts = [
        (sum(|r| r.bad_lines), "malformed lines skipped"),
        (sum(|r| r.skipped_events), "events of other kinds skipped"),
        (
            sum(|r| r.filtered_records),
            "records of other devices left out",
        ),
        (
            sum(|r| r.folded_records),
            "addresses folded into the capacity",
        ),
        (
            sum(|r| r.clamped_backsteps),
            "times that stepped back clamped",
        ),
    ];
    let said: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    if said.is_empty() {
        String::new()
    } else {
        format!("input: {}\n", said.join(", "))
    }
}

/// The text summary; `whole_run_s` is the command's own wall-clock time up to the summary
/// (the engine's timer covers only the simulation proper).
pub fn render_text(s: &Summary, whole_run_s: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "flashlane: {} on {} ({})",
        s.trace.path, s.config.name, s.trace.format
    );
    let _ = writeln!(
        out,
        "  host scheduler {} | device scheduler {} | interconnect {} | seed {}",
        s.host_scheduler.name, s.device_scheduler, s.interconnect.name, s.seed
    );
    workload_labels(&mut out, &s.sources);
    s.figures
        .write_text(&mut out, s.trace.records, &input_line(&s.sources));
    let _ = writeln!(
        out,
        "throughput: {:.0} IOPS, {:.2} MiB/s over {:.6} s simulated",
        s.figures.throughput.iops,
        s.figures.throughput.mib_per_s,
        s.sim_time_ns as f64 / 1e9
    );
    let _ = writeln!(
        out,
        "chips: {}, utilization {:.1} % ({:.1} % while any chip was busy)",
        s.chips.count,
        s.chips.utilization * 100.0,
        s.chips.active_utilization * 100.0
    );
    let _ = writeln!(
        out,
        "conflicts: {} reads, {} writes; chip wait (us) read {:.1} write {:.1}; path wait (us) read {:.1} write {:.1}",
        s.conflicts.read,
        s.conflicts.write,
        s.conflicts.read_chip_wait_us,
        s.conflicts.write_chip_wait_us,
        s.conflicts.read_path_wait_us,
        s.conflicts.write_path_wait_us
    );
    let f = &s.flash;
    let mut extra = String::new();
    if f.read_modify_write_reads > 0 {
        let _ = write!(
            extra,
            ", {} read-modify-write reads",
            f.read_modify_write_reads
        );
    }
    if f.multiplane_operations > 0 {
        let _ = write!(extra, ", {} multi-plane commands", f.multiplane_operations);
    }
    let _ = writeln!(
        out,
        "flash: {} reads, {} programs, {} GC moves, {} mapping reads, {} mapping programs, {} \
         erases{extra}; WAF {:.3} (all programs; host and GC only {:.3})",
        f.reads,
        f.programs,
        f.copybacks,
        f.mapping_reads,
        f.mapping_programs,
        f.erases,
        s.waf,
        s.waf_host_gc
    );
    let g = &s.gc;
    let _ = writeln!(
        out,
        "GC: {} runs, {} pages moved, erase-count spread {}; {} reads of never-written pages",
        g.runs, g.pages_moved, g.erase_count_spread, g.unmapped_reads
    );
    if let Some(c) = &s.cmt {
        let _ = writeln!(
            out,
            "mapping cache: {} entries; {} hits, {} misses (hit ratio {:.3}); {} write-backs",
            c.capacity_entries, c.hits, c.misses, c.hit_ratio, c.writebacks
        );
    }
    if let Some(b) = &s.write_buffer {
        let _ = writeln!(
            out,
            "write buffer: {} pages; write hits {:.1} %, read hits {:.1} %; {} flushes, {} waits \
             for a free slot",
            b.capacity_pages,
            b.write_hit_ratio * 100.0,
            b.read_hit_ratio * 100.0,
            b.flushes,
            b.full_waits
        );
    }
    if let Some(r) = &s.region_slowdown {
        let _ = writeln!(
            out,
            "region slowdown: {} of {} host page operations slowed; array time x{:.3}",
            r.slowed_operations, r.host_operations, r.array_time_factor
        );
    }
    if let Some(v) = &s.variation {
        let _ = writeln!(
            out,
            "variation: host writes to fast / medium / slow blocks {:.1} / {:.1} / {:.1} %, \
             mean program {:.1} us (median block {:.1} us)",
            v.write_fast_fraction * 100.0,
            v.write_medium_fraction * 100.0,
            v.write_slow_fraction * 100.0,
            v.mean_host_program_us,
            v.median_program_us
        );
    }
    if s.device.moved_writes + s.device.write_hits > 0 {
        let _ = writeln!(
            out,
            "device queues: {} writes moved to another chip, {} write hits ({:.1} %)",
            s.device.moved_writes,
            s.device.write_hits,
            s.device.write_hit_ratio * 100.0
        );
    }
    let p = &s.precondition;
    let _ = writeln!(
        out,
        "preconditioning: {} footprint pages, {} fill pages, {} aging rounds",
        p.footprint_pages, p.fill_pages, p.age_rounds
    );
    if let Some(snapshot) = &p.snapshot {
        let _ = if snapshot.loaded {
            writeln!(
                out,
                "precondition snapshot: drive loaded from {} in {:.3} s",
                snapshot.file, p.wall_s
            )
        } else {
            writeln!(
                out,
                "precondition snapshot: drive written to {} in {:.3} s",
                snapshot.file, snapshot.write_wall_s
            )
        };
    }
    let _ = writeln!(
        out,
        "engine: {} events in {:.3} s ({:.0} requests/s simulating); preconditioning {:.3} s; \
         whole run {:.3} s ({:.0} requests/s)",
        s.engine.events,
        s.engine.wall_s,
        s.engine.requests_per_s,
        s.precondition.wall_s,
        whole_run_s,
        if whole_run_s > 0.0 {
            s.trace.records as f64 / whole_run_s
        } else {
            0.0
        }
    );
    for w in &s.warnings {
        let _ = writeln!(out, "warning [{}, {}]: {}", w.code, w.count, w.message);
    }
    out
}
