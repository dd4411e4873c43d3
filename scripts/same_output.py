#!/usr/bin/env python3
"""Same output from two flashlane binaries: runs a fixed list of simulations (every preset, CMT
on and off, GC-heavy, Venice, PASS, mixes, closed loop, warm-up, write buffer, full drives, an
aged one, a failing run) with both and reports any difference in their `run --json` output
(minus the machine-dependent `engine` and `precondition.wall_s`, and the config's name texts)
or, for runs that fail, in their exit code and error. The check behind "output byte-identical"
in refactors and speed rounds (docs/performance.md).

    python3 scripts/same_output.py OLD_BINARY NEW_BINARY [--only=SUBSTRING] [--ignore=KEY]

--ignore=KEY leaves a top-level summary key out (a statistic added on purpose). Exit status 1
when any run differs.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
T = REPO / "traces"
RUNS = {
    "mqsim-ssd tpcc": ["--preset", "mqsim-ssd", "--trace", f"{T}/tpcc-small.mqsim"],
    "mqsim-ssd tpcc no-cmt": [
        "--preset",
        "mqsim-ssd",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--set",
        "ftl.mapping_cache_bytes=0",
    ],
    "mqsim-ssd msnfs fold": [
        "--preset",
        "mqsim-ssd",
        "--trace",
        f"{T}/msnfs-30s.msr.csv.gz",
        "--fold-addresses",
        "--max-requests",
        "60000",
    ],
    "mqsim-ssd ycsb blkparse": [
        "--preset",
        "mqsim-ssd",
        "--trace",
        f"{T}/ycsb-a-rocksdb.blkparse.gz",
        "--fold-addresses",
        "--max-requests",
        "60000",
    ],
    "mqsim-platform tpcc": ["--preset", "mqsim-platform", "--trace", f"{T}/tpcc-small.mqsim"],
    "ssdsim websearch": [
        "--preset",
        "ssdsim-mlc-8x8",
        "--trace",
        f"{T}/websearch-small.mqsim",
        "--remap-addresses",
    ],
    "ssdsim fin1": ["--preset", "ssdsim-mlc-8x8", "--trace", f"{T}/financial1-head.ssdsim"],
    "ssdsim msnfs disksim": [
        "--preset",
        "ssdsim-mlc-8x8",
        "--trace",
        f"{T}/msnfs-30s.disksim.gz",
        "--fold-addresses",
        "--max-requests",
        "60000",
    ],
    "ssdsim-platform piq passes": [
        "--preset",
        "ssdsim-platform",
        "--trace",
        f"{T}/financial1-head.ssdsim",
        "--set",
        "host.scheduler.kind=piq",
        "--set",
        "host.scheduler.issue_rule=ssdsim_passes",
        "--set",
        "host.handover_per_pass=all",
    ],
    "ssdsim-platform fifo msnfs": [
        "--preset",
        "ssdsim-platform",
        "--trace",
        f"{T}/msnfs-30s.disksim.gz",
        "--fold-addresses",
        "--max-requests",
        "30000",
    ],
    # The batch lists by name (the PIQ default until issue 31), and the default.
    "ssdsim piq batch": [
        "--preset",
        "ssdsim-mlc-8x8",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--remap-addresses",
        "--set",
        "host.scheduler.kind=piq",
        "--set",
        "host.scheduler.issue_rule=batch_lists",
    ],
    "ssdsim piq default": [
        "--preset",
        "ssdsim-mlc-8x8",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--remap-addresses",
        "--set",
        "host.scheduler.kind=piq",
    ],
    "ssdsim vios": [
        "--preset",
        "ssdsim-mlc-8x8",
        "--trace",
        f"{T}/financial1-head.ssdsim",
        "--set",
        "host.scheduler.kind=vios",
        "--set",
        "variation.enabled=true",
    ],
    "sos gc-heavy aged": [
        "--preset",
        "sos-4x4",
        "--trace",
        f"{T}/financial1-head.spc",
        "--set",
        "precondition.fill_fraction=0.9",
        "--set",
        "precondition.age=true",
    ],
    "sos sos-scheduler": [
        "--preset",
        "sos-4x4",
        "--trace",
        f"{T}/financial1-head.spc",
        "--set",
        "device.scheduler.kind=sos",
        "--time-scale",
        "0.01",
    ],
    "venice-perf closed 1024": [
        "--preset",
        "venice-perf",
        "--trace",
        f"{T}/websearch-small.mqsim",
        "--remap-addresses",
        "--closed-loop",
        "1024",
    ],
    "venice-cost": [
        "--preset",
        "venice-cost",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--remap-addresses",
    ],
    "venice-perf pssd": [
        "--preset",
        "venice-perf",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--remap-addresses",
        "--set",
        "interconnect.kind=packetized",
        "--afap",
    ],
    "pass-ssd1 pass": [
        "--preset",
        "pass-ssd1",
        "--trace",
        f"{T}/msnfs-30s.msr.csv.gz",
        "--fold-addresses",
        "--max-requests",
        "30000",
        "--set",
        "host.scheduler.kind=pass",
    ],
    "pass-msr cfq": [
        "--preset",
        "pass-msr-60gb",
        "--trace",
        f"{T}/msnfs-30s.msr.csv.gz",
        "--fold-addresses",
        "--max-requests",
        "30000",
        "--set",
        "host.scheduler.kind=cfq",
    ],
    "mix two traces": [
        "--preset",
        "mqsim-ssd",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--trace",
        f"{T}/websearch-small.mqsim",
    ],
    "profile mixed with trace": [
        "--preset",
        "mqsim-ssd",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--profile",
        "src1_0",
        "--max-requests",
        "40000",
    ],
    "closed loop 32": [
        "--preset",
        "mqsim-ssd",
        "--trace",
        f"{T}/websearch-small.mqsim",
        "--closed-loop",
        "32",
    ],
    "warmup + max": [
        "--preset",
        "mqsim-ssd",
        "--trace",
        f"{T}/websearch-small.mqsim",
        "--warmup-requests",
        "5000",
        "--max-requests",
        "20000",
    ],
    "write buffer": [
        "--preset",
        "mqsim-ssd",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--set",
        "device.write_buffer_bytes=16777216",
    ],
    "deadline + integrity": [
        "--preset",
        "mqsim-ssd",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--set",
        "host.scheduler.kind=deadline",
        "--check-integrity",
    ],
    # Full drives (issue 29): the preset's fill 1.0 written as a formula, with the integrity
    # check; an aged drive on top of a fill; a fill under a cached mapping table.
    "ssdsim-platform full integrity": [
        "--preset",
        "ssdsim-platform",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--fold-addresses",
        "--max-requests",
        "3000",
        "--check-integrity",
    ],
    "venice-perf 0.9 aged": [
        "--preset",
        "venice-perf",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--remap-addresses",
        "--max-requests",
        "1000",
        "--set",
        "precondition.fill_fraction=0.9",
        "--set",
        "precondition.age=true",
    ],
    "mqsim-ssd half full cmt": [
        "--preset",
        "mqsim-ssd",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--max-requests",
        "3000",
        "--set",
        "precondition.fill_fraction=0.5",
    ],
    "failing: past capacity": ["--preset", "sos-4x4", "--trace", f"{T}/msnfs-30s.msr.csv.gz"],
    "failing: bad key": [
        "--preset",
        "mqsim-ssd",
        "--trace",
        f"{T}/tpcc-small.mqsim",
        "--set",
        "ftl.no_such_key=1",
    ],
}


IGNORE = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--ignore=")]


def strip(summary):
    summary.pop("engine", None)
    for key in IGNORE:
        summary.pop(key, None)
    config = summary.get("config")
    if isinstance(config, dict):
        for key in ("name", "description", "source"):
            config.pop(key, None)
    pre = summary.get("precondition")
    if isinstance(pre, dict):
        pre.pop("wall_s", None)
    return summary


OLD_NAMES = {}


def knows_old_names(binary):
    """A binary from before 2026-11-25 calls mqsim-ssd mqsim-default."""
    if binary not in OLD_NAMES:
        listing = subprocess.run([binary, "presets"], capture_output=True, text=True).stdout
        OLD_NAMES[binary] = "mqsim-ssd" not in listing
    return OLD_NAMES[binary]


def run(binary, args, tmp):
    if knows_old_names(binary):
        args = [a.replace("mqsim-ssd", "mqsim-default") for a in args]
    out = Path(tmp) / "out.json"
    out.unlink(missing_ok=True)
    p = subprocess.run(
        [binary, "run", *args, "--json", str(out)], capture_output=True, text=True, cwd=REPO
    )
    if p.returncode != 0:
        # The preset's old name in an old binary's error is the same preset.
        return ("failed", p.returncode, p.stderr.replace("mqsim-default", "mqsim-ssd"))
    return ("ok", strip(json.loads(out.read_text())))


def main():
    old, new = sys.argv[1], sys.argv[2]
    only = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")), None)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in RUNS.items():
            if only and only not in name:
                continue
            a, b = run(old, args, tmp), run(new, args, tmp)
            same = a == b
            bad += not same
            print(f"{'same' if same else 'DIFFERENT'}  {name}  ({a[0]})", flush=True)
            if not same and a[0] == "ok" and b[0] == "ok":
                for k in sorted(set(a[1]) | set(b[1])):
                    if a[1].get(k) != b[1].get(k):
                        print(f"    differs: {k}")
            elif not same:
                for side, result in (("old", a), ("new", b)):
                    error = result[2][-300:] if result[0] == "failed" else ""
                    print(f"    {side}: {result[:2]} {error}")
    print(f"{len(RUNS) if not only else 'selected'} runs, {bad} different")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
