"""Block traces: what to replay (`TraceInput`), statistics, conversion, the formats.

>>> import zombiesim as zs
>>> zs.trace.formats()[0][0]
'msr'
>>> src = zs.TraceInput("src1_0.csv", "msr", remap="modulo")
>>> str(src)
'msr:src1_0.csv'

Formats, options and remap modes are described in `docs/traces.md`. Files ending in `.gz`
or `.zst` are decompressed on reading and compressed on writing. A malformed line raises
`InputError` naming `file:line` (or, with `on_error="skip"`, is counted and skipped).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import _core
from ._errors import ConfigError, make_error
from ._io import atomic_output, folder_files, refuse_clobbering

__all__ = [
    "ON_ERROR",
    "REMAP_MODES",
    "TraceInput",
    "convert",
    "format_names",
    "writable_format_names",
    "formats",
    "generate_notified",
    "import_capture",
    "import_sqlite",
    "import_wal",
    "parse_size",
    "stats",
]

#: What a malformed line does: `stop` (an error) or `skip` (counted, reading goes on).
ON_ERROR = ("stop", "skip")
#: How trace addresses are fitted onto the simulated device (see docs/traces.md).
REMAP_MODES = ("none", "modulo", "compact")


def formats() -> list[tuple[str, str]]:
    """`(name, description)` of every trace format this build reads and writes."""
    return [(str(n), str(d)) for n, d in _core.trace_formats()]


def format_names() -> list[str]:
    """The format names alone: `msr`, `spc`, `disksim`, `fio`, `blkparse`, `native`."""
    return [n for n, _ in formats()]


def writable_format_names() -> list[str]:
    """The formats `convert` can write (the hashed formats are read only)."""
    return [str(n) for n in _core.writable_trace_formats()]


def parse_size(value: int | str, key: str = "page_size") -> int:
    """Bytes from an int or a string such as `4096`, `"4KiB"`, `"16K"`, `"1GB"` (the
    suffixes config values take); anything else raises `ConfigError` naming `key`."""
    if isinstance(value, bool):
        raise make_error(
            ConfigError, f"config key `{key}`: expected a size, found {value}", "config"
        )
    nbytes = value if isinstance(value, int) else _core.parse_bytes(str(value), key)
    if nbytes <= 0:
        raise make_error(
            ConfigError, f"config key `{key}`: expected a size above 0, found `{value}`", "config"
        )
    return nbytes


def _check_choice(key: str, value: str, allowed: tuple[str, ...]) -> str:
    """The same messages the simulator gives for these keys."""
    if value in allowed:
        return value
    if key == "format":
        reason = f"unknown trace format `{value}` (expected one of {', '.join(allowed)})"
    else:
        *head, last = [f"`{a}`" if key == "on_error" else a for a in allowed]
        reason = f"expected {', '.join(head)} or {last}, found `{value}`"
    raise make_error(ConfigError, f"config key `{key}`: {reason}", "config")


@dataclass(frozen=True)
class TraceInput:
    """A trace to replay: a file, its format and how to read it.

    `device` keeps one device of a multi-device trace; `on_error` is `"stop"` or `"skip"`;
    `remap` is `"none"`, `"modulo"` or `"compact"`; `limit` replays only the first records;
    `time_scale` multiplies the trace's times (0.5 replays twice as fast) and `time_offset`
    (seconds) is added after scaling (times below 0 become 0). `str(t)` is
    `FORMAT:PATH`, what a report's `run.workload` says. The format, `on_error` and `remap`
    are checked at once (`ConfigError`); the file is opened when the run starts."""

    path: str
    format: str
    device: int | None = None
    on_error: str = "stop"
    remap: str = "none"
    limit: int | None = None
    time_scale: float = 1.0
    time_offset: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", os.fspath(self.path))
        names = format_names()
        _check_choice("format", self.format, tuple(names))
        _check_choice("on_error", self.on_error, ON_ERROR)
        _check_choice("remap", self.remap, REMAP_MODES)
        if self.limit is not None and int(self.limit) < 0:
            raise make_error(
                ConfigError, f"config key `limit`: expected 0 or more, found {self.limit}", "config"
            )

    @classmethod
    def coerce(cls, value: TraceInput | tuple | list | Any) -> TraceInput:
        """A `TraceInput` from itself or a `(path, format)` pair."""
        if isinstance(value, TraceInput):
            return value
        if isinstance(value, tuple | list) and len(value) == 2:
            return cls(os.fspath(value[0]), str(value[1]))
        raise TypeError(f"expected a zombiesim.TraceInput or a (path, format) pair, got {value!r}")

    def options(self) -> dict[str, Any]:
        """The keyword arguments `_core.simulate_trace` takes, besides config and seed."""
        opts = {
            "device": self.device,
            "on_error": self.on_error,
            "remap": self.remap,
            "limit": self.limit,
            "time_scale": float(self.time_scale),
        }
        opts.update(_offset(self.time_offset))
        return opts

    def describe(self) -> str:
        """`FORMAT:PATH` plus the options that differ from their defaults."""
        extra = []
        if self.device is not None:
            extra.append(f"device={self.device}")
        if self.remap != "none":
            extra.append(f"remap={self.remap}")
        if self.on_error != "stop":
            extra.append(f"on_error={self.on_error}")
        if self.limit is not None:
            extra.append(f"limit={self.limit}")
        if self.time_scale != 1.0:
            extra.append(f"time_scale={self.time_scale:g}")
        if self.time_offset:
            extra.append(f"time_offset={self.time_offset:g}")
        return str(self) + (f" ({', '.join(extra)})" if extra else "")

    def __str__(self) -> str:
        return f"{self.format}:{self.path}"


def _offset(seconds: float) -> dict[str, float]:
    """The binding's `time_offset_s` keyword, left out at its default (0)."""
    return {"time_offset_s": float(seconds)} if seconds else {}


def stats(
    path: str | os.PathLike[str],
    format: str,
    page_size: int | str = 4096,
    device: int | None = None,
    on_error: str = "stop",
    progress: Callable[[str, float | None, int], bool | None] | None = None,
    time_scale: float = 1.0,
    time_offset: float = 0.0,
) -> dict[str, Any]:
    """Read a trace once and summarize it (see docs/traces.md, "Statistics"): `records`,
    `reads`/`writes`/`trims` (`{count, bytes}`), `flushes`, `duration_s`, `unique_pages`,
    `footprint_bytes`, `written_pages`, `written_footprint_bytes`, `size_histogram`
    (`[{le_bytes, count}]`), `interarrival` (`{count, mean_ns, p50_ns, p99_ns, max_ns}`),
    `write_skew` (`{page_writes, hottest_1pct, ..., gini}`), `skipped_lines`, `page_size`,
    `path`, `format`; a notified trace adds `host_events`, and a native trace whose writes
    carry NVMe placement identifiers (version 3) adds `placement` (`{writes, ids}`: the
    writes that carry one and the distinct identifiers). `page_size` takes bytes or a size
    string (`"16KiB"`). `time_scale` multiplies the trace's times and `time_offset`
    (seconds) is added after, as a replay reads them (`time_scale=1e-6` for a DiskSim
    trace whose times are nanoseconds): the durations and inter-arrival times are of
    the times so read.

    `progress(phase, None, records_read)` is called about every 100 ms; returning False
    stops the reading and raises `KeyboardInterrupt`, as Ctrl-C does."""
    text = _core.trace_stats(
        os.fspath(path),
        format,
        page_size=parse_size(page_size),
        device=device,
        on_error=on_error,
        time_scale=float(time_scale),
        time_offset_s=float(time_offset),
        progress=progress,
    )
    return json.loads(text)


class Converted(int):
    """The records a conversion wrote (an `int`), with `dropped`: what a lossy conversion
    left out — `host_events`, `values` (records whose content values were dropped),
    `placement_ids`, `records` (of an operation the output format has no word for)."""

    dropped: dict[str, int]

    def __new__(cls, n: int, dropped: dict[str, int]) -> Converted:
        obj = super().__new__(cls, n)
        obj.dropped = dropped
        return obj


def convert(
    input: str | os.PathLike[str],
    from_format: str,
    output: str | os.PathLike[str] | None,
    to_format: str,
    device: int | None = None,
    on_error: str = "stop",
    time_scale: float = 1.0,
    time_offset: float = 0.0,
    lossy: bool = False,
) -> Converted:
    """Read `input` in `from_format` and write it to `output` in `to_format` (`None`
    writes to standard output, straight from the simulator's I/O); returns the number of
    records written. `time_scale` and `time_offset` (seconds) change the times written, as
    in `TraceInput`. Compression follows the file names (`.gz`, `.zst`). A record the
    target format cannot hold (a trim into msr, content values or a placement identifier
    into anything but native, ...) raises `InputError` naming it; native to native keeps
    them (a trace with placement identifiers stays version 3).
    With `lossy`, what the target cannot hold is left out and counted instead (the
    result's `.dropped`): host events, content values, placement identifiers, records of an
    operation it has no word for (a notified trace's device writes as msr for another
    simulator).
    A file is written atomically (a temp file with the same compression suffix in the same
    directory, then renamed): a failure leaves no partial output."""
    src = os.fspath(input)
    opts = {"device": device, "on_error": on_error, "lossy": lossy, **_offset(time_offset)}
    if time_scale != 1.0:
        opts["time_scale"] = float(time_scale)
    if output is None:
        n, dropped = _core.trace_convert(src, from_format, None, to_format, **opts)
        return Converted(n, json.loads(dropped))
    refuse_clobbering([("output", output, "file")], [("input", src)])
    with atomic_output(output) as tmp:
        n, dropped = _core.trace_convert(src, from_format, tmp, to_format, **opts)
    return Converted(n, json.loads(dropped))


# -- importers ---------------------------------------------------------------------------------


def import_capture(
    folder: str | os.PathLike[str],
    output: str | os.PathLike[str],
    placement: str = "none",
) -> dict[str, Any]:
    """Import a three-level capture folder (the `pgbench-ext4` layout, or what `zombiesim
    capture` writes: `pagecache_dirty.csv.gz`, `device_writes_hashed.csv.gz`,
    `extents.txt`, `uptime_start.txt`, optionally `inodes.txt` and `hints.txt`) into a
    notified native trace at `output` (written atomically). Returns the import report:
    `records`, `device_writes` / `device_writes_joined` (and `_share`), `host_events` /
    `host_events_joined` (and `_share`), `dropped` (by reason), `examples`
    (`file:line: reason`), `details`, `duration_s`.

    `placement` gives each device write an NVMe placement identifier (a version-3
    trace): `file` (writes of no file 0, files 1-7 in the order of their first write,
    wrapping), `file:N` (1 to N-1), `hint` (the file's Linux write-life hint, 0 not set
    to 5 extreme, from `hints.txt`); `none` (the default) gives none. See
    docs/real-hosts.md."""
    return _import(
        output,
        lambda tmp: _core.trace_import_capture(os.fspath(folder), tmp, placement),
        folder_files(folder),
    )


def import_wal(
    waldump: str | os.PathLike[str],
    writes: str | os.PathLike[str],
    output: str | os.PathLike[str],
    extents: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Join a PostgreSQL WAL dump (`pg_waldump` text, `.gz` ok) to a notified trace of the
    same capture (`writes`, e.g. from `import_capture`): each record's block references
    become database-buffer dirty events on the relation pages' device blocks (through
    `extents`, default the `extents.txt` beside the dump), merged into `output`. Returns
    the import report (`host_events_joined_share` is the share of block references joined
    to relation pages written in the window). See docs/real-hosts.md."""
    ext = os.fspath(extents) if extents is not None else None
    return _import(
        output,
        lambda tmp: _core.trace_import_wal(os.fspath(waldump), os.fspath(writes), tmp, ext),
        [waldump, writes] + ([ext] if ext is not None else []),
    )


def import_sqlite(
    folder: str | os.PathLike[str],
    output: str | os.PathLike[str],
) -> dict[str, Any]:
    """Import a SQLite WAL capture (the WAL frame log, and the hashing shim's write log
    when present) into a file-level notified trace at `output`: each WAL frame's page
    number is the notice that the database page is dirty until a checkpoint writes it.
    Returns the import report. See docs/real-hosts.md."""
    return _import(
        output,
        lambda tmp: _core.trace_import_sqlite(os.fspath(folder), tmp),
        folder_files(folder),
    )


def _import(
    output: str | os.PathLike[str],
    run: Callable[[str], str],
    inputs: list[str | os.PathLike[str]],
) -> dict[str, Any]:
    """Run an importer (`run(temp path)` returns its report as JSON) writing `output`
    atomically; the report names `output`, not the temp file. An output that is one of
    the importer's `inputs` is refused before anything is read."""
    refuse_clobbering([("output", output, "file")], [("input", p) for p in inputs])
    with atomic_output(output) as tmp:
        text = run(tmp)
    report = json.loads(text)
    report["output"] = os.fspath(output)
    return report


def generate_notified(output: str | os.PathLike[str], **spec: Any) -> int:
    """Write a synthetic notified trace (native format, written atomically): hot/cold
    4 KiB writes behind a write-back buffer, each page's dirty event `delay` steps before
    its write. Keys (defaults): `pages` (16384), `records` (100000), `hot_pages` (0.2),
    `hot_share` (0.8), `delay` (256), `unannounced` (0.0: share of writes with no dirty
    event), `read_every` (0: no reads), `step_ns` (10000), `seed` (1), `placement` (False:
    True gives each write a placement identifier, 1 for a hot page, 0 for a cold one).
    Returns the records written. See docs/real-hosts.md."""
    with atomic_output(output) as tmp:
        n = _core.trace_generate_notified(tmp, json.dumps(spec))
    return int(n)
