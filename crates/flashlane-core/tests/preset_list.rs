//! The presets are one list (`config/presets.rs`): every preset there loads under its own name,
//! and the README's preset list names exactly those (plus renamed ones, which say so).

use flashlane_core::config::{preset_names, unknown_preset, Config};

#[test]
fn every_preset_loads_under_its_key() {
    for name in preset_names() {
        let config = Config::from_preset(name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(config.name, name);
    }
}

#[test]
fn the_readme_lists_every_preset_and_no_other() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let row = readme
        .lines()
        .find(|l| l.starts_with("| presets:"))
        .expect("the README's `| presets: ...` row");
    // Backticked words of the row's first cell (the second holds no names).
    let cell = row.split(" | ").next().unwrap();
    let listed: Vec<&str> = cell.split('`').skip(1).step_by(2).collect();
    for name in preset_names() {
        assert!(listed.contains(&name), "README: {name} missing");
    }
    for name in listed {
        let known = preset_names().contains(&name);
        let renamed = unknown_preset(name).to_string().contains("was renamed");
        assert!(known || renamed, "README lists `{name}`, not a preset");
    }
}
