//! Human-readable summary and JSON output files.

use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::Path;

use flashlane_core::stats::{LatencyStats, Summary};
use flashlane_core::Error;

/// Write `value` as pretty JSON to `path` atomically.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| Error::Output {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

/// Fail now, before any simulation, if `path` cannot be written later: it names a directory,
/// its directory is missing, or a file cannot be created there. Probes with the same temporary
/// file [`write_atomically`] uses and removes it, so nothing is left behind.
pub fn check_writable(path: &Path) -> Result<(), Error> {
    let fail = |message: String| Error::Output {
        path: path.display().to_string(),
        message,
    };
    if path.is_dir() {
        return Err(fail("is a directory, not a file path".into()));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(fail(format!(
            "cannot write: directory {} does not exist",
            dir.display()
        )));
    }
    let temp = temp_path(path).ok_or_else(|| fail("not a file path".into()))?;
    std::fs::File::create(&temp).map_err(|e| fail(format!("cannot write: {e}")))?;
    let _ = std::fs::remove_file(&temp);
    Ok(())
}

/// Check every output path of a command (see [`check_writable`]); `None`s are skipped.
pub fn check_all_writable<'a>(
    paths: impl IntoIterator<Item = Option<&'a Path>>,
) -> Result<(), Error> {
    paths.into_iter().flatten().try_for_each(check_writable)
}

/// The temporary file `write_atomically` fills next to `path`.
fn temp_path(path: &Path) -> Option<std::path::PathBuf> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path.file_name()?;
    Some(dir.join(format!(".{}.tmp", file_name.to_string_lossy())))
}

/// Write `bytes` to `path` atomically (see [`write_atomically`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomically(path, |file| {
        file.write_all(bytes).map_err(|e| e.to_string())
    })
}

/// Write `path` through a temporary file in the same directory, renamed into place only when
/// `fill` and the flush succeed: an error never leaves a half-written file.
pub fn write_atomically<T>(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<T, String>,
) -> Result<T, Error> {
    let fail = |message: String| Error::Output {
        path: path.display().to_string(),
        message,
    };
    let temp = temp_path(path).ok_or_else(|| fail("not a file path".into()))?;
    let result = (|| -> Result<T, String> {
        let file = std::fs::File::create(&temp).map_err(|e| e.to_string())?;
        let mut writer = BufWriter::with_capacity(1 << 16, file);
        let value = fill(&mut writer)?;
        let file = writer.into_inner().map_err(|e| e.error().to_string())?;
        file.sync_all().map_err(|e| e.to_string())?;
        std::fs::rename(&temp, path).map_err(|e| e.to_string())?;
        Ok(value)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        fail(e)
    })
}

fn latency_row(out: &mut String, name: &str, l: &LatencyStats) {
    let _ = writeln!(
        out,
        "  {name:<6} {:>9} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
        l.count, l.mean, l.p50, l.p99, l.p999, l.max
    );
}

pub fn render_text(s: &Summary) -> String {
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
    for source in &s.sources {
        if let Some(label) = &source.input.label {
            let _ = writeln!(out, "  workload {}: {label}", source.input.path);
        }
    }
    let _ = writeln!(
        out,
        "requests: {} measured ({} reads, {} writes), {} warm-up, {} records read",
        s.requests.completed,
        s.requests.reads,
        s.requests.writes,
        s.requests.warmup,
        s.trace.records
    );
    let _ = writeln!(
        out,
        "latency (us)  {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "count", "mean", "p50", "p99", "p99.9", "max"
    );
    latency_row(&mut out, "read", &s.latency_us.read);
    latency_row(&mut out, "write", &s.latency_us.write);
    latency_row(&mut out, "all", &s.latency_us.all);
    let _ = writeln!(
        out,
        "time split (mean us): host queue {:.1}, device {:.1}",
        s.time_split_us.host_queue, s.time_split_us.device
    );
    let _ = writeln!(
        out,
        "throughput: {:.0} IOPS, {:.2} MiB/s over {:.6} s simulated",
        s.throughput.iops,
        s.throughput.mib_per_s,
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
    let _ = writeln!(
        out,
        "flash: {} reads, {} programs, {} GC moves, {} erases; GC runs {}; WAF {:.3}",
        s.flash.reads, s.flash.programs, s.flash.copybacks, s.flash.erases, s.gc.runs, s.waf
    );
    let _ = writeln!(
        out,
        "engine: {} events in {:.3} s ({:.0} requests/s); preconditioning {:.3} s",
        s.engine.events, s.engine.wall_s, s.engine.requests_per_s, s.precondition.wall_s
    );
    out
}
