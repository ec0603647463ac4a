"""A lazy, transient progress bar on stderr for the CLI.

Nothing is drawn unless stderr is a terminal, and nothing until the work has run for
`delay` seconds (short runs stay quiet). Updates may come from any thread (the simulation
callbacks run on the worker threads of `compare`).

The first update also announces that the long work is under way: with
`ZOMBIESIM_STARTED_FILE=PATH` in the environment, PATH is created at that moment (once per
process). By then the command's signal handlers are in place and the simulator is running,
so a script (or a test) that waits for the file and then sends SIGINT or SIGTERM always
gets the documented outcome (a partial report, exit 130 or 143), never a race against the
interpreter's start-up.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TaskProgressColumn,
    TextColumn,
)
from rich.text import Text

__all__ = ["STARTED_ENV", "LazyProgress", "announce_started"]

#: The environment variable naming the file `announce_started` creates.
STARTED_ENV = "ZOMBIESIM_STARTED_FILE"

_announced = threading.Event()


def announce_started() -> None:
    """Create the file named by `$ZOMBIESIM_STARTED_FILE` (if set), once per process: the
    long work (a simulation, a trace being read) is running. A file that cannot be created
    is ignored: the marker is a courtesy, never a reason to fail a run."""
    if _announced.is_set():
        return
    _announced.set()
    path = os.environ.get(STARTED_ENV)
    if not path:
        return
    try:
        with open(path, "a"):
            pass
    except OSError:
        pass


class _SinceColumn(ProgressColumn):
    """Wall time since the work began (not since the bar appeared)."""

    def __init__(self, started_at: float):
        super().__init__()
        self.started_at = started_at

    def render(self, task) -> Text:
        s = int(time.monotonic() - self.started_at)
        return Text(f"{s // 60}:{s % 60:02d}", style="progress.elapsed")


class LazyProgress:
    """`update(key, description, completed, total)`; use as a context manager."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        delay: float = 2.0,
        enabled: bool | None = None,
    ):
        self.console = console if console is not None else Console(stderr=True)
        self.enabled = self.console.is_terminal if enabled is None else enabled
        self.delay = delay
        self.started_at = time.monotonic()
        self._lock = threading.Lock()
        self._state: dict[Any, tuple[str, float, float | None]] = {}
        self._tasks: dict[Any, TaskID] = {}
        self._progress: Progress | None = None
        self._closed = False

    @property
    def shown(self) -> bool:
        """Whether the bar has been drawn."""
        return self._progress is not None

    def update(
        self, key: Any, description: str, completed: float, total: float | None = 1.0
    ) -> None:
        """Set one line: `completed` out of `total` (`total=None`: unknown, a pulsing bar)."""
        announce_started()
        if not self.enabled or self._closed:
            return
        with self._lock:
            self._state[key] = (description, completed, total)
            if self._progress is None:
                if time.monotonic() - self.started_at < self.delay:
                    return
                self._progress = Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    TaskProgressColumn(),
                    _SinceColumn(self.started_at),
                    console=self.console,
                    transient=True,
                )
                self._progress.start()
            for k, (desc, done, tot) in self._state.items():
                if k not in self._tasks:
                    self._tasks[k] = self._progress.add_task(desc, total=tot, completed=done)
                else:
                    self._progress.update(
                        self._tasks[k], description=desc, completed=done, total=tot
                    )
            self._state.clear()

    def simulation_callback(self, key: Any, label: str = ""):
        """A `progress(phase, fraction, write_pages)` callback for `simulate` that draws one
        line (phase and fraction of it)."""
        prefix = f"{label} " if label else ""

        def callback(phase: str, fraction: float | None, write_pages: int) -> None:
            if fraction is None:
                self.update(key, f"{prefix}{phase}", 0, None)
            else:
                self.update(key, f"{prefix}{phase}", fraction, 1.0)

        return callback

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._progress is not None:
                self._progress.stop()

    def __enter__(self) -> LazyProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
