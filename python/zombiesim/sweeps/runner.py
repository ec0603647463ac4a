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

__all__ = ["Counts", "ProgressFn", "SweepOutcome", "check_memory", "run_grid", "write_report"]


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

    interrupted = False
    if todo:
        owned = isinstance(engine, str)
        eng = make_engine(engine, jobs, address) if isinstance(engine, str) else engine
        try:
            check_memory(grid, list(todo.values()), eng.workers, max_memory)
            interrupted = _drive(eng, store, grid, todo, per_key, counts, on_progress)
        finally:
            if owned:
                eng.close()
    elif on_progress is not None:
        on_progress(counts, 0.0)

    status = "interrupted" if interrupted else "complete"
    store.write_manifest({**manifest, "status": status, "counts": _counts_dict(counts)})
    frame = store.frame()
    written = store.write_table(frame)
    if report:
        written.append(write_report(store, frame))
    return SweepOutcome(store, frame, counts, interrupted, written)


def _drive(
    eng: Engine,
    store: ResultsStore,
    grid: Grid,
    todo: dict[str, Cell],
    per_key: dict[str, int],
    counts: Counts,
    on_progress: ProgressFn | None,
) -> bool:
    """Submit every cell to do and write outcomes as they come. True when interrupted."""
    handles: dict[Any, str] = {}
    pending: set[Any] = set()
    started = time.monotonic()
    ran = 0
    try:
        for key, cell in todo.items():
            handle = eng.submit(task_for(cell, key, grid.verify))
            handles[handle] = key
            pending.add(handle)
        while pending:
            counts.running = min(eng.workers, len(pending))
            for handle in eng.wait(pending, 0.2):
                pending.discard(handle)
                key = handles[handle]
                outcome = eng.outcome(handle)
                cell = todo[key]
                if outcome["status"] == "ok":
                    store.write_ok(key, cell.axes_json(), cell.label, outcome)
                    counts.done += per_key[key]
                    ran += 1
                elif outcome["status"] == "failed":
                    store.write_failed(
                        key, cell.axes_json(), cell.label, cell.config.to_toml(), outcome
                    )
                    counts.failed += per_key[key]
                    ran += 1
            counts.running = min(eng.workers, len(pending))
            if on_progress is not None:
                on_progress(counts, _eta(started, ran, len(pending), eng.workers))
    except KeyboardInterrupt:
        eng.stop(pending)
        counts.running = 0
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
