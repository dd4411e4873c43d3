#!/usr/bin/env python3
"""Run the same SSD, traces and host schedulers in SSDsim and in flashlane; print Markdown tables.

Usage:
    scripts/ssdsim_validate.py --ssdsim /path/to/SSDsim/ssd [--quick] [--cases fin1,rand]
        [--flashlane target/release/flashlane] [--work-dir DIR] [--reuse] [--out table.md]
        [--write-docs] [--stand-in] [--time-scale X] [--set KEY=VALUE ...]

Without --ssdsim (CI has no SSDsim binary) it prints a skip message and exits 0 without running
anything. SSDsim is kxc181080033/SSDsim at f87ee57 (branch `ds`, the fork with PIQ) built with
gcc -fcommon and the one-line hand-over fix of docs/validation.md ("SSDsim"). The SSD is
flashlane's `ssdsim-platform` preset (`ssdsim-mlc-8x8`'s SSD with SSDsim's platform rules),
mapped key by key onto SSDsim's `page.parameters` (MAPPING below); until that preset exists the
script uses `ssdsim-mlc-8x8` with the stand-in settings of VARIANTS (or always with
--stand-in). Each case's trace is written in SSDsim's ASCII layout (`flashlane gen` for the
synthetic ones, `flashlane trace convert --to ssdsim --rebase-time` for real traces), with every
logical sector number folded as SSDsim folds it (lsn % large_lsn, `get_requests`), and both
simulators replay that one file. Each case runs three variants (VARIANTS): SSDsim's FIFO
distribution, NOOP-D and PIQ, with flashlane's matching settings.

Every figure in the tables, and what it means on each side:
- mean read / write latency (us): flashlane: latency_us.read/.write.mean, arrival (trace time)
  to the completion of the request's last page operation. SSDsim: mean over the requests of
  ex.out of (end time - arrival), i.e. the "average response time including wait time" of
  statistic10.dat (`trace_output`: end = latest complete_time of the request's sub-requests,
  arrival = trace time), computed from ex.out's per-request lines without the integer
  truncation of `statistic_output`. A write sub-request of SSDsim completes when its data
  transfer to the chip ends (`static_write`), not when the program ends.
- requests: flashlane requests.completed; SSDsim the request lines in ex.out (read request
  count + write request count of statistic10.dat).
- flash reads: page reads started on flash for host requests, read-modify-write reads
  included. flashlane flash.reads + flash.read_modify_write_reads. SSDsim `read count` - `the
  read operation leaded by un-covered update count`: `read count` counts every read
  sub-request started (`services_2_r_wait` -> SR_R_C_A_TRANSFER), read-modify-write reads
  included, and once more each read-modify-write read when `allocate_location` creates it,
  which also counts it in the update count. GC page reads are in neither (SSDsim's
  `move_page` counts none; flashlane moves pages by copyback).
- read-modify-write reads: reads of the sectors a partial-page write does not cover but that
  hold data. flashlane flash.read_modify_write_reads (ftl.partial_page_writes =
  "read_modify_write"); SSDsim the update count (created in `allocate_location`).
- programs: page programs on flash, host and GC. flashlane flash.programs + flash.copybacks.
  SSDsim `program count` minus the programs `pre_process_page` counts before the run (one per
  page piece of every read request of the trace, also for pages already mapped; the script
  recomputes them from the trace with the same loop).
- host page programs: page pieces of the completed write requests (SSDsim has no DRAM here:
  one program per write sub-request); flashlane flash.programs.
- GC moves: programs - host page programs (SSDsim); flash.copybacks (flashlane).
- erases: blocks erased; flashlane flash.erases, SSDsim `erase count`.
- WAF: programs / host page programs, on both sides.
A case with a prefill (gc-filled) leaves the prefill's requests out of both sides' figures:
flashlane --warmup-requests, SSDsim's requests arriving before the case's own records; SSDsim's
program count also loses the prefill's programs (its fresh drive collects no garbage while it
fills, so the GC counts are the measured part's).
SSDsim prints its statistics only at the end and divides by the read and write request counts
(`statistic_output`): a trace with no writes (or no reads) stops it with a division by zero
after ex.out's per-request lines are written, so its flash counts are n/a.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PRESETS = REPO / "crates/flashlane-core/presets"
PLATFORM_PRESET = "ssdsim-platform"
STAND_IN_PRESET = "ssdsim-mlc-8x8"
TRACES = REPO / "traces"
SHARED_TRACES = REPO.parent / "shared" / "traces"
DOCS = REPO / "docs/validation.md"
DOCS_BEGIN = "<!-- ssdsim_validate.py --write-docs: begin -->"
DOCS_END = "<!-- ssdsim_validate.py --write-docs: end -->"

# The three ways a request is handed to the SSD, in one place. "ssdsim" is SSDsim's
# `scheduling algorithm` (0 = FCFS "NOOP-D", 1 = PIQ, 4 = its own FIFO distribution
# `no_buffer_distribute_original`); "flashlane" the --set overrides on `ssdsim-platform`;
# "stand_in" the overrides on `ssdsim-mlc-8x8` (plus STAND_IN_COMMON) used before the platform
# keys exist: with them, fifo and noop-d are the same run on flashlane's side (there is no
# stand-in for the all-channels-idle hand-over rule).
VARIANTS = {
    "fifo": {"ssdsim": 4, "flashlane": [], "stand_in": []},
    "noop-d": {
        "ssdsim": 0,
        "flashlane": ["host.handover_needs_idle_channels=true"],
        "stand_in": [],
    },
    "piq": {
        "ssdsim": 1,
        "flashlane": [
            "host.scheduler.kind=piq",
            "host.scheduler.issue_rule=ssdsim_passes",
            "host.handover_per_pass=all",
            "host.handover_needs_idle_channels=true",
        ],
        # The stand-in ran our batch lists (the PIQ default before issue 31): named.
        "stand_in": ["host.scheduler.kind=piq", "host.scheduler.issue_rule=batch_lists"],
    },
}
# Every variant on `ssdsim-platform`: the drive starts as SSDsim starts it (only the sectors
# that the trace reads exist: `pre_process_page`).
PLATFORM_COMMON = ["precondition.fill_fraction=0", "precondition.footprint_requests=reads"]
# Every variant on `ssdsim-mlc-8x8` before the platform keys exist: SSDsim's device order,
# a host queue that counts requests in the device (SSDsim's queue_length), no device cap.
# The footprint (pages read or written by the trace) is written before the run.
STAND_IN_COMMON = [
    "device.scheduler.kind=ssdsim",
    "host.queue_includes_outstanding=true",
    "device.queue_depth_requests=512",
]

# flashlane config key -> SSDsim page.parameters line(s) (docs/validation.md explains each;
# initialize.c: load_parameters reads them).
MAPPING = [
    ("geometry.channels", "channel number; chip number[i] for i < channels (0 after)"),
    ("geometry.chips_per_channel", "chip number[i] (per channel); chip number = total"),
    ("geometry.dies_per_chip", "die number"),
    ("geometry.planes_per_die", "plane number"),
    ("geometry.blocks_per_plane", "block number"),
    ("geometry.pages_per_block", "page number"),
    # SSDsim keeps a page as 512-byte subpages (sectors): subpage page = page / 512
    ("geometry.page_bytes", "page capacity; subpage page = page_bytes / 512"),
    ("timing.page_read_ns", "t_R"),
    ("timing.page_program_ns", "t_PROG"),
    ("timing.block_erase_ns", "t_BERS"),
    # one byte per t_WC (writes to the chip) or t_RC (reads from it), in whole ns
    ("timing.channel_bytes_per_ns", "t_WC = t_RC = 1 / channel_bytes_per_ns"),
    # SSDsim's command/address phase is always 7 x t_WC (flash.c); checked, not written
    ("timing.command_transfer_ns", "(always 7 x t_WC)"),
    ("ftl.overprovisioning_fraction", "overprovide"),
    # SSDsim starts GC when a plane's free pages < gc hard threshold x its pages (get_ppn);
    # `gc threshold` is read but never used. Both lines get the preset's value.
    ("ftl.gc_threshold_fraction", "gc hard threshold (and the unused gc threshold)"),
    # static, channel first, then chip, die, plane: SSDsim's static allocation mode 1
    ("ftl.allocation", "allocation = 1, static_allocation = 1"),
    ("host.queue_length_requests", "queue_length"),
    ("(no write cache)", "dram capacity = 0 (no_buffer_distribute_*)"),
    # SSDsim's request path has no switch for these; ssdsim-platform sets each to SSDsim's rule
    # (docs/models/ssd-model.md, "SSDsim's platform rules")
    ("host.queue_includes_outstanding", "(always: queue_length counts requests in service)"),
    ("device.scheduler", "(always: reads first per chip, whole chip busy; flash.c: process)"),
    ("device.write_completion", "(always: a write completes at its data transfer's end)"),
    ("ftl.partial_page_writes", "(always: read-modify-write; allocate_location)"),
    ("host.handover_at / handover_per_pass", "(always: per loop pass; varies by algorithm)"),
    ("device.scheduler.program_binding", "(always: a program takes its chip at its transfer)"),
    ("device.scheduler.program_order", "(always with allocation 1: lowest idle chip, die 0 first)"),
    ("device.scheduler.gc", "(always with advanced command 0: uninterrupt_gc holds its channel)"),
    ("ftl.gc_trigger", "(always: free pages below gc hard threshold x pages per plane)"),
    ("device.scheduler.read_transfer", "(always: a read moves the sectors its page holds)"),
    ("device.scheduler.merged_read_ns", "(always 1000: creat_sub_request's merged read)"),
    ("host.handover_needs_idle_channels", "(algorithms 0 and 1: no_buffer_distribute_s)"),
    ("device.queue_depth_requests", "(none: every distributed sub-request is queued)"),
    ("(no multi-plane / interleave)", "advanced command = 0"),
    ("precondition (case)", "aged, aged ratio (make_aged)"),
    ("(variant)", "scheduling algorithm"),
]

# The lines of the fork's shipped page.parameters (f87ee57) that no flashlane key maps, with
# their shipped values, in the shipped order ("{...}" lines are written from the preset).
PARAMETER_TEMPLATE = """\
#parameter file (written by flashlane scripts/ssdsim_validate.py)
dram capacity = 0;
{chip_lines}
channel number = {channels};
chip number = {chips};
die number = {dies};
plane number = {planes};
block number = {blocks};
page number = {pages};
subpage page = {subpages};
page capacity = {page_bytes};
subpage capacity = 512;
t_PROG = {t_prog};
t_DBSY = 50;
t_BERS = {t_bers};
t_CLS = 12;
t_CLH = 5;
t_CS = 20;
t_CH = 5;
t_WP = 12;
t_ALS = 12;
t_ALH = 5;
t_DS = 12;
t_DH = 5;
t_WC = {t_wc};
t_WH = 10;
t_ADL = 70;
t_R = {t_r};
t_AR = 10;
t_CLR = 10;
t_RR = 20;
t_RP = 12;
t_WB = 100;
t_RC = {t_rc};
t_REA = 30;
t_CEA = 45;
t_RHZ = 100;
t_CHZ = 30;
t_RHOH = 15;
t_RLOH = 5;
t_COH = 15;
t_REH = 10;
t_IR = 0;
t_RHW = 100;
t_WHR = 60;
t_RST = 5000;
erase limit=100000;
flash operating current=25000.0;
flash supply voltage=3.3;
dram active current=125000;
dram standby current=50000;
dram refresh current=5000;
dram voltage=3.3;
address mapping=1;
wear leveling=1;
gc=1;
overprovide={overprovide};
gc threshold={gc_threshold};
buffer management=0;
scheduling algorithm={algorithm};
gc hard threshold={gc_threshold};
allocation=1;
static_allocation=1;
dynamic_allocation=0;
advanced command=0;
advanced command priority=0;
greed CB command=0;
greed MPW command=1;
aged={aged};
aged ratio={aged_ratio};
queue_length={queue_length};
deadline=200000;
avoid=1;
WL=0;
"""
SHIPPED_CHIP_LINES = 19  # chip number[0] .. chip number[18] in the shipped file
# A prefill (Case.prefill_fraction): sequential writes of this many sectors, one every
# PREFILL_GAP_NS (the drive keeps up), then PREFILL_SETTLE_NS before the case's own records.
PREFILL_SECTORS = 512
PREFILL_GAP_NS = 2_000_000
PREFILL_SETTLE_NS = 1_000_000_000
SECTOR = 512


@dataclass
class Case:
    name: str
    description: str
    # a synthetic spec (TOML text) or a trace file
    spec: str | None = None
    trace: Path | None = None
    convert_options: list[str] = field(default_factory=list)
    # applied to the preset on both sides (geometry of the GC case)
    overrides: dict[str, object] = field(default_factory=dict)
    # SSDsim make_aged: aged ratio (None = not aged)
    aged_ratio: float | None = None
    # flashlane-only settings of the case (its aging)
    flashlane_extra: list[str] = field(default_factory=list)
    # hand-made records (arrival ns, lsn, sectors, is_read), written in SSDsim's layout
    records: list[tuple[int, int, int, bool]] | None = None
    # arrival times multiplied by this in the file both simulators read (10x speed: 0.1)
    time_scale: float = 1.0
    # the trace first writes this share of the logical space (PREFILL_*), then waits; both
    # simulators' figures leave those requests out (set by make_trace)
    prefill_fraction: float | None = None
    warmup_requests: int = 0
    measure_from_ns: int = 0
    prefill_pages: int = 0


def random_spec(
    requests: int, gap_ns: int, read_fraction: float, span_bytes: int, size: int, seed: int = 42
) -> str:
    return f"""label = "random {size} B, {read_fraction:.0%} reads, exponential {gap_ns} ns gaps"
requests = {requests}
read_fraction = {read_fraction}
seed = {seed}

[arrival]
kind = "poisson"
mean_interarrival_ns = {gap_ns}

[size]
kind = "fixed"
bytes = {size}

[address]
kind = "uniform"
span_bytes = {span_bytes}
align_bytes = {size}
"""


def large_writes(count: int = 30) -> list[tuple[int, int, int, bool]]:
    """Isolated writes of 512, 1,024 and 2,048 sectors (more than one page per chip of the
    8 x 8 drive: 2, 4 and 8 pages per chip), 20 ms apart so that each finds the drive idle,
    each with an 8-sector read 10 ms later elsewhere (SSDsim's statistics need reads)."""
    records = []
    for i in range(count):
        t = i * 20_000_000
        size = (512, 1024, 2048)[i % 3]
        records.append((t, i * 4096, size, False))
        records.append((t + 10_000_000, (1 << 22) + i * 64, 8, True))
    return records


def read_behind_write(count: int = 200) -> list[tuple[int, int, int, bool]]:
    """A 256-sector write (one page on each of the 64 chips) and, 30 us later, a read of the
    same 256 sectors (so of the same chips), every 5 ms, each pair on its own region."""
    records = []
    for i in range(count):
        t, lsn = i * 5_000_000, i * 256
        records.append((t, lsn, 256, False))
        records.append((t + 30_000, lsn, 256, True))
    return records


def write_records(records: list[tuple[int, int, int, bool]], out: Path) -> None:
    """Hand-made records in SSDsim's ASCII layout (`time device lsn size ope`, 1 = read)."""
    with out.open("w") as dst:
        for t, lsn, size, read in sorted(records):
            dst.write(f"{t} 0 {lsn} {size} {int(read)}\n")


def scale_times(path: Path, scale: float) -> None:
    """Multiply the arrival times of an SSDsim ASCII trace by `scale` (rounded to whole ns),
    in place: both simulators then replay the faster trace."""
    lines = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 5:
            parts[0] = str(round(int(parts[0]) * scale))
            lines.append(" ".join(parts))
    path.write_text("\n".join(lines) + "\n")


def add_prefill(case: Case, trace: Path, largest: int, subpages: int) -> None:
    """Put the prefill of `case` in front of `trace` (in place) and note where the case's
    own records start: the first `fraction` of the logical sectors written in order, in
    PREFILL_SECTORS requests PREFILL_GAP_NS apart, then the records PREFILL_SETTLE_NS after
    the last of them."""
    fill = int(largest * case.prefill_fraction) // PREFILL_SECTORS * PREFILL_SECTORS
    lines = [
        f"{i * PREFILL_GAP_NS} 0 {lsn} {PREFILL_SECTORS} 0"
        for i, lsn in enumerate(range(0, fill, PREFILL_SECTORS))
    ]
    start = len(lines) * PREFILL_GAP_NS + PREFILL_SETTLE_NS
    for line in trace.read_text().splitlines():
        parts = line.split()
        if len(parts) == 5:
            parts[0] = str(int(parts[0]) + start)
            lines.append(" ".join(parts))
    trace.write_text("\n".join(lines) + "\n")
    case.warmup_requests = fill // PREFILL_SECTORS
    case.measure_from_ns = start
    case.prefill_pages = fill // subpages


def shipped_trace(name: str) -> Path:
    """A trace of the repository's traces/ (the same files as ../shared/traces/)."""
    for folder in (TRACES, SHARED_TRACES):
        if (folder / name).exists():
            return folder / name
    return TRACES / name


PIQ_MAP = REPO / "python/flashlane/reproduce/piq_map.py"
# Three points of the PIQ effect map (`flashlane reproduce piq`, docs/results/piq.md): even
# load and 16 hot chips at 0.4 of the channel bandwidth, where the map finds PIQ's gain over
# NOOP-D, and 1 hot chip at 0.1, its best point against NOOP where the baseline keeps up.
PIQ_MAP_POINTS = ((64, 0.4), (16, 0.4), (1, 0.1))


def piq_map_spec():
    """The PIQ map's own workload builder, `spec_text(hot, load, count, label)`, read from
    python/flashlane/reproduce/piq_map.py: its constants and functions are taken from the
    module's source without importing the package (which needs the built extension)."""
    tree = ast.parse(PIQ_MAP.read_text())
    keep = [
        node
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        or (isinstance(node, ast.FunctionDef) and node.name in ("gap_ns", "spec_text"))
    ]
    names: dict = {}
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(PIQ_MAP), "exec"), names)
    return names["spec_text"], names["REQUESTS"]


def piq_map_cases() -> list[Case]:
    """PIQ_MAP_POINTS as cases: the map's workload on the validation's drive (empty but for
    the pages the trace reads, as every case; the map's drive is full, which at 6,000
    requests of whole pages starts no GC and no read-modify-write)."""
    spec_text, count = piq_map_spec()
    result = []
    for hot, load in PIQ_MAP_POINTS:
        result.append(
            Case(
                f"piq-map-hot{hot}-load{load}",
                f"PIQ map point: {count:,} requests, half reads, 8 or 10 KiB, 90 % of them on "
                f"{hot} of the 64 chips{' (even)' if hot == 64 else ''}, Poisson arrivals at "
                f"{load} of the channel bandwidth (python/flashlane/reproduce/piq_map.py)",
                spec=spec_text(hot, load, count, "PIQ map"),
            )
        )
    return result


def cases(quick: bool) -> list[Case]:
    n = 100_000 if quick else 1_000_000
    gc_n = 250_000 if quick else 500_000
    gc_blocks = 64
    return [
        Case(
            "fin1",
            "financial1-head.ssdsim (UMass Financial1, first 10,000 requests)",
            trace=shipped_trace("financial1-head.ssdsim"),
        ),
        Case(
            "msnfs",
            "msnfs-30s (MSN File Server, 149,999 requests, MSR CSV converted)",
            trace=shipped_trace("msnfs-30s.msr.csv.gz"),
        ),
        Case(
            "tpcc",
            "tpcc-small.mqsim (TPC-C, 6,999 requests)",
            trace=shipped_trace("tpcc-small.mqsim"),
        ),
        Case(
            "websearch",
            "websearch-small.mqsim (UMass WebSearch, 24,783 requests, 4 of them writes)",
            trace=shipped_trace("websearch-small.mqsim"),
        ),
        Case(
            "ycsb",
            "ycsb-a-rocksdb.blkparse.gz (YCSB-A on RocksDB, 1,694 D events, all reads; "
            "converted with --allow-lossy: SSDsim's layout has no stream column)",
            trace=shipped_trace("ycsb-a-rocksdb.blkparse.gz"),
            convert_options=["--allow-lossy"],
        ),
        Case(
            "fin1-10x",
            "financial1-head.ssdsim replayed 10x faster (arrival times x 0.1 in the file both "
            "read, flashlane's --time-scale 0.1): the write-heavy trace under load",
            trace=shipped_trace("financial1-head.ssdsim"),
            time_scale=0.1,
        ),
        Case(
            "fin1-100x",
            "financial1-head.ssdsim replayed 100x faster (arrival times x 0.01): the "
            "write-heavy trace loaded enough to queue",
            trace=shipped_trace("financial1-head.ssdsim"),
            time_scale=0.01,
        ),
        Case(
            "large-writes",
            "30 isolated writes of 512, 1,024 and 2,048 sectors (2 to 8 pages per chip), 20 ms "
            "apart, each with an 8-sector read 10 ms later (hand-made)",
            records=large_writes(),
        ),
        Case(
            "read-behind-write",
            "200 pairs: a 256-sector write (a page on each chip) and 30 us later a read of the "
            "same sectors, every 5 ms (hand-made)",
            records=read_behind_write(),
        ),
        Case(
            "rand",
            f"{n:,} random 4 KiB, 70 % reads, exp. 40 us gaps, 16 GiB span (flashlane gen)",
            spec=random_spec(n, 40_000, 0.7, 16 << 30, 4096),
        ),
        Case(
            "gc-fresh",
            f"{gc_n:,} random 8 KiB, 10 % reads, exp. 300 us gaps, 1.5 GiB span on a 2 GiB-raw "
            "SSD (32 blocks per plane), both empty at start: GC from the trace's own overwrites",
            spec=random_spec(gc_n, 300_000, 0.1, 3 << 29, 8192),
            overrides={"geometry.blocks_per_plane": 32},
        ),
        Case(
            "gc-filled",
            "the gc case's drive (64 blocks per plane) empty at start, 0.7 of its logical space "
            "written in order by the trace (512-sector writes 2 ms apart, not measured), 1 s "
            "later 250,000 random 8 KiB, 10 % reads, exp. 300 us gaps, 3 GiB span: GC on "
            "valid data in both",
            spec=random_spec(250_000, 300_000, 0.1, 3 << 30, 8192),
            overrides={"geometry.blocks_per_plane": gc_blocks},
            prefill_fraction=0.7,
        ),
        Case(
            "gc",
            f"{gc_n:,} random 8 KiB, 10 % reads, exp. 100 us gaps, 3 GiB span on a 4 GiB-raw "
            f"SSD ({gc_blocks} blocks per plane); SSDsim aged=1, aged ratio 0.7; flashlane "
            "filled to 0.7 of its logical space and aged",
            spec=random_spec(gc_n, 100_000, 0.1, 3 << 30, 8192),
            overrides={"geometry.blocks_per_plane": gc_blocks},
            aged_ratio=0.7,
            flashlane_extra=["precondition.fill_fraction=0.7", "precondition.age=true"],
        ),
    ]


def preset_config(preset: str, overrides: dict[str, object]) -> dict:
    config = tomllib.loads((PRESETS / f"{preset}.toml").read_text())
    for key, value in overrides.items():
        section, name = key.split(".", 1)
        config[section][name] = value
    return config


def ssdsim_parameters(
    config: dict, algorithm: int, aged_ratio: float | None = None, where: str = "preset"
) -> str:
    """SSDsim's page.parameters for a flashlane config (MAPPING; docs/validation.md)."""
    g, t, f = config["geometry"], config["timing"], config["ftl"]
    alloc = f.get("allocation", {})
    if alloc.get("kind") != "static" or list(alloc.get("order", [])) != [
        "channel",
        "chip",
        "die",
        "plane",
    ]:
        raise SystemExit(
            f"{where}: ftl.allocation must be static channel, chip, die, plane "
            "(SSDsim static_allocation 1)"
        )
    if g["page_bytes"] % SECTOR:
        raise SystemExit(f"{where}: geometry.page_bytes must be a multiple of 512")
    byte_ns = 1 / float(t["channel_bytes_per_ns"])
    if abs(byte_ns - round(byte_ns)) > 1e-6:
        raise SystemExit(f"{where}: 1 / timing.channel_bytes_per_ns must be whole ns for SSDsim")
    byte_ns = round(byte_ns)
    command = t.get("command_transfer_ns")
    if command is not None and command != 7 * byte_ns:
        raise SystemExit(
            f"{where}: timing.command_transfer_ns {command} is not SSDsim's 7 x t_WC = "
            f"{7 * byte_ns}"
        )
    channels = g["channels"]
    per_channel = g["chips_per_channel"]
    chip_lines = [
        f"chip number[{i}] = {per_channel if i < channels else 0};"
        for i in range(max(SHIPPED_CHIP_LINES, channels))
    ]
    return PARAMETER_TEMPLATE.format(
        chip_lines="\n".join(chip_lines),
        channels=channels,
        chips=channels * per_channel,
        dies=g["dies_per_chip"],
        planes=g["planes_per_die"],
        blocks=g["blocks_per_plane"],
        pages=g["pages_per_block"],
        subpages=g["page_bytes"] // SECTOR,
        page_bytes=g["page_bytes"],
        t_prog=t["page_program_ns"],
        t_bers=t["block_erase_ns"],
        t_r=t["page_read_ns"],
        t_wc=byte_ns,
        t_rc=byte_ns,
        overprovide=f["overprovisioning_fraction"],
        gc_threshold=f["gc_threshold_fraction"],
        algorithm=algorithm,
        aged=0 if aged_ratio is None else 1,
        aged_ratio=0.7 if aged_ratio is None else aged_ratio,
        queue_length=config["host"]["queue_length_requests"],
    )


def parse_parameters(text: str) -> dict[str, str]:
    """page.parameters as load_parameters reads it: `name = value;` lines, '#' lines skipped."""
    values = {}
    for line in text.splitlines():
        if not line or line[0] in "# " or "=" not in line:
            continue
        name, rest = line.split("=", 1)
        values[name.rstrip()] = rest.split(";")[0].split("#")[0].strip()
    return values


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def large_lsn(params: dict[str, str]) -> int:
    """SSDsim's logical sectors (get_requests, pre_process_page): the int product of the
    geometry times (1 - overprovide), evaluated in single precision as C does with its float
    `overprovide`, then truncated."""
    total = 1
    for name in ("subpage page", "page number", "block number", "plane number", "die number"):
        total *= int(params[name])
    total *= int(params["chip number"])
    factor = f32(1.0 - f32(float(params["overprovide"])))
    return int(f32(f32(float(total)) * factor))


def pages_of(lsn: int, size: int, subpages: int, largest: int | None = None) -> int:
    """Page pieces of a request of `size` sectors at `lsn`, split at page boundaries as
    creat_sub_request / pre_process_page split it (pre_process_page folds each piece's lsn
    with `largest`)."""
    pieces, done = 0, 0
    while done < size:
        if largest:
            lsn %= largest
        piece = min(subpages - lsn % subpages, size - done)
        pieces += 1
        lsn += piece
        done += piece
    return pieces


def fold_trace(source: Path, out: Path, largest: int) -> int:
    """Write `source` (SSDsim ASCII) with every lsn folded as get_requests folds it; returns
    the records changed."""
    folded = 0
    with source.open() as src, out.open("w") as dst:
        for line in src:
            parts = line.split()
            if len(parts) != 5:
                continue
            lsn = int(parts[2])
            if lsn >= largest:
                folded += 1
                parts[2] = str(lsn % largest)
            dst.write(" ".join(parts) + "\n")
    return folded


def preprocess_programs(trace: Path, params: dict[str, str]) -> int:
    """Programs pre_process_page counts before the run: one per page piece of every read."""
    subpages = int(params["subpage page"])
    largest = large_lsn(params)
    count = 0
    with trace.open() as src:
        for line in src:
            parts = line.split()
            if len(parts) == 5 and int(parts[4]) == 1:
                count += pages_of(int(parts[2]), int(parts[3]), subpages, largest)
    return count


REQUEST_LINE = re.compile(r"^\s*-?\d+(\s+-?\d+){6,7}\s*$")


def parse_ex_out(text: str, subpages: int, from_ns: int = 0) -> dict:
    """SSDsim's ex.out per-request lines (trace_output): `arrive lsn size ope begin end
    process [wait]`; latency = end - arrive (ns). Requests arriving before `from_ns` (a
    prefill) are left out."""
    lat = {0: [0, 0], 1: [0, 0]}  # ope -> [count, sum ns]
    write_pages = 0
    for line in text.splitlines():
        if not REQUEST_LINE.match(line):
            continue
        cols = [int(c) for c in line.split()]
        arrive, lsn, size, ope, end = cols[0], cols[1], cols[2], cols[3], cols[5]
        if arrive < from_ns:
            continue
        lat[ope][0] += 1
        lat[ope][1] += end - arrive
        if ope == 0:
            write_pages += pages_of(lsn, size, subpages)
    return {
        "reads": lat[1][0],
        "writes": lat[0][0],
        "mean read us": lat[1][1] / lat[1][0] / 1000 if lat[1][0] else None,
        "mean write us": lat[0][1] / lat[0][0] / 1000 if lat[0][0] else None,
        "write pages": write_pages,
    }


def parse_statistic(text: str) -> dict[str, float]:
    """statistic10.dat (statistic_output): `name: value` lines; the first number is kept."""
    values = {}
    for line in text.splitlines():
        if ":" not in line:
            continue
        name, rest = line.split(":", 1)
        words = rest.split()
        if words:
            try:
                values[name.strip()] = float(words[0])
            except ValueError:
                continue
    return values


def ssdsim_summary(
    ex_out: str,
    statistic: str | None,
    params: dict[str, str],
    pre: int,
    from_ns: int = 0,
    prefill_pages: int = 0,
) -> dict:
    """The table's figures from SSDsim's outputs (definitions in the module docstring). With
    a prefill (requests before `from_ns`, `prefill_pages` page programs on the fresh drive,
    which collects no garbage while it fills), its programs are taken off the counts."""
    ex = parse_ex_out(ex_out, int(params["subpage page"]), from_ns)
    stat = parse_statistic(statistic) if statistic else {}
    out = {
        "mean read us": ex["mean read us"],
        "mean write us": ex["mean write us"],
        "requests": ex["reads"] + ex["writes"],
        "flash reads": None,
        "read-modify-write reads": None,
        "programs": None,
        "host page programs": ex["write pages"],
        "GC moves": None,
        "erases": None,
        "WAF": None,
    }
    if "program count" in stat:
        update = stat["the read operation leaded by un-covered update count"]
        programs = stat["program count"] - pre - prefill_pages
        out["flash reads"] = stat["read count"] - update
        out["read-modify-write reads"] = update
        out["programs"] = programs
        out["GC moves"] = programs - ex["write pages"]
        out["erases"] = stat["erase count"]
        out["WAF"] = programs / ex["write pages"] if ex["write pages"] else None
    return out


def flashlane_summary(s: dict) -> dict:
    fl, lat = s["flash"], s["latency_us"]
    programs = fl["programs"] + fl["copybacks"]
    rmw = fl.get("read_modify_write_reads", 0)  # absent when 0
    return {
        "mean read us": lat["read"]["mean"] if lat["read"]["count"] else None,
        "mean write us": lat["write"]["mean"] if lat["write"]["count"] else None,
        "requests": s["requests"]["completed"],
        "flash reads": fl["reads"] + rmw,
        "read-modify-write reads": rmw,
        "programs": programs,
        "host page programs": fl["programs"],
        "GC moves": fl["copybacks"],
        "erases": fl["erases"],
        "WAF": programs / fl["programs"] if fl["programs"] else None,
    }


TIMED_OUT = 1 << 16  # run()'s code for a process stopped after its timeout


def run(
    cmd: list[str],
    log: Path,
    stdin: str | None = None,
    cwd: Path | None = None,
    timeout: float | None = None,
) -> int:
    with log.open("w") as out:
        try:
            done = subprocess.run(
                cmd,
                input=stdin,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                cwd=cwd,
                check=False,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return TIMED_OUT
    return done.returncode


def must(cmd: list[str], log: Path, **kwargs) -> None:
    code = run(cmd, log, **kwargs)
    if code != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({code}); see {log}")


def make_trace(case: Case, flashlane: str, work: Path, params: dict[str, str]) -> tuple[Path, int]:
    """The case's trace in SSDsim's layout with SSDsim's folding; returns it and the records
    folded."""
    raw = work / f"{case.name}.raw.ssdsim"
    if case.records is not None:
        write_records(case.records, raw)
        trace = work / f"{case.name}.ssdsim"
        folded = fold_trace(raw, trace, large_lsn(params))
        raw.unlink()
        return trace, folded
    if case.spec is not None:
        spec = work / f"{case.name}.spec.toml"
        spec.write_text(case.spec)
        mq = work / f"{case.name}.mqsim"
        must([flashlane, "gen", "--spec", str(spec), "--out", str(mq)], work / "gen.log")
        source = mq
    else:
        source = case.trace
    cmd = [flashlane, "trace", "convert", "--to", "ssdsim", "--rebase-time"]
    must(cmd + case.convert_options + [str(source), str(raw)], work / f"{case.name}.convert.log")
    trace = work / f"{case.name}.ssdsim"
    folded = fold_trace(raw, trace, large_lsn(params))
    raw.unlink()
    if case.time_scale != 1.0:
        scale_times(trace, case.time_scale)
    if case.prefill_fraction:
        add_prefill(case, trace, large_lsn(params), int(params["subpage page"]))
    return trace, folded


def nice(cmd: list[str]) -> list[str]:
    return ["nice", "-n", "10", *cmd] if shutil.which("nice") else cmd


def ssdsim_figures(
    case: Case,
    variant: str,
    ssdsim: str,
    trace: Path,
    work: Path,
    params_text: str,
    reuse: bool,
    timeout: float,
) -> tuple[dict, float | None, str]:
    params = parse_parameters(params_text)
    run_dir = work / f"{case.name}.ssdsim.{variant}"
    run_dir.mkdir(exist_ok=True)
    ex_out, stat_file = run_dir / "ex.out", run_dir / "statistic10.dat"
    wall, note = None, ""
    if not (reuse and ex_out.exists()):
        for stale in (ex_out, stat_file):
            stale.unlink(missing_ok=True)
        (run_dir / "page.parameters").write_text(params_text)
        link = run_dir / "trace"  # SSDsim keeps the name in a char[30]
        link.unlink(missing_ok=True)
        link.symlink_to(trace)
        started = time.monotonic()
        log = run_dir / "ssdsim.log"
        code = run(nice([ssdsim]), log, stdin="trace\n", cwd=run_dir, timeout=timeout)
        wall = time.monotonic() - started
        # main returns 1 after a complete run; a signal (negative code) is a crash. Some of
        # SSDsim's error paths spin for ever (`while(1){}` in get_ppn_for_gc and others).
        if code == TIMED_OUT:
            note = f"SSDsim stopped after {timeout:.0f} s without finishing (see {log})"
        elif code == -8:
            note = (
                "SSDsim stopped by SIGFPE in statistic_output, which divides by the read and "
                "by the write request count (this trace lacks one kind): its flash counts are n/a"
            )
        elif code < 0:
            note = f"SSDsim stopped by signal {-code} (see {log})"
    if not ex_out.exists():
        raise SystemExit(f"SSDsim wrote no {ex_out}; see {run_dir / 'ssdsim.log'}")
    statistic = stat_file.read_text(errors="replace") if stat_file.exists() else None
    if statistic is not None and "program count" not in statistic:
        statistic = None
    if statistic is None and not note:
        note = "SSDsim wrote no statistics"
    pre = preprocess_programs(trace, params)
    figures = ssdsim_summary(
        ex_out.read_text(errors="replace"),
        statistic,
        params,
        pre,
        case.measure_from_ns,
        case.prefill_pages,
    )
    return figures, wall, note


def flashlane_figures(
    case: Case,
    variant: str,
    flashlane: str,
    preset: str,
    settings: list[str],
    trace: Path,
    work: Path,
) -> tuple[dict, float, dict]:
    out = work / f"{case.name}.flashlane.{variant}.json"
    cmd = [flashlane, "run", "--preset", preset, "--trace", str(trace), "--format", "ssdsim"]
    cmd += ["--fold-addresses", "--json", str(out)]
    if case.warmup_requests:
        cmd += ["--warmup-requests", str(case.warmup_requests)]
    for key, value in case.overrides.items():
        cmd += ["--set", f"{key}={value}"]
    for setting in settings:
        cmd += ["--set", setting]
    started = time.monotonic()
    must(nice(cmd), work / f"{case.name}.flashlane.{variant}.log")
    wall = time.monotonic() - started
    s = json.loads(out.read_text())
    return flashlane_summary(s), wall, s


def flashlane_settings(case: Case, variant: str, stand_in: bool, extra: list[str]) -> list[str]:
    v = VARIANTS[variant]
    common, own = (STAND_IN_COMMON, "stand_in") if stand_in else (PLATFORM_COMMON, "flashlane")
    settings = common + v[own]
    return settings + case.flashlane_extra + extra


def fmt(value: float | None, key: str = "") -> str:
    if value is None:
        return "n/a"
    if key == "WAF":
        return f"{value:.3f}"
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:.2f}"


def ratio(a: float | None, b: float | None) -> str:
    """b / a, or n/a."""
    if a is None or b is None or a == 0:
        return "n/a"
    return f"{b / a:.2f}"


def table(
    case: Case,
    results: dict[str, tuple[dict, dict]],
    notes: list[str],
    preset: str,
    settings: dict[str, list[str]],
) -> str:
    """One case: every figure per variant (SSDsim, flashlane, flashlane / SSDsim), then the
    PIQ / NOOP-D and PIQ / FIFO ratios of both simulators side by side."""
    lines = [f"### {case.name}: {case.description}", ""]
    for variant, sets in settings.items():
        shown = " ".join(f"`{s}`" for s in sets) or "(none)"
        lines.append(
            f"- {variant}: SSDsim `scheduling algorithm={VARIANTS[variant]['ssdsim']}`;"
            f" flashlane `--preset {preset}` {shown}"
        )
    lines += [f"- {note}" for note in notes]
    lines.append("")
    variants = list(results)
    head = "| figure |" + "".join(f" SSDsim {v} | flashlane {v} | ratio |" for v in variants)
    lines += [head, "|---|" + "---:|---:|---:|" * len(variants)]
    for key in next(iter(results.values()))[0]:
        row = f"| {key} |"
        for v in variants:
            theirs, ours = results[v]
            row += f" {fmt(theirs[key], key)} | {fmt(ours[key], key)} |"
            row += f" {ratio(theirs[key], ours[key])} |"
        lines.append(row)
    if {"piq", "noop-d", "fifo"} <= set(results):
        lines += [
            "",
            "| PIQ over | SSDsim PIQ / NOOP-D | flashlane PIQ / NOOP-D "
            "| SSDsim PIQ / FIFO | flashlane PIQ / FIFO |",
            "|---|---:|---:|---:|---:|",
        ]
        for key in ("mean read us", "mean write us"):
            row = f"| {key} |"
            for base in ("noop-d", "fifo"):
                for side in (0, 1):
                    row += f" {ratio(results[base][side][key], results['piq'][side][key])} |"
            lines.append(row)
    return "\n".join(lines) + "\n"


def docs_command(argv: list[str]) -> str:
    """The command line as the docs show it: no local paths, no work-dir, output or reuse
    options."""
    shown, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--work-dir", "--out", "--ssdsim", "--flashlane"):
            skip = "=" not in arg
            if name == "--ssdsim":
                shown.append("--ssdsim ../SSDsim/ssd")
            continue
        if arg not in ("--reuse", "--write-docs"):
            shown.append(arg)
    return " ".join(["python3 scripts/ssdsim_validate.py", *shown])


def write_docs(report: str, command: str) -> None:
    """Replace the generated part of docs/validation.md's SSDsim section (between DOCS_BEGIN
    and DOCS_END), or append a new section with it."""
    text = DOCS.read_text()
    done = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    commit = done.stdout.strip() or "unknown"
    block = (
        f"{DOCS_BEGIN}\n\nGenerated by `{command}` (flashlane at `{commit}`, SSDsim "
        f"`f87ee57` with the hand-over fix).\n\n{report}\n{DOCS_END}"
    )
    if DOCS_BEGIN in text and DOCS_END in text:
        before, rest = text.split(DOCS_BEGIN, 1)
        after = rest.split(DOCS_END, 1)[1]
        text = before + block + after
    else:
        text = text.rstrip("\n") + "\n\n## SSDsim\n\n" + block + "\n"
    DOCS.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ssdsim", help="path to a built SSDsim `ssd` binary (see the docs)")
    parser.add_argument(
        "--flashlane",
        default=str(REPO / "target/release/flashlane"),
        help="flashlane binary (default: target/release/flashlane)",
    )
    parser.add_argument("--quick", action="store_true", help="100 k-request synthetic cases")
    names = ",".join(c.name for c in cases(True))
    parser.add_argument("--cases", help=f"comma-separated subset of {names}")
    parser.add_argument(
        "--variants", help=f"comma-separated subset of {','.join(VARIANTS)} (default: all)"
    )
    parser.add_argument("--work-dir", help="keep traces, parameter files and results here")
    parser.add_argument("--out", help="also write the Markdown tables to this file")
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="put the tables into the SSDsim section of docs/validation.md",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="take SSDsim's results already in --work-dir instead of running it again",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=3600,
        help="seconds after which an SSDsim run is stopped (default 3600)",
    )
    parser.add_argument(
        "--piq-map-points",
        action="store_true",
        help="also run three points of the PIQ effect map (PIQ_MAP_POINTS; names "
        "piq-map-hot*-load*, which --cases also takes)",
    )
    parser.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        help="multiply every case's arrival times by this in the file both simulators read "
        "(0.1 = ten times faster; flashlane's --time-scale); the cases are renamed NAME-xSCALE",
    )
    parser.add_argument(
        "--stand-in",
        action="store_true",
        help=f"use {STAND_IN_PRESET} with the stand-in settings even if {PLATFORM_PRESET} exists",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra flashlane override for every case and variant (flashlane side only); "
        "repeatable",
    )
    args = parser.parse_args()
    for setting in args.set:
        if "=" not in setting:
            raise SystemExit(f"ssdsim_validate: --set {setting!r}: expected KEY=VALUE")

    if not args.ssdsim:
        print(
            "ssdsim_validate: skipped: no SSDsim binary given (--ssdsim PATH); fetch, fix and "
            "build kxc181080033/SSDsim as docs/validation.md (SSDsim) says and pass its `ssd`",
            file=sys.stderr,
        )
        return 0
    ssdsim = shutil.which(args.ssdsim) or args.ssdsim
    if not Path(ssdsim).is_file():
        raise SystemExit(f"ssdsim_validate: --ssdsim {args.ssdsim}: no such file")
    ssdsim = str(Path(ssdsim).resolve())
    flashlane = shutil.which(args.flashlane) or args.flashlane
    if not Path(flashlane).is_file():
        raise SystemExit(
            f"ssdsim_validate: --flashlane {args.flashlane}: no such file "
            "(cargo build --release -p flashlane-cli)"
        )
    stand_in = args.stand_in or not (PRESETS / f"{PLATFORM_PRESET}.toml").exists()
    preset = STAND_IN_PRESET if stand_in else PLATFORM_PRESET
    selected = cases(args.quick)
    map_cases = piq_map_cases()
    if args.piq_map_points:
        selected += map_cases
    if args.cases:
        selected += [c for c in map_cases if c.name in args.cases.split(",") and c not in selected]
        wanted = args.cases.split(",")
        unknown = set(wanted) - {c.name for c in selected}
        if unknown:
            raise SystemExit(f"ssdsim_validate: unknown case(s) {', '.join(sorted(unknown))}")
        selected = [c for c in selected if c.name in wanted]
    if not args.time_scale > 0:
        raise SystemExit("ssdsim_validate: --time-scale must be a positive number")
    if args.time_scale != 1.0:
        for case in selected:
            case.name = f"{case.name}-x{args.time_scale:g}"
            case.description += f"; arrival times x {args.time_scale:g}"
            case.time_scale *= args.time_scale
    variants = args.variants.split(",") if args.variants else list(VARIANTS)
    if set(variants) - set(VARIANTS):
        raise SystemExit(f"ssdsim_validate: variants are {', '.join(VARIANTS)}")
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="ssdsim-validate-")).resolve()
    work.mkdir(parents=True, exist_ok=True)

    report = []
    if stand_in:
        report.append(
            f"flashlane side: stand-in settings on `{STAND_IN_PRESET}` "
            f"(`{PLATFORM_PRESET}` not used).\n"
        )
        print(report[-1], flush=True)
    for case in selected:
        print(f"ssdsim_validate: {case.name} ...", file=sys.stderr, flush=True)
        config = preset_config(preset, case.overrides)
        params_for = {
            v: ssdsim_parameters(config, VARIANTS[v]["ssdsim"], case.aged_ratio, preset)
            for v in variants
        }
        trace, folded = make_trace(case, flashlane, work, parse_parameters(params_for[variants[0]]))
        notes = []
        if folded:
            notes.append(f"{folded:,} records folded into SSDsim's logical space (lsn % large_lsn)")
        results, settings = {}, {}
        for variant in variants:
            settings[variant] = flashlane_settings(case, variant, stand_in, args.set)
            theirs, swall, note = ssdsim_figures(
                case, variant, ssdsim, trace, work, params_for[variant], args.reuse, args.timeout
            )
            ours, fwall, _ = flashlane_figures(
                case, variant, flashlane, preset, settings[variant], trace, work
            )
            if note:
                notes.append(f"{variant}: {note}")
            results[variant] = (theirs, ours)
            took = f"SSDsim {swall:.1f} s, " if swall is not None else ""
            print(f"  {variant}: {took}flashlane {fwall:.1f} s", file=sys.stderr, flush=True)
        report.append(table(case, results, notes, preset, settings))
        print(report[-1], flush=True)
    text = "\n".join(report)
    if args.out:
        Path(args.out).write_text(text)
    if args.write_docs:
        write_docs(text, docs_command(sys.argv[1:]))
    print(f"ssdsim_validate: work files in {work}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("LC_ALL", "C")
    sys.exit(main())
