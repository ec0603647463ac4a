"""`zombiesim demo`: the headline of zombie-aware garbage collection, in one command.

000's four GC configurations (GC-GD, ZGC-GD, GC-CB, ZGC-CB) on its micro-benchmark (16
threads through a Linux-like page cache, 94% of writes to 6% of the space, half a read
per write), on the `zombie-chasing` preset scaled to a quarter: the same request stream
for each; a table on the terminal, `demo.html` (table, plots and the run) and `demo.csv` (one row
per scheme, every report field) in the output directory.

This module is self-contained so the demo can be swapped for another experiment without
touching the CLI: the CLI only calls `run_demo()` and prints what it returns.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from ._io import atomic_write
from .api import DEFAULT_SEED, MultiProgressFn, compare_reports, to_frame
from .config import Config
from .htmlreport import write_comparison_html
from .report import Report

__all__ = ["DEMO_SCHEMES", "DemoResult", "demo_setup", "run_demo"]

TITLE = "zombiesim demo: garbage collection that knows what the page cache holds"
DEMO_SCHEMES = ["gc-gd", "zgc-gd", "gc-cb", "zgc-cb"]
DEMO_WORKLOAD = "zc-micro:x=6,rw=0.5"
NOTES = (
    "Zombie Chasing (000) preset at a quarter of the paper's size (8 GB, 4 banks, DAC, "
    "per-bank GC; a 1 GiB page cache with Linux writeback defaults and 16 threads), "
    "preconditioned to the workload's steady state. The host tells the device which "
    "pages are dirty in its cache by piggybacking on read/write commands; ZGC-GD and "
    "ZGC-CB avoid copying those zombie pages and park the ones they must copy in a "
    "zombie block, so they copy fewer pages than GC-GD and GC-CB and finish sooner."
)


@dataclass(frozen=True)
class DemoResult:
    reports: dict[str, Report]
    html_path: Path
    csv_path: Path
    wall_s: float
    workload: str
    config: Config


def demo_setup(quick: bool = False) -> tuple[Config, str]:
    """The demo's config and workload: the `zombie-chasing` preset at a quarter of the
    paper's size (`quick`: an eighth, with half the cache)."""
    factor = 0.125 if quick else 0.25
    cfg = Config.preset("zombie-chasing").override(
        {
            "flash.blocks_per_plane": int(4096 * factor),
            "ftl.reserved_blocks": round(211 * factor),
            "host.cache": f"{int(4096 * factor)}MiB",
        }
    )
    return cfg, DEMO_WORKLOAD


def run_demo(
    out_dir: str | os.PathLike[str] = "zombiesim-demo",
    *,
    quick: bool = False,
    jobs: int | None = None,
    seed: int = DEFAULT_SEED,
    progress: MultiProgressFn | None = None,
    command: str | None = None,
) -> DemoResult:
    """Run the demo and write `demo.html` and `demo.csv` into `out_dir` (created if
    needed); `command` is the command line the page shows. Raises
    `SimulationInterrupted` on Ctrl-C (nothing is written then)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cfg, workload = demo_setup(quick)
    start = time.perf_counter()
    reports = compare_reports(
        cfg, workload=workload, schemes=DEMO_SCHEMES, seed=seed, jobs=jobs, progress=progress
    )
    wall = time.perf_counter() - start
    html_path, csv_path = out / "demo.html", out / "demo.csv"
    write_comparison_html(
        html_path,
        reports,
        title=TITLE,
        config_toml=cfg.to_toml(),
        workload=workload,
        seed=seed,
        notes=NOTES,
        command=command,
    )
    atomic_write(csv_path, to_frame(reports).to_csv(index=False))
    return DemoResult(reports, html_path, csv_path, wall, workload, cfg)
