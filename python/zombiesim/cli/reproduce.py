"""`zombiesim reproduce PAPER`: run a seed paper's experiments at a chosen scale; print the
paper's numbers beside ours and write the report (HTML, claims CSV, one CSV per table)."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import textwrap
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

#: After the papers (which `epilog` lists from their modules).
EPILOG_TAIL = """\
examples:
  zombiesim reproduce zombie-chasing
  zombiesim reproduce zombie-chasing --scale full --out zc-full --jobs 4
  zombiesim reproduce dead-value-pool --strict
  zombiesim reproduce shadowgc --jobs 2
  zombiesim reproduce shadowgc --scale tiny --out /tmp/sgc-tiny

Writes DIR/report.html (plots, the paper's numbers beside ours, tables), DIR/claims.csv
and one CSV per result table. Each claim gets a verdict: met (direction, and magnitude
within its band: a factor of 2 of the paper's unless it states a range), direction-only,
explained (the reproduction includes the ablation that shows why it cannot be met),
missed, or not-run (an experiment could not run: a sample trace it reads is missing).
Every claim that is not met has a reason (a sentence and the docs section that says more)
printed after the table, in claims.csv and on the page.
exit codes: 0 no claim missed or not run (with --strict: every claim met), 1 a claim
missed or not run (a documented difference from the paper, or a missing sample trace: the
reasons say which), 2 bad input, 130 interrupted (DIR/partial.json holds every run so far,
each marked whether it finished, and DIR/report.html shows them; the claims are not
evaluated)
"""


def epilog(width: int = 88) -> str:
    """The help's list of papers, generated from their modules (what each reproduces, its
    scales, its default scale's time and verdicts), then `EPILOG_TAIL`."""
    lines = [
        textwrap.fill(
            f"papers (the time and verdicts are the default scale's, {reproduce.DEFAULT_SCALE}:"
            " the time on 2 cores with nothing else running, the verdicts with seed 1):",
            width,
        )
    ]
    for paper in reproduce.PAPERS:
        first = f"  {paper:<18}"
        # A number stays on the line of what it counts ("40 s", "14 met").
        text = re.sub(r"(\d) (?=\w)", "\\1\xa0", reproduce.describe(paper))
        entry = textwrap.fill(
            text,
            width,
            initial_indent=first,
            subsequent_indent=" " * len(first),
            break_on_hyphens=False,
        )
        lines.append(entry.replace("\xa0", " "))
    return "\n".join(lines) + "\n\n" + EPILOG_TAIL


def scale_help() -> str:
    """`--scale`'s help, from the papers' scales."""
    tiny = [p for p in reproduce.PAPERS if "tiny" in reproduce.scales(p)]
    return (
        f"{reproduce.DEFAULT_SCALE} (minutes, the default), full (the paper's sizes) or tiny "
        f"(seconds; {', '.join(tiny[:-1])} and {tiny[-1]}); each paper's scales are listed "
        "below"
    )


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "reproduce",
        cmd_reproduce,
        help="reproduce a seed paper's experiments; the paper's numbers beside ours",
        description="Run one paper's experiments (scaled) and compare with the paper.",
        epilog=EPILOG_TAIL,
    )
    p.add_argument("paper", choices=list(reproduce.PAPERS), help="which paper")
    scale = p.add_argument(
        "--scale",
        choices=reproduce.SCALES,
        default=reproduce.DEFAULT_SCALE,
        help="the scale (tiny, small or full; see below)",
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
    # The papers' modules say what the help lists; importing them all takes a few tenths
    # of a second, so only `--help` does.
    plain = p.format_help

    def format_help() -> str:
        p.epilog = epilog()
        scale.help = scale_help()
        return plain()

    p.format_help = format_help


#: The page's verdict colours (green, amber, blue-grey, red) in the terminal, and not-run's
#: magenta (the page leaves it uncoloured).
VERDICT_STYLE = {
    "met": "green",
    "direction-only": "yellow",
    "explained": "steel_blue",
    "missed": "red",
    "not-run": "magenta",
}


def claims_table(rep: reproduce.Reproduction) -> Table:
    """The claims as the page shows them: the verdict beside ours, each claim not met
    numbered (its reason follows the table: `reasons`)."""
    table = Table(title=f"{rep.title} · scale {rep.scale}", title_justify="left")
    for name in ("experiment", "metric", "paper", "ours"):
        table.add_column(name, overflow="fold")
    table.add_column("verdict", justify="center")
    table.add_column("expected", overflow="fold")
    n = 0
    for c in rep.claims:
        mark = Text(c.verdict, style=f"bold {VERDICT_STYLE[c.verdict]}")
        if c.verdict != "met":
            n += 1
            mark.append(f" [{n}]", style="dim")
        table.add_row(c.experiment, c.metric, c.paper, c.ours, mark, c.expected)
    table.caption = rep.summary()
    table.caption_justify = "left"
    return table


def reasons(rep: reproduce.Reproduction) -> list[Text]:
    """One line per claim not met, numbered as in the table: its verdict and its reason
    (a sentence and the docs section). Lines, not a table column: a reason stays whole and
    readable at any terminal width (the terminal wraps it, nothing cuts it)."""
    lines = []
    n = 0
    for c in rep.claims:
        if c.verdict == "met":
            continue
        n += 1
        line = Text(f"[{n}] ", style="dim")
        line.append(c.verdict, style=f"bold {VERDICT_STYLE[c.verdict]}")
        line.append(f" {c.experiment}, {c.metric}: {c.reason}")
        lines.append(line)
    return lines


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
    for line in reasons(rep):
        out.print(line, soft_wrap=True)
    for c in rep.not_run:
        out.print(
            Text(f"not run: {c.experiment}, {c.metric}: {c.reason}", style="bold magenta"),
            soft_wrap=True,
        )
    for path in rep.write(target):
        out.print(Text(f"wrote {path}", style="dim"))
    out.print(f"finished in {seconds(time.monotonic() - started)}")
    if not rep.all_hold or (args.strict and not rep.all_met):
        return EXIT_CHECK_FAILED
    return EXIT_OK
