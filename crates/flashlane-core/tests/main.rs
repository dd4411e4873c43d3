//! The integration tests of flashlane-core, one test binary: each file of this folder is a
//! module of it (`autotests = false` in Cargo.toml). One binary compiles and links the crate's
//! dependencies into a test once, where one binary per file did it 32 times.
//! One file's tests: `cargo test -p flashlane-core --test integration FILE::`.

mod bounds;
mod cmt;
mod combined_platform;
mod common;
mod config_keys;
mod config_overrides;
mod energy;
mod host_contract;
mod host_papers;
mod interconnects;
mod kind_behaviour;
mod kind_lists;
mod memory;
mod mqsim_data_path;
mod mqsim_platform;
mod mqsim_start_state;
mod multiplane;
mod pass_platform;
mod piq_ssdsim;
mod precondition_cache;
mod preset_list;
mod progress;
mod region_contention;
mod region_runs;
mod run_inputs;
mod sim_closed_form;
mod sim_correctness;
mod sos_scheduler;
mod sos_standins;
mod ssdsim_rules;
mod trace_layouts;
mod trace_readers;
mod trace_tools;
mod variation;
mod warnings;
mod workload_conditions;
mod workload_generator;
mod workload_profiles;
mod workload_spec;
mod write_buffer;
