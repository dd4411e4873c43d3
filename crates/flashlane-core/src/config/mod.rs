//! Typed configuration: presets (TOML files under `presets/`), config files and `--set` overrides.
//!
//! Every key carries its unit in its name. Unknown keys are errors that name the key, the
//! file and the line.

mod presets;
pub mod switches;

use serde::{Deserialize, Serialize};

use crate::device::{default_write_buffer_flush_threshold_fraction, default_write_buffer_page_ns};
use crate::ftl::{PartialPageWrites, VariationConfig};
use crate::geometry::{Geometry, Level, StaticMap};
use crate::interconnect::InterconnectConfig;
use crate::Error;

// The model config types `Config` assembles, under their former `config::` paths.
pub use crate::device::DeviceConfig;
pub use crate::ftl::{AllocationConfig, FtlConfig, GcBlockRelease, PreconditionConfig};
pub use crate::host::HostConfig;
pub use crate::timing::Timing;

pub use presets::{check_preset_name, preset_names, preset_text, PRESETS};

/// A complete simulator configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Short name of the modelled device.
    pub name: String,
    /// One-line description (shown by `flashlane presets`).
    pub description: String,
    /// Where the numbers come from.
    pub source: String,
    pub geometry: Geometry,
    pub timing: Timing,
    pub interconnect: InterconnectConfig,
    pub ftl: FtlConfig,
    #[serde(default)]
    pub precondition: PreconditionConfig,
    /// Process variation between blocks (VIOS); off by default.
    #[serde(default)]
    pub variation: VariationConfig,
    /// Power and energy constants (see energy.rs and stats/energy.rs); every key has a default.
    #[serde(default)]
    pub energy: crate::energy::EnergyConfig,
    pub host: HostConfig,
    pub device: DeviceConfig,
}

impl Config {
    /// Load a preset by name, apply `key=value` overrides.
    pub fn from_preset(name: &str, overrides: &[(String, String)]) -> Result<Config, Error> {
        Config::from_text(preset(name)?, &format!("preset {name}"), overrides)
    }

    /// A preset with a config file merged over it (`--preset P --config FILE`), then
    /// `key=value` overrides. The file may hold any subset of keys. A table whose `kind` the
    /// file changes replaces the preset's table (the new kind's parameters take their
    /// defaults), as `--set ...kind=` does; other tables merge key by key. Errors name the
    /// file, the key and, where the file has it, its line.
    pub fn from_preset_and_text(
        name: &str,
        text: &str,
        origin: &str,
        overrides: &[(String, String)],
    ) -> Result<Config, Error> {
        let preset = preset(name)?;
        let mut table: toml::Table =
            toml::from_str(preset).map_err(|e| Error::Config(format!("preset {name}: {e}")))?;
        let file: toml::Table =
            toml::from_str(text).map_err(|e| Error::Config(format!("{origin}: {e}")))?;
        merge_over(&mut table, file);
        let merged = toml::to_string(&table)
            .map_err(|e| Error::Config(format!("{origin} over preset {name}: {e}")))?;
        let label = format!("{origin} over preset {name}");
        // The merge alone first: an error is the file's (the preset is valid), so it is
        // reported with the file's line, not the merged text's.
        let config: Config = toml::from_str(&merged).map_err(|e| {
            let key = error_key(&merged, &e);
            let line = key
                .as_deref()
                .and_then(|k| line_of_key(text, k))
                .map_or(String::new(), |l| format!(" (line {l})"));
            Error::Config(match key {
                Some(key) => format!(
                    "{label}: key `{key}`{line}: {}",
                    with_suggestion(e.message())
                ),
                None => format!("{label}: {}", with_suggestion(e.message())),
            })
        })?;
        let config = config
            .loaded()
            .map_err(|e| Error::Config(format!("{label}: {e}")))?;
        if overrides.is_empty() {
            return Ok(config);
        }
        Config::from_text(&merged, &label, overrides)
    }

    /// Load a config file, apply `key=value` overrides.
    pub fn from_file(
        path: &std::path::Path,
        overrides: &[(String, String)],
    ) -> Result<Config, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("{}: cannot read config: {e}", path.display())))?;
        Config::from_text(&text, &path.display().to_string(), overrides)
    }

    /// Parse TOML `text` (named `origin` in errors) and apply overrides.
    pub fn from_text(
        text: &str,
        origin: &str,
        overrides: &[(String, String)],
    ) -> Result<Config, Error> {
        // First the file alone, so its errors carry its line numbers.
        let config: Config = toml::from_str(text).map_err(|e| {
            Error::Config(match error_key(text, &e) {
                Some(key) => format!("{origin}: key `{key}`: {e}{}", suggestion(e.message())),
                None => format!("{origin}: {e}{}", suggestion(e.message())),
            })
        })?;
        let config = config
            .loaded()
            .map_err(|e| Error::Config(format!("{origin}: {e}")))?;
        if overrides.is_empty() {
            return Ok(config);
        }
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| Error::Config(format!("{origin}: {e}")))?;
        apply_overrides(&mut table, overrides)?;
        // Parsed from text, so that an error's span tells which key it is about.
        let merged = toml::to_string(&table).map_err(|e| {
            Error::Config(format!(
                "{origin} with overrides {}: {e}",
                describe(overrides)
            ))
        })?;
        let config: Config = toml::from_str(&merged).map_err(|e| {
            Error::Config(format!(
                "{origin} with overrides {}: {}{}",
                describe(overrides),
                error_key(&merged, &e).map_or(String::new(), |k| format!("{k}: ")),
                with_suggestion(e.message())
            ))
        })?;
        config.loaded().map_err(|e| {
            Error::Config(format!(
                "{origin} with overrides {}: {e}",
                describe(overrides)
            ))
        })
    }

    /// The config with the files it names read in (`device.region_contention.probe_path`),
    /// then validated.
    fn loaded(mut self) -> Result<Config, String> {
        if let Some(contention) = &mut self.device.region_contention {
            contention.load_probe()?;
        }
        self.validate()?;
        Ok(self)
    }

    /// Check values serde cannot: ranges and consistency. Messages name the key.
    pub fn validate(&self) -> Result<(), String> {
        self.geometry.validate()?;
        self.interconnect.validate(&self.geometry)?;
        self.energy.validate()?;
        self.host.link.validate()?;
        let t = &self.timing;
        if !(t.channel_bytes_per_ns.is_finite() && t.channel_bytes_per_ns > 0.0) {
            return Err("timing.channel_bytes_per_ns must be a positive number".into());
        }
        for (key, ns) in [
            ("timing.page_read_ns", t.page_read_ns),
            ("timing.page_program_ns", t.page_program_ns),
            ("timing.block_erase_ns", t.block_erase_ns),
        ] {
            if ns == 0 {
                return Err(format!(
                    "{key} must be at least 1 ns (a flash operation that takes no time)"
                ));
            }
        }
        self.check_time_bounds()?;
        let f = &self.ftl;
        if !(0.0..0.9).contains(&f.overprovisioning_fraction) {
            return Err("ftl.overprovisioning_fraction must be in [0, 0.9)".into());
        }
        if !(0.0..0.5).contains(&f.gc_threshold_fraction) {
            return Err("ftl.gc_threshold_fraction must be in [0, 0.5)".into());
        }
        if f.gc_threshold_min_blocks > 0
            && u64::from(f.gc_threshold_min_blocks) * 2 >= u64::from(self.geometry.blocks_per_plane)
        {
            return Err(format!(
                "ftl.gc_threshold_min_blocks {} must be below half of geometry.blocks_per_plane ({})",
                f.gc_threshold_min_blocks, self.geometry.blocks_per_plane
            ));
        }
        match f.gc_block_release {
            GcBlockRelease::Translation => {
                if f.gc_max_victims_per_plane != 0 || f.write_stall_below_free_blocks != 0 {
                    return Err("ftl.gc_max_victims_per_plane and ftl.write_stall_below_free_blocks apply only with ftl.gc_block_release = \"erase_done\"; leave them 0".into());
                }
            }
            GcBlockRelease::EraseDone => {
                if f.gc_trigger != crate::ftl::GcTrigger::FreeBlocks {
                    return Err("ftl.gc_trigger = \"free_pages\" needs ftl.gc_block_release = \"translation\"".into());
                }
                if f.gc_max_victims_per_plane == 0 {
                    return Err("ftl.gc_max_victims_per_plane must be at least 1 with ftl.gc_block_release = \"erase_done\"".into());
                }
                if f.write_stall_below_free_blocks == 0
                    || u64::from(f.write_stall_below_free_blocks) * 2
                        >= u64::from(self.geometry.blocks_per_plane)
                {
                    return Err(format!(
                        "ftl.write_stall_below_free_blocks {} must be at least 1 and below half of geometry.blocks_per_plane ({}) with ftl.gc_block_release = \"erase_done\"",
                        f.write_stall_below_free_blocks, self.geometry.blocks_per_plane
                    ));
                }
                let threshold = ((f64::from(self.geometry.blocks_per_plane)
                    * f.gc_threshold_fraction)
                    .ceil() as u32)
                    .max(f.gc_threshold_min_blocks)
                    .max(1);
                if f.write_stall_below_free_blocks > threshold {
                    return Err(format!(
                        "ftl.write_stall_below_free_blocks {} must not exceed the GC threshold of {threshold} free blocks (writes would wait for garbage collection that never starts)",
                        f.write_stall_below_free_blocks
                    ));
                }
                if matches!(f.allocation, AllocationConfig::Dynamic {}) {
                    return Err("ftl.gc_block_release = \"erase_done\" needs static allocation (a stalled write must know its plane before it is placed)".into());
                }
                if self.device.write_buffer_bytes != 0 {
                    return Err("ftl.gc_block_release = \"erase_done\" is not modelled with a write buffer (device.write_buffer_bytes must be 0)".into());
                }
            }
        }
        if u64::from(f.translation_reserved_blocks_per_plane) * 4
            > u64::from(self.geometry.blocks_per_plane)
        {
            return Err(format!(
                "ftl.translation_reserved_blocks_per_plane {} must be at most a quarter of geometry.blocks_per_plane ({})",
                f.translation_reserved_blocks_per_plane, self.geometry.blocks_per_plane
            ));
        }
        let spare_blocks = self.geometry.blocks_per_plane as f64 * f.overprovisioning_fraction;
        if spare_blocks < 2.0 {
            return Err(format!(
                "ftl.overprovisioning_fraction {} leaves {:.1} spare blocks per plane; garbage collection needs at least 2",
                f.overprovisioning_fraction, spare_blocks
            ));
        }
        for order in [
            Some(&f.host_visible_order),
            match &f.allocation {
                AllocationConfig::Static { order } => Some(order),
                AllocationConfig::Dynamic {} => None,
            },
        ]
        .into_iter()
        .flatten()
        {
            for level in [Level::Channel, Level::Chip, Level::Die, Level::Plane] {
                if !order.contains(&level) {
                    return Err(format!("allocation order {order:?} must name channel, chip, die and plane once each"));
                }
            }
        }
        if self.ftl.stripe_unit_pages == 0 {
            return Err("ftl.stripe_unit_pages must be at least 1".into());
        }
        if self.variation.enabled {
            self.variation.validate()?;
        }
        self.check_inert_keys()?;
        if self.timing.page_program_ns > u32::MAX as u64 {
            // Transactions carry their program time in u32 ns.
            return Err("timing.page_program_ns must be below 2^32 ns (4.29 s)".into());
        }
        let p = &self.precondition;
        if !(0.0..=1.0).contains(&p.fill_fraction) {
            return Err("precondition.fill_fraction must be in [0, 1]".into());
        }
        if self.host.queue_length_requests == 0 {
            return Err("host.queue_length_requests must be at least 1".into());
        }
        if self.device.queue_depth_requests == 0 {
            return Err("device.queue_depth_requests must be at least 1".into());
        }
        let d = &self.device;
        if d.write_buffer_bytes != 0 && d.write_buffer_bytes < u64::from(self.geometry.page_bytes) {
            return Err(format!(
                "device.write_buffer_bytes {} is smaller than one page ({} bytes); use 0 for no buffer",
                d.write_buffer_bytes, self.geometry.page_bytes
            ));
        }
        if let Some(contention) = &d.region_contention {
            contention.validate(self.geometry.page_bytes)?;
        }
        if let Some(runs) = &d.region_runs {
            runs.validate(self.geometry.page_bytes)?;
        }
        if d.write_buffer_bytes / u64::from(self.geometry.page_bytes) > u64::from(u32::MAX) {
            return Err("device.write_buffer_bytes must hold fewer than 2^32 pages".into());
        }
        if !(0.0..=1.0).contains(&d.write_buffer_flush_threshold_fraction) {
            return Err("device.write_buffer_flush_threshold_fraction must be in [0, 1]".into());
        }
        if f.partial_page_writes.reads_first() {
            let mode = match f.partial_page_writes {
                PartialPageWrites::UpdateRead => "update_read",
                _ => "read_modify_write",
            };
            if crate::ftl::PartialPages::new(self.geometry.page_bytes).is_none() {
                return Err(format!(
                    "ftl.partial_page_writes = \"{mode}\" needs geometry.page_bytes to be 1 to 32 sectors of 512 bytes (it is {})",
                    self.geometry.page_bytes
                ));
            }
            if d.write_buffer_bytes != 0 {
                return Err(format!("ftl.partial_page_writes = \"{mode}\" is not modelled with a write buffer (device.write_buffer_bytes)"));
            }
            if f.partial_page_writes == PartialPageWrites::UpdateRead
                && matches!(
                    d.scheduler,
                    crate::device::DeviceSchedulerConfig::Sos { .. }
                )
            {
                return Err("ftl.partial_page_writes = \"update_read\" is not modelled with device.scheduler.kind = \"sos\" (SOS may move or cancel a program that waits for its read)".into());
            }
            if f.partial_page_writes == PartialPageWrites::UpdateRead
                && d.scheduler
                    .ssdsim_switches()
                    .is_some_and(|s| s.program_binding == crate::device::ProgramBinding::AtTransfer)
            {
                return Err("ftl.partial_page_writes = \"update_read\" is not modelled with device.scheduler.program_binding = \"at_transfer\" (a free channel would take a program that waits for its read); SSDsim's own rule is \"read_modify_write\"".into());
            }
        }
        if self.host.scheduler.piq_cycles_with_ssdsim_passes() {
            return Err("host.scheduler.batch_cycles applies to issue_rule = \"batch_lists\"; the ssdsim_passes rule never holds a request".into());
        }
        if let Some(switches) = d.scheduler.ssdsim_switches() {
            let shared_bus = matches!(self.interconnect, InterconnectConfig::SharedBus { .. });
            let erase_done = f.gc_block_release == GcBlockRelease::EraseDone;
            switches.check(shared_bus, d.multiplane, erase_done)?;
        }
        Ok(())
    }

    /// Every duration (`*_ns`) at most [`MAX_DURATION_NS`], every rate (`*_per_ns`) at least
    /// what moves one page in that time, and every rate ratio (`*_ratio`) within
    /// [1 / [`MAX_RATIO`], [`MAX_RATIO`]]: with these, the engine's integer-ns arithmetic
    /// stays exact (no sum of times reaches 2^64, no transfer time saturates). Walks the
    /// serialized config, so a new key is covered by its name.
    fn check_time_bounds(&self) -> Result<(), String> {
        let value = serde_json::to_value(self).map_err(|e| e.to_string())?;
        let min_rate = f64::from(self.geometry.page_bytes) / MAX_PAGE_TRANSFER_NS as f64;
        let mut error = None;
        walk_numbers(&value, &mut String::new(), &mut |key, number| {
            if error.is_some() {
                return;
            }
            let leaf = key.rsplit('.').next().unwrap_or(key);
            if leaf.ends_with("_per_ns") {
                let rate = number.as_f64().unwrap_or(0.0);
                if rate.is_nan() || rate < min_rate {
                    error = Some(format!(
                        "{key} = {rate:e} bytes/ns is below {min_rate:e}: one page of \
                         geometry.page_bytes would take longer than {MAX_PAGE_TRANSFER_NS} \
                         ns ({:.2} s) to transfer",
                        MAX_PAGE_TRANSFER_NS as f64 / 1e9
                    ));
                }
            } else if leaf.ends_with("_ns") {
                if number.as_u64().is_none_or(|ns| ns > MAX_DURATION_NS) {
                    error = Some(format!(
                        "{key} = {number} ns is above the limit of {MAX_DURATION_NS} ns \
                         ({:.2} s) that keeps the simulator's time arithmetic exact",
                        MAX_DURATION_NS as f64 / 1e9
                    ));
                }
            } else if leaf.ends_with("_ratio") {
                let ratio = number.as_f64().unwrap_or(0.0);
                if !(1.0 / MAX_RATIO..=MAX_RATIO).contains(&ratio) {
                    error = Some(format!(
                        "{key} = {ratio} must be within [1/{MAX_RATIO}, {MAX_RATIO}]"
                    ));
                }
            }
        });
        error.map_or(Ok(()), Err)
    }

    /// Keys that would change nothing because the feature they tune is off are errors (a
    /// setting that silently does nothing reads as a result about it). The off switch is
    /// never turned on implicitly: the error says which key turns it on.
    fn check_inert_keys(&self) -> Result<(), String> {
        if !self.variation.enabled {
            let off = crate::ftl::VariationConfig::default();
            if let Some(key) = first_difference(&self.variation, &off) {
                return Err(format!(
                    "variation.{key} is set, but variation.enabled is false, so it would change \
                     nothing; set variation.enabled = true (or leave the key out)"
                ));
            }
            if self.ftl.block_choice == crate::ftl::BlockChoice::FastestForConflicts {
                return Err(
                    "ftl.block_choice = \"fastest_for_conflicts\" needs per-block \
                            program latencies: set variation.enabled = true (without it, it \
                            is the same as \"in_order\")"
                        .into(),
                );
            }
        }
        let d = &self.device;
        if d.write_buffer_bytes == 0 {
            if d.write_buffer_page_ns != default_write_buffer_page_ns() {
                return Err(
                    "device.write_buffer_page_ns is set, but device.write_buffer_bytes \
                            is 0 (no write buffer), so it would change nothing"
                        .into(),
                );
            }
            if d.write_buffer_flush_threshold_fraction
                != default_write_buffer_flush_threshold_fraction()
            {
                return Err("device.write_buffer_flush_threshold_fraction is set, but \
                            device.write_buffer_bytes is 0 (no write buffer), so it would \
                            change nothing"
                    .into());
            }
        }
        Ok(())
    }

    /// The static allocation order (the host-visible order when allocation is dynamic).
    /// The static map of this config (order and stripe unit).
    pub fn static_map(&self) -> StaticMap {
        self.ftl.static_map(&self.geometry)
    }

    pub fn static_order(&self) -> [Level; 4] {
        self.ftl.static_order()
    }
}

/// Longest duration a config key may give (`*_ns`): 2^40 ns, about 18 minutes (host
/// scheduler expiries are seconds; `timing.page_program_ns` has its own, lower bound, 2^32 ns,
/// as transactions carry it in u32). With arrivals bounded at 2^60 ns no sum of times nears
/// 2^64 ns.
pub const MAX_DURATION_NS: u64 = 1 << 40;
/// Longest time one page's transfer may take at a `*_per_ns` rate: 2^32 ns.
pub const MAX_PAGE_TRANSFER_NS: u64 = 1 << 32;
/// Largest factor a `*_ratio` key may scale a rate or time by (and smallest, 1 / this).
pub const MAX_RATIO: f64 = 1024.0;

/// Call `f` with the dotted key and value of every number in `value`.
fn walk_numbers(
    value: &serde_json::Value,
    key: &mut String,
    f: &mut dyn FnMut(&str, &serde_json::Number),
) {
    match value {
        serde_json::Value::Number(n) => f(key, n),
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let len = key.len();
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(k);
                walk_numbers(v, key, f);
                key.truncate(len);
            }
        }
        serde_json::Value::Array(items) => {
            for v in items {
                walk_numbers(v, key, f);
            }
        }
        _ => {}
    }
}

/// The first key (in serialization order) whose value differs between `a` and `b`.
fn first_difference<T: Serialize>(a: &T, b: &T) -> Option<String> {
    let (Ok(toml::Value::Table(a)), Ok(toml::Value::Table(b))) =
        (toml::Value::try_from(a), toml::Value::try_from(b))
    else {
        return None;
    };
    a.iter()
        .find(|(key, value)| b.get(*key) != Some(*value))
        .map(|(key, _)| key.clone())
}

/// The full dotted key a TOML error in `text` is about, from its span: the key on the line it
/// points at (or the missing field it names) under the table header above it.
fn error_key(text: &str, e: &toml::de::Error) -> Option<String> {
    let span = e.span()?;
    let before = text.get(..span.start)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let header = |l: &str| {
        let l = l.trim();
        (l.starts_with('[') && l.ends_with(']'))
            .then(|| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
    };
    let on_header = header(line);
    let section = match &on_header {
        Some(h) => h.clone(),
        None => text[..line_start]
            .lines()
            .rev()
            .find_map(header)
            .unwrap_or_default(),
    };
    let join = |key: &str| {
        if section.is_empty() {
            key.to_string()
        } else {
            format!("{section}.{key}")
        }
    };
    // A tagged table's errors point at its header: the field is in the message.
    let message = e.message();
    if let Some(field) = ["missing field `", "unknown field `"]
        .iter()
        .find_map(|prefix| message.strip_prefix(prefix))
        .and_then(|rest| rest.split('`').next())
    {
        // An unknown table is its own header: `[host.shceduler]` is the key, not
        // `host.shceduler.shceduler`.
        if on_header
            .as_deref()
            .is_some_and(|h| h.rsplit('.').next() == Some(field))
        {
            return Some(section);
        }
        return Some(join(field));
    }
    if on_header.is_some() {
        return Some(section);
    }
    let key = line.split('=').next()?.trim().trim_matches('"');
    (!key.is_empty()).then(|| join(key))
}

/// `message` with, for an unknown field, the expected name it most looks like.
fn with_suggestion(message: &str) -> String {
    format!("{message}{}", suggestion(message))
}

/// For an unknown field, `; did you mean ...?` naming the expected name it most looks like:
/// serde lists them (``unknown field `merg`, expected `merge` `` or ``expected one of `a`,
/// `b` ``); else nothing.
fn suggestion(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return String::new();
    };
    let Some((field, expected)) = rest.split_once('`') else {
        return String::new();
    };
    let names = || expected.split('`').skip(1).step_by(2);
    // A key without its unit (`overprovisioning` for `overprovisioning_fraction`).
    if let Some(name) = names().find(|name| {
        name.len() > field.len() && name.starts_with(field) && name.as_bytes()[field.len()] == b'_'
    }) {
        return format!("; did you mean `{name}` (keys carry their unit)?");
    }
    let best = names().map(|name| (edit_distance(field, name), name)).min();
    match best {
        Some((d, name)) if d > 0 && d <= (field.len().max(name.len()) / 3).max(2) => {
            format!("; did you mean `{name}`?")
        }
        _ => String::new(),
    }
}

/// Levenshtein distance of two short ASCII names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The error for a preset name that is not bundled; a renamed preset says its new name.
/// The TOML text of preset `name`: an error if there is none, or if its file's own `name` is
/// not `name`.
pub fn preset(name: &str) -> Result<&'static str, Error> {
    let text = preset_text(name).ok_or_else(|| unknown_preset(name))?;
    check_preset_name(name, text).map_err(Error::Config)?;
    Ok(text)
}

pub fn unknown_preset(name: &str) -> Error {
    if name == "mqsim-default" {
        return Error::Config(
            "preset `mqsim-default` was renamed `mqsim-ssd` (the same settings: MQSim's SSD on \
             flashlane's own rules); `mqsim-platform` is that SSD with MQSim's rules, validated \
             against MQSim"
                .into(),
        );
    }
    Error::Config(format!(
        "unknown preset `{name}`; known presets: {}",
        preset_names().join(", ")
    ))
}

/// Merge `over` into `base` key by key; a table that sets a different `kind` replaces the
/// base's table whole.
fn merge_over(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o))
                if o.get("kind").is_none() || o.get("kind") == b.get("kind") =>
            {
                merge_over(b, o);
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// The 1-based line of dotted `key` in TOML `text`: its `key = ...` line, an inline table
/// holding it, or its `[section]` header.
fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let mut section = String::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line
                .trim_matches(|c| c == '[' || c == ']')
                .trim()
                .to_string();
            if section == key {
                return Some(i + 1);
            }
            continue;
        }
        let Some((name, _)) = line.split_once('=') else {
            continue;
        };
        let name = name.trim().trim_matches('"');
        let full = if section.is_empty() {
            name.to_string()
        } else {
            format!("{section}.{name}")
        };
        if full == key || key.starts_with(&format!("{full}.")) {
            return Some(i + 1);
        }
    }
    None
}

fn describe(overrides: &[(String, String)]) -> String {
    overrides
        .iter()
        .map(|(k, v)| format!("--set {k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parse `key=value` as given on the command line.
pub fn parse_override(text: &str) -> Result<(String, String), Error> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(Error::Config(format!(
            "--set {text}: expected key=value, e.g. ftl.overprovisioning_fraction=0.2"
        ))),
    }
}

/// Apply `overrides` in order over `table` (see [`apply_override`]). A `kind` that changes a
/// policy table rebuilds it as a partial file would (`merge_over`): from the original table
/// when it names that kind again, else empty (the new kind takes its defaults), then every
/// key of the table set by these overrides, whatever its place in the order. So
/// `--set T.k=v --set T.kind=K` and `--set T.kind=K --set T.k=v` are one config, and a key
/// the new kind does not have is refused by name, as it is alone.
fn apply_overrides(table: &mut toml::Table, overrides: &[(String, String)]) -> Result<(), Error> {
    let original = table.clone();
    for (i, (key, value)) in overrides.iter().enumerate() {
        apply_override(table, key, value)?;
        let Some(section) = key.strip_suffix(".kind") else {
            continue;
        };
        let parsed = override_value(value);
        let before = section_of(&original, section).and_then(|t| t.get("kind"));
        let changed = before != Some(&parsed);
        // A kind set again to the table's kind changes nothing either.
        let now = section_of(table, section)
            .and_then(|t| t.get("kind"))
            .cloned();
        let rebuilt = match section_of(&original, section) {
            Some(t) if !changed => t.clone(),
            _ => toml::Table::new(),
        };
        if let Some(t) = section_of_mut(table, section) {
            *t = rebuilt;
        }
        for (k, v) in &overrides[..=i] {
            if k.len() > section.len() + 1
                && k.starts_with(section)
                && k.as_bytes()[section.len()] == b'.'
                && k != key
            {
                apply_override(table, k, v)?;
            }
        }
        if let (Some(t), Some(kind)) = (section_of_mut(table, section), now) {
            t.insert("kind".into(), kind);
        }
    }
    Ok(())
}

/// The table at dotted `path` in `table`, if it is one.
fn section_of<'a>(table: &'a toml::Table, path: &str) -> Option<&'a toml::Table> {
    path.split('.')
        .try_fold(table, |t, part| t.get(part)?.as_table())
}

fn section_of_mut<'a>(table: &'a mut toml::Table, path: &str) -> Option<&'a mut toml::Table> {
    path.split('.')
        .try_fold(table, |t, part| t.get_mut(part)?.as_table_mut())
}

/// An override's value as TOML reads it, else as a string.
fn override_value(value: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()))
}

/// Set dotted `key` in `table` to `value` (read as a TOML value, else as a string), creating
/// missing sections. A misspelt key is caught when the result is checked against the typed
/// config (unknown keys are refused there, by name).
fn apply_override(table: &mut toml::Table, key: &str, value: &str) -> Result<(), Error> {
    let parsed = override_value(value);
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.trim().is_empty()) {
        return Err(Error::Config(format!(
            "--set {key}={value}: empty part in key `{key}`"
        )));
    }
    let (leaf, sections) = parts.split_last().expect("split always yields one part");
    let mut current = table;
    for (i, part) in sections.iter().enumerate() {
        let entry = current
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        current = match entry {
            toml::Value::Table(t) => t,
            _ => {
                return Err(Error::Config(format!(
                    "--set {key}={value}: `{}` is a value, not a section of the config",
                    parts[..=i].join(".")
                )))
            }
        };
    }
    if let Some(toml::Value::Table(t)) = current.get(*leaf) {
        if !parsed.is_table() {
            let hint = if t.contains_key("kind") {
                format!(": to choose its kind, --set {key}.kind={value}")
            } else {
                String::new()
            };
            return Err(Error::Config(format!(
                "--set {key}={value}: `{key}` is a section of the config, not a value{hint}"
            )));
        }
    }
    current.insert(leaf.to_string(), parsed);
    Ok(())
}
