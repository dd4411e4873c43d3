//! The `flashlane` command end to end on bundled real traces.

use std::path::PathBuf;
use std::process::Command;

fn flashlane() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashlane"))
}

fn trace(name: &str) -> String {
    format!("{}/../../traces/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("flashlane-cli-{}-{name}", std::process::id()))
}

#[test]
fn run_prints_a_summary_and_writes_the_documented_json() {
    let json = temp("run.json");
    let out = flashlane()
        .args([
            "run",
            "--preset",
            "mqsim-ssd",
            "--trace",
            &trace("tpcc-small.mqsim"),
            "--format",
            "mqsim",
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("6999 measured"), "{text}");
    // The engine's rate and the whole command's, each named; WAF over all programs and the
    // host-and-GC figure beside it.
    assert!(
        text.contains("requests/s simulating); preconditioning ") && text.contains("; whole run "),
        "{text}"
    );
    assert!(text.contains("(all programs; host and GC only "), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    for key in [
        "schema_version",
        "seed",
        "config",
        "trace",
        "requests",
        "latency_us",
        "throughput",
        "sim_time_ns",
        "chips",
        "conflicts",
        "flash",
        "gc",
        "waf",
        "waf_host_gc",
        "engine",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["requests"]["completed"], 6999);
    assert_eq!(v["trace"]["format"], "mqsim");
    assert!(
        v["latency_us"]["read"]["p99"].as_f64().unwrap()
            >= v["latency_us"]["read"]["p50"].as_f64().unwrap()
    );
}

#[test]
fn compare_writes_rows_with_full_summaries_and_a_csv() {
    let (json, csv) = (temp("cmp.json"), temp("cmp.csv"));
    let out = flashlane()
        .args([
            "compare",
            "--preset",
            "ssdsim-mlc-8x8",
            "--trace",
            &trace("tpcc-small.mqsim"),
            "--format",
            "mqsim",
        ])
        .args(["--remap-addresses", "--host-schedulers", "noop,rws,piq"])
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["host_scheduler"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["noop", "rws", "piq"]);
    for row in rows {
        assert_eq!(row["summary"]["requests"]["completed"], 6999);
        assert_eq!(
            row["summary"]["host_scheduler"]["name"],
            row["host_scheduler"]
        );
    }
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv_text.lines().count(), 4);
    // Every row's `X_normalized` is its X over the reference row's (the first) X, and the
    // rows' own figures are their summaries'.
    let table: Vec<Vec<&str>> = csv_text.lines().map(|l| l.split(',').collect()).collect();
    let header = &table[0];
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let number = |row: usize, name: &str| table[row][column(name)].parse::<f64>().unwrap();
    let normalized: Vec<&str> = header
        .iter()
        .filter_map(|h| h.strip_suffix("_normalized"))
        .collect();
    assert!(normalized.contains(&"read_latency_us"), "{csv_text}");
    for row in 1..table.len() {
        for name in &normalized {
            let (value, reference) = (number(row, name), number(1, name));
            let expected = if reference == 0.0 {
                f64::NAN
            } else {
                value / reference
            };
            let got = number(row, &format!("{name}_normalized"));
            assert!(
                (got - expected).abs() <= 1e-12 * expected.abs()
                    || (got.is_nan() && expected.is_nan()),
                "row {row} {name}: {got} != {value} / {reference}"
            );
        }
        // The summary's mean is rounded to 4 decimals (docs/summary.md).
        let mean = rows[row - 1]["summary"]["latency_us"]["read"]["mean"]
            .as_f64()
            .unwrap();
        assert!(
            (number(row, "read_latency_us") - mean).abs() < 1e-3,
            "row {row}"
        );
    }
    assert_ne!(number(2, "read_latency_us_normalized"), 1.0, "{csv_text}");
    std::fs::remove_file(json).unwrap();
    std::fs::remove_file(csv).unwrap();
}

#[test]
fn errors_name_the_problem_and_exit_with_status_2() {
    let out = flashlane()
        .args([
            "run",
            "--preset",
            "nope",
            "--trace",
            &trace("tpcc-small.mqsim"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown preset `nope`"));
    let out = flashlane()
        .args([
            "run",
            "--preset",
            "mqsim-ssd",
            "--trace",
            &trace("tpcc-small.mqsim"),
            "--format",
            "mqsim",
        ])
        .args(["--set", "ftl.gc_threshold=0.1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("gc_threshold"));
}

#[test]
fn presets_lists_every_preset() {
    let out = flashlane().arg("presets").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for name in flashlane_core::config::preset_names() {
        assert!(text.contains(&format!("{name} ")), "{name}: {text}");
    }
}

#[test]
fn a_profile_runs_on_the_fly_and_is_labelled_as_a_stand_in() {
    let json = temp("profile.json");
    let out = flashlane()
        .args([
            "run",
            "--preset",
            "venice-perf",
            "--profile",
            "hm_0",
            "--max-requests",
            "5000",
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("synthetic stand-in for hm_0"), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    assert_eq!(v["requests"]["completed"], 5000);
    assert_eq!(v["sources"][0]["format"], "synthetic");
    assert!(v["sources"][0]["label"]
        .as_str()
        .unwrap()
        .starts_with("synthetic stand-in for hm_0"));
}

/// Output into a pipe whose reader has gone (`flashlane ... | head -0`) ends the process by
/// SIGPIPE, quietly, as other Unix tools do; never a panic. The reader is closed before the
/// process starts, so its first write meets the closed pipe every time.
#[test]
fn output_into_a_closed_pipe_is_not_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = flashlane()
        .args(["gen", "--list"])
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.signal(),
        Some(libc_sigpipe()),
        "{:?}: {stderr}",
        out.status
    );
    assert!(stderr.is_empty(), "{stderr}");
}

/// SIGPIPE's number (13 on Linux and the BSDs).
fn libc_sigpipe() -> i32 {
    13
}

/// `trace stats FILE ARGS --json OUT` → the parsed JSON (the command must succeed).
fn trace_stats(file: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let json = temp(&format!(
        "stats-{}.json",
        file.file_name().unwrap().to_string_lossy()
    ));
    let out = flashlane()
        .args(["trace", "stats"])
        .arg(file)
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    v
}

#[test]
fn trace_stats_takes_every_reading_option_of_run() {
    let dir = temp("reading-options");
    std::fs::create_dir_all(&dir).unwrap();
    // Two devices; line 3 is malformed.
    let mqsim = dir.join("two-devices.mqsim");
    std::fs::write(&mqsim, "0 0 0 8 1\n10 1 8 8 0\nbad line\n20 1 16 8 1\n").unwrap();

    // --max-bad-lines: refused without, skipped and counted with.
    let out = flashlane()
        .args(["trace", "stats"])
        .arg(&mqsim)
        .args(["--format", "mqsim"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("two-devices.mqsim:3:"));
    let v = trace_stats(&mqsim, &["--format", "mqsim", "--max-bad-lines", "1"]);
    assert_eq!(
        (v["requests"].as_u64(), v["bad_lines"].as_u64()),
        (Some(3), Some(1))
    );

    // --device: only device 1's two requests (one write, one read).
    let v = trace_stats(
        &mqsim,
        &["--format", "mqsim", "--max-bad-lines", "1", "--device", "1"],
    );
    assert_eq!(v["requests"], 2);
    assert_eq!(
        (v["reads"].as_u64(), v["writes"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(v["devices"][0]["device"], 1);
    assert_eq!(v["device_count"], 1);

    // --format generic-csv with --csv-columns: semicolon-separated, microseconds, sectors.
    let csv = dir.join("custom.txt");
    std::fs::write(&csv, "5;R;8;8\n7;W;0;16\n").unwrap();
    let v = trace_stats(
        &csv,
        &[
            "--format",
            "generic-csv",
            "--csv-columns",
            "time=0:us,op=1:R/W,offset=2:sectors,size=3:sectors,delimiter=semicolon",
        ],
    );
    assert_eq!(v["requests"], 2);
    assert_eq!(v["bytes_written"], 16 * 512);
    assert_eq!(v["span_ns"], 2000);

    // --queue-events: the blkparse sample has 1695 Q events and 1694 D events.
    let ycsb = PathBuf::from(trace("ycsb-a-rocksdb.blkparse.gz"));
    assert_eq!(trace_stats(&ycsb, &[])["requests"], 1694);
    assert_eq!(trace_stats(&ycsb, &["--queue-events"])["requests"], 1695);

    // --format diskmon, and its detection.
    let log = dir.join("diskmon.log");
    std::fs::write(
        &log,
        "1\t0.5\t0.001\t0\tRead\t16\t8\n2\t0.75\t0.001\t0\tWrite\t0\t8\n",
    )
    .unwrap();
    assert_eq!(
        trace_stats(&log, &["--format", "diskmon"])["format"],
        "diskmon"
    );
    assert_eq!(trace_stats(&log, &[])["span_ns"], 250_000_000);

    // The same group on `trace convert`: --device keeps device 1 only.
    let converted = dir.join("dev1.mqsim");
    let out = flashlane()
        .args(["trace", "convert"])
        .arg(&mqsim)
        .args(["--format", "mqsim", "--to", "mqsim", "--max-bad-lines", "1"])
        .args(["--device", "1"])
        .arg(&converted)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&converted).unwrap(),
        "10 1 8 8 0\n20 1 16 8 1\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unwritable_outputs_fail_before_any_trace_is_read() {
    let dir = temp("unwritable");
    std::fs::create_dir_all(&dir).unwrap();
    // A trace whose third line is malformed: reading or simulating it would fail with that
    // line's error, so an error naming the output path proves the check came first.
    let bad = dir.join("bad-at-line-3.mqsim");
    std::fs::write(&bad, "0 0 0 8 1\n10 0 8 8 1\nnot a record\n").unwrap();
    let missing = dir.join("no-such-dir").join("out.json");
    let bad = bad.to_str().unwrap();
    let missing_arg = missing.to_str().unwrap();
    let commands: [Vec<&str>; 5] = [
        vec![
            "run",
            "--preset",
            "mqsim-ssd",
            "--trace",
            bad,
            "--json",
            missing_arg,
        ],
        vec![
            "compare",
            "--preset",
            "mqsim-ssd",
            "--trace",
            bad,
            "--host-schedulers",
            "noop,piq",
            "--csv",
            missing_arg,
        ],
        vec![
            "sweep",
            "--preset",
            "mqsim-ssd",
            "--trace",
            bad,
            "--values",
            "1,2",
            "--json",
            missing_arg,
        ],
        vec!["trace", "stats", bad, "--json", missing_arg],
        vec!["trace", "convert", bad, "--to", "msr", missing_arg],
    ];
    for args in commands {
        let out = flashlane().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(missing_arg) && stderr.contains("does not exist"),
            "{args:?}: {stderr}"
        );
        assert!(
            !stderr.contains(":3:"),
            "{args:?} read the trace first: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?} printed results");
    }
    // A directory given as the output file is refused the same way.
    let out = flashlane()
        .args(["run", "--preset", "mqsim-ssd", "--trace", bad, "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
    assert!(!missing.parent().unwrap().exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run's warnings are in its text summary and its JSON; `compare` prints each once with the
/// rows that carry it (here: a header-only trace, and `--device 99` on a real one).
#[test]
fn warnings_are_printed_and_written_by_run_and_compare() {
    let header = temp("header-only.csv");
    std::fs::write(
        &header,
        "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n",
    )
    .unwrap();
    let json = temp("warn.json");
    let out = flashlane()
        .args(["run", "--preset", "mqsim-ssd", "--format", "msr", "--trace"])
        .arg(&header)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("warning [no_requests_measured, 1]: no request was measured"),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["warnings"][0]["code"], "no_requests_measured");
    assert_eq!(v["warnings"][0]["count"], 1);
    std::fs::remove_file(&json).unwrap();
    std::fs::remove_file(&header).unwrap();

    let out = flashlane()
        .args([
            "compare",
            "--preset",
            "mqsim-ssd",
            "--trace",
            &trace("tpcc-small.mqsim"),
            "--remap-addresses",
            "--host-schedulers",
            "noop,deadline",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("warning [host_queue_never_held_two] (deadline): ")
            && text.contains("host schedulers cannot differ"),
        "{text}"
    );
}

/// Runs on parallel threads are held to the memory limit together: two runs of about 40 GiB
/// of FTL records each are refused before either allocates (over the 64 GiB cap, or this
/// machine's available memory if lower).
#[test]
fn compare_refuses_parallel_runs_that_do_not_fit_together() {
    let out = flashlane()
        .args([
            "compare",
            "--preset",
            "mqsim-ssd",
            "--trace",
            &trace("tpcc-small.mqsim"),
            "--set",
            "geometry.blocks_per_plane=5000000",
            "--set",
            "geometry.pages_per_block=1",
            "--host-schedulers",
            "noop,deadline",
            "--jobs",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2 runs at once need about ") && err.contains("--jobs"),
        "{err}"
    );
}

#[test]
fn a_partial_config_file_merges_over_a_preset_like_its_set_chain() {
    let partial = temp("partial.toml");
    std::fs::write(
        &partial,
        "[host]\nqueue_length_requests = 8\nscheduler = { kind = \"piq\" }\n",
    )
    .unwrap();
    let summary = |extra: &[&str], name: &str| {
        let json = temp(name);
        let out = flashlane()
            .args(["run", "--preset", "ssdsim-mlc-8x8", "--remap-addresses"])
            .args(["--trace", &trace("tpcc-small.mqsim"), "--json"])
            .arg(&json)
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        std::fs::remove_file(&json).unwrap();
        v.as_object_mut().unwrap().remove("engine");
        v["precondition"].as_object_mut().unwrap().remove("wall_s");
        v
    };
    let merged = summary(&["--config", partial.to_str().unwrap()], "merged.json");
    let chain = summary(
        &[
            "--set",
            "host.queue_length_requests=8",
            "--set",
            "host.scheduler.kind=piq",
        ],
        "chain.json",
    );
    std::fs::remove_file(&partial).unwrap();
    assert_eq!(merged["host_scheduler"]["name"], "piq");
    assert_eq!(merged, chain);
}

#[test]
fn compare_puts_named_variants_side_by_side_in_one_command() {
    let csv = temp("variants.csv");
    let out = flashlane()
        .args(["compare", "--preset", "sos-4x4", "--jobs", "2"])
        .args([
            "--trace",
            &trace("financial1-head.spc"),
            "--max-requests",
            "3000",
        ])
        .args(["--variant", "IOS:device.scheduler.kind=in_order"])
        .args(["--variant", "HOS:device.scheduler.kind=out_of_order"])
        .args([
            "--variant",
            "SOS(QSL):device.scheduler.kind=sos,device.scheduler.write_hit_manager=false",
        ])
        .args([
            "--variant",
            "SOS(WHM):device.scheduler.kind=sos,device.scheduler.queue_size_leveller=false",
        ])
        .args(["--variant", "SOS:device.scheduler.kind=sos"])
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["IOS", "HOS", "SOS(QSL)", "SOS(WHM)", "SOS"] {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name} row missing:\n{text}"
        );
    }
    assert!(
        text.contains("Columns (") && text.contains("hq_full"),
        "{text}"
    );
    let table = std::fs::read_to_string(&csv).unwrap();
    std::fs::remove_file(&csv).unwrap();
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 6, "{table}");
    assert!(rows[0].starts_with("variant,host_scheduler,key,value,read_latency_us"));
    let first_col: Vec<&str> = rows[1..]
        .iter()
        .map(|r| r.split(',').next().unwrap())
        .collect();
    assert_eq!(first_col, ["IOS", "HOS", "SOS(QSL)", "SOS(WHM)", "SOS"]);
    // The variants differ where their device schedulers do: in-order vs SOS write latency.
    let write_us = |row: &str| row.split(',').nth(5).unwrap().parse::<f64>().unwrap();
    assert_ne!(write_us(rows[1]), write_us(rows[5]));
}

#[test]
fn compare_puts_whole_presets_side_by_side() {
    let out = flashlane()
        .args(["compare", "--vary", "preset=mqsim-ssd,mqsim-platform"])
        .args(["--trace", &trace("tpcc-small.mqsim"), "--jobs", "2"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("mqsim-ssd "))
            && text.lines().any(|l| l.starts_with("mqsim-platform ")),
        "{text}"
    );
}

#[test]
fn the_text_summary_shows_what_the_json_knows() {
    // A line that cannot be read, a time that steps back, a write buffer, the mapping cache.
    let trace_file = temp("text-summary.mqsim");
    std::fs::write(
        &trace_file,
        "1000 0 0 8 0\nnot a record\n900 0 64 8 1\n2000 0 128 8 1\n",
    )
    .unwrap();
    let out = flashlane()
        .args(["run", "--preset", "mqsim-ssd", "--format", "mqsim"])
        .arg("--trace")
        .arg(&trace_file)
        .args(["--max-bad-lines", "1"])
        .args(["--set", "device.write_buffer_bytes=1048576"])
        .output()
        .unwrap();
    std::fs::remove_file(&trace_file).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for expected in [
        "input: 1 malformed lines skipped, 1 times that stepped back clamped",
        "mapping reads",
        "host queue: mean",
        "GC: 0 runs",
        "mapping cache: ",
        "write buffer: 128 pages",
        "preconditioning: ",
    ] {
        assert!(text.contains(expected), "`{expected}` missing:\n{text}");
    }
}

#[test]
fn trace_stats_measures_the_conditions_under_a_preset() {
    // mqsim-ssd deals 8 KiB pages to its 8 channels first: pages 8k all sit on channel 0.
    // 64 one-page reads 1 us apart at 0, then 50 sequential writes from 10 ms on.
    let file = temp("conditions.mqsim");
    let mut text = String::new();
    for k in 0..64u64 {
        text.push_str(&format!("{} 0 {} 16 1\n", k * 1000, k * 8 * 16));
    }
    for k in 0..50u64 {
        let lba = 1_000_000 * 16 * 8 + k * 16;
        text.push_str(&format!("{} 0 {lba} 16 0\n", 10_000_000 + k * 1000));
    }
    std::fs::write(&file, text).unwrap();
    let v = trace_stats(&file, &["--format", "mqsim", "--preset", "mqsim-ssd"]);
    std::fs::remove_file(&file).unwrap();
    let c = &v["conditions"];
    assert_eq!(c["preset"], "mqsim-ssd");
    assert_eq!(c["addresses"], "fold");
    let share: Vec<f64> = c["channel_page_share"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    // Reads: 64 pages on channel 0; writes: 50 consecutive pages, 7 of them on channel 0.
    assert!((share[0] - (64.0 + 7.0) / 114.0).abs() < 1e-9, "{share:?}");
    assert!((share.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    // 1 ms windows from 0 to 10.049 ms: 11 windows, 64 arrivals at most in one.
    let w1 = &c["windows"][0];
    assert_eq!(w1["window_ns"], 1_000_000);
    let peak = w1["peak_to_mean_arrivals"].as_f64().unwrap();
    assert!((peak - 64.0 * 11.0 / 114.0).abs() < 1e-9, "{peak}");
    // The read window: all 64 pages on channel 0 (a window of at least 8 pages per channel).
    assert_eq!(w1["hottest_channel_share_max"], 1.0);
    // No window holds 8 pages per chip: no largest chip share, and null rather than 0.
    assert!(w1["hottest_chip_share_max"].is_null(), "{w1}");
    // One run for each read, one for the 50 writes: 114 / 65.
    let runs = c["mean_run_requests"].as_f64().unwrap();
    assert!((runs - 114.0 / 65.0).abs() < 1e-9, "{runs}");
    // 114 pages of 8 KiB over 10.049 ms against 8 channels x 0.333 B/ns.
    let load = c["offered_load_channel_fraction"].as_f64().unwrap();
    let expected = 114.0 * 8192.0 / 10.049e-3 / (8.0 * 0.333e9);
    assert!(
        (load - expected).abs() < 1e-9 * expected,
        "{load} vs {expected}"
    );
    // Array time: 64 x 75 us + 50 x 750 us over 64 dies x the span.
    let array = c["offered_load_array_fraction"].as_f64().unwrap();
    let expected = (64.0 * 75e3 + 50.0 * 750e3) / (64.0 * 10.049e6);
    assert!(
        (array - expected).abs() < 1e-9 * expected,
        "{array} vs {expected}"
    );
}

/// `flashlane ARGS` with an interpreter that cannot be started.
fn without_python(args: &[&str]) -> std::process::Output {
    flashlane()
        .args(args)
        .env("FLASHLANE_PYTHON", temp("no-such-python"))
        .output()
        .unwrap()
}

/// `reproduce --help` (alone or after PAPER) works without the Python package: the help is
/// printed from Rust when the interpreter cannot be started or cannot import the package.
#[test]
fn reproduce_help_works_without_python() {
    for args in [
        &["reproduce", "--help"][..],
        &["reproduce", "piq", "-h"][..],
    ] {
        let out = without_python(args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for needle in [
            "PAPER: piq, pass, vios, sos, venice, all or combos",
            "--render-only",
            "pip install \".[reproduce]\"",
            "cannot be started",
        ] {
            assert!(text.contains(needle), "{args:?} lacks {needle:?}:\n{text}");
        }
    }
    // Without --help the missing interpreter is still an error.
    let out = without_python(&["reproduce", "piq", "--quick"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `advise --help` works without the Python package too (the CLI's own copy of the options),
/// and without `--help` a missing interpreter is an error that names the command.
#[test]
fn advise_help_works_without_python() {
    let out = without_python(&["advise", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in ["--trace T", "--quick", "--json FILE", "cannot be started"] {
        assert!(text.contains(needle), "lacks {needle:?}:\n{text}");
    }
    let out = without_python(&["advise", "--trace", "traces/tpcc-small.mqsim"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("flashlane advise needs Python 3"), "{err}");
}

/// `run --dispatch-log` lists every request once, in hand-over order: under deadline with a
/// deep host queue and one device slot the order is not the trace order.
#[test]
fn run_writes_the_dispatch_order() {
    let log = temp("dispatch.csv");
    let out = flashlane()
        .args(["run", "--preset", "mqsim-ssd", "--trace"])
        .arg(trace("tpcc-small.mqsim"))
        .args(["--max-requests", "300", "--afap"])
        .args(["--set", "host.scheduler.kind=deadline"])
        .args(["--set", "host.queue_length_requests=64"])
        .args(["--set", "device.queue_depth_requests=1"])
        .arg("--dispatch-log")
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("command,seq,op,offset_bytes,size_bytes,dispatched_ns")
    );
    let seqs: Vec<u64> = lines
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    let mut sorted = seqs.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..300).collect::<Vec<u64>>());
    assert_ne!(seqs, sorted, "deadline sorts by address: not trace order");
}

/// A count of one in a message is singular ("wrote 1 request", "1 record"), not "1 requests".
#[test]
fn a_count_of_one_reads_singular() {
    let dir = temp("singular");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let generated = dir.join("one.mqsim");
    let out = flashlane()
        .args(["gen", "--profile", "src1_0", "--requests", "1", "--out"])
        .arg(&generated)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("wrote 1 request to"), "{text}");
    let out = flashlane()
        .args(["trace", "convert"])
        .arg(&generated)
        .args(["--format", "mqsim", "--to", "disksim"])
        .arg(dir.join("one.disksim"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("(disksim): 1 record\n"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The run's header says what was put over the preset (a partial config file, --set
/// overrides), so a changed run is not labelled as the bare preset.
#[test]
fn the_header_names_what_was_merged_over_the_preset() {
    let partial = temp("partial.toml");
    std::fs::write(&partial, "[ftl]\nmapping_cache_bytes = 0\n").unwrap();
    let header = |extra: &[&str]| {
        let out = flashlane()
            .args(["run", "--preset", "mqsim-ssd", "--trace"])
            .arg(trace("tpcc-small.mqsim"))
            .args(["--max-requests", "50"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines().take(2).collect::<Vec<_>>().join("\n")
    };
    let merged = header(&[
        "--config",
        partial.to_str().unwrap(),
        "--set",
        "ftl.gc_threshold_fraction=0.1",
    ]);
    let expected = format!(
        "config {} merged over preset mqsim-ssd; 1 --set override",
        partial.display()
    );
    assert!(merged.contains(&expected), "{merged}");
    let plain = header(&[]);
    assert!(
        !plain.contains("merged") && !plain.contains("--set"),
        "{plain}"
    );
    std::fs::remove_file(partial).unwrap();
}
