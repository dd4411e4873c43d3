//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;

use flashlane_core::config::Config;
use flashlane_core::stats::Summary;
use flashlane_core::trace::TraceFormat;
use flashlane_core::RunSpec;

/// (time ns, byte offset, bytes, is_read)
pub type Req = (u64, u64, u64, bool);

/// Write `requests` as an MQSim trace in a fresh temporary file.
pub fn mqsim_trace(name: &str, requests: &[Req]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("flashlane-{}-{name}.mqsim", std::process::id()));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for (t, offset, bytes, read) in requests {
        assert!(offset % 512 == 0 && bytes % 512 == 0);
        writeln!(
            file,
            "{t} 0 {} {} {}",
            offset / 512,
            bytes / 512,
            u8::from(*read)
        )
        .unwrap();
    }
    file.flush().unwrap();
    path
}

pub fn preset(name: &str, overrides: &[(&str, &str)]) -> Config {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_preset(name, &overrides).unwrap()
}

pub fn spec(config: Config, trace: PathBuf) -> RunSpec {
    RunSpec::new(config, trace, Some(TraceFormat::Mqsim))
}

pub fn run(config: Config, name: &str, requests: &[Req]) -> Summary {
    let path = mqsim_trace(name, requests);
    let summary = flashlane_core::run(&spec(config, path.clone())).unwrap();
    let _ = std::fs::remove_file(path);
    summary
}
