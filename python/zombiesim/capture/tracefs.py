"""The private trace instance (`instances/zombiesim-<pid>`: its clock, buffer, events and
device filters) and the thread that copies its `trace_pipe` into a gzip file."""

from __future__ import annotations

import gzip
import os
import re
import select
import threading
import time
from pathlib import Path

from .environment import EVENT_FILTERS, OPTIONAL_EVENTS, REQUIRED_EVENTS, _environment_error

#: Per-CPU ring buffer of the trace instance, KiB.
BUFFER_KB = 16384


def _write(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _remove_stale_instances(tracefs: Path) -> None:
    """Remove the instances of captures whose process is gone (killed with SIGKILL)."""
    try:
        names = os.listdir(tracefs / "instances")
    except OSError:
        return
    for name in names:
        m = re.fullmatch(r"zombiesim-(\d+)", name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            try:
                _write(tracefs / "instances" / name / "tracing_on", "0")
                (tracefs / "instances" / name).rmdir()
            except OSError:
                pass


class _TraceInstance:
    """A private tracefs instance (`instances/zombiesim-<pid>`): its own buffer, clock,
    events and filters, so other tracers are not disturbed."""

    def __init__(self, tracefs: Path, name: str) -> None:
        _remove_stale_instances(tracefs)
        self.path = tracefs / "instances" / name
        if self.path.exists():
            self.path.rmdir()
        try:
            self.path.mkdir()
        except OSError as e:
            raise _environment_error(
                f"cannot create the trace instance `{self.path}`: {e.strerror or e}"
            ) from e
        self.enabled: list[str] = []

    def configure(self, available: set[str], dev: tuple[int, int]) -> None:
        major, minor = dev
        _write(self.path / "tracing_on", "0")
        clocks = (self.path / "trace_clock").read_text()
        # The clock of /proc/uptime (CLOCK_BOOTTIME), so t + (epoch − uptime) is epoch.
        for clock in ("boot", "mono"):
            if re.search(rf"(^|[\s\[]){clock}([\s\]]|$)", clocks):
                _write(self.path / "trace_clock", clock)
                break
        try:
            _write(self.path / "buffer_size_kb", str(BUFFER_KB))
        except OSError:
            pass  # keep the default size
        filters = {
            "block": f"dev == {major << 20 | minor}",
            "ext4": f"dev == {major << 20 | minor}",
            "filemap": f"s_dev == {major << 20 | minor}",
            "writeback": f'name == "{major}:{minor}"',
        }
        wanted = [next(c for c in choices if c in available) for choices in REQUIRED_EVENTS]
        wanted += [e for e in OPTIONAL_EVENTS if e in available]
        for event in wanted:
            system, name = event.split(":")
            directory = self.path / "events" / system / name
            flt = filters.get(system)
            if flt is not None and event in EVENT_FILTERS:
                flt = f"({flt}) && ({EVENT_FILTERS[event]})"
            if flt is not None:
                try:
                    _write(directory / "filter", flt)
                except OSError:
                    pass  # the converter filters by device too
            _write(directory / "enable", "1")
            self.enabled.append(event)

    def start(self) -> None:
        _write(self.path / "tracing_on", "1")

    def stop(self) -> None:
        _write(self.path / "tracing_on", "0")

    def remove(self) -> None:
        try:
            _write(self.path / "tracing_on", "0")
            _write(self.path / "events" / "enable", "0")
        except OSError:
            pass
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)  # busy while a reader still has trace_pipe open
        self.path.rmdir()


class _PipeReader(threading.Thread):
    """Copies the instance's `trace_pipe` into a gzip file until told to stop, then drains
    what is left."""

    def __init__(self, pipe: Path, out: Path) -> None:
        super().__init__(name="zombiesim-trace-pipe", daemon=True)
        self.fd = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
        self.out = out
        self.stopping = threading.Event()
        self.error: BaseException | None = None
        self.bytes = 0

    def run(self) -> None:
        try:
            with gzip.open(self.out, "wb", compresslevel=1) as gz:
                while True:
                    try:
                        data = os.read(self.fd, 1 << 16)
                    except BlockingIOError:
                        data = b""
                    if data:
                        gz.write(data)
                        self.bytes += len(data)
                        continue
                    if self.stopping.is_set():
                        break
                    select.select([self.fd], [], [], 0.2)
        except BaseException as e:  # reported by finish()
            self.error = e
        finally:
            os.close(self.fd)

    def finish(self) -> None:
        self.stopping.set()
        self.join(timeout=120)
        if self.error is not None:
            raise _environment_error(f"reading the trace pipe failed: {self.error}")
