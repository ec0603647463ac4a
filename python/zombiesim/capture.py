"""Record a command's I/O at three levels with Linux kernel trace events (docs/capture.md).

`capture(cmd, out)` runs `cmd` on a fresh file system on a loop device while a private
trace instance records, in one clock, the page cache's clean → dirty transitions
(`writeback:writeback_dirty_folio`), the block requests (`block:block_rq_issue` /
`block_rq_complete`) and, when the kernel has them, the application's writes
(`syscalls:sys_enter_pwrite64`, `ext4:ext4_da_write_begin`, the fsync family). It then
writes a *capture folder* in the layout of `shared/traces/captures/pgbench-ext4/`:

```text
uptime_start.txt              `uptime idle` (as /proc/uptime) and the epoch time at that moment
inodes.txt                    `ino size path` of every regular file after the run
extents.txt                   `filefrag -e -b4096` of every file, each under `== path`
pagecache_dirty.csv.gz        t,ino,file,index            (t: kernel uptime seconds)
device_writes_hashed.csv.gz   t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write
loop_summary.txt              event counts, block writes mapped/unmapped, the command's status
command.txt                   the command, its exit status and its output
ftrace_raw.txt.gz             the raw trace (only with keep_raw=True)
trace.zst                     the imported trace, when `zombiesim.trace.import_capture` exists
```

`convert_raw(raw, folder)` turns a raw trace plus the folder's `uptime_start.txt`,
`extents.txt` and `inodes.txt` into the CSV files and `loop_summary.txt`, on its own.
`check_environment()` lists what is missing for a capture here (empty: it can run).

Needs root (or CAP_SYS_ADMIN), tracefs, the loop driver, `losetup`, `mkfs.<fs>`,
`filefrag`, `mount`/`umount`. Content hashes are left empty (no hashing shim) and reads
are not recorded.
"""

from __future__ import annotations

import bisect
import ctypes
import gzip
import math
import os
import re
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ._errors import InputError, make_error

__all__ = [
    "DEFAULT_SIZE",
    "FILESYSTEMS",
    "CaptureResult",
    "ConvertResult",
    "capture",
    "check_environment",
    "convert_raw",
]

#: Where tracefs is (or is mounted by the check).
TRACEFS = Path("/sys/kernel/tracing")
#: The events a capture cannot do without; alternatives in the tuple (older kernels
#: have `writeback_dirty_page`, renamed `writeback_dirty_folio` in 5.18).
REQUIRED_EVENTS: tuple[tuple[str, ...], ...] = (
    ("writeback:writeback_dirty_folio", "writeback:writeback_dirty_page"),
    ("block:block_rq_issue",),
    ("block:block_rq_complete",),
)
#: Recorded when the kernel has them: the application's writes and syncs.
OPTIONAL_EVENTS = (
    "syscalls:sys_enter_pwrite64",
    "syscalls:sys_enter_fsync",
    "syscalls:sys_enter_fdatasync",
    "syscalls:sys_enter_sync_file_range",
    "ext4:ext4_da_write_begin",
    # The size (order) of each folio the page cache adds: a dirty large folio is all of
    # its pages dirty, and `writeback_dirty_folio` names only the first.
    "filemap:mm_filemap_add_to_page_cache",
    "filemap:mm_filemap_delete_from_page_cache",
)
#: File systems and the package their mkfs comes in.
FILESYSTEMS = {"ext4": "e2fsprogs", "xfs": "xfsprogs"}
#: Default size of the file system image (sparse).
DEFAULT_SIZE = 512 << 20
#: Smallest image accepted (xfs wants 300 MB; ext4 makes do with far less).
MIN_SIZE = {"ext4": 16 << 20, "xfs": 300 << 20}
#: Per-CPU ring buffer of the trace instance, KiB.
BUFFER_KB = 16384
#: After the command and the sync, how long writeback and completions get to land.
SETTLE_S = 0.5
#: Bytes of the command's output kept in command.txt.
OUTPUT_LIMIT = 16 << 20
#: Environment variable the command gets: the mount point (its working directory).
CAPTURE_DIR_ENV = "ZOMBIESIM_CAPTURE_DIR"

CAP_SYS_ADMIN = 21
BLOCK = 4096
SECTORS_PER_BLOCK = BLOCK // 512

#: What the converter writes (and what the importer reads).
DIRTY_CSV = "pagecache_dirty.csv.gz"
DEVICE_CSV = "device_writes_hashed.csv.gz"
SUMMARY = "loop_summary.txt"
RAW = "ftrace_raw.txt.gz"
UPTIME = "uptime_start.txt"
EXTENTS = "extents.txt"
INODES = "inodes.txt"
COMMAND = "command.txt"
TRACE = "trace.zst"


def _environment_error(message: str) -> Exception:
    return make_error(InputError, message, "environment")


# -- environment checks (each probe is a module function, so tests can replace it) -----------


def _privileged() -> bool:
    """Effective root, or CAP_SYS_ADMIN in the effective set."""
    if os.geteuid() == 0:
        return True
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> CAP_SYS_ADMIN & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False


def _tracefs_mounted(path: Path) -> bool:
    return (path / "available_events").exists()


def _mount_tracefs(path: Path) -> str | None:
    """Mount tracefs at `path`; None when it worked, else why not."""
    try:
        proc = subprocess.run(
            ["mount", "-t", "tracefs", "nodev", str(path)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return str(e)
    if proc.returncode != 0 or not _tracefs_mounted(path):
        return proc.stderr.strip() or f"exit status {proc.returncode}"
    return None


def _available_events(path: Path) -> set[str] | None:
    """The events tracefs offers, or None when they cannot be read."""
    try:
        with open(path / "available_events") as f:
            return {line.strip() for line in f if line.strip()}
    except OSError:
        return None


def _which(program: str) -> str | None:
    found = shutil.which(program)
    if found is None:
        # Root's tools may live in sbin directories a user's PATH leaves out.
        for d in ("/usr/sbin", "/sbin", "/usr/bin", "/bin"):
            if os.access(os.path.join(d, program), os.X_OK):
                return os.path.join(d, program)
    return found


def _exists(path: str) -> bool:
    return os.path.exists(path)


def check_environment(
    fs: str = "ext4", tracefs: Path | str = TRACEFS, mount: bool = True
) -> list[str]:
    """What a capture needs and this machine lacks, one item each naming the thing and how to
    get it; empty when a capture can run. With `mount`, an unmounted tracefs is mounted (as
    root) and named only if that fails."""
    tracefs = Path(tracefs)
    missing: list[str] = []
    root = _privileged()
    if not root:
        missing.append(
            f"root privileges (effective uid {os.geteuid()}, no CAP_SYS_ADMIN): run it as "
            "root, e.g. `sudo zombiesim capture ...`"
        )
    if not _tracefs_mounted(tracefs):
        if not root:
            missing.append(
                f"tracefs at {tracefs} (not mounted): as root, `mount -t tracefs nodev {tracefs}`"
            )
        else:
            why = _mount_tracefs(tracefs) if mount else "not tried"
            if why is not None:
                missing.append(
                    f"tracefs at {tracefs} (not mounted, and `mount -t tracefs nodev "
                    f"{tracefs}` failed: {why}): a kernel with CONFIG_FTRACE and tracefs, "
                    "mounted there"
                )
    if _tracefs_mounted(tracefs):
        events = _available_events(tracefs)
        if events is None:
            missing.append(
                f"read access to {tracefs / 'available_events'} (to check the trace events): "
                "run as root"
            )
        else:
            for choices in REQUIRED_EVENTS:
                if not any(c in events for c in choices):
                    alt = f" (or {', '.join(choices[1:])})" if len(choices) > 1 else ""
                    missing.append(
                        f"kernel trace event `{choices[0]}`{alt} (not in "
                        f"{tracefs / 'available_events'}): a kernel with tracepoints "
                        "(CONFIG_TRACEPOINTS, CONFIG_BLK_DEV_IO_TRACE for block events)"
                    )
            if not _exists(str(tracefs / "instances")):
                missing.append(
                    f"trace instances ({tracefs / 'instances'} is absent): a kernel of 4.1 or later"
                )
    if not _exists("/dev/loop-control"):
        missing.append("/dev/loop-control (the loop block driver): `modprobe loop` as root")
    tools = [
        ("losetup", "util-linux"),
        (f"mkfs.{fs}", FILESYSTEMS.get(fs, fs)),
        ("filefrag", "e2fsprogs"),
        ("mount", "util-linux"),
        ("umount", "util-linux"),
    ]
    for program, package in tools:
        if _which(program) is None:
            missing.append(f"`{program}` (package {package}: `apt-get install {package}`)")
    return missing


# -- the raw trace: parsing ---------------------------------------------------------------------

#: `comm-pid [cpu] flags timestamp: event: payload` (the flags column is optional);
#: syscall events print `sys_pwrite64(fd: ...)`.
_EVENT = re.compile(r"\]\s+(?:[^\s:]+\s+)?(\d+\.\d+): ([A-Za-z0-9_]+)(?:: ?|(?=\())")
_LOST = re.compile(r"\[LOST (\d+) EVENTS\]")
#: `7,0 WS 8192 () 966656 + 16 be,0,4 [postgres]` (older kernels: no bytes column)
_RQ = re.compile(r"^(\d+),(\d+) (\S+) (?:(\d+) )?\((.*?)\) (\d+) \+ (\d+)")
#: `bdi 7:0: ino=1352 index=0`
_DIRTY = re.compile(r"^bdi (\S+): ino=(\d+) index=(\d+)")
_DIRTY_EVENTS = ("writeback_dirty_folio", "writeback_dirty_page")
#: `dev 7:0 ino c pfn=0x1234 ofs=8192 order=2` (the inode in hex, the offset in bytes)
_FILEMAP = re.compile(r"^dev (\d+):(\d+) ino ([0-9a-f]+) \S+ ofs=(\d+)(?: order=(\d+))?")
_FILEMAP_ADD = "mm_filemap_add_to_page_cache"
_FILEMAP_DELETE = "mm_filemap_delete_from_page_cache"
#: Events that name a device as `dev M,m` (ext4) or `M,m ...` (block).
_EXTENT = re.compile(r"^\s*\d+:\s*(\d+)\.\.\s*(\d+):\s*(\d+)\.\.\s*(\d+):\s*(\d+):(.*)$")


def _ns(text: str) -> int:
    """Nanoseconds from a decimal string of seconds (exactly)."""
    whole, _, frac = text.strip().partition(".")
    return int(whole or "0") * 1_000_000_000 + int((frac + "000000000")[:9])


def _wall(ns: int) -> str:
    """Epoch nanoseconds as seconds with 6 decimals (rounded to the microsecond)."""
    us = (ns + 500) // 1000
    return f"{us // 1_000_000}.{us % 1_000_000:06d}"


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


class _Lifetimes:
    """Percentiles of positive durations in bounded memory: log-spaced bins, 0.5% wide."""

    PER_DECADE = 460
    FLOOR = 1e-6

    def __init__(self) -> None:
        self.bins: dict[int, int] = {}
        self.n = 0

    def add(self, seconds: float) -> None:
        b = -1 if seconds < self.FLOOR else int(math.log10(seconds / self.FLOOR) * self.PER_DECADE)
        self.bins[b] = self.bins.get(b, 0) + 1
        self.n += 1

    def quantile(self, q: float) -> float:
        if self.n == 0:
            return math.nan
        rank = q * (self.n - 1)
        seen = 0
        for b in sorted(self.bins):
            seen += self.bins[b]
            if seen > rank:
                return 0.0 if b < 0 else self.FLOOR * 10 ** ((b + 0.5) / self.PER_DECADE)
        return math.nan


@dataclass
class ConvertResult:
    """What `convert_raw` found."""

    #: Events kept (on the device, when one is given), by name.
    events: dict[str, int] = field(default_factory=dict)
    #: Clean → dirty transitions (`writeback_dirty_folio` events).
    dirty_events: int = 0
    #: Rows of pagecache_dirty.csv.gz: one per 4 KiB page, a large folio's event giving one
    #: row for each of its pages (when the trace has the folio's size, from `filemap`).
    dirty_rows: int = 0
    #: ... of them whose inode is not in inodes.txt (a file deleted during the run).
    dirty_unknown: int = 0
    #: Distinct pages (inode, index) dirtied, and the files they belong to.
    dirty_pages: int = 0
    dirty_files: int = 0
    #: Write requests with data, and the 4 KiB blocks they wrote (rows of the device CSV).
    device_requests: int = 0
    device_blocks: int = 0
    #: ... of those blocks that belong to a file page after the run.
    device_blocks_mapped: int = 0
    #: Distinct files the device writes landed in.
    device_files: int = 0
    #: Events the kernel dropped (`[LOST N EVENTS]`: the reader fell behind).
    lost_events: int = 0
    #: Pages dirtied and not written to the device before the end of the capture.
    pages_still_dirty: int = 0
    #: First dirty → device write, seconds: n, p10, p50, p90.
    lifetime: tuple[int, float, float, float] = (0, math.nan, math.nan, math.nan)

    @property
    def device_blocks_unmapped(self) -> int:
        return self.device_blocks - self.device_blocks_mapped


def _open_text(path: Path | str) -> IO[str]:
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="")
    return open(path, encoding="utf-8", errors="replace", newline="")


@contextmanager
def _atomic_gzip(path: Path) -> Iterator[IO[str]]:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=6, newline="") as f:
            yield f
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _device_key(device: tuple[int, int] | str | None) -> tuple[int, int] | None:
    if device is None or isinstance(device, tuple):
        return device
    major, sep, minor = device.replace(",", ":").partition(":")
    if not sep:
        raise make_error(InputError, f"device `{device}`: expected MAJOR:MINOR", "input")
    return int(major), int(minor)


def _csv_field(text: str) -> str:
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def convert_raw(
    raw_path: Path | str,
    folder: Path | str,
    *,
    device: tuple[int, int] | str | None = None,
    notes: Sequence[str] = (),
) -> ConvertResult:
    """Turn the raw trace `raw_path` (trace_pipe text, `.gz` or plain) into the folder's
    `pagecache_dirty.csv.gz`, `device_writes_hashed.csv.gz` and `loop_summary.txt`.

    Reads `uptime_start.txt`, `extents.txt` and `inodes.txt` from `folder`. `device`
    (`(major, minor)` or `"7:0"`) keeps only that device's block, writeback and ext4
    events; None keeps every device. `notes` are lines appended to `loop_summary.txt`.
    Streams the trace line by line; memory grows with the extents and the distinct pages
    dirtied, not with the trace."""
    folder = Path(folder)
    uptime_ns, epoch_ns = read_uptime_start(folder / UPTIME)
    offset_ns = epoch_ns - uptime_ns
    inodes = read_inodes(folder / INODES)
    path_inode = {p: i for i, p in inodes.items()}
    extents = ExtentMap.read(folder / EXTENTS)
    dev = _device_key(device)
    block_prefix = f"{dev[0]},{dev[1]} " if dev else None
    bdi_name = f"{dev[0]}:{dev[1]}" if dev else None
    ext4_prefix = f"dev {dev[0]},{dev[1]} " if dev else None

    res = ConvertResult()
    events: dict[str, int] = {}
    pending: dict[tuple[int, int], int] = {}  # (ino, index) -> first dirty, uptime ns
    dirtied: set[tuple[int, int]] = set()
    dirty_inodes: set[int] = set()
    folios: dict[tuple[int, int], int] = {}  # (ino, index) -> order, for large folios
    device_files: set[str] = set()
    lifetimes = _Lifetimes()
    try:
        raw = _open_text(raw_path)
    except OSError as e:
        raise make_error(InputError, f"cannot read `{raw_path}`: {e.strerror or e}", "io") from e
    try:
        with (
            raw,
            _atomic_gzip(folder / DIRTY_CSV) as dirty_out,
            _atomic_gzip(folder / DEVICE_CSV) as dev_out,
        ):
            dirty_out.write("t,ino,file,index\n")
            dev_out.write("t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write\n")
            for line in raw:
                m = _EVENT.search(line)
                if m is None:
                    lost = _LOST.search(line)
                    if lost:
                        res.lost_events += int(lost.group(1))
                    continue
                name = m.group(2)
                payload = line[m.end() :].rstrip("\n")
                if name.startswith("block_"):
                    if block_prefix and not payload.startswith(block_prefix):
                        continue
                elif name.startswith("ext4_"):
                    if ext4_prefix and not payload.startswith(ext4_prefix):
                        continue
                elif name in (_FILEMAP_ADD, _FILEMAP_DELETE):
                    fm = _FILEMAP.match(payload)
                    if fm is None or (dev and (int(fm.group(1)), int(fm.group(2))) != dev):
                        continue
                    key = (int(fm.group(3), 16), int(fm.group(4)) // BLOCK)
                    order = int(fm.group(5) or 0)
                    if name == _FILEMAP_ADD and order > 0:
                        folios[key] = order
                    else:
                        folios.pop(key, None)
                elif name in _DIRTY_EVENTS:
                    d = _DIRTY.match(payload)
                    if d is None or (bdi_name and d.group(1) != bdi_name):
                        continue
                    t = m.group(1)
                    ino, index = int(d.group(2)), int(d.group(3))
                    file = inodes.get(ino)
                    if file is None:
                        res.dirty_unknown += 1
                    res.dirty_events += 1
                    dirty_inodes.add(ino)
                    t_ns = _ns(t)
                    name_field = _csv_field(file or "")
                    for page in range(index, index + (1 << folios.get((ino, index), 0))):
                        dirty_out.write(f"{t},{ino},{name_field},{page}\n")
                        res.dirty_rows += 1
                        key = (ino, page)
                        dirtied.add(key)
                        if key not in pending:
                            pending[key] = t_ns
                events[name] = events.get(name, 0) + 1
                if name != "block_rq_issue":
                    continue
                r = _RQ.match(payload)
                if r is None:
                    continue
                rwbs, sector, sectors = r.group(3), int(r.group(6)), int(r.group(7))
                if "W" not in rwbs or sectors == 0:
                    continue
                t_ns = _ns(m.group(1))
                t_wall = _wall(t_ns + offset_ns)
                res.device_requests += 1
                first = sector // SECTORS_PER_BLOCK
                last = (sector + sectors - 1) // SECTORS_PER_BLOCK
                for fsblk in range(first, last + 1):
                    hit = extents.lookup(fsblk)
                    res.device_blocks += 1
                    if hit is None:
                        dev_out.write(f"{t_wall},{rwbs},{fsblk},,,,\n")
                        continue
                    file, page = hit
                    res.device_blocks_mapped += 1
                    device_files.add(file)
                    dev_out.write(f"{t_wall},{rwbs},{fsblk},{_csv_field(file)},{page},,\n")
                    ino = path_inode.get(file)
                    if ino is not None:
                        since = pending.pop((ino, page), None)
                        if since is not None:
                            lifetimes.add(max(0, t_ns - since) / 1e9)
    except OSError as e:
        raise make_error(InputError, f"`{raw_path}`: {e.strerror or e}", "io") from e
    except EOFError as e:
        raise make_error(InputError, f"`{raw_path}`: truncated ({e})", "io") from e

    res.events = dict(sorted(events.items()))
    res.dirty_pages = len(dirtied)
    res.dirty_files = len(dirty_inodes)
    res.device_files = len(device_files)
    res.pages_still_dirty = len(pending)
    res.lifetime = (
        lifetimes.n,
        lifetimes.quantile(0.1),
        lifetimes.quantile(0.5),
        lifetimes.quantile(0.9),
    )
    _write_summary(folder / SUMMARY, res, notes)
    return res


def _write_summary(path: Path, res: ConvertResult, notes: Sequence[str]) -> None:
    lines = [f"{name:<24}{n:>9}" for name, n in res.events.items()]
    if res.dirty_rows != res.dirty_events:
        lines.append(
            f"page-cache dirty events: {res.dirty_events}, large folios expanded to "
            f"{res.dirty_rows} 4KiB pages"
        )
    lines.append(
        f"device write 4KiB blocks mapped to a file page: {res.device_blocks_mapped}, "
        f"unmapped (fs metadata/journal/deleted files): {res.device_blocks_unmapped}"
    )
    n, p10, p50, p90 = res.lifetime
    if n:
        lines.append(
            "page-cache zombie lifetime (first dirty -> device write) all   "
            f"n={n:>6} p10 {p10:.3f} p50 {p50:.3f} p90 {p90:.3f} s"
        )
    lines.append(f"pages still dirty at end of capture: {res.pages_still_dirty}")
    lines.append(f"lost events (trace buffer overrun): {res.lost_events}")
    lines.extend(notes)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, path)


# -- running a capture --------------------------------------------------------------------------


@dataclass
class CaptureResult:
    """What `capture` did."""

    folder: Path
    command: list[str]
    #: The command's exit status (negative: killed by that signal); None if it timed out.
    status: int | None
    timed_out: bool
    elapsed_s: float
    fs: str
    size: int
    loop_device: str
    counts: ConvertResult
    #: The time limit given, seconds.
    timeout: float | None = None
    #: `folder/trace.zst` when the importer ran, else None (see `import_note`).
    trace: Path | None = None
    import_note: str | None = None
    #: What the importer said (records, joined shares, ...), when it ran.
    import_report: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.timed_out or self.status != 0


def _run(cmd: list[str], what: str, timeout: float = 120) -> str:
    """Run a helper program; its stdout, or an error naming `what` and its stderr."""
    cmd = [_which(cmd[0]) or cmd[0], *cmd[1:]]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as e:
        raise _environment_error(f"{what} failed (`{shlex.join(cmd)}`): {e}") from e
    if proc.returncode != 0:
        detail = proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}"
        raise _environment_error(f"{what} failed (`{shlex.join(cmd)}`): {detail}")
    return proc.stdout


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


def _syncfs(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.syncfs(fd) != 0:
            os.sync()
    except (OSError, AttributeError):
        os.sync()
    finally:
        os.close(fd)


def _list_files(root: Path) -> list[tuple[int, int, str]]:
    """`(ino, size, relative path)` of every regular file under `root` (symbolic links not
    followed), in walk order."""
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            if "\n" in rel:
                continue
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                files.append((st.st_ino, st.st_size, rel))
    return files


#: The pseudo-file the ext4 journal is listed as (inode 8), as in the pgbench capture.
JOURNAL = "<ext4-journal>"
JOURNAL_INODE = 8


def _journal_extents(device: str) -> list[tuple[int, int, int]]:
    """`(logical, physical, length)` of the ext4 journal (inode 8) on `device`, read with
    `debugfs -R "blocks <8>"` (read-only, fine while mounted); empty when that fails."""
    program = _which("debugfs")
    if program is None:
        return []
    try:
        proc = subprocess.run(
            [program, "-R", f"blocks <{JOURNAL_INODE}>", device],
            capture_output=True,
            text=True,
            timeout=120,
        )
        blocks = [int(b) for b in proc.stdout.split()]
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    extents: list[tuple[int, int, int]] = []
    for logical, block in enumerate(blocks):
        if extents and extents[-1][1] + extents[-1][2] == block:
            lo, ph, n = extents[-1]
            extents[-1] = (lo, ph, n + 1)
        else:
            extents.append((logical, block, 1))
    return extents


def write_layout(root: Path, folder: Path, journal: str | None = None) -> int:
    """`inodes.txt` and `extents.txt` of the file system mounted at `root` (with `journal`,
    an ext4 device, its journal too, as the pseudo-file `<ext4-journal>`); the number of
    files."""
    files = _list_files(root)
    with open(folder / INODES, "w") as f:
        for ino, size, rel in files:
            f.write(f"{ino} {size} {rel}\n")
    extents: dict[str, list[str]] = {rel: [] for _, _, rel in files}
    names = [rel for _, _, rel in files]
    for i in range(0, len(names), 200):
        batch = names[i : i + 200]
        proc = subprocess.run(
            [_which("filefrag") or "filefrag", "-e", "-b4096", "--", *batch],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=600,
        )
        current: str | None = None
        for line in proc.stdout.splitlines():
            if line.startswith("File size of "):
                head = line[len("File size of ") :]
                current = head[: head.rfind(" is ")]
                if current not in extents:
                    current = None
            elif current is not None and _EXTENT.match(line):
                extents[current].append(line)
    journal_extents = _journal_extents(journal) if journal else []
    with open(folder / EXTENTS, "w") as f:
        for rel in names:
            f.write(f"== {rel}\n")
            for line in extents[rel]:
                f.write(line + "\n")
        if journal_extents:
            f.write(f"== {JOURNAL}\n")
            for i, (lo, ph, n) in enumerate(journal_extents):
                last = "last,eof" if i == len(journal_extents) - 1 else ""
                f.write(f"{i:4d}: {lo}.. {lo + n - 1}: {ph}.. {ph + n - 1}: {n}: {last}\n")
    if journal_extents:
        with open(folder / INODES, "a") as f:
            f.write(f"{JOURNAL_INODE} 0 {JOURNAL}\n")
    return len(files)


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
    tees = [
        _Tee(proc.stdout, sys.stdout.buffer if echo else None, sink, lock),  # type: ignore[arg-type]
        _Tee(proc.stderr, sys.stderr.buffer if echo else None, sink, lock),  # type: ignore[arg-type]
    ]
    for t in tees:
        t.start()
    timed_out = False
    try:
        try:
            status: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            status = None
        elapsed = time.monotonic() - start
    finally:
        _kill_group(proc)  # whatever it left running (and all of it on Ctrl-C)
        for t in tees:
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


def check_out(out: Path | str, force: bool = False) -> Path:
    """The capture folder's path, refused (InputError) when it is a file, or a non-empty
    folder without `force`."""
    out = Path(out)
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise make_error(InputError, f"--out `{out}`: exists and is not a folder", "io")
        if any(out.iterdir()) and not force:
            raise make_error(
                InputError,
                f"--out `{out}`: the folder exists and is not empty (--force replaces it)",
                "io",
            )
    parent = out.resolve().parent
    if not parent.is_dir():
        raise make_error(InputError, f"--out `{out}`: no directory `{parent}`", "io")
    if not os.access(parent, os.W_OK):
        raise make_error(InputError, f"--out `{out}`: cannot write in `{parent}`", "io")
    return out


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


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _publish(staging: Path, out: Path) -> None:
    """Move the finished folder into place (replacing an existing one, with --force)."""
    if out.exists():
        if out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        else:
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.rename(out, old)
            os.rename(staging, out)
            shutil.rmtree(old, ignore_errors=True)
            return
    os.rename(staging, out)


def capture(
    cmd: Sequence[str],
    out: Path | str,
    *,
    size: int = DEFAULT_SIZE,
    fs: str = "ext4",
    timeout: float | None = None,
    keep_raw: bool = False,
    force: bool = False,
    echo: bool = True,
    log: Callable[[str], None] | None = None,
    tracefs: Path | str = TRACEFS,
) -> CaptureResult:
    """Run `cmd` on a fresh `fs` file system of `size` bytes on a loop device (its working
    directory, also in `$ZOMBIESIM_CAPTURE_DIR`), tracing its I/O, and write the capture
    folder `out` (see the module's documentation). The folder is assembled beside `out`
    and renamed at the end: a failed capture leaves nothing. A command that fails or times
    out still gives a capture (`result.failed`, noted in loop_summary.txt).

    Raises InputError (exit 2) naming what is missing when the machine cannot capture."""
    cmd = list(cmd)
    if not cmd:
        raise make_error(InputError, "capture: no command to run", "input")
    if fs not in FILESYSTEMS:
        raise make_error(
            InputError, f"--fs `{fs}`: expected one of {', '.join(FILESYSTEMS)}", "input"
        )
    if size < MIN_SIZE[fs]:
        raise make_error(
            InputError, f"--size: {fs} needs at least {MIN_SIZE[fs] >> 20} MiB, got {size}", "input"
        )
    if timeout is not None and not (timeout > 0 and math.isfinite(timeout)):
        raise make_error(InputError, f"--timeout: expected seconds above 0, got {timeout}", "input")
    cmd[0] = _resolve_program(cmd[0])
    out = check_out(out, force)
    tracefs = Path(tracefs)
    missing = check_environment(fs, tracefs)
    if missing:
        raise _environment_error("capture needs: " + "; ".join(missing))
    say = log or (lambda _msg: None)
    available = _available_events(tracefs) or set()

    size = -(-size // (1 << 20)) << 20
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.capture-", dir=out.resolve().parent))
    work = Path(tempfile.mkdtemp(prefix="zombiesim-capture-"))
    image, mnt = work / f"{fs}.img", work / "mnt"
    loop: str | None = None
    mounted = False
    instance: _TraceInstance | None = None
    reader: _PipeReader | None = None
    published = False
    warnings: list[str] = []
    raw = staging / RAW
    try:
        with open(image, "wb") as f:
            f.truncate(size)
        # Each resource is taken and recorded with SIGINT and SIGTERM held, so a signal
        # cannot fall between the two and leave it behind (a loop device, a mount, a
        # trace instance, an open trace pipe): the `finally` below undoes what is recorded.
        with _signals_held():
            loop = _run(["losetup", "--find", "--show", str(image)], "attaching a loop device")
            loop = loop.strip()
        st = os.stat(loop)
        dev = (os.major(st.st_rdev), os.minor(st.st_rdev))
        say(f"{loop} ({dev[0]}:{dev[1]}): {fs}, {size >> 20} MiB")
        if fs == "ext4":
            # Inode tables and journal zeroed now, not by ext4lazyinit during the capture.
            init = "lazy_itable_init=0,lazy_journal_init=0,nodiscard"
            mkfs = ["mkfs.ext4", "-q", "-F", "-E", init]
        else:
            mkfs = ["mkfs.xfs", "-q", "-f", "-K"]
        _run([*mkfs, loop], f"mkfs.{fs}", timeout=600)
        mnt.mkdir()
        with _signals_held():
            _run(["mount", "-t", fs, loop, str(mnt)], "mounting the file system")
            mounted = True
        with _signals_held():
            instance = _TraceInstance(tracefs, f"zombiesim-{os.getpid()}")
        instance.configure(available, dev)
        with _signals_held():
            reader = _PipeReader(instance.path / "trace_pipe", raw)
            reader.start()
        write_uptime_start(staging / UPTIME)
        instance.start()
        say(f"tracing {', '.join(instance.enabled)}; running {shlex.join(cmd)}")
        status, timed_out, elapsed, output = _run_command(cmd, mnt, timeout, echo)
        _syncfs(mnt)
        time.sleep(SETTLE_S)
        instance.stop()
        reader.finish()
        reader = None
        files = write_layout(mnt, staging, journal=loop if fs == "ext4" else None)
        # The device is no longer needed: free it before the (longer) conversion and import.
        enabled, loop_device = instance.enabled, loop
        with _signals_held():
            warnings.extend(_teardown(None, instance, mnt, loop, work))
        instance, loop, mounted = None, None, False
        say(f"{files} file{'' if files == 1 else 's'} on the file system; converting the trace")
        state = status_text(status, timed_out, timeout)
        failed = timed_out or status != 0
        (staging / COMMAND).write_bytes(
            f"$ {shlex.join(cmd)}\n# cwd {mnt} (${CAPTURE_DIR_ENV}); {fs} {size >> 20} MiB "
            f"on {loop_device}\n".encode()
            + output
            + (b"" if not output or output.endswith(b"\n") else b"\n")
            + f"# {state}{'' if timed_out else f' after {elapsed:.3f} s'}\n".encode()
        )
        notes = [
            f"command: {shlex.join(cmd)}",
            f"command {'FAILED: ' if failed else ''}{state}"
            + ("" if timed_out else f" after {elapsed:.3f} s"),
            f"file system: {fs}, {size >> 20} MiB on {loop_device} ({dev[0]}:{dev[1]}), "
            f"{files} file{'' if files == 1 else 's'}",
            f"events recorded: {', '.join(enabled)}",
            "content_xxh3 and t_app_write are empty (no hashing shim)",
        ]
        counts = convert_raw(raw, staging, device=dev, notes=notes)
        if not keep_raw:
            raw.unlink()
        result = CaptureResult(
            folder=out,
            command=cmd,
            status=status,
            timed_out=timed_out,
            elapsed_s=elapsed,
            fs=fs,
            size=size,
            loop_device=loop_device,
            counts=counts,
            timeout=timeout,
            warnings=warnings,
        )
        _import(staging, result)
        os.chmod(staging, 0o777 & ~_umask())  # mkdtemp made it private
        _publish(staging, out)
        published = True
        return result
    finally:
        with _signals_held():
            warnings.extend(_teardown(reader, instance, mnt if mounted else None, loop, work))
            if not published:
                shutil.rmtree(staging, ignore_errors=True)
            for w in warnings:
                sys.stderr.write(f"zombiesim: warning: {w}\n")


def _import(folder: Path, result: CaptureResult) -> None:
    from . import trace as traces

    importer = getattr(traces, "import_capture", None)
    if importer is None:
        result.import_note = (
            "not imported: this build has no zombiesim.trace.import_capture; later, "
            "`zombiesim trace import-capture DIR --out DIR/trace.zst`"
        )
        return
    try:
        report = importer(str(folder), str(folder / TRACE))
    except AttributeError as e:  # the Python side is there, the compiled core is older
        result.import_note = (
            f"not imported: the importer is not built into this zombiesim ({e}); later, "
            "`zombiesim trace import-capture DIR --out DIR/trace.zst`"
        )
        return
    except Exception as e:  # the capture is still worth keeping
        result.import_note = f"not imported: {e}"
        result.warnings.append(f"importing the capture failed: {e}")
        return
    result.trace = result.folder / TRACE
    result.import_report = report if isinstance(report, dict) else None


def _teardown(
    reader: _PipeReader | None,
    instance: _TraceInstance | None,
    mnt: Path | None,
    loop: str | None,
    work: Path,
) -> list[str]:
    """Undo everything, each step on its own; what could not be undone, as warnings."""
    warnings: list[str] = []

    def step(what: str, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except Exception as e:
            warnings.append(f"{what}: {e}")

    if instance is not None:
        step("stopping the trace", instance.stop)
    if reader is not None:
        reader.stopping.set()
        reader.join(timeout=10)
    if instance is not None:
        step(f"removing the trace instance {instance.path}", instance.remove)
    if mnt is not None:
        step(f"unmounting {mnt}", lambda: _umount(mnt))
    if loop is not None:
        step(f"detaching {loop}", lambda: _run(["losetup", "-d", loop], "losetup -d"))
    mount_point = work / "mnt"
    if not os.path.ismount(mount_point):
        shutil.rmtree(work, ignore_errors=True)
    elif mnt is not None:
        warnings.append(f"{mount_point} is still mounted; {work} was left in place")
    return warnings


def _umount(mnt: Path) -> None:
    for _ in range(10):
        proc = subprocess.run(["umount", str(mnt)], capture_output=True, text=True, timeout=120)
        if proc.returncode == 0:
            return
        time.sleep(0.5)
    # Something still holds it: detach it now, it goes when the last user does.
    _run(["umount", "--lazy", str(mnt)], "umount --lazy")
