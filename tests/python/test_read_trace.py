"""flashlane.read_trace: the simulator's readers from Python, whole or in chunks."""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest

import flashlane

TRACES = Path(__file__).resolve().parents[2] / "traces"

# (file, layout, requests, reads, writes) as the bundled README and the Rust reader tests give.
BUNDLED = [
    ("tpcc-small.mqsim", "mqsim", 6999, 4381, 2618),
    ("websearch-small.mqsim", "mqsim", 24783, 24779, 4),
    ("financial1-head.ssdsim", "ssdsim", 10000, 4077, 5923),
    ("financial1-head.spc", "spc", 10000, 4077, 5923),
    ("msnfs-30s.disksim.gz", "disksim", 149999, 130483, 19516),
    ("msnfs-30s.msr.csv.gz", "msr", 149999, 130483, 19516),
    ("ycsb-a-rocksdb.blkparse.gz", "blkparse", 1694, 1694, 0),
]


@pytest.mark.parametrize(("name", "layout", "requests", "reads", "writes"), BUNDLED)
def test_bundled_traces_read_with_exact_counts(
    name: str, layout: str, requests: int, reads: int, writes: int
) -> None:
    frame = flashlane.read_trace(TRACES / name, layout)
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == list(flashlane.TRACE_COLUMNS)
    assert frame.height == requests
    assert (frame["op"] == "read").sum() == reads
    assert (frame["op"] == "write").sum() == writes


def test_first_and_last_records_of_an_mqsim_trace() -> None:
    columns = flashlane.read_trace(TRACES / "tpcc-small.mqsim", "mqsim", backend="dict")
    lines = (TRACES / "tpcc-small.mqsim").read_text().split("\n")
    lines = [line for line in lines if line.strip()]
    for index, line in [(0, lines[0]), (-1, lines[-1])]:
        t, dev, lba, sectors, kind = (int(x) for x in line.split())
        assert columns["time_ns"][index] == t
        assert columns["device"][index] == dev
        assert columns["offset_bytes"][index] == lba * 512
        assert columns["size_bytes"][index] == sectors * 512
        assert columns["op"][index] == ("read" if kind == 1 else "write")


def test_chunks_cover_the_trace_in_order() -> None:
    whole = flashlane.read_trace(TRACES / "msnfs-30s.msr.csv.gz", "msr")
    chunks = list(flashlane.read_trace(TRACES / "msnfs-30s.msr.csv.gz", "msr", chunk_rows=40000))
    assert [c.height for c in chunks] == [40000, 40000, 40000, 29999]
    assert pl.concat(chunks).equals(whole)


def test_the_two_encodings_of_msnfs_hold_the_same_requests() -> None:
    msr = flashlane.read_trace(TRACES / "msnfs-30s.msr.csv.gz", "msr")
    disksim = flashlane.read_trace(TRACES / "msnfs-30s.disksim.gz", "disksim")
    for column in ("offset_bytes", "size_bytes", "op", "device"):
        assert msr[column].equals(disksim[column])
    # Times agree after rebasing each trace to its first record (both are exact to 1 us here).
    rebased = [f["time_ns"] - f["time_ns"][0] for f in (msr, disksim)]
    assert (rebased[0].cast(pl.Int64) - rebased[1].cast(pl.Int64)).abs().max() <= 1000


def test_detection_refuses_to_guess_between_ascii_layouts(tmp_path: Path) -> None:
    path = tmp_path / "ambiguous.txt"
    path.write_text("0 0 8 8 1\n10 0 16 8 0\n")
    with pytest.raises(ValueError, match="--format"):
        flashlane.read_trace(path)


def test_malformed_line_names_file_line_and_text(tmp_path: Path) -> None:
    path = tmp_path / "bad.mqsim.gz"
    with gzip.open(path, "wt") as f:
        f.write("0 0 8 8 1\n10 0 sixteen 8 0\n")
    with pytest.raises(ValueError, match=r"bad\.mqsim\.gz:2.*sixteen"):
        flashlane.read_trace(path, "mqsim")


def test_bad_lines_can_be_allowed_and_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "bad.mqsim"
    path.write_text("0 0 8 8 1\n10 0 sixteen 8 0\n20 0 24 8 0\n")
    columns = flashlane.read_trace(path, "mqsim", backend="dict", max_bad_lines=1)
    assert columns["time_ns"] == [0, 20]


def test_generic_csv_columns(tmp_path: Path) -> None:
    path = tmp_path / "custom.csv"
    path.write_text("5,R,4096,8192\n7,W,0,512\n")
    frame = flashlane.read_trace(
        path,
        "generic-csv",
        csv_columns="time=0:ms,op=1:R/W,offset=2:bytes,size=3:bytes",
    )
    assert frame["time_ns"].to_list() == [5_000_000, 7_000_000]
    assert frame["op"].to_list() == ["read", "write"]
    assert frame["size_bytes"].to_list() == [8192, 512]


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="backend"):
        flashlane.read_trace(TRACES / "tpcc-small.mqsim", "mqsim", backend="arrow")  # type: ignore[arg-type]
