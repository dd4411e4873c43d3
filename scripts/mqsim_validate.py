#!/usr/bin/env python3
"""Run the same SSD, trace and settings in MQSim and in flashlane, and print a Markdown table.

Usage:
    scripts/mqsim_validate.py --mqsim /path/to/MQSim [--quick] [--cases rand20,tpcc]
        [--flashlane target/release/flashlane] [--work-dir DIR] [--out table.md] [--reuse]
        [--write-docs] [--set KEY=VALUE ...]

Without --mqsim (CI has no MQSim binary) it prints a skip message and exits 0 without running
anything. The SSD is flashlane's `mqsim-platform` preset (`mqsim-ssd`'s SSD with MQSim's
scheduling, die and GC rules and its empty start), mapped key by key onto MQSim's
`ssdconfig.xml` (see MAPPING below and docs/validation.md); each case's trace is written in
MQSim's ASCII layout (`flashlane gen` for the synthetic ones, `flashlane trace convert` for
real traces), and MQSim's workload XML replays it once, open loop, with its data cache off.

Every figure in the table, and what it means on each side:
- mean read / write / all latency (us): flashlane: arrival in the host queue to completion;
  MQSim: End_to_End_Request_Delay (arrival in the trace to completion, whole microseconds,
  truncated). MQSim's XML has only the mean over all requests (IO_Flow_Base::
  Report_results_in_XML), so its read and write means are n/a unless the binary carries the
  local measurement patch of docs/validation.md, which also writes
  End_to_End_Request_Delay_Read_ns / _Write_ns (from MQSim's own STAT_sum_request_delay_read
  / _write).
- p99 read / write (us): flashlane's histogram; MQSim: nearest rank over the per-request
  delays that the patched binary writes to $MQSIM_REQUEST_LOG (n/a without the patch).
- IOPS: flashlane: completed requests / simulated time from first arrival to last completion;
  MQSim: IOPS of the flow (generated requests / simulated time since 0 at the end of the run,
  truncated to whole seconds by MQSim's integer division).
- flash reads / programs / erases: pages read / programmed and blocks erased on flash (user,
  GC and mapping together). flashlane: flash.reads + flash.read_modify_write_reads (MQSim's
  update reads) + flash.copybacks (GC moves: their read half) + flash.mapping_reads, and
  likewise programs; MQSim: transactions dequeued from its TSU
  queues (User/GC/Mapping_Read_TR_Queue, ..._Write_TR_Queue, GC_Erase_TR_Queue), i.e. served.
- mapping reads / programs: translation-page reads and programs served (flashlane
  flash.mapping_reads / mapping_programs; MQSim Mapping_*_TR_Queue dequeued); "mapping
  programs submitted" is MQSim's Mapping_Write_TR_Queue enqueued count (its
  Issued_Flash_Program_CMD_For_Mapping), which differs where MQSim never serves them, and
  flashlane's cmt.writebacks (translation-page write-backs submitted).
- WAF: flash programs (user + GC + mapping) / host page programs, the same formula on both
  sides. The denominator is flashlane's host page programs (MQSim's User_Write_TR_Queue
  count is shown beside it as "host page programs").
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PRESET_NAME = "mqsim-platform"
PRESET = REPO / f"crates/flashlane-core/presets/{PRESET_NAME}.toml"

# flashlane config key -> MQSim ssdconfig.xml element (docs/validation.md explains each).
MAPPING = [
    ("geometry.channels", "Flash_Channel_Count"),
    ("geometry.chips_per_channel", "Chip_No_Per_Channel"),
    ("geometry.dies_per_chip", "Die_No_Per_Chip"),
    ("geometry.planes_per_die", "Plane_No_Per_Die"),
    ("geometry.blocks_per_plane", "Block_No_Per_Plane"),
    ("geometry.pages_per_block", "Page_No_Per_Block"),
    ("geometry.page_bytes", "Page_Capacity"),
    ("timing.page_read_ns", "Page_Read_Latency_LSB/CSB/MSB"),
    ("timing.page_program_ns", "Page_Program_Latency_LSB/CSB/MSB"),
    ("timing.block_erase_ns", "Block_Erase_Latency"),
    ("timing.channel_bytes_per_ns", "Channel_Transfer_Rate (MT/s) x Flash_Channel_Width"),
    ("ftl.overprovisioning_fraction", "Overprovisioning_Ratio"),
    ("ftl.gc_threshold_fraction", "GC_Exec_Threshold"),
    # MQSim's threshold floor is the constant max_ongoing_gc_reqs_per_plane = 10.
    ("ftl.gc_threshold_min_blocks", "(always 10)"),
    ("ftl.allocation", "Plane_Allocation_Scheme"),
    ("ftl.mapping_cache_bytes", "CMT_Capacity / Ideal_Mapping_Table"),
    ("host.queue_length_requests", "IO_Queue_Depth"),
    ("device.queue_depth_requests", "Queue_Fetch_Size"),
    ("device.scheduler", "Transaction_Scheduling_Policy"),
    # MQSim has no switch for these: it always issues to a chip only when the whole chip is
    # idle, one die's command at a time (TSU_Base::issue_command_to_chip), and always forms
    # multi-plane commands of one die's queued transactions at one page index.
    ("device.die_issue", "(always whole_chip_idle)"),
    ("device.multiplane", "(always on)"),
    ("host.link", "PCIe_Lane_Count, PCIe_Lane_Bandwidth"),
    ("ftl.gc_page_move", "Use_Copyback_for_GC"),
    # MQSim has no switch for these either: update reads before partial-page programs
    # (allocate_page_in_plane_for_user_write), read data first on the channel
    # (NVM_PHY_ONFI_NVDDR2), and translation-page write-backs never served (no TSU serves
    # MappingWriteTRQueue).
    ("ftl.partial_page_writes", "(always update_read)"),
    ("interconnect.arbitration", "(always data_out_first)"),
    ("ftl.mapping_writebacks", "(always never_programmed)"),
]

ORDER_LETTER = {"channel": "C", "chip": "W", "die": "D", "plane": "P"}
# read_first is MQSim's OUT_OF_ORDER order; out_of_order (one FIFO per chip) maps onto it
# only loosely (docs/validation.md, "Read against write latency").
SCHEDULER = {"read_first": "OUT_OF_ORDER", "out_of_order": "OUT_OF_ORDER", "fifo": "FIFO"}


@dataclass
class Case:
    name: str
    description: str
    # a synthetic spec (TOML text) or a trace in the repository
    spec: str | None = None
    trace: str | None = None
    overrides: dict[str, object] = field(default_factory=dict)
    # a real trace replayed this many times faster (its times divided by it)
    speedup: int = 1


def random_spec(
    requests: int,
    gap_ns: int,
    read_fraction: float,
    span_bytes: int,
    size: int,
    align: int | None = None,
):
    return f"""label = "random {size} B, {read_fraction:.0%} reads, exponential {gap_ns} ns gaps"
requests = {requests}
read_fraction = {read_fraction}
seed = 42

[arrival]
kind = "poisson"
mean_interarrival_ns = {gap_ns}

[size]
kind = "fixed"
bytes = {size}

[address]
kind = "uniform"
span_bytes = {span_bytes}
align_bytes = {align or size}
"""


# The gc cases' drive: 64 blocks x 64 pages per plane (4 GiB raw), whole map in DRAM unless the
# case turns the mapping cache back on.
GC_GEOMETRY = {"geometry.blocks_per_plane": 64, "geometry.pages_per_block": 64}
# Its logical space: 128 planes x 64 x 64 pages of 8 KiB, less 7 % overprovisioning, in whole
# 16 KiB units (what MQSim's Total_logical_pages_no comes to, rounded down).
GC_LOGICAL_BYTES = int(128 * 64 * 64 * 8192 * (1 - 0.07)) // 16384 * 16384


def cases(quick: bool) -> list[Case]:
    n = 100_000 if quick else 1_000_000
    gc_n = 200_000 if quick else 800_000
    gc16_n = 200_000 if quick else 600_000
    span = 64 << 30
    return [
        Case(
            "rand20",
            f"{n:,} random 4 KiB, 70 % reads, exp. 20 us gaps, 64 GiB span",
            spec=random_spec(n, 20_000, 0.7, span, 4096),
        ),
        Case(
            "rand20-ideal",
            "as rand20, whole mapping table in DRAM (MQSim Ideal_Mapping_Table)",
            spec=random_spec(n, 20_000, 0.7, span, 4096),
            overrides={"ftl.mapping_cache_bytes": 0},
        ),
        Case(
            "rand10",
            f"{n:,} random 4 KiB, 70 % reads, exp. 10 us gaps, 64 GiB span",
            spec=random_spec(n, 10_000, 0.7, span, 4096),
        ),
        Case("tpcc", "traces/tpcc-small.mqsim", trace="traces/tpcc-small.mqsim"),
        Case("websearch", "traces/websearch-small.mqsim", trace="traces/websearch-small.mqsim"),
        Case(
            "msnfs",
            "traces/msnfs-30s.msr.csv.gz (MSN File Server, 150 k requests, 87 % reads up to 1 MiB)",
            trace="traces/msnfs-30s.msr.csv.gz",
        ),
        Case(
            "msnfs-10x",
            "traces/msnfs-30s.msr.csv.gz replayed 10x faster",
            trace="traces/msnfs-30s.msr.csv.gz",
            speedup=10,
        ),
        Case(
            "fin1",
            "traces/financial1-head.spc (UMass Financial1, 10 k requests, 59 % writes, "
            "512 B-aligned, 0.5-48 KiB)",
            trace="traces/financial1-head.spc",
        ),
        Case(
            "fin1-10x",
            "traces/financial1-head.spc replayed 10x faster",
            trace="traces/financial1-head.spc",
            speedup=10,
        ),
        Case(
            "fin1-1000x",
            "traces/financial1-head.spc replayed 1000x faster",
            trace="traces/financial1-head.spc",
            speedup=1000,
        ),
        Case(
            "unaligned",
            f"{n // 5:,} random 4 KiB at 512 B alignment, 50 % reads, exp. 50 us gaps, "
            "256 MiB span (partial-page writes over pages that hold data)",
            spec=random_spec(n // 5, 50_000, 0.5, 256 << 20, 4096, align=512),
        ),
        Case(
            "rand128k",
            f"{n // 20:,} random 128 KiB, 50 % reads, exp. 1 ms gaps, 64 GiB span",
            spec=random_spec(n // 20, 1_000_000, 0.5, span, 128 << 10),
        ),
        Case(
            "rand2m",
            f"{n // 200:,} random 2 MiB, 50 % reads, exp. 10 ms gaps, 64 GiB span",
            spec=random_spec(n // 200, 10_000_000, 0.5, span, 2 << 20),
        ),
        Case(
            "gc",
            f"{gc_n:,} random 8 KiB writes, exp. 50 us gaps, 3 GiB span on a 4 GiB-raw SSD "
            "(64 blocks x 64 pages per plane), empty at start, whole mapping table in DRAM "
            "(MQSim aborts in GC with its CMT on: Cached_Mapping_Table::Retrieve_ppa assertion)",
            spec=random_spec(gc_n, 50_000, 0.0, 3 << 30, 8192),
            overrides={**GC_GEOMETRY, "ftl.mapping_cache_bytes": 0},
        ),
        *(
            Case(
                f"gc16-{pct}{'-cmt' if cmt else ''}",
                f"{gc16_n:,} random 16 KiB writes, exp. 300 us gaps, over {pct} % of the gc "
                "drive's logical space, empty at start, "
                + ("2 MiB mapping cache" if cmt else "whole mapping table in DRAM"),
                spec=random_spec(
                    gc16_n, 300_000, 0.0, GC_LOGICAL_BYTES * pct // 100 // 16384 * 16384, 16384
                ),
                overrides={**GC_GEOMETRY, "ftl.mapping_cache_bytes": 2097152 if cmt else 0},
            )
            for pct in (60, 70)
            for cmt in (False, True)
        ),
    ]


def preset_config(overrides: dict[str, object]) -> dict:
    config = tomllib.loads(PRESET.read_text())
    for key, value in overrides.items():
        section, name = key.split(".")
        config[section][name] = value
    return config


def el(parent: ET.Element, tag: str, value: object) -> None:
    ET.SubElement(parent, tag).text = str(value)


def mqsim_ssd_xml(config: dict) -> str:
    """MQSim's ssdconfig.xml for a flashlane config (the mapping table in docs/validation.md)."""
    g, t, f = config["geometry"], config["timing"], config["ftl"]
    alloc = f["allocation"]
    if alloc.get("kind") != "static":
        raise SystemExit(f"{PRESET}: ftl.allocation.kind must be static to map onto MQSim")
    scheme = "".join(ORDER_LETTER[level] for level in alloc["order"])
    sched = config["device"]["scheduler"]["kind"]
    if sched not in SCHEDULER:
        raise SystemExit(f"{PRESET}: device.scheduler.kind {sched!r} has no MQSim equivalent")
    root = ET.Element("Execution_Parameter_Set")
    host = ET.SubElement(root, "Host_Parameter_Set")
    # MQSim always has its link; a preset without one is compared with MQSim's shipped link.
    link = config["host"].get("link", {"kind": "none"})
    if link["kind"] != "pcie":
        link = {"lane_count": 4, "lane_bytes_per_ns": 1.0}
    for key, default in (("tlp_max_payload_bytes", 128), ("tlp_overhead_bytes", 28)):
        if link.get(key, default) != default:
            raise SystemExit(f"{PRESET}: host.link.{key} must be {default}, MQSim's constant")
    el(host, "PCIe_Lane_Bandwidth", f"{float(link['lane_bytes_per_ns']):.5f}")
    el(host, "PCIe_Lane_Count", link["lane_count"])
    el(host, "SATA_Processing_Delay", 400000)
    el(host, "Enable_ResponseTime_Logging", "false")
    el(host, "ResponseTime_Logging_Period_Length", 1000000)
    dev = ET.SubElement(root, "Device_Parameter_Set")
    el(dev, "Seed", 321)
    # MQSim's preconditioning stops on trace flows: IO_Flow_Trace_Based::Get_statistics never
    # sets Address_distribution_type, and FTL::Perform_precondition then fails with "Unhandled
    # address distribution type". So MQSim starts empty with its translation pages on flash
    # (Address_Mapping_Unit_Page_Level::Store_mapping_table_on_flash_at_start), and so does
    # the preset (precondition.write_trace_footprint false, ftl.translation_pages_on_flash all).
    el(dev, "Enabled_Preconditioning", "false")
    el(dev, "Memory_Type", "FLASH")
    el(dev, "HostInterface_Type", "NVME")
    el(dev, "IO_Queue_Depth", config["host"]["queue_length_requests"])
    el(dev, "Queue_Fetch_Size", config["device"]["queue_depth_requests"])
    el(dev, "Caching_Mechanism", "ADVANCED")
    el(dev, "Data_Cache_Sharing_Mode", "SHARED")
    el(dev, "Data_Cache_Capacity", 268435456)
    el(dev, "Data_Cache_DRAM_Row_Size", 8192)
    el(dev, "Data_Cache_DRAM_Data_Rate", 100)
    el(dev, "Data_Cache_DRAM_Data_Busrt_Size", 1)
    for timing in ("tRCD", "tCL", "tRP"):
        el(dev, f"Data_Cache_DRAM_{timing}", 13)
    el(dev, "Address_Mapping", "PAGE_LEVEL")
    cmt = int(f.get("mapping_cache_bytes", 0))
    el(dev, "Ideal_Mapping_Table", "true" if cmt == 0 else "false")
    el(dev, "CMT_Capacity", cmt if cmt else 2097152)
    el(dev, "CMT_Sharing_Mode", "SHARED")
    el(dev, "Plane_Allocation_Scheme", scheme)
    el(dev, "Transaction_Scheduling_Policy", SCHEDULER[sched])
    el(dev, "Overprovisioning_Ratio", f["overprovisioning_fraction"])
    el(dev, "GC_Exec_Threshold", f["gc_threshold_fraction"])
    el(dev, "GC_Block_Selection_Policy", "GREEDY")
    copyback = f.get("gc_page_move", "copyback") == "copyback"
    el(dev, "Use_Copyback_for_GC", "true" if copyback else "false")
    el(dev, "Preemptible_GC_Enabled", "false")
    el(dev, "GC_Hard_Threshold", 0.005)
    el(dev, "Dynamic_Wearleveling_Enabled", "false")
    el(dev, "Static_Wearleveling_Enabled", "false")
    el(dev, "Static_Wearleveling_Threshold", 100)
    el(dev, "Preferred_suspend_erase_time_for_read", 700000)
    el(dev, "Preferred_suspend_erase_time_for_write", 700000)
    el(dev, "Preferred_suspend_write_time_for_read", 100000)
    el(dev, "Flash_Channel_Count", g["channels"])
    el(dev, "Flash_Channel_Width", 1)
    # 1-byte-wide channel: bytes/ns x 1000 = MT/s
    el(dev, "Channel_Transfer_Rate", round(float(t["channel_bytes_per_ns"]) * 1000))
    el(dev, "Chip_No_Per_Channel", g["chips_per_channel"])
    el(dev, "Flash_Comm_Protocol", "NVDDR2")
    fp = ET.SubElement(dev, "Flash_Parameter_Set")
    el(fp, "Flash_Technology", "MLC")
    el(fp, "CMD_Suspension_Support", "NONE")
    for kind in ("LSB", "CSB", "MSB"):
        el(fp, f"Page_Read_Latency_{kind}", t["page_read_ns"])
    for kind in ("LSB", "CSB", "MSB"):
        el(fp, f"Page_Program_Latency_{kind}", t["page_program_ns"])
    el(fp, "Block_Erase_Latency", t["block_erase_ns"])
    el(fp, "Block_PE_Cycles_Limit", 10000)
    el(fp, "Suspend_Erase_Time", 700000)
    el(fp, "Suspend_Program_Time", 100000)
    el(fp, "Die_No_Per_Chip", g["dies_per_chip"])
    el(fp, "Plane_No_Per_Die", g["planes_per_die"])
    el(fp, "Block_No_Per_Plane", g["blocks_per_plane"])
    el(fp, "Page_No_Per_Block", g["pages_per_block"])
    el(fp, "Page_Capacity", g["page_bytes"])
    el(fp, "Page_Metadat_Capacity", 448)
    ET.indent(root)
    return '<?xml version="1.0" encoding="us-ascii"?>\n' + ET.tostring(root, "unicode") + "\n"


def mqsim_workload_xml(config: dict, trace: Path) -> str:
    """One scenario, one trace-based flow over the whole SSD, data cache off."""
    g = config["geometry"]
    root = ET.Element("MQSim_IO_Scenarios")
    flow = ET.SubElement(ET.SubElement(root, "IO_Scenario"), "IO_Flow_Parameter_Set_Trace_Based")
    el(flow, "Priority_Class", "HIGH")
    el(flow, "Device_Level_Data_Caching_Mode", "TURNED_OFF")
    el(flow, "Channel_IDs", ",".join(str(i) for i in range(g["channels"])))
    el(flow, "Chip_IDs", ",".join(str(i) for i in range(g["chips_per_channel"])))
    el(flow, "Die_IDs", ",".join(str(i) for i in range(g["dies_per_chip"])))
    el(flow, "Plane_IDs", ",".join(str(i) for i in range(g["planes_per_die"])))
    el(flow, "Initial_Occupancy_Percentage", 0)
    el(flow, "File_Path", trace)
    el(flow, "Percentage_To_Be_Executed", 100)
    el(flow, "Relay_Count", 1)
    el(flow, "Time_Unit", "NANOSECOND")
    ET.indent(root)
    return '<?xml version="1.0" encoding="us-ascii"?>\n' + ET.tostring(root, "unicode") + "\n"


def run(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> float:
    started = time.monotonic()
    with log.open("w") as out:
        done = subprocess.run(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
            env=None if env is None else {**os.environ, **env},
        )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({done.returncode}); see {log}")
    return time.monotonic() - started


def make_trace(case: Case, flashlane: str, work: Path) -> Path:
    trace = work / f"{case.name}.trace"
    if case.spec is not None:
        spec = work / f"{case.name}.spec.toml"
        spec.write_text(case.spec)
        run([flashlane, "gen", "--spec", str(spec), "--out", str(trace)], work / "gen.log")
    else:
        run(
            [flashlane, "trace", "convert", "--to", "mqsim"]
            # MSR times count from 1601 (1.28e19 ns); the shipped MQSim traces keep theirs
            + ([] if case.trace.endswith(".mqsim") else ["--rebase-time"])
            + [str(REPO / case.trace), str(trace)],
            work / "convert.log",
        )
        if case.speedup != 1:
            speed_up(trace, case.speedup)
    return trace


def speed_up(trace: Path, factor: int) -> None:
    """Divide every arrival time of an MQSim ASCII trace (first column, ns) by `factor`, in
    place: both simulators then read the same faster trace."""
    lines = []
    for line in trace.read_text().splitlines():
        fields = line.split()
        fields[0] = str(int(fields[0]) // factor)
        lines.append(" ".join(fields))
    trace.write_text("\n".join(lines) + "\n")


def flashlane_figures(
    case: Case, flashlane: str, trace: Path, work: Path, extra: list[str]
) -> dict:
    out = work / f"{case.name}.flashlane.json"
    cmd = [flashlane, "run", "--preset", PRESET_NAME, "--trace", str(trace)]
    cmd += ["--format", "mqsim", "--json", str(out)]
    for key, value in case.overrides.items():
        cmd += ["--set", f"{key}={value}"]
    for setting in extra:
        cmd += ["--set", setting]
    wall = run(cmd, work / f"{case.name}.flashlane.log")
    s = json.loads(out.read_text())
    fl = s["flash"]
    lat = s["latency_us"]
    all_programs = fl["programs"] + fl["copybacks"] + fl.get("mapping_programs", 0)
    return {
        "mean read us": lat["read"]["mean"] if lat["read"]["count"] else None,
        "mean write us": lat["write"]["mean"] if lat["write"]["count"] else None,
        "mean all us": lat["all"]["mean"],
        "p99 read us": lat["read"]["p99"] if lat["read"]["count"] else None,
        "p99 write us": lat["write"]["p99"] if lat["write"]["count"] else None,
        "IOPS": s["throughput"]["iops"],
        "flash reads": fl["reads"]
        + fl.get("read_modify_write_reads", 0)
        + fl["copybacks"]
        + fl.get("mapping_reads", 0),
        "flash programs": all_programs,
        "flash erases": fl["erases"],
        "mapping reads": fl.get("mapping_reads", 0),
        "mapping programs": fl.get("mapping_programs", 0),
        "mapping programs submitted": (s.get("cmt") or {}).get("writebacks", 0),
        "host page programs": fl["programs"],
        "WAF": all_programs / fl["programs"] if fl["programs"] else None,
        "wall s": wall,
    }


def mqsim_figures(
    case: Case, mqsim: str, trace: Path, work: Path, host_programs: int, reuse: bool
) -> dict:
    config = preset_config(case.overrides)
    ssd = work / f"{case.name}.ssdconfig.xml"
    wl = work / f"{case.name}.workload.xml"
    ssd.write_text(mqsim_ssd_xml(config))
    wl.write_text(mqsim_workload_xml(config, trace))
    result = work / f"{case.name}.workload_scenario_1.xml"
    # one line per completed request ("R" or "W", delay in ns), written by a binary that
    # carries the local measurement patch (docs/validation.md); ignored by others
    delays = work / f"{case.name}.mqsim-requests.txt"
    wall = None
    if not (reuse and result.exists()):
        result.unlink(missing_ok=True)
        delays.unlink(missing_ok=True)
        log = work / f"{case.name}.mqsim.log"
        try:
            wall = run(
                [mqsim, "-i", str(ssd), "-w", str(wl)],
                log,
                env={"MQSIM_REQUEST_LOG": str(delays)},
            )
        except SystemExit:
            # MQSim aborts on some GC cases (docs/validation.md): the table says why.
            lines = [line for line in log.read_text(errors="replace").splitlines() if line]
            return {"failed": lines[-1] if lines else "no output"}
    if not result.exists():
        raise SystemExit(f"MQSim wrote no {result}; see {work / (case.name + '.mqsim.log')}")
    root = ET.parse(result).getroot()
    flow = root.find(".//Host.IO_Flow")
    ftl = root.find(".//SSDDevice.FTL")
    if flow is None or ftl is None:
        raise SystemExit(f"{result}: no Host.IO_Flow or SSDDevice.FTL element")

    def num(node: ET.Element, attr: str) -> float:
        # the FTL reports attributes, the IO flow child elements
        value = node.get(attr)
        if value is None and node.find(attr) is not None:
            value = node.find(attr).text
        if value is None:
            raise SystemExit(f"{result}: {node.tag} has no attribute {attr}")
        return float(value)

    # Pages each TSU queue handed to the flash (its No_Of_Transactions_Dequeued, summed over
    # chips): every page of a multi-plane command counts, and a transaction enqueued but never
    # served does not (Issued_Flash_*_CMD count commands, a multi-plane one apart).
    served: dict[str, int] = {}
    for queue in root.iter():
        kind = queue.tag.removeprefix("SSDDevice.TSU.")
        if kind != queue.tag and queue.get("No_Of_Transactions_Dequeued") is not None:
            served[kind] = served.get(kind, 0) + int(queue.get("No_Of_Transactions_Dequeued"))
            key = kind + " enqueued"
            served[key] = served.get(key, 0) + int(queue.get("No_Of_Transactions_Enqueued"))
    if "User_Read_TR_Queue" not in served:
        raise SystemExit(f"{result}: no SSDDevice.TSU.*_TR_Queue statistics")
    programs = sum(served.get(q, 0) for q in ("User_Write_TR_Queue", "GC_Write_TR_Queue"))
    programs += served.get("Mapping_Write_TR_Queue", 0)
    p99 = request_p99_us(delays)
    iops = num(flow, "IOPS")
    return {
        "mean read us": optional_us(flow, "End_to_End_Request_Delay_Read_ns"),
        "mean write us": optional_us(flow, "End_to_End_Request_Delay_Write_ns"),
        "mean all us": num(flow, "End_to_End_Request_Delay"),
        "p99 read us": p99.get("R"),
        "p99 write us": p99.get("W"),
        # whole seconds in MQSim's division: a run shorter than 1 s divides by 0
        "IOPS": iops if math.isfinite(iops) else None,
        "flash reads": sum(
            served.get(q, 0)
            for q in ("User_Read_TR_Queue", "GC_Read_TR_Queue", "Mapping_Read_TR_Queue")
        ),
        "flash programs": programs,
        "flash erases": served.get("GC_Erase_TR_Queue", 0),
        "mapping reads": served.get("Mapping_Read_TR_Queue", 0),
        "mapping programs": served.get("Mapping_Write_TR_Queue", 0),
        "mapping programs submitted": served.get("Mapping_Write_TR_Queue enqueued", 0),
        "host page programs": served.get("User_Write_TR_Queue", 0),
        "WAF": programs / host_programs if host_programs else None,
        "wall s": wall,
    }


def request_p99_us(delays: Path) -> dict[str, float]:
    """p99 of MQSim's per-request delays by kind, nearest rank, from the patched binary's log
    (empty when the binary does not write one)."""
    by_kind: dict[str, list[int]] = {"R": [], "W": []}
    if delays.exists():
        for line in delays.read_text().splitlines():
            # "R" or "W", the delay in ns (and, from newer patches, the arrival in ns)
            kind, ns = line.split()[:2]
            by_kind[kind].append(int(ns))
    return {
        kind: sorted(v)[math.ceil(0.99 * len(v)) - 1] / 1000 for kind, v in by_kind.items() if v
    }


def optional_us(flow: ET.Element, field_ns: str) -> float | None:
    """A read or write mean that only a locally patched MQSim reports (docs/validation.md)."""
    node = flow.find(field_ns)
    value = flow.get(field_ns) if node is None else node.text
    return None if value is None or float(value) == 0 else float(value) / 1000


def fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}"


def table(case: Case, ours: dict, theirs: dict, extra: list[str]) -> str:
    lines = [f"### {case.name}: {case.description}", ""]
    if extra:
        lines += [f"flashlane with {', '.join(f'`{s}`' for s in extra)}", ""]
    if "failed" in theirs:
        lines += [f"MQSim stopped before its results: `{theirs['failed']}`", ""]
        theirs = dict.fromkeys(ours)
    lines += [
        "| figure | MQSim | flashlane | flashlane / MQSim |",
        "|---|---:|---:|---:|",
    ]
    for key in ours:
        a, b = theirs[key], ours[key]
        ratio = f"{b / a:.2f}" if a and b is not None else "n/a"
        lines.append(f"| {key} | {fmt(a)} | {fmt(b)} | {ratio} |")
    return "\n".join(lines) + "\n"


# The figures of the overview table: flashlane / MQSim of each.
OVERVIEW = [
    "mean read us",
    "mean write us",
    "p99 read us",
    "p99 write us",
    "flash reads",
    "flash programs",
]


def overview_row(case: Case, ours: dict, theirs: dict) -> str:
    if "failed" in theirs:
        return f"| {case.name} | " + " | ".join("MQSim aborted" for _ in OVERVIEW) + " |"
    cells = []
    for key in OVERVIEW:
        a, b = theirs[key], ours[key]
        cells.append(f"{b / a:.2f}" if a and b is not None else "n/a")
    return f"| {case.name} | " + " | ".join(cells) + " |"


def overview(rows: list[str]) -> str:
    head = "| case | " + " | ".join(OVERVIEW) + " |"
    return "\n".join(
        [
            "flashlane / MQSim per case (the tables below give both values):",
            "",
            head,
            "|---|" + "---:|" * len(OVERVIEW),
            *rows,
            "",
        ]
    )


DOCS = REPO / "docs/validation.md"
DOCS_BEGIN = "<!-- mqsim_validate.py --write-docs: begin -->"
DOCS_END = "<!-- mqsim_validate.py --write-docs: end -->"


def docs_command(argv: list[str]) -> str:
    """The command line as the docs show it: no local paths, no --reuse or --write-docs."""
    shown = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--work-dir", "--out", "--mqsim", "--flashlane"):
            skip = "=" not in arg
            if name == "--mqsim":
                shown.append("--mqsim ../MQSim/MQSim")
            continue
        if arg not in ("--reuse", "--write-docs"):
            shown.append(arg)
    return " ".join(["python3 scripts/mqsim_validate.py", *shown])


def write_docs(report: str, command: str) -> None:
    """Replace the generated results of docs/validation.md's MQSim part (between DOCS_BEGIN and
    DOCS_END)."""
    text = DOCS.read_text()
    if DOCS_BEGIN not in text or DOCS_END not in text:
        raise SystemExit(f"mqsim_validate: {DOCS} has no {DOCS_BEGIN} ... {DOCS_END} block")
    done = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    commit = done.stdout.strip() or "unknown"
    block = (
        f"{DOCS_BEGIN}\n\nGenerated by `{command}` (flashlane at `{commit}`, MQSim `7ec40e3` "
        "with the local measurement patch).\n\n"
        f"{report}\n{DOCS_END}"
    )
    before, rest = text.split(DOCS_BEGIN, 1)
    after = rest.split(DOCS_END, 1)[1]
    DOCS.write_text(before + block + after)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mqsim", help="path to an MQSim binary (built from CMU-SAFARI/MQSim)")
    parser.add_argument(
        "--flashlane",
        default=str(REPO / "target/release/flashlane"),
        help="flashlane binary (default: target/release/flashlane)",
    )
    parser.add_argument("--quick", action="store_true", help="100 k / 200 k-request cases")
    parser.add_argument(
        "--cases", help="comma-separated subset of the case names (default: every case)"
    )
    parser.add_argument("--work-dir", help="keep traces, XMLs and results here")
    parser.add_argument("--out", help="also write the Markdown table to this file")
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="put the tables into docs/validation.md (between its mqsim_validate.py markers)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="take MQSim's results already in --work-dir instead of running it again",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra flashlane override for every case (flashlane side only, e.g. to bracket "
        "a difference with device.die_issue=independent); repeatable",
    )
    args = parser.parse_args()
    for setting in args.set:
        if "=" not in setting:
            raise SystemExit(f"mqsim_validate: --set {setting!r}: expected KEY=VALUE")

    if not args.mqsim:
        print(
            "mqsim_validate: skipped: no MQSim binary given (--mqsim PATH); "
            "build CMU-SAFARI/MQSim with `make` and pass its MQSim binary",
            file=sys.stderr,
        )
        return 0
    mqsim = shutil.which(args.mqsim) or args.mqsim
    if not Path(mqsim).is_file():
        raise SystemExit(f"mqsim_validate: --mqsim {args.mqsim}: no such file")
    flashlane = shutil.which(args.flashlane) or args.flashlane
    if not Path(flashlane).is_file():
        raise SystemExit(
            f"mqsim_validate: --flashlane {args.flashlane}: no such file "
            "(cargo build --release -p flashlane-cli)"
        )
    selected = cases(args.quick)
    if args.cases:
        wanted = args.cases.split(",")
        unknown = set(wanted) - {c.name for c in selected}
        if unknown:
            raise SystemExit(f"mqsim_validate: unknown case(s) {', '.join(sorted(unknown))}")
        selected = [c for c in selected if c.name in wanted]
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="mqsim-validate-")).resolve()
    work.mkdir(parents=True, exist_ok=True)

    report = []
    rows = []
    for case in selected:
        print(f"mqsim_validate: {case.name} ...", file=sys.stderr, flush=True)
        trace = make_trace(case, flashlane, work)
        ours = flashlane_figures(case, flashlane, trace, work, args.set)
        theirs = mqsim_figures(case, mqsim, trace, work, ours["host page programs"], args.reuse)
        report.append(table(case, ours, theirs, args.set))
        rows.append(overview_row(case, ours, theirs))
        print(report[-1], flush=True)
    text = overview(rows) + "\n" + "\n".join(report)
    if args.out:
        Path(args.out).write_text(text)
    if args.write_docs:
        write_docs(text, docs_command(sys.argv[1:]))
    print(f"mqsim_validate: work files in {work}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
