"""`zombiesim demo`: the zombie-aware GC headline of `zombiesim.demo`, its table and files."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from rich.text import Text

from .._errors import InputError, SimulationInterrupted, make_error
from .._format import duration, seconds
from .common import EXIT_OK, interrupted, out, progress_bar
from .compare import compare_table, multi_progress
from .parser import add_command, jobs_option, seed_option, writes

EPILOG = """\
Compares Zombie Chasing's four GC configurations (GC-GD, ZGC-GD, GC-CB, ZGC-CB) on its
micro-benchmark through a Linux-like page cache (the zombie-chasing preset at a quarter
of the paper's size) and writes DIR/demo.html (plots and table) and DIR/demo.csv.

examples:
  zombiesim demo
  zombiesim demo --out /tmp/demo --quick
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "demo",
        cmd_demo,
        help="zombie-aware GC vs greedy and cost-benefit; table + HTML report",
        description="The main job: Zombie Chasing's GC configurations on its "
        "micro-benchmark, on the embedded zombie-chasing preset at a quarter of the "
        "paper's size (an eighth with --quick).",
        epilog=EPILOG,
    )
    writes(
        p.add_argument(
            "--out",
            metavar="DIR",
            default="zombiesim-demo",
            help="output directory (./zombiesim-demo)",
        ),
        folder=True,
    )
    p.add_argument("--quick", action="store_true", help="a smaller device and cache (1/8 scale)")
    jobs_option(p)
    seed_option(p)


def cmd_demo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .._format import has_shadow
    from ..demo import run_demo
    from ..html.comparison import shadowgc_idle

    target = Path(args.out)
    if target.exists() and not target.is_dir():
        raise make_error(InputError, f"cannot write into `{target}`: not a directory", "io")
    with progress_bar(args) as bar:
        try:
            result = run_demo(
                target,
                quick=args.quick,
                jobs=args.jobs,
                seed=args.seed,
                progress=multi_progress(bar),
                command=shlex.join(["zombiesim", *sys.argv[1:]]),
            )
        except SimulationInterrupted:
            bar.close()
            return interrupted()
    out.print(
        compare_table(
            result.reports,
            f"demo: {result.workload} · seed {args.seed} · preset zombie-chasing "
            f"({'1/8' if args.quick else '1/4'} scale)",
        )
    )
    # The table's ShadowGC columns (zombie-aware runs relocate host-shadow pages) are
    # zeros when no scheme uses ShadowGC: one line says why.
    idle = shadowgc_idle(result.reports)
    if idle is not None and any(has_shadow(r) for r in result.reports.values()):
        out.print(Text(idle, style="dim"))
    if result.reference is not None:
        read_p99 = result.reports["gc-gd"].raw["latency"]["read"]["p99_us"] / 1e6
        ref_p99 = result.reference.raw["latency"]["read"]["p99_us"] / 1e6
        out.print(
            Text(
                f"latencies are queueing delays: the closed-loop threads saturate the device "
                f"(demo.html says why); GC-GD's read p99 {duration(read_p99)} with the suspend "
                f"scheduler, {duration(ref_p99)} with the prototype's fifo",
                style="dim",
            )
        )
    out.print(f"finished in {seconds(result.wall_s)}")
    out.print(Text(f"wrote {result.html_path}"))
    out.print(Text(f"wrote {result.csv_path}"))
    return EXIT_OK
