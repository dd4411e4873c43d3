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
            "mqsim-default",
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
    assert!(
        csv_text
            .lines()
            .nth(1)
            .unwrap()
            .contains(",1,1,1,1,1,1,1,1"),
        "{csv_text}"
    );
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
            "mqsim-default",
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
    for name in [
        "mqsim-default",
        "ssdsim-mlc-8x8",
        "venice-perf",
        "venice-cost",
        "sos-4x4",
        "pass-ssd1",
        "pass-msr-60gb",
    ] {
        assert!(text.contains(name), "{text}");
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

#[test]
fn output_into_a_closed_pipe_is_not_a_panic() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = flashlane()
        .args(["gen", "--list"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away at once, like `| head -0`
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    child.wait().unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
}
