"""Make (or remake) the corpus of captured programs: each entry is a program run under
`zombiesim capture` on a fresh ext4 file system on a loop device, imported with its writes
placed by file (a version-3 notified trace), and written to `traces/corpus/NAME/`:

    trace.zst          the notified trace (device writes with placement by file, the page
                       cache's dirty events; for pgbench also the database buffer's, from
                       its WAL)
    provenance.toml    the program and its version, the exact command, the file system,
                       the machine's kernel, the date, what was joined
    loop_summary.txt   the capture's own summary (events, blocks, zombie lifetimes)

Needs root, tracefs and the programs (Debian: fio, postgresql, redis-server, git; PyPI:
rocksdict in the Python given by --rocksdb-python, lmdb in the one given by --lmdb-python;
a redis source tree for `build-redis`, e.g. a clone of https://github.com/redis/redis;
pip-loop's wheels are downloaded first unless --wheelhouse names them). Each entry takes
30-90 s. Entries named `-discard` / `-fstrim` are the trimmed variants: the same program
captured with the file system mounted with `discard`, or fstrim on a timer.

usage: sudo python traces/corpus/make.py [NAME ...] [--out DIR] [--rocksdb-python PY]
                                         [--lmdb-python PY] [--wheelhouse DIR]
                                         [--redis-src DIR] [--list]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
DRIVERS = HERE / "drivers"
PG_BIN = Path("/usr/lib/postgresql/15/bin")
#: Every capture is placed by file: each file its own placement identifier.
PLACEMENT = "file"


@dataclass
class Entry:
    program: str
    description: str
    #: The command, given the options (run in the capture's file system).
    command: Callable[[argparse.Namespace], list[str]]
    #: A command that prints the program's version.
    version: Callable[[argparse.Namespace], list[str]]
    size: str = "1GiB"
    timeout: float = 600.0
    env: dict[str, str] = field(default_factory=dict)
    #: Joined after the capture (the WAL of pgbench).
    wal: bool = False
    #: What tells the device about freed blocks: `none` (ext4 without `discard`, no
    #: fstrim: the default of most installations), `discard` (mounted with it) or
    #: `fstrim:S` (fstrim every S seconds and at the end).
    trims: str = "none"

    def trimmed(self, trims: str) -> Entry:
        """This entry captured with `trims` (a trimmed variant of the corpus)."""
        how = (
            "mounted with discard"
            if trims == "discard"
            else f"fstrim every {trims.removeprefix('fstrim:')} s"
        )
        return replace(self, description=f"{self.description}; {how}", trims=trims)


def _py(args: argparse.Namespace) -> str:
    return args.rocksdb_python


def _lmdb_py(args: argparse.Namespace) -> str:
    return args.lmdb_python


def _pkg_version(python: Callable[[argparse.Namespace], str], package: str):
    return lambda a: [
        python(a),
        "-c",
        f"import importlib.metadata as m; print('{package}', m.version('{package}'))",
    ]


ENTRIES: dict[str, Entry] = {
    "fio-zipf": Entry(
        "fio",
        "4 KiB buffered random writes, Zipf 1.2 over a 256 MiB file, fsync every 64, 15 s",
        lambda a: ["fio", "--output=/dev/null", str(DRIVERS / "fio-zipf.fio")],
        lambda a: ["fio", "--version"],
    ),
    "fio-pareto": Entry(
        "fio",
        "4 KiB buffered random writes, Pareto 0.9 over a 256 MiB file, fsync every 64, 15 s",
        lambda a: ["fio", "--output=/dev/null", str(DRIVERS / "fio-pareto.fio")],
        lambda a: ["fio", "--version"],
    ),
    "sqlite-tpcc": Entry(
        "SQLite (Python's sqlite3), WAL mode",
        "TPC-C-like, 4 warehouses loaded, then 30 s of the five transactions",
        lambda a: [sys.executable, str(DRIVERS / "sqlite_tpcc.py"), "30", "4", "1"],
        lambda a: [sys.executable, "-c", "import sqlite3; print('sqlite', sqlite3.sqlite_version)"],
    ),
    "rocksdb-ycsb-a": Entry(
        "RocksDB (rocksdict)",
        "200,000 records of 1 KiB loaded, then 30 s of YCSB A (50% reads, 50% updates, Zipf 0.99)",
        lambda a: [_py(a), str(DRIVERS / "rocksdb_ycsb.py"), "ycsb-a", "30", "200000", "1"],
        lambda a: [
            _py(a),
            "-c",
            "import importlib.metadata as m; print('rocksdict', m.version('rocksdict'))",
        ],
    ),
    "rocksdb-fill-update": Entry(
        "RocksDB (rocksdict)",
        "200,000 records of 1 KiB filled in random order, then 30 s of uniform overwrites",
        lambda a: [_py(a), str(DRIVERS / "rocksdb_ycsb.py"), "fill-update", "30", "200000", "1"],
        lambda a: [
            _py(a),
            "-c",
            "import importlib.metadata as m; print('rocksdict', m.version('rocksdict'))",
        ],
    ),
    "pgbench": Entry(
        "PostgreSQL pgbench",
        "pgbench -i -s 10, then 30 s of TPC-B-like transactions, 4 clients; its WAL "
        "imported as the database buffer's dirty events",
        lambda a: ["sh", str(DRIVERS / "pgbench.sh"), "30", "10"],
        lambda a: [str(PG_BIN / "postgres"), "--version"],
        size="2GiB",
        wal=True,
    ),
    "redis-aof": Entry(
        "Redis server",
        "SETs of 256-byte values over 200,000 keys, 8 clients, 20 s; the append-only file "
        "(fsync every second) rewritten in the background as it grows",
        lambda a: ["sh", str(DRIVERS / "redis_aof.sh"), "20"],
        lambda a: ["redis-server", "--version"],
        size="2GiB",
    ),
    "build-redis": Entry(
        "make (gcc) building redis",
        "the redis source tree copied in (git archive), then `make -j2 MALLOC=libc`",
        lambda a: [
            "sh",
            "-c",
            f"git -C {shlex.quote(str(a.redis_src))} archive HEAD | tar -x && "
            "make -j2 MALLOC=libc BUILD_TLS=no >build.log 2>&1",
        ],
        lambda a: [
            "sh",
            "-c",
            f"gcc --version | head -1; git -C {shlex.quote(str(a.redis_src))} log -1 "
            "--format='redis %H %cs'",
        ],
        size="2GiB",
        timeout=1200.0,
    ),
    "pg-queue": Entry(
        "PostgreSQL job queue",
        "a jobs table filled and drained by 4 pgbench clients for 30 s (enqueue 1-4 jobs, "
        "take up to 4 with FOR UPDATE SKIP LOCKED and delete them), VACUUM every 3 s",
        lambda a: ["sh", str(DRIVERS / "pg_queue.sh"), "30"],
        lambda a: [str(PG_BIN / "postgres"), "--version"],
        size="2GiB",
    ),
    "sqlite-rollback": Entry(
        "SQLite (Python's sqlite3), rollback journal",
        "journal_mode=DELETE, synchronous=FULL: 50,000 rows loaded, then 30 s of random "
        "single-row inserts, updates and deletes, three VACUUMs",
        lambda a: [sys.executable, str(DRIVERS / "sqlite_rollback.py"), "30", "50000", "1"],
        lambda a: [sys.executable, "-c", "import sqlite3; print('sqlite', sqlite3.sqlite_version)"],
    ),
    "lmdb-kv": Entry(
        "LMDB (the lmdb binding)",
        "100,000 records of 100-2000 bytes loaded, then 30 s of transactions of 1-8 puts "
        "and deletes (Zipf 0.99 keys), every commit synced",
        lambda a: [_lmdb_py(a), str(DRIVERS / "lmdb_kv.py"), "30", "100000", "1"],
        _pkg_version(_lmdb_py, "lmdb"),
    ),
    "git-work": Entry(
        "git",
        "a repository of 1,500 files built over 400 commits (files rewritten, added and "
        "deleted), branches checked out, a local clone checked out halfway back, git gc on both",
        lambda a: [sys.executable, str(DRIVERS / "git_work.py"), "400", "1500", "1"],
        lambda a: ["git", "--version"],
    ),
    "pip-loop": Entry(
        "pip",
        "a virtual environment, then 6 rounds of installing sympy, pygments, docutils, jinja2 "
        "and requests (with their dependencies) from local wheels, a sync, and uninstalling "
        "them",
        lambda a: ["sh", str(DRIVERS / "pip_loop.sh"), "6"],
        # The venv's pip is the one the system Python bundles (ensurepip).
        lambda a: ["python3", "-c", "import ensurepip; print('pip', ensurepip.version())"],
        env={"WHEELHOUSE": "{wheelhouse}"},
    ),
    "rocksdb-universal": Entry(
        "RocksDB (rocksdict), universal compaction",
        "200,000 records of 1 KiB filled in random order, then 30 s of uniform overwrites, "
        "with universal (size-tiered) compaction instead of leveled",
        lambda a: [
            _py(a),
            str(DRIVERS / "rocksdb_ycsb.py"),
            "fill-update",
            "30",
            "200000",
            "1",
            "universal",
        ],  # fmt: skip
        _pkg_version(_py, "rocksdict"),
    ),
}
#: Trimmed variants: the same programs captured with what tells the device about freed
#: blocks (what trims change is in docs/lifetimes.md).
ENTRIES.update(
    {
        "pg-queue-fstrim": ENTRIES["pg-queue"].trimmed("fstrim:10"),
        "sqlite-rollback-discard": ENTRIES["sqlite-rollback"].trimmed("discard"),
        "git-work-discard": ENTRIES["git-work"].trimmed("discard"),
        "pip-loop-discard": ENTRIES["pip-loop"].trimmed("discard"),
    }
)


def _version(entry: Entry, args: argparse.Namespace) -> str:
    try:
        out = subprocess.run(entry.version(args), capture_output=True, text=True, timeout=60)
        return " / ".join(line.strip() for line in out.stdout.splitlines() if line.strip())
    except (OSError, subprocess.SubprocessError) as e:
        return f"unknown ({e})"


def _portable(command: list[str], args: argparse.Namespace) -> str:
    """The command as anyone can run it: paths of this checkout relative to its root,
    the Pythons as `python3`, the redis tree as `$REDIS_SRC`."""
    root = str(HERE.parents[1]) + os.sep
    subs = [
        (args.rocksdb_python, "python3"),
        (args.lmdb_python, "python3"),
        (sys.executable, "python3"),
        (root, ""),
    ]
    if args.redis_src is not None:
        subs.insert(0, (shlex.quote(str(args.redis_src)), "$REDIS_SRC"))
    out = []
    for word in command:
        for old, new in subs:
            word = word.replace(old, new)
        out.append(word)
    return shlex.join(out).replace("'$REDIS_SRC'", "$REDIS_SRC")


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def make(name: str, args: argparse.Namespace) -> Path:
    from zombiesim import capture as cap
    from zombiesim import trace as traces

    entry = ENTRIES[name]
    dest = args.out / name
    with tempfile.TemporaryDirectory(prefix=f"corpus-{name}-") as tmp:
        folder = Path(tmp) / "capture"
        waldump = Path(tmp) / "waldump.txt"
        env_before = dict(os.environ)
        os.environ.update({k: v.format(wheelhouse=args.wheelhouse) for k, v in entry.env.items()})
        if entry.wal:
            os.environ["WALDUMP"] = str(waldump)
        command = entry.command(args)
        try:
            result = cap.capture(
                command,
                folder,
                size=traces.parse_size(entry.size, "size"),
                timeout=entry.timeout,
                placement=PLACEMENT,
                discard=entry.trims == "discard",
                fstrim_every=(
                    float(entry.trims.removeprefix("fstrim:"))
                    if entry.trims.startswith("fstrim:")
                    else None
                ),
                echo=False,
                log=lambda m: print(f"{name}: {m}", file=sys.stderr),
            )
        finally:
            os.environ.clear()
            os.environ.update(env_before)
        if result.failed or result.trace is None:
            raise SystemExit(f"{name}: the capture failed ({result.import_note or result.status})")
        report = result.import_report or {}
        trace = folder / "trace.zst"
        joined_wal = None
        if entry.wal:
            wal_trace = Path(tmp) / "wal.zst"
            joined_wal = traces.import_wal(
                waldump, trace, wal_trace, extents=folder / "extents.txt"
            )
            trace = wal_trace
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(trace, dest / "trace.zst")
        summary = (folder / "loop_summary.txt").read_text().splitlines()
        (dest / "loop_summary.txt").write_text(
            "".join(
                (f"command: {_portable(command, args)}" if line.startswith("command: ") else line)
                + "\n"
                for line in summary
            )
        )
        hints = folder / "hints.txt"
        fields = {
            "name": name,
            "program": entry.program,
            "version": _version(entry, args),
            "description": entry.description,
            "command": _portable(command, args),
            "file_system": f"{result.fs}, {result.size >> 20} MiB, on a loop device",
            "kernel": platform.release(),
            "date": datetime.date.today().isoformat(),
            "duration_s": round(result.elapsed_s, 2),
            "placement": PLACEMENT,
            "trims": entry.trims,
            "trimmed_blocks": result.counts.discarded_blocks,
            "records": int((joined_wal or report).get("records", 0)),
            "device_writes": int(report.get("device_writes", 0)),
            "device_writes_joined_share": round(report.get("device_writes_joined_share", 0.0), 4),
            "host_events": int(report.get("host_events", 0)),
            "host_events_joined_share": round(report.get("host_events_joined_share", 0.0), 4),
            "files_deleted_during_run": result.counts.files_gone,
            "write_life_hints": hints.read_text().splitlines() if hints.exists() else [],
            "joined": "page-cache dirty events to device writes (ext4 block map and extents)"
            + (
                f"; the WAL's block references as database-buffer events "
                f"({int(joined_wal['host_events_joined'])} of {int(joined_wal['host_events'])})"
                if joined_wal
                else ""
            ),
        }
        text = "".join(f"{k} = {_toml(v)}\n" for k, v in fields.items())
        (dest / "provenance.toml").write_text(
            "# Made by traces/corpus/make.py (see traces/corpus/README.md).\n" + text
        )
    size = (dest / "trace.zst").stat().st_size
    print(f"{name}: {dest / 'trace.zst'} ({size / 1e6:.1f} MB)")
    return dest


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("names", nargs="*", metavar="NAME", help="entries to make (default: all)")
    p.add_argument("--out", type=Path, default=HERE, help="the corpus folder (default: here)")
    p.add_argument("--rocksdb-python", default=sys.executable, help="a Python with rocksdict")
    p.add_argument("--lmdb-python", default=sys.executable, help="a Python with lmdb")
    p.add_argument(
        "--wheelhouse",
        type=Path,
        help="wheels for pip-loop (`pip download -d DIR sympy pygments docutils jinja2 "
        "requests`; default: downloaded into a temporary folder)",
    )
    p.add_argument("--redis-src", type=Path, help="a redis git checkout (for build-redis)")
    p.add_argument("--list", action="store_true", help="list the entries and stop")
    args = p.parse_args()
    if args.list:
        for name, e in ENTRIES.items():
            print(f"{name:22} {e.program}: {e.description}")
        return 0
    # The commands run in the capture's file system: paths given relative to here.
    for attr in ("rocksdb_python", "lmdb_python"):
        if os.sep in getattr(args, attr):
            setattr(args, attr, os.path.abspath(getattr(args, attr)))
    if args.redis_src is not None:
        args.redis_src = args.redis_src.resolve()
    names = args.names or list(ENTRIES)
    unknown = [n for n in names if n not in ENTRIES]
    if unknown:
        p.error(f"unknown entries {unknown}: expected some of {', '.join(ENTRIES)}")
    if "build-redis" in names and args.redis_src is None:
        p.error("build-redis needs --redis-src (a redis git checkout)")
    with tempfile.TemporaryDirectory(prefix="corpus-wheels-") as wheels:
        if args.wheelhouse is None and any(n.startswith("pip-loop") for n in names):
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "-d", wheels,
                 "sympy", "pygments", "docutils", "jinja2", "requests"],
                check=True,
            )  # fmt: skip
            args.wheelhouse = Path(wheels)
        for name in names:
            make(name, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
