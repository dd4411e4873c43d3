"""PIQ's platforms and schemes: the `--set`s that both the figure sets (piq.py) and the
effect map (piq_map.py), and VIOS on PIQ's platform (vios.py, vios_map.py), run. One definition,
imported by each, so no paper module imports another paper module back.

The main platform, ``ssdsim``, is the ``ssdsim-platform`` preset as the public SSDsim fork with
PIQ runs it; ``host_queue`` and ``shared_queue`` are the earlier readings on the plain
``ssdsim-mlc-8x8`` preset (piq.py's docstring and docs/models/piq.md say what each is).
"""

from __future__ import annotations

PRESET = "ssdsim-platform"
# The earlier readings run on the plain SSD preset with these settings on top.
PLAIN_PRESET = "ssdsim-mlc-8x8"
BASE = ["precondition.fill_fraction=1.0", "device.scheduler.kind=ssdsim"]
PLATFORMS = {
    # The preset as it is: everything is in it.
    "ssdsim": [],
    "host_queue": [
        "host.queue_length_requests=64",
        "device.queue_depth_requests=64",
    ],
    "shared_queue": [
        "host.queue_length_requests=64",
        "host.queue_includes_outstanding=true",
        # Never the bound: the shared queue (at most 512 in the sweep) is.
        "device.queue_depth_requests=512",
    ],
}
PLATFORM_PRESETS = {"ssdsim": PRESET, "host_queue": PLAIN_PRESET, "shared_queue": PLAIN_PRESET}
# How the fork hands requests over under its PIQ (scheduling algorithm 1): every waiting
# request at once, only while every channel is idle; the order is the PIQ passes'.
FORK_PIQ = [
    "host.scheduler.issue_rule=ssdsim_passes",
    "host.handover_per_pass=all",
    "host.handover_needs_idle_channels=true",
]
SCHEMES = {
    "noop": ["host.scheduler.kind=noop"],
    # SSDsim's NOOP-D (scheduling algorithm 0): FIFO, one per pass, only with idle channels.
    "noop_d": ["host.scheduler.kind=noop", "host.handover_needs_idle_channels=true"],
    "rws": ["host.scheduler.kind=rws"],
    "piq_r": ["host.scheduler.kind=piq_r"],
    "piq_w": ["host.scheduler.kind=piq_w"],
    "piq": ["host.scheduler.kind=piq"],
    "piq_r_cycles": ["host.scheduler.kind=piq_r", "host.scheduler.batch_cycles=true"],
    "piq_w_cycles": ["host.scheduler.kind=piq_w", "host.scheduler.batch_cycles=true"],
    "piq_cycles": ["host.scheduler.kind=piq", "host.scheduler.batch_cycles=true"],
}
PLATFORM_SCHEMES = {
    "ssdsim": ["noop", "noop_d", "rws", "piq_r", "piq_w", "piq"],
    "host_queue": [s for s in SCHEMES if s != "noop_d"],
    # RWS never holds a request, so on the shared queue it issues exactly as NOOP does.
    "shared_queue": ["noop", "rws", "piq", "piq_cycles"],
}
#: The platform `reproduce piq --quick` runs and the effect map uses.
MAIN_PLATFORM = "ssdsim"


#: The earlier platforms ran our batch lists, the PIQ kinds' default before issue 31; they name
#: them, so their results stay what they were (docs/models/piq.md, "Two issue rules").
BATCH_LISTS = ["host.scheduler.issue_rule=batch_lists"]


def scheme_settings(platform: str, scheme: str) -> list[str]:
    """The `--set`s of one scheme on one platform: on ``ssdsim`` the RWS and PIQ kinds run as
    the fork's PIQ does (FORK_PIQ); on the earlier platforms with our batch lists
    (BATCH_LISTS)."""
    settings = list(SCHEMES[scheme])
    if scheme in ("noop", "noop_d"):
        return settings
    return settings + (FORK_PIQ if platform == "ssdsim" else BATCH_LISTS)
