//! `flashlane replay` on small file targets in the temporary directory (docs/real-drive.md):
//! every request completes once, each host scheduler hands requests to the drive in the
//! order the simulator's does for the same arrivals, `--verify` finds a planted corruption,
//! and every safety refusal is one line, exit 2, with the target untouched. No test asserts
//! a time. Tests that need io_uring say so and skip where the kernel forbids it.
#![cfg(target_os = "linux")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use flashlane_core::stats::RequestFigures;

fn flashlane() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashlane"))
}

/// A fresh directory `flashlane-real-*` in the temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("flashlane-real-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Why io_uring cannot run here (a kernel or container that forbids it), found once by a
/// replay of one request; `None` when it runs.
fn io_uring_missing() -> Option<&'static str> {
    static WHY: OnceLock<Option<String>> = OnceLock::new();
    WHY.get_or_init(|| {
        let dir = Scratch::new("probe-uring");
        let trace = dir.join("one.mqsim");
        std::fs::write(&trace, "0 0 0 8 0\n").unwrap();
        let out = flashlane()
            .args(["replay", "--preset", "mqsim-ssd", "--trace"])
            .arg(&trace)
            .arg("--target")
            .arg(dir.join("t"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        err.contains("io_uring is not available").then_some(err)
    })
    .as_deref()
}

/// Skip the calling test, saying so on the terminal (past the harness's capture; test.sh
/// counts these lines as skipped tests), when io_uring cannot run.
macro_rules! require_io_uring {
    ($name:expr) => {
        if let Some(why) = io_uring_missing() {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED (io_uring unavailable): {}: {}",
                $name,
                why.trim()
            );
            return;
        }
    };
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (time ns, device, byte offset, bytes, is_read) as an MQSim trace.
fn write_trace(path: &Path, requests: &[(u64, u32, u64, u64, bool)]) {
    let mut text = String::new();
    for (t, device, offset, bytes, read) in requests {
        text.push_str(&format!(
            "{t} {device} {} {} {}\n",
            offset / 512,
            bytes / 512,
            u8::from(*read)
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// `n` requests over 4 MiB from 4 streams, 40 % writes, with runs of contiguous requests of
/// one direction (something for the merging schedulers to merge), all at time 0.
fn mixed_trace(n: u64) -> Vec<(u64, u32, u64, u64, bool)> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::new();
    while (out.len() as u64) < n {
        let read = next() % 10 >= 4;
        let pages = 1 + next() % 3;
        let page = next() % (1024 - 8);
        let stream = (next() % 4) as u32;
        out.push((0, stream, page * 4096, pages * 4096, read));
        if next() % 4 == 0 {
            // The next request continues this one.
            out.push((0, stream, (page + pages) * 4096, 4096, read));
        }
    }
    out.truncate(n as usize);
    out
}

/// The `seq` and `command` columns of a dispatch log.
fn dispatch_order(path: &Path) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("command,seq,op,offset_bytes,size_bytes,dispatched_ns")
    );
    lines
        .map(|l| {
            let mut f = l.split(',');
            let command = f.next().unwrap().parse().unwrap();
            (f.next().unwrap().parse().unwrap(), command)
        })
        .collect()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every request of a mixed trace completes exactly once, at the device queue depth of the
/// config; a created target is removed after the run, or kept with --keep.
#[test]
fn every_request_completes_once_and_a_created_target_goes_away() {
    require_io_uring!("every_request_completes_once_and_a_created_target_goes_away");
    let dir = Scratch::new("once");
    let trace = dir.join("t.mqsim");
    write_trace(&trace, &mixed_trace(400));
    for (keep, depth) in [(false, "8"), (true, "1")] {
        let target = dir.join(&format!("target-{keep}"));
        let (summary, log) = (dir.join("s.json"), dir.join("d.csv"));
        let mut cmd = flashlane();
        cmd.args(["replay", "--preset", "mqsim-ssd", "--trace"])
            .arg(&trace)
            .arg("--target")
            .arg(&target)
            .args(["--closed-loop", "16", "--set"])
            .arg(format!("device.queue_depth_requests={depth}"))
            .args(["--set", "host.scheduler.kind=deadline", "--json"])
            .arg(&summary)
            .arg("--dispatch-log")
            .arg(&log);
        if keep {
            cmd.arg("--keep");
        }
        let out = cmd.output().unwrap();
        ok(&out, "replay");
        let mut seqs: Vec<u64> = dispatch_order(&log).iter().map(|(s, _)| *s).collect();
        seqs.sort_unstable();
        assert_eq!(seqs, (0..400).collect::<Vec<_>>(), "each request once");
        let s = json(&summary);
        assert_eq!(s["requests"]["completed"], 400);
        same_request_figures_as_a_simulation(&s, &String::from_utf8_lossy(&out.stdout), &trace);
        assert_eq!(s["device"]["kind"], "real");
        assert_eq!(
            s["config"]["device"]["queue_depth_requests"],
            depth.parse::<u64>().unwrap()
        );
        // Figures a real drive cannot give are left out, not zero.
        for absent in [
            "chips",
            "flash",
            "gc",
            "waf",
            "interconnect",
            "energy",
            "sim_time_ns",
        ] {
            assert!(s.get(absent).is_none(), "{absent} present");
        }
        assert_eq!(target.exists(), keep, "--keep {keep}");
        if keep {
            let expected = 1024 * 4096;
            assert!(std::fs::metadata(&target).unwrap().len() <= expected);
        }
    }
}

/// The replay's summary carries every request figure of a simulation's (one type,
/// `stats::RequestFigures`, in both): each of its JSON keys with the same sub-keys, and each of
/// its text lines (up to its first number) in the text summary. The figures' own list is read
/// from the type, so a figure added there is checked here with no edit.
fn same_request_figures_as_a_simulation(
    replay: &serde_json::Value,
    replay_text: &str,
    trace: &Path,
) {
    let dir = Scratch::new("figures");
    let run_json = dir.join("run.json");
    let out = flashlane()
        .args([
            "run",
            "--preset",
            "mqsim-ssd",
            "--closed-loop",
            "16",
            "--trace",
        ])
        .arg(trace)
        .arg("--json")
        .arg(&run_json)
        .output()
        .unwrap();
    ok(&out, "run");
    let run = json(&run_json);
    let run_text = String::from_utf8_lossy(&out.stdout);
    fn shape(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), shape(v))).collect(),
            _ => serde_json::Value::Null,
        }
    }
    let figures = RequestFigures::default();
    let keys = serde_json::to_value(&figures).unwrap();
    for (key, value) in keys.as_object().unwrap() {
        assert_eq!(shape(&run[key]), shape(value), "run: {key}");
        assert_eq!(shape(&replay[key]), shape(value), "replay: {key}");
    }
    let mut lines = String::new();
    figures.write_text(&mut lines, 0, "");
    for line in lines.lines() {
        let label = line[..line
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(line.len())]
            .trim_end();
        for (what, text) in [("run", &*run_text), ("replay", replay_text)] {
            assert!(
                text.lines().any(|l| l.starts_with(label)),
                "{what}: no line {label:?}"
            );
        }
    }
}

/// Depth 1 with every request arrived before the first is handed over (`--afap` and a host
/// queue holding the whole trace): the simulation and the real replay then see the same
/// arrivals and the same completion order, so each scheduler must hand requests over in the
/// same order, merged into the same commands. Timers are set out of reach (or, for CFQ, to
/// slices of 0: a pure round robin), since simulated and real time differ. Different
/// schedulers give different orders, so the comparison can fail.
#[test]
fn each_scheduler_hands_over_in_the_simulators_order() {
    require_io_uring!("each_scheduler_hands_over_in_the_simulators_order");
    let dir = Scratch::new("order");
    let trace = dir.join("t.mqsim");
    let n = 240;
    write_trace(&trace, &mixed_trace(n));
    let far = "1000000000000";
    let schedulers: Vec<(&str, Vec<String>)> = vec![
        ("noop", vec!["host.scheduler.merge=true".into()]),
        (
            "deadline",
            vec![
                format!("host.scheduler.read_expire_ns={far}"),
                format!("host.scheduler.write_expire_ns={far}"),
            ],
        ),
        (
            "cfq",
            vec![
                "host.scheduler.slice_sync_ns=0".into(),
                "host.scheduler.slice_async_ns=0".into(),
            ],
        ),
        (
            "anticipatory",
            vec![
                format!("host.scheduler.read_expire_ns={far}"),
                format!("host.scheduler.write_expire_ns={far}"),
            ],
        ),
        (
            "pass",
            vec![
                "host.scheduler.region_bytes=1048576".into(),
                format!("host.scheduler.read_expire_ns={far}"),
                format!("host.scheduler.write_expire_ns={far}"),
            ],
        ),
        ("rws", vec![]),
        ("piq", vec![]),
        ("vios", vec![]),
    ];
    let mut orders = Vec::new();
    for (kind, extra) in &schedulers {
        let mut sets = vec![
            format!("host.scheduler.kind={kind}"),
            format!("host.queue_length_requests={n}"),
            "device.queue_depth_requests=1".to_string(),
        ];
        sets.extend(extra.iter().cloned());
        let mut logs = Vec::new();
        for command in ["run", "replay"] {
            let log = dir.join(&format!("{kind}-{command}.csv"));
            let mut cmd = flashlane();
            cmd.args([command, "--preset", "ssdsim-mlc-8x8", "--trace"])
                .arg(&trace)
                .arg("--afap")
                .arg("--dispatch-log")
                .arg(&log);
            for s in &sets {
                cmd.args(["--set", s]);
            }
            if command == "replay" {
                cmd.arg("--target").arg(dir.join("target"));
            }
            ok(&cmd.output().unwrap(), &format!("{command} {kind}"));
            logs.push(dispatch_order(&log));
        }
        assert_eq!(logs[0].len(), n as usize, "{kind}");
        assert_eq!(logs[0], logs[1], "{kind}: simulator vs real replay");
        orders.push((kind, logs.pop().unwrap()));
    }
    // The schedulers do not all agree: an order test that could not fail would pass anyway.
    let deadline = &orders[1].1;
    for (kind, order) in &orders {
        if *kind != &"deadline" {
            assert_ne!(order, deadline, "{kind} equals deadline");
        }
    }
    assert!(
        deadline.windows(2).any(|w| w[0].1 == w[1].1),
        "deadline merged nothing: the merge path was not exercised"
    );
}

/// `--verify` counts no mismatch on a target it wrote, and finds a block corrupted behind its
/// back (read again with `--reads-only --verify` from the kept file).
#[test]
fn verify_finds_a_planted_corruption() {
    require_io_uring!("verify_finds_a_planted_corruption");
    let dir = Scratch::new("verify");
    let trace = dir.join("t.mqsim");
    // Writes over 1 MiB, then reads of all of it.
    let mut requests: Vec<_> = (0..64u64)
        .map(|i| (0, 0, i * 16384, 16384, false))
        .collect();
    requests.extend((0..64u64).map(|i| (0, 0, i * 16384, 16384, true)));
    write_trace(&trace, &requests);
    let target = dir.join("target");
    let run = |extra: &[&str], clean: bool| {
        let summary = dir.join("s.json");
        let out = flashlane()
            .args(["replay", "--preset", "mqsim-ssd", "--trace"])
            .arg(&trace)
            .arg("--target")
            .arg(&target)
            .args(["--closed-loop", "8", "--verify", "--json"])
            .arg(&summary)
            .args(extra)
            .output()
            .unwrap();
        if clean {
            ok(&out, "replay --verify");
        } else {
            // A mismatch fails the command, with one line saying so; the summary is written.
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert!(err.contains("--verify: 1 of 2048 blocks"), "{err}");
        }
        let v = json(&summary)["replay"]["verify"].clone();
        (
            v["checked_blocks"].as_u64().unwrap(),
            v["mismatched_blocks"].as_u64().unwrap(),
        )
    };
    let (checked, bad) = run(&["--keep"], true);
    assert_eq!(
        (checked, bad),
        (2048, 0),
        "the replay's own writes read back"
    );
    assert_eq!(
        run(&["--reads-only"], true),
        (2048, 0),
        "the kept file, untouched"
    );
    // Plant: one byte of block 1000's payload.
    let mut bytes = std::fs::read(&target).unwrap();
    bytes[1000 * 512 + 100] ^= 0xff;
    std::fs::write(&target, &bytes).unwrap();
    assert_eq!(
        run(&["--reads-only"], false),
        (2048, 1),
        "the corrupted block"
    );
}

/// A file's bytes and modification time, to tell it was not touched.
fn fingerprint(path: &Path) -> Option<(Vec<u8>, std::time::SystemTime)> {
    let m = std::fs::metadata(path).ok()?;
    Some((std::fs::read(path).ok()?, m.modified().unwrap()))
}

fn refused(args: &[&std::ffi::OsStr]) -> String {
    let out = flashlane().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{:?} was not refused", args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(out.stdout.is_empty());
    err
}

/// Each refusal is one line, exit 2, and leaves the target as it was (or absent).
#[test]
fn refusals_leave_the_target_untouched() {
    let dir = Scratch::new("refuse");
    let trace = dir.join("t.mqsim");
    write_trace(&trace, &mixed_trace(50));
    let data = dir.join("data.img");
    std::fs::write(&data, vec![7u8; 8 << 20]).unwrap();
    let small = dir.join("small.img");
    std::fs::write(&small, vec![7u8; 64 << 10]).unwrap();
    let missing = dir.join("missing.img");
    let base = |target: &Path| -> Vec<std::ffi::OsString> {
        vec![
            "replay".into(),
            "--preset".into(),
            "mqsim-ssd".into(),
            "--trace".into(),
            trace.clone().into(),
            "--target".into(),
            target.into(),
        ]
    };
    let with = |target: &Path, extra: &[&str]| -> Vec<std::ffi::OsString> {
        let mut a = base(target);
        a.extend(extra.iter().map(|s| s.into()));
        a
    };
    let cases: Vec<(Vec<std::ffi::OsString>, &Path, &str)> = vec![
        (with(&data, &[]), &data, "--allow-writes"),
        (with(&data, &["--keep", "--allow-writes"]), &data, "--keep"),
        (
            with(&data, &["--size-bytes", "4096"]),
            &data,
            "--size-bytes",
        ),
        // Strict addresses past an existing file's end.
        (with(&small, &["--reads-only"]), &small, "past the"),
        (with(&missing, &["--reads-only"]), &missing, "--reads-only"),
        (with(&missing, &["--check-integrity"]), &missing, "--verify"),
        (
            with(&missing, &["--set", "host.handover_at=next_device_event"]),
            &missing,
            "SSDsim",
        ),
        (
            with(&missing, &["--fold-addresses"]),
            &missing,
            "--size-bytes",
        ),
        (with(&dir.0, &[]), &dir.0, "directory"),
    ];
    for (args, target, says) in cases {
        let before = fingerprint(target);
        let os: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let err = refused(&os);
        assert!(err.contains(says), "{says}: {err}");
        if target.is_file() || !target.exists() {
            assert!(
                fingerprint(target) == before,
                "{} changed: {err}",
                target.display()
            );
        }
    }
    // A character device is not a target.
    let err = refused(&[
        "replay".as_ref(),
        "--preset".as_ref(),
        "mqsim-ssd".as_ref(),
        "--trace".as_ref(),
        trace.as_os_str(),
        "--target".as_ref(),
        "/dev/null".as_ref(),
    ]);
    assert!(
        err.contains("neither a regular file nor a block device"),
        "{err}"
    );
    assert!(!missing.exists());
    // A file that exists (size 0, as /proc's say) is not called a file to create.
    if Path::new("/proc/version").is_file() {
        let err = refused(&[
            "replay".as_ref(),
            "--preset".as_ref(),
            "mqsim-ssd".as_ref(),
            "--trace".as_ref(),
            trace.as_os_str(),
            "--target".as_ref(),
            "/proc/version".as_ref(),
        ]);
        // No free space on /proc: refused there, else when opened to be filled.
        assert!(
            err.contains("into this empty file")
                || err.contains("is empty and cannot be opened to be filled"),
            "{err}"
        );
    }
}

/// The block device holding the temporary directory's filesystem, if this system shows one
/// (`/dev/NAME` of the mount's device number).
fn mounted_block_device() -> Option<PathBuf> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let dev = std::fs::metadata(std::env::temp_dir()).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let uevent = std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent")).ok()?;
    let name = uevent.lines().find_map(|l| l.strip_prefix("DEVNAME="))?;
    let path = PathBuf::from(format!("/dev/{name}"));
    std::fs::metadata(&path)
        .ok()?
        .file_type()
        .is_block_device()
        .then_some(path)
}

/// A mounted block device is refused, whatever is allowed, before it is opened for writing.
#[test]
fn a_mounted_block_device_is_refused() {
    let Some(device) = mounted_block_device() else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED (no mounted block device visible): a_mounted_block_device_is_refused: \
             the temporary directory is not on a block device this system shows in /dev"
        );
        return;
    };
    let dir = Scratch::new("mounted");
    let trace = dir.join("t.mqsim");
    write_trace(&trace, &mixed_trace(10));
    for extra in [&["--allow-writes"][..], &["--reads-only"][..]] {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "replay".as_ref(),
            "--preset".as_ref(),
            "mqsim-ssd".as_ref(),
            "--trace".as_ref(),
            trace.as_os_str(),
            "--target".as_ref(),
            device.as_os_str(),
        ];
        args.extend(extra.iter().map(|s| std::ffi::OsStr::new(*s)));
        let err = refused(&args);
        assert!(err.contains("mounted"), "{err}");
    }
}

/// A small probe: its JSON has the curves of PASS's Figs. 1-3 and is what the simulator's
/// drive behaviour takes (`device.region_contention.probe_path`); its figure has three panels.
/// A reads-only probe of the kept file measures reads only and leaves it byte-identical; a
/// probe that would write an existing file is refused.
#[test]
fn a_probe_feeds_the_simulator_and_reads_only_never_writes() {
    require_io_uring!("a_probe_feeds_the_simulator_and_reads_only_never_writes");
    let dir = Scratch::new("probe");
    let target = dir.join("drive.img");
    let (json_path, svg) = (dir.join("probe.json"), dir.join("probe.svg"));
    let probe = |extra: &[&str], json_path: &Path| {
        let mut cmd = flashlane();
        cmd.arg("probe")
            .arg("--target")
            .arg(&target)
            .args(["--point-ms", "5", "--outstanding", "1,4"])
            .args([
                "--region-bytes",
                "1048576,2097152",
                "--request-bytes",
                "4096,8192",
            ])
            .args(["--mix-percent", "0,50", "--json"])
            .arg(json_path)
            .args(extra);
        cmd.output().unwrap()
    };
    let out = probe(
        &[
            "--size-bytes",
            "4194304",
            "--keep",
            "--svg",
            svg.to_str().unwrap(),
        ],
        &json_path,
    );
    ok(&out, "probe");
    let p = json(&json_path);
    assert_eq!(p["schema_version"], 1);
    assert_eq!(p["target"]["kind"], "real");
    assert_eq!(
        p["parallelism"].as_array().unwrap().len(),
        4,
        "2 regions x read, write"
    );
    assert_eq!(
        p["sizes"].as_array().unwrap().len(),
        4,
        "sequential, random x read, write"
    );
    assert_eq!(p["interference"].as_array().unwrap().len(), 3);
    let curve = &p["parallelism"][0];
    assert_eq!(curve["operation"], "read");
    assert_eq!(curve["points"].as_array().unwrap().len(), 2);
    assert_eq!(
        curve["service_time_factor"][0], 1.0,
        "at or before the peak"
    );
    let figure = std::fs::read_to_string(&svg).unwrap();
    assert!(figure.starts_with("<svg") && figure.matches("Fig. ").count() == 3);

    // The simulator takes the measured curve.
    let summary = dir.join("run.json");
    write_trace(&dir.join("t.mqsim"), &mixed_trace(50));
    let out = flashlane()
        .args(["run", "--preset", "pass-ssd1", "--trace"])
        .arg(dir.join("t.mqsim"))
        .args([
            "--set",
            "device.region_contention.region_bytes=1048576",
            "--set",
        ])
        .arg(format!(
            "device.region_contention.probe_path={}",
            json_path.display()
        ))
        .arg("--json")
        .arg(&summary)
        .output()
        .unwrap();
    ok(&out, "run with the probe's curve");
    let contention = &json(&summary)["config"]["device"]["region_contention"];
    assert_eq!(
        contention["outstanding_requests"],
        serde_json::json!([1, 4])
    );
    assert_eq!(
        contention["service_time_factor"],
        curve["service_time_factor"]
    );

    // Reads only: the kept file is read, never written.
    let before = fingerprint(&target);
    let reads = dir.join("reads.json");
    ok(&probe(&["--reads-only"], &reads), "probe --reads-only");
    assert!(
        fingerprint(&target) == before,
        "a reads-only probe changed the target"
    );
    let r = json(&reads);
    assert!(r["parallelism"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["operation"] == "read"));
    assert_eq!(r["interference"].as_array().unwrap().len(), 0);
    // Writing it needs --allow-writes.
    let out = probe(&[], &dir.join("refused.json"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-writes"));
    assert!(fingerprint(&target) == before);
    assert!(!dir.join("refused.json").exists());
}

/// A signal during a replay removes the file it created (and exits with 128 + the signal);
/// with --keep the file stays.
#[test]
fn a_signal_removes_the_created_target() {
    require_io_uring!("a_signal_removes_the_created_target");
    let dir = Scratch::new("signal");
    let spec = dir.join("long.toml");
    // Far more than the test waits for: it is stopped once the file exists.
    std::fs::write(
        &spec,
        "requests = 2000000\nread_fraction = 0.5\n[arrival]\nkind = \"closed_loop\"\n\
         queue_depth_requests = 1\n[size]\nkind = \"uniform\"\nmin_bytes = 4096\n\
         max_bytes = 4096\nalign_bytes = 4096\n[address]\nkind = \"uniform\"\n\
         span_bytes = 1048576\nalign_bytes = 4096\n",
    )
    .unwrap();
    for keep in [false, true] {
        let target = dir.join(&format!("target-{keep}"));
        let mut cmd = flashlane();
        cmd.args(["replay", "--preset", "mqsim-ssd", "--synthetic"])
            .arg(&spec)
            .arg("--target")
            .arg(&target)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if keep {
            cmd.arg("--keep");
        }
        let mut child = cmd.spawn().unwrap();
        // The survey reads the whole workload first; then the file is created.
        let mut waited = 0;
        while !target.exists() {
            assert!(waited < 6000, "no target file appeared");
            assert!(child.try_wait().unwrap().is_none(), "replay ended early");
            std::thread::sleep(std::time::Duration::from_millis(10));
            waited += 1;
        }
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130));
        assert_eq!(target.exists(), keep, "--keep {keep}");
    }
}
