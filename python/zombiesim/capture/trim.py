"""Telling the device what the file system freed, as real systems do: a mount with
`discard` (the file system trims each extent it frees once the journal commits it), or
`fstrim` run on a timer (`PeriodicTrim`: every S seconds while the command runs, and
once when it ends, as a weekly `fstrim.timer` would after the workload).

The discards reach the loop device as block requests with `D` in their flags; the trace
records them with the writes (`block_rq_issue`), `convert_raw` writes one row per request
to `device_trims.csv.gz` (`t_wall,fsblk,blocks`), and the importer makes each a trim of
the notified trace."""

from __future__ import annotations

import math
import threading
from pathlib import Path

from .._errors import InputError, make_error
from .environment import _run

#: The mount option that makes the file system trim what it frees (`--discard`).
DISCARD_OPTION = "discard"


def check_seconds(seconds: float | None, flag: str) -> None:
    """A duration option (`--timeout`, `--fstrim-every`): seconds above 0 (None: off)."""
    if seconds is not None and not (seconds > 0 and math.isfinite(seconds)):
        raise make_error(InputError, f"{flag}: expected seconds above 0, got {seconds}", "input")


class PeriodicTrim:
    """`fstrim MOUNT` every `every` seconds on a thread of its own, from `start()` until
    `finish()`, which runs it once more and returns what went wrong (one line each; a
    failed `fstrim` is a warning, not the capture's failure). `runs` counts the trims."""

    def __init__(self, mount: Path, every: float) -> None:
        self.mount, self.every = mount, every
        self.runs = 0
        self.problems: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="fstrim", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _trim(self) -> None:
        try:
            _run(["fstrim", str(self.mount)], "fstrim", timeout=600)
            self.runs += 1
        except InputError as e:
            self.problems.append(str(e))

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self._trim()

    def stop(self) -> None:
        """Stop the timer (no last trim): a capture that failed or was interrupted."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def finish(self) -> list[str]:
        self.stop()
        self._trim()
        return self.problems
