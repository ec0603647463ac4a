"""`zombiesim trace import-capture|import-wal|import-sqlite`: real programs' captures as
notified traces (docs/real-hosts.md)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

from rich.text import Text

from .. import trace as traces
from .._format import count, percent
from .common import EXIT_OK, check_writable, out, print_fields, write_json
from .parser import add_command, reads, writes

EPILOG = """\
examples:
  zombiesim trace import-capture traces/samples/captures/pgbench-ext4/ --out pg.zst
  zombiesim trace import-capture cap/ --out cap-hints.zst --placement hint
  zombiesim trace import-wal traces/samples/captures/pgbench-ext4/waldump.txt.gz \\
      --writes pg.zst --out pg-wal.zst
  zombiesim trace import-sqlite traces/samples/captures/sqlite-wal/ --out sqlite.zst
  zombiesim trace stats pg.zst --format native
  zombiesim compare --preset zombie-chasing --trace pg.zst --format native \\
      --schemes gc-gd,zgc-gd,gc-cb,zgc-cb,oracle --set notify.mode=piggyback

The output is a notified native trace (written atomically): device requests with content
fingerprints, and the host's dirty/clean events, in time order.
exit codes: 0 ok, 2 bad input (a missing file, or `FILE:LINE: reason`)
"""


def register(trace_sub: Any) -> None:
    t = add_command(
        trace_sub,
        "import-capture",
        help="a three-level capture folder (page cache, device writes, extents) as a "
        "notified trace",
        description="Import a capture folder (the pgbench-ext4 layout, or what `zombiesim "
        "capture` writes) into a notified native trace.",
        epilog=EPILOG,
    )
    reads(t.add_argument("folder", metavar="FOLDER"), folder=True)
    _output(t)
    add_placement_option(t)
    t = add_command(
        trace_sub,
        "import-wal",
        help="PostgreSQL WAL (pg_waldump text) as the database buffer's dirty events",
        description="Join pg_waldump's block references to a notified trace of the same "
        "capture: the database buffer's dirty events (000's redo-log monitor).",
        epilog=EPILOG,
    )
    reads(t.add_argument("waldump", metavar="WALDUMP"))
    reads(
        t.add_argument(
            "--writes", metavar="TRACE", required=True, help="the capture's notified trace"
        )
    )
    reads(
        t.add_argument(
            "--extents",
            metavar="FILE",
            help="file -> device block map (default: extents.txt beside WALDUMP)",
        )
    )
    _output(t)
    t = add_command(
        trace_sub,
        "import-sqlite",
        help="a SQLite WAL capture (nbdkit hash log + WAL frames) as a notified trace",
        description="Import the SQLite WAL capture folder into a notified native trace.",
        epilog=EPILOG,
    )
    reads(t.add_argument("folder", metavar="FOLDER"), folder=True)
    _output(t)

    t = add_command(
        trace_sub,
        "generate-notified",
        help="a synthetic notified trace: hot/cold writes behind a write-back buffer",
        description="Write a synthetic notified trace (dirty events, then the writes "
        "`--delay` steps later) for tests, benchmarks and examples.",
        epilog=EPILOG,
    )
    writes(t.add_argument("--out", "-o", metavar="OUT", required=True, help="the trace to write"))
    for key, kind, text in GENERATOR_KEYS:
        t.add_argument(f"--{key.replace('_', '-')}", dest=key, type=kind, help=text)
    for key, text in GENERATOR_FLAGS:
        t.add_argument(f"--{key}", dest=key, action="store_true", default=None, help=text)


#: The generator's settings: (key, type, help).
GENERATOR_KEYS = [
    ("pages", int, "4 KiB pages addressed (default 16384)"),
    ("records", int, "records to write (default 100000)"),
    ("hot_pages", float, "share of the pages that are hot (default 0.2)"),
    ("hot_share", float, "share of the writes to hot pages (default 0.8)"),
    ("delay", int, "steps from a page's dirty event to its write (default 256)"),
    ("unannounced", float, "share of writes without a dirty event (default 0)"),
    ("read_every", int, "a read every N steps (default 0: none)"),
    ("step_ns", int, "nanoseconds per step (default 10000)"),
    ("seed", int, "random seed (default 1)"),
]
#: The generator's switches: (key, help).
GENERATOR_FLAGS = [
    ("placement", "writes carry a placement identifier: 1 for a hot page, 0 for a cold one"),
]


def cmd_generate(args: argparse.Namespace) -> int:
    check_writable(args.out)
    keys = [k for k, _, _ in GENERATOR_KEYS] + [k for k, _ in GENERATOR_FLAGS]
    spec = {k: getattr(args, k) for k in keys if getattr(args, k) is not None}
    n = traces.generate_notified(args.out, **spec)
    out.print(Text(f"wrote {count(n)} records to {args.out}"))
    return EXIT_OK


def add_placement_option(t: argparse.ArgumentParser) -> None:
    """`--placement` of a capture's import (also `zombiesim capture`'s)."""
    t.add_argument(
        "--placement",
        metavar="HOW",
        default="none",
        help="give each device write an NVMe placement identifier (a version-3 trace): "
        "`file` (writes of no file 0, files 1-7 in order of first write, wrapping), `file:N` "
        "(files over 1..N-1), `hint` (the file's Linux write-life hint, 0 not set .. 5 "
        "extreme); default none",
    )


def _output(t: argparse.ArgumentParser) -> None:
    writes(
        t.add_argument(
            "--out", "-o", metavar="OUT", required=True, help="the notified trace to write"
        )
    )
    writes(
        t.add_argument(
            "--json", metavar="OUT", help="write the import report as JSON (`-` = stdout)"
        )
    )


def cmd_import(args: argparse.Namespace) -> int:
    check_writable(args.out, args.json)
    if args.trace_command == "import-capture":
        report = traces.import_capture(args.folder, args.out, placement=args.placement)
    elif args.trace_command == "import-wal":
        report = traces.import_wal(args.waldump, args.writes, args.out, extents=args.extents)
    else:
        report = traces.import_sqlite(args.folder, args.out)
    if args.json:
        write_json(args.json, json.dumps(report, indent=2))
    if args.json == "-":
        return EXIT_OK
    print_fields(f"import {report['importer']} -> {args.out}", report_lines(report))
    for example in report.get("examples", []):
        out.print(Text(f"  {example}", style="dim"), soft_wrap=True)
    return EXIT_OK


def report_lines(r: Mapping[str, Any]) -> list[tuple[str, str]]:
    lines = [
        ("records", f"{count(r['records'])} ({count(r['device_requests'])} device requests)"),
        (
            "writes",
            f"{count(r['device_writes_joined'])} of {count(r['device_writes'])} joined "
            f"({percent(r['device_writes_joined_share'])})",
        ),
        (
            "events",
            f"{count(r['host_events_joined'])} of {count(r['host_events'])} joined "
            f"({percent(r['host_events_joined_share'])})",
        ),
        ("duration", f"{r['duration_s']:.1f} s"),
    ]
    for reason, n in r.get("dropped", {}).items():
        lines.append(("dropped", f"{count(n)}: {reason}"))
    details = ", ".join(
        f"{k.replace('_', ' ')} {count(n)}" for k, n in r.get("details", {}).items()
    )
    if details:
        lines.append(("details", details))
    return lines
