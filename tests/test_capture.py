"""`zombiesim capture`: the raw-trace converter on the shipped pgbench capture, the
environment checks, bad input, and (where the machine allows: root, tracefs, loop devices)
real captures end to end."""

from __future__ import annotations

import csv
import gzip
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from processes import default_signals, wait_for

from zombiesim import _core
from zombiesim import capture as cap
from zombiesim import trace as traces
from zombiesim._errors import InputError
from zombiesim.samples import CHECKOUT_SAMPLES

#: The sample traces the checkout ships (traces/samples/README.md).
TRACES = CHECKOUT_SAMPLES
PGBENCH = TRACES / "captures" / "pgbench-ext4"
#: `writeback_dirty_folio` lines in the pgbench capture's raw trace.
PGBENCH_DIRTY_LINES = 76041

DD = (
    "dd if=/dev/urandom of=f bs=4k count=256 conv=fsync; "
    "dd if=/dev/urandom of=f bs=4k count=64 seek=10 conv=notrunc,fsync"
)


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


def read_csv(path: Path) -> list[dict[str, str]]:
    with gzip.open(path, "rt", newline="") as f:
        return list(csv.DictReader(f))


# -- convert_raw on the shipped pgbench capture ------------------------------------------------


@pytest.fixture(scope="module")
def pgbench(tmp_path_factory) -> tuple[Path, cap.ConvertResult]:
    """The pgbench folder's raw trace converted in a scratch folder holding only its
    extents.txt, inodes.txt and uptime_start.txt."""
    if not (PGBENCH / "ftrace_raw.txt.gz").is_file():
        pytest.fail(f"the shipped pgbench capture is missing ({PGBENCH}): restore traces/samples/")
    folder = tmp_path_factory.mktemp("pgbench")
    for name in ("extents.txt", "inodes.txt", "uptime_start.txt"):
        shutil.copyfile(PGBENCH / name, folder / name)
    result = cap.convert_raw(PGBENCH / "ftrace_raw.txt.gz", folder)
    return folder, result


def test_convert_pgbench_dirty_events(pgbench):
    folder, result = pgbench
    rows = read_csv(folder / cap.DIRTY_CSV)
    assert result.dirty_events == len(rows) == PGBENCH_DIRTY_LINES
    assert result.events["writeback_dirty_folio"] == PGBENCH_DIRTY_LINES
    assert list(rows[0]) == ["t", "ino", "file", "index"]
    # The same events as the capture's own CSV; it names files it cannot resolve `?`
    # (the block device's own page cache: file-system metadata), we leave them empty.
    ref = read_csv(PGBENCH / cap.DIRTY_CSV)
    assert [(r["t"], r["ino"], r["index"]) for r in rows] == [
        (r["t"], r["ino"], r["index"]) for r in ref
    ]
    differ = [(a, b) for a, b in zip(rows, ref, strict=True) if a["file"] != b["file"]]
    assert all(a["file"] == "" and b["file"] == "?" for a, b in differ), differ[:3]
    assert len(differ) == result.dirty_unknown < 100


def test_convert_pgbench_device_writes(pgbench):
    folder, result = pgbench
    rows = read_csv(folder / cap.DEVICE_CSV)
    assert list(rows[0]) == [
        "t_wall",
        "rwbs",
        "fsblk",
        "file",
        "file_page",
        "content_xxh3",
        "t_app_write",
    ]
    assert len(rows) == result.device_blocks
    assert all("W" in r["rwbs"] and r["content_xxh3"] == "" for r in rows)
    # The capture's own counts (loop_summary.txt) of 4 KiB blocks written, mapped or not.
    summary = (PGBENCH / "loop_summary.txt").read_text()
    m = re.search(r"mapped to a file page: (\d+), unmapped \(.*\): (\d+)", summary)
    assert m is not None
    mapped, unmapped = int(m.group(1)), int(m.group(2))
    assert result.device_blocks == mapped + unmapped
    assert abs(result.device_blocks_mapped - mapped) <= 5
    # Against the hashed CSV: it holds only the blocks its shim hashed, so it is a
    # sub-multiset of ours; what we have beyond it is the journal, unmapped blocks and a
    # few files the shim did not see, well under 1%.
    ours = Counter(r["fsblk"] for r in rows)
    ref_rows = read_csv(PGBENCH / cap.DEVICE_CSV)
    ref = Counter(r["fsblk"] for r in ref_rows)
    assert not ref - ours, f"blocks only in the reference: {list((ref - ours).items())[:5]}"
    extra = ours - ref
    by_file = Counter()
    extra_left = Counter(extra)
    for r in rows:
        if extra_left[r["fsblk"]] > 0:
            extra_left[r["fsblk"]] -= 1
            by_file[r["file"].split("/")[0] or "(unmapped)"] += 1
    assert extra.total() <= 0.01 * ours.total(), f"extra blocks by file: {dict(by_file)}"
    assert set(by_file) <= {"<ext4-journal>", "(unmapped)", "base", "global"}, dict(by_file)
    # Rows both have agree on time, file and page.
    key = ("t_wall", "fsblk", "file", "file_page")
    ours_keys = Counter(tuple(r[k] for k in key) for r in rows)
    ref_keys = Counter(tuple(r[k] for k in key) for r in ref_rows)
    assert not ref_keys - ours_keys, list((ref_keys - ours_keys).items())[:5]


def test_convert_pgbench_summary(pgbench):
    folder, result = pgbench
    text = (folder / cap.SUMMARY).read_text()
    ref = (PGBENCH / "loop_summary.txt").read_text()
    for name in ("block_rq_complete", "block_rq_issue", "ext4_da_write_begin"):
        n = int(re.search(rf"^{name}\s+(\d+)$", ref, re.M).group(1))
        assert result.events[name] == n
        assert re.search(rf"^{name}\s+{n}$", text, re.M)
    assert "pages still dirty at end of capture: 6379" in text
    assert result.pages_still_dirty == 6379
    assert result.lost_events == 0


def test_convert_device_filter(tmp_path):
    """Only the given device's events are kept; events of another device are left out."""
    if not (PGBENCH / "ftrace_raw.txt.gz").is_file():
        pytest.fail(f"the shipped pgbench capture is missing ({PGBENCH}): restore traces/samples/")
    for name in ("extents.txt", "inodes.txt", "uptime_start.txt"):
        shutil.copyfile(PGBENCH / name, tmp_path / name)
    raw = tmp_path / "head.txt"
    with gzip.open(PGBENCH / "ftrace_raw.txt.gz", "rt") as src, open(raw, "w") as dst:
        for _, line in zip(range(20000), src, strict=False):
            dst.write(line)
        dst.write("CPU:1 [LOST 7 EVENTS]\n")
    kept = cap.convert_raw(raw, tmp_path, device="7:0")
    assert kept.dirty_events > 0 and kept.device_blocks > 0 and kept.lost_events == 7
    other = cap.convert_raw(raw, tmp_path, device=(7, 1))
    assert other.dirty_events == other.device_blocks == 0
    assert "block_rq_issue" not in other.events


def test_convert_raw_missing_folder_files(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("")
    with pytest.raises(InputError, match="uptime_start.txt"):
        cap.convert_raw(raw, tmp_path)


def test_convert_synthetic_lines(tmp_path):
    """A small hand-written trace: times, blocks, pages and the wall-clock offset."""
    (tmp_path / "uptime_start.txt").write_text("100.00 5.00\n1700000000.500000000\n")
    (tmp_path / "inodes.txt").write_text("12 16384 dir/a b\n")
    (tmp_path / "extents.txt").write_text(
        "== dir/a b\n   0:        0..       3:       1000..      1003:      4:   last,eof\n"
    )
    (tmp_path / "raw.txt").write_text(
        "   sh-5 [000] .....   100.250000: writeback_dirty_folio: bdi 7:3: ino=12 index=2\n"
        "   sh-5 [000] d..1.   100.260000: writeback_dirty_folio: bdi 8:0: ino=12 index=1\n"
        "   kworker/0:1H-9 [000] .....   101.000001: block_rq_issue: 7,3 WS 8192 () 8008 + 16 "
        "be,0,4 [kworker/0:1H]\n"
        "   kworker/0:1H-9 [000] .....   101.000002: block_rq_issue: 7,3 FF 0 () 0 + 0 "
        "none,0,0 [kworker/0:1H]\n"
        "   sh-5 [001] .....   101.5: block_rq_issue: 7,3 RA 4096 () 8000 + 8 be,0,4 [sh]\n"
        "   jbd2/loop3-8-7 [001] .....   102.000000: block_rq_issue: 7,3 WS 4096 () 64 + 8 "
        "be,0,4 [jbd2/loop3-8]\n"
    )
    res = cap.convert_raw(tmp_path / "raw.txt", tmp_path, device="7:3")
    dirty = read_csv(tmp_path / cap.DIRTY_CSV)
    assert dirty == [{"t": "100.250000", "ino": "12", "file": "dir/a b", "index": "2"}]
    dev = read_csv(tmp_path / cap.DEVICE_CSV)
    assert [(r["t_wall"], r["fsblk"], r["file"], r["file_page"]) for r in dev] == [
        ("1700000001.500001", "1001", "dir/a b", "1"),
        ("1700000001.500001", "1002", "dir/a b", "2"),
        ("1700000002.500000", "8", "", ""),
    ]
    assert res.device_requests == 2 and res.device_blocks_mapped == 2
    assert res.lifetime[0] == 1 and res.pages_still_dirty == 0
    assert "unmapped (fs metadata/journal/deleted files): 1" in (tmp_path / cap.SUMMARY).read_text()


def test_convert_discards_are_trim_rows(tmp_path):
    """A discard request (rwbs `D`: a mount with discard, or fstrim) is one row of the
    trims CSV (`t_wall,fsblk,blocks`), counted apart from the writes; the importer makes
    each one trim (in time order with the writes: the Rust importer's tests)."""
    write_folder(
        tmp_path,
        "12 16384 a\n",
        "== a\n   0:        0..       3:       1000..      1003:      4:   last,eof\n",
        "   sh-5 [000] .....   11.000000: block_rq_issue: 7,3 WS 4096 () 8000 + 8 be,0,4 [sh]\n"
        "   kworker-9 [000] .....   12.000000: block_rq_issue: 7,3 D 12288 () 8000 + 24 "
        "be,0,4 [fstrim]\n"
        "   sh-5 [000] .....   13.000000: block_rq_issue: 7,3 WS 4096 () 8008 + 8 be,0,4 [sh]\n",
    )
    res = cap.convert_raw(tmp_path / "raw.txt", tmp_path, device="7:3")
    dev = read_csv(tmp_path / cap.DEVICE_CSV)
    assert [(r["rwbs"], r["fsblk"], r["file"]) for r in dev] == [
        ("WS", "1000", "a"),
        ("WS", "1001", "a"),
    ]
    assert read_csv(tmp_path / cap.TRIMS_CSV) == [
        {"t_wall": "1700000002.000000", "fsblk": "1000", "blocks": "3"}
    ]
    assert (res.device_requests, res.device_blocks) == (2, 2)
    assert (res.discard_requests, res.discarded_blocks) == (1, 3)
    assert "discards (trims): 1 requests, 3 4KiB blocks" in (tmp_path / cap.SUMMARY).read_text()
    if hasattr(_core, "trace_import_capture"):
        report = traces.import_capture(tmp_path, tmp_path / "t.zst")
        assert report["details"]["device_trim_rows"] == 1
        st = traces.stats(tmp_path / "t.zst", "native")
        assert st["trims"]["count"] == 1 and st["trims"]["bytes"] == 3 * 4096
        assert st["writes"]["count"] == 2


def write_folder(folder: Path, inodes: str, extents: str, raw: str) -> None:
    """A capture folder's clock (uptime 10 s at epoch 1700000000), inodes, extents and raw
    trace (`raw.txt`), for `convert_raw`."""
    (folder / "uptime_start.txt").write_text("10.00 1.00\n1700000000.000000000\n")
    (folder / "inodes.txt").write_text(inodes)
    (folder / "extents.txt").write_text(extents)
    (folder / "raw.txt").write_text(raw)


def test_convert_large_folio_dirty_pages_are_the_written_ones(tmp_path):
    """With the application's writes recorded, a dirty 2 MiB folio stands for the pages
    written, not the 512 it holds: an 8 KiB append dirties 2 pages; a later write into
    the still-dirty folio dirties its page then; once a block of the folio is written the
    folio is clean, and the next write waits for the next dirty event."""
    wb = "ext4_da_write_begin: dev 7,0 ino 12"
    write_folder(
        tmp_path,
        "12 2097152 wal\n",
        "== wal\n   0: 0.. 511: 5000.. 5511: 512: last,eof\n",
        "  p-3 [000] ..... 10.000000: mm_filemap_add_to_page_cache: dev 7:0 ino c "
        "pfn=0x200000 ofs=0 order=9\n"
        f"  p-3 [000] ..... 10.100000: {wb} pos 16384 len 8192\n"
        "  p-3 [000] d..1. 10.100001: writeback_dirty_folio: bdi 7:0: ino=12 index=0\n"
        f"  p-3 [000] ..... 10.200000: {wb} pos 20480 len 4096\n"
        f"  p-3 [000] ..... 10.300000: {wb} pos 40960 len 4096\n"
        "  k-4 [000] ..... 10.400000: block_rq_issue: 7,0 W 12288 () 40032 + 24 be,0,4 [k]\n"
        f"  p-3 [000] ..... 10.500000: {wb} pos 49152 len 4096\n"
        "  p-3 [000] d..1. 10.500001: writeback_dirty_folio: bdi 7:0: ino=12 index=0\n",
    )
    res = cap.convert_raw(tmp_path / "raw.txt", tmp_path, device="7:0")
    rows = [(r["t"], r["index"]) for r in read_csv(tmp_path / cap.DIRTY_CSV)]
    assert rows == [
        ("10.100001", "4"),
        ("10.100001", "5"),
        ("10.300000", "10"),
        ("10.500001", "12"),
    ]
    assert res.dirty_events == 2 and res.dirty_rows == 4


def test_convert_files_deleted_during_the_run(tmp_path):
    """ext4's block-map events join files deleted during the run: inode 12 holds file
    `old` (blocks 500-501), is freed, and comes back as `new` on the same blocks (the file
    left at the end). Each generation's pages join to the blocks it held then; the gone
    one is listed in extents_deleted.txt."""
    ext4 = "ext4_ext_map_blocks_exit: dev 7,0 ino 12 flags CREATE|DELALLOC lblk 0 pblk"
    write_folder(
        tmp_path,
        "12 8192 new\n",
        "== new\n   0: 0.. 1: 500.. 501: 2: last,eof\n",
        "  a-1 [000] d..1. 10.100000: writeback_dirty_folio: bdi 7:0: ino=12 index=1\n"
        f"  k-2 [000] ..... 10.200000: {ext4} 500 len 2 mflags NM ret 2\n"
        "  k-2 [000] ..... 10.200001: block_rq_issue: 7,0 W 8192 () 4000 + 16 be,0,4 [k]\n"
        "  a-1 [000] ..... 10.300000: ext4_free_blocks: dev 7,0 ino 12 mode 0100644 "
        "block 500 count 2 flags VALIDATED\n"
        "  a-1 [000] ..... 10.300001: ext4_free_inode: dev 7,0 ino 12 mode 0100644 uid 0 "
        "gid 0 blocks 0\n"
        "  a-1 [000] d..1. 10.400000: writeback_dirty_folio: bdi 7:0: ino=12 index=0\n"
        f"  k-2 [000] ..... 10.500000: {ext4} 500 len 2 mflags NM ret 2\n"
        "  k-2 [000] ..... 10.500001: block_rq_issue: 7,0 W 8192 () 4000 + 16 be,0,4 [k]\n"
        # Metadata: the block device's own inode (7 << 20 | 0), its page index the block.
        "  a-1 [000] d..1. 10.600000: writeback_dirty_folio: bdi 7:0: ino=7340032 index=3\n",
    )
    res = cap.convert_raw(tmp_path / "raw.txt", tmp_path, device="7:0")
    dirty = [(r["file"], r["index"]) for r in read_csv(tmp_path / cap.DIRTY_CSV)]
    assert dirty == [("<ino 12.0>", "1"), ("new", "0"), ("<block device>", "3")]
    dev = [(r["fsblk"], r["file"], r["file_page"]) for r in read_csv(tmp_path / cap.DEVICE_CSV)]
    assert dev == [
        ("500", "<ino 12.0>", "0"),
        ("501", "<ino 12.0>", "1"),
        ("500", "new", "0"),
        ("501", "new", "1"),
    ]
    assert res.files_gone == 1 and res.dirty_unknown == 0
    assert (tmp_path / "extents_deleted.txt").read_text() == (
        "== <ino 12.0>\n   0: 0.. 1: 500.. 501: 2:\n"
    )
    report = traces.import_capture(tmp_path, tmp_path / "t.zst")
    # The metadata page is its block (3).
    assert report["device_writes_joined"] == 4 and report["host_events_joined"] == 3
    # Without the block-map events, the old file's page would be taken for `new`'s.
    plain = "".join(
        line + "\n"
        for line in (tmp_path / "raw.txt").read_text().splitlines()
        if "ext4_" not in line
    )
    (tmp_path / "raw.txt").write_text(plain)
    cap.convert_raw(tmp_path / "raw.txt", tmp_path, device="7:0")
    assert not (tmp_path / "extents_deleted.txt").exists()
    assert [r["file"] for r in read_csv(tmp_path / cap.DIRTY_CSV)] == [
        "new",
        "new",
        "<block device>",
    ]


def test_convert_expands_large_folios(tmp_path):
    """A dirty large folio is all of its pages dirty: with the folio's order from
    `mm_filemap_add_to_page_cache`, one event gives a row per page; after the folio
    leaves the page cache, an event at that index is one page again."""
    (tmp_path / "uptime_start.txt").write_text("10.00 1.00\n1700000000.000000000\n")
    (tmp_path / "inodes.txt").write_text("12 1048576 big\n")
    (tmp_path / "extents.txt").write_text("== big\n   0: 0.. 255: 5000.. 5255: 256: last,eof\n")
    (tmp_path / "raw.txt").write_text(
        "  dd-3 [000] ..... 10.100000: mm_filemap_add_to_page_cache: dev 7:0 ino c "
        "pfn=0x21a700 ofs=0 order=2\n"
        "  dd-3 [000] ..... 10.100001: mm_filemap_add_to_page_cache: dev 8:0 ino c "
        "pfn=0x21a700 ofs=16384 order=2\n"
        "  dd-3 [000] d..1. 10.200000: writeback_dirty_folio: bdi 7:0: ino=12 index=0\n"
        "  dd-3 [000] d..1. 10.200001: writeback_dirty_folio: bdi 7:0: ino=12 index=4\n"
        "  kw-4 [000] ..... 10.300000: mm_filemap_delete_from_page_cache: dev 7:0 ino c "
        "pfn=0x21a700 ofs=0 order=2\n"
        "  dd-3 [000] d..1. 10.400000: writeback_dirty_folio: bdi 7:0: ino=12 index=0\n"
    )
    res = cap.convert_raw(tmp_path / "raw.txt", tmp_path, device="7:0")
    rows = read_csv(tmp_path / cap.DIRTY_CSV)
    assert [(r["t"], r["index"]) for r in rows] == [
        ("10.200000", "0"),
        ("10.200000", "1"),
        ("10.200000", "2"),
        ("10.200000", "3"),
        ("10.200001", "4"),
        ("10.400000", "0"),
    ]
    assert res.dirty_events == 3 and res.dirty_rows == 6 and res.dirty_pages == 5
    assert "large folios expanded to 6 4KiB pages" in (tmp_path / cap.SUMMARY).read_text()


# -- environment checks ------------------------------------------------------------------------


@pytest.fixture
def all_present(monkeypatch, tmp_path):
    """Every probe says yes (a tracefs with every event), whatever the machine."""
    tracefs = tmp_path / "tracing"
    (tracefs / "instances").mkdir(parents=True)
    events = [c[0] for c in cap.REQUIRED_EVENTS] + list(cap.OPTIONAL_EVENTS)
    (tracefs / "available_events").write_text("\n".join(events) + "\n")
    monkeypatch.setattr(cap.environment, "_privileged", lambda: True)
    monkeypatch.setattr(cap.environment, "_which", lambda program: f"/usr/bin/{program}")
    real_exists = cap.environment._exists
    monkeypatch.setattr(
        cap.environment, "_exists", lambda p: p == "/dev/loop-control" or real_exists(p)
    )
    return tracefs


def test_check_environment_all_present(all_present):
    assert cap.check_environment(tracefs=all_present) == []


def test_check_environment_not_root(all_present, monkeypatch):
    monkeypatch.setattr(cap.environment, "_privileged", lambda: False)
    missing = cap.check_environment(tracefs=all_present)
    assert len(missing) == 1 and "root" in missing[0] and "sudo" in missing[0]


def test_check_environment_tracefs_unmountable(all_present, monkeypatch, tmp_path):
    monkeypatch.setattr(cap.environment, "_mount_tracefs", lambda path: "permission denied")
    missing = cap.check_environment(tracefs=tmp_path / "nowhere")
    assert len(missing) == 1
    assert "tracefs" in missing[0] and "mount -t tracefs nodev" in missing[0]
    assert "permission denied" in missing[0]


def test_check_environment_missing_event(all_present):
    events = all_present / "available_events"
    events.write_text(events.read_text().replace("block:block_rq_issue\n", ""))
    missing = cap.check_environment(tracefs=all_present)
    assert len(missing) == 1 and "block:block_rq_issue" in missing[0]


def test_check_environment_optional_events_and_old_name(all_present):
    (all_present / "available_events").write_text(
        "writeback:writeback_dirty_page\nblock:block_rq_issue\nblock:block_rq_complete\n"
    )
    assert cap.check_environment(tracefs=all_present) == []


def test_check_environment_tools_and_loop(all_present, monkeypatch):
    monkeypatch.setattr(
        cap.environment, "_which", lambda p: None if p in ("filefrag", "losetup") else p
    )
    monkeypatch.setattr(
        cap.environment, "_exists", lambda p: p != "/dev/loop-control" and os.path.exists(p)
    )
    missing = cap.check_environment(tracefs=all_present)
    text = "\n".join(missing)
    assert len(missing) == 3, missing
    assert "`filefrag` (package e2fsprogs" in text
    assert "`losetup` (package util-linux" in text
    assert "/dev/loop-control" in text and "modprobe loop" in text
    monkeypatch.setattr(cap.environment, "_which", lambda p: None if p == "mkfs.xfs" else p)
    monkeypatch.setattr(cap.environment, "_exists", lambda p: True)
    missing = cap.check_environment(fs="xfs", tracefs=all_present)
    assert missing == ["`mkfs.xfs` (package xfsprogs: `apt-get install xfsprogs`)"]


def test_capture_refused_names_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(
        cap.run, "check_environment", lambda *a, **k: ["`filefrag` (package e2fsprogs)"]
    )
    with pytest.raises(InputError, match="capture needs: `filefrag`") as e:
        cap.capture(["true"], tmp_path / "out")
    assert e.value.exit_code == 2
    assert list(tmp_path.iterdir()) == []  # nothing touched, no half folder


# -- bad input on the command line --------------------------------------------------------------


def test_cli_out_not_empty(cli, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "x").write_text("keep me")
    proc = cli("capture", "--out", str(out), "--", "true")
    assert proc.returncode == 2, proc.stderr
    assert "not empty" in proc.stderr and "--force" in proc.stderr
    assert (out / "x").read_text() == "keep me"
    no_traceback(proc)


def test_cli_missing_command(cli, tmp_path):
    for args in (["--out", str(tmp_path / "o")], ["--out", str(tmp_path / "o"), "--"]):
        proc = cli("capture", *args)
        assert proc.returncode == 2, proc.stderr
        assert "no command to run" in proc.stderr
        no_traceback(proc)
    assert not (tmp_path / "o").exists()


def test_cli_bad_options(cli, tmp_path):
    out = str(tmp_path / "o")
    for args, message in (
        (["--size", "lots"], "--size"),
        (["--size", "1MiB"], "at least"),
        (["--timeout", "0"], "--timeout"),
        (["--fs", "btrfs"], "--fs"),
        (["--fstrim-every", "0"], "--fstrim-every"),
        (["--fstrim-every", "soon"], "--fstrim-every"),
    ):
        proc = cli("capture", "--out", out, *args, "--", "true")
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr
        no_traceback(proc)
    proc = cli("capture", "--out", out, "--", "./no-such-program")
    assert proc.returncode == 2 and "cannot run" in proc.stderr
    assert not (tmp_path / "o").exists()


# -- end to end ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def can_capture() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("capture needs Linux")
    missing = cap.check_environment()
    if missing:
        pytest.skip(f"capture needs: {', '.join(missing)}")


def _loop_images() -> set[str]:
    """Loop devices backed by a capture's image (none should outlive a capture)."""
    proc = subprocess.run(["losetup", "-a"], capture_output=True, text=True)
    return {line for line in proc.stdout.splitlines() if "zombiesim-capture-" in line}


def _leftovers(tmp_path: Path, before: set[str]) -> list[str]:
    left = [str(p) for p in tmp_path.iterdir() if p.name.startswith(".")]
    left += sorted(_loop_images() - before)
    return left


def test_capture_end_to_end(can_capture, cli, tmp_path):
    before = _loop_images()
    out = tmp_path / "cap"
    proc = cli("capture", "--out", str(out), "--keep-raw", "--", "sh", "-c", DD, timeout=300)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    for name in (
        "uptime_start.txt",
        "inodes.txt",
        "extents.txt",
        cap.DIRTY_CSV,
        cap.DEVICE_CSV,
        "loop_summary.txt",
        "command.txt",
        "ftrace_raw.txt.gz",
    ):
        assert (out / name).is_file(), name
    dirty = read_csv(out / cap.DIRTY_CSV)
    f_dirty = [r for r in dirty if r["file"] == "f"]
    assert len(f_dirty) >= 256
    assert {int(r["index"]) for r in f_dirty} == set(range(256))
    writes = read_csv(out / cap.DEVICE_CSV)
    f_writes = [r for r in writes if r["file"] == "f"]
    assert len(f_writes) >= 320
    assert Counter(int(r["file_page"]) for r in f_writes)[10] >= 2  # rewritten by the 2nd dd
    # One clock: every write of f comes after the first page of f was dirtied.
    up, epoch = cap.read_uptime_start(out / "uptime_start.txt")
    first_dirty = min(float(r["t"]) for r in f_dirty) + (epoch - up) / 1e9
    assert min(float(r["t_wall"]) for r in f_writes) >= first_dirty
    assert re.match(r"^\d+\.\d\d \d+\.\d\d\n\d+\.\d{9}\n$", (out / "uptime_start.txt").read_text())
    inodes = (out / "inodes.txt").read_text()
    assert re.search(r"^\d+ 1048576 f$", inodes, re.M)
    assert "== f\n" in (out / "extents.txt").read_text()
    assert "exit status 0" in (out / "loop_summary.txt").read_text()
    for word in ("events", "device", "page cache", str(out)):
        assert word in proc.stdout
    if hasattr(_core, "trace_import_capture"):
        assert (out / "trace.zst").is_file(), proc.stdout + proc.stderr
    else:
        assert "not imported" in proc.stdout
    assert _leftovers(tmp_path, before) == []


#: A file written, synced, deleted and synced again: its blocks are freed on the device.
WRITE_AND_DELETE = "dd if=/dev/urandom of=f bs=4k count=512 conv=fsync status=none; rm f; sync"


@pytest.mark.parametrize("option", [["--discard"], ["--fstrim-every", "3600"]])
def test_capture_with_trims(can_capture, cli, tmp_path, option):
    """`--discard` (each freed extent trimmed at its journal commit) and `--fstrim-every`
    (fstrim on a timer and once at the end: here only the last one falls in the run)
    both give the trace trims of the deleted file's blocks; without either, none."""
    traced = {}
    for name, opts in (("plain", []), ("trimmed", option)):
        out = tmp_path / name
        proc = cli("capture", "--out", str(out), *opts, "--", "sh", "-c", WRITE_AND_DELETE,
                   timeout=300)  # fmt: skip
        no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        traced[name] = (out, proc.stdout)
    plain, trimmed = traced["plain"], traced["trimmed"]
    assert "none (no --discard" in plain[1] and "discard requests" in trimmed[1]
    rows = read_csv(trimmed[0] / cap.DEVICE_CSV)
    trims = read_csv(trimmed[0] / cap.TRIMS_CSV)
    trimmed_blocks = {int(r["fsblk"]) + k for r in trims for k in range(int(r["blocks"]))}
    # The deleted file's blocks, named by its inode (ext4's block map joins them).
    f_blocks = {int(r["fsblk"]) for r in rows if r["file"].startswith("<ino ")}
    assert len(f_blocks) == 512 and f_blocks <= trimmed_blocks
    assert read_csv(plain[0] / cap.TRIMS_CSV) == []
    summary = (trimmed[0] / "loop_summary.txt").read_text()
    assert "discards (trims):" in summary and "trims: " in summary
    if hasattr(_core, "trace_import_capture"):
        st = traces.stats(trimmed[0] / "trace.zst", "native")
        assert st["trims"]["count"] == len(trims)
        assert st["trims"]["bytes"] == 4096 * sum(int(r["blocks"]) for r in trims)


#: Three files: `log` rewritten with a short write-life hint, `table` written once with a
#: long one, `plain` with none.
HINTED_WRITES = f"""
import fcntl, os, struct
F_SET_RW_HINT = {cap.layout.F_SET_RW_HINT}
def write(name, hint, pages, rounds):
    fd = os.open(name, os.O_CREAT | os.O_WRONLY)
    if hint:
        fcntl.fcntl(fd, F_SET_RW_HINT, struct.pack("Q", hint))
    for _ in range(rounds):
        for p in range(pages):
            os.pwrite(fd, os.urandom(4096), p * 4096)
        os.fsync(fd)
    os.close(fd)
write("log", 2, 16, 4)
write("table", 4, 64, 1)
write("plain", 0, 8, 1)
"""


def test_capture_placement_by_hint_and_file(can_capture, cli, tmp_path):
    """Linux write-life hints reach the trace as placement identifiers: every write of a
    file carries the hint the program gave it (0 without one); by file, each file has its
    own identifier."""
    out = tmp_path / "cap"
    proc = cli(
        "capture", "--out", str(out), "--placement", "hint", "--",
        sys.executable, "-c", HINTED_WRITES, timeout=300,
    )  # fmt: skip
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    if not (out / "hints.txt").exists():
        pytest.skip("this kernel keeps no write-life hints (no F_GET_RW_HINT)")
    assert sorted((out / "hints.txt").read_text().splitlines()) == ["2 log", "4 table"]
    assert "placement ids" in proc.stdout
    by_file = Counter(r["file"] for r in read_csv(out / cap.DEVICE_CSV))
    details = traces.import_capture(out, tmp_path / "h.zst", placement="hint")["details"]
    assert details["placement_writes_2"] == by_file["log"] >= 64
    assert details["placement_writes_4"] == by_file["table"] >= 64
    assert (
        details["placement_writes_0"] == sum(by_file.values()) - by_file["log"] - by_file["table"]
    )
    assert traces.stats(out / "trace.zst", "native")["placement"]["writes"] == sum(by_file.values())
    # By file: log, table, plain and the journal each on an identifier of its own (fewer
    # than 8 files), writes of no file (metadata) on 0.
    details = traces.import_capture(out, tmp_path / "f.zst", placement="file")["details"]
    placed = {int(k[17:]): n for k, n in details.items() if k.startswith("placement_writes_")}
    files = {f: n for f, n in by_file.items() if f}
    assert details["placement_files"] == len(files) >= 3
    assert placed.get(0, 0) == by_file.get("", 0)
    assert sorted(n for i, n in placed.items() if i) == sorted(files.values())


#: SST-like files: six written, four deleted, three more written (ext4 gives them the
#: freed inode numbers and blocks), one rewritten in part, one of the new ones deleted.
DELETING_WRITES = """
import os
def write(name, pages):
    with open(name, "wb") as f:
        for _ in range(pages):
            f.write(os.urandom(4096))
        f.flush()
        os.fsync(f.fileno())
for i in range(6):
    write(f"sst{i}", 64)
for i in range(4):
    os.unlink(f"sst{i}")
os.sync()
for i in range(6, 9):
    write(f"sst{i}", 64)
os.unlink("sst6")
"""


def test_capture_joins_files_deleted_during_the_run(can_capture, cli, tmp_path):
    """Files deleted during the run (and their inode numbers reused) are joined by ext4's
    block map: every file's writes are its own 64 pages, none is taken for another's."""
    out = tmp_path / "cap"
    proc = cli(
        "capture", "--out", str(out), "--", sys.executable, "-c", DELETING_WRITES, timeout=300
    )  # fmt: skip
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    if not (out / "extents_deleted.txt").exists():
        pytest.skip("this kernel has no ext4 block-map events")
    gone = [line for line in (out / "extents_deleted.txt").read_text().splitlines() if "==" in line]
    assert len(gone) == 5  # sst0-3 and sst6
    writes = Counter(r["file"] for r in read_csv(out / cap.DEVICE_CSV) if r["file"])
    files = {f: n for f, n in writes.items() if f != "<ext4-journal>"}
    assert len(files) == 9 and set(files.values()) == {64}, files
    report = traces.import_capture(out, tmp_path / "t.zst")
    assert report["device_writes_joined_share"] > 0.95
    assert report["host_events_joined_share"] > 0.95


def test_capture_bad_placement_runs_nothing(cli, tmp_path):
    out = tmp_path / "o"
    proc = cli("capture", "--out", str(out), "--placement", "inode", "--", "true")
    assert proc.returncode == 2 and "placement" in proc.stderr and "file:N" in proc.stderr
    no_traceback(proc)
    assert not out.exists()


def test_capture_failing_command(can_capture, cli, tmp_path):
    before = _loop_images()
    out = tmp_path / "cap"
    proc = cli("capture", "-q", "--out", str(out), "--", "sh", "-c", "echo hello > g; exit 3")
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    summary = (out / "loop_summary.txt").read_text()
    assert "FAILED: exit status 3" in summary
    assert "exit status 3" in (out / "command.txt").read_text()
    assert re.search(r"^\d+ 6 g$", (out / "inodes.txt").read_text(), re.M)
    assert _leftovers(tmp_path, before) == []


def test_capture_timeout(can_capture, cli, tmp_path):
    out = tmp_path / "cap"
    proc = cli("capture", "-q", "--out", str(out), "--timeout", "1", "--", "sleep", "60")
    assert proc.returncode == 1, proc.stderr
    assert "timed out after 1 s" in (out / "loop_summary.txt").read_text()


def test_capture_interrupted_leaves_nothing(can_capture, tmp_path):
    """SIGINT while the command runs: the command's group is killed, the trace instance,
    the mount and the loop device are undone, and no folder is left. The command itself
    says when it runs (it creates a file outside the captured file system), so the signal
    always arrives mid-command; the child starts with the default signal handlers."""
    before = _loop_images()
    out = tmp_path / "cap"
    running = tmp_path / "running"
    command = f"touch {shlex.quote(str(running))}; exec sleep 600"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "zombiesim",
            "capture",
            "--out",
            str(out),
            "--",
            "sh",
            "-c",
            command,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    instance = cap.TRACEFS / "instances" / f"zombiesim-{proc.pid}"
    wait_for(running.exists, proc=proc, what="the captured command to start")
    assert instance.exists()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert not out.exists()
    assert not instance.exists()
    assert _leftovers(tmp_path, before) == []


def test_a_ctrl_c_while_the_output_threads_start_is_an_interruption(tmp_path, monkeypatch):
    """A Ctrl-C that lands while the output threads are being started (a loaded
    machine makes that slow) propagates as the interruption (the command's group is
    killed on the way), not as an error about joining a thread that never started."""
    from zombiesim.capture import command

    started = []

    def interrupted_start(self):
        started.append(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(command._Tee, "start", interrupted_start)
    with pytest.raises(KeyboardInterrupt):
        command._run_command(["sleep", "600"], tmp_path, None, False)
    assert len(started) == 1
