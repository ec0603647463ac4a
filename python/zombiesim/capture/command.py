"""The captured command: its program resolved, run in its own process group with its output
kept and echoed, the group ended after it; its status in words; and SIGINT and SIGTERM
held while resources are taken or undone."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from .._errors import InputError, make_error

#: Bytes of the command's output kept in command.txt.
OUTPUT_LIMIT = 16 << 20
#: Environment variable the command gets: the mount point (its working directory).
CAPTURE_DIR_ENV = "ZOMBIESIM_CAPTURE_DIR"


class _Tee(threading.Thread):
    """Copies a child's output to our own stream and to a shared, bounded buffer."""

    def __init__(self, src: IO[bytes], dst: IO[bytes] | None, sink: list[bytes], lock) -> None:
        super().__init__(daemon=True)
        self.src, self.dst, self.sink, self.lock = src, dst, sink, lock

    def run(self) -> None:
        kept = 0
        for chunk in iter(lambda: self.src.read1(1 << 16), b""):
            if self.dst is not None:
                try:
                    self.dst.write(chunk)
                    self.dst.flush()
                except (OSError, ValueError):
                    self.dst = None
            with self.lock:
                if kept < OUTPUT_LIMIT:
                    self.sink.append(chunk[: OUTPUT_LIMIT - kept])
                    kept += len(chunk)


def _kill_group(proc: subprocess.Popen) -> None:
    """End the command's process group (the command and whatever it left running): SIGTERM,
    up to 2 s for it to go, then SIGKILL."""

    def group_alive() -> bool:
        try:
            os.killpg(proc.pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    if proc.poll() is None or group_alive():
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and (proc.poll() is None or group_alive()):
            time.sleep(0.05)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    proc.wait()


def _run_command(
    cmd: list[str], cwd: Path, timeout: float | None, echo: bool
) -> tuple[int | None, bool, float, bytes]:
    """Run `cmd` in its own process group in `cwd`; (status, timed out, seconds, output).
    A KeyboardInterrupt kills the group and propagates."""
    env = dict(os.environ)
    env[CAPTURE_DIR_ENV] = str(cwd)
    env["PWD"] = str(cwd)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as e:
        message = f"cannot run `{shlex.join(cmd)}`: {e.strerror or e}"
        raise make_error(InputError, message, "input") from e
    sink: list[bytes] = []
    lock = threading.Lock()
    tees: list[_Tee] = []
    timed_out = False
    # From here on a Ctrl-C anywhere (even while the output threads start, which a
    # loaded machine makes slow) kills the group: a command left running would hold the
    # mount, and with it the loop device, after the capture has gone.
    try:
        tees = [
            _Tee(proc.stdout, sys.stdout.buffer if echo else None, sink, lock),  # type: ignore[arg-type]
            _Tee(proc.stderr, sys.stderr.buffer if echo else None, sink, lock),  # type: ignore[arg-type]
        ]
        for t in tees:
            t.start()
        try:
            status: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            status = None
        elapsed = time.monotonic() - start
    finally:
        _kill_group(proc)  # whatever it left running (and all of it on Ctrl-C)
        for t in tees:
            # A Ctrl-C during `start` leaves a thread that never started to join.
            if t.ident is not None:
                t.join(timeout=5)
    return status, timed_out, elapsed, b"".join(sink)


def status_text(status: int | None, timed_out: bool, timeout: float | None) -> str:
    if timed_out:
        return f"timed out after {timeout:g} s (killed)"
    if status is not None and status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"killed by {name}"
    return f"exit status {status}"


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while tearing down (they arrive afterwards), so a second
    Ctrl-C cannot leave a mounted loop device behind."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _resolve_program(program: str) -> str:
    """The command's program as it will run in the mount point: a relative path (`./x.sh`)
    made absolute from here; refused (InputError) when it cannot be found or run."""
    if "/" in program:
        path = os.path.abspath(program)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise make_error(
                InputError, f"cannot run `{program}`: no executable file there", "input"
            )
        return path
    if shutil.which(program) is None:
        raise make_error(InputError, f"cannot run `{program}`: not found in PATH", "input")
    return program
