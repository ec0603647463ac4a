"""What the MQSim recipe (mqsim.py) gives both simulators: the matched device (`Device`,
with MQSim's logical capacity and translation blocks), the flash latencies and GC
threshold, the WAF mode's trace (`write_trace`), MQSim's device and workload XML and
zombiesim's TOML for the same model."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path

SECTOR = 512

# MQSim raises its per-plane GC threshold to its limit on GC victims in flight per plane
# (10, fixed where the SSD is built), whatever GC_Exec_Threshold asks for, and holds host
# writes to a plane back while it has fewer than 10 free blocks. GC that starts a few
# blocks above that keeps host writes flowing.
MQSIM_MIN_GC_THRESHOLD = 10
DEFAULT_GC_THRESHOLD = 16

# Flash latencies given to both (they change when things happen, not what is written).
READ_NS = 25_000
PROGRAM_NS = 200_000
ERASE_NS = 1_500_000
CHANNEL_MT_S = 333


@dataclass(frozen=True)
class Device:
    channels: int
    chips_per_channel: int
    blocks_per_plane: int
    pages_per_block: int
    page_size: int
    # MQSim's Overprovisioning_Ratio: logical = physical x (1 - op), plane by plane.
    mqsim_op: float
    gc_threshold_blocks: int

    @property
    def planes(self) -> int:
        return self.channels * self.chips_per_channel

    @property
    def sectors_per_page(self) -> int:
        return self.page_size // SECTOR

    def mqsim_logical_pages(self) -> int:
        """MQSim's logical capacity in pages (its Logical_Address_Partitioning_Unit)."""
        per_plane_sectors = int(
            self.blocks_per_plane
            * self.pages_per_block
            * self.sectors_per_page
            * (1.0 - self.mqsim_op)
        )
        return per_plane_sectors * self.planes // self.sectors_per_page

    def mqsim_translation_blocks(self) -> int:
        """Blocks per plane MQSim keeps out of the data cycle for translation pages.

        Even with `Ideal_Mapping_Table` (the whole table in SRAM, no translation
        traffic) MQSim writes the mapping table to flash when the simulation starts: one
        translation page per page_size / entry logical pages, entry = ceil((log2(physical
        pages) + sectors per page) / 8) bytes, spread over the planes like data. They stay
        valid, nothing rewrites them, and each plane keeps a translation write frontier
        open besides its host and GC frontiers: floor(translation pages on the plane /
        pages per block) + 1 blocks per plane."""
        physical = self.planes * self.blocks_per_plane * self.pages_per_block
        entry = math.ceil((math.log2(physical) + self.sectors_per_page) / 8)
        pages = self.mqsim_logical_pages() // (self.page_size // entry)
        per_plane = -(-pages // self.planes)
        return per_plane // self.pages_per_block + 1

    def zombiesim_op(self, withheld_per_plane: int) -> float:
        """zombiesim's over-provisioning (physical / logical - 1, over the blocks it
        uses) that gives MQSim's logical pages."""
        blocks = self.blocks_per_plane - withheld_per_plane
        physical = blocks * self.pages_per_block * self.planes
        # Half a page above MQSim's figure, so that floor(physical / (1 + op)) is it.
        return physical / (self.mqsim_logical_pages() + 0.5) - 1.0


def write_trace(
    path: Path, dev: Device, case: str, drive_writes: float, gap_ns: int, seed: int
) -> tuple[int, int]:
    """A sequential fill, then page-sized writes; (fill pages, all page writes)."""
    logical = dev.mqsim_logical_pages()
    spp = dev.sectors_per_page
    rng = random.Random(seed)
    n_random = round(drive_writes * logical)
    hot = max(1, logical // 5)

    def pages():
        yield from range(logical)
        for _ in range(n_random):
            if case == "uniform":
                yield rng.randrange(logical)
            elif rng.random() < 0.8:
                yield rng.randrange(hot)
            else:
                yield hot + rng.randrange(logical - hot)

    with path.open("w") as f:
        lines = []
        for i, lpn in enumerate(pages(), start=1):
            lines.append(f"{i * gap_ns} 0 {lpn * spp} {spp} 0\n")
            if len(lines) == 65536:
                f.writelines(lines)
                lines.clear()
        f.writelines(lines)
    return logical, logical + n_random


def mqsim_device_xml(dev: Device, overrides: dict[str, str] | None = None) -> str:
    """MQSim's ssdconfig.xml; `overrides` replace elements by name (--mqsim-set)."""
    overrides = dict(overrides or {})
    # MQSim's threshold is (unsigned)(GC_Exec_Threshold x blocks per plane): half a block
    # above the figure, so that rounding down gives it.
    gc_exec = (dev.gc_threshold_blocks + 0.5) / dev.blocks_per_plane
    flash = {
        "Flash_Technology": "SLC",
        "CMD_Suspension_Support": "NONE",
        "Page_Read_Latency_LSB": READ_NS,
        "Page_Read_Latency_CSB": READ_NS,
        "Page_Read_Latency_MSB": READ_NS,
        "Page_Program_Latency_LSB": PROGRAM_NS,
        "Page_Program_Latency_CSB": PROGRAM_NS,
        "Page_Program_Latency_MSB": PROGRAM_NS,
        "Block_Erase_Latency": ERASE_NS,
        "Block_PE_Cycles_Limit": 100000,
        "Suspend_Erase_Time": 700000,
        "Suspend_Program_Time": 100000,
        "Die_No_Per_Chip": 1,
        "Plane_No_Per_Die": 1,
        "Block_No_Per_Plane": dev.blocks_per_plane,
        "Page_No_Per_Block": dev.pages_per_block,
        "Page_Capacity": dev.page_size,
        "Page_Metadat_Capacity": 224,
    }
    device = {
        "Seed": 321,
        "Enabled_Preconditioning": "false",
        "Memory_Type": "FLASH",
        "HostInterface_Type": "NVME",
        "IO_Queue_Depth": 1024,
        "Queue_Fetch_Size": 512,
        # The flow's Device_Level_Data_Caching_Mode is TURNED_OFF: no write cache.
        "Caching_Mechanism": "ADVANCED",
        "Data_Cache_Sharing_Mode": "SHARED",
        "Data_Cache_Capacity": dev.page_size * 64,
        "Data_Cache_DRAM_Row_Size": 8192,
        "Data_Cache_DRAM_Data_Rate": 800,
        "Data_Cache_DRAM_Data_Busrt_Size": 4,
        "Data_Cache_DRAM_tRCD": 13,
        "Data_Cache_DRAM_tCL": 13,
        "Data_Cache_DRAM_tRP": 13,
        "Address_Mapping": "PAGE_LEVEL",
        "Ideal_Mapping_Table": "true",
        "CMT_Capacity": 1 << 30,
        "CMT_Sharing_Mode": "SHARED",
        "Plane_Allocation_Scheme": "CWDP",
        "Transaction_Scheduling_Policy": "OUT_OF_ORDER",
        "Overprovisioning_Ratio": dev.mqsim_op,
        "GC_Exec_Threshold": f"{gc_exec:.9f}",
        "GC_Block_Selection_Policy": "GREEDY",
        "Use_Copyback_for_GC": "false",
        "Preemptible_GC_Enabled": "false",
        "GC_Hard_Threshold": 0.001,
        # Read from the file but not passed to the GC unit, which keeps its defaults (on,
        # threshold 100). Its test compares block numbers rather than erase counts, so
        # static wear levelling runs now and then (once in the runs of the docs; it is
        # reported, and its page moves are among the flash reads counted as copies).
        "Dynamic_Wearleveling_Enabled": "false",
        "Static_Wearleveling_Enabled": "false",
        "Static_Wearleveling_Threshold": 100,
        "Preferred_suspend_erase_time_for_read": 700000,
        "Preferred_suspend_erase_time_for_write": 700000,
        "Preferred_suspend_write_time_for_read": 100000,
        "Flash_Channel_Count": dev.channels,
        "Flash_Channel_Width": 1,
        "Channel_Transfer_Rate": CHANNEL_MT_S,
        "Chip_No_Per_Channel": dev.chips_per_channel,
        "Flash_Comm_Protocol": "NVDDR2",
    }

    def body(d: dict, indent: str) -> str:
        return "".join(f"{indent}<{k}>{overrides.pop(k, v)}</{k}>\n" for k, v in d.items())

    xml = (
        '<?xml version="1.0" encoding="us-ascii"?>\n'
        "<Execution_Parameter_Set>\n"
        "\t<Host_Parameter_Set>\n"
        + body(
            {
                "PCIe_Lane_Bandwidth": 1.0,
                "PCIe_Lane_Count": 4,
                "SATA_Processing_Delay": 400000,
                "Enable_ResponseTime_Logging": "false",
                "ResponseTime_Logging_Period_Length": 1000000,
            },
            "\t\t",
        )
        + "\t</Host_Parameter_Set>\n"
        "\t<Device_Parameter_Set>\n"
        + body(device, "\t\t")
        + "\t\t<Flash_Parameter_Set>\n"
        + body(flash, "\t\t\t")
        + "\t\t</Flash_Parameter_Set>\n"
        "\t</Device_Parameter_Set>\n"
        "</Execution_Parameter_Set>\n"
    )
    if overrides:
        raise SystemExit(f"--mqsim-set: MQSim's ssdconfig.xml has no {', '.join(overrides)}")
    return xml


def mqsim_workload_xml(dev: Device, trace_name: str) -> str:
    flow = {
        "Priority_Class": "HIGH",
        "Device_Level_Data_Caching_Mode": "TURNED_OFF",
        "Channel_IDs": ",".join(str(c) for c in range(dev.channels)),
        "Chip_IDs": ",".join(str(c) for c in range(dev.chips_per_channel)),
        "Die_IDs": 0,
        "Plane_IDs": 0,
        "Initial_Occupancy_Percentage": 0,
        # Relative: MQSim names an XML element after it, and runs in the work folder.
        "File_Path": trace_name,
        "Percentage_To_Be_Executed": 100,
        "Relay_Count": 1,
        "Time_Unit": "NANOSECOND",
    }
    return (
        '<?xml version="1.0" encoding="us-ascii"?>\n'
        "<MQSim_IO_Scenarios>\n\t<IO_Scenario>\n\t\t<IO_Flow_Parameter_Set_Trace_Based>\n"
        + "".join(f"\t\t\t<{k}>{v}</{k}>\n" for k, v in flow.items())
        + "\t\t</IO_Flow_Parameter_Set_Trace_Based>\n\t</IO_Scenario>\n</MQSim_IO_Scenarios>\n"
    )


def zombiesim_toml(
    dev: Device,
    withheld_per_plane: int,
    timed: bool,
    fill: bool = False,
    random_drive_writes: float = 0.0,
    timing_extra: str = "",
    extra: str = "",
) -> str:
    """The matched TOML; `fill` and `random_drive_writes` precondition the device (the
    timing mode's warm-up, which MQSim gets in its trace); `timing_extra` goes at the
    end of [timing], `extra` (further tables) at the end. The timing mode puts MQSim's
    per-command host-interface and command-cycle figures there (HOST_OVERHEAD_KEYS,
    those keys zombiesim has)."""
    return f"""# The device MQSim is given (benches/peers/mqsim.py)
[flash]
channels = {dev.channels}
chips_per_channel = {dev.chips_per_channel}
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = {dev.blocks_per_plane}
pages_per_block = {dev.pages_per_block}
page_size = {dev.page_size}

[ftl]
kind = "page"
over_provisioning = {dev.zombiesim_op(withheld_per_plane)!r}
# MQSim's translation blocks ({withheld_per_plane} per plane)
reserved_blocks = {withheld_per_plane * dev.planes}
gc_frontier = "separate"
allocation = "stripe"

[gc]
policy = "greedy"
scope = "plane"
low_watermark = {dev.gc_threshold_blocks}
high_watermark = {dev.gc_threshold_blocks}

[timing]
enabled = {str(timed).lower()}
read_us = {READ_NS / 1000}
program_us = {PROGRAM_NS / 1000}
erase_us = {ERASE_NS / 1000}
channel_mb_s = {float(CHANNEL_MT_S)}
scheduler = "fifo"
{timing_extra}

[precondition]
fill = {str(fill).lower()}
random_drive_writes = {random_drive_writes!r}
pattern = "uniform"
steady_tolerance = 0.0
{extra}"""
