//! SOS device scheduler in the whole simulation: integrity through moves, cancels and GC;
//! every request completes exactly once.

use crate::common::{mqsim_trace, random_requests, run, sos_small_drive as small_drive, spec};
use proptest::prelude::*;

fn switches(qsl: bool, whm: bool) -> [(&'static str, &'static str); 2] {
    let b = |x: bool| if x { "true" } else { "false" };
    [
        ("device.scheduler.queue_size_leveller", b(qsl)),
        ("device.scheduler.write_hit_manager", b(whm)),
    ]
}

#[test]
fn moved_and_cancelled_writes_never_leave_a_stale_read() {
    let mut extra = vec![("precondition.fill_fraction", "0.9")];
    extra.extend_from_slice(&switches(true, true));
    let config = small_drive(&extra);
    let capacity = (2 * 2 * 2 * 32 * 16) as f64 * 4096.0 * 0.8;
    let requests = random_requests(11, 15_000, (capacity * 0.9) as u64, 0.4, 2_000_000);
    let path = mqsim_trace("sos-integrity", &requests);
    let mut spec = spec(config, path.clone());
    spec.check_integrity = true;
    let s = flashlane_core::run(&spec).unwrap();
    std::fs::remove_file(path).unwrap();
    assert_eq!(s.figures.requests.completed, 15_000);
    assert!(s.gc.runs > 100, "GC ran only {} times", s.gc.runs);
    assert!(s.device.moved_writes > 50, "{:?}", s.device);
    assert!(s.device.write_hits > 10, "{:?}", s.device);
    assert_eq!(s.integrity_violations, Some(0));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Every request completes exactly once with any SOS switches; every host page is either
    /// read, programmed or cancelled by a write hit.
    #[test]
    fn every_request_completes_exactly_once(
        seed in 0u64..1000,
        n in 1usize..300,
        device_depth in 1u32..40,
        span_pages in 8u64..1024,
        gap_ns in 1u64..400_000,
        qsl in any::<bool>(),
        whm in any::<bool>(),
        dynamic in any::<bool>(),
    ) {
        let requests = random_requests(seed, n, span_pages * 4096 + 4 * 4096, 0.4, gap_ns);
        let device_depth = device_depth.to_string();
        let mut extra = vec![
            ("device.queue_depth_requests", device_depth.as_str()),
            ("precondition.fill_fraction", "0.5"),
        ];
        extra.extend_from_slice(&switches(qsl, whm));
        if dynamic { extra.push(("ftl.allocation.kind", "dynamic")); }
        let s = run(small_drive(&extra), &format!("sos-prop-{seed}-{n}"), &requests);
        let reads = requests.iter().filter(|r| r.3).count() as u64;
        prop_assert_eq!(s.figures.requests.completed, n as u64);
        prop_assert_eq!(s.figures.requests.reads, reads);
        prop_assert_eq!(s.figures.latency_us.all.count, n as u64);
        prop_assert_eq!(s.flash.reads + s.flash.programs + s.device.write_hits,
            requests.iter().map(|r| r.2 / 4096).sum::<u64>());
        if !qsl { prop_assert_eq!(s.device.moved_writes, 0); }
        if !whm { prop_assert_eq!(s.device.write_hits, 0); }
    }
}
