"""The raw ftrace text (`trace_pipe`) turned into the capture folder's CSV files and
`loop_summary.txt`: `convert_raw` and what it found (`ConvertResult`)."""

from __future__ import annotations

import gzip
import math
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from .._errors import InputError, make_error
from .folder import (
    DEVICE_CSV,
    DIRTY_CSV,
    EXTENTS,
    EXTENTS_GONE,
    INODES,
    SUMMARY,
    TRIMS_CSV,
    UPTIME,
    ExtentMap,
    _ns,
    read_inodes,
    read_uptime_start,
)

BLOCK = 4096
SECTORS_PER_BLOCK = BLOCK // 512

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
#: `dev 7,0 ino 12 flags CREATE|... lblk 0 pblk 32896 len 64 mflags NMU ret 64`
_MAP = re.compile(
    r"^dev (\d+),(\d+) ino (\d+) flags \S* lblk (\d+) pblk (\d+) len (\d+) mflags \S* ret (-?\d+)"
)
#: `dev 7,0 ino 12 mode 0100644 block 32896 count 64 flags ...`
_FREE_BLOCKS = re.compile(r"^dev (\d+),(\d+) ino (\d+) mode \S+ block (\d+) count (\d+)")
#: `dev 7,0 ino 12 mode 0100644 uid 0 gid 0 blocks 0`
_FREE_INODE = re.compile(r"^dev (\d+),(\d+) ino (\d+) ")
#: `dev 7,0 ino 12 pos 8192 len 4096`
_WRITE_BEGIN = re.compile(r"^dev (\d+),(\d+) ino (\d+) pos (\d+) len (\d+)")
_WRITE_EVENTS = ("ext4_da_write_begin", "ext4_write_begin")
_MAP_EVENT = "ext4_ext_map_blocks_exit"
#: The `file` of the block device's own page cache (file-system metadata): its page index
#: is the block number (4 KiB blocks), which the importer takes as is.
BLOCK_DEVICE = "<block device>"
_FREE_BLOCKS_EVENT = "ext4_free_blocks"
_FREE_INODE_EVENT = "ext4_free_inode"


class _LargeFolios:
    """The page cache's large folios, and which of their pages a write made dirty.

    `writeback_dirty_folio` names a folio's first page when the folio turns dirty, but
    ext4 writes back only the blocks that were written (a WAL segment's folio of 2 MiB
    dirtied by an 8 KiB append). With the application's writes (`ext4_da_write_begin`:
    inode, offset, length), a dirty event stands for the pages the write that dirtied the
    folio touched, and a later write into the still-dirty folio dirties its pages then;
    the folio is clean again once any of its blocks is written. Without write events
    (older kernels, or a trace recorded without them) a dirty folio is all of its pages."""

    MAX_ORDER = 9

    def __init__(self) -> None:
        self.order: dict[tuple[int, int], int] = {}  # (ino, first page) -> order
        self.last_write: dict[int, tuple[int, int]] = {}  # ino -> pages first..last
        self.dirty: dict[tuple[int, int], set[int]] = {}  # dirty folio -> its dirty pages
        self.writes_seen = False

    def added(self, ino: int, page: int, order: int) -> None:
        key = (ino, page)
        self.dirty.pop(key, None)
        if order > 0:
            self.order[key] = order
        else:
            self.order.pop(key, None)

    def folio_of(self, ino: int, page: int) -> tuple[int, int] | None:
        """`(first page, order)` of the large folio holding `page`."""
        for k in range(1, self.MAX_ORDER + 1):
            first = page & ~((1 << k) - 1)
            if self.order.get((ino, first)) == k:
                return first, k
        return None

    def turned_dirty(self, ino: int, index: int) -> list[int]:
        """The pages a dirty event of the folio at `index` stands for."""
        order = self.order.get((ino, index), 0)
        if order == 0:
            return [index]
        end = index + (1 << order)
        if not self.writes_seen:
            return list(range(index, end))
        lo, hi = self.last_write.get(ino, (index, index))
        pages = list(range(max(lo, index), min(hi + 1, end))) or [index]
        self.dirty[(ino, index)] = set(pages)
        return pages

    def written(self, ino: int, pos: int, length: int) -> list[int]:
        """An application write: the pages it newly dirties in folios already dirty."""
        self.writes_seen = True
        lo, hi = pos // BLOCK, (pos + max(length, 1) - 1) // BLOCK
        self.last_write[ino] = (lo, hi)
        newly = []
        for page in range(lo, hi + 1):
            folio = self.folio_of(ino, page)
            if folio is None:
                continue
            pages = self.dirty.get((ino, folio[0]))
            if pages is not None and page not in pages:
                pages.add(page)
                newly.append(page)
        return newly

    def cleaned(self, ino: int, page: int) -> None:
        """A block of the folio holding `page` went to the device: the folio is clean."""
        folio = self.folio_of(ino, page)
        if folio is not None:
            self.dirty.pop((ino, folio[0]), None)


class _BlockOwners:
    """Which inode page each device block holds as the run goes, from ext4's events:
    blocks mapped for writing (`ext4_ext_map_blocks_exit`), blocks freed
    (`ext4_free_blocks`), inodes freed (`ext4_free_inode`, which ends a *generation*:
    ext4 soon gives the number to a new file).

    A generation's name is the file's path when it is the inode's last generation and
    the file is there at the end (`inodes.txt`); any other (a file deleted during the run,
    or an inode that is not a regular file) is `<ino N.G>`, and its pages, as the run
    last mapped them, go to `extents_deleted.txt` for the importer."""

    def __init__(self, inodes: dict[int, str], frees: dict[int, int]):
        self.inodes = inodes
        #: Per inode, how many times the run frees it (its last generation's number).
        self.frees = frees
        self.gen: dict[int, int] = {}
        self.owner: dict[int, tuple[int, int, int]] = {}  # block -> (ino, gen, page)
        self.pages: dict[tuple[int, int], dict[int, int]] = {}  # (ino, gen) -> page -> block

    def name(self, ino: int, gen: int | None = None) -> str:
        """The name of `ino`'s generation `gen` (the current one by default)."""
        gen = self.gen.get(ino, 0) if gen is None else gen
        if gen == self.frees.get(ino, 0) and ino in self.inodes:
            return self.inodes[ino]
        return f"<ino {ino}.{gen}>"

    def mapped(self, ino: int, page: int, block: int, n: int) -> None:
        key = (ino, self.gen.get(ino, 0))
        pages = self.pages.setdefault(key, {})
        for i in range(n):
            self.owner[block + i] = (ino, key[1], page + i)
            pages[page + i] = block + i

    def freed_blocks(self, block: int, n: int) -> None:
        for b in range(block, block + n):
            self.owner.pop(b, None)

    def freed_inode(self, ino: int) -> None:
        self.gen[ino] = self.gen.get(ino, 0) + 1

    def lookup(self, block: int) -> tuple[int, str, int] | None:
        """`(ino, name, page)` of the inode page `block` holds now."""
        hit = self.owner.get(block)
        if hit is None:
            return None
        ino, gen, page = hit
        return ino, self.name(ino, gen), page

    def write_gone(self, path: Path) -> int:
        """`extents_deleted.txt`: each generation named `<ino N.G>`, its pages as runs
        of `filefrag -e` lines; the number of such files."""
        n = 0
        with open(path, "w") as f:
            for (ino, gen), pages in sorted(self.pages.items()):
                name = self.name(ino, gen)
                if not name.startswith("<ino "):
                    continue
                n += 1
                f.write(f"== {name}\n")
                runs: list[list[int]] = []  # [page, block, length]
                for page in sorted(pages):
                    block = pages[page]
                    last = runs[-1] if runs else None
                    if last and last[0] + last[2] == page and last[1] + last[2] == block:
                        last[2] += 1
                    else:
                        runs.append([page, block, 1])
                for i, (page, block, length) in enumerate(runs):
                    f.write(
                        f"{i:4d}: {page}.. {page + length - 1}: {block}.. "
                        f"{block + length - 1}: {length}:\n"
                    )
        return n


def _inode_frees(raw_path: Path | str, ext4_prefix: str | None) -> tuple[dict[int, int], bool]:
    """A first pass over the raw trace: how many times each inode is freed, and whether
    the trace has ext4's block-map events at all."""
    frees: dict[int, int] = {}
    has_map = False
    with _open_text(raw_path) as raw:
        for line in raw:
            if _FREE_INODE_EVENT in line:
                m = _EVENT.search(line)
                if m is None or m.group(2) != _FREE_INODE_EVENT:
                    continue
                payload = line[m.end() :]
                if ext4_prefix and not payload.startswith(ext4_prefix):
                    continue
                f = _FREE_INODE.match(payload)
                if f:
                    ino = int(f.group(3))
                    frees[ino] = frees.get(ino, 0) + 1
            elif not has_map and _MAP_EVENT in line:
                has_map = True
    return frees, has_map


def _wall(ns: int) -> str:
    """Epoch nanoseconds as seconds with 6 decimals (rounded to the microsecond)."""
    us = (ns + 500) // 1000
    return f"{us // 1_000_000}.{us % 1_000_000:06d}"


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
    #: Discard requests (a file system mounted with `discard`, or `fstrim`: rows of the
    #: trims CSV), and the 4 KiB blocks they freed.
    discard_requests: int = 0
    discarded_blocks: int = 0
    #: Inode generations that held blocks and are gone by the end (files deleted during
    #: the run), written to extents_deleted.txt (0 without ext4's block-map events).
    files_gone: int = 0
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
    `pagecache_dirty.csv.gz`, `device_writes_hashed.csv.gz`, `device_trims.csv.gz` and
    `loop_summary.txt`. Discard requests (rwbs `D`) are the rows of the trims CSV
    (`t_wall,fsblk,blocks`, one per request): the importer makes each a trim.

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
    try:
        frees, has_map = _inode_frees(raw_path, ext4_prefix)
    except OSError as e:
        raise make_error(InputError, f"cannot read `{raw_path}`: {e.strerror or e}", "io") from e
    except EOFError as e:
        raise make_error(InputError, f"`{raw_path}`: truncated ({e})", "io") from e
    metadata_ino = dev[0] << 20 | dev[1] if dev else None
    owners = _BlockOwners(inodes, frees) if has_map else None
    events: dict[str, int] = {}
    pending: dict[tuple[int, int], int] = {}  # (ino, index) -> first dirty, uptime ns
    dirtied: set[tuple[int, int]] = set()
    dirty_inodes: set[int] = set()
    folios = _LargeFolios()
    device_files: set[str] = set()
    lifetimes = _Lifetimes()
    dirty_out: IO[str]

    def emit(t: str, ino: int, file: str | None, page: int) -> None:
        """A row of pagecache_dirty.csv: page `page` of `ino` turned dirty at `t`."""
        dirty_out.write(f"{t},{ino},{_csv_field(file or '')},{page}\n")
        res.dirty_rows += 1
        key = (ino, page)
        dirtied.add(key)
        if key not in pending:
            pending[key] = _ns(t)

    try:
        raw = _open_text(raw_path)
    except OSError as e:
        raise make_error(InputError, f"cannot read `{raw_path}`: {e.strerror or e}", "io") from e
    try:
        with (
            raw,
            _atomic_gzip(folder / DIRTY_CSV) as dirty_out,
            _atomic_gzip(folder / DEVICE_CSV) as dev_out,
            _atomic_gzip(folder / TRIMS_CSV) as trim_out,
        ):
            dirty_out.write("t,ino,file,index\n")
            dev_out.write("t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write\n")
            trim_out.write("t_wall,fsblk,blocks\n")
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
                    if owners is not None:
                        _block_map_event(owners, name, payload)
                    if name in _WRITE_EVENTS:
                        w = _WRITE_BEGIN.match(payload)
                        if w:
                            ino = int(w.group(3))
                            newly = folios.written(ino, int(w.group(4)), int(w.group(5)))
                            if newly:
                                file = _dirty_name(ino, metadata_ino, inodes, owners)
                                for page in newly:
                                    emit(m.group(1), ino, file, page)
                elif name in (_FILEMAP_ADD, _FILEMAP_DELETE):
                    fm = _FILEMAP.match(payload)
                    if fm is None or (dev and (int(fm.group(1)), int(fm.group(2))) != dev):
                        continue
                    order = int(fm.group(5) or 0) if name == _FILEMAP_ADD else 0
                    folios.added(int(fm.group(3), 16), int(fm.group(4)) // BLOCK, order)
                elif name in _DIRTY_EVENTS:
                    d = _DIRTY.match(payload)
                    if d is None or (bdi_name and d.group(1) != bdi_name):
                        continue
                    t = m.group(1)
                    ino, index = int(d.group(2)), int(d.group(3))
                    file = _dirty_name(ino, metadata_ino, inodes, owners)
                    if file is None:
                        res.dirty_unknown += 1
                    res.dirty_events += 1
                    dirty_inodes.add(ino)
                    for page in folios.turned_dirty(ino, index):
                        emit(t, ino, file, page)
                events[name] = events.get(name, 0) + 1
                if name != "block_rq_issue":
                    continue
                r = _RQ.match(payload)
                if r is None:
                    continue
                rwbs, sector, sectors = r.group(3), int(r.group(6)), int(r.group(7))
                if sectors == 0 or not ("W" in rwbs or "D" in rwbs):
                    continue
                t_ns = _ns(m.group(1))
                t_wall = _wall(t_ns + offset_ns)
                first = sector // SECTORS_PER_BLOCK
                last = (sector + sectors - 1) // SECTORS_PER_BLOCK
                if "D" in rwbs:
                    # A discard: the device may forget these blocks (one trim).
                    res.discard_requests += 1
                    res.discarded_blocks += last - first + 1
                    trim_out.write(f"{t_wall},{first},{last - first + 1}\n")
                    continue
                res.device_requests += 1
                for fsblk in range(first, last + 1):
                    owner = owners.lookup(fsblk) if owners is not None else None
                    if owner is None:
                        hit = extents.lookup(fsblk)
                        ino = path_inode.get(hit[0]) if hit else None
                    else:
                        ino, hit = owner[0], owner[1:]
                    res.device_blocks += 1
                    if hit is None:
                        dev_out.write(f"{t_wall},{rwbs},{fsblk},,,,\n")
                        continue
                    file, page = hit
                    if ino is not None:
                        folios.cleaned(ino, page)
                    res.device_blocks_mapped += 1
                    device_files.add(file)
                    dev_out.write(f"{t_wall},{rwbs},{fsblk},{_csv_field(file)},{page},,\n")
                    if ino is not None:
                        since = pending.pop((ino, page), None)
                        if since is not None:
                            lifetimes.add(max(0, t_ns - since) / 1e9)
    except OSError as e:
        raise make_error(InputError, f"`{raw_path}`: {e.strerror or e}", "io") from e
    except EOFError as e:
        raise make_error(InputError, f"`{raw_path}`: truncated ({e})", "io") from e

    gone = folder / EXTENTS_GONE
    if owners is not None:
        res.files_gone = owners.write_gone(gone)
    elif gone.exists():
        gone.unlink()  # from an earlier conversion of another trace
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


def _dirty_name(
    ino: int, metadata_ino: int | None, inodes: dict[int, str], owners: _BlockOwners | None
) -> str | None:
    """The `file` of a dirty event of `ino` now (None: unknown)."""
    if ino == metadata_ino:
        return BLOCK_DEVICE
    return inodes.get(ino) if owners is None else owners.name(ino)


def _block_map_event(owners: _BlockOwners, name: str, payload: str) -> None:
    if name == _MAP_EVENT:
        m = _MAP.match(payload)
        if m and int(m.group(7)) > 0:
            owners.mapped(int(m.group(3)), int(m.group(4)), int(m.group(5)), int(m.group(7)))
    elif name == _FREE_BLOCKS_EVENT:
        m = _FREE_BLOCKS.match(payload)
        if m:
            owners.freed_blocks(int(m.group(4)), int(m.group(5)))
    elif name == _FREE_INODE_EVENT:
        m = _FREE_INODE.match(payload)
        if m:
            owners.freed_inode(int(m.group(3)))


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
    if res.discard_requests:
        lines.append(
            f"discards (trims): {res.discard_requests} requests, {res.discarded_blocks} 4KiB blocks"
        )
    if res.files_gone:
        lines.append(
            f"files gone by the end (deleted during the run), joined by ext4's block map: "
            f"{res.files_gone} (extents_deleted.txt)"
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
