"""`zombiesim demo`: the canned policy comparison of `zombiesim.demo`, its table and files."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.text import Text

from .._errors import InputError, SimulationInterrupted, make_error
from .._format import seconds
from .common import EXIT_OK, interrupted, out, progress_bar
from .compare import compare_table, multi_progress
from .parser import add_command, jobs_option, seed_option

EPILOG = """\
Compares victim policies (fifo, greedy, cost-benefit, d-choices:10, random) on the default
preset under a hot/cold workload (90% of writes to 10% of the space) and writes
DIR/demo.html (plots and table) and DIR/demo.csv.

examples:
  zombiesim demo
  zombiesim demo --out /tmp/demo --quick
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "demo",
        cmd_demo,
        help="compare policies on the default preset; table + HTML report",
        description="The main job on the embedded default preset.",
        epilog=EPILOG,
    )
    p.add_argument(
        "--out", metavar="DIR", default="zombiesim-demo", help="output directory (./zombiesim-demo)"
    )
    p.add_argument("--quick", action="store_true", help="a shorter run (same device)")
    jobs_option(p)
    seed_option(p)


def cmd_demo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..demo import run_demo

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
            )
        except SimulationInterrupted:
            bar.close()
            return interrupted()
    out.print(
        compare_table(
            result.reports, f"demo: {result.workload} · seed {args.seed} · preset default"
        )
    )
    out.print(f"finished in {seconds(result.wall_s)}")
    out.print(Text(f"wrote {result.html_path}"))
    out.print(Text(f"wrote {result.csv_path}"))
    return EXIT_OK
