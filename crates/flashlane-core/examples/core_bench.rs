//! Whole-run speed benchmark (not a test): generates its own trace, runs it, prints figures.
//!
//! `cargo run --release -p flashlane-core --example core_bench [-- REQUESTS [PRESET [INTERCONNECT [KEY=VALUE ...]]]]`
//!
//! Trace: REQUESTS (default 1,000,000) random 4 KiB requests, 70 % reads, exponential
//! inter-arrival times with a 20 us mean, uniformly over a 64 GiB span; preset mqsim-ssd
//! (or PRESET), with the preset's interconnect (or INTERCONNECT, e.g. `venice`; `-` keeps the
//! preset's), and any further `key=value` config overrides (e.g. `variation.enabled=true`).
//! With `FLASHLANE_BENCH_KEEP_TRACE` set, the trace file is kept (its path is printed) so the
//! CLI can be measured on the same trace; `FLASHLANE_BENCH_SPAN_GIB` changes the 64 GiB span
//! (a small span gives a trace whose footprint stops growing with its length).

use std::io::Write;

use flashlane_core::config::Config;
use flashlane_core::trace::TraceFormat;
use flashlane_core::RunSpec;
use rand::{Rng, SeedableRng};

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    let requests: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let path = std::env::temp_dir().join(format!(
        "flashlane-bench-{requests}-{}.mqsim",
        std::process::id()
    ));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(42);
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(&path).expect("create bench trace"));
    let span_gib: u64 = std::env::var("FLASHLANE_BENCH_SPAN_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let span_sectors: u64 = (span_gib << 30) / 512;
    let mut t_ns = 0f64;
    for _ in 0..requests {
        let u: f64 = rng.random_range(f64::EPSILON..1.0);
        t_ns += -u.ln() * 20_000.0;
        let sector = rng.random_range(0..span_sectors / 8) * 8;
        let read = rng.random_bool(0.7);
        writeln!(out, "{} 0 {sector} 8 {}", t_ns as u64, u8::from(read))
            .expect("write bench trace");
    }
    out.flush().expect("flush bench trace");
    drop(out);
    let rss_before = peak_rss_mib();

    let preset = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "mqsim-ssd".into());
    let mut overrides: Vec<(String, String)> = std::env::args()
        .nth(3)
        .filter(|kind| kind != "-")
        .map(|kind| ("interconnect.kind".to_string(), kind))
        .into_iter()
        .collect();
    for text in std::env::args().skip(4) {
        overrides.push(flashlane_core::config::parse_override(&text).expect("key=value"));
    }
    let spec = RunSpec::new(
        Config::from_preset(&preset, &overrides).expect("preset"),
        path.clone(),
        Some(TraceFormat::Mqsim),
    );
    let started = std::time::Instant::now();
    let summary = flashlane_core::run(&spec).expect("run");
    let total_s = started.elapsed().as_secs_f64();
    if std::env::var_os("FLASHLANE_BENCH_KEEP_TRACE").is_some() {
        println!("trace kept at             {}", path.display());
    } else {
        let _ = std::fs::remove_file(&path);
    }
    println!("requests simulated        {}", summary.trace.records);
    println!("events                    {}", summary.engine.events);
    println!("simulation wall s         {:.3}", summary.engine.wall_s);
    println!(
        "simulated requests / s    {:.0}",
        summary.engine.requests_per_s
    );
    println!(
        "events / s                {:.0}",
        summary.engine.events as f64 / summary.engine.wall_s
    );
    println!(
        "preconditioning wall s    {:.3}",
        summary.precondition.wall_s
    );
    println!(
        "whole run wall s          {total_s:.3} (footprint pass + preconditioning + simulation)"
    );
    println!(
        "whole run requests / s    {:.0}",
        summary.trace.records as f64 / total_s
    );
    println!(
        "peak RSS MiB              {:.1} (before the run: {rss_before:.1})",
        peak_rss_mib()
    );
    println!("mapping bytes             {}", summary.memory.mapping_bytes);
    println!(
        "mean read / write us      {:.1} / {:.1}",
        summary.figures.latency_us.read.mean, summary.figures.latency_us.write.mean
    );
    println!("chip utilization          {:.3}", summary.chips.utilization);
}
