"""`--dry-run`: the cells a grid holds, what each will cost, and which are already done.

Memory is the simulator's own estimate of a cell's state (what `run` refuses on). Time is
an estimate: the host pages a cell writes (the fill, at most `random_drive_writes` of
random writes, then the workload's length) divided by a rate measured by running the
grid's first cell for about a second, once per timing mode (counting and timing runs go
at very different speeds). Cells already in the results folder show their real time. A
trace's length is unknown before it is read: its estimate is left empty.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .. import _core
from ..api import simulate
from ..trace import TraceInput, parse_size
from ..workload import parse as parse_workload
from .cells import cell_key
from .grid import Cell, Grid
from .store import ResultsStore

__all__ = ["plan"]

#: How long each calibration run lasts (seconds).
PROBE_S = 1.0


def _pages(cell: Cell) -> float | None:
    """Host pages the cell writes, preconditioning included (an upper bound: the
    preconditioning stops early once WAF is steady); None for a trace."""
    cfg = cell.config
    geo = cfg.geometry
    logical, page = geo["logical_pages"], geo["page_size"]
    pre = (1.0 if cfg.get("precondition.fill") else 0.0) + float(
        cfg.get("precondition.random_drive_writes")
    )
    if isinstance(cell.source, TraceInput):
        return None
    params = parse_workload(cell.source).params
    if "requests" in params:
        size = parse_size(params.get("size", page), "size")
        measured = int(params["requests"]) * max(1.0, size / page)
    elif "bytes" in params:
        measured = parse_size(params["bytes"], "bytes") / page
    else:
        measured = float(params.get("drive_writes", 1)) * logical
    return pre * logical + measured


def _rate(cell: Cell) -> float:
    """Host pages per wall second, from running `cell` for about `PROBE_S`."""
    started = time.perf_counter()
    last = [0]

    def probe(_phase: str, _fraction: float | None, pages: int) -> bool:
        last[0] = max(last[0], pages)
        return time.perf_counter() - started < PROBE_S

    simulate(cell.config, cell.source, seed=cell.seed, progress=probe)
    return max(last[0], 1) / max(time.perf_counter() - started, 1e-3)


def plan(grid: Grid, out: str | Path | None = None, *, probe: bool = True):
    """A DataFrame, one row per cell: `label`, `key`, `state` (`to run`, `cached`,
    `failed`), `memory_bytes`, `est_s` (estimated wall seconds of one worker; the real
    time for a cached cell), and the axis values."""
    import pandas as pd

    store = ResultsStore(out) if out is not None and Path(out).exists() else None
    if store is not None and store.manifest() is not None:
        store.check_version(store.manifest())
    digests: dict[str, str] = {}
    rates: dict[bool, float] = {}
    rows: list[dict[str, Any]] = []
    for cell in grid.cells:
        key = cell_key(cell, grid.verify, digests)
        memory, _parts = _core.memory_estimate(cell.config.core, grid.verify)
        record = store.read(key) if store is not None else None
        state = "to run" if record is None else ("cached" if record["status"] == "ok" else "failed")
        est = record.get("wall_s") if record is not None else None
        if est is None and state == "to run":
            pages = _pages(cell)
            timed = bool(cell.config.get("timing.enabled"))
            if pages is not None and probe:
                if timed not in rates:
                    rates[timed] = _rate(cell)
                est = pages / rates[timed]
        rows.append(
            {
                "label": cell.label,
                "key": key,
                "state": state,
                "memory_bytes": memory,
                "est_s": est,
                **{f"axis.{k}": v for k, v in cell.axes_json().items()},
            }
        )
    return pd.DataFrame(rows)
