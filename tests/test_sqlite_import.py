"""`zombiesim trace import-sqlite`: the shipped SQLite WAL capture as a notified trace
(counts against the CSV, stats, a replay), and bad input."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from zombiesim import trace as traces
from zombiesim.samples import CHECKOUT_SAMPLES

#: The sample traces the checkout ships (traces/samples/README.md).
TRACES = CHECKOUT_SAMPLES
SQLITE = TRACES / "captures" / "sqlite-wal"
EVENTS = "sqlite_wal_events_excerpt.csv"
SHIM = "sqlite_hashwrite_excerpt.log"
#: `walframe` rows in the shared excerpt.
WALFRAMES = 297


def no_traceback(proc) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


@pytest.fixture(scope="module")
def real() -> Path:
    if not (SQLITE / EVENTS).is_file():
        pytest.fail(f"the shipped SQLite WAL capture is missing ({SQLITE}): see traces/samples/")
    return SQLITE


@pytest.fixture(scope="module")
def imported(real, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("sqlite") / "sqlite.zst"
    return out, traces.import_sqlite(real, out)


def test_counts_match_the_csv(real, imported):
    out, r = imported
    with open(real / EVENTS, newline="") as f:
        rows = list(csv.DictReader(f))
    frames = [row for row in rows if row["kind"] == "walframe"]
    assert len(frames) == WALFRAMES
    assert out.is_file() and r["output"] == str(out)
    assert r["importer"] == "sqlite"
    d = r["details"]
    assert r["host_events"] == d["frames"] == WALFRAMES
    assert d["commits"] == sum(int(row["commit_size"]) > 0 for row in frames)
    assert d["distinct_pages_dirtied"] == len({row["pgno"] for row in frames})
    # No checkpoint and no WAL truncate in the excerpt: every page stays dirty.
    assert d["checkpoint_writes"] == 0 and d["wal_truncates"] == 0
    assert d["pages_dirty_at_end"] == d["distinct_pages_dirtied"]
    assert d["truncates"] == sum(row["kind"] == "ftruncate" for row in rows)
    # The shim log is another run: imported, not joined to the frames.
    lines = (real / SHIM).read_text().splitlines()
    writes = [line.split() for line in lines if line.startswith("W ")]
    assert d["shim_log_present"] == 1 and d["shim_log_other_run"] == 1
    assert r["host_events_joined"] == 0
    assert d["frame_writes"] == WALFRAMES
    assert r["device_writes"] == len(writes)
    assert r["device_writes_joined"] == sum(w[4].endswith("-wal") for w in writes)
    assert any("another run" in e for e in r["examples"]), r["examples"]
    assert any("not imported" in e and "nbdkit" in e for e in r["examples"]), r["examples"]
    # Events, flushes and writes: frames (dirty + write), shim writes, syncs.
    syncs = sum(line.startswith("S ") for line in lines)
    flushes = sum(row["kind"] in ("fdatasync", "fsync") for row in rows)
    assert d["flushes"] == syncs + flushes
    assert r["records"] == 2 * WALFRAMES + len(writes) + syncs + flushes
    assert r["device_requests"] == r["records"] - WALFRAMES
    assert r["duration_s"] > 700  # two runs, twelve minutes apart


def test_stats_show_host_events(cli, imported):
    out, r = imported
    proc = cli("trace", "stats", str(out), "--format", "native", "--json", "-")
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)
    ev = stats["host_events"]
    assert ev["dirty_events"] == WALFRAMES and ev["clean_events"] == 0
    assert ev["database_dirtied"] == ev["dirty_at_end"] == r["details"]["pages_dirty_at_end"]
    assert ev["page_cache_dirtied"] == 0
    assert stats["records"] == r["records"]
    proc = cli("trace", "stats", str(out), "--format", "native")
    assert proc.returncode == 0, proc.stderr
    assert "host events" in proc.stdout and f"{WALFRAMES} dirty" in proc.stdout, proc.stdout


#: The default preset with the watermark the zombie block needs.
REPLAY = ["--preset", "default", "--set", "gc.low_watermark=6", "--set", "gc.high_watermark=6"]


def replay(cli, out: Path, remap: str) -> dict:
    proc = cli(
        "run", *REPLAY, "--trace", str(out), "--format", "native", "--remap", remap,
        "--set", "notify.mode=ideal", "--scheme", "zgc-gd", "--json", "-", "-q",
        timeout=300,
    )  # fmt: skip
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_replay_compact(cli, imported):
    out, r = imported
    report = replay(cli, out, "compact")
    trace = report["trace"]
    assert trace["records"] == r["records"]
    assert trace["notified"]["dirty_events"] == WALFRAMES
    # The window never writes the database file: compact remapping has no logical page
    # for the dirtied database pages, so the device learns of none of them.
    assert report["notify"]["dirtied_pages"] == 0


def test_replay_modulo_delivers_the_database_zombies(cli, imported):
    out, r = imported
    report = replay(cli, out, "modulo")
    n = report["notify"]
    assert n["dirtied_pages"] == n["delivered_pages"] == r["details"]["distinct_pages_dirtied"]
    assert n["awareness_mean"] == pytest.approx(1.0)


def test_cli_import(cli, real, tmp_path):
    out = tmp_path / "s.zst"
    proc = cli("trace", "import-sqlite", str(real), "--out", str(out))
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert out.is_file()
    assert "import sqlite" in proc.stdout and str(WALFRAMES) in proc.stdout
    assert "another run" in proc.stdout


def test_without_the_shim_log(real, tmp_path):
    folder = tmp_path / "only-events"
    folder.mkdir()
    shutil.copyfile(real / EVENTS, folder / EVENTS)
    r = traces.import_sqlite(folder, tmp_path / "e.zst")
    assert r["host_events"] == WALFRAMES
    assert r["device_writes"] == 0
    assert r["details"]["shim_log_present"] == 0
    assert "shim_log_other_run" not in r["details"]
    assert r["examples"] == []


def test_missing_events_csv(cli, tmp_path):
    folder = tmp_path / "cap"
    folder.mkdir()
    (folder / SHIM).write_text("S 1 1 4 /x/t.db-wal fsync\n")
    out = tmp_path / "o.zst"
    proc = cli("trace", "import-sqlite", str(folder), "--out", str(out))
    no_traceback(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert EVENTS in proc.stderr
    assert not out.exists()


def test_malformed_row_names_file_and_line(cli, tmp_path):
    folder = tmp_path / "cap"
    folder.mkdir()
    (folder / EVENTS).write_text(
        "t,kind,file,pgno,offset,len,commit_size\n"
        "1.0,walframe,wal,3,32,24,0\n"
        "0.5,walframe,wal,4,4152,24,0\n"
    )
    proc = cli("trace", "import-sqlite", str(folder), "--out", str(tmp_path / "o.zst"))
    no_traceback(proc)
    assert proc.returncode == 2
    assert f"{EVENTS}:3:" in proc.stderr and "time order" in proc.stderr
    (folder / EVENTS).write_text(
        "t,kind,file,pgno,offset,len,commit_size\n1.0,walframe,wal,x,32,24,0\n"
    )
    proc = cli("trace", "import-sqlite", str(folder), "--out", str(tmp_path / "o.zst"))
    assert proc.returncode == 2
    assert f"{EVENTS}:2:" in proc.stderr and "pgno" in proc.stderr
