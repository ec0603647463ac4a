"""The VMA journaling reproduction's experiments (`vma-journaling`): the journaling modes,
FTLs and benchmarks of the grid, the benchmarks' sizes and how each scale shrinks them and
stretches time, the devices, the ablation's variants and the grid of runs (`_runs`). The
choices are explained in the docstring of `vma_journaling`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..config import Config
from ._common import Context

MODES = ("writeback", "ordered", "journal", "vma")
FTLS = ("fast", "superblock", "dftl")
MICRO = ("seq_write", "rnd_write")
MACRO = ("postmark", "untar", "kernel_compile")
BENCHES = MICRO + MACRO
VMS = 8

#: DFTL's cached mapping table as a fraction of the logical pages (see `vma_journaling`'s
#: docstring).
CMT_FRACTION = 1.0
#: The fractions of the `dftl_cmt` sweep, on `CMT_BENCH`, journal and vma.
CMT_SWEEP = (0.25, 0.5, 0.75)
CMT_BENCH = "untar"

#: The benchmarks' keys at full scale (002 §IV; sizes as the workload's defaults).
FULL_BENCH: dict[str, dict[str, float]] = {
    "seq_write": {"size": 600 * 2**20, "append": 8 * 2**10},
    "rnd_write": {"file": 512 * 2**20, "io": 4 * 2**10, "total": 128 * 2**20},
    "postmark": {"files": 2000, "transactions": 20000},
    "untar": {"files": 25000, "dirs": 1500},
    "kernel_compile": {"objects": 1500, "headers": 2000},
}
#: Keys that do not shrink with the scale (a request's size, a file's size range).
FIXED_KEYS = {"append", "io"}
#: Keys whose values are counts (rounded to whole numbers) rather than sizes in bytes.
COUNT_KEYS = {"files", "transactions", "dirs", "objects", "headers"}

#: The benchmarks' CPU times at full scale (the workload's defaults).
UNTAR_CPU_US_PER_KIB = 50.0
COMPILE_MS = 40.0

FULL_MEMORY = 96 * 2**20
FULL_JOURNAL = 64 * 2**20


@dataclass(frozen=True)
class Scale:
    blocks_per_plane: int
    #: Every size (and count) of the benchmarks, the page cache and the journal is
    #: divided by this.
    divisor: int
    #: Run the `dftl_cmt` sweep.
    cmt_sweep: bool
    #: Run the grid again under each of `VARIANTS` (the `ablation` table).
    ablation: bool = False


SCALE_SETTINGS = {
    "tiny": Scale(2048, 128, cmt_sweep=True, ablation=True),
    "small": Scale(16384, 16, cmt_sweep=True, ablation=True),
    "full": Scale(262144, 1, cmt_sweep=False),
}

#: The variants of the `ablation` table: name -> (what it is, the keys it sets on every
#: run of the grid). The claims' grid ages the device as the preset does (a sequential
#: fill, then uniform random writes until the WAF settles, about one drive write) and
#: times everything the flash does.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "fill": (
        "aged by a sequential fill only",
        {"precondition.random_drive_writes": 0.0},
    ),
    "fill+quarter": (
        "aged by a sequential fill, then a quarter drive of uniform random writes",
        {"precondition.random_drive_writes": 0.25},
    ),
    "upkeep-untimed": (
        "GC, merges and translation pages take no device time (002's traces, recorded "
        "on disks: every FTL sees the same I/O stream)",
        {"timing.upkeep_time": False},
    ),
}
#: The claims' grid, as the `ablation` table names it.
CLAIMS_GRID = "claims"

#: How much faster than 002's Table II latencies the flash runs while the benchmarks
#: run: the sequential program bandwidth of one 2 KiB page per 263 us (7.8 MB/s) against
#: the ~60 MB/s of the magnetic disks 002 recorded its traces on (see `vma_journaling`'s
#: docstring).
DISK_SPEEDUP = 8.0


def stretch(s: Scale) -> float:
    """The factor on every time of a run at scale `s` (flash latencies, CPU times)."""
    return s.divisor / DISK_SPEEDUP


def _bytes(n: float) -> str:
    """A byte count as the workload's size syntax (whole KiB where it divides)."""
    n = int(n)
    if n % 2**20 == 0:
        return f"{n // 2**20}MiB"
    if n % 2**10 == 0:
        return f"{n // 2**10}KiB"
    return str(n)


def base_config(s: Scale) -> Config:
    cfg = Config.preset("vma-journaling")
    t = cfg.to_dict()["timing"]
    k = stretch(s)
    return cfg.override(
        {
            "flash.blocks_per_plane": s.blocks_per_plane,
            # The stretch of time (see `vma_journaling`'s docstring).
            "timing.read_us": t["read_us"] * k,
            "timing.program_us": t["program_us"] * k,
            "timing.erase_us": t["erase_us"] * k,
            "timing.channel_mb_s": t["channel_mb_s"] / k,
            "host.request_us": cfg.to_dict()["host"]["request_us"] * k,
        }
    )


def ftl_config(s: Scale, ftl: str, cmt_fraction: float = CMT_FRACTION) -> Config:
    cfg = base_config(s).override({"ftl.kind": ftl})
    if ftl == "dftl":
        pages = cfg.geometry["logical_pages"]
        cfg = cfg.override({"ftl.cmt_entries": max(1, math.ceil(pages * cmt_fraction))})
    return cfg


def partition_bytes(s: Scale) -> int:
    """One VM's partition: an eighth of the smallest logical space of the FTLs, whole MiB."""
    base = base_config(s)
    logical = min(base.override({"ftl.kind": k}).geometry["logical_pages"] for k in ("page", *FTLS))
    page = base.geometry["page_size"]
    return logical * page // VMS // 2**20 * 2**20


def workload(bench: str, mode: str, s: Scale, partition: int) -> str:
    keys = []
    for key, value in FULL_BENCH[bench].items():
        if key in FIXED_KEYS:
            keys.append(f"{key}={_bytes(value)}")
        elif key in COUNT_KEYS:
            keys.append(f"{key}={max(1, round(value / s.divisor))}")
        else:
            keys.append(f"{key}={_bytes(value / s.divisor)}")
    # CPU time per unit of work, stretched with the flash's latencies.
    if bench == "untar":
        keys.append(f"cpu={UNTAR_CPU_US_PER_KIB * stretch(s):g}")
    elif bench == "kernel_compile":
        keys.append(f"compile_ms={COMPILE_MS * stretch(s):g}")
    keys += [
        f"vms={VMS}",
        f"journal={mode}",
        f"partition={_bytes(partition)}",
        f"memory={_bytes(FULL_MEMORY / s.divisor)}",
        f"journal_size={_bytes(FULL_JOURNAL / s.divisor)}",
    ]
    return f"fs:{bench}," + ",".join(keys)


def _runs(ctx: Context, s: Scale) -> dict[str, tuple[Config, str]]:
    part = partition_bytes(s)
    runs: dict[str, tuple[Config, str]] = {}
    for ftl in FTLS:
        cfg = ftl_config(s, ftl)
        for bench in BENCHES:
            for mode in MODES:
                runs[f"{bench}/{ftl}/{mode}"] = (cfg, workload(bench, mode, s, part))
    if s.ablation:
        for variant, (_, keys) in VARIANTS.items():
            for ftl in FTLS:
                cfg = ftl_config(s, ftl).override(keys)
                for bench in BENCHES:
                    for mode in MODES:
                        runs[f"{bench}/{ftl}~{variant}/{mode}"] = (
                            cfg,
                            workload(bench, mode, s, part),
                        )
    if s.cmt_sweep:
        for frac in CMT_SWEEP:
            cfg = ftl_config(s, "dftl", frac)
            for mode in ("journal", "vma"):
                runs[f"{CMT_BENCH}/dftl@{frac:g}/{mode}"] = (
                    cfg,
                    workload(CMT_BENCH, mode, s, part),
                )
    return runs
