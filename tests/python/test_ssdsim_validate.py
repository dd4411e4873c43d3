"""The SSDsim validation script's pure parts: parameter file, output parsers (no SSDsim binary)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ssdsim_validate.py"


def load_script():
    spec = importlib.util.spec_from_file_location("ssdsim_validate", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


# A preset as tomllib gives it: the geometry, timings and queue of ssdsim-mlc-8x8, with a GC
# threshold of 0.30 and 128 blocks per plane so that no value is a shipped default by chance.
PRESET = {
    "geometry": {
        "channels": 8,
        "chips_per_channel": 8,
        "dies_per_chip": 2,
        "planes_per_die": 4,
        "blocks_per_plane": 128,
        "pages_per_block": 64,
        "page_bytes": 2048,
    },
    "timing": {
        "command_transfer_ns": 175,
        "page_read_ns": 20000,
        "page_program_ns": 200000,
        "block_erase_ns": 1500000,
        "channel_bytes_per_ns": 0.04,
    },
    "ftl": {
        "overprovisioning_fraction": 0.1,
        "gc_threshold_fraction": 0.3,
        "allocation": {"kind": "static", "order": ["channel", "chip", "die", "plane"]},
    },
    "host": {"queue_length_requests": 64},
}


def test_parameter_file_carries_every_mapped_value():
    sv = load_script()
    params = sv.parse_parameters(sv.ssdsim_parameters(PRESET, algorithm=1))
    assert params["channel number"] == "8"
    assert params["chip number"] == "64"  # the total
    assert params["chip number[0]"] == "8" and params["chip number[7]"] == "8"
    assert params["chip number[8]"] == "0" and params["chip number[18]"] == "0"
    assert params["die number"] == "2"
    assert params["plane number"] == "4"
    assert params["block number"] == "128"
    assert params["page number"] == "64"
    assert params["page capacity"] == "2048"
    assert params["subpage page"] == "4"  # 2048 / 512-byte sectors
    assert params["t_R"] == "20000"
    assert params["t_PROG"] == "200000"
    assert params["t_BERS"] == "1500000"
    assert params["t_WC"] == "25" and params["t_RC"] == "25"  # 1 / 0.04 bytes per ns
    assert params["overprovide"] == "0.1"
    assert params["gc hard threshold"] == "0.3" and params["gc threshold"] == "0.3"
    assert params["allocation"] == "1" and params["static_allocation"] == "1"
    assert params["queue_length"] == "64"
    assert params["dram capacity"] == "0"
    assert params["advanced command"] == "0"
    assert params["scheduling algorithm"] == "1"
    assert params["aged"] == "0"
    # lines no key maps keep the shipped values
    assert params["t_DBSY"] == "50" and params["address mapping"] == "1"


def test_aged_case_and_algorithm_per_variant():
    sv = load_script()
    params = sv.parse_parameters(sv.ssdsim_parameters(PRESET, algorithm=4, aged_ratio=0.7))
    assert params["aged"] == "1" and params["aged ratio"] == "0.7"
    assert params["scheduling algorithm"] == "4"
    assert [sv.VARIANTS[v]["ssdsim"] for v in ("fifo", "noop-d", "piq")] == [4, 0, 1]


def test_unmappable_presets_are_refused():
    sv = load_script()
    dynamic = {**PRESET, "ftl": {**PRESET["ftl"], "allocation": {"kind": "dynamic"}}}
    with pytest.raises(SystemExit, match="static"):
        sv.ssdsim_parameters(dynamic, algorithm=0)
    slow_command = {**PRESET, "timing": {**PRESET["timing"], "command_transfer_ns": 100}}
    with pytest.raises(SystemExit, match="7 x t_WC"):
        sv.ssdsim_parameters(slow_command, algorithm=0)


def test_large_lsn_folds_like_ssdsim():
    sv = load_script()
    params = sv.parse_parameters(sv.ssdsim_parameters(PRESET, algorithm=0))
    # 4 x 64 x 128 x 4 x 2 x 64 = 16,777,216 sectors; x 0.9 in single precision
    assert sv.large_lsn(params) == 15099494
    assert sv.pages_of(3, 2, 4) == 2  # sectors 3 and 4 straddle a page boundary
    assert sv.pages_of(0, 8, 4) == 2
    assert sv.pages_of(15099493, 4, 4, largest=15099494) == 2  # wraps to sector 0


def test_trace_folding_and_preprocess_programs(tmp_path):
    sv = load_script()
    params = sv.parse_parameters(sv.ssdsim_parameters(PRESET, algorithm=0))
    raw = tmp_path / "raw"
    raw.write_text("0 0 15099495 4 1\n10 0 8 16 0\n20 0 2 4 1\n")
    out = tmp_path / "out"
    assert sv.fold_trace(raw, out, sv.large_lsn(params)) == 1
    assert out.read_text() == "0 0 1 4 1\n10 0 8 16 0\n20 0 2 4 1\n"
    # reads: sectors 1-4 (2 pages) and 2-5 (2 pages); the write is not pre-processed
    assert sv.preprocess_programs(out, params) == 4


EX_OUT = """\
channel:0,chip:0,die:0,plane:0 have free page: 131072
\t\t\t\t\t\t\t\t\tOUTPUT
****************** TRACE INFO ******************
      arrive           lsn     size ope     begin time    response time    process time    wait time
               0       1000      8  1             1000            51000      50000             1000
            5000       2002      4  0             6000           105000      99000             1000
           10000       3000      4  1            10000            40000      30000                0


---------------------------statistic data---------------------------
read count:             9
"""

STATISTIC = (
    (
        "---------------------------statistic data---------------------------\n"
        "read count:             9\n"
        "program count:            13                        include the flash write count "
        "leaded by read requests\n"
    )
    + """\
the read operation leaded by un-covered update count:             1
erase count:             2
read request count:             2
write request count:             1
read request average response time including wait time: 40500
"""
)


def test_ex_out_gives_latency_from_arrival_and_write_pages():
    sv = load_script()
    ex = sv.parse_ex_out(EX_OUT, subpages=4)
    assert ex["reads"] == 2 and ex["writes"] == 1
    # reads: 51000 - 0 and 40000 - 10000 ns; write: 105000 - 5000 ns
    assert ex["mean read us"] == pytest.approx(40.5)
    assert ex["mean write us"] == pytest.approx(100.0)
    assert ex["write pages"] == 2  # sectors 2002-2005 span two 4-sector pages


def test_summary_takes_out_preprocessing_and_update_reads():
    sv = load_script()
    params = sv.parse_parameters(sv.ssdsim_parameters(PRESET, algorithm=0))
    stat = sv.parse_statistic(STATISTIC)
    assert stat["program count"] == 13 and stat["erase count"] == 2
    figures = sv.ssdsim_summary(EX_OUT, STATISTIC, params, pre=5)
    assert figures["requests"] == 3
    assert figures["flash reads"] == 8  # read count 9, one counted twice (update)
    assert figures["read-modify-write reads"] == 1
    assert figures["programs"] == 8  # 13 minus 5 pre-processing programs
    assert figures["host page programs"] == 2
    assert figures["GC moves"] == 6
    assert figures["erases"] == 2
    assert figures["WAF"] == pytest.approx(4.0)


def test_summary_without_statistics_keeps_latency():
    sv = load_script()
    params = sv.parse_parameters(sv.ssdsim_parameters(PRESET, algorithm=0))
    figures = sv.ssdsim_summary(EX_OUT, None, params, pre=0)
    assert figures["mean read us"] == pytest.approx(40.5)
    assert figures["flash reads"] is None and figures["WAF"] is None


def test_flashlane_summary_counts_gc_moves_as_programs():
    sv = load_script()
    summary = {
        "latency_us": {"read": {"count": 2, "mean": 50.0}, "write": {"count": 0, "mean": 0.0}},
        "requests": {"completed": 2},
        "flash": {"reads": 4, "programs": 10, "copybacks": 5, "erases": 1},
    }
    figures = sv.flashlane_summary(summary)
    assert figures["mean write us"] is None
    assert figures["programs"] == 15 and figures["GC moves"] == 5
    assert figures["WAF"] == pytest.approx(1.5)


def test_without_ssdsim_it_skips_with_a_message():
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert "skipped: no SSDsim binary given" in done.stderr
    assert done.stdout == ""


def test_docs_show_the_command_without_local_paths():
    sv = load_script()
    argv = ["--ssdsim", "/tmp/x/ssd", "--work-dir", "w", "--reuse", "--quick", "--write-docs"]
    assert sv.docs_command(argv) == (
        "python3 scripts/ssdsim_validate.py --ssdsim ../SSDsim/ssd --quick"
    )
