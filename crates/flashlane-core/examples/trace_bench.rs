//! Throughput of the MSR Cambridge CSV reader on an uncompressed file.
//!
//! `cargo run --release --example trace_bench [LINES]` writes LINES (default 5,000,000)
//! MSR-style lines to a temporary file, reads them back and prints lines per second.

use std::io::{BufWriter, Write};
use std::time::Instant;

use flashlane_core::trace::{open, TraceFormat};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let lines: u64 = match std::env::args().nth(1) {
        Some(text) => text.parse()?,
        None => 5_000_000,
    };
    let dir = std::env::temp_dir().join(format!("flashlane-trace-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("bench.msr.csv");

    // Deterministic, realistic-looking lines: 18-digit tick stamps, 4 KiB-aligned offsets.
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(&path)?);
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut ticks: u64 = 128_166_372_000_000_000;
    for _ in 0..lines {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ticks += state % 20_000;
        let kind = if state & 3 == 0 { "Write" } else { "Read" };
        let offset = (state >> 20) % (1 << 26) * 4096;
        let size = 512 << (state % 8);
        writeln!(
            out,
            "{ticks},hm,{},{kind},{offset},{size},{}",
            state % 4,
            state % 9000
        )?;
    }
    out.flush()?;
    drop(out);
    let bytes = std::fs::metadata(&path)?.len();

    let start = Instant::now();
    let mut reader = open(&path, TraceFormat::Msr)?;
    let mut records = 0u64;
    let mut checksum = 0u64;
    while let Some(record) = reader.next_record()? {
        records += 1;
        checksum = checksum.wrapping_add(record.offset_bytes ^ record.size_bytes);
    }
    let seconds = start.elapsed().as_secs_f64();
    std::fs::remove_dir_all(&dir)?;

    println!(
        "MSR reader: {records} lines, {:.1} MiB in {seconds:.3} s = {:.2} M lines/s, {:.0} MiB/s \
         (checksum {checksum:x})",
        bytes as f64 / (1 << 20) as f64,
        records as f64 / seconds / 1e6,
        bytes as f64 / (1 << 20) as f64 / seconds,
    );
    Ok(())
}
