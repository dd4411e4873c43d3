//! Fingerprint of the simulator's own source for the precondition cache's key
//! (run/precondition_cache.rs): a snapshot holds what preconditioning produced, which a change
//! to the FTL or to a dependency's random streams would change, so a snapshot is reused only
//! by a build of the same source (this crate's `src/` and `Cargo.toml`, and the workspace's
//! `Cargo.lock`, which pins every dependency's version).

use std::path::{Path, PathBuf};

/// FNV-1a, 64 bits: a stable hash that needs no dependency.
fn fnv1a(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut files = Vec::new();
    files_under(&root.join("src"), &mut files);
    files.push(root.join("Cargo.toml"));
    let lock = root.join("../../Cargo.lock");
    if lock.is_file() {
        files.push(lock.clone());
        println!("cargo:rerun-if-changed={}", lock.display());
    }
    // Sorted by their path under the crate, so the order does not depend on the file system.
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|p| {
            let name = p
                .strip_prefix(&root)
                .unwrap_or(&p)
                .to_string_lossy()
                .replace('\\', "/");
            (name, p)
        })
        .collect();
    named.sort();
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for (name, path) in &named {
        fnv1a(&mut hash, name.as_bytes());
        fnv1a(&mut hash, &std::fs::read(path).unwrap_or_default());
    }
    println!("cargo:rustc-env=FLASHLANE_CORE_SOURCE_HASH={hash:016x}");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
}
