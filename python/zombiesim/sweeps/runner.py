"""Running a grid: skip what is done, run the rest on an engine, write each cell as it
finishes, and on Ctrl-C keep everything finished and say how far it got.

```text
grid ─▶ cells ─▶ keys ─┬─ in cells/       cached: read, not run
                       ├─ in failed/      failed before: kept (rerun with retry_failed)
                       └─ the rest ─▶ engine ─▶ outcome ─▶ cells/KEY.json | failed/KEY.json
                                                       └─▶ progress (done/running/failed/cached)
end or Ctrl-C ─▶ sweep.json (status) ─▶ results.parquet + results.csv ─▶ report.html
```
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _core
from .._errors import ConfigError, make_error
from ..trace import parse_size
from .cells import cell_key, task_for
from .engines import Engine, make_engine
from .grid import Cell, Grid
from .store import ResultsStore

__all__ = [
    "Counts",
    "ProgressFn",
    "SweepOutcome",
    "check_memory",
    "run_grid",
    "run_grids",
    "write_report",
]


@dataclass
class Counts:
    """Where the cells of a sweep stand."""

    total: int = 0
    done: int = 0
    cached: int = 0
    failed: int = 0
    running: int = 0

    @property
    def finished(self) -> int:
        return self.done + self.cached + self.failed

    def line(self) -> str:
        return f"{self.done} run, {self.cached} cached, {self.failed} failed of {self.total} cells"


@dataclass
class SweepOutcome:
    store: ResultsStore
    frame: Any
    counts: Counts
    interrupted: bool = False
    written: list[Path] = field(default_factory=list)


#: `on_progress(counts, eta_s)`: called as cells finish (and every ~0.2 s).
ProgressFn = Callable[[Counts, float | None], None]


def check_memory(grid: Grid, cells: list[Cell], workers: int, limit: int | str | None) -> None:
    """Refuse a cell whose state alone exceeds `limit` (default: the memory available
    now ÷ workers), before anything runs, naming the cell and the largest part's key."""
    if limit is not None:
        limit = parse_size(limit, "max_memory")
    else:
        available = _core.available_memory()
        limit = available // max(1, workers) if available else None
    if limit is None:
        return
    for cell in cells:
        total, parts = _core.memory_estimate(cell.config.core, grid.verify)
        if total > limit:
            what, key, _ = max(parts, key=lambda p: p[2])
            raise make_error(
                ConfigError,
                f"cell {cell.label}: about {total / 2**20:,.0f} MiB of simulator state, over "
                f"the {limit / 2**20:,.0f} MiB each of {workers} worker(s) may use (mostly "
                f"{what}: change `{key}`, run fewer --jobs, or raise --max-memory)",
                key,
            )


def run_grid(
    grid: Grid,
    out: str | Path,
    *,
    engine: str | Engine = "local",
    jobs: int | None = None,
    address: str | None = None,
    retry_failed: bool = False,
    max_memory: int | str | None = None,
    command: str | None = None,
    report: bool = True,
    on_progress: ProgressFn | None = None,
) -> SweepOutcome:
    """Run `grid` into the folder `out` (see `store`); returns the table of every cell that
    has run, with the counts. Ctrl-C (or SIGTERM, which the CLI turns into Ctrl-C) stops
    the running cells, keeps what finished, writes the table and report, and returns
    with `interrupted` set: running the grid again resumes."""
    return run_grids(
        [(grid, out)],
        engine=engine,
        jobs=jobs,
        address=address,
        retry_failed=retry_failed,
        max_memory=max_memory,
        command=command,
        report=report,
        on_progress=on_progress,
    )[0]


@dataclass
class _Sweep:
    """One grid's part of a run: its folder, its cells' keys, what is left to do."""

    grid: Grid
    store: ResultsStore
    manifest: dict[str, Any]
    counts: Counts
    todo: dict[str, Cell]
    per_key: dict[str, int]
    pending: int = 0


def _open(grid: Grid, out: str | Path, retry_failed: bool, command: str | None) -> _Sweep:
    store = ResultsStore(out)
    store.open_for_writing()
    digests: dict[str, str] = {}
    keys = [cell_key(c, grid.verify, digests) for c in grid.cells]
    manifest = _manifest(grid, keys, command)
    store.write_manifest({**manifest, "status": "running"})
    counts = Counts(total=len(keys))
    todo: dict[str, Cell] = {}
    for key, cell in zip(keys, grid.cells, strict=True):
        if store.finished(key) or (store.has_failed(key) and not retry_failed):
            continue
        todo.setdefault(key, cell)
    counts.cached = sum(store.finished(k) for k in keys)
    counts.failed = sum(store.has_failed(k) and not store.finished(k) for k in keys)
    if retry_failed:
        counts.failed = 0
    # A key may stand for several cells (two axis values resolving to one configuration).
    per_key = {k: keys.count(k) for k in todo}
    return _Sweep(grid, store, manifest, counts, todo, per_key, len(todo))


def run_grids(
    grids: list[tuple[Grid, str | Path]],
    *,
    engine: str | Engine = "local",
    jobs: int | None = None,
    address: str | None = None,
    retry_failed: bool = False,
    max_memory: int | str | None = None,
    command: str | None = None,
    report: bool = True,
    on_progress: ProgressFn | None = None,
    first: Callable[[Cell], bool] | None = None,
    on_grid_done: Callable[[int], None] | None = None,
) -> list[SweepOutcome]:
    """Run several grids, each into its own folder, on one engine: the workers go from
    one grid's cells to the next's without waiting for a grid's slowest cell. Cells for
    which `first(cell)` is true are submitted before the others (the long ones: a
    run that ends on one long cell leaves the other workers idle). `on_grid_done(i)` is
    called when grid `i` has no cell left to run; `on_progress` sees the counts of all
    grids together. Otherwise as `run_grid`, one outcome per grid."""
    sweeps = [_open(grid, out, retry_failed, command) for grid, out in grids]
    tasks = [(i, key, cell) for i, s in enumerate(sweeps) for key, cell in s.todo.items()]
    if first is not None:
        tasks.sort(key=lambda t: not first(t[2]))  # stable: grid order otherwise
    for i, s in enumerate(sweeps):
        if not s.todo and on_grid_done is not None:
            on_grid_done(i)
    interrupted = False
    if tasks:
        owned = isinstance(engine, str)
        eng = make_engine(engine, jobs, address) if isinstance(engine, str) else engine
        try:
            for s in sweeps:
                check_memory(s.grid, list(s.todo.values()), eng.workers, max_memory)
            interrupted = _drive(eng, sweeps, tasks, on_progress, on_grid_done)
        finally:
            if owned:
                eng.close()
    elif on_progress is not None:
        on_progress(_total(sweeps), 0.0)
    outcomes = []
    for s in sweeps:
        status = "interrupted" if interrupted else "complete"
        s.store.write_manifest({**s.manifest, "status": status, "counts": _counts_dict(s.counts)})
        frame = s.store.frame()
        written = s.store.write_table(frame)
        if report:
            written.append(write_report(s.store, frame))
        outcomes.append(SweepOutcome(s.store, frame, s.counts, interrupted, written))
    return outcomes


def _total(sweeps: list[_Sweep], running: int = 0) -> Counts:
    """The counts of every grid together, `running` cells at work."""
    c = Counts(running=running)
    for s in sweeps:
        c.total += s.counts.total
        c.done += s.counts.done
        c.cached += s.counts.cached
        c.failed += s.counts.failed
    return c


def _drive(
    eng: Engine,
    sweeps: list[_Sweep],
    tasks: list[tuple[int, str, Cell]],
    on_progress: ProgressFn | None,
    on_grid_done: Callable[[int], None] | None,
) -> bool:
    """Submit every cell to do and write outcomes as they come. True when interrupted."""
    handles: dict[Any, tuple[int, str]] = {}
    pending: set[Any] = set()
    started = time.monotonic()
    ran = 0
    try:
        for i, key, cell in tasks:
            handle = eng.submit(task_for(cell, key, sweeps[i].grid.verify))
            handles[handle] = (i, key)
            pending.add(handle)
        while pending:
            for handle in eng.wait(pending, 0.2):
                pending.discard(handle)
                i, key = handles[handle]
                s = sweeps[i]
                outcome = eng.outcome(handle)
                cell = s.todo[key]
                if outcome["status"] == "ok":
                    s.store.write_ok(key, cell.axes_json(), cell.label, outcome)
                    s.counts.done += s.per_key[key]
                    ran += 1
                elif outcome["status"] == "failed":
                    s.store.write_failed(
                        key, cell.axes_json(), cell.label, cell.config.to_toml(), outcome
                    )
                    s.counts.failed += s.per_key[key]
                    ran += 1
                s.pending -= 1
                if s.pending == 0 and on_grid_done is not None:
                    on_grid_done(i)
            if on_progress is not None:
                running = min(eng.workers, len(pending))
                on_progress(_total(sweeps, running), _eta(started, ran, len(pending), eng.workers))
    except KeyboardInterrupt:
        eng.stop(pending)
        return True
    return False


def _eta(started: float, ran: int, left: int, workers: int) -> float | None:
    if not ran:
        return None
    per_cell = (time.monotonic() - started) / ran
    return per_cell * left if left else 0.0


def _counts_dict(c: Counts) -> dict[str, int]:
    return {"total": c.total, "done": c.done, "cached": c.cached, "failed": c.failed}


def _manifest(grid: Grid, keys: list[str], command: str | None) -> dict[str, Any]:
    return {
        "title": grid.title,
        "grid_path": grid.path,
        "grid": grid.text,
        "command": command,
        "axes": grid.axes,
        "metrics": grid.metrics,
        "base_config": grid.base.to_toml() if grid.base is not None else None,
        "cells": [
            {"key": k, "label": c.short_label, "axes": c.axes_json()}
            for k, c in zip(keys, grid.cells, strict=True)
        ],
        "skipped": [{"axes": s.axes_json(), "reason": s.reason} for s in grid.skipped],
    }


def write_report(store: ResultsStore, frame=None, out: str | Path | None = None) -> Path:
    """The sweep's HTML report (default `report.html` in the folder), written atomically."""
    from .._io import atomic_write
    from ..htmlreport import sweep_html

    manifest = store.manifest() or {}
    frame = frame if frame is not None else store.frame(manifest)
    page = sweep_html(
        frame,
        title=f"zombiesim sweep: {manifest.get('title', store.dir.name)}",
        axes=manifest.get("axes", []),
        metrics=manifest.get("metrics", []),
        command=manifest.get("command"),
        grid_text=manifest.get("grid"),
        config_toml=manifest.get("base_config"),
        version=manifest.get("zombiesim"),
    )
    path = Path(out) if out is not None else store.dir / "report.html"
    atomic_write(path, page)
    return path
