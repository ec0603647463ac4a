"""zombiesim beside MQSim on the same trace: WAF, GC victims, programs, wall time, latencies.

A recipe run by hand (not in CI, not imported by the tests). It needs an MQSim
executable built from MQSim's own repository (https://github.com/CMU-SAFARI/MQSim),
given on the command line; nothing of MQSim is part of this project.

For each case it

1. writes one trace in MQSim's ASCII format (arrival time in ns, device, start LBA in
   512-byte sectors, size in sectors, 0 = write / 1 = read): a sequential fill of every
   logical page, then page-sized writes, uniform random (`uniform`) or 80 % of them to
   the first 20 % of the pages (`hotcold`), for a number of drive writes. zombiesim reads
   the same file as a DiskSim trace (`--format disksim --time-scale 1e-6`: MQSim's first
   column is nanoseconds, DiskSim's milliseconds);
2. writes MQSim's device and workload XML and zombiesim's TOML for the same model: one
   page size, page-level mapping with the whole table in SRAM (MQSim's
   `Ideal_Mapping_Table`), greedy victims, GC per plane started below the same number of
   free blocks, host and GC writes to separate open blocks, the same logical capacity,
   MQSim's translation blocks withheld from zombiesim, no write cache, no
   preconditioning (the fill comes from the trace);
3. runs MQSim, zombiesim in counting mode and zombiesim with its timing model on (the
   same latencies as MQSim), and prints the figures side by side.

    python benches/peers/mqsim.py --mqsim PATH/TO/MQSim
    python benches/peers/mqsim.py --mqsim PATH/TO/MQSim --cases uniform \\
        --channels 2 --chips-per-channel 2 --blocks-per-plane 512

Why these settings, and why MQSim's WAF comes out a little higher: docs/validation.md.

Timing mode (`--timing`): request latencies instead of WAF, on the same device and
settings, zombiesim timed with an open-loop replay (`interface.replay = "open"`, queue
depth 1024 as MQSim's `IO_Queue_Depth`). Cases: (a) random 4 KiB reads far apart on a
filled device (unloaded latency), (b) random 4 KiB writes at rising Poisson rates up to
saturation on an empty device (no GC), (c) 70/30 random reads and writes after a fill
and a drive write of random writes (GC running), (d) a sequential fill. MQSim replays a
warm-up (the fill, the random writes) from its trace, then pauses, then the measured
requests; zombiesim gets the warm-up as counting preconditioning and replays only the
measured requests, so its report's latencies (mean, p50, p99, p99.9) are theirs. Each
prints mean, p50, p99 and p99.9 of read and write latency and the throughput, MQSim
beside zombiesim, with ratios.

    python benches/peers/mqsim.py --mqsim PATH/TO/MQSim-with-log --timing
    python benches/peers/mqsim.py --mqsim PATH/TO/MQSim-with-log --timing \\
        --timed-cases mixed --mqsim-set Preemptible_GC_Enabled=true

MQSim build for the timing mode. MQSim's own output gives only averages per flow, so
the timing mode needs a build that writes one line per completed request, "arrival_ns
completion_ns 1|0" (1 = read), to the file named by the environment variable
MQSIM_REQUEST_LOG. In MQSim's `src/host/IO_Flow_Base.cpp`, function
`IO_Flow_Base::NVMe_consume_io_request`, right after `request_delay` is computed: open a
function-static `std::ofstream` on `getenv("MQSIM_REQUEST_LOG")` (or "/dev/null") and
write `request->Arrival_time`, `Simulator->Time()` and whether `request->Type` is
`Host_IO_Request_Type::READ`; add `#include <fstream>` and `#include <cstdlib>`. A
static object is flushed when MQSim returns from main, also when requests stay
unserved. Then `make` as usual. Nothing else changes; the WAF mode runs with it too.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

# The machine line is the benchmarks' own (benches/bench.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import cpu_model  # noqa: E402

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


def xml_value(text: str, name: str) -> int:
    """An attribute of MQSim's FTL element, or the text of a host element."""
    m = re.search(rf'\b{name}="([^"]*)"', text) or re.search(rf"<{name}>([^<]*)</{name}>", text)
    if m is None:
        raise SystemExit(f"MQSim's output has no {name}")
    return round(float(m.group(1)))


def run_mqsim(exe: Path, work: Path) -> dict:
    out = work / "workload_scenario_1.xml"
    out.unlink(missing_ok=True)
    log = work / "mqsim.log"
    t0 = time.perf_counter()
    with log.open("w") as f:
        # MQSim waits for a key press at the end: stdin is /dev/null.
        subprocess.run(
            [str(exe), "-i", "ssdconfig.xml", "-w", "workload.xml"],
            cwd=work,
            stdin=subprocess.DEVNULL,
            stdout=f,
            stderr=subprocess.STDOUT,
            check=True,
        )
    wall = time.perf_counter() - t0
    logged = log.read_text()
    if "ERROR" in logged or not out.exists():
        raise SystemExit(f"MQSim failed: see {log}")
    text = out.read_text()
    for name in (
        "Issued_Flash_Multiplane_Program_CMD",
        "Issued_Flash_Copyback_Program_CMD",
        "Issued_Flash_Read_CMD_For_Mapping",
        "Issued_Flash_Program_CMD_For_Mapping",
        "Read_Request_Count",
    ):
        if xml_value(text, name):
            raise SystemExit(f"MQSim's {name} is not 0: the counts below would not compare")
    programs = xml_value(text, "Issued_Flash_Program_CMD")
    # No host reads and no copyback: every flash read is a GC copy's (exact, where
    # Average_Page_Movement_For_GC is rounded).
    copies = xml_value(text, "Issued_Flash_Read_CMD")
    served = re.search(r"total requests serviced:\s*(\d+)", logged)
    return {
        "programs": programs,
        "erases": xml_value(text, "Issued_Flash_Erase_CMD"),
        "gc_victims": xml_value(text, "Total_GC_Executions"),
        "gc_copies": copies,
        "wl_runs": xml_value(text, "Total_WL_Executions"),
        # Host pages programmed: MQSim ends with the last few writes still held back
        # for want of free blocks, and does not program them.
        "host_writes": programs - copies,
        "requests": xml_value(text, "Write_Request_Count"),
        "served": int(served.group(1)) if served else None,
        "wall_s": wall,
    }


def run_zombiesim(exe: str, work: Path, trace: Path, config: Path, tag: str) -> dict:
    out = work / f"zombiesim-{tag}.json"
    cmd = [exe, "run", "--config", str(config), "--trace", str(trace), "--format", "disksim"]
    cmd += ["--time-scale", "1e-6", "--json", str(out), "--quiet"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    r = json.loads(out.read_text())
    return {
        "programs": r["flash"]["programs"],
        "erases": r["flash"]["erases"],
        "gc_victims": r["gc"]["victims"],
        "gc_copies": r["gc"]["pages_copied"],
        "host_writes": r["host"]["write_pages"],
        "logical_pages": r["device"]["logical_pages"],
        "wall_s": wall,
    }


def add_waf(r: dict, fill: int) -> None:
    host = r["host_writes"]
    r["waf"] = r["programs"] / host
    # No GC during the fill (the free blocks left after it are above the threshold), so
    # every copy belongs to the random phase.
    r["waf_after_fill"] = (host - fill + r["gc_copies"]) / (host - fill)


ROWS = [
    ("WAF (whole trace)", "waf", "{:.4f}"),
    ("WAF after the fill", "waf_after_fill", "{:.4f}"),
    ("host page writes", "host_writes", "{:,}"),
    ("flash programs", "programs", "{:,}"),
    ("GC victims", "gc_victims", "{:,}"),
    ("erases", "erases", "{:,}"),
    ("GC page copies", "gc_copies", "{:,}"),
    ("wall time (s)", "wall_s", "{:.1f}"),
]


def print_rows(head: list[str], body: list[list[str]]) -> None:
    """A plain table: the first column left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    for r in [head, *body]:
        cells = [
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        print("  " + "  ".join(cells))


def add_trace_options(p: argparse.ArgumentParser) -> None:
    """The generated trace's keys, shared with the SSDSim recipe."""
    p.add_argument(
        "--gap-us", type=int, default=5000, help="time between trace records (default %(default)s)"
    )
    p.add_argument(
        "--seed", type=int, default=1, help="the trace's random addresses (default %(default)s)"
    )


def print_table(case: str, fill: int, total: int, runs: dict) -> None:
    names = list(runs)
    print(f"\n{case}: {fill:,} fill writes, then {total - fill:,} random page writes")
    head = ["", *names]
    body = [[label, *(fmt.format(runs[n][key]) for n in names)] for label, key, fmt in ROWS]
    base = runs[names[0]]["waf_after_fill"]
    body.append(
        [
            f"WAF after the fill vs {names[0]}",
            *(f"{(runs[n]['waf_after_fill'] / base - 1) * 100:+.2f}%" for n in names),
        ]
    )
    print_rows(head, body)
    for n in names:
        r = runs[n]
        if r.get("wl_runs"):
            print(f"  {n}: {r['wl_runs']} static wear-levelling run(s), one erase each")
        if r.get("served") is not None and r["served"] != r["requests"]:
            waiting = r["requests"] - r["served"]
            print(f"  {n}: {waiting:,} of {r['requests']:,} host writes never served")


# ---------------------------------------------------------------------------------------
# Timing mode (--timing): request latencies of the same trace in both.

# MQSim's NVMe host interface and ONFI bus, as its source charges them per 4 KiB
# command with the default PCIe settings (1 GB/s per lane, 4 lanes; TLPs of at most 128
# bytes payload plus 28 bytes of header, link and framing overhead; every message rounded
# up to whole 4-byte lane cycles, whole ns). docs/validation.md gives the formulas with
# their places in MQSim's source. A read takes 1.300 us of PCIe and 0.310 us of command
# cycles on top of tR and the page transfer (38.898 us in all), a write 1.308 us and
# 0.361 us (213.957 us).
MQSIM_SUBMIT_US = 0.041  # SQ tail doorbell 8 ns, SQE read request 8 ns, 72-byte SQE 25 ns
MQSIM_COMPLETE_US = 0.011  # the 16-byte CQE (a write's data read request, 8 ns, is left out)
MQSIM_LINK_MB_S = 4096 / 1.248  # 4 KiB in 32 TLPs of 156 bytes, 4 bytes per ns: 1,248 ns
MQSIM_COMMAND_US = 0.31  # a read's command and address cycles (290 ns) and ready signal (20)

# The keys zombiesim takes those figures in, where it has them (`zombiesim run
# --print-config` lists what it has). Without them zombiesim charges no host interface
# and no command cycles, and the table shows MQSim's ~1.6 us per command as a difference.
HOST_OVERHEAD_KEYS = {
    ("interface", "submit_us"): MQSIM_SUBMIT_US,
    ("interface", "complete_us"): MQSIM_COMPLETE_US,
    ("interface", "link_mb_s"): MQSIM_LINK_MB_S,
    ("timing", "command_us"): MQSIM_COMMAND_US,
}

# Trace records of the timing mode: (arrival in ns, logical page, 1 = read / 0 = write).
Record = tuple[int, int, int]


@dataclass(frozen=True)
class TimedCase:
    """One timed case: a warm-up MQSim replays from its trace and zombiesim gets as
    preconditioning (so that its latency figures cover the measured requests only),
    then the measured requests."""

    key: str
    title: str
    fill: bool
    random_drive_writes: float
    measured: list[Record]


def poisson_times(n: int, iops: float, rng: random.Random) -> list[int]:
    """Arrival times in ns of a Poisson stream from 0: with evenly spaced arrivals a
    device below saturation queues nothing, and the rates would all show the bare
    service time."""
    t, out = 0.0, []
    for _ in range(n):
        out.append(round(t))
        t += rng.expovariate(iops) * 1e9
    return out


def timed_cases(dev: Device, args: argparse.Namespace) -> list[TimedCase]:
    logical = dev.mqsim_logical_pages()
    n = args.requests

    def rng(key: str) -> random.Random:
        """Each case's own stream: a case's trace does not depend on the others run."""
        return random.Random(f"{args.seed}-{key}")

    r = rng("reads")
    cases = [
        TimedCase(
            "reads",
            f"(a) random 4 KiB reads {args.read_gap_us} us apart, filled device",
            True,
            0.0,
            [(i * args.read_gap_us * 1000, r.randrange(logical), 1) for i in range(n)],
        )
    ]
    # Each rate starts from an empty device, where GC starts only once nearly every
    # block has been written: far more pages than the writes of one rate, so no GC.
    for iops in args.write_iops:
        r = rng(f"writes-{iops}")
        times = poisson_times(n, iops, r)
        cases.append(
            TimedCase(
                f"writes-{iops}",
                f"(b) random 4 KiB writes, Poisson {iops:,}/s, empty device",
                False,
                0.0,
                [(t, r.randrange(logical), 0) for t in times],
            )
        )
    r = rng("mixed")
    times = poisson_times(n, args.mixed_iops, r)
    cases.append(
        TimedCase(
            "mixed",
            f"(c) 70/30 random read/write, Poisson {args.mixed_iops:,}/s, after a fill and "
            f"{args.warmup_drive_writes} drive writes (GC running)",
            True,
            args.warmup_drive_writes,
            [(t, r.randrange(logical), int(r.random() < 0.7)) for t in times],
        )
    )
    cases.append(
        TimedCase(
            "fill",
            f"(d) sequential fill, 4 KiB writes {args.fill_gap_us} us apart, empty device",
            False,
            0.0,
            [(i * args.fill_gap_us * 1000, i, 0) for i in range(logical)],
        )
    )
    only = set(args.timed_cases.split(",")) if args.timed_cases else None
    return [c for c in cases if only is None or c.key.split("-")[0] in only]


def write_timed_traces(
    case: TimedCase, dev: Device, work: Path, warmup_gap_ns: int, drain_ns: int, seed: int
) -> tuple[Path, Path, int]:
    """MQSim's trace (warm-up, a pause, the measured requests) and zombiesim's (the
    measured requests from time 0); (MQSim's, zombiesim's, the measured start in ns).

    The pause lets MQSim finish the warm-up before the first measured arrival: it does
    no GC when idle, so the device enters the measured phase as zombiesim's counting
    preconditioning leaves it (the same fill and as many uniform random writes; the
    random addresses differ)."""
    spp = dev.sectors_per_page
    logical = dev.mqsim_logical_pages()
    rng = random.Random(seed + 1)
    mq, zs = work / f"{case.key}.mqsim.trace", work / f"{case.key}.zombiesim.trace"
    t = 0
    with mq.open("w") as f:
        warm = list(range(logical)) if case.fill else []
        warm += [rng.randrange(logical) for _ in range(round(case.random_drive_writes * logical))]
        for lpn in warm:
            t += warmup_gap_ns
            f.write(f"{t} 0 {lpn * spp} {spp} 0\n")
        start = t + drain_ns if warm else 0
        f.writelines(f"{start + at} 0 {lpn * spp} {spp} {rd}\n" for at, lpn, rd in case.measured)
    with zs.open("w") as f:
        f.writelines(f"{at} 0 {lpn * spp} {spp} {rd}\n" for at, lpn, rd in case.measured)
    return mq, zs, start


def summarize(lat_ns: list[int]) -> dict | None:
    """count, mean and nearest-rank percentiles in us (zombiesim's come from an HDR
    histogram of 3 significant digits)."""
    if not lat_ns:
        return None
    s = sorted(lat_ns)

    def pct(q: float) -> float:
        return s[max(0, math.ceil(q * len(s)) - 1)] / 1000

    return {
        "count": len(s),
        "mean_us": sum(s) / len(s) / 1000,
        "p50_us": pct(0.5),
        "p99_us": pct(0.99),
        "p999_us": pct(0.999),
    }


def run_mqsim_timed(
    exe: Path, dev: Device, work: Path, trace: Path, start_ns: int, n: int
) -> dict | None:
    """MQSim on one trace, with a build that logs every request (MQSIM_REQUEST_LOG);
    None when it stops with an error (a modified build may run out of free blocks)."""
    (work / "workload.xml").write_text(mqsim_workload_xml(dev, trace.name))
    log = work / f"{trace.stem}.requests"
    log.unlink(missing_ok=True)
    out = work / "mqsim.log"
    t0 = time.perf_counter()
    with out.open("w") as f:
        proc = subprocess.run(
            [str(exe), "-i", "ssdconfig.xml", "-w", "workload.xml"],
            cwd=work,
            stdin=subprocess.DEVNULL,
            stdout=f,
            stderr=subprocess.STDOUT,
            env={**os.environ, "MQSIM_REQUEST_LOG": str(log)},
        )
    wall = time.perf_counter() - t0
    errors = [ln for ln in out.read_text().splitlines() if "ERROR" in ln]
    if proc.returncode or errors:
        print(f"  {exe} stopped: {errors[-1] if errors else f'exit {proc.returncode}'}")
        return None
    if not log.exists():
        raise SystemExit(f"{exe} wrote no request log: it needs the logging change (--help)")
    lat: dict[int, list[int]] = {0: [], 1: []}
    last = start_ns
    with log.open() as f:
        for line in f:
            arrival, done, rd = (int(x) for x in line.split())
            if arrival >= start_ns:
                lat[rd].append(done - arrival)
                last = max(last, done)
    served = len(lat[0]) + len(lat[1])
    return {
        "read": summarize(lat[1]),
        "write": summarize(lat[0]),
        "iops": served / ((last - start_ns) / 1e9) if last > start_ns else 0.0,
        "unserved": n - served,
        "wall_s": wall,
    }


def run_zombiesim_timed(
    exe: str, work: Path, trace: Path, config: Path, tag: str, sets: list[str]
) -> dict:
    out = work / f"zombiesim-{tag}.json"
    cmd = [exe, "run", "--config", str(config), "--trace", str(trace), "--format", "disksim"]
    cmd += ["--time-scale", "1e-6", "--json", str(out), "--quiet"]
    for kv in sets:
        cmd += ["--set", kv]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    r = json.loads(out.read_text())

    def pick(d: dict | None) -> dict | None:
        if not d or not d["count"]:
            return None
        return {k: d[k] for k in ("count", "mean_us", "p50_us", "p99_us", "p999_us")}

    return {
        "read": pick(r["latency"]["read"]),
        "write": pick(r["latency"]["write"]),
        "iops": r["throughput"]["iops"],
        "unserved": 0,
        "wall_s": wall,
    }


def zombiesim_overheads(exe: str, mqsims: bool) -> tuple[str, str, list[str]]:
    """The keys of HOST_OVERHEAD_KEYS that zombiesim has, set to MQSim's figures (or,
    `mqsims` false, to 0: no such time at all, whatever zombiesim's defaults); ([timing]
    lines, [interface] lines, the keys it lacks)."""
    shown = tomllib.loads(
        subprocess.run(
            [exe, "run", "--set", "timing.enabled=true", "--print-config"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    lines: dict[str, list[str]] = {"timing": [], "interface": []}
    missing = []
    for (section, key), value in HOST_OVERHEAD_KEYS.items():
        if key in shown.get(section, {}):
            lines[section].append(f"{key} = {value if mqsims else 0.0!r}")
        else:
            missing.append(f"{section}.{key}")
    return "\n".join(lines["timing"]), "\n".join(lines["interface"]), missing


TIMED_ROWS = [("mean", "mean_us"), ("p50", "p50_us"), ("p99", "p99_us"), ("p99.9", "p999_us")]


def fmt_us(us: float) -> str:
    """Latencies in us below 10 ms, in ms above."""
    return f"{us:,.2f} us" if us < 10_000 else f"{us / 1000:,.1f} ms"


def print_timed(title: str, runs: dict) -> None:
    names = list(runs)
    base = names[0]
    print(f"\n{title}")
    head = ["", *names]
    for other in names[1:]:
        head.append(f"{other} / {base}")
    body = []
    for kind in ("read", "write"):
        if all(runs[n][kind] is None for n in names):
            continue
        for label, key in TIMED_ROWS:
            row = [f"{kind} {label}"]
            vals = [runs[n][kind][key] if runs[n][kind] else None for n in names]
            row += [fmt_us(v) if v is not None else "-" for v in vals]
            row += [f"{v / vals[0]:.3f}" if v is not None and vals[0] else "-" for v in vals[1:]]
            body.append(row)
    iops = [runs[n]["iops"] for n in names]
    body.append(["throughput (IOPS)", *(f"{v:,.0f}" for v in iops)])
    body[-1] += [f"{v / iops[0]:.3f}" if iops[0] else "-" for v in iops[1:]]
    body.append(["wall time (s)", *(f"{runs[n]['wall_s']:.1f}" for n in names)])
    body[-1] += [""] * (len(names) - 1)
    print_rows(head, body)
    for n in names:
        if runs[n]["unserved"]:
            print(f"  {n}: {runs[n]['unserved']:,} measured requests never served")


def main_timing(args: argparse.Namespace, dev: Device, mqsims: dict[str, Path]) -> int:
    """The timing mode: the four cases of timed_cases, MQSim beside zombiesim timed."""
    withheld = dev.mqsim_translation_blocks()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="zombiesim-mqsim-timing-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "ssdconfig.xml").write_text(mqsim_device_xml(dev, args.mqsim_set))
    timing_extra, interface_extra, missing = zombiesim_overheads(
        args.zombiesim, not args.no_host_overheads
    )
    # MQSim's IO_Queue_Depth; arrivals beyond it wait in the host, as in zombiesim's
    # open replay, and both count the wait in the latency.
    interface = f'[interface]\nqueue_depth = 1024\nreplay = "open"\n{interface_extra}\n'
    print(
        f"device: {dev.planes} plane(s) x {dev.blocks_per_plane} blocks x "
        f"{dev.pages_per_block} pages x {dev.page_size} B ({dev.mqsim_logical_pages():,} "
        f"logical pages), GC below {dev.gc_threshold_blocks} free blocks per plane"
    )
    for name, value in args.mqsim_set.items():
        print(f"MQSim: {name} = {value}")
    for kv in args.zombiesim_set:
        print(f"zombiesim: {kv}")
    if args.no_host_overheads:
        print("zombiesim: no host-interface or command-cycle time (--no-host-overheads)")
    if missing:
        print(f"zombiesim lacks {', '.join(missing)}: no such time in its runs")
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; work folder {work}")
    results = {}
    for case in timed_cases(dev, args):
        mq, zs, start = write_timed_traces(
            case, dev, work, args.warmup_gap_us * 1000, round(args.drain_s * 1e9), args.seed
        )
        n = len(case.measured)
        runs = {}
        for label, path in mqsims.items():
            r = run_mqsim_timed(path, dev, work, mq, start, n)
            if r is not None:
                runs[label] = r
        config = work / f"zombiesim-{case.key}.toml"
        config.write_text(
            zombiesim_toml(
                dev,
                withheld,
                timed=True,
                fill=case.fill,
                random_drive_writes=case.random_drive_writes,
                timing_extra=timing_extra,
                extra=interface,
            )
        )
        runs["zombiesim"] = run_zombiesim_timed(
            args.zombiesim, work, zs, config, case.key, args.zombiesim_set
        )
        results[case.key] = {"title": case.title, "requests": n, "runs": runs}
        print_timed(f"{case.title}: {n:,} requests", runs)
    write_json(args, results)
    return 0


def write_json(args: argparse.Namespace, results: dict) -> None:
    """`--json`: the figures, the settings that made them and the machine."""
    if not args.json:
        return
    settings = {k: v for k, v in vars(args).items() if k not in ("json", "workdir")}
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in settings.items()}
    doc = {"settings": settings, "machine": cpu_model(), "results": results}
    args.json.write_text(json.dumps(doc, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--mqsim", type=Path, required=True, help="a built MQSim executable")
    p.add_argument(
        "--also-mqsim",
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="another MQSim executable (a modified build) to run beside it (repeatable)",
    )
    p.add_argument(
        "--zombiesim",
        default=shutil.which("zombiesim") or str(Path(sys.executable).parent / "zombiesim"),
        help="the zombiesim CLI (default: the one on PATH, else beside this Python)",
    )
    p.add_argument(
        "--cases",
        default="uniform,hotcold",
        help="comma list of uniform, hotcold (default %(default)s)",
    )
    p.add_argument("--channels", type=int, default=1, help="(default %(default)s)")
    p.add_argument("--chips-per-channel", type=int, default=1, help="(default %(default)s)")
    p.add_argument("--blocks-per-plane", type=int, default=2048, help="(default %(default)s)")
    p.add_argument("--pages-per-block", type=int, default=256, help="(default %(default)s)")
    p.add_argument("--page-size", type=int, default=4096, help="bytes (default %(default)s)")
    p.add_argument(
        "--op",
        type=float,
        default=0.0625,
        help="MQSim's Overprovisioning_Ratio, 1 - logical / physical (default %(default)s)",
    )
    p.add_argument(
        "--gc-threshold",
        type=int,
        default=DEFAULT_GC_THRESHOLD,
        help=f"GC starts below this many free blocks in a plane (MQSim: at least "
        f"{MQSIM_MIN_GC_THRESHOLD}; default %(default)s)",
    )
    p.add_argument(
        "--drive-writes",
        type=float,
        default=3.0,
        help="random writes after the fill (default %(default)s)",
    )
    add_trace_options(p)
    p.add_argument(
        "--no-withhold",
        action="store_true",
        help="also run zombiesim without MQSim's translation blocks withheld",
    )
    p.add_argument("--no-timed", action="store_true", help="skip zombiesim's timed run")
    p.add_argument(
        "--mqsim-set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set an element of MQSim's ssdconfig.xml, e.g. PCIe_Lane_Bandwidth=1000 or "
        "Preemptible_GC_Enabled=true (repeatable)",
    )
    tg = p.add_argument_group(
        "timing mode",
        "--timing compares request latencies instead of WAF. MQSim must then be a build "
        "that logs each request: in IO_Flow_Base::NVMe_consume_io_request, one line "
        "'arrival_ns completion_ns 1|0' (1 = read) per request to the file named by "
        "$MQSIM_REQUEST_LOG (this script's docstring, 'MQSim build', has the details)",
    )
    tg.add_argument("--timing", action="store_true", help="run the timed cases (a)-(d)")
    tg.add_argument(
        "--timed-cases",
        default="",
        help="comma list of reads, writes, mixed, fill (default: all)",
    )
    tg.add_argument(
        "--requests",
        type=int,
        default=20_000,
        help="measured requests of (a)-(c) (default %(default)s)",
    )
    tg.add_argument(
        "--read-gap-us",
        type=int,
        default=1000,
        help="(a): time between reads (default %(default)s)",
    )
    tg.add_argument(
        "--write-iops",
        default="1000,2000,3000,4000,4500,5000",
        help="(b): mean arrival rates, comma list (default %(default)s)",
    )
    tg.add_argument(
        "--mixed-iops", type=int, default=400, help="(c): mean arrival rate (default %(default)s)"
    )
    tg.add_argument(
        "--warmup-drive-writes",
        type=float,
        default=1.0,
        help="(c): random writes after the fill, before the measured requests "
        "(default %(default)s)",
    )
    tg.add_argument(
        "--warmup-gap-us",
        type=int,
        default=5000,
        help="MQSim's warm-up writes: time between them (default %(default)s)",
    )
    tg.add_argument(
        "--drain-s",
        type=float,
        default=60.0,
        help="MQSim: pause between warm-up and measured requests (default %(default)s)",
    )
    tg.add_argument(
        "--fill-gap-us",
        type=int,
        default=100,
        help="(d): time between the fill's writes; below the ~213 us a write takes, the "
        "fill runs at the device's pace (default %(default)s)",
    )
    tg.add_argument(
        "--zombiesim-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a key of zombiesim's matched TOML, e.g. gc.max_victims_per_trigger=1 "
        "(repeatable)",
    )
    tg.add_argument(
        "--no-host-overheads",
        action="store_true",
        help="set zombiesim's host-interface and command-cycle keys (where it has them) to 0 "
        "instead of MQSim's figures",
    )
    p.add_argument(
        "--workdir", type=Path, help="traces, configs and outputs (default: a new temp dir)"
    )
    p.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = p.parse_args(argv)

    mqsims = {"MQSim": args.mqsim}
    for spec in args.also_mqsim:
        label, sep, path = spec.partition("=")
        if not sep:
            p.error(f"--also-mqsim {spec}: expected LABEL=PATH")
        mqsims[label] = Path(path)
    for label, path in mqsims.items():
        if not os.access(path, os.X_OK):
            p.error(f"{label}: {path} is not an executable")
        mqsims[label] = path.resolve()
    overrides = {}
    for spec in args.mqsim_set:
        name, sep, value = spec.partition("=")
        if not sep:
            p.error(f"--mqsim-set {spec}: expected NAME=VALUE")
        overrides[name] = value
    args.mqsim_set = overrides
    try:
        args.write_iops = [int(x) for x in args.write_iops.split(",") if x.strip()]
    except ValueError:
        p.error("--write-iops: a comma list of integers")
    if args.gc_threshold < MQSIM_MIN_GC_THRESHOLD:
        p.error(f"--gc-threshold: MQSim's is at least {MQSIM_MIN_GC_THRESHOLD}")
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    for c in cases:
        if c not in ("uniform", "hotcold"):
            p.error(f"--cases: unknown case {c!r}")

    dev = Device(
        channels=args.channels,
        chips_per_channel=args.chips_per_channel,
        blocks_per_plane=args.blocks_per_plane,
        pages_per_block=args.pages_per_block,
        page_size=args.page_size,
        mqsim_op=args.op,
        gc_threshold_blocks=args.gc_threshold,
    )
    if args.timing:
        return main_timing(args, dev, mqsims)
    withheld = dev.mqsim_translation_blocks()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="zombiesim-mqsim-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "ssdconfig.xml").write_text(mqsim_device_xml(dev, args.mqsim_set))
    configs = {"zombiesim": work / "zombiesim.toml"}
    configs["zombiesim"].write_text(zombiesim_toml(dev, withheld, timed=False))
    if not args.no_timed:
        configs["zombiesim timed"] = work / "zombiesim-timed.toml"
        configs["zombiesim timed"].write_text(zombiesim_toml(dev, withheld, timed=True))
    if args.no_withhold:
        configs["zombiesim, none withheld"] = work / "zombiesim-none-withheld.toml"
        configs["zombiesim, none withheld"].write_text(zombiesim_toml(dev, 0, timed=False))

    print(
        f"device: {dev.planes} plane(s) x {dev.blocks_per_plane} blocks x "
        f"{dev.pages_per_block} pages x {dev.page_size} B, MQSim OP {dev.mqsim_op} "
        f"({dev.mqsim_logical_pages():,} logical pages), GC below {dev.gc_threshold_blocks} "
        f"free blocks per plane, {withheld} translation block(s) per plane withheld from "
        f"zombiesim; {args.drive_writes} drive writes after the fill"
    )
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; work folder {work}")
    results = {}
    for case in cases:
        trace = work / f"{case}.trace"
        gap_ns = args.gap_us * 1000
        fill, total = write_trace(trace, dev, case, args.drive_writes, gap_ns, args.seed)
        (work / "workload.xml").write_text(mqsim_workload_xml(dev, trace.name))
        runs = {label: run_mqsim(path, work) for label, path in mqsims.items()}
        for label, config in configs.items():
            tag = case + "-" + config.stem
            runs[label] = run_zombiesim(args.zombiesim, work, trace, config, tag)
        for label, r in runs.items():
            add_waf(r, fill)
            lp = r.get("logical_pages")
            if lp is not None and lp != dev.mqsim_logical_pages():
                print(f"warning: {label} has {lp} logical pages, MQSim {dev.mqsim_logical_pages()}")
        results[case] = runs
        print_table(case, fill, total, runs)
    write_json(args, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
