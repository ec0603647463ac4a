"""The capture folder's files: their names, and the small text files both sides share —
`uptime_start.txt` (written at the start of the trace, read to put its clock on the epoch),
`inodes.txt` and `extents.txt` (read as `ino -> path` and as an `ExtentMap`)."""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Iterable
from pathlib import Path

from .._errors import InputError, make_error

#: What the converter writes (and what the importer reads).
DIRTY_CSV = "pagecache_dirty.csv.gz"
DEVICE_CSV = "device_writes_hashed.csv.gz"
#: The discard requests (a mount with `discard`, or fstrim): `t_wall,fsblk,blocks`.
TRIMS_CSV = "device_trims.csv.gz"
SUMMARY = "loop_summary.txt"
RAW = "ftrace_raw.txt.gz"
UPTIME = "uptime_start.txt"
EXTENTS = "extents.txt"
#: The extents of files gone by the end of the run, as the run mapped them (ext4).
EXTENTS_GONE = "extents_deleted.txt"
INODES = "inodes.txt"
HINTS = "hints.txt"
COMMAND = "command.txt"
TRACE = "trace.zst"

#: An extent line of `filefrag -e`: `0: 0.. 255: 34816.. 35071: 256: last,eof` (logical
#: first.. last, physical first.. last, length, flags).
_EXTENT = re.compile(r"^\s*\d+:\s*(\d+)\.\.\s*(\d+):\s*(\d+)\.\.\s*(\d+):\s*(\d+):(.*)$")


def _ns(text: str) -> int:
    """Nanoseconds from a decimal string of seconds (exactly)."""
    whole, _, frac = text.strip().partition(".")
    return int(whole or "0") * 1_000_000_000 + int((frac + "000000000")[:9])


def read_uptime_start(path: Path | str) -> tuple[int, int]:
    """`(uptime_ns, epoch_ns)` from an `uptime_start.txt`: `uptime idle` then the epoch time
    taken at the same moment, so that epoch = t + (epoch − uptime)."""
    try:
        lines = [ln.split() for ln in Path(path).read_text().splitlines() if ln.strip()]
        return _ns(lines[0][0]), _ns(lines[1][0])
    except (OSError, IndexError, ValueError) as e:
        raise make_error(
            InputError,
            f"`{path}`: expected `uptime idle` then the epoch time on the next line ({e})",
            "io",
        ) from e


def read_inodes(path: Path | str) -> dict[int, str]:
    """`ino -> path` from an `inodes.txt` (`ino size path`, the path may hold spaces)."""
    inodes: dict[int, str] = {}
    try:
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) < 3:
                    if line.strip():
                        raise ValueError(f"line {lineno}: expected `ino size path`")
                    continue
                inodes.setdefault(int(parts[0]), parts[2])
    except (OSError, ValueError) as e:
        raise make_error(InputError, f"`{path}`: {e}", "io") from e
    return inodes


class ExtentMap:
    """File-system block → (file, file page), from an `extents.txt` (`== path` then
    `filefrag -e -b4096` extent lines). Extents without a location (delayed allocation,
    inline data) are left out."""

    def __init__(self, extents: Iterable[tuple[int, int, int, str]] = ()) -> None:
        items = sorted(extents)
        self._starts = [e[0] for e in items]
        self._items = items

    @classmethod
    def read(cls, path: Path | str) -> ExtentMap:
        extents: list[tuple[int, int, int, str]] = []
        name: str | None = None
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("== "):
                        name = line[3:].rstrip("\n")
                        continue
                    m = _EXTENT.match(line)
                    if m is None or name is None:
                        continue
                    logical, _, physical, _, length = (int(g) for g in m.groups()[:5])
                    flags = m.group(6)
                    if length == 0 or "unknown_loc" in flags or "inline" in flags:
                        continue
                    extents.append((physical, length, logical, name))
        except OSError as e:
            raise make_error(InputError, f"cannot read `{path}`: {e.strerror or e}", "io") from e
        return cls(extents)

    def __len__(self) -> int:
        return len(self._items)

    def lookup(self, block: int) -> tuple[str, int] | None:
        i = bisect.bisect_right(self._starts, block) - 1
        if i < 0:
            return None
        physical, length, logical, name = self._items[i]
        if block >= physical + length:
            return None
        return name, logical + block - physical


def _boottime_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_BOOTTIME)


def write_uptime_start(path: Path) -> None:
    """`uptime idle` as /proc/uptime prints them, then the epoch time at the moment the
    boot-time clock read that uptime (exact to the microsecond, though /proc/uptime only
    has centiseconds)."""
    b0 = _boottime_ns()
    e_ns = time.time_ns()
    b1 = _boottime_ns()
    boot = (b0 + b1) // 2
    try:
        idle = Path("/proc/uptime").read_text().split()[1]
    except (OSError, IndexError):
        idle = "0.00"
    centis = boot // 10_000_000
    uptime_ns = centis * 10_000_000
    epoch = e_ns - (boot - uptime_ns)
    path.write_text(
        f"{centis // 100}.{centis % 100:02d} {idle}\n{epoch // 10**9}.{epoch % 10**9:09d}\n"
    )
