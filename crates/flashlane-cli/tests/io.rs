//! Inputs and outputs that are not plain files: pipes, standard input, FIFOs; output files
//! under signals, concurrency, symlinks and special files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn flashlane() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashlane"))
}

fn trace(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/../../traces/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
}

/// A fresh, empty scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flashlane-io-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `gzip ARGS < input` (the system's gzip, to make test inputs).
fn gzip(args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success());
    out.stdout
}

/// Run `flashlane ARGS` with `stdin` piped into it.
fn with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = flashlane()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    // The command may stop reading early (an error): a broken pipe here is no failure.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Run `flashlane ARGS` while a thread writes `bytes` into the FIFO `fifo` it reads.
#[cfg(unix)]
fn through_fifo(args: &[&str], fifo: &Path, bytes: &[u8]) -> Output {
    let child = flashlane()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (path, bytes) = (fifo.to_path_buf(), bytes.to_vec());
    let writer = std::thread::spawn(move || {
        // Blocks until the command opens the FIFO for reading.
        let mut file = std::fs::OpenOptions::new().write(true).open(&path)?;
        file.write_all(&bytes)
    });
    let out = child.wait_with_output().unwrap();
    if !writer.is_finished() {
        // The command ended without opening the FIFO: open it once so the writer returns.
        let _ = std::fs::File::open(fifo);
    }
    let _ = writer.join().unwrap();
    out
}

/// A run's `--json` with what may differ between two runs of the same simulation taken out:
/// the trace's name (a file path, `-` or a FIFO's path) and the wall-clock times.
fn normalized_json(path: &Path) -> String {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    fn scrub(v: &mut serde_json::Value) {
        if let Some(map) = v.as_object_mut() {
            for (key, value) in map.iter_mut() {
                match key.as_str() {
                    "path" | "wall_s" | "requests_per_s" => *value = serde_json::Value::Null,
                    _ => scrub(value),
                }
            }
        } else if let Some(items) = v.as_array_mut() {
            items.iter_mut().for_each(scrub);
        }
    }
    scrub(&mut v);
    serde_json::to_string_pretty(&v).unwrap()
}

/// `run ARGS --trace <file> --json` gives the same JSON as the same bytes through `--trace -`
/// and through a FIFO, with and without `--remap-addresses`, for plain and gzip input.
#[cfg(unix)]
#[test]
fn a_pipe_run_equals_the_file_run() {
    let dir = scratch("pipe-run");
    let msnfs_gz = std::fs::read(trace("msnfs-30s.msr.csv.gz")).unwrap();
    let msnfs = gzip(&["-dc"], &msnfs_gz);
    let tpcc = std::fs::read(trace("tpcc-small.mqsim")).unwrap();
    let tpcc_gz = gzip(&["-c"], &tpcc);
    let cases: [(&str, &[u8], &[&str]); 4] = [
        ("msnfs.csv", &msnfs, &["--preset", "mqsim-ssd"]),
        ("msnfs.csv.gz", &msnfs_gz, &["--preset", "mqsim-ssd"]),
        (
            "tpcc.mqsim",
            &tpcc,
            &[
                "--preset",
                "ssdsim-mlc-8x8",
                "--format",
                "mqsim",
                "--remap-addresses",
            ],
        ),
        (
            "tpcc.mqsim.gz",
            &tpcc_gz,
            &[
                "--preset",
                "ssdsim-mlc-8x8",
                "--format",
                "mqsim",
                "--remap-addresses",
            ],
        ),
    ];
    for (name, bytes, args) in cases {
        let file = dir.join(name);
        std::fs::write(&file, bytes).unwrap();
        let json = |how: &str| dir.join(format!("{name}.{how}.json"));
        let run_args = |input: &str, how: &str| -> Vec<String> {
            let mut v: Vec<String> = ["run", "--trace", input]
                .iter()
                .chain(args)
                .map(|s| s.to_string())
                .collect();
            v.push("--json".into());
            v.push(json(how).display().to_string());
            v
        };
        let file_args = run_args(file.to_str().unwrap(), "file");
        let out = flashlane().args(&file_args).output().unwrap();
        ok(&out, name);
        let expected = normalized_json(&json("file"));
        assert!(expected.contains("\"records\""), "{expected}");

        let stdin_args = run_args("-", "stdin");
        let stdin_args: Vec<&str> = stdin_args.iter().map(String::as_str).collect();
        let out = with_stdin(&stdin_args, bytes);
        ok(&out, name);
        assert_eq!(normalized_json(&json("stdin")), expected, "{name} via -");

        let fifo = dir.join(format!("{name}.fifo"));
        mkfifo(&fifo);
        let fifo_args = run_args(fifo.to_str().unwrap(), "fifo");
        let fifo_args: Vec<&str> = fifo_args.iter().map(String::as_str).collect();
        let out = through_fifo(&fifo_args, &fifo, bytes);
        ok(&out, name);
        assert_eq!(
            normalized_json(&json("fifo")),
            expected,
            "{name} via a FIFO"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every other command that reads a trace takes `-`: `trace stats`, `trace convert`,
/// `compare` (several runs of one piped trace) give what they give on the file.
#[test]
fn every_trace_command_reads_standard_input() {
    let dir = scratch("stdin-commands");
    let gz_path = trace("msnfs-30s.msr.csv.gz");
    let gz = std::fs::read(&gz_path).unwrap();
    let gz_arg = gz_path.to_str().unwrap();

    let stats = |input: &str, json: &Path, stdin: Option<&[u8]>| {
        let args = ["trace", "stats", input, "--json", json.to_str().unwrap()];
        let out = match stdin {
            Some(bytes) => with_stdin(&args, bytes),
            None => flashlane().args(args).output().unwrap(),
        };
        ok(&out, "trace stats");
    };
    let (a, b) = (dir.join("stats-file.json"), dir.join("stats-stdin.json"));
    stats(gz_arg, &a, None);
    stats("-", &b, Some(&gz));
    assert_eq!(normalized_json(&a), normalized_json(&b));
    assert!(normalized_json(&b).contains("\"requests\": 149999"));

    let (a, b) = (dir.join("file.mqsim"), dir.join("stdin.mqsim"));
    let out = flashlane()
        .args(["trace", "convert", gz_arg, "--to", "mqsim"])
        .arg(&a)
        .output()
        .unwrap();
    ok(&out, "trace convert");
    let out = with_stdin(
        &[
            "trace",
            "convert",
            "-",
            "--to",
            "mqsim",
            b.to_str().unwrap(),
        ],
        &gz,
    );
    ok(&out, "trace convert -");
    let converted = std::fs::read(&a).unwrap();
    assert_eq!(converted.iter().filter(|&&b| b == b'\n').count(), 149_999);
    assert_eq!(std::fs::read(&b).unwrap(), converted);

    let compare = |input: &str, json: &Path, stdin: Option<&[u8]>| {
        let args = [
            "compare",
            "--preset",
            "mqsim-ssd",
            "--trace",
            input,
            "--host-schedulers",
            "noop,piq",
            "--jobs",
            "2",
            "--json",
            json.to_str().unwrap(),
        ];
        let out = match stdin {
            Some(bytes) => with_stdin(&args, bytes),
            None => flashlane().args(args).output().unwrap(),
        };
        ok(&out, "compare");
    };
    let (a, b) = (dir.join("cmp-file.json"), dir.join("cmp-stdin.json"));
    compare(gz_arg, &a, None);
    compare("-", &b, Some(&gz));
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    let completed: Vec<u64> = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["summary"]["requests"]["completed"].as_u64().unwrap())
        .collect();
    assert_eq!(completed, [149_999, 149_999]);
    assert_eq!(normalized_json(&a), normalized_json(&b));

    // Standard input twice in one mix would replay nothing the second time: refused.
    let out = with_stdin(
        &[
            "run",
            "--preset",
            "mqsim-ssd",
            "--trace",
            "-",
            "--trace",
            "-",
        ],
        &gz,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("read only once"));

    // No temporary file can be made: a file is read again, a pipe is refused with the reason
    // (never a run on what was left of it).
    let no_tmp = dir.join("no-such-tmp");
    let run = ["run", "--preset", "mqsim-ssd", "--trace"];
    let out = flashlane()
        .args(run)
        .arg(&gz_path)
        .env("TMPDIR", &no_tmp)
        .output()
        .unwrap();
    ok(&out, "run without a temporary directory");
    assert!(String::from_utf8_lossy(&out.stdout).contains("149999 measured"));
    let mut args = run.to_vec();
    args.push("-");
    let mut child = flashlane();
    child.env("TMPDIR", &no_tmp);
    let out = {
        let mut child = child
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = child.stdin.take().unwrap();
        let _ = pipe.write_all(&gz);
        drop(pipe);
        child.wait_with_output().unwrap()
    };
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("save the trace to a file"), "{stderr}");
    assert!(out.stdout.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A small xorshift generator: the mutants are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One seeded mutation of a trace's text: a byte replaced, a line dropped, duplicated or
/// swapped with the next (time going backwards), junk inserted, or the tail cut off.
fn mutate(rng: &mut Rng, text: &[u8]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = text
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    for _ in 0..1 + rng.below(3) {
        let i = rng.below(lines.len());
        match rng.below(6) {
            0 => {
                let line = &mut lines[i];
                let at = rng.below(line.len());
                line[at] = b"0123456789,. x-\tRW\x00\xff"[rng.below(19)];
            }
            1 => {
                lines.remove(i);
            }
            2 => {
                let copy = lines[i].clone();
                lines.insert(i, copy);
            }
            3 if i + 1 < lines.len() => lines.swap(i, i + 1),
            4 => lines.insert(i, b"garbage,,,\n".to_vec()),
            _ => {
                let line = &mut lines[i];
                let cut = rng.below(line.len());
                line.truncate(cut);
                lines.truncate(i + 1);
            }
        }
        if lines.is_empty() {
            break;
        }
    }
    lines.concat()
}

/// Seeded trace mutants give the same result or the same error through a pipe as from a
/// file: `trace stats` on all of them (some gzip-compressed), `run --remap-addresses` (which
/// copies the pipe) on some.
#[test]
fn mutants_through_a_pipe_behave_as_from_a_file() {
    let dir = scratch("mutants");
    let msnfs = gzip(
        &["-dc"],
        &std::fs::read(trace("msnfs-30s.msr.csv.gz")).unwrap(),
    );
    let msr_head: Vec<u8> = msnfs
        .split_inclusive(|&b| b == b'\n')
        .take(300)
        .flatten()
        .copied()
        .collect();
    let tpcc = std::fs::read(trace("tpcc-small.mqsim")).unwrap();
    let mqsim_head: Vec<u8> = tpcc
        .split_inclusive(|&b| b == b'\n')
        .take(300)
        .flatten()
        .copied()
        .collect();
    let mut rng = Rng(0x5eed_2026);
    let (mut errors, mut results) = (0, 0);
    for i in 0..48 {
        let (base, reading): (&[u8], &[&str]) = if i % 2 == 0 {
            (&msr_head, &["--max-bad-lines", "2"])
        } else {
            (&mqsim_head, &["--format", "mqsim"])
        };
        let mut bytes = mutate(&mut rng, base);
        if i % 3 == 0 {
            bytes = gzip(&["-c"], &bytes);
        }
        let file = dir.join(format!("mutant-{i}"));
        std::fs::write(&file, &bytes).unwrap();
        let file_arg = file.to_str().unwrap();
        let json = |how: &str| dir.join(format!("mutant-{i}-{how}.json"));
        let commands: Vec<Vec<&str>> = if i % 4 == 1 {
            vec![
                vec!["trace", "stats"],
                vec!["run", "--preset", "ssdsim-mlc-8x8", "--remap-addresses"],
            ]
        } else {
            vec![vec!["trace", "stats"]]
        };
        for command in commands {
            let is_run = command[0] == "run";
            let build = |input: &'static str, json: &Path| -> Vec<String> {
                let mut v: Vec<String> = command.iter().map(|s| s.to_string()).collect();
                if is_run {
                    v.push("--trace".into());
                }
                v.push(input.into());
                v.extend(reading.iter().map(|s| s.to_string()));
                v.push("--json".into());
                v.push(json.display().to_string());
                v
            };
            let mut file_args = build("FILE", &json("file"));
            for a in &mut file_args {
                if a == "FILE" {
                    *a = file_arg.to_string();
                }
            }
            let from_file = flashlane().args(&file_args).output().unwrap();
            let pipe_args = build("-", &json("pipe"));
            let pipe_args: Vec<&str> = pipe_args.iter().map(String::as_str).collect();
            let from_pipe = with_stdin(&pipe_args, &bytes);
            let what = format!("mutant {i} {command:?}");
            assert_eq!(from_file.status.code(), from_pipe.status.code(), "{what}");
            let file_err = String::from_utf8_lossy(&from_file.stderr).replace(file_arg, "-");
            let pipe_err = String::from_utf8_lossy(&from_pipe.stderr).into_owned();
            assert!(!pipe_err.contains("panicked"), "{what}: {pipe_err}");
            if from_file.status.success() {
                results += 1;
                assert_eq!(
                    normalized_json(&json("file")),
                    normalized_json(&json("pipe")),
                    "{what}"
                );
            } else {
                errors += 1;
                assert_eq!(file_err, pipe_err, "{what}");
            }
        }
    }
    // Both outcomes were exercised.
    assert!(
        errors > 5 && results > 5,
        "{errors} errors, {results} results"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Names in `dir` that look like output temporaries (`.NAME...tmp`).
fn temporaries_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n.ends_with(".tmp"))
        .collect()
}

/// Wait until `dir` holds an output temporary (the command is writing its output). A bound
/// keeps a broken command from hanging the test; it is no timing assertion.
fn wait_for_temporary(dir: &Path, child: &mut std::process::Child) {
    for _ in 0..6000 {
        if !temporaries_in(dir).is_empty() {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("ended ({status}) before writing its output");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("no temporary appeared in {}", dir.display());
}

#[cfg(unix)]
fn send(child: &std::process::Child, signal: i32) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

/// SIGINT and SIGTERM during `gen` (a long job) and `trace convert` (its input held open
/// through a pipe) leave no temporary, no partial output and exit with 128 + the signal.
#[cfg(unix)]
#[test]
fn no_temporary_survives_a_signal() {
    let dir = scratch("signals");
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let out = dir.join("gen.mqsim");
        let mut child = flashlane()
            .args([
                "gen",
                "--profile",
                "src1_0",
                "--requests",
                "400000000",
                "--out",
            ])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for_temporary(&dir, &mut child);
        std::thread::sleep(std::time::Duration::from_millis(200));
        send(&child, signal);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "gen, signal {signal}");
        assert_eq!(
            temporaries_in(&dir),
            Vec::<String>::new(),
            "gen, signal {signal}"
        );
        assert!(!out.exists() && !dir.join("gen.mqsim.spec.toml").exists());

        // `trace convert -` whose input never ends: some records are written, then the signal.
        let out = dir.join("convert.disksim");
        let mut child = flashlane()
            .args([
                "trace", "convert", "-", "--format", "mqsim", "--to", "disksim",
            ])
            .arg(&out)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        for i in 0..20_000u64 {
            writeln!(input, "{} 0 {} 8 1", i * 1000, i * 8).unwrap();
        }
        input.flush().unwrap();
        wait_for_temporary(&dir, &mut child);
        std::thread::sleep(std::time::Duration::from_millis(200));
        send(&child, signal);
        let status = child.wait().unwrap();
        drop(input);
        assert_eq!(status.code(), Some(code), "convert, signal {signal}");
        assert_eq!(
            temporaries_in(&dir),
            Vec::<String>::new(),
            "convert {signal}"
        );
        assert!(!out.exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A signal while a precondition snapshot is written (an aged `sos-4x4` drive: about 0.3 s of
/// writing, after 2 s of aging) leaves neither its temporary nor a snapshot in the cache.
#[cfg(unix)]
#[test]
fn a_signal_during_a_snapshot_write_leaves_no_temporary() {
    let dir = scratch("snapshot-signal");
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let mut child = flashlane()
        .args(["run", "--preset", "sos-4x4", "--trace"])
        .arg(trace("tpcc-small.mqsim"))
        .args(["--fold-addresses", "--max-requests", "100"])
        .args(["--set", "precondition.fill_fraction=0.9"])
        .args(["--set", "precondition.age=true", "--precondition-cache"])
        .arg(&cache)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_temporary(&cache, &mut child);
    send(&child, libc::SIGHUP);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(129));
    let left: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The read end of `fifo`, open before any writer (non-blocking, so opening does not wait):
/// a command that writes into the FIFO never blocks on its open, and one that replaced it
/// instead leaves nothing to read rather than a hung test. Outputs written through it must
/// fit the pipe buffer (64 KiB).
#[cfg(unix)]
fn fifo_reader(fifo: &Path) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .unwrap()
}

/// Everything written into the FIFO by a command that has ended.
#[cfg(unix)]
fn read_fifo(reader: &mut std::fs::File) -> String {
    use std::io::Read;
    let mut text = String::new();
    match reader.read_to_string(&mut text) {
        Ok(_) => text,
        // Nothing was ever written: the writer never opened the FIFO.
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => text,
        Err(e) => panic!("{e}"),
    }
}

/// A FIFO as `--out` receives the whole trace and is still a FIFO afterwards (no spec file
/// beside it); a symlink to a file stays a symlink and its target gets the output.
#[cfg(unix)]
#[test]
fn special_outputs_are_written_through_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("special-outputs");
    let fifo = dir.join("out.fifo");
    mkfifo(&fifo);
    let mut reader = fifo_reader(&fifo);
    let out = flashlane()
        .args(["gen", "--profile", "src1_0", "--requests", "1000", "--out"])
        .arg(&fifo)
        .output()
        .unwrap();
    ok(&out, "gen into a FIFO");
    let received = read_fifo(&mut reader);
    assert_eq!(received.lines().count(), 1000);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(!dir.join("out.fifo.spec.toml").exists());
    // Its messages went to stderr, off the data.
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrote 1000 requests"));

    // A JSON summary into a FIFO too.
    let out = flashlane()
        .args(["trace", "stats"])
        .arg(trace("tpcc-small.mqsim"))
        .arg("--json")
        .arg(&fifo)
        .output()
        .unwrap();
    ok(&out, "stats --json into a FIFO");
    let v: serde_json::Value = serde_json::from_str(&read_fifo(&mut reader)).unwrap();
    assert_eq!(v["requests"], 6999);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());

    // `--json /dev/stdout` (through a link in the scratch directory, so that a regression
    // would replace the link, not the system's): the JSON alone on stdout, the text on stderr.
    let stdout_link = dir.join("stdout.json");
    std::os::unix::fs::symlink("/dev/stdout", &stdout_link).unwrap();
    let out = flashlane()
        .args([
            "run",
            "--preset",
            "mqsim-ssd",
            "--format",
            "mqsim",
            "--trace",
        ])
        .arg(trace("tpcc-small.mqsim"))
        .arg("--json")
        .arg(&stdout_link)
        .output()
        .unwrap();
    ok(&out, "run --json /dev/stdout");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["requests"]["completed"], 6999);
    assert!(String::from_utf8_lossy(&out.stderr).contains("6999 measured"));
    assert!(std::fs::symlink_metadata(&stdout_link)
        .unwrap()
        .file_type()
        .is_symlink());

    // `--out -` is stdout; into a file stdout appends to (`>>`), the trace is appended after
    // what the file held, and the file is not replaced.
    let out = flashlane()
        .args([
            "gen",
            "--profile",
            "src1_0",
            "--requests",
            "7",
            "--out",
            "-",
        ])
        .output()
        .unwrap();
    ok(&out, "gen --out -");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 7);
    let log = dir.join("appended.txt");
    std::fs::write(&log, "kept\n").unwrap();
    let appending = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let out = flashlane()
        .args(["gen", "--profile", "src1_0", "--requests", "5", "--out"])
        .arg(&stdout_link)
        .stdout(appending)
        .output()
        .unwrap();
    ok(&out, "gen --out /dev/stdout >> file");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("kept\n"), "{text}");
    assert_eq!(text.lines().count(), 6, "{text}");

    // A symlink to a regular file: the file is replaced, the link kept.
    let target = dir.join("real.json");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    let out = flashlane()
        .args(["trace", "stats"])
        .arg(trace("tpcc-small.mqsim"))
        .arg("--json")
        .arg(&link)
        .output()
        .unwrap();
    ok(&out, "stats --json into a symlink");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(v["requests"], 6999);
    assert_eq!(temporaries_in(&dir), Vec::<String>::new());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Several processes writing the same `--json` at once each succeed and leave one valid file
/// and no temporary.
#[test]
fn concurrent_writers_of_one_json_leave_one_valid_file() {
    let dir = scratch("concurrent");
    let json = dir.join("same.json");
    for round in 0..3 {
        let children: Vec<_> = (0..4)
            .map(|_| {
                flashlane()
                    .args(["trace", "stats"])
                    .arg(trace("msnfs-30s.msr.csv.gz"))
                    .arg("--json")
                    .arg(&json)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            ok(&out, &format!("round {round}"));
        }
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["requests"], 149_999);
        assert_eq!(temporaries_in(&dir), Vec::<String>::new());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--json` and `--csv` are written both or neither: a CSV that cannot be written (its
/// directory missing: refused before the runs; a full device: fails at the end) leaves no
/// JSON and no temporary behind.
#[cfg(target_os = "linux")]
#[test]
fn json_and_csv_are_written_both_or_neither() {
    let dir = scratch("both-or-neither");
    let json = dir.join("rows.json");
    let compare = |csv: &Path| {
        flashlane()
            .args(["compare", "--preset", "ssdsim-mlc-8x8", "--trace"])
            .arg(trace("tpcc-small.mqsim"))
            .args(["--format", "mqsim", "--remap-addresses"])
            .args(["--host-schedulers", "noop,piq", "--jobs", "1"])
            .arg("--json")
            .arg(&json)
            .arg("--csv")
            .arg(csv)
            .output()
            .unwrap()
    };
    let missing = dir.join("no-such-dir").join("table.csv");
    let out = compare(&missing);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    assert!(!json.exists());

    // /dev/full takes the open and refuses the write: the JSON, ready by then, must go too.
    // Named through a link in the scratch directory, so that a command that wrongly replaced
    // its output would replace the link, never the system's device node.
    let full = dir.join("full.csv");
    std::os::unix::fs::symlink("/dev/full", &full).unwrap();
    let out = compare(&full);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("full.csv"), "{stderr}");
    assert!(!json.exists(), "the JSON was left behind");
    assert_eq!(temporaries_in(&dir), Vec::<String>::new());
    assert!(std::fs::symlink_metadata(&full)
        .unwrap()
        .file_type()
        .is_symlink());

    // And both when both can be written.
    let csv = dir.join("table.csv");
    ok(&compare(&csv), "compare");
    assert!(json.exists() && csv.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `reproduce` passes SIGTERM on to its Python child's whole process group and waits for it:
/// neither the child nor a process it started outlives the command. The child here is a
/// stand-in interpreter (FLASHLANE_PYTHON) that starts a long `sleep` and waits.
#[cfg(target_os = "linux")]
#[test]
fn reproduce_forwards_sigterm_to_its_child_group() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("reproduce");
    let pids = dir.join("pids");
    let python = dir.join("python");
    std::fs::write(
        &python,
        format!(
            "#!/bin/sh\n\
             [ \"$1\" = -c ] && exit 0\n\
             sleep 600 &\n\
             echo \"$$ $!\" > {0}.part && mv {0}.part {0}\n\
             wait\n",
            pids.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = flashlane()
        .args(["reproduce", "piq", "--quick"])
        .env("FLASHLANE_PYTHON", &python)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut started = false;
    for _ in 0..6000 {
        if pids.exists() {
            started = true;
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "reproduce ended early");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(started, "the stand-in never started");
    let text = std::fs::read_to_string(&pids).unwrap();
    let ids: Vec<i32> = text
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect();
    send(&child, libc::SIGTERM);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    // Gone, or a zombie waiting for init: either way no longer running.
    let running = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit(')').next().map(|r| r.trim().starts_with('Z')))
            .is_some_and(|zombie| !zombie)
    };
    for pid in ids {
        let mut gone = false;
        for _ in 0..1000 {
            if !running(pid) {
                gone = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(gone, "process {pid} outlived reproduce");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `compare` reads a piped `--config` and `--synthetic` spec once for all its runs (each run
/// used to read them again and found the pipe empty).
#[test]
fn compare_reads_a_piped_config_once() {
    let config = flashlane()
        .args(["show-preset", "ssdsim-mlc-8x8"])
        .output()
        .unwrap();
    ok(&config, "show-preset");
    let out = with_stdin(
        &[
            "compare",
            "--config",
            "/dev/stdin",
            "--profile",
            "hm_0",
            "--max-requests",
            "2000",
            "--host-schedulers",
            "noop,piq,rws",
        ],
        &config.stdout,
    );
    ok(&out, "compare --config /dev/stdin");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("rws")),
        "every run has a row: {text}"
    );

    // A spec as `gen` writes it beside its trace.
    let trace_path =
        std::env::temp_dir().join(format!("flashlane-io-{}-spec.mqsim", std::process::id()));
    let spec = flashlane()
        .args(["gen", "--profile", "hm_0", "--requests", "1500", "--out"])
        .arg(&trace_path)
        .output()
        .unwrap();
    ok(&spec, "gen");
    let spec_path = PathBuf::from(format!("{}.spec.toml", trace_path.display()));
    let spec_text = std::fs::read(&spec_path).unwrap();
    let out = with_stdin(
        &[
            "compare",
            "--preset",
            "ssdsim-mlc-8x8",
            "--synthetic",
            "/dev/stdin",
            "--host-schedulers",
            "noop,piq",
        ],
        &spec_text,
    );
    std::fs::remove_file(&trace_path).unwrap();
    std::fs::remove_file(&spec_path).unwrap();
    ok(&out, "compare --synthetic /dev/stdin");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().any(|l| l.starts_with("piq")), "{text}");
}

/// An output into a pipe whose reader has gone (`--json /dev/stdout | head -0`) ends the
/// command as SIGPIPE ends any tool, but only after the other output's temporary is removed:
/// nothing is left behind and the CSV is not written alone.
#[cfg(unix)]
#[test]
fn a_closed_pipe_output_leaves_no_temporary() {
    use std::os::unix::process::ExitStatusExt;
    let dir = scratch("closed-pipe");
    // Through a link, so that a regression would replace the link, not the system's.
    let stdout_link = dir.join("stdout.json");
    std::os::unix::fs::symlink("/dev/stdout", &stdout_link).unwrap();
    let csv = dir.join("table.csv");
    let mut child = flashlane()
        .args(["compare", "--preset", "ssdsim-mlc-8x8", "--trace"])
        .arg(trace("tpcc-small.mqsim"))
        .args(["--format", "mqsim", "--remap-addresses"])
        .args(["--host-schedulers", "noop,piq", "--jobs", "1", "--csv"])
        .arg(&csv)
        .arg("--json")
        .arg(&stdout_link)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away at once
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!csv.exists(), "the CSV was written alone");
    assert_eq!(temporaries_in(&dir), Vec::<String>::new());
    std::fs::remove_dir_all(&dir).unwrap();
}
