//! Workload conditions as keys of a synthetic spec, each measured back from the records it
//! generates: skew over parallel units (under a preset's static allocation), burstiness
//! (peak-to-mean arrival rate), sequential runs (mean run length), bursts by region (runs of
//! requests to one region, PASS's condition).

use flashlane_core::config::Config;
use flashlane_core::trace::TraceRecord;
use flashlane_core::workload::{SyntheticReader, SyntheticSpec};

fn records(text: &str) -> Vec<TraceRecord> {
    let spec = SyntheticSpec::from_toml(text, "spec.toml").unwrap();
    SyntheticReader::new(&spec).unwrap().collect()
}

#[test]
fn hot_units_put_their_share_of_pages_on_the_hot_channels_of_a_preset() {
    let config = Config::from_preset("mqsim-ssd", &[]).unwrap();
    let g = &config.geometry;
    let map = config.static_map();
    let page = u64::from(g.page_bytes);
    // One page per piece, dealt to the channels in turn: mqsim-ssd's static allocation
    // deals consecutive pages to channels first.
    let text = format!(
        "requests = 20000\nread_fraction = 1.0\n[arrival]\nkind = \"fixed\"\ninterarrival_ns = 1000\n\
         [size]\nkind = \"fixed\"\nbytes = {page}\n\
         [address]\nkind = \"hot_units\"\nspan_bytes = {}\nalign_bytes = {page}\nunit_bytes = {page}\n\
         units = {}\nhot_units = 2\nhot_fraction_of_accesses = 0.8\n",
        page * 4096,
        g.channels
    );
    let recs = records(&text);
    let on_hot = recs
        .iter()
        .filter(|r| g.channel_of_chip(map.chip_of(r.offset_bytes / page)) < 2)
        .count();
    let share = on_hot as f64 / recs.len() as f64;
    assert!(
        (share - 0.8).abs() < 0.015,
        "share on the 2 hot channels: {share}"
    );
}

#[test]
fn on_off_arrivals_give_the_peak_to_mean_ratio_of_their_periods() {
    // ON 1 ms of every 4 ms: peak-to-mean 4.
    let recs = records(
        "requests = 40000\nread_fraction = 1.0\n[arrival]\nkind = \"on_off\"\n\
         on_interarrival_ns = 2000\non_duration_ns = 1000000\noff_duration_ns = 3000000\n\
         [size]\nkind = \"fixed\"\nbytes = 4096\n\
         [address]\nkind = \"uniform\"\nspan_bytes = 1073741824\nalign_bytes = 4096\n",
    );
    let end = recs.last().unwrap().time_ns;
    // Arrivals per 1 ms window: the busiest windows against the mean of all.
    let windows = (end / 1_000_000 + 1) as usize;
    let mut per_window = vec![0u64; windows];
    for r in &recs {
        per_window[(r.time_ns / 1_000_000) as usize] += 1;
        assert!(
            r.time_ns % 4_000_000 < 1_000_000,
            "an arrival in an OFF period"
        );
    }
    let mean = recs.len() as f64 / windows as f64;
    let on_windows: Vec<u64> = per_window.iter().copied().filter(|n| *n > 0).collect();
    let peak = on_windows.iter().sum::<u64>() as f64 / on_windows.len() as f64;
    assert!(
        ((peak / mean) - 4.0).abs() < 0.2,
        "peak-to-mean {}",
        peak / mean
    );
}

#[test]
fn runs_have_the_mean_length_they_were_given() {
    let recs = records(
        "requests = 40000\nread_fraction = 0.5\n[arrival]\nkind = \"fixed\"\ninterarrival_ns = 1000\n\
         [size]\nkind = \"uniform\"\nmin_bytes = 4096\nmax_bytes = 16384\nalign_bytes = 4096\n\
         [address]\nkind = \"runs\"\nspan_bytes = 68719476736\nalign_bytes = 4096\nmean_run_requests = 8\n",
    );
    // A run continues while a request starts where the previous one ended.
    let runs = 1 + recs
        .windows(2)
        .filter(|w| w[1].offset_bytes != w[0].offset_bytes + w[0].size_bytes)
        .count();
    let mean = recs.len() as f64 / runs as f64;
    assert!((mean - 8.0).abs() < 0.4, "mean run length {mean}");
}

const REGION_BURSTS: &str = "requests = 40000\nread_fraction = 0.5\nseed = 5\n\
     [arrival]\nkind = \"fixed\"\ninterarrival_ns = 1000\n\
     [size]\nkind = \"uniform\"\nmin_bytes = 4096\nmax_bytes = 16384\nalign_bytes = 4096\n\
     [address]\nkind = \"region_bursts\"\nspan_bytes = 21475885056\nalign_bytes = 4096\n\
     region_bytes = 4294967296\nburst_requests = 16\n";

#[test]
fn region_bursts_are_runs_of_exactly_their_length_inside_one_region() {
    // Five whole 4 GiB regions and 1 MiB of remainder, which no request may touch.
    let region = 4u64 << 30;
    let recs = records(REGION_BURSTS);
    let region_of = |r: &TraceRecord| r.offset_bytes / region;
    for r in &recs {
        assert_eq!(r.offset_bytes % 4096, 0, "{r:?}");
        assert!(region_of(r) < 5, "{r:?} outside the whole regions");
        assert_eq!(
            (r.offset_bytes + r.size_bytes - 1) / region,
            region_of(r),
            "{r:?} crosses its region's end"
        );
    }
    // Bursts of exactly 16: one region within a burst, another region at the next burst, so
    // (16 - 1) / 16 of consecutive pairs stay in one region.
    let same = recs
        .windows(2)
        .filter(|w| region_of(&w[0]) == region_of(&w[1]))
        .count();
    assert_eq!(same, recs.len() - recs.len() / 16, "same-region pairs");
    let mut bursts_per_region = [0u64; 5];
    for burst in recs.chunks(16) {
        assert!(burst.iter().all(|r| region_of(r) == region_of(&burst[0])));
        bursts_per_region[region_of(&burst[0]) as usize] += 1;
    }
    // 2,500 bursts, 500 per region expected (standard deviation 20).
    assert!(
        bursts_per_region.iter().all(|n| (400..=600).contains(n)),
        "{bursts_per_region:?}"
    );
    // Uniform inside the region: the mean offset within it is half a region (less half a
    // mean request, moved down at the end; a standard error is 0.14 % of a region).
    let within = recs
        .iter()
        .map(|r| (r.offset_bytes % region) as f64)
        .sum::<f64>()
        / recs.len() as f64;
    assert!((within / region as f64 - 0.5).abs() < 0.01, "{within}");
}

#[test]
fn region_bursts_round_trip_through_toml_and_repeat_for_a_seed() {
    let spec = SyntheticSpec::from_toml(REGION_BURSTS, "spec.toml").unwrap();
    let text = spec.to_toml().unwrap();
    assert!(text.contains("kind = \"region_bursts\""), "{text}");
    assert_eq!(SyntheticSpec::from_toml(&text, "again.toml").unwrap(), spec);
    let a = records(REGION_BURSTS);
    assert_eq!(a, records(REGION_BURSTS));
    let b = records(&REGION_BURSTS.replace("seed = 5", "seed = 6"));
    assert_ne!(a, b);
    // align_bytes is optional (4096), as for the other patterns.
    let default_align = REGION_BURSTS.replace("align_bytes = 4096\nregion_bytes", "region_bytes");
    assert_eq!(records(&default_align), a);
}

#[test]
fn bad_region_burst_values_are_errors_naming_the_key() {
    for (from, to, key) in [
        (
            "burst_requests = 16",
            "burst_requests = 0",
            "address.burst_requests",
        ),
        (
            "region_bytes = 4294967296",
            "region_bytes = 4294967000",
            "address.region_bytes",
        ),
        (
            "region_bytes = 4294967296",
            "region_bytes = 0",
            "address.region_bytes",
        ),
        (
            "region_bytes = 4294967296",
            "region_bytes = 8192",
            "address.region_bytes (8192) must hold the largest request",
        ),
        (
            "span_bytes = 21475885056",
            "span_bytes = 1073741824",
            "address.span_bytes (1073741824) must hold at least one region",
        ),
        ("burst_requests = 16", "burst_length = 16", "burst_length"),
    ] {
        assert!(REGION_BURSTS.contains(from), "{from}");
        let e = SyntheticSpec::from_toml(&REGION_BURSTS.replace(from, to), "spec.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(key) && e.contains("spec.toml"), "{to}: {e}");
    }
}

#[test]
fn bad_condition_keys_are_errors_naming_the_key() {
    let base = "requests = 10\nread_fraction = 1.0\n[size]\nkind = \"fixed\"\nbytes = 4096\n";
    let cases = [
        (
            "[arrival]\nkind = \"on_off\"\non_interarrival_ns = 10\non_duration_ns = 0\noff_duration_ns = 5\n\
             [address]\nkind = \"uniform\"\nspan_bytes = 65536\nalign_bytes = 4096\n",
            "arrival.on_duration_ns",
        ),
        (
            "[arrival]\nkind = \"fixed\"\ninterarrival_ns = 10\n[address]\nkind = \"hot_units\"\n\
             span_bytes = 65536\nunit_bytes = 4096\nunits = 4\nhot_units = 4\nhot_fraction_of_accesses = 0.5\n",
            "hot_units < units",
        ),
        (
            "[arrival]\nkind = \"fixed\"\ninterarrival_ns = 10\n[address]\nkind = \"runs\"\n\
             span_bytes = 65536\nmean_run_requests = 0.5\n",
            "address.mean_run_requests",
        ),
    ];
    for (tail, key) in cases {
        let e = SyntheticSpec::from_toml(&format!("{base}{tail}"), "spec.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(key) && e.contains("spec.toml"), "{e}");
    }
}
