//! Workload spec files: a good one parses, every bad value is an error naming its key.

use flashlane_core::workload::{
    AddressSpec, ArrivalSpec, SizeSpec, SyntheticReader, SyntheticSpec,
};

const GOOD: &str = r#"
label = "mixed test workload"
requests = 1000
read_fraction = 0.7
seed = 9

[arrival]
kind = "poisson"
mean_interarrival_ns = 20000

[size]
kind = "uniform"
min_bytes = 4096
max_bytes = 65536
align_bytes = 4096

[address]
kind = "mix"

[[address.components]]
weight = 0.8
pattern = { kind = "zipf", span_bytes = 1073741824, align_bytes = 4096, theta = 0.99 }

[[address.components]]
weight = 0.2
pattern = { kind = "sequential", span_bytes = 1073741824, streams = 4 }
"#;

#[test]
fn a_good_spec_parses_and_defaults_apply() {
    let spec = SyntheticSpec::from_toml(GOOD, "good.toml").unwrap();
    assert_eq!(spec.requests, 1000);
    assert_eq!((spec.device, spec.stream), (0, 0));
    assert!(matches!(spec.arrival, ArrivalSpec::Poisson { .. }));
    assert!(matches!(spec.size, SizeSpec::Uniform { .. }));
    assert!(matches!(spec.address, AddressSpec::Mix { ref components } if components.len() == 2));
    assert_eq!(SyntheticReader::new(&spec).unwrap().count(), 1000);
    let hot_cold = SyntheticSpec::from_toml(
        "requests = 1\nread_fraction = 1\n[arrival]\nkind = \"closed_loop\"\nqueue_depth_requests = 8\n\
         [size]\nkind = \"fixed\"\nbytes = 4096\n[address]\nkind = \"hot_cold\"\n\
         span_bytes = 1048576\nhot_fraction_of_span = 0.1\nhot_fraction_of_accesses = 0.9\n",
        "hc.toml",
    )
    .unwrap();
    assert!(matches!(
        hot_cold.address,
        AddressSpec::HotCold {
            align_bytes: 4096,
            ..
        }
    ));
    assert_eq!(hot_cold.seed, 1);
}

/// Replace the first occurrence of `from` in GOOD by `to`, parse, and return the error text.
fn error_after(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "fixture lacks {from:?}");
    let text = GOOD.replacen(from, to, 1);
    match SyntheticSpec::from_toml(&text, "bad.toml") {
        Ok(_) => panic!("accepted {to:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_values_name_their_key() {
    let uniform_sizes =
        "kind = \"uniform\"\nmin_bytes = 4096\nmax_bytes = 65536\nalign_bytes = 4096";
    let cases: &[(&str, &str, &str)] = &[
        ("requests = 1000", "requests = 0", "requests"),
        ("requests = 1000", "requests = \"many\"", "requests"),
        ("requests = 1000", "", "requests"),
        (
            "read_fraction = 0.7",
            "read_fraction = 1.5",
            "read_fraction",
        ),
        (
            "read_fraction = 0.7",
            "read_fraction = nan",
            "read_fraction",
        ),
        ("read_fraction = 0.7", "read_fration = 0.7", "read_fration"),
        ("seed = 9", "seed = -1", "seed"),
        (
            "mean_interarrival_ns = 20000",
            "mean_interarrival_ns = -5",
            "arrival.mean_interarrival_ns",
        ),
        (
            "mean_interarrival_ns = 20000",
            "mean_interarrival_ns = inf",
            "arrival.mean_interarrival_ns",
        ),
        (
            "mean_interarrival_ns = 20000",
            "mean_interarrival_us = 20",
            "mean_interarrival_us",
        ),
        (
            "kind = \"poisson\"\nmean_interarrival_ns = 20000",
            "kind = \"closed_loop\"\nqueue_depth_requests = 0",
            "arrival.queue_depth_requests",
        ),
        ("kind = \"poisson\"", "kind = \"bursty\"", "bursty"),
        ("min_bytes = 4096", "min_bytes = 131072", "size.min_bytes"),
        ("min_bytes = 4096", "min_bytes = 0", "size.min_bytes"),
        ("min_bytes = 4096", "min_bytes = 1000", "size.align_bytes"),
        (
            "align_bytes = 4096\n\n[address]",
            "align_bytes = 0\n\n[address]",
            "size.align_bytes",
        ),
        (uniform_sizes, "kind = \"fixed\"\nbytes = 0", "size.bytes"),
        (
            uniform_sizes,
            "kind = \"empirical\"\nsizes_bytes = []\nweights = []",
            "size.sizes_bytes",
        ),
        (
            uniform_sizes,
            "kind = \"empirical\"\nsizes_bytes = [4096, 8192]\nweights = [1.0]",
            "size.weights",
        ),
        (
            uniform_sizes,
            "kind = \"empirical\"\nsizes_bytes = [4096, 0]\nweights = [1.0, 1.0]",
            "size.sizes_bytes[1]",
        ),
        (
            uniform_sizes,
            "kind = \"empirical\"\nsizes_bytes = [4096, 8192]\nweights = [1.0, -2.0]",
            "size.weights[1]",
        ),
        (
            uniform_sizes,
            "kind = \"empirical\"\nsizes_bytes = [4096]\nweights = [0.0]",
            "size.weights",
        ),
        (
            "weight = 0.8",
            "weight = -0.8",
            "address.components[0].weight",
        ),
        (
            "theta = 0.99",
            "theta = 0",
            "address.components[0].pattern.theta",
        ),
        ("theta = 0.99", "theta = 0.99, skew = 2", "skew"),
        (
            "span_bytes = 1073741824, align_bytes",
            "span_bytes = 32768, align_bytes",
            "address.components[0].pattern.span_bytes",
        ),
        (
            "align_bytes = 4096, theta",
            "align_bytes = 0, theta",
            "address.components[0].pattern.align_bytes",
        ),
        (
            "streams = 4",
            "streams = 0",
            "address.components[1].pattern.streams",
        ),
        (
            "span_bytes = 1073741824, streams = 4",
            "span_bytes = 131072, streams = 4",
            "address.components[1].pattern.span_bytes",
        ),
    ];
    for (from, to, key) in cases {
        let err = error_after(from, to);
        assert!(
            err.contains(key),
            "{to:?}: error {err:?} does not name {key:?}"
        );
        assert!(err.contains("bad.toml"), "{err}");
    }
}

#[test]
fn bad_hot_cold_and_mix_values_name_their_key() {
    let base =
        "requests = 10\nread_fraction = 0.5\n[arrival]\nkind = \"fixed\"\ninterarrival_ns = 5\n\
                [size]\nkind = \"fixed\"\nbytes = 4096\n[address]\n";
    let cases: &[(&str, &str)] = &[
        (
            "kind = \"hot_cold\"\nspan_bytes = 1048576\nhot_fraction_of_span = 1.0\nhot_fraction_of_accesses = 0.9",
            "address.hot_fraction_of_span",
        ),
        (
            "kind = \"hot_cold\"\nspan_bytes = 1048576\nhot_fraction_of_span = 0.2\nhot_fraction_of_accesses = 1.1",
            "address.hot_fraction_of_accesses",
        ),
        (
            "kind = \"hot_cold\"\nspan_bytes = 4096\nhot_fraction_of_span = 0.2\nhot_fraction_of_accesses = 0.5",
            "address.span_bytes",
        ),
        ("kind = \"mix\"\ncomponents = []", "address.components"),
        (
            "kind = \"mix\"\ncomponents = [{ weight = 0.0, pattern = { kind = \"uniform\", span_bytes = 8192, align_bytes = 4096 } }]",
            "address.components weights",
        ),
        ("kind = \"uniform\"\nspan_bytes = 1048576", "align_bytes"),
    ];
    for (address, key) in cases {
        let err = SyntheticSpec::from_toml(&format!("{base}{address}\n"), "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(key),
            "{address:?}: error {err:?} does not name {key:?}"
        );
    }
}

#[test]
fn specs_built_in_code_are_checked_too() {
    let mut spec = SyntheticSpec::from_toml(GOOD, "good.toml").unwrap();
    spec.read_fraction = -0.1;
    let err = SyntheticReader::new(&spec).unwrap_err().to_string();
    assert!(err.contains("read_fraction"), "{err}");
}

#[test]
fn missing_spec_file_names_the_file() {
    let err = SyntheticSpec::from_file(std::path::Path::new("/nonexistent/w.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("/nonexistent/w.toml"), "{err}");
}

/// Every arrival kind is bounded where the generator's integer times stay exact (issue 34,
/// item 2): gaps that could carry the last request past the simulator's 2^60 ns clock are
/// refused, naming the key; so is a span past the 2^60-byte offsets readers accept. Just
/// inside the bound, times come out in order.
#[test]
fn arrival_and_span_bounds_name_their_key() {
    let poisson = "kind = \"poisson\"\nmean_interarrival_ns = 20000";
    for (to, key) in [
        ("kind = \"poisson\"\nmean_interarrival_ns = 1e17", "arrival.mean_interarrival_ns"),
        ("kind = \"fixed\"\ninterarrival_ns = 1154075580187035", "arrival.interarrival_ns"),
        (
            "kind = \"on_off\"\non_interarrival_ns = 1e30\non_duration_ns = 1000\noff_duration_ns = 1000",
            "arrival.on_interarrival_ns",
        ),
    ] {
        let err = error_after(poisson, to);
        assert!(err.contains(key) && err.contains("2^60 ns"), "{to}: {err}");
    }
    let err = error_after(
        "span_bytes = 1073741824, align_bytes",
        "span_bytes = 18446744073709551615, align_bytes",
    );
    assert!(
        err.contains("address.components[0]") || err.contains("span_bytes"),
        "{err}"
    );
    assert!(err.contains("2^60 bytes"), "{err}");
    // 1000 requests 1,154,075,580,187,034 ns apart (fixed) end 10 ns before 2^60: accepted,
    // and the times never go backwards.
    let text = GOOD.replacen(
        poisson,
        "kind = \"fixed\"\ninterarrival_ns = 1154075580187034",
        1,
    );
    let spec = SyntheticSpec::from_toml(&text, "edge.toml").unwrap();
    let mut reader = SyntheticReader::new(&spec).unwrap();
    let mut last = 0;
    while let Some(record) = reader.next_record().unwrap() {
        assert!(record.time_ns >= last);
        last = record.time_ns;
    }
    assert!(last < 1 << 60);
}
