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
        ("msnfs.csv", &msnfs, &["--preset", "mqsim-default"]),
        ("msnfs.csv.gz", &msnfs_gz, &["--preset", "mqsim-default"]),
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
            "mqsim-default",
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
            "mqsim-default",
            "--trace",
            "-",
            "--trace",
            "-",
        ],
        &gz,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("read only once"));
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
