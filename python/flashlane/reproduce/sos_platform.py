"""SOS's platform and device schedulers: the preset and the `--set`s of each scheduler that both
the figure sets (sos.py) and the effect map (sos_map.py) run, in one module each imports.
"""

from __future__ import annotations

PRESET = "sos-4x4"
#: The device schedulers the paper compares (in-order, hardware out-of-order, and SOS with
#: its two mechanisms alone and together).
CONFIGS = {
    "IOS": ["device.scheduler.kind=in_order"],
    "HOS": ["device.scheduler.kind=out_of_order"],
    "SOS(QSL)": [
        "device.scheduler.kind=sos",
        "device.scheduler.queue_size_leveller=true",
        "device.scheduler.write_hit_manager=false",
    ],
    "SOS(WHM)": [
        "device.scheduler.kind=sos",
        "device.scheduler.queue_size_leveller=false",
        "device.scheduler.write_hit_manager=true",
    ],
    "SOS": [
        "device.scheduler.kind=sos",
        "device.scheduler.queue_size_leveller=true",
        "device.scheduler.write_hit_manager=true",
    ],
}
