//! Presets bundled into the binary from the repository's `presets/` folder.
//!
//! A preset is its file `presets/NAME.toml` plus `"NAME"` in the list below; the file's own
//! `name` must be NAME (checked on load, `check_preset_name`), and the README's list and the
//! tests are checked against this one.

/// `(name, TOML text)` of every preset from its name alone: the file is `presets/NAME.toml`.
macro_rules! presets {
    ($($name:literal),* $(,)?) => {
        /// (name, TOML text) of every preset.
        pub const PRESETS: &[(&str, &str)] =
            &[$(($name, include_str!(concat!("../../presets/", $name, ".toml")))),*];
    };
}

presets![
    "mqsim-ssd",
    "mqsim-platform",
    "ssdsim-mlc-8x8",
    "ssdsim-platform",
    "venice-perf",
    "venice-cost",
    "sos-4x4",
    "pass-ssd1",
    "pass-msr-60gb",
    "combined-8x8",
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

/// A preset's TOML must call itself by its key: a copied file that kept the old `name` would
/// label every run with the wrong preset.
pub fn check_preset_name(key: &str, text: &str) -> Result<(), String> {
    let table: toml::Table = toml::from_str(text).map_err(|e| format!("preset {key}: {e}"))?;
    match table.get("name").and_then(|n| n.as_str()) {
        Some(own) if own == key => Ok(()),
        own => Err(format!(
            "preset {key}: its file says name = {}, not \"{key}\" (a preset is named by its \
             key in config/presets.rs)",
            own.map_or("nothing".to_string(), |n| format!("\"{n}\""))
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_naming_another_preset_is_refused() {
        let e = check_preset_name("mine", "name = \"mqsim-ssd\"\n").unwrap_err();
        assert!(e.contains("name = \"mqsim-ssd\", not \"mine\""), "{e}");
        assert!(check_preset_name("mine", "source = \"x\"\n").is_err());
        assert!(check_preset_name("mine", "name = \"mine\"\n").is_ok());
    }

    #[test]
    fn every_preset_is_named_by_its_key() {
        for (key, text) in PRESETS {
            check_preset_name(key, text).unwrap();
        }
    }
}
