//! `--set` sequences are one rule whatever their order (issue 34, item 3): a kind change keeps
//! the keys set for the table and refuses those the new kind has not, as a partial config file
//! holding each key's last value does.

use flashlane_core::config::Config;
use proptest::prelude::*;

/// The keys and values the property draws from: kind changes of two policy tables, keys that
/// only some kinds have, and plain keys.
const POOL: &[(&str, &[&str])] = &[
    (
        "host.scheduler.kind",
        &["noop", "deadline", "piq", "cfq", "anticipatory", "pass"],
    ),
    ("host.scheduler.read_expire_ns", &["5", "1000", "500000000"]),
    ("host.scheduler.merge", &["true", "false"]),
    ("host.scheduler.write_starvation_guard", &["true", "false"]),
    ("host.scheduler.region_bytes", &["1048576", "67108864"]),
    ("host.scheduler.nosuch", &["1"]),
    (
        "device.scheduler.kind",
        &["out_of_order", "in_order", "sos", "read_first"],
    ),
    ("device.scheduler.queue_size_leveller", &["true", "false"]),
    ("host.queue_length_requests", &["1", "64"]),
    ("ftl.overprovisioning_fraction", &["0.1", "0.25"]),
];

fn overrides(picks: &[(usize, usize)]) -> Vec<(String, String)> {
    picks
        .iter()
        .map(|&(k, v)| {
            let (key, values) = POOL[k % POOL.len()];
            (key.to_string(), values[v % values.len()].to_string())
        })
        .collect()
}

/// The partial file a user would write for the same intent: each key once, at its last value.
fn as_partial_file(overrides: &[(String, String)]) -> String {
    let mut root = toml::Table::new();
    for (key, value) in overrides {
        let parts: Vec<&str> = key.split('.').collect();
        let (leaf, sections) = parts.split_last().unwrap();
        let mut table = &mut root;
        for part in sections {
            table = table
                .entry(part.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .unwrap();
        }
        let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.clone()));
        table.insert(leaf.to_string(), parsed);
    }
    toml::to_string(&root).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn a_set_sequence_is_the_partial_file_of_its_last_values(
        preset in prop::sample::select(vec!["mqsim-ssd", "ssdsim-mlc-8x8", "pass-ssd1", "sos-4x4"]),
        picks in prop::collection::vec((0usize..100, 0usize..100), 1..8),
    ) {
        let sets = overrides(&picks);
        let by_set = Config::from_preset(preset, &sets);
        let file = as_partial_file(&sets);
        let by_file = Config::from_preset_and_text(preset, &file, "partial", &[]);
        match (by_set, by_file) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "{:?} vs file\n{}", sets, file),
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "{sets:?}: --set gives {a:?}, the file\n{file}\ngives {b:?}"),
        }
    }
}

/// The cases: the order of a kind change and its keys does not matter, and a key the
/// new kind does not have is refused either way.
#[test]
fn a_kind_change_keeps_its_keys_in_any_order() {
    let set = |pairs: &[(&str, &str)]| {
        let o: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_preset("mqsim-ssd", &o)
    };
    let before = set(&[
        ("host.scheduler.read_expire_ns", "5"),
        ("host.scheduler.kind", "deadline"),
    ])
    .unwrap();
    let after = set(&[
        ("host.scheduler.kind", "deadline"),
        ("host.scheduler.read_expire_ns", "5"),
    ])
    .unwrap();
    assert_eq!(before, after);
    let text = toml::to_string(&before.host.scheduler).unwrap();
    assert!(text.contains("read_expire_ns = 5\n"), "{text}");
    for pairs in [
        [
            ("host.scheduler.nosuch", "5"),
            ("host.scheduler.kind", "deadline"),
        ],
        [
            ("host.scheduler.kind", "deadline"),
            ("host.scheduler.nosuch", "5"),
        ],
        [
            ("host.scheduler.read_expire_ns", "5"),
            ("host.scheduler.kind", "noop"),
        ],
    ] {
        let err = set(&pairs).unwrap_err().to_string();
        assert!(err.contains("unknown field"), "{pairs:?}: {err}");
    }
    // A kind set back to the preset's keeps the preset's other keys, as the file would.
    let back = set(&[
        ("host.scheduler.kind", "deadline"),
        ("host.scheduler.kind", "noop"),
    ])
    .unwrap();
    assert_eq!(back, Config::from_preset("mqsim-ssd", &[]).unwrap());
    // A table set as if it were a value says how to choose its kind.
    let err = set(&[("host.scheduler", "piq")]).unwrap_err().to_string();
    assert!(err.contains("--set host.scheduler.kind=piq"), "{err}");
}

/// A mistyped key names itself once and says what it most looks like (issue 34).
#[test]
fn a_mistyped_key_gets_a_suggestion() {
    for (key, says) in [
        (
            "host.shceduler.kind",
            "host.shceduler: unknown field `shceduler`",
        ),
        ("host.shceduler.kind", "did you mean `scheduler`?"),
        ("host.scheduler.merg", "did you mean `merge`?"),
        (
            "ftl.overprovisioning",
            "did you mean `overprovisioning_fraction` (keys carry their unit)?",
        ),
        ("ftl.gc_page_moves", "did you mean `gc_page_move`?"),
    ] {
        let err = Config::from_preset("mqsim-ssd", &[(key.to_string(), "1".to_string())])
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{key}: {err}");
        assert!(!err.contains("shceduler.shceduler"), "{err}");
    }
    // Nothing near: no guess.
    let err = Config::from_preset(
        "mqsim-ssd",
        &[("ftl.zzzzzzzz".to_string(), "1".to_string())],
    )
    .unwrap_err()
    .to_string();
    assert!(!err.contains("did you mean"), "{err}");
}
