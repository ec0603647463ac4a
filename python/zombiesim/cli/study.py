"""`zombiesim study`: every scheme on every trace of the corpus (or the traces given), one
page with WAF, erases, each scheme's share of the oracle's gain, zombie lifetimes and
where each scheme lost (docs/lifetimes.md)."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from rich.table import Table

from .._errors import SimulationInterrupted
from ..studies import DEFAULT_SCHEMES, resolve_traces, study
from .common import EXIT_OK, interrupted, out
from .parser import add_command, jobs_option, key_value, name_list, reads, writes

EPILOG = f"""\
Each trace runs on a device of its own (its written pages fill 80% of the logical space,
256 KiB blocks, a fill and one drive of its own writes first, notifications
piggybacked) with one GC watermark for every scheme; a sweep per trace underneath, in
OUT/runs/NAME/ (a second call resumes), every trace's cells in one pool, the ceilings
first. Writes OUT/study.html, study.csv, study.json (and tuning.csv with --tune).

default schemes: {",".join(DEFAULT_SCHEMES)}

examples:
  zombiesim study --out study/                       # the whole corpus, every scheme
  zombiesim study pgbench sqlite-tpcc --schemes gc-gd,lzgc-gd,sepbit,oracle --out s/
  zombiesim study my.zst --set ftl.over_provisioning=0.14 --out s/
  zombiesim study --tune --out study/                # and the leave-one-out table
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "study",
        cmd_study,
        help="every scheme on every trace, one page (WAF, the oracle's share, lifetimes)",
        description="Run every scheme on every trace and write one page.",
        epilog=EPILOG,
    )
    reads(
        p.add_argument(
            "traces",
            nargs="*",
            metavar="TRACE",
            help="corpus entries, folders holding trace.zst, or native traces (default: the "
            "whole corpus)",
        ),
        folder=("trace.zst", "provenance.toml"),
    )
    p.add_argument("--schemes", type=name_list, metavar="A,B,...", help="the schemes to run")
    writes(
        p.add_argument("--out", "-o", metavar="DIR", default="study", help="output folder"), True
    )
    p.add_argument("--preset", metavar="NAME", default="default", help="the device preset")
    p.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        type=key_value,
        help="override one dotted key on every device (repeatable)",
    )
    reads(
        p.add_argument(
            "--corpus", metavar="DIR", help="the corpus folder (default: the checkout's)"
        )
    )
    p.add_argument(
        "--tune",
        action="store_true",
        help="also run each tunable of SepBIT, MiDAS, write-count and LZGC at each of its "
        "values and write the leave-one-out table (OUT/tuning.csv, a section of the page)",
    )
    jobs_option(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress, no table")


def cmd_study(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    traces = resolve_traces(args.traces, args.corpus)
    schemes = args.schemes or list(DEFAULT_SCHEMES)

    def progress(name: str, i: int, n: int) -> None:
        if not args.quiet:
            print(f"[{i}/{n}] {name} done", file=sys.stderr, flush=True)

    command = "zombiesim " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    try:
        rows = study(
            traces,
            out=args.out,
            schemes=schemes,
            preset=args.preset,
            sets=dict(args.set or []),
            jobs=args.jobs,
            command=command,
            progress=progress,
            tune=args.tune,
        )
    except SimulationInterrupted:
        return interrupted(f"finished cells are kept in {args.out}/runs/; run again to resume")
    if not args.quiet:
        out.print(_table(rows, schemes))
        out.print(f"wrote {args.out}/study.html, study.csv, study.json")
    return EXIT_OK


def _table(rows: list[dict[str, Any]], schemes: list[str]) -> Table:
    t = Table(title="WAF (share of the oracle's gain over GC-GD)")
    t.add_column("trace")
    for s in schemes:
        t.add_column(s, justify="right")
    for name in dict.fromkeys(r["trace"] for r in rows):
        cells = []
        for s in schemes:
            r = next((r for r in rows if r["trace"] == name and r["scheme"] == s), None)
            if r is None or r["waf"] is None or r["status"] != "ok":
                cells.append("failed" if r is not None else "")
                continue
            share = r.get("oracle_share")
            mark = "!" if r.get("lost") else ""
            cells.append(f"{r['waf']:.3f}{mark}" + (f" ({share:.0%})" if share is not None else ""))
        t.add_row(name, *cells)
    return t
