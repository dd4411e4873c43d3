//! PASS's platform (docs/models/pass.md): synchronous threads over a Linux elevator with an
//! NCQ device queue.

use flashlane_core::config::Config;
use flashlane_core::run::{Replay, TraceInput};
use flashlane_core::workload::{AddressSpec, ArrivalSpec, SizeSpec, SyntheticSpec};

fn thread_spec(requests: u64, threads: u32) -> SyntheticSpec {
    SyntheticSpec {
        label: "4 synchronous threads, random 4 KiB reads and writes".into(),
        requests,
        read_fraction: 0.5,
        device: 0,
        stream: 0,
        stream_count: threads,
        seed: 3,
        arrival: ArrivalSpec::ClosedLoop {
            queue_depth_requests: threads,
        },
        size: SizeSpec::Fixed { bytes: 4096 },
        address: AddressSpec::Uniform {
            span_bytes: 10 << 30,
            align_bytes: 4096,
        },
        rewrite: None,
    }
}

fn run(scheduler: &str, depth: u32, threads: u32) -> flashlane_core::stats::Summary {
    let overrides = [
        ("host.scheduler.kind".to_string(), scheduler.to_string()),
        ("device.queue_depth_requests".to_string(), depth.to_string()),
    ];
    let config = Config::from_preset("pass-ssd1", &overrides).unwrap();
    let mut spec = flashlane_core::RunSpec::new(config, "unused", None);
    spec.traces = vec![TraceInput::synthetic("threads", thread_spec(400, threads))];
    spec.replay = Replay::ClosedLoop {
        outstanding: threads,
    };
    flashlane_core::run(&spec).unwrap()
}

#[test]
fn with_fewer_threads_than_ncq_slots_no_scheduler_has_a_choice() {
    // 4 threads, device queue 31: at most 4 requests are in the system, so each arriving
    // request finds the elevator empty and a free device slot, and is dispatched at once.
    // Every work-conserving scheduler (noop, deadline, cfq, pass) therefore sends the same
    // requests at the same times: identical latencies and simulated time.
    let noop = run("noop", 31, 4);
    assert_eq!(noop.figures.requests.completed, 400);
    for other in ["deadline", "cfq", "pass"] {
        let s = run(other, 31, 4);
        assert_eq!(s.figures.latency_us, noop.figures.latency_us, "{other}");
        assert_eq!(s.sim_time_ns, noop.sim_time_ns, "{other}");
    }
    // At depth 1 three requests wait in the elevator and the schedulers do choose: deadline
    // sorts by address where noop keeps arrival order, so the latencies differ.
    let noop1 = run("noop", 1, 4);
    let deadline1 = run("deadline", 1, 4);
    assert_ne!(noop1.figures.latency_us, deadline1.figures.latency_us);
}
