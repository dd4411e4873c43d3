//! Presets bundled into the binary from the repository's `presets/` folder.

/// (name, TOML text) of every preset.
pub const PRESETS: &[(&str, &str)] = &[
    ("mqsim-ssd", include_str!("../../presets/mqsim-ssd.toml")),
    (
        "mqsim-platform",
        include_str!("../../presets/mqsim-platform.toml"),
    ),
    (
        "ssdsim-mlc-8x8",
        include_str!("../../presets/ssdsim-mlc-8x8.toml"),
    ),
    (
        "ssdsim-platform",
        include_str!("../../presets/ssdsim-platform.toml"),
    ),
    (
        "venice-perf",
        include_str!("../../presets/venice-perf.toml"),
    ),
    (
        "venice-cost",
        include_str!("../../presets/venice-cost.toml"),
    ),
    ("sos-4x4", include_str!("../../presets/sos-4x4.toml")),
    ("pass-ssd1", include_str!("../../presets/pass-ssd1.toml")),
    (
        "pass-msr-60gb",
        include_str!("../../presets/pass-msr-60gb.toml"),
    ),
];

pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(name, _)| *name).collect()
}

pub fn preset_text(name: &str) -> Option<&'static str> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}
