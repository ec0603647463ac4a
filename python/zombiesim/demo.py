"""`zombiesim demo`: the main job on the embedded default preset.

Five victim policies on one skewed workload (90% of writes to 10% of the space), the same
request stream for each: a table on the terminal, `demo.html` (plots + table) and
`demo.csv` (one row per policy, every report field) in the output directory.

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

__all__ = ["DEMO_POLICIES", "DemoResult", "demo_setup", "run_demo"]

TITLE = "zombiesim demo: victim policies on a hot/cold workload"
DEMO_POLICIES = ["fifo", "greedy", "cost-benefit", "d-choices:10", "random"]
DEMO_WORKLOAD = "hotcold:r=0.9,f=0.1,drive_writes=3"
QUICK_WORKLOAD = "hotcold:r=0.9,f=0.1,drive_writes=1"
NOTES = (
    "Default preset (1 GiB, OP 7%), preconditioned with the workload itself; "
    "90% of writes go to 10% of the logical space. Cost-benefit, which weighs a block's "
    "age against its valid pages, should copy far fewer pages than greedy; FIFO and "
    "random, which ignore the valid count, are the baselines."
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
    """The demo's config and workload. `quick` keeps the device and shortens the run
    (1 drive write of random preconditioning and 1 measured, instead of 2 and 3)."""
    cfg = Config.preset("default").override({"precondition.pattern": "workload"})
    if quick:
        cfg = cfg.override({"precondition.random_drive_writes": 1})
        return cfg, QUICK_WORKLOAD
    return cfg, DEMO_WORKLOAD


def run_demo(
    out_dir: str | os.PathLike[str] = "zombiesim-demo",
    *,
    quick: bool = False,
    jobs: int | None = None,
    seed: int = DEFAULT_SEED,
    progress: MultiProgressFn | None = None,
) -> DemoResult:
    """Run the demo and write `demo.html` and `demo.csv` into `out_dir` (created if
    needed). Raises `SimulationInterrupted` on Ctrl-C (nothing is written then)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cfg, workload = demo_setup(quick)
    start = time.perf_counter()
    reports = compare_reports(
        cfg, workload=workload, policies=DEMO_POLICIES, seed=seed, jobs=jobs, progress=progress
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
    )
    atomic_write(csv_path, to_frame(reports).to_csv(index=False))
    return DemoResult(reports, html_path, csv_path, wall, workload, cfg)
