//! `--precondition-cache DIR` on `run`, `compare` and `sweep`: the drive is preconditioned
//! once and loaded by every later run of it, with the same results; a damaged snapshot stops
//! the command with one line and status 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A fresh directory under the temporary directory, removed (with its contents) when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("flashlane-cli-cache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `flashlane COMMAND` on a small aged drive (GC during preconditioning and the run) with the
/// cache in `cache`, then `extra`.
fn flashlane(command: &str, cache: &Path, extra: &[&str]) -> Output {
    let trace = format!(
        "{}/../../traces/tpcc-small.mqsim",
        env!("CARGO_MANIFEST_DIR")
    );
    Command::new(env!("CARGO_BIN_EXE_flashlane"))
        .arg(command)
        .args(["--preset", "sos-4x4", "--trace", &trace, "--fold-addresses"])
        .args(["--max-requests", "3000"])
        .args(["--set", "geometry.blocks_per_plane=64"])
        .args(["--set", "precondition.fill_fraction=0.9"])
        .args(["--set", "precondition.age=true"])
        .arg("--precondition-cache")
        .arg(cache)
        .args(extra)
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A summary without its wall-clock fields and snapshot report.
fn comparable(summary: &Value) -> Value {
    let mut summary = summary.clone();
    summary.as_object_mut().unwrap().remove("engine");
    let precondition = summary["precondition"].as_object_mut().unwrap();
    precondition.remove("wall_s");
    precondition.remove("snapshot");
    summary
}

#[test]
fn run_writes_the_snapshot_once_and_loads_it_after() {
    let dir = Scratch::new("run");
    let cache = dir.0.join("cache");
    let first_json = dir.0.join("first.json");
    let second_json = dir.0.join("second.json");
    let first = ok(&flashlane(
        "run",
        &cache,
        &["--json", first_json.to_str().unwrap()],
    ));
    let second = ok(&flashlane(
        "run",
        &cache,
        &["--json", second_json.to_str().unwrap()],
    ));
    assert!(
        first.contains("precondition snapshot: drive written to "),
        "{first}"
    );
    assert!(
        second.contains("precondition snapshot: drive loaded from "),
        "{second}"
    );
    let (first, second) = (json(&first_json), json(&second_json));
    assert_eq!(first["precondition"]["snapshot"]["loaded"], false);
    assert_eq!(second["precondition"]["snapshot"]["loaded"], true);
    assert_eq!(
        first["precondition"]["snapshot"]["key"],
        second["precondition"]["snapshot"]["key"]
    );
    assert!(first["gc"]["runs"].as_u64().unwrap() > 0);
    assert_eq!(comparable(&first), comparable(&second));
}

#[test]
fn compare_and_sweep_precondition_the_shared_drive_once() {
    let dir = Scratch::new("compare");
    let cache = dir.0.join("cache");
    let out = dir.0.join("compare.json");
    ok(&flashlane(
        "compare",
        &cache,
        &[
            "--host-schedulers",
            "noop,deadline,cfq",
            "--jobs",
            "2",
            "--json",
            out.to_str().unwrap(),
        ],
    ));
    let loaded = |path: &Path| -> Vec<bool> {
        json(path)["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                row["summary"]["precondition"]["snapshot"]["loaded"]
                    .as_bool()
                    .unwrap()
            })
            .collect()
    };
    let mut compared = loaded(&out);
    compared.sort();
    assert_eq!(compared, [false, true, true], "one preconditions, two load");
    // The sweep's drive is the same one: every run loads it.
    ok(&flashlane(
        "sweep",
        &cache,
        &[
            "--key",
            "host.queue_length_requests",
            "--values",
            "4,64",
            "--json",
            out.to_str().unwrap(),
        ],
    ));
    assert_eq!(loaded(&out), [true, true]);
}

#[test]
fn a_damaged_snapshot_stops_the_run_with_one_line() {
    let dir = Scratch::new("damaged");
    let cache = dir.0.join("cache");
    let first = dir.0.join("first.json");
    ok(&flashlane(
        "run",
        &cache,
        &["--json", first.to_str().unwrap()],
    ));
    let file = json(&first)["precondition"]["snapshot"]["file"]
        .as_str()
        .unwrap()
        .to_string();
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() - 100]).unwrap();
    let second = dir.0.join("second.json");
    let out = flashlane("run", &cache, &["--json", second.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: precondition snapshot {file}: truncated")),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert!(!second.exists(), "no summary written");
}
