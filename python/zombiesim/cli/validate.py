"""`zombiesim validate`: simulated write amplification against the analytic models."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table
from rich.text import Text

from .._errors import SimulationInterrupted
from .._format import count, num
from ..api import validate
from .common import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    check_writable,
    interrupted,
    out,
    progress_bar,
    write_json,
)
from .parser import add_command, jobs_option, writes

EPILOG = """\
Runs uniform-random-write cases and checks the simulated write amplification against the
analytic models (within the tolerance shown).

examples:
  zombiesim validate              # quick set, about a second
  zombiesim validate --full -j 8 --json validation.json

exit codes: 0 all cases within tolerance, 1 a case is outside it, 130 interrupted
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "validate",
        cmd_validate,
        help="check simulated WAF against the analytic models",
        description="Check simulated write amplification against the analytic models.",
        epilog=EPILOG,
    )
    p.add_argument(
        "--full", action="store_true", help="the whole table (minutes) not the quick set"
    )
    jobs_option(p)
    writes(p.add_argument("--json", metavar="OUT", help="write the rows as JSON (`-` = stdout)"))
    p.add_argument("--quiet", "-q", action="store_true", help="no table, no progress bar")


def cmd_validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    check_writable(args.json)
    show = not args.quiet and args.json != "-"
    with progress_bar(args) as bar:

        def progress(done: int, total: int) -> None:
            bar.update("validate", f"validate ({done}/{total} cases)", done, total)

        try:
            df = validate(args.full, jobs=args.jobs, progress=progress)
        except SimulationInterrupted as e:
            bar.close()
            if args.json and e.report is not None:
                write_json(args.json, _rows_json(e.report))
            return interrupted()
    if args.json:
        write_json(args.json, _rows_json(df))
    ok = bool(df.attrs["ok"])
    if show:
        out.print(_validate_table(df))
        passed = int(df["ok"].sum())
        style = "green" if ok else "bold red"
        out.print(Text(f"{passed}/{len(df)} cases within tolerance", style=style))
    return EXIT_OK if ok else EXIT_CHECK_FAILED


def _validate_table(df: Any) -> Table:
    tol = df.attrs.get("tolerance", 0.02)
    table = Table(title=f"analytic validation (tolerance {tol * 100:.1f}%)", title_justify="left")
    table.add_column("policy", no_wrap=True)
    for heading in ("OP", "b", "blocks", "simulated", "analytic", "nominal", "error %"):
        table.add_column(heading, justify="right")
    table.add_column("ok", justify="center")
    for row in df.to_dict("records"):
        error = row.get("error")
        table.add_row(
            Text(str(row["policy"])),
            num(row["over_provisioning"], 3),
            str(row["pages_per_block"]),
            count(row["blocks"]),
            num(row["simulated_waf"], 3),
            num(_none(row.get("analytic_waf")), 3),
            num(_none(row.get("analytic_waf_nominal")), 3),
            "-" if _none(error) is None else f"{error * 100:.2f}",
            Text("yes", style="green") if row["ok"] else Text("NO", style="bold red"),
        )
    return table


def _none(value: Any) -> Any:
    """NaN (how pandas stores a JSON null in a float column) back to None."""
    return None if value is None or value != value else value


def _rows_json(df: Any) -> str:
    rows = [{k: _none(v) for k, v in row.items()} for row in df.to_dict("records")]
    return json.dumps(rows, indent=2)
