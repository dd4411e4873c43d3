"""flashlane.sweep and flashlane.sweep.run_points: rows, columns, order, errors before any run,
and the same frame from the local process pool, from one process and from a Dask LocalCluster."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import flashlane
from flashlane import _native
from flashlane.sweep import WALL_CLOCK_COLUMNS, run_points

REPO = Path(__file__).resolve().parents[2]
TPCC = str(REPO / "traces" / "tpcc-small.mqsim")
WEBSEARCH = str(REPO / "traces" / "websearch-small.mqsim")
PRESET = "mqsim-ssd"
# Small enough that the whole file stays within a few seconds of simulation.
MAX_REQUESTS = 600
GRID = {"ftl.overprovisioning_fraction": [0.07, 0.25], "device.queue_depth_requests": [4, 32]}


def small_sweep(**kwargs):
    return flashlane.sweep(
        PRESET, GRID, [TPCC, WEBSEARCH], seed=7, max_requests=MAX_REQUESTS, **kwargs
    )


@pytest.fixture(scope="module")
def pool_frame():
    return small_sweep(jobs=2)


def test_grid_keys_exist_in_preset():
    # The grid above must name real keys, or every other test here would test an error.
    config = _native.resolve_config(PRESET, None, {})
    assert '"overprovisioning_fraction"' in config
    assert '"queue_depth_requests"' in config


def test_one_row_per_run_with_the_expected_columns(pool_frame):
    frame = pool_frame
    assert frame.height == 2 * 2 * 2
    assert frame.columns[:4] == [*GRID, "trace", "seed"]
    for name in ("requests.completed", "latency_us.read.p99", "flash.reads", "waf", "gc.runs"):
        assert name in frame.columns, name
    assert not any(name.startswith("config.") for name in frame.columns)
    assert not set(WALL_CLOCK_COLUMNS) & set(frame.columns)
    # Rows: traces outermost, then the grid in the order given, the last key fastest.
    assert frame["trace"].to_list() == [TPCC] * 4 + [WEBSEARCH] * 4
    assert frame["ftl.overprovisioning_fraction"].to_list() == [0.07, 0.07, 0.25, 0.25] * 2
    assert frame["device.queue_depth_requests"].to_list() == [4, 32] * 4
    assert frame["seed"].to_list() == [7] * 8
    assert frame["requests.completed"].to_list() == [MAX_REQUESTS] * 8


def test_rows_are_the_runs_of_flashlane_run(pool_frame):
    row = pool_frame.row(3, named=True)
    summary = flashlane.run(
        PRESET,
        TPCC,
        {"ftl.overprovisioning_fraction": 0.25, "device.queue_depth_requests": 32},
        seed=7,
        max_requests=MAX_REQUESTS,
    )
    assert row["latency_us.all.mean"] == summary["latency_us"]["all"]["mean"]
    assert row["flash.programs"] == summary["flash"]["programs"]
    assert row["sim_time_ns"] == summary["sim_time_ns"]
    # The grid really reaches the simulator: a queue depth of 4 vs 32 changes the timing.
    depths = pool_frame.filter(pl.col("trace") == TPCC).group_by(
        "device.queue_depth_requests", maintain_order=True
    )
    means = [group["latency_us.all.mean"].mean() for _, group in depths]
    assert means[0] != means[1]


def test_pool_and_one_process_give_the_same_frame(pool_frame):
    serial = small_sweep(jobs=1)
    assert serial.equals(pool_frame)


def test_run_points_keeps_order_tags_and_reports_progress():
    points = [
        {"preset": PRESET, "trace": trace, "seed": seed, "max_requests": 200, "tags": {"n": n}}
        for n, (trace, seed) in enumerate([(WEBSEARCH, 1), (TPCC, 2), (TPCC, 1)])
    ]
    calls = []
    results = run_points(points, jobs=2, progress=lambda done, total: calls.append((done, total)))
    assert [r["tags"] for r in results] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert [r["seed"] for r in results] == [1, 2, 1]
    assert results[0]["trace"]["path"] == WEBSEARCH
    assert calls[-1] == (3, 3)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_unknown_grid_key_raises_before_any_run():
    calls = []
    with pytest.raises(ValueError, match=r"ftl\.overprovisioning_fractoin") as info:
        flashlane.sweep(
            PRESET,
            {"ftl.overprovisioning_fraction": [0.1], "ftl.overprovisioning_fractoin": [0.2]},
            [TPCC],
            max_requests=10,
            progress=lambda done, total: calls.append(done),
        )
    assert "sections are" in str(info.value) and "ftl" in str(info.value)
    assert calls == []


def test_unknown_section_and_bad_value_raise():
    with pytest.raises(ValueError, match=r"nosuchsection"):
        flashlane.sweep(PRESET, {"nosuchsection.x_bytes": [1]}, [TPCC], max_requests=10)
    with pytest.raises(ValueError, match=r"overprovisioning_fraction"):
        flashlane.sweep(PRESET, {"ftl.overprovisioning_fraction": ["lots"]}, [TPCC])


def test_unreadable_trace_raises_naming_the_file(tmp_path):
    missing = tmp_path / "missing.mqsim"
    with pytest.raises(ValueError, match=r"missing\.mqsim"):
        flashlane.sweep(PRESET, {"seed": [1]}, [TPCC, missing], max_requests=10)
    bad = tmp_path / "bad.mqsim"
    bad.write_text("this is not a trace\n")
    with pytest.raises(ValueError, match=r"bad\.mqsim"):
        flashlane.sweep(PRESET, {"seed": [1]}, [bad], trace_format="mqsim", max_requests=10)


def test_point_without_trace_or_with_unknown_key_raises():
    with pytest.raises(ValueError, match=r"'trace' is required"):
        run_points([{"preset": PRESET}])
    with pytest.raises(ValueError, match=r"unknown key\(s\) trace_fromat"):
        run_points([{"preset": PRESET, "trace": TPCC, "trace_fromat": "mqsim"}])


def test_pool_and_dask_localcluster_give_identical_frames(pool_frame, tmp_path):
    import distributed

    with (
        # Dask's scratch space (dask-scratch-space, of the scheduler and of every worker) goes
        # in the test's directory, not in $TMPDIR.
        dask_temporary_directory(tmp_path),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            local_directory=tmp_path,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        # With a precondition cache, which the workers share (tests/python/
        # test_precondition_cache.py tests it on the pool): the frame is the same.
        on_dask = small_sweep(client=client, precondition_cache=tmp_path / "drives")
        point = {"preset": PRESET, "trace": TPCC, "seed": 3, "max_requests": 100}
        [result] = run_points([point], client=client)
    expected = dict(flashlane.run(PRESET, TPCC, seed=3, max_requests=100), tags={})
    assert without_wall_clock(result) == without_wall_clock(expected)
    assert on_dask.equals(pool_frame)
    assert on_dask.columns == pool_frame.columns
    # One snapshot per drive: two over-provisioning values x two traces' footprints.
    assert len(list((tmp_path / "drives").glob("drive-*.snapshot"))) == 4


def dask_temporary_directory(path):
    """Dask's `temporary-directory` set to `path` while the context is open."""
    import dask

    return dask.config.set({"temporary-directory": str(path)})


def without_wall_clock(summary):
    summary = dict(summary, engine=dict(summary["engine"]))
    summary["precondition"] = dict(summary["precondition"])
    for section, key in (name.split(".") for name in WALL_CLOCK_COLUMNS):
        del summary[section][key]
    return summary


def test_workloads_and_replay_options_reach_the_run():
    spec = {
        "label": "tiny closed loop",
        "requests": 300,
        "read_fraction": 0.5,
        "arrival": {"kind": "closed_loop", "queue_depth_requests": 8},
        "size": {"kind": "fixed", "bytes": 8192},
        "address": {"kind": "uniform", "span_bytes": 1 << 26, "align_bytes": 8192},
    }
    frame = flashlane.sweep(
        PRESET,
        {"device.queue_depth_requests": [2, 64]},
        [{"workload": "hm_0"}, {"workload": spec}, {"trace": TPCC, "trace_format": "mqsim"}],
        max_requests=300,
        jobs=2,
    )
    assert frame["trace"].to_list() == (
        ["profile hm_0"] * 2 + ["workload tiny closed loop"] * 2 + [TPCC] * 2
    )
    assert frame["requests.completed"].to_list() == [300] * 6
    # The spec's closed-loop arrivals give closed-loop replay at its depth, as on the CLI.
    kinds = frame["run.replay.kind"].to_list()
    assert kinds == ["open_loop"] * 2 + ["closed_loop"] * 2 + ["open_loop"] * 2
    # Each row is the run flashlane.run gives for the same inputs.
    summary = flashlane.run(
        PRESET, overrides={"device.queue_depth_requests": 64}, workload=spec, max_requests=300
    )
    assert frame.row(3, named=True)["latency_us.all.mean"] == summary["latency_us"]["all"]["mean"]
    scaled = flashlane.run(PRESET, TPCC, max_requests=300, time_scale=0.25, addresses="fold")
    assert scaled["run"]["replay"] == {"kind": "open_loop", "time_scale": 0.25}
    assert scaled["run"]["addresses"] == "fold"
    assert scaled["sim_time_ns"] < frame.row(4, named=True)["sim_time_ns"]


def test_bad_workload_and_replay_options_raise_before_any_run():
    with pytest.raises(ValueError, match=r"workload profile `no_such_profile`"):
        run_points([{"preset": PRESET, "workload": ["hm_0", "no_such_profile"]}])
    with pytest.raises(ValueError, match=r"workload spec: .*read_fractoin"):
        run_points([{"preset": PRESET, "workload": {"read_fractoin": 0.5}}])
    with pytest.raises(ValueError, match=r"'addresses' must be one of strict, fold, remap"):
        run_points([{"preset": PRESET, "trace": TPCC, "addresses": "wrap"}])
    with pytest.raises(ValueError, match=r"'time_scale' must be a positive number"):
        run_points([{"preset": PRESET, "trace": TPCC, "time_scale": 0}])


def test_a_list_of_workloads_is_a_mix():
    [result] = run_points(
        [
            {
                "preset": PRESET,
                "workload": ["hm_0", "usr_0"],
                "trace": TPCC,
                "max_requests": 300,
                # A third of the space each: TPC-C's offsets need folding into its share.
                "addresses": "fold",
            }
        ]
    )
    labels = [source["path"] for source in result["sources"]]
    assert labels == [TPCC, "profile hm_0", "profile usr_0"]
    frame = flashlane.sweep(
        PRESET, {"seed": [1]}, [{"workload": ["hm_0", "usr_0"]}], max_requests=300, jobs=1
    )
    assert frame["trace"].to_list() == ["profile hm_0 + profile usr_0"]
    with pytest.raises(ValueError, match=r"each item must be a profile name"):
        run_points([{"preset": PRESET, "workload": ["hm_0", 3]}])
