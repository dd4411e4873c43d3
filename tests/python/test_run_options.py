"""flashlane.run takes every option of `flashlane run`: each reading option changes what is read,
several traces and spec files mix as on the command line, and a bad value names the argument."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import flashlane
from conftest import skip_or_fail

REPO = Path(__file__).resolve().parents[2]
PRESET = "mqsim-ssd"

# Every option of `flashlane run --help` and the argument of flashlane.run that gives it.
CLI_TO_PYTHON = {
    "--preset": "preset",
    "--config": "config",
    "--set": "overrides",
    "--trace": "trace",
    "--profile": "workload",
    "--synthetic": "workload",
    "--format": "format",
    "--csv-columns": "csv_columns",
    "--queue-events": "queue_events",
    "--max-bad-lines": "max_bad_lines",
    "--device": "device",
    "--fold-addresses": "addresses",
    "--remap-addresses": "addresses",
    "--time-scale": "time_scale",
    "--closed-loop": "closed_loop_requests",
    "--afap": "as_fast_as_possible",
    "--warmup-requests": "warmup_requests",
    "--max-requests": "max_requests",
    "--seed": "seed",
    "--check-integrity": "check_integrity",
    "--json": "json_path",
    "--precondition-cache": "precondition_cache",
    "--dispatch-log": "dispatch_log_path",
}


def flashlane_bin() -> Path:
    path = Path(os.environ.get("FLASHLANE_BIN", "target/release/flashlane"))
    if not path.is_absolute():
        path = REPO / path
    if not path.exists():
        skip_or_fail(f"{path} not built (cargo build --release -p flashlane-cli)")
    return path


def test_every_cli_run_option_has_an_argument():
    help_text = subprocess.run(
        [flashlane_bin(), "run", "--help"], check=True, capture_output=True, text=True
    ).stdout
    options = set(re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z-]*)", help_text, re.MULTILINE))
    options.discard("--help")
    assert "--max-bad-lines" in options and "--device" in options, help_text
    # A new CLI option fails here until flashlane.run has it (and this table says which).
    assert options == set(CLI_TO_PYTHON), options ^ set(CLI_TO_PYTHON)
    parameters = inspect.signature(flashlane.run).parameters
    for option, argument in CLI_TO_PYTHON.items():
        assert argument in parameters, f"{option}: flashlane.run has no {argument}="


def mqsim_trace(path: Path, rows: list[tuple[int, int, int, int, int]]) -> Path:
    """Rows (time ns, device, sector, sectors, type: 0 write / 1 read) as an MQSim trace."""
    path.write_text("".join(" ".join(map(str, row)) + "\n" for row in rows))
    return path


def two_device_rows() -> list[tuple[int, int, int, int, int]]:
    """30 requests 10 us apart: device 1 every third one, device 0 the others."""
    return [(i * 10_000, int(i % 3 == 0), i * 8, 8, i % 2) for i in range(30)]


def completed(summary: dict) -> int:
    return summary["requests"]["completed"]


def test_device_keeps_only_that_devices_requests(tmp_path):
    trace = mqsim_trace(tmp_path / "two.mqsim", two_device_rows())
    assert completed(flashlane.run(PRESET, trace)) == 30
    only_one = flashlane.run(PRESET, trace, device=1)
    assert completed(only_one) == 10
    assert only_one["sources"][0]["filtered_records"] == 20
    assert completed(flashlane.run(PRESET, trace, device=0)) == 20


def test_max_bad_lines_lets_a_bad_line_through_and_counts_it(tmp_path):
    rows = [" ".join(map(str, row)) for row in two_device_rows()]
    rows.insert(2, "this line is not a record")
    trace = tmp_path / "bad.mqsim"
    trace.write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"bad\.mqsim:3:"):
        flashlane.run(PRESET, trace, format="mqsim")
    summary = flashlane.run(PRESET, trace, format="mqsim", max_bad_lines=1)
    assert completed(summary) == 30
    assert summary["trace"]["bad_lines"] == 1
    assert summary["sources"][0]["bad_lines"] == 1


EVENTS = """time_us,event,rwbs,sector,sectors
10,Q,R,2048,8
15,D,R,2048,8
90,C,R,2048,8
100,m,N,cfq dispatch
120,Q,W,4096,16
130,D,W,4096,16
200,C,W,4096,16
"""


def test_csv_columns_reads_a_generic_csv_trace(tmp_path):
    trace = tmp_path / "events.csv"
    trace.write_text(EVENTS)
    spec = "header=yes,time=0:us,op=2:R/W,offset=3:sectors,size=4:sectors"
    summary = flashlane.run(PRESET, trace, format="generic-csv", csv_columns=f"{spec},keep=1:D")
    assert summary["trace"]["format"] == "generic-csv"
    assert completed(summary) == 2
    # Queue events too: twice as many requests.
    both = flashlane.run(PRESET, trace, format="generic-csv", csv_columns=f"{spec},keep=1:Q|D")
    assert completed(both) == 4
    with pytest.raises(ValueError, match=r"csv_columns time=0:us: .*missing `op="):
        flashlane.run(PRESET, trace, format="generic-csv", csv_columns="time=0:us")
    with pytest.raises(ValueError, match=r"column spec"):
        flashlane.run(PRESET, trace, format="generic-csv")


# Two requests queued (Q) and merged into one issue (D) of both, then a third request.
BLKPARSE = """\
  8,0    0        1     0.000001000  100  Q   R 1000 + 8 [app]
  8,0    0        2     0.000002000  100  Q   R 1008 + 8 [app]
  8,0    0        3     0.000003000  100  M   R 1008 + 8 [app]
  8,0    0        4     0.000004000  100  D   R 1000 + 16 [app]
  8,0    0        5     0.000020000  100  Q   W 5000 + 8 [app]
  8,0    0        6     0.000021000  100  D   W 5000 + 8 [app]
"""


def test_queue_events_takes_the_queued_requests(tmp_path):
    trace = tmp_path / "merge.blkparse"
    trace.write_text(BLKPARSE)
    issued = flashlane.run(PRESET, trace, format="blkparse")
    assert completed(issued) == 2
    queued = flashlane.run(PRESET, trace, format="blkparse", queue_events=True)
    assert completed(queued) == 3
    assert (queued["requests"]["reads"], issued["requests"]["reads"]) == (2, 1)


def test_several_traces_and_a_format_per_trace_mix(tmp_path):
    first = mqsim_trace(tmp_path / "a.trace", two_device_rows())
    second = mqsim_trace(tmp_path / "b.trace", two_device_rows()[:12])
    summary = flashlane.run(PRESET, [first, second], format=["mqsim", "ssdsim"])
    assert [s["path"] for s in summary["sources"]] == [str(first), str(second)]
    assert [s["format"] for s in summary["sources"]] == ["mqsim", "ssdsim"]
    assert completed(summary) == 42
    assert completed(flashlane.run(PRESET, [first, second], format="mqsim")) == 42
    with pytest.raises(ValueError, match=r"format: 3 layouts for 2 traces"):
        flashlane.run(PRESET, [first, second], format=["mqsim", "mqsim", "mqsim"])
    # Without a format, a file named like neither layout is ambiguous.
    with pytest.raises(ValueError, match=r"ambiguous"):
        flashlane.run(PRESET, [first, second])


SPEC = """label = "tiny"
requests = 40
read_fraction = 0.5

[arrival]
kind = "fixed"
interarrival_ns = 10000

[size]
kind = "fixed"
bytes = 4096

[address]
kind = "uniform"
span_bytes = 1048576
align_bytes = 4096
"""


def test_a_spec_file_is_a_synthetic_workload(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC)
    summary = flashlane.run(PRESET, workload=spec)
    assert completed(summary) == 40
    assert summary["sources"][0]["path"] == str(spec)
    trace = mqsim_trace(tmp_path / "t.mqsim", two_device_rows())
    mixed = flashlane.run(PRESET, trace, workload=[spec, "hm_0"], max_requests=100)
    assert [s["path"] for s in mixed["sources"]] == [str(trace), str(spec), "profile hm_0"]
    with pytest.raises(ValueError, match=r"unknown profile.*pathlib\.Path"):
        flashlane.run(PRESET, workload=str(spec))


def test_dispatch_log_path_writes_the_cli_csv(tmp_path):
    trace = mqsim_trace(tmp_path / "t.mqsim", two_device_rows())
    out = tmp_path / "order.csv"
    summary = flashlane.run(
        PRESET,
        trace,
        {"host.scheduler.kind": "deadline", "device.queue_depth_requests": 1},
        as_fast_as_possible=True,
        dispatch_log_path=out,
    )
    lines = out.read_text().splitlines()
    assert lines[0] == "command,seq,op,offset_bytes,size_bytes,dispatched_ns"
    seqs = sorted(int(line.split(",")[1]) for line in lines[1:])
    assert seqs == list(range(summary["trace"]["records"]))
    # The same bytes as the command line's.
    cli = tmp_path / "cli.csv"
    sets = ["--set", "host.scheduler.kind=deadline", "--set", "device.queue_depth_requests=1"]
    cli_run = [flashlane_bin(), "run", "--preset", PRESET, "--trace", trace, "--afap", *sets]
    subprocess.run([*cli_run, "--dispatch-log", cli], check=True, capture_output=True)
    assert cli.read_text() == out.read_text()
    with pytest.raises(FileNotFoundError, match=r"dispatch_log_path .*missing"):
        flashlane.run(PRESET, trace, dispatch_log_path=tmp_path / "missing" / "o.csv")


def test_json_path_writes_what_run_returns(tmp_path):
    trace = mqsim_trace(tmp_path / "t.mqsim", two_device_rows())
    out = tmp_path / "summary.json"
    summary = flashlane.run(PRESET, trace, json_path=out)
    text = out.read_text()
    assert text.endswith("}\n") and '\n  "requests": {' in text
    assert json.loads(text) == summary
    # Written through a temporary that is renamed: nothing else is left beside it.
    assert {p.name for p in tmp_path.iterdir()} == {"t.mqsim", "summary.json"}
    with pytest.raises(FileNotFoundError, match=r"json_path .*missing.*does not exist"):
        flashlane.run(PRESET, trace, json_path=tmp_path / "missing" / "s.json")
    with pytest.raises(IsADirectoryError, match=r"json_path"):
        flashlane.run(PRESET, trace, json_path=tmp_path)


@pytest.mark.parametrize(
    ("arguments", "error", "pattern"),
    [
        ({"max_bad_lines": -1}, ValueError, r"max_bad_lines must be a non-negative int"),
        ({"max_bad_lines": 1.5}, TypeError, r"max_bad_lines must be an int"),
        ({"device": "1"}, TypeError, r"device must be an int"),
        ({"device": 1 << 32}, ValueError, r"device must be below 2\*\*32"),
        ({"csv_columns": 5}, TypeError, r"csv_columns must be a str"),
        ({"queue_events": "yes"}, TypeError, r"queue_events must be a bool"),
        ({"format": ["mqsim", 3]}, TypeError, r"format must be a layout name"),
        ({"format": "nosuch"}, ValueError, r"unknown trace format `nosuch`"),
    ],
)
def test_a_bad_argument_is_named(tmp_path, arguments, error, pattern):
    trace = mqsim_trace(tmp_path / "t.mqsim", two_device_rows())
    with pytest.raises(error, match=pattern):
        flashlane.run(PRESET, trace, **arguments)


def test_a_bad_trace_list_is_named():
    with pytest.raises(TypeError, match=r"trace: each item must be a path"):
        flashlane.run(PRESET, ["traces/tpcc-small.mqsim", 3])
    with pytest.raises(TypeError, match=r"trace must be a path"):
        flashlane.run(PRESET, [])


def test_sweep_points_take_the_same_reading_options(tmp_path):
    from flashlane.sweep import run_points

    trace = mqsim_trace(tmp_path / "two.mqsim", two_device_rows())
    events = tmp_path / "events.csv"
    events.write_text(EVENTS)
    spec = "header=yes,time=0:us,op=2:R/W,offset=3:sectors,size=4:sectors,keep=1:D"
    results = run_points(
        [
            {"preset": PRESET, "trace": trace, "device": 1},
            {"preset": PRESET, "trace": events, "trace_format": "generic-csv", "csv_columns": spec},
        ],
        jobs=1,
    )
    assert [completed(r) for r in results] == [10, 2]
    frame = flashlane.sweep(PRESET, {"device": [0, 1]}, [trace], trace_format="mqsim", jobs=1)
    assert frame["requests.completed"].to_list() == [20, 10]
    with pytest.raises(ValueError, match=r"point 0: max_bad_lines must be a non-negative int"):
        run_points([{"preset": PRESET, "trace": trace, "max_bad_lines": -2}])
