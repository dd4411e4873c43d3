//! Workload conditions as keys of a synthetic spec, each measured back from the records it
//! generates: skew over parallel units (under a preset's static allocation), burstiness
//! (peak-to-mean arrival rate), sequential runs (mean run length).

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
