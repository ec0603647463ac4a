"""Commands in the background, for the tests of signals, killed processes and interrupted
runs.

Two things make such a test deterministic:
- the child starts with the default SIGINT handler and no blocked signals, whatever the
  test runner has (a runner started as a background job ignores SIGINT, and a child
  inherits that: Python then installs no KeyboardInterrupt handler at all);
- the test waits for a condition, never a fixed time: `wait_started` waits for the file the
  command creates once its long work is under way (`$ZOMBIESIM_STARTED_FILE`, see
  `zombiesim._progress`), `wait_for` for any other condition (a file, a count of files).
  The work itself is sized so it cannot end before the signal (an endless trace read
  from a FIFO, a run of 100,000 drive writes).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from zombiesim._progress import STARTED_ENV

__all__ = ["Background", "default_signals", "endless_run", "wait_for"]


def default_signals() -> None:
    """`preexec_fn`: SIGINT and SIGTERM back to their defaults, nothing blocked."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def wait_for(
    predicate: Callable[[], bool],
    timeout: float = 120.0,
    proc: subprocess.Popen | None = None,
    what: str = "the condition",
) -> None:
    """Poll `predicate` until it holds; fail after `timeout` seconds, or as soon as `proc`
    (if given) has exited without it holding."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            if predicate():
                return
            _, err = proc.communicate()
            raise AssertionError(f"exited ({proc.returncode}) before {what}: {err}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.02)


class Background:
    """`python -m zombiesim ARGS` in the background, stdout and stderr captured as text,
    told to create `marker` once its long work is under way."""

    def __init__(self, *args: str, marker: Path, cwd: Path | None = None) -> None:
        self.marker = Path(marker)
        if self.marker.exists():
            self.marker.unlink()
        env = dict(os.environ)
        env[STARTED_ENV] = str(self.marker)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "zombiesim", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=env,
            preexec_fn=default_signals,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_started(self, timeout: float = 120.0) -> None:
        """Wait until the command says its long work is running."""
        wait_for(self.marker.exists, timeout, self.proc, "the command's start marker")

    def send(self, sig: int) -> float:
        """Send `sig`; the monotonic time it was sent."""
        sent = time.monotonic()
        self.proc.send_signal(sig)
        return sent

    def communicate(self, timeout: float = 60.0) -> tuple[str, str]:
        try:
            return self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError(f"still running {timeout:g} s later; stderr: {err}") from None

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode


def endless_run(tmp_path: Path, *args: str) -> Background:
    """`zombiesim run ARGS` on a small device with a workload of 100,000 drive-writes
    (hours): it is still running whenever a test signals it, marker in `tmp_path`."""
    return Background(
        "run", "--set", "flash.blocks_per_plane=64", "-w", "uniform:drive_writes=100000",
        *args, marker=tmp_path / "started",
    )  # fmt: skip
