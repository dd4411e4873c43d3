//! Contract tests for every host scheduler against a tiny fake device: random requests
//! arrive, `pop` runs while device slots are free, requests complete after random delays and
//! time jumps to `wake_at_ns` when nothing else is pending.

use std::collections::BTreeMap;

use flashlane_core::geometry::{ChipSet, Geometry, Level, StaticMap};
use flashlane_core::host::{
    AnyHostScheduler, DeadlineConfig, HostRequest, HostScheduler, HostSchedulerConfig, HostView,
    NoopConfig, PassConfig, Piq, RequestId,
};
use flashlane_core::trace::Op;
use proptest::prelude::*;

fn geometry() -> Geometry {
    Geometry {
        channels: 4,
        chips_per_channel: 2,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 16,
        pages_per_block: 8,
        page_bytes: 4096,
    }
}

/// One generated request: (gap to previous arrival ns, is read, first page, pages, stream).
type Spec = (u64, bool, u64, u32, u32);

/// What the harness lets a test observe around each `pop`.
pub struct PopEvent<'a> {
    pub sched: &'a AnyHostScheduler,
    pub now_ns: u64,
    pub out: &'a [RequestId],
    pub outstanding_per_chip: &'a [u32],
    /// Requests waiting in the scheduler just before this pop.
    pub waiting: &'a BTreeMap<RequestId, HostRequest>,
}

struct Device {
    per_chip: Vec<u32>,
    outstanding: u32,
    slots: u32,
}

/// Runs the fake device; `before` sees the scheduler before each pop, `after` the result.
fn run(
    sched: &mut AnyHostScheduler,
    specs: &[Spec],
    seed: u64,
    queue_length: usize,
    slots: u32,
    mut before: impl FnMut(&AnyHostScheduler),
    mut after: impl FnMut(&PopEvent) -> Result<(), String>,
) -> Result<(), String> {
    let g = geometry();
    let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
    let mut rng = seed | 1;
    let mut next_rand = move |bound: u64| {
        // xorshift: deterministic delays without pulling a generator into the test.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % bound
    };
    let mut t = 0u64;
    let requests: Vec<HostRequest> = specs
        .iter()
        .enumerate()
        .map(|(i, &(gap, read, lpn, pages, stream))| {
            t += gap;
            HostRequest {
                id: i as RequestId,
                seq: i as u64,
                arrival_ns: t,
                op: if read { Op::Read } else { Op::Write },
                offset_bytes: lpn * 4096,
                size_bytes: pages as u64 * 4096,
                first_lpn: lpn,
                pages,
                stream,
                chips: map.chips_of_range(lpn, pages as u64),
            }
        })
        .collect();
    let mut dev = Device {
        per_chip: vec![0; g.chips() as usize],
        outstanding: 0,
        slots,
    };
    let mut next_arrival = 0usize;
    let mut waiting: BTreeMap<RequestId, HostRequest> = BTreeMap::new();
    let mut dispatched = vec![false; requests.len()];
    // completion time -> commands (each a list of merged requests)
    let mut inflight: BTreeMap<(u64, u64), Vec<HostRequest>> = BTreeMap::new();
    let mut command_no = 0u64;
    let mut now = 0u64;
    let mut out = Vec::new();
    for _ in 0..1_000_000 {
        // Completions due now.
        while let Some((&(done, n), _)) = inflight.first_key_value() {
            if done > now {
                break;
            }
            let cmd = inflight.remove(&(done, n)).unwrap_or_default();
            dev.outstanding -= 1;
            for r in &cmd {
                for c in r.chips.iter() {
                    dev.per_chip[c as usize] -= 1;
                }
            }
            for r in &cmd {
                let view = view(now, &g, &map, &dev);
                sched.complete(r, &view);
            }
        }
        // Arrivals due now, while the host queue has room.
        while next_arrival < requests.len()
            && requests[next_arrival].arrival_ns <= now
            && sched.len() < queue_length
        {
            let r = requests[next_arrival];
            waiting.insert(r.id, r);
            sched.push(r, &view(now, &g, &map, &dev));
            next_arrival += 1;
            if sched.len() != waiting.len() {
                return Err(format!("len {} != waiting {}", sched.len(), waiting.len()));
            }
        }
        // Dispatch while slots are free.
        while dev.outstanding < dev.slots {
            out.clear();
            before(sched);
            sched.pop(&view(now, &g, &map, &dev), &mut out);
            if out.is_empty() {
                break;
            }
            after(&PopEvent {
                sched,
                now_ns: now,
                out: &out,
                outstanding_per_chip: &dev.per_chip,
                waiting: &waiting,
            })?;
            let mut cmd = Vec::new();
            for id in &out {
                let Some(r) = waiting.remove(id) else {
                    return Err(format!("id {id} dispatched but not waiting"));
                };
                if std::mem::replace(&mut dispatched[*id as usize], true) {
                    return Err(format!("id {id} dispatched twice"));
                }
                cmd.push(r);
            }
            check_merge(&cmd)?;
            for r in &cmd {
                for c in r.chips.iter() {
                    dev.per_chip[c as usize] += 1;
                }
            }
            dev.outstanding += 1;
            let done = now + 20_000 + next_rand(500_000);
            inflight.insert((done, command_no), cmd);
            command_no += 1;
            if sched.len() != waiting.len() {
                return Err(format!("len {} != waiting {}", sched.len(), waiting.len()));
            }
        }
        // Next event.
        let mut next = u64::MAX;
        if let Some((&(done, _), _)) = inflight.first_key_value() {
            next = next.min(done);
        }
        if next_arrival < requests.len() && sched.len() < queue_length {
            next = next.min(requests[next_arrival].arrival_ns.max(now));
        }
        if let Some(w) = sched.wake_at_ns() {
            if w > now {
                next = next.min(w);
            }
        }
        if next == u64::MAX {
            if next_arrival == requests.len() && waiting.is_empty() && inflight.is_empty() {
                return if dispatched.iter().all(|d| *d) {
                    Ok(())
                } else {
                    Err("finished with undispatched requests".into())
                };
            }
            return Err(format!(
                "stuck at {now} ns: {} waiting, {} in flight, no timer",
                waiting.len(),
                inflight.len()
            ));
        }
        now = next;
    }
    Err("did not finish".into())
}

fn view<'a>(now: u64, g: &'a Geometry, map: &'a StaticMap, dev: &'a Device) -> HostView<'a> {
    HostView {
        now_ns: now,
        geometry: g,
        static_map: map,
        outstanding_per_chip: &dev.per_chip,
        outstanding: dev.outstanding,
        device_free_slots: dev.slots - dev.outstanding,
    }
}

/// A merged command: one direction, and contiguous once sorted by offset.
fn check_merge(cmd: &[HostRequest]) -> Result<(), String> {
    let mut parts: Vec<_> = cmd
        .iter()
        .map(|r| (r.offset_bytes, r.size_bytes, r.op == Op::Read))
        .collect();
    parts.sort();
    for w in parts.windows(2) {
        if w[0].2 != w[1].2 || w[0].0 + w[0].1 != w[1].0 {
            return Err(format!("bad merge {parts:?}"));
        }
    }
    Ok(())
}

/// PIQ's batch lists inside any of the four PIQ kinds.
fn batch_lists(s: &AnyHostScheduler) -> Option<&Piq> {
    match s {
        AnyHostScheduler::Rws(p)
        | AnyHostScheduler::PiqR(p)
        | AnyHostScheduler::PiqW(p)
        | AnyHostScheduler::Piq(p) => p.lists(),
        _ => None,
    }
}

fn configs() -> Vec<HostSchedulerConfig> {
    let mut all = HostSchedulerConfig::all_defaults();
    let extra = [
        r#"{"kind":"noop","merge":true}"#,
        r#"{"kind":"deadline","read_expire_ns":300000,"write_expire_ns":900000,"fifo_batch_requests":1,"writes_starved_batches":0,"front_merges":false}"#,
        r#"{"kind":"cfq","slice_sync_ns":50000,"slice_async_ns":20000}"#,
        r#"{"kind":"anticipatory","antic_expire_ns":100000,"read_expire_ns":200000,"write_expire_ns":400000}"#,
        // The batch lists (a named option; the PIQ kinds' default is ssdsim_passes).
        r#"{"kind":"rws","issue_rule":"batch_lists"}"#,
        r#"{"kind":"piq_r","issue_rule":"batch_lists"}"#,
        r#"{"kind":"piq_w","issue_rule":"batch_lists"}"#,
        r#"{"kind":"piq","issue_rule":"batch_lists"}"#,
        r#"{"kind":"piq","issue_rule":"batch_lists","batch_cycles":true}"#,
        r#"{"kind":"rws","write_starvation_guard":false,"issue_rule":"batch_lists"}"#,
        r#"{"kind":"piq","write_starvation_guard":false,"hold_outstanding_conflicts":false,"issue_rule":"batch_lists"}"#,
        r#"{"kind":"piq_r","hold_outstanding_conflicts":false,"issue_rule":"batch_lists"}"#,
        r#"{"kind":"vios","write_starvation_guard":false}"#,
        r#"{"kind":"pass","region_bytes":65536,"batch_threshold_requests":2,"read_expire_ns":300000,"write_expire_ns":600000,"merge":false}"#,
        r#"{"kind":"pass","region_bytes":32768,"batch_threshold_requests":4}"#,
    ];
    for e in extra {
        all.push(serde_json::from_str(e).expect("config parses"));
    }
    all
}

fn specs() -> impl Strategy<Value = Vec<Spec>> {
    prop::collection::vec(
        (0u64..200_000, any::<bool>(), 0u64..256, 1u32..6, 0u32..4),
        1..100,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// No request lost or duplicated; every request is eventually dispatched; merges valid.
    #[test]
    fn every_scheduler_keeps_the_contract(
        specs in specs(), seed in any::<u64>(), queue_length in 1usize..65, slots in 1u32..17,
    ) {
        for cfg in configs() {
            let mut sched = cfg.build();
            let result = run(&mut sched, &specs, seed, queue_length, slots, |_| {}, |_| Ok(()));
            prop_assert!(result.is_ok(), "{}: {:?} ({cfg:?})", cfg.name(), result);
            let report = sched.report();
            prop_assert!(report.reads_prioritized <= report.reads_dispatched);
        }
    }

    /// PIQ's batch lists (`issue_rule = "batch_lists"`, a named option since the default is
    /// the SSDsim fork's passes): members of one issued batch never share a chip; a batched
    /// request never goes out onto a busy chip; no write goes out while read batches wait
    /// unless the guard forced it.
    #[test]
    fn piq_batches_are_conflict_free(
        specs in specs(), seed in any::<u64>(), queue_length in 1usize..65, slots in 1u32..17,
        kind in prop::sample::select(vec!["piq", "piq_r", "piq_w", "rws"]),
        guard in any::<bool>(),
    ) {
        let cfg: HostSchedulerConfig = serde_json::from_str(&format!(
            r#"{{"kind":"{kind}","write_starvation_guard":{guard},"issue_rule":"batch_lists"}}"#
        )).unwrap();
        let batched_reads = kind == "piq" || kind == "piq_r";
        let batched_writes = kind == "piq" || kind == "piq_w";
        let mut sched = cfg.build();
        let read_batches_before = std::cell::Cell::new(0);
        let mut issued: BTreeMap<u64, ChipSet> = BTreeMap::new();
        let result = run(
            &mut sched, &specs, seed, queue_length, slots,
            |s| {
                if let Some(p) = batch_lists(s) {
                    read_batches_before.set(p.waiting_batches(Op::Read));
                }
            },
            |e| {
                let p = batch_lists(e.sched).ok_or("not piq's batch lists")?;
                let d = p.last_dispatch().ok_or("no dispatch record")?;
                let batched = if d.op == Op::Read { batched_reads } else { batched_writes };
                if batched {
                    let set = issued.entry(d.batch_id).or_default();
                    if set.intersects(&d.chips) {
                        return Err(format!("batch {} issued two requests on one chip", d.batch_id));
                    }
                    set.union_with(&d.chips);
                    if d.chips.iter().any(|c| e.outstanding_per_chip[c as usize] > 0) {
                        return Err("batched request issued onto a busy chip".into());
                    }
                }
                if d.op == Op::Write && read_batches_before.get() > 0 && !d.guarded {
                    return Err("write issued while read batches waited, no guard".into());
                }
                if d.guarded && !guard {
                    return Err("guard fired while disabled".into());
                }
                Ok(())
            },
        );
        prop_assert!(result.is_ok(), "{kind}: {:?}", result);
    }

    /// Deadline (fifo_batch 1, so every pop re-picks) and PASS: an expired request goes first.
    #[test]
    fn expired_request_goes_first(
        specs in specs(), seed in any::<u64>(), queue_length in 1usize..65, slots in 1u32..5,
        pass in any::<bool>(),
    ) {
        let cfg: HostSchedulerConfig = serde_json::from_str(if pass {
            r#"{"kind":"pass","region_bytes":65536,"batch_threshold_requests":4,"read_expire_ns":300000,"write_expire_ns":600000}"#
        } else {
            r#"{"kind":"deadline","read_expire_ns":300000,"write_expire_ns":600000,"fifo_batch_requests":1}"#
        }).unwrap();
        let expire = |op: Op| if op == Op::Read { 300_000 } else { 600_000 };
        let mut sched = cfg.build();
        let result = run(&mut sched, &specs, seed, queue_length, slots, |_| {}, |e| {
            let oldest = |op: Op| e.waiting.values().filter(|r| r.op == op).min_by_key(|r| r.seq);
            let expired = |r: &&HostRequest| r.arrival_ns + expire(r.op) <= e.now_ns;
            let first = e.waiting.get(&e.out[0]).ok_or("unknown id")?;
            let must = if pass {
                // Reads are checked before writes.
                oldest(Op::Read).filter(expired).or_else(|| oldest(Op::Write).filter(expired))
            } else {
                oldest(first.op).filter(expired)
            };
            match must {
                Some(m) if m.id != first.id => Err(format!(
                    "expired request {} waited while {} went at {} ns", m.id, first.id, e.now_ns
                )),
                _ => Ok(()),
            }
        });
        prop_assert!(result.is_ok(), "{}: {:?}", cfg.name(), result);
    }
}

#[test]
fn every_kind_parses_with_defaults_and_rejects_unknown_fields() {
    let all = HostSchedulerConfig::all_defaults();
    let names: std::collections::BTreeSet<_> = all.iter().map(|c| c.name()).collect();
    assert_eq!(
        names.len(),
        HostSchedulerConfig::NAMES.len(),
        "a kind name twice"
    );
    for cfg in all {
        let text = serde_json::to_string(&cfg).unwrap();
        let back: HostSchedulerConfig = serde_json::from_str(&text).unwrap();
        assert_eq!(back, cfg);
        let bad = format!(r#"{{"kind":"{}","bogus_ns":1}}"#, cfg.name());
        assert!(serde_json::from_str::<HostSchedulerConfig>(&bad).is_err());
    }
    let toml_cfg: HostSchedulerConfig =
        toml::from_str("kind = \"deadline\"\nread_expire_ns = 1000").unwrap();
    assert_eq!(toml_cfg.name(), "deadline");
}

/// The harness really runs: a fixed busy workload reaches every scheduler and exercises the
/// deadline, merge, batch and anticipation paths.
#[test]
fn fixed_workload_exercises_the_interesting_paths() {
    let specs: Vec<Spec> = (0..400u64)
        .map(|i| {
            let lpn = (i * 37) % 200;
            (
                i % 3 * 10_000,
                i % 3 != 0,
                lpn,
                1 + (i % 4) as u32,
                (i % 3) as u32,
            )
        })
        .chain((0..40u64).map(|i| (1_000, true, 500 + i, 1, 7)))
        .collect();
    let reads = specs.iter().filter(|s| s.1).count() as u64;
    for cfg in configs() {
        let mut sched = cfg.build();
        run(&mut sched, &specs, 42, 64, 4, |_| {}, |_| Ok(())).unwrap();
        let r = sched.report();
        assert_eq!(r.reads_dispatched, reads, "{cfg:?}");
        match cfg.name() {
            "piq" | "piq_r" | "piq_w" | "vios" | "pass" => assert!(r.batches > 0, "{cfg:?}"),
            "anticipatory" => assert!(r.anticipation_hits > 0, "{r:?}"),
            "cfq" => assert!(r.slices > 0),
            _ => {}
        }
        if let HostSchedulerConfig::Noop(NoopConfig { merge: true }) = cfg {
            assert!(r.merges > 0, "{r:?}");
        }
        if let HostSchedulerConfig::Deadline(DeadlineConfig { read_expire_ns, .. }) = cfg {
            if read_expire_ns < 1_000_000 {
                assert!(r.expired_dispatches > 0, "{r:?}");
            }
        }
        if let HostSchedulerConfig::Pass(PassConfig { read_expire_ns, .. }) = cfg {
            if read_expire_ns < 1_000_000 {
                assert!(r.expired_dispatches > 0, "{r:?}");
            }
        }
    }
}
