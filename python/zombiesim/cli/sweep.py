"""`zombiesim sweep GRID.toml` (a grid of runs, resumable, on a process pool, Ray or Dask)
and `zombiesim report RESULTS/` (the HTML report of a results folder)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from .. import sweeps
from .._errors import ConfigError, InputError, make_error
from .._format import seconds, size
from .._progress import announce_started
from .common import EXIT_CHECK_FAILED, EXIT_OK, interrupted, out
from .parser import add_command, jobs_option, memory_option, reads, writes

SWEEP_EPILOG = """\
examples:
  zombiesim sweep grid.toml --out results/                 # process pool on all cores
  zombiesim sweep grid.toml --out results/ --dry-run       # the cells, memory and time each
  zombiesim sweep grid.toml --out results/ --engine ray    # a Ray cluster (--address)
  zombiesim sweep grid.toml --out results/ --engine dask --scheduler tcp://host:8786
  zombiesim report results/ --out report.html

A grid file (docs/sweeps.md):
  preset = "default"
  workload = "uniform:drive_writes=2"
  [axes]
  scheme = ["gc-gd", "zgc-gd"]
  "ftl.over_provisioning" = [0.07, 0.14, 0.28]

Results: OUT/cells/KEY.json per finished cell, OUT/results.parquet and .csv (one row per
cell), OUT/report.html. Running the same command again resumes: finished cells are read,
not run (a cell's key covers its configuration, workload or trace content, seed and the
zombiesim version). Ctrl-C keeps every finished cell and writes the table and report.
exit codes: 0 every cell ran, 1 a cell failed (the others still ran), 2 bad input
(grid, folder of another version), 130 interrupted (143 on SIGTERM)
"""

REPORT_EPILOG = """\
examples:
  zombiesim report results/                    # writes results/report.html
  zombiesim report results/ --out paper.html
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "sweep",
        cmd_sweep,
        help="run a grid of simulations (resumable; local, Ray or Dask)",
        description="Run every cell of a grid file; results as Parquet/CSV and an HTML report.",
        epilog=SWEEP_EPILOG,
    )
    reads(p.add_argument("grid", metavar="GRID.toml", help="the grid file"))
    writes(
        p.add_argument("--out", metavar="DIR", help="results folder (required unless --dry-run)"),
        folder=True,
    )
    p.add_argument(
        "--engine", choices=sweeps.ENGINES, default="local", help="where cells run (local)"
    )
    p.add_argument("--address", metavar="ADDR", help="--engine ray: the cluster to join")
    p.add_argument(
        "--scheduler", metavar="ADDR", help="--engine dask: the scheduler (tcp://host:8786)"
    )
    jobs_option(p)
    memory_option(p)
    p.add_argument(
        "--dry-run", action="store_true", help="list the cells with memory and time estimates"
    )
    p.add_argument("--retry-failed", action="store_true", help="run failed cells again")
    p.add_argument("--no-report", action="store_true", help="do not write OUT/report.html")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    r = add_command(
        sub,
        "report",
        cmd_report,
        help="the HTML report of a sweep's results folder",
        description="Write the tables and plots of a finished (or interrupted) sweep.",
        epilog=REPORT_EPILOG,
    )
    reads(
        r.add_argument("results", metavar="RESULTS", help="a sweep's --out folder"),
        folder=(sweeps.store.MANIFEST, "results.parquet", "results.csv"),
    )
    writes(r.add_argument("--out", metavar="OUT.html", help="where to write (RESULTS/report.html)"))


def _address(args: argparse.Namespace) -> str | None:
    if args.address and args.engine != "ray":
        raise make_error(ConfigError, "--address is for --engine ray", "config")
    if args.scheduler and args.engine != "dask":
        raise make_error(ConfigError, "--scheduler is for --engine dask", "config")
    return args.address or args.scheduler


class _Bar:
    """One progress bar across cells: done / running / failed / cached and the ETA; drawn
    only on a terminal."""

    def __init__(self, total: int, enabled: bool):
        self.progress = None
        if enabled:
            self.progress = Progress(
                TextColumn("sweep"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                console=Console(stderr=True),
                transient=True,
            )
            self.task = self.progress.add_task("sweep", total=total, counts="")
            self.progress.start()

    def __call__(self, counts: sweeps.Counts, eta: float | None) -> None:
        announce_started()
        if self.progress is None:
            return
        eta_text = f" · ETA {seconds(eta)}" if eta else ""
        text = (
            f"{counts.done} done · {counts.running} running · {counts.failed} failed · "
            f"{counts.cached} cached{eta_text}"
        )
        self.progress.update(self.task, completed=counts.finished, counts=text)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def cmd_sweep(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    grid = sweeps.load_grid(args.grid)
    address = _address(args)
    if args.dry_run:
        return _dry_run(grid, args)
    if not args.out:
        parser_error = "--out DIR is required (the results folder; --dry-run needs none)"
        raise make_error(ConfigError, parser_error, "config")
    started = time.monotonic()
    bar = _Bar(len(grid.cells), enabled=not args.quiet and sys.stderr.isatty())
    try:
        result = sweeps.run_grid(
            grid,
            args.out,
            engine=args.engine,
            jobs=args.jobs,
            address=address,
            retry_failed=args.retry_failed,
            max_memory=args.max_memory,
            command=shlex.join(["zombiesim", *sys.argv[1:]]),
            report=not args.no_report,
            on_progress=bar,
        )
    finally:
        bar.close()
    _print_table(result.frame, grid)
    for path in result.written:
        out.print(Text(f"wrote {path}", style="dim"))
    out.print(f"{result.counts.line()} in {seconds(time.monotonic() - started)}")
    if result.interrupted:
        return interrupted(
            f"{result.counts.finished} of {result.counts.total} cells kept in {args.out}; "
            "run the same command again to resume"
        )
    if result.counts.failed:
        failed = result.frame[result.frame["status"] == "failed"]
        for _, row in failed.head(5).iterrows():
            sys.stderr.write(f"zombiesim: cell {row['label']} failed: {row['error']}\n")
        return EXIT_CHECK_FAILED
    return EXIT_OK


def _dry_run(grid: sweeps.Grid, args: argparse.Namespace) -> int:
    frame = sweeps.plan(grid, args.out)
    table = Table(title=f"{grid.title}: {len(frame)} cells", title_justify="left")
    for name in ("cell", "state", "memory", "est. time"):
        table.add_column(name, justify="left" if name == "cell" else "right")
    for _, row in frame.iterrows():
        est = row["est_s"]
        table.add_row(
            row["label"],
            row["state"],
            size(row["memory_bytes"]),
            "?" if est is None or est != est else seconds(est),
        )
    out.print(table)
    todo = frame[frame["state"] == "to run"]
    total = todo["est_s"].dropna().sum()
    jobs = args.jobs or os.cpu_count() or 1
    out.print(
        f"{len(todo)} to run, {len(frame) - len(todo)} done or failed, {len(grid.skipped)} "
        f"skipped by filters; about {seconds(total / min(jobs, max(len(todo), 1)))} on "
        f"{jobs} worker(s); largest cell {size(frame['memory_bytes'].max())}"
    )
    for s in grid.skipped:
        out.print(Text(f"skipped: {s.axes_json()}: {s.reason}", style="dim"))
    if args.max_memory is not None:
        sweeps.runner.check_memory(grid, grid.cells, 1, args.max_memory)
    return EXIT_OK


def _print_table(frame, grid: sweeps.Grid, limit: int = 40) -> None:
    """One row per cell: its axis values, then the grid's metrics."""
    if frame.empty:
        return
    table = Table(title=grid.title, title_justify="left")
    for axis in grid.axes:
        table.add_column(axis)
    metrics = [m for m in grid.metrics if m in frame.columns]
    for m in metrics:
        table.add_column(m, justify="right")
    for _, row in frame.head(limit).iterrows():
        axes = [_fmt(row[f"axis.{a}"]) for a in grid.axes]
        if row["status"] != "ok":
            table.add_row(*axes, *["failed"] + [""] * (len(metrics) - 1))
            continue
        table.add_row(*axes, *[_fmt(row[m]) for m in metrics])
    if len(frame) > limit:
        table.caption = f"the first {limit} of {len(frame)} cells; all in results.csv"
    out.print(table)


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def cmd_report(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    store = sweeps.ResultsStore(args.results)
    if store.manifest() is None:
        raise make_error(
            InputError, f"{args.results}: not a sweep results folder (no sweep.json)", "io"
        )
    frame = sweeps.load(args.results)
    path = sweeps.write_report(store, frame, Path(args.out) if args.out else None)
    out.print(Text(f"wrote {path} ({len(frame)} cells)", style="dim"))
    return EXIT_OK
