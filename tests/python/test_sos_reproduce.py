"""The SOS experiment set (flashlane.reproduce.sos): every workload of the paper, stand-ins
named as such, and the sweeps' arguments (no simulation runs here)."""

from flashlane.reproduce import sos, sos_map


def test_every_paper_workload_runs_under_every_scheduler():
    # The effect map's synthetic points (sos_map.py) are tested with the other maps.
    maps = {sos_map.FIGURE, sos_map.GC_FIGURE}
    points = [p for p in sos.points(quick=True) if p.figure not in maps]
    assert {p.workload for p in points} == {
        "Bonnie++",
        "Postmark",
        "Financial1",
        "Financial2",
        "WebSearch",
    }
    assert len(points) == len(sos.WORKLOADS) * len(sos.CONFIGS)
    for p in points:
        assert "--max-requests" in p.args
        assert p.args[p.args.index("--max-requests") + 1] == str(sos.QUICK_REQUESTS)
        # Stand-ins run from their profiles, traces from the shipped files.
        if sos.is_standin(p.workload):
            assert p.args[p.args.index("--profile") + 1] == p.workload
        else:
            assert "--trace" in p.args and "--remap-addresses" in p.args


def test_stand_ins_are_labelled_in_tables():
    assert sos.label("Financial2") == "Financial2 (stand-in)"
    assert sos.label("Financial1") == "Financial1"


def test_load_sweep_scales_time_or_depth():
    assert sos.load_args("Financial1", 256) == ("--time-scale", repr(1 / 256))
    assert sos.load_args("Postmark", 16) == ("--closed-loop", "16")
    full = sos.points(quick=False)
    loads = {p.tag("load") for p in full if p.figure == "load" and p.workload == "Financial1"}
    assert loads == set(sos.LOAD_FACTORS)
    sizes = {
        p.tag("write_buffer_bytes")
        for p in full
        if p.figure == "buffer" and p.workload == "WebSearch"
    }
    assert sizes == set(sos.BUFFER_SIZES_BYTES)
    # The buffer sweep of an open-loop workload runs at BUFFER_SWEEP_LOAD.
    buffered = next(p for p in full if p.figure == "buffer" and p.workload == "Financial1")
    assert buffered.args[buffered.args.index("--time-scale") + 1] == repr(1 / sos.BUFFER_SWEEP_LOAD)


def test_chip_sweep_covers_one_to_sixteen_chips():
    full = sos.points(quick=False)
    chips = [p for p in full if p.figure == "fig7chips"]
    assert {p.tag("chips") for p in chips} == {1, 2, 4, 8, 16}
    one = next(p for p in chips if p.tag("chips") == 1)
    assert "geometry.channels=1" in one.args and "geometry.chips_per_channel=1" in one.args
