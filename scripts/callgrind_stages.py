#!/usr/bin/env python3
"""Where a request's instructions go: the per-stage table of docs/performance.md from callgrind
output files. Each function's own (exclusive) instructions are given to the stage of the event
flow its code belongs to (set-up by the function it runs in, whatever file it was inlined from;
the others by its source file under crates/, else by its symbol), divided by the requests
simulated.

    python3 scripts/callgrind_stages.py REQUESTS CALLGRIND_OUT [CALLGRIND_OUT ...]

Needs `callgrind_annotate` (valgrind) on PATH.
"""

import collections
import re
import subprocess
import sys

RULES = [
    (
        "trace reading and replay",
        [
            "trace/",
            "run/input",
            "run/spill",
            "replay/",
            "::trace::",
            "::run::input",
            "::run::spill",
            "::replay::",
        ],
    ),
    (
        "set-up and preconditioning",
        ["precondition", "Simulation::new", "Ftl::new", "ftl/snapshot", "MappingCache::new"],
    ),
    (
        "admission: host queue, host scheduler",
        ["sim/admission", "/host/", "::host::", "sim::admission"],
    ),
    ("dispatch: HIL, FTL, mapping cache", ["sim/dispatch", "/ftl/", "::ftl::", "sim::dispatch"]),
    (
        "flash: device queues, paths, dies",
        ["sim/flash", "/device/", "/interconnect/", "::device::", "::interconnect::", "sim::flash"],
    ),
    ("completion", ["sim/completion", "sim::completion"]),
    ("statistics (recorder)", ["/stats/", "::stats::", "hdrhistogram"]),
    ("event loop and event queue", ["engine/", "binary_heap", "sim/mod.rs", "Simulation::run"]),
]


# Code run while the drive is set up belongs to set-up whichever file it was inlined from
# (the FTL's write path inside preconditioning is not the dispatch stage's).
SET_UP_SYMBOLS = ["::precondition::", "Simulation::new", "Ftl::new", "MappingCache::new"]


def stage(file: str, symbol: str) -> str:
    if any(k in symbol for k in SET_UP_SYMBOLS):
        return "set-up and preconditioning"
    # Our own source files: callgrind_annotate prints them relative to the working directory
    # when run inside the repository, absolute elsewhere.
    own = file.startswith("crates/flashlane-") or "/crates/flashlane-" in file
    for name, keys in RULES:
        if own and any(k in file for k in keys if "/" in k):
            return name
    for name, keys in RULES:
        if any(k in symbol for k in keys if "::" in k or k[0].isupper()):
            return name
    for name, keys in RULES:
        if any(k in symbol or k in file for k in keys):
            return name
    return "other (allocator, libc, CLI, output)"


def stages(path):
    out = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", path],
        capture_output=True,
        text=True,
    ).stdout
    total = None
    groups = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        rest = m.group(2)
        if "PROGRAM TOTALS" in rest:
            total = n
            continue
        file, _, symbol = rest.partition(":")
        groups[stage(file, symbol)] += n
    return total, groups


if len(sys.argv) < 3:
    sys.exit(__doc__)
requests = int(sys.argv[1])
res = [stages(p) for p in sys.argv[2:]]
keys = [name for name, _ in RULES] + ["other (allocator, libc, CLI, output)"]
print("| stage | " + " | ".join(sys.argv[2:]) + " |")
print("|---|" + "---:|" * len(res))
for k in keys:
    print(
        f"| {k} | "
        + " | ".join(
            f"{g.get(k, 0) / requests:,.0f} ({g.get(k, 0) / t * 100:.1f} %)" for t, g in res
        )
        + " |"
    )
print("| all | " + " | ".join(f"{t / requests:,.0f}" for t, _ in res) + " |")
