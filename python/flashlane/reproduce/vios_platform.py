"""VIOS's platform and configurations: the `--set`s that both the figure sets (vios.py) and the
effect map (vios_map.py) run, in one module each imports (vios.py's docstring says what the
platform is).
"""

from __future__ import annotations

from flashlane.reproduce import piq_platform

PRESET = piq_platform.PRESET
# The fork's hand-over under its PIQ, for every scheduler that reorders.
FORK_HANDOVER = ["host.handover_per_pass=all", "host.handover_needs_idle_channels=true"]
CONFIGS = {
    "noop": ["host.scheduler.kind=noop"],
    "piq": ["host.scheduler.kind=piq", *piq_platform.FORK_PIQ],
    "vios-": ["host.scheduler.kind=vios", *FORK_HANDOVER],
    "vios": [
        "host.scheduler.kind=vios",
        "ftl.block_choice=fastest_for_conflicts",
        *FORK_HANDOVER,
    ],
}
# Everything else is in the preset.
PLATFORM: list[str] = []
PAPER_TIMING = [
    "timing.page_program_ns=600000",
    "timing.page_read_ns=20000",
    "timing.block_erase_ns=1500000",
]

#: The results set's SSD: the plain preset, the platform's queueing from RESULTS_PLATFORMS.
RESULTS_PRESET = piq_platform.PLAIN_PRESET
RESULTS_PLATFORMS = {
    # SSDsim's device order with PIQ's `host_queue` reading (a host I/O queue of 64 in front of
    # SSDsim's request queue of 64): the first reading of the paper's platform.
    "ssdsim": ["device.scheduler.kind=ssdsim", *piq_platform.PLATFORMS["host_queue"]],
    # The same device with PIQ's `shared_queue` reading (the I/O queue is SSDsim's request
    # queue, outstanding requests included). Not in the default set.
    "ssdsim_shared": ["device.scheduler.kind=ssdsim", *piq_platform.PLATFORMS["shared_queue"]],
    # The preset's own device scheduler and queues (the first VIOS experiment).
    "default": [],
}


def settings(pe: int, config: str, platform: str | None = None) -> list[str]:
    """The `--set`s of one VIOS configuration at `pe` P/E cycles: the paper's timings, the
    drive filled, process variation on, the platform's and the scheduler's settings."""
    return [
        *PAPER_TIMING,
        "precondition.fill_fraction=1.0",
        "variation.enabled=true",
        f"variation.initial_pe_cycles={pe}",
        *(PLATFORM if platform is None else RESULTS_PLATFORMS[platform]),
        *CONFIGS[config],
    ]
