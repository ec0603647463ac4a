"""Real hosts as the notifier: importing the pgbench capture and its WAL, replaying the
notified traces, and the bad inputs the importers refuse (docs/real-hosts.md)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import zombiesim as zs
from zombiesim.samples import CHECKOUT_SAMPLES

#: The sample traces the checkout ships (traces/samples/README.md).
TRACES = CHECKOUT_SAMPLES
PGBENCH = TRACES / "captures" / "pgbench-ext4"


@pytest.fixture(scope="module")
def pg(tmp_path_factory) -> tuple[Path, dict, Path, dict]:
    """The pgbench capture imported, then joined to its WAL."""
    if not (PGBENCH / "device_writes_hashed.csv.gz").is_file():
        pytest.fail(f"the shipped pgbench capture is missing ({PGBENCH}): restore traces/samples/")
    d = tmp_path_factory.mktemp("pg")
    trace = d / "pg.zst"
    report = zs.trace.import_capture(PGBENCH, trace)
    wal = d / "pg-wal.zst"
    wal_report = zs.trace.import_wal(PGBENCH / "waldump.txt.gz", trace, wal)
    return trace, report, wal, wal_report


def test_the_pgbench_capture_imports_with_its_writes_joined(pg):
    trace, r, _, _ = pg
    # Every one of the 152 036 hashed device writes, and 99.8% of the 76 041 dirty events.
    assert r["device_writes"] == 152_036
    assert r["device_writes_joined_share"] >= 0.99
    assert r["host_events"] == 76_041
    assert r["host_events_joined_share"] >= 0.99
    assert sum(r["dropped"].values()) == r["host_events"] - r["host_events_joined"]
    assert all(":" in e for e in r["examples"])
    st = zs.trace.stats(trace, "native")
    h = st["host_events"]
    assert h["dirty_events"] == r["host_events_joined"]
    assert st["writes"]["count"] == 152_036
    # The capture's own summary: 6 379 pages still dirty at the end (ours: those with a
    # device block); data-page lifetimes p50 0.01 s, p90 9.7 s, WAL ~0 (both together here).
    assert 6_000 <= h["dirty_at_end"] <= 6_379
    assert 0.001 <= h["zombie_lifetime"]["p50_s"] <= 0.05
    assert 0 < h["ideal_awareness"] < 1


def test_the_wal_joins_block_references_to_relation_pages(pg):
    _, _, wal, r = pg
    assert r["details"]["wal_records"] == 241_415
    refs = r["details"]["wal_block_refs"]
    assert refs == r["host_events"] == 205_142
    assert r["host_events_joined_share"] >= 0.95
    # Written in the window: the pages dirtied before the checkpoint that the window
    # does not reach (docs/real-hosts.md).
    written = r["details"]["wal_block_refs_written"] / refs
    assert 0.3 < written < 0.8
    st = zs.trace.stats(wal, "native")["host_events"]
    assert st["database_dirtied"] > 50_000
    assert st["clean_events"] > 0


def test_replay_reports_awareness_and_waf(pg):
    trace = pg[0]
    # 512 MiB of flash: ~122 K logical pages for the trace's ~95 K distinct pages.
    cfg = zs.Config.preset("default").override(
        {"flash.blocks_per_plane": 128, "notify.mode": "ideal", "gc.policy": "z-greedy"}
    )
    src = zs.TraceInput(trace, "native", remap="compact")
    r = zs.simulate(cfg, src)
    assert r["trace"]["notified"]["dirty_events"] > 70_000
    assert r["notify"]["mode"] == "ideal"
    assert 0 < r["notify"]["awareness_mean"] <= 1.0
    assert r["waf"] >= 1.0


# -- bad input ---------------------------------------------------------------------------------


def tiny_capture(folder: Path, dirty_rows: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "uptime_start.txt").write_text("100.00 50.00\n1000.000000000\n")
    (folder / "extents.txt").write_text(
        "== a\n   0:        0..       3:        100..       103:      4:             last,eof\n"
    )
    rows = dirty_rows or ["100.5,12,a,0", "100.6,12,a,1"]
    (folder / "pagecache_dirty.csv").write_text("t,ino,file,index\n" + "\n".join(rows) + "\n")
    with gzip.open(folder / "device_writes_hashed.csv.gz", "wt") as f:
        f.write("t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write\n")
        f.write("1000.7,W,100,a,0,00000000000000aa,1000.4\n")
        f.write("1000.8,W,101,a,1,,\n")
    return folder


def test_a_tiny_capture_imports(tmp_path, cli):
    folder = tiny_capture(tmp_path / "cap")
    out = tmp_path / "t.zst"
    proc = cli("trace", "import-capture", str(folder), "--out", str(out), "--json", "-")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert (r["records"], r["device_writes_joined"], r["host_events_joined"]) == (4, 2, 2)
    st = zs.trace.stats(out, "native")
    assert st["host_events"]["announced_overwrites"] == 0
    assert st["host_events"]["zombie_lifetime"]["count"] == 2


@pytest.mark.parametrize(
    "breakage, where",
    [
        ("missing", "pagecache_dirty.csv.gz"),
        ("order", "pagecache_dirty.csv:3: events out of time order"),
        ("malformed", "pagecache_dirty.csv:2: expected 4 comma-separated fields"),
        ("extents", "extents.txt:2: expected an extent line"),
    ],
)
def test_bad_captures_exit_2_naming_the_file_and_nothing_is_written(tmp_path, cli, breakage, where):
    folder = tiny_capture(tmp_path / "cap")
    if breakage == "missing":
        (folder / "pagecache_dirty.csv").unlink()
    elif breakage == "order":
        tiny_capture(folder, ["100.6,12,a,0", "100.5,12,a,1"])
    elif breakage == "malformed":
        tiny_capture(folder, ["100.5,12"])
    elif breakage == "extents":
        (folder / "extents.txt").write_text("== a\n   0: zz\n")
    out = tmp_path / "t.zst"
    proc = cli("trace", "import-capture", str(folder), "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert where in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()
    assert not list(tmp_path.glob(".t.zst*")), "a temp file was left behind"


def test_bad_wal_dumps_exit_2_naming_the_line(tmp_path, cli):
    folder = tiny_capture(tmp_path / "cap")
    trace = tmp_path / "t.zst"
    zs.trace.import_capture(folder, trace)
    good = (
        "rmgr: Heap        len (rec/tot):     72/    72, tx:     1, lsn: 0/00000100, prev 0/0, "
        "desc: HOT_UPDATE off 1, blkref #0: rel 1663/1/2 blk 0\n"
        "rmgr: Transaction len (rec/tot):     34/    34, tx:     1, lsn: 0/00000200, prev 0/0, "
        "desc: COMMIT 1970-01-01 00:16:40.650000 UTC\n"
    )
    (folder / "extents.txt").write_text(
        "== base/1/2\n   0:        0..       1:        100..       101:      2:      last,eof\n"
    )
    dump = tmp_path / "wal.txt"
    dump.write_text(good)
    out = tmp_path / "w.zst"
    proc = cli(
        "trace",
        "import-wal",
        str(dump),
        "--writes",
        str(trace),
        "--extents",
        str(folder / "extents.txt"),
        "--out",
        str(out),
        "--json",
        "-",
    )
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert (r["host_events"], r["host_events_joined"]) == (1, 1)
    st = zs.trace.stats(out, "native")["host_events"]
    # The record dirtied both 4 KiB halves of the 8 KiB page; each is cleaned by its write.
    assert st["database_dirtied"] == 2 and st["clean_events"] == 2
    for bad, what in [
        ("not a record\n", "wal.txt:1: expected a pg_waldump record line"),
        (good.replace("0/00000200", "0/00000050"), "wal.txt:2: records out of LSN order"),
        (good.replace("rel 1663/1/2", "rel 1663/1"), "wal.txt:1: expected a block reference"),
    ]:
        dump.write_text(bad)
        out.unlink(missing_ok=True)
        proc = cli(
            "trace",
            "import-wal",
            str(dump),
            "--writes",
            str(trace),
            "--extents",
            str(folder / "extents.txt"),
            "--out",
            str(out),
        )
        assert proc.returncode == 2 and what in proc.stderr, proc.stderr
        assert not out.exists()


def test_generated_notified_traces_replay_in_constant_memory_terms(tmp_path):
    out = tmp_path / "g.zst"
    n = zs.trace.generate_notified(out, pages=4000, records=20_000, delay=100, seed=3)
    assert n == 20_000
    st = zs.trace.stats(out, "native")
    assert st["host_events"]["ideal_awareness"] == 1.0
    with pytest.raises(zs.ConfigError, match="hot_share"):
        zs.trace.generate_notified(out, hot_share=2.0)


def native_record(t: int, op: int, device: int = 0, flags: int = 0) -> bytes:
    import struct

    return struct.pack("<QQIHBB", t, 0, 4096, device, op, flags)


@pytest.mark.parametrize(
    "records, what",
    [
        ([(10, 4), (5, 1)], "bad.bin:2: events out of time order"),
        ([(10, 9)], "bad.bin:1: unknown event kind 9"),
        ([(10, 4, 3)], "bad.bin:1: a dirty host event in buffer 3"),
    ],
)
def test_bad_notified_traces_exit_2_naming_the_record(tmp_path, cli, records, what):
    bad = tmp_path / "bad.bin"
    body = b"ZSTRACE2" + (1).to_bytes(8, "little")
    body += b"".join(native_record(*r) for r in records)
    bad.write_bytes(body)
    for command in (
        ["trace", "stats", str(bad), "--format", "native"],
        ["run", "--trace", str(bad), "--format", "native", "--set", "flash.blocks_per_plane=64"],
    ):
        proc = cli(*command)
        assert proc.returncode == 2, proc.stderr
        assert what in proc.stderr and "Traceback" not in proc.stderr
