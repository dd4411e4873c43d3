"""The MQSim validation script's config mapping (no MQSim binary needed)."""

import importlib.util
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "mqsim_validate.py"


def load_script():
    spec = importlib.util.spec_from_file_location("mqsim_validate", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def test_ssd_xml_carries_the_preset_values():
    mv = load_script()
    config = mv.preset_config({})
    root = ET.fromstring(mv.mqsim_ssd_xml(config))
    dev = root.find("Device_Parameter_Set")
    flash = dev.find("Flash_Parameter_Set")
    assert dev.findtext("Flash_Channel_Count") == str(config["geometry"]["channels"])
    assert dev.findtext("Chip_No_Per_Channel") == str(config["geometry"]["chips_per_channel"])
    assert flash.findtext("Die_No_Per_Chip") == str(config["geometry"]["dies_per_chip"])
    assert flash.findtext("Page_Capacity") == str(config["geometry"]["page_bytes"])
    assert flash.findtext("Page_Program_Latency_MSB") == str(config["timing"]["page_program_ns"])
    assert dev.findtext("Channel_Transfer_Rate") == "333"
    assert dev.findtext("Plane_Allocation_Scheme") == "CWDP"
    assert dev.findtext("Transaction_Scheduling_Policy") == "OUT_OF_ORDER"
    assert dev.findtext("Ideal_Mapping_Table") == "false"
    assert dev.findtext("CMT_Capacity") == str(config["ftl"]["mapping_cache_bytes"])
    # MQSim's preconditioning fails on trace flows, so it is always off, and the preset starts
    # empty too
    assert dev.findtext("Enabled_Preconditioning") == "false"
    assert config["precondition"]["write_trace_footprint"] is False


def test_no_mapping_cache_maps_to_ideal_table_and_overrides_apply():
    mv = load_script()
    config = mv.preset_config({"ftl.mapping_cache_bytes": 0, "geometry.blocks_per_plane": 64})
    dev = ET.fromstring(mv.mqsim_ssd_xml(config)).find("Device_Parameter_Set")
    assert dev.findtext("Ideal_Mapping_Table") == "true"
    assert dev.find("Flash_Parameter_Set").findtext("Block_No_Per_Plane") == "64"


def test_workload_xml_replays_the_trace_once_without_cache(tmp_path):
    mv = load_script()
    trace = tmp_path / "t.trace"
    flow = ET.fromstring(mv.mqsim_workload_xml(mv.preset_config({}), trace)).find(
        "IO_Scenario/IO_Flow_Parameter_Set_Trace_Based"
    )
    assert flow.findtext("File_Path") == str(trace)
    assert flow.findtext("Device_Level_Data_Caching_Mode") == "TURNED_OFF"
    assert flow.findtext("Relay_Count") == "1"
    assert flow.findtext("Channel_IDs") == "0,1,2,3,4,5,6,7"


def test_without_mqsim_it_skips_with_a_message():
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert "skipped: no MQSim binary given" in done.stderr
    assert done.stdout == ""
