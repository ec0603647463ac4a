"""One cell as work to do: what a worker receives (`CellTask`), what it returns
(`outcome` dicts), and the key that names a finished cell in the results folder.

The key is a hash of everything that decides the simulation's result: the resolved
configuration, the workload spec or the trace's content (its SHA-256, not its path) and
reading options, the seed, whether the integrity checks ran, and the zombiesim version. Two
cells with the same key give byte-identical reports, so a finished cell is never run again,
whichever grid, folder layout or engine asks for it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from .._core import __version__
from ..trace import TraceInput
from .grid import Cell

__all__ = ["CellTask", "cell_key", "run_cell", "task_for"]


@dataclass(frozen=True)
class CellTask:
    """What a worker needs to run one cell: plain, picklable data."""

    key: str
    config_toml: str
    #: A workload spec, or the fields of a `TraceInput`.
    source: str | dict[str, Any]
    seed: int
    verify: bool = False


def _digest(path: str, cache: dict[str, str]) -> str:
    """The SHA-256 of a file's content (cached per path, size and modification time)."""
    st = os.stat(path)
    memo = f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"
    if memo not in cache:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        cache[memo] = h.hexdigest()
    return cache[memo]


def cell_key(cell: Cell, verify: bool, digests: dict[str, str] | None = None) -> str:
    """The cell's identity (24 hex digits) — see the module doc."""
    digests = digests if digests is not None else {}
    if isinstance(cell.source, TraceInput):
        fields = dataclasses.asdict(cell.source)
        fields["path"] = _digest(cell.source.path, digests)
        source: Any = {"trace": fields}
    else:
        source = {"workload": cell.source}
    identity = {
        "zombiesim": __version__,
        "config": cell.config.to_toml(),
        "source": source,
        "seed": cell.seed,
        "verify": verify,
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def task_for(cell: Cell, key: str, verify: bool) -> CellTask:
    source = cell.source
    if isinstance(source, TraceInput):
        source = dataclasses.asdict(source)
    return CellTask(key, cell.config.to_toml(), source, cell.seed, verify)


def run_cell(task: CellTask, stop: Any = None, warm: Any = None) -> dict[str, Any]:
    """Run one cell (in a worker). Returns `{"status": "ok", "report": JSON text, "wall_s"}`,
    `{"status": "failed", "error", "kind", "wall_s"}` — a bad cell is an outcome, not an
    exception, so it never stops the others — or `{"status": "interrupted"}` when `stop`
    (anything with `is_set()`) was set while it ran. Reports are reproducible: no wall
    times inside, so identical cells give identical bytes. A text trace is parsed on the
    cell's own thread (`inline_trace`): the engines run one cell per core. `warm`, a
    `_core.PreconditionCache` the worker keeps, lets cells whose devices are configured
    alike start from one preconditioned device (their reports are unchanged)."""
    from ..api import _run_one, _RunOptions, _source
    from ..config import Config

    started = time.perf_counter()

    def keep_going(_phase: str, _fraction: float | None, _pages: int) -> bool:
        return stop is None or not stop.is_set()

    try:
        config = Config.from_toml(task.config_toml, f"<cell {task.key}>")
        source = task.source if isinstance(task.source, str) else TraceInput(**task.source)
        # The pool runs a cell per core: no second thread to parse a text trace.
        opts = _RunOptions(task.seed, task.verify, reproducible=True, inline_trace=True)
        report = _run_one(config, _source(source), opts, keep_going, warm)
    except Exception as e:  # a bad cell is recorded, whatever went wrong in it
        return {
            "status": "failed",
            "error": str(e),
            "kind": type(e).__name__,
            "wall_s": time.perf_counter() - started,
        }
    if report.interrupted:
        return {"status": "interrupted"}
    return {"status": "ok", "report": report.to_json(), "wall_s": time.perf_counter() - started}
