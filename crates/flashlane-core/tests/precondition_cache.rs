//! The precondition cache (run/precondition_cache.rs): a drive loaded from its snapshot gives
//! the summary preconditioning it afresh gives; the key follows every input that shapes the
//! drive and no other; damaged, truncated and foreign files are refused in one line naming
//! them; workers racing on one drive precondition it once.

use std::path::{Path, PathBuf};

use crate::common::{mqsim_trace_in, preset, random_requests, spec, Req, ScratchDir};
use flashlane_core::config::Config;
use flashlane_core::stats::Summary;
use flashlane_core::{Error, RunSpec};

/// 8 planes of 32 blocks of 16 pages (4,096 pages of 4 KiB), filled to 90 % and aged, so
/// garbage collection runs during preconditioning and during the trace.
fn drive(extra: &[(&str, &str)]) -> Config {
    let mut overrides = vec![
        ("geometry.channels", "2"),
        ("geometry.chips_per_channel", "2"),
        ("geometry.dies_per_chip", "1"),
        ("geometry.planes_per_die", "2"),
        ("geometry.blocks_per_plane", "32"),
        ("geometry.pages_per_block", "16"),
        ("geometry.page_bytes", "4096"),
        ("ftl.overprovisioning_fraction", "0.2"),
        ("ftl.gc_threshold_fraction", "0.1"),
        ("ftl.mapping_cache_bytes", "0"),
        ("precondition.fill_fraction", "0.9"),
        ("precondition.age", "true"),
    ];
    overrides.extend_from_slice(extra);
    preset("mqsim-ssd", &overrides)
}

/// 2,000 requests over the first 8 MiB, a third of them writes.
fn requests() -> Vec<Req> {
    random_requests(3, 2_000, 8 << 20, 0.66, 40_000)
}

/// A case of [`a_loaded_drive_gives_the_summary_of_a_fresh_one`].
type Case = (&'static str, Vec<(&'static str, &'static str)>, bool, bool);

fn cached(config: Config, trace: &Path, cache: &Path) -> RunSpec {
    let mut s = spec(config, trace.to_path_buf());
    s.precondition_cache = Some(cache.to_path_buf());
    s
}

/// The summary as JSON without what may differ between equal runs: wall-clock fields and
/// the snapshot's own report.
fn comparable(summary: &Summary) -> serde_json::Value {
    let mut value = serde_json::to_value(summary).unwrap();
    let object = value.as_object_mut().unwrap();
    object.remove("engine");
    let precondition = object["precondition"].as_object_mut().unwrap();
    precondition.remove("wall_s");
    precondition.remove("snapshot");
    value
}

/// (key, loaded) of a run with a cache.
fn snapshot_of(summary: &Summary) -> (String, bool) {
    let snapshot = summary
        .precondition
        .snapshot
        .as_ref()
        .expect("a snapshot report");
    (snapshot.key.clone(), snapshot.loaded)
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_loaded_drive_gives_the_summary_of_a_fresh_one() {
    let dir = ScratchDir::new("snapshot-identity");
    let trace = mqsim_trace_in(&dir, "random", &requests());
    // Partial-page requests for the read-modify-write case (sectors of partly read pages).
    let partial: Vec<Req> = (0..1_500u64)
        .map(|i| {
            (
                i * 30_000,
                (i * 7 % 1_900) * 4096 + (i % 4) * 1024,
                2048,
                i % 3 != 0,
            )
        })
        .collect();
    let partial_trace = mqsim_trace_in(&dir, "partial", &partial);
    // (name, overrides, the partial-page trace, --check-integrity)
    let cases: Vec<Case> = vec![
        ("aged", vec![], false, false),
        (
            "variation, fastest blocks for conflicts",
            vec![
                ("variation.enabled", "true"),
                ("variation.initial_pe_cycles", "12000"),
                ("ftl.block_choice", "fastest_for_conflicts"),
                ("host.scheduler.kind", "vios"),
            ],
            false,
            false,
        ),
        ("integrity shadow", vec![], false, true),
        (
            "erase_done release, GC write frontier, reserved blocks",
            vec![
                ("precondition.fill_fraction", "0.6"),
                ("ftl.gc_block_release", "erase_done"),
                ("ftl.gc_max_victims_per_plane", "2"),
                ("ftl.write_stall_below_free_blocks", "3"),
                ("ftl.gc_separate_write_block", "true"),
                ("ftl.translation_reserved_blocks_per_plane", "1"),
            ],
            false,
            false,
        ),
        (
            "dynamic allocation",
            vec![("ftl.allocation.kind", "dynamic")],
            false,
            false,
        ),
        (
            "cached mapping table, allocating unwritten reads",
            vec![
                ("ftl.mapping_cache_bytes", "4096"),
                ("ftl.unwritten_reads", "allocate"),
                ("precondition.fill_fraction", "0.5"),
            ],
            false,
            false,
        ),
        (
            "footprint of reads, read-modify-write",
            vec![
                ("precondition.footprint_requests", "reads"),
                ("ftl.partial_page_writes", "read_modify_write"),
            ],
            true,
            false,
        ),
    ];
    for (name, overrides, partial, integrity) in cases {
        let trace = if partial { &partial_trace } else { &trace };
        let cache = dir.join(name.replace([' ', ','], "-"));
        let mut fresh = spec(drive(&overrides), trace.clone());
        fresh.check_integrity = integrity;
        let mut with_cache = cached(drive(&overrides), trace, &cache);
        with_cache.check_integrity = integrity;
        let afresh = flashlane_core::run(&fresh).unwrap();
        let written = flashlane_core::run(&with_cache).unwrap();
        let loaded = flashlane_core::run(&with_cache).unwrap();
        assert!(afresh.precondition.snapshot.is_none(), "{name}");
        assert!(afresh.precondition.age_rounds > 0, "{name}: not aged");
        assert!(
            afresh.gc.runs > 0 || name.contains("mapping"),
            "{name}: no GC"
        );
        let (key, was_loaded) = snapshot_of(&written);
        assert!(!was_loaded, "{name}: the first run preconditions");
        assert_eq!(snapshot_of(&loaded), (key, true), "{name}");
        assert_eq!(comparable(&written), comparable(&afresh), "{name}");
        assert_eq!(comparable(&loaded), comparable(&afresh), "{name}");
        if integrity {
            assert_eq!(loaded.integrity_violations, Some(0), "{name}");
        }
    }
}

#[test]
fn the_key_follows_the_drive_shaping_inputs_only() {
    let dir = ScratchDir::new("snapshot-key");
    let trace = mqsim_trace_in(&dir, "random", &requests());
    let cache = dir.join("cache");
    let run = |config: Config, seed: u64, trace: &Path| {
        let mut s = cached(config, trace, &cache);
        s.seed = seed;
        s.replay = flashlane_core::run::Replay::OpenLoop { time_scale: 1.0 };
        snapshot_of(&flashlane_core::run(&s).unwrap())
    };
    let (base, loaded) = run(drive(&[]), 1, &trace);
    assert!(!loaded);
    // Settings that leave the drive as it was: the snapshot is loaded.
    for other in [
        vec![("host.scheduler.kind", "deadline")],
        vec![("device.scheduler.kind", "in_order")],
        vec![("interconnect.kind", "ideal")],
        vec![("timing.page_read_ns", "50000")],
        vec![("timing.page_program_ns", "500000")],
        vec![("host.queue_length_requests", "4")],
    ] {
        assert_eq!(
            run(drive(&other), 1, &trace),
            (base.clone(), true),
            "{other:?}"
        );
    }
    let mut slower = cached(drive(&[]), &trace, &cache);
    slower.replay = flashlane_core::run::Replay::OpenLoop { time_scale: 2.0 };
    assert_eq!(
        snapshot_of(&flashlane_core::run(&slower).unwrap()),
        (base.clone(), true)
    );
    // Settings that shape the drive: a new snapshot each.
    let mut keys = vec![base];
    for other in [
        vec![("precondition.fill_fraction", "0.8")],
        vec![("precondition.age", "false")],
        vec![("ftl.overprovisioning_fraction", "0.25")],
        vec![("ftl.gc_threshold_fraction", "0.15")],
        vec![("geometry.blocks_per_plane", "40")],
        vec![("variation.enabled", "true")],
        // Under [variation] the program time scales every block's latency.
        vec![
            ("variation.enabled", "true"),
            ("timing.page_program_ns", "500000"),
        ],
    ] {
        let (key, loaded) = run(drive(&other), 1, &trace);
        assert!(!loaded, "{other:?}");
        assert!(!keys.contains(&key), "{other:?}");
        keys.push(key);
    }
    // VIOS's block choice acts from the trace's start only (Ftl::start_block_choice): the drive
    // preconditioned under the default choice is loaded, and gives the fresh run's summary.
    let variation = [("variation.enabled", "true")];
    let fastest = [
        ("variation.enabled", "true"),
        ("ftl.block_choice", "fastest_for_conflicts"),
    ];
    let (key, loaded) = run(drive(&fastest), 1, &trace);
    assert_eq!((key, loaded), (run(drive(&variation), 1, &trace).0, true));
    let fresh = {
        let mut s = cached(drive(&fastest), &trace, &cache);
        s.precondition_cache = None;
        flashlane_core::run(&s).unwrap()
    };
    let loaded = flashlane_core::run(&cached(drive(&fastest), &trace, &cache)).unwrap();
    assert_eq!(comparable(&loaded), comparable(&fresh));
    let (key, loaded) = run(drive(&[]), 2, &trace);
    assert!(!loaded && !keys.contains(&key), "seed");
    keys.push(key);
    // One page more in the footprint.
    let mut more = requests();
    more.push((more.last().unwrap().0 + 1, (8 << 20) + 4096, 4096, false));
    let bigger = mqsim_trace_in(&dir, "one-page-more", &more);
    let (key, loaded) = run(drive(&[]), 1, &bigger);
    assert!(!loaded && !keys.contains(&key), "footprint");
    let snapshots = files_in(&cache)
        .iter()
        .filter(|f| f.ends_with(".snapshot"))
        .count();
    assert_eq!(snapshots, keys.len() + 1);
}

/// A fresh snapshot of `drive(&[])` in `cache`; its path.
fn one_snapshot(trace: &Path, cache: &Path) -> PathBuf {
    let summary = flashlane_core::run(&cached(drive(&[]), trace, cache)).unwrap();
    PathBuf::from(summary.precondition.snapshot.unwrap().file)
}

/// The run's error: one line naming the file and containing `what`.
fn refusal(trace: &Path, cache: &Path, file: &Path, what: &str) {
    let error = flashlane_core::run(&cached(drive(&[]), trace, cache)).unwrap_err();
    assert!(matches!(error, Error::Config(_)), "{error:?}");
    let text = error.to_string();
    assert!(!text.contains('\n'), "{text}");
    assert!(text.contains(&file.display().to_string()), "{text}");
    assert!(text.contains(what), "{what}: {text}");
    assert!(text.contains("delete the file"), "{text}");
}

/// The run's error for something other than a regular file at the snapshot's place.
fn not_a_file(trace: &Path, cache: &Path, file: &Path, what: &str) {
    let error = flashlane_core::run(&cached(drive(&[]), trace, cache)).unwrap_err();
    let text = error.to_string();
    assert!(text.contains(&file.display().to_string()), "{text}");
    assert!(
        text.contains(&format!("{what} where the snapshot file belongs")),
        "{text}"
    );
    assert!(!text.contains("delete the file"), "{text}");
}

#[test]
fn damaged_truncated_and_foreign_snapshots_are_refused_by_name() {
    let dir = ScratchDir::new("snapshot-damage");
    let trace = mqsim_trace_in(&dir, "random", &requests());
    let cache = dir.join("cache");
    let file = one_snapshot(&trace, &cache);
    let good = std::fs::read(&file).unwrap();
    assert_eq!(&good[..16], b"flashlane drive\n");

    std::fs::write(&file, &good[..good.len() / 2]).unwrap();
    refusal(&trace, &cache, &file, "truncated");
    std::fs::write(&file, &good[..10]).unwrap();
    refusal(&trace, &cache, &file, "not a flashlane drive snapshot");
    let mut damaged = good.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x5a;
    std::fs::write(&file, &damaged).unwrap();
    refusal(&trace, &cache, &file, "damaged");
    std::fs::write(
        &file,
        b"some other program's file, long enough to be read\n",
    )
    .unwrap();
    refusal(&trace, &cache, &file, "not a flashlane drive snapshot");
    let mut other_version = good.clone();
    other_version[16..20].copy_from_slice(&9u32.to_le_bytes());
    std::fs::write(&file, &other_version).unwrap();
    refusal(&trace, &cache, &file, "format version 9");
    // A refused file stays as it is: the user decides.
    assert_eq!(std::fs::read(&file).unwrap(), other_version);

    // The snapshot of another drive under this drive's name.
    let other_cache = dir.join("other");
    let other = flashlane_core::run(&cached(
        drive(&[("precondition.fill_fraction", "0.7")]),
        &trace,
        &other_cache,
    ))
    .unwrap();
    std::fs::copy(other.precondition.snapshot.unwrap().file, &file).unwrap();
    refusal(&trace, &cache, &file, "other inputs");

    // Not a regular file where the snapshot belongs: refused at once (a FIFO would otherwise
    // block the run until a writer came), and not called a file to delete.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    not_a_file(&trace, &cache, &file, "a directory");
    std::fs::remove_dir(&file).unwrap();
    #[cfg(unix)]
    {
        let c = std::ffi::CString::new(file.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        not_a_file(&trace, &cache, &file, "a FIFO");
        std::fs::remove_file(&file).unwrap();
    }

    // A cache path that is a file.
    let error = flashlane_core::run(&cached(drive(&[]), &trace, &trace)).unwrap_err();
    assert!(error.to_string().contains("not a directory"), "{error}");
}

#[test]
fn workers_racing_on_one_drive_precondition_it_once() {
    let dir = ScratchDir::new("snapshot-race");
    let trace = mqsim_trace_in(&dir, "random", &requests());
    let cache = dir.join("cache");
    let specs: Vec<RunSpec> = ["noop", "deadline", "cfq"]
        .iter()
        .map(|s| cached(drive(&[("host.scheduler.kind", s)]), &trace, &cache))
        .collect();
    let summaries: Vec<Summary> = std::thread::scope(|scope| {
        let runs: Vec<_> = specs
            .iter()
            .map(|s| scope.spawn(move || flashlane_core::run(s).unwrap()))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let written = summaries.iter().filter(|s| !snapshot_of(s).1).count();
    assert_eq!(written, 1, "one worker preconditions, the others load");
    let keys: Vec<String> = summaries.iter().map(|s| snapshot_of(s).0).collect();
    assert!(keys.iter().all(|k| *k == keys[0]));
    // Nothing half-written left: the snapshot and its lock only.
    assert_eq!(
        files_in(&cache),
        [
            format!("drive-{}.lock", keys[0]),
            format!("drive-{}.snapshot", keys[0])
        ]
    );
}
