"""Fuzzing the inputs parsed in Python or through the binding: grid files, configs,
workload specs, every trace format (through `trace stats`) and the capture importer's raw
ftrace text. Whatever the bytes, the answer is a result or a `ZombiesimError` with a
clear message, never another exception, a hang or a crash (the Rust readers have their
own cargo-fuzz targets: `make fuzz`, and `crates/zombiesim/tests/fuzz_corpus.rs` replays
their corpus).

`ZOMBIESIM_FUZZ_EXAMPLES=N` runs N examples per test (default 40, what `make test` runs).
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zombiesim as zs
from zombiesim import capture as cap
from zombiesim import sweeps

EXAMPLES = int(os.environ.get("ZOMBIESIM_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

#: Lines that look like each input, to mutate: the fuzzer reaches deeper from them.
GRID_LINES = [
    'preset = "default"',
    'workload = "uniform:drive_writes=0.1"',
    "[set]",
    '"flash.blocks_per_plane" = 64',
    "[axes]",
    '"gc.policy" = ["greedy", "fifo"]',
    "seed = [1, 2]",
    'scheme = ["gc-gd"]',
    "[[skip]]",
    '"gc.policy" = "fifo"',
    'metrics = ["waf"]',
    'trace = {path = "x.csv", format = "msr"}',
]
TRACE_LINES = {
    "msr": "128166372003061629,hm,1,Write,3989504,4096,1331\n",
    "spc": "0,303567,3072,w,0.000000\n",
    "blkparse": "  8,0    3        1     0.000000000  697  Q   W 223490 + 8 [kjournald]\n",
    "fio": "fio version 2 iolog\n/dev/sda add\n/dev/sda open\n/dev/sda write 4096 4096\n",
    "disksim": "0.000000 0 1024 8 0\n",
    "fiu": "1000 7 proc 0 8 W 8 0 0000000000000000000000000000000a\n",
    "pgbench-hashed": "t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write\n"
    "1795323069.081822,WS,120832,pg_wal/0001,0,2a134b24ccc5d94b,1795323069.035233\n",
    "nbdkit-hashlog": "W 1795322798804841 268435456 4096 0 260e8f33dcadd062\n"
    "R 1795322798804900 0 4096\nF 1795322798805000\n",
}


def mutated_lines(lines: list[str]) -> st.SearchStrategy[str]:
    """Texts built from known lines, each possibly cut, doubled or followed by noise."""
    line = st.one_of(
        st.sampled_from(lines),
        st.sampled_from(lines).flatmap(lambda s: st.integers(0, len(s)).map(lambda i, s=s: s[:i])),
        st.text(max_size=40),
    )
    return st.lists(line, max_size=12).map("\n".join)


def only_clean_errors(call) -> None:
    """`call()` returns, or raises a ZombiesimError with a one-line-able message."""
    try:
        call()
    except zs.ZombiesimError as e:
        assert str(e).strip(), "an error without a message"
        assert "Traceback" not in str(e)


@FUZZ
@given(text=st.one_of(st.text(max_size=300), mutated_lines(GRID_LINES)))
def test_grid_files(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("grid")
    path = folder / "grid.toml"
    path.write_text(text)
    only_clean_errors(lambda: sweeps.load_grid(path))


@FUZZ
@given(data=st.binary(max_size=300))
def test_grid_files_as_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("gridb") / "grid.toml"
    path.write_bytes(data)
    only_clean_errors(lambda: sweeps.load_grid(path))


@FUZZ
@given(
    text=st.one_of(st.text(max_size=300), mutated_lines(GRID_LINES[2:4] + ["[gc]", 'policy = "x"']))
)
def test_configs(text):
    only_clean_errors(lambda: zs.Config.from_toml(text, "fuzz.toml"))


@FUZZ
@given(
    spec=st.one_of(
        st.text(max_size=80),
        st.builds(
            lambda name, params: f"{name}:{params}",
            st.sampled_from([w.name for w in zs.workloads()] + ["nope"]),
            st.text(alphabet="abcdefghijklmnopqrstuvwxyz_=,.0123456789:-", max_size=40),
        ),
    )
)
def test_workload_specs(spec):
    only_clean_errors(lambda: zs.workload.parse(spec))


@FUZZ
@given(
    fmt=st.sampled_from(sorted(TRACE_LINES)),
    data=st.one_of(st.binary(max_size=400), st.data()),
)
def test_trace_readers(tmp_path_factory, fmt, data):
    if not isinstance(data, bytes):
        text = data.draw(mutated_lines(TRACE_LINES[fmt].splitlines()))
        data = text.encode()
    path = tmp_path_factory.mktemp("trace") / "t.txt"
    path.write_bytes(data)
    only_clean_errors(lambda: zs.trace.stats(path, fmt))


@FUZZ
@given(data=st.binary(max_size=400))
def test_native_traces(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("native")
    path = folder / "t.bin"
    path.write_bytes(b"ZSTRACE2" + data if data[:1] != b"Z" else data)
    only_clean_errors(lambda: zs.trace.stats(path, "native"))


def capture_folder(folder: Path) -> None:
    (folder / "uptime_start.txt").write_text("100.00 5.00\n1700000000.500000000\n")
    (folder / "inodes.txt").write_text("12 16384 dir/a b\n")
    (folder / "extents.txt").write_text(
        "== dir/a b\n   0:        0..       3:       1000..      1003:      4:   last,eof\n"
    )


RAW_LINES = [
    "   sh-5 [000] .....   100.250000: writeback_dirty_folio: bdi 7:3: ino=12 index=2",
    "   kworker/0:1H-9 [000] .....   101.000001: block_rq_issue: 7,3 WS 8192 () 8008 + 16 "
    "be,0,4 [kworker/0:1H]",
    "   sh-5 [001] .....   101.5: block_rq_issue: 7,3 RA 4096 () 8000 + 8 be,0,4 [sh]",
    "   sh-5 [000] .....   100.1: mm_filemap_add_to_page_cache: dev 7:3 ino c index 4 "
    "pfn=0x1 ofs=16384 order=2",
    "   sh-5 [000] .....   100.2: ext4_da_write_begin: dev 7,3 ino 12 pos 0 len 4096",
    "# tracer: nop",
]


@FUZZ
@given(text=st.one_of(st.text(max_size=300), mutated_lines(RAW_LINES)))
def test_capture_raw_traces(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("cap")
    capture_folder(folder)
    (folder / "raw.txt").write_text(text)
    only_clean_errors(lambda: cap.convert_raw(folder / "raw.txt", folder, device="7:3"))


@FUZZ
@given(
    uptime=st.text(max_size=60),
    inodes=st.text(max_size=80),
    extents=st.one_of(
        st.text(max_size=120),
        mutated_lines(["== dir/a b", "   0: 0.. 3: 1000.. 1003: 4: last,eof"]),
    ),
)
def test_capture_side_files(tmp_path_factory, uptime, inodes, extents):
    folder = tmp_path_factory.mktemp("side")
    (folder / "uptime_start.txt").write_text(uptime)
    (folder / "inodes.txt").write_text(inodes)
    (folder / "extents.txt").write_text(extents)
    (folder / "raw.txt").write_text(RAW_LINES[0] + "\n")
    only_clean_errors(lambda: cap.convert_raw(folder / "raw.txt", folder))
