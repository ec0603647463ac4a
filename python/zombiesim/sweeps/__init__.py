"""Sweeps: a grid of simulations (policies × buffer sizes × over-provisioning × traces ×
seeds ...) from a TOML file, run on a process pool, Ray or Dask, resumable, with one
table and one report at the end. See docs/sweeps.md.

>>> import zombiesim as zs
>>> df = zs.sweep("grid.toml", out="results/", jobs=2)        # doctest: +SKIP
>>> df = zs.load("results/")                                   # doctest: +SKIP

- `grid`: reading and checking grid files (`load_grid`, `Grid`, `Cell`);
- `cells`: one cell as work (`CellTask`, `run_cell`) and its key;
- `engines`: `local`, `ray`, `dask` behind `Engine`;
- `store`: the results folder;
- `runner`: the loop that ties them together (`run_grid`);
- `plan`: `--dry-run`'s cells with their memory and time estimates.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._errors import InputError, SimulationInterrupted, make_error
from .engines import ENGINES, Engine, make_engine
from .grid import Cell, Grid, load_grid
from .plan import plan
from .runner import Counts, ProgressFn, SweepOutcome, run_grid, write_report
from .store import MANIFEST, ResultsStore

__all__ = [
    "ENGINES",
    "Cell",
    "Counts",
    "Engine",
    "Grid",
    "ResultsStore",
    "SweepOutcome",
    "load",
    "load_grid",
    "make_engine",
    "plan",
    "run_grid",
    "sweep",
    "write_report",
]

GridLike = str | os.PathLike[str] | Mapping[str, Any] | Grid


def _grid(grid: GridLike) -> Grid:
    return grid if isinstance(grid, Grid) else load_grid(grid)


def sweep(
    grid: GridLike,
    *,
    out: str | os.PathLike[str] | None = None,
    engine: str | Engine = "local",
    jobs: int | None = None,
    address: str | None = None,
    retry_failed: bool = False,
    max_memory: int | str | None = None,
    report: bool = True,
    progress: ProgressFn | None = None,
):
    """Run a grid (a TOML file's path, TOML text, a dict shaped like the file, or a
    `Grid`) and return a pandas DataFrame, one row per cell (see `load`).

    With `out`, results go to that folder (`results.parquet`, per-cell JSON,
    `report.html`) and a second call resumes: finished cells are read, not run. Without
    it they go to a temporary folder that is removed. `engine` is `"local"` (a process
    pool of `jobs` workers, default one per core), `"ray"` or `"dask"` (`address`: the
    Ray address or Dask scheduler; default a local cluster). A failed cell is a row
    with `status == "failed"` and its `error`; it does not stop the others
    (`retry_failed` runs failed cells again). `progress(counts, eta_s)` is called as
    cells finish (`counts.done`, `.cached`, `.failed`, `.running`, `.total`). Ctrl-C
    raises `SimulationInterrupted` whose `.report` is the table of the cells that
    finished."""
    checked = _grid(grid)
    if out is None:
        with tempfile.TemporaryDirectory(prefix="zombiesim-sweep-") as tmp:
            result = run_grid(
                checked,
                tmp,
                engine=engine,
                jobs=jobs,
                address=address,
                max_memory=max_memory,
                report=False,
                on_progress=progress,
            )
    else:
        result = run_grid(
            checked,
            out,
            engine=engine,
            jobs=jobs,
            address=address,
            retry_failed=retry_failed,
            max_memory=max_memory,
            report=report,
            on_progress=progress,
        )
    if result.interrupted:
        raise SimulationInterrupted(report=result.frame)
    return result.frame


def load(results: str | os.PathLike[str]):
    """The table of a sweep's results folder: a DataFrame, one row per cell that has run,
    in grid order — `cell` (its key), `status` (`ok`/`failed`), `error`, `axis.<name>`
    per axis, `label`, `wall_s`, then every report column (`Report.to_row(lists=True)`:
    `waf`, `flash.erases`, ..., `config.*`, and the time series and latency CDFs as
    lists). Reads `results.parquet`, or the cell files when the table is older than the
    last run (a sweep that was killed)."""
    import pandas as pd

    store = ResultsStore(results)
    manifest = store.manifest()
    if manifest is None:
        raise make_error(InputError, f"{results}: not a sweep results folder (no {MANIFEST})", "io")
    table = Path(results) / "results.parquet"
    if table.exists() and table.stat().st_mtime_ns >= (Path(results) / MANIFEST).stat().st_mtime_ns:
        frame = pd.read_parquet(table)
        for name in frame.columns:  # Arrow lists come back as arrays: give lists back
            if (
                frame[name].dtype == object
                and len(frame)
                and hasattr(frame[name].iloc[0], "tolist")
            ):
                frame[name] = [v.tolist() if hasattr(v, "tolist") else v for v in frame[name]]
        return frame
    return store.frame(manifest)
