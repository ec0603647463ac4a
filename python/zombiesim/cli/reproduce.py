"""`zombiesim reproduce PAPER`: run a seed paper's experiments at a chosen scale; print the
paper's numbers beside ours and write the report (HTML, claims CSV, one CSV per table)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from .. import reproduce
from .._errors import InputError, SimulationInterrupted, make_error
from .._format import seconds
from .._io import atomic_write
from .common import EXIT_CHECK_FAILED, EXIT_OK, interrupted, out, progress_bar
from .compare import multi_progress
from .parser import add_command, jobs_option, seed_option, writes

EPILOG = """\
papers:
  zombie-chasing    seed 000: locality and cache-size sweeps, read ratio, zombie block
                    breakdown, notification by command, OLTP (TPS and WAF)
  dead-value-pool   seed 001: pool size sweep, DVP vs dedup vs DVP+dedup vs ideal vs LX
  shadowgc          seed 003: GGC/ZGC/HGC/DGC/SGC on footprint stand-ins and the MSR
                    excerpt (WA, GC latency, relocated pages by state), Fig. 2's delay
                    and separation, refresh at a restart

examples:
  zombiesim reproduce zombie-chasing
  zombiesim reproduce zombie-chasing --scale full --out zc-full --jobs 4
  zombiesim reproduce dead-value-pool --strict
  zombiesim reproduce shadowgc --jobs 2
  zombiesim reproduce shadowgc --scale tiny --out /tmp/sgc-tiny

Writes DIR/report.html (plots, the paper's numbers beside ours, tables), DIR/claims.csv
and one CSV per result table. Each claim gets a verdict: met (direction, and magnitude
within its band: a factor of 2 of the paper's unless it states a range), direction-only,
explained (the reproduction includes the ablation that shows why it cannot be met) or
missed.
exit codes: 0 no claim missed (with --strict: every claim met), 1 a claim missed,
2 bad input, 130 interrupted (DIR/partial.json holds every run so far, each marked
whether it finished, and DIR/report.html shows them; the claims are not evaluated)
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "reproduce",
        cmd_reproduce,
        help="reproduce a seed paper's experiments; the paper's numbers beside ours",
        description="Run one paper's experiments (scaled) and compare with the paper.",
        epilog=EPILOG,
    )
    p.add_argument("paper", choices=list(reproduce.PAPERS), help="which paper")
    p.add_argument(
        "--scale",
        choices=reproduce.SCALES,
        default="small",
        help="small (minutes, the default), full (the paper's sizes) or, for shadowgc, "
        "ba-gc and vma-journaling, tiny (seconds)",
    )
    writes(
        p.add_argument("--out", metavar="DIR", help="output directory (./reproduce-PAPER)"), True
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 unless every claim is met (direction and magnitude)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    jobs_option(p)
    seed_option(p)


#: The page's verdict colours (green, amber, blue-grey, red) in the terminal.
VERDICT_STYLE = {
    "met": "green",
    "direction-only": "yellow",
    "explained": "steel_blue",
    "missed": "red",
}


def claims_table(rep: reproduce.Reproduction) -> Table:
    """The claims as the page shows them: the verdict beside ours."""
    table = Table(title=f"{rep.title} · scale {rep.scale}", title_justify="left")
    for name in ("experiment", "metric", "paper", "ours"):
        table.add_column(name, overflow="fold")
    table.add_column("verdict", justify="center")
    table.add_column("expected", overflow="fold")
    for c in rep.claims:
        mark = Text(c.verdict, style=f"bold {VERDICT_STYLE[c.verdict]}")
        table.add_row(c.experiment, c.metric, c.paper, c.ours, mark, c.expected)
    table.caption = rep.summary()
    table.caption_justify = "left"
    return table


def write_partial(target: Path, args: argparse.Namespace, reports: dict) -> list[Path]:
    """After Ctrl-C: `partial.json` (every run so far, each report marked whether it
    finished, and how far the reproduction got) and `report.html` of those runs."""
    from ..htmlreport import write_comparison_html

    target.mkdir(parents=True, exist_ok=True)
    finished = sum(not r.interrupted for r in reports.values())
    summary = {
        "paper": args.paper,
        "scale": args.scale,
        "seed": args.seed,
        "interrupted": True,
        "runs_finished": finished,
        "runs_started": len(reports),
        "claims": None,
        "reports": {label: json.loads(r.to_json()) for label, r in reports.items()},
    }
    partial = target / "partial.json"
    atomic_write(partial, json.dumps(summary, indent=1) + "\n")
    page = target / "report.html"
    write_comparison_html(
        page,
        reports,
        title=f"zombiesim reproduce {args.paper} (interrupted)",
        notes=f"Interrupted: {finished} of the {len(reports)} runs started had finished; "
        "the claims were not evaluated. Run the command again for the whole reproduction.",
        command=shlex.join(["zombiesim", *sys.argv[1:]]),
    )
    return [partial, page]


def cmd_reproduce(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    target = Path(args.out or f"reproduce-{args.paper}")
    if target.exists() and not target.is_dir():
        raise make_error(InputError, f"cannot write into `{target}`: not a directory", "io")
    started = time.monotonic()
    with progress_bar(args) as bar:
        try:
            rep = reproduce.run(
                args.paper,
                scale=args.scale,
                seed=args.seed,
                jobs=args.jobs,
                progress=multi_progress(bar),
                command=shlex.join(["zombiesim", *sys.argv[1:]]),
            )
        except SimulationInterrupted as e:
            bar.close()
            written = write_partial(target, args, e.reports)
            return interrupted(
                f"{sum(not r.interrupted for r in e.reports.values())} runs finished; "
                f"partial results in {', '.join(map(str, written))}; claims not evaluated"
            )
    out.print(claims_table(rep))
    for path in rep.write(target):
        out.print(Text(f"wrote {path}", style="dim"))
    out.print(f"finished in {seconds(time.monotonic() - started)}")
    if not rep.all_hold or (args.strict and not rep.all_met):
        return EXIT_CHECK_FAILED
    return EXIT_OK
