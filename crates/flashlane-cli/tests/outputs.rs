//! Outputs never land on the command's own inputs, targets or other outputs (issue 34, item 1):
//! each is refused before anything runs, with the input left as it was.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn flashlane() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashlane"))
}

/// A fresh directory, removed with its files when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("flashlane-outputs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// A copy of a bundled trace, to be written over if a check fails.
    fn trace(&self) -> PathBuf {
        let path = self.path("t.mqsim");
        let shipped = format!(
            "{}/../../traces/tpcc-small.mqsim",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::copy(shipped, &path).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn refused(out: &Output, says: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(says), "wanted {says:?} in: {err}");
}

fn unchanged(path: &Path, bytes: &[u8]) {
    assert_eq!(
        std::fs::read(path).unwrap(),
        bytes,
        "{} was changed",
        path.display()
    );
}

fn run(trace: &Path, extra: &[&str]) -> Output {
    flashlane()
        .args([
            "run",
            "--preset",
            "mqsim-ssd",
            "--format",
            "mqsim",
            "--max-requests",
            "20",
        ])
        .arg("--trace")
        .arg(trace)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn an_output_onto_an_input_trace_is_refused_by_inode() {
    let dir = Scratch::new("input");
    let trace = dir.trace();
    let bytes = std::fs::read(&trace).unwrap();
    let link = dir.path("link.mqsim");
    std::os::unix::fs::symlink(&trace, &link).unwrap();
    for output in [&trace, &link] {
        for flag in ["--json", "--dispatch-log"] {
            let out = run(&trace, &[flag, output.to_str().unwrap()]);
            refused(&out, "is the trace");
            unchanged(&trace, &bytes);
        }
    }
    let out = flashlane()
        .args(["trace", "stats"])
        .arg(&trace)
        .arg("--json")
        .arg(&link)
        .output()
        .unwrap();
    refused(&out, "is the trace");
    let out = flashlane()
        .args(["trace", "convert", "--to", "mqsim"])
        .arg(&trace)
        .arg(&link)
        .output()
        .unwrap();
    refused(&out, "is the trace");
    unchanged(&trace, &bytes);
}

#[test]
fn two_outputs_naming_one_file_are_refused() {
    let dir = Scratch::new("twice");
    let trace = dir.trace();
    let same = dir.path("o");
    let out = run(
        &trace,
        &[
            "--json",
            same.to_str().unwrap(),
            "--dispatch-log",
            same.to_str().unwrap(),
        ],
    );
    refused(&out, "named by both --json and --dispatch-log");
    assert!(!same.exists(), "nothing is written");
    // Through another name of the same (new) file.
    let other = dir.0.join(".").join("o");
    let out = run(
        &trace,
        &[
            "--json",
            same.to_str().unwrap(),
            "--dispatch-log",
            other.to_str().unwrap(),
        ],
    );
    refused(&out, "named by both");
    let out = flashlane()
        .args([
            "compare",
            "--preset",
            "mqsim-ssd",
            "--format",
            "mqsim",
            "--max-requests",
            "20",
        ])
        .arg("--trace")
        .arg(&trace)
        .args(["--host-schedulers", "noop,deadline"])
        .arg("--csv")
        .arg(&same)
        .arg("--json")
        .arg(&same)
        .output()
        .unwrap();
    refused(&out, "named by both --csv and --json");
    // A device takes them all: /dev/null twice runs.
    let out = run(
        &trace,
        &["--json", "/dev/null", "--dispatch-log", "/dev/null"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn no_output_lands_on_a_replay_or_probe_target() {
    let dir = Scratch::new("target");
    let trace = dir.trace();
    let target = dir.path("t.img");
    std::fs::write(&target, vec![7u8; 1 << 20]).unwrap();
    let link = dir.path("t.link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for output in [&target, &link] {
        for flag in ["--json", "--dispatch-log"] {
            let out = flashlane()
                .args([
                    "replay",
                    "--reads-only",
                    "--preset",
                    "mqsim-ssd",
                    "--format",
                    "mqsim",
                ])
                .args(["--max-requests", "5", "--target"])
                .arg(&target)
                .arg("--trace")
                .arg(&trace)
                .arg(flag)
                .arg(output)
                .output()
                .unwrap();
            refused(&out, "is the target");
            unchanged(&target, &vec![7u8; 1 << 20]);
        }
        for flag in ["--json", "--svg"] {
            let mut probe = flashlane();
            probe
                .args(["probe", "--reads-only", "--target"])
                .arg(&target);
            if flag == "--svg" {
                probe.arg("--json").arg(dir.path("p.json"));
            }
            let out = probe.arg(flag).arg(output).output().unwrap();
            refused(&out, "is the target");
            unchanged(&target, &vec![7u8; 1 << 20]);
        }
    }
}

#[test]
fn gen_refuses_to_write_over_its_spec() {
    let dir = Scratch::new("gen");
    let spec = dir.path("w.toml");
    let text = "requests = 10\nread_fraction = 0.5\nseed = 1\n[arrival]\nkind = \"poisson\"\nmean_interarrival_ns = 1000\n[size]\nkind = \"fixed\"\nbytes = 4096\n[address]\nkind = \"uniform\"\nspan_bytes = 1048576\nalign_bytes = 4096\n";
    std::fs::write(&spec, text).unwrap();
    let out = flashlane()
        .arg("gen")
        .arg("--spec")
        .arg(&spec)
        .arg("--out")
        .arg(&spec)
        .output()
        .unwrap();
    refused(&out, "is the workload spec");
    unchanged(&spec, text.as_bytes());
}

/// A full standard output or error is an error exit (2) with one line, never a panic
/// (issue 34, item 4); files asked for are written in full or not at all.
#[test]
fn a_full_standard_stream_is_an_error_exit_not_a_panic() {
    let dir = Scratch::new("full");
    let trace = dir.trace();
    let json = dir.path("o.json");
    let full = || std::fs::File::create("/dev/full").unwrap();
    let t = trace.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec![
            "run",
            "--preset",
            "mqsim-ssd",
            "--trace",
            t,
            "--max-requests",
            "10",
            "--json",
            json.to_str().unwrap(),
        ],
        vec![
            "compare",
            "--preset",
            "mqsim-ssd",
            "--trace",
            t,
            "--max-requests",
            "10",
            "--host-schedulers",
            "noop,deadline",
        ],
        vec!["presets"],
        vec!["show-preset", "mqsim-ssd"],
        vec!["trace", "stats", t],
        vec!["gen", "--list"],
    ];
    for args in &commands {
        let out = flashlane().args(args).stdout(full()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("error: standard output:") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        if json.exists() {
            let text = std::fs::read_to_string(&json).unwrap();
            assert!(text.ends_with("}\n"), "a whole JSON file or none");
        }
    }
    // An error message that cannot be printed still fails the command, quietly.
    let out = flashlane()
        .args([
            "run",
            "--preset",
            "mqsim-ssd",
            "--trace",
            t,
            "--set",
            "nosuch.key=1",
        ])
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Nothing to say on standard error: a full one changes nothing.
    let out = flashlane().arg("presets").stderr(full()).output().unwrap();
    assert!(out.status.success());
}

/// `replay` refuses what only a simulation uses, instead of ignoring it (issue 34, item 6).
#[test]
fn replay_refuses_simulator_only_inputs() {
    let dir = Scratch::new("replay-sim");
    let trace = dir.trace();
    let target = dir.path("t.img");
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let replay = |extra: &[&str]| {
        flashlane()
            .args([
                "replay",
                "--reads-only",
                "--preset",
                "mqsim-ssd",
                "--format",
                "mqsim",
            ])
            .args(["--max-requests", "5", "--target"])
            .arg(&target)
            .arg("--trace")
            .arg(&trace)
            .args(extra)
            .output()
            .unwrap()
    };
    let cache = dir.path("cache");
    let out = replay(&["--precondition-cache", cache.to_str().unwrap()]);
    refused(&out, "--precondition-cache");
    assert!(!cache.exists(), "nothing created");
    for key in ["precondition.fill_fraction=0.5", "precondition.age=true"] {
        let out = replay(&["--set", key]);
        refused(&out, "preconditioning fills the simulated drive");
    }
    let help = flashlane().args(["replay", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("--precondition-cache, --check-integrity"),
        "{text}"
    );
}

/// `trace stats --preset` records its overrides and says when the channel and chip figures are
/// the host's static map rather than where the drive puts data (issue 34, item 8); its window
/// figures say which windows each covers, so a max below a mean reads right (item 9).
#[test]
fn trace_stats_conditions_name_their_config_and_windows() {
    let dir = Scratch::new("stats");
    let trace = dir.trace();
    let json = dir.path("s.json");
    let out = flashlane()
        .args(["trace", "stats"])
        .arg(&trace)
        .args([
            "--preset",
            "mqsim-ssd",
            "--set",
            "ftl.allocation.kind=dynamic",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("conditions under mqsim-ssd --set ftl.allocation.kind=dynamic"),
        "{text}"
    );
    assert!(
        text.contains("note: ftl.allocation.kind = dynamic"),
        "{text}"
    );
    assert!(
        text.contains("(mean over all windows)")
            && text.contains("(max over windows with 8 pages per channel)"),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c = &v["conditions"];
    assert_eq!(
        c["overrides"],
        serde_json::json!(["ftl.allocation.kind=dynamic"])
    );
    assert!(
        c["placement_note"].as_str().unwrap().contains("static map"),
        "{c}"
    );
    // Static allocation: no note, no overrides.
    let out = flashlane()
        .args(["trace", "stats"])
        .arg(&trace)
        .args(["--preset", "mqsim-ssd", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["conditions"].get("placement_note").is_none());
    assert_eq!(v["conditions"]["overrides"], serde_json::json!([]));
}

/// Two variants of one name would be one row twice: refused (issue 34).
#[test]
fn duplicate_variant_names_are_refused() {
    let dir = Scratch::new("variants");
    let trace = dir.trace();
    let out = flashlane()
        .args([
            "compare",
            "--preset",
            "mqsim-ssd",
            "--max-requests",
            "10",
            "--trace",
        ])
        .arg(&trace)
        .args([
            "--variant",
            "A:host.scheduler.kind=noop",
            "--variant",
            "A:host.scheduler.kind=deadline",
        ])
        .output()
        .unwrap();
    refused(&out, "--variant A: the name is given twice");
}

/// `reproduce` finds the repository's `.venv` (where ./scripts/test.sh installs the package)
/// from any folder under it, and says so when the package is missing (issue 31, item 2).
#[test]
fn reproduce_uses_the_repositorys_venv() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Scratch::new("venv");
    let bin = dir.path(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let python = bin.join("python");
    // An interpreter without the package: the import probe fails.
    std::fs::write(
        &python,
        "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'flashlane'\" >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let inner = dir.path("some/folder");
    std::fs::create_dir_all(&inner).unwrap();
    let out = flashlane()
        .args(["reproduce", "piq", "--quick"])
        .current_dir(&inner)
        .env_remove("VIRTUAL_ENV")
        .env_remove("FLASHLANE_PYTHON")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&python.display().to_string()), "{err}");
    assert!(err.contains(".venv"), "{err}");
}
