//! The integration tests of the flashlane command, one test binary: each file of this folder is a
//! module of it (`autotests = false` in Cargo.toml). One binary compiles and links the crate's
//! dependencies into a test once, where one binary per file did it 4 times.
//! One file's tests: `cargo test -p flashlane-cli --test integration FILE::`.

mod cli;
mod io;
mod outputs;
mod precondition_cache;
mod real;
