"""No output destroys an input: every command that writes refuses, before any work, an
output that is the same file as one of its inputs (after links), two outputs on one path,
and an output that exists and is not a file (a directory, a socket) or, for a folder
output, not a folder. Exit 2, both paths named, the input untouched (docs/cli.md)."""

from __future__ import annotations

import hashlib
import shutil
import socket
import stat
from pathlib import Path

import pytest

import zombiesim as zs
from zombiesim import _io
from zombiesim.samples import CHECKOUT_SAMPLES

SMALL = ["--set", "flash.blocks_per_plane=64"]
MSR = CHECKOUT_SAMPLES / "msr-src1_0-excerpt.csv"
PGBENCH = CHECKOUT_SAMPLES / "captures" / "pgbench-ext4"
SQLITE = CHECKOUT_SAMPLES / "captures" / "sqlite-wal"
CORPUS_ENTRY = Path(__file__).resolve().parents[1] / "traces" / "corpus" / "fio-zipf"


def digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def read_only_copy(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    dst.chmod(0o444)
    return dst


@pytest.fixture
def inputs(tmp_path) -> dict[str, Path]:
    """Read-only copies of what the commands read (a read-only input must survive too),
    and a link to each."""
    got = {
        "msr": read_only_copy(MSR, tmp_path / "t.csv"),
        "config": tmp_path / "c.toml",
        "grid": tmp_path / "grid.toml",
        "native": read_only_copy(CORPUS_ENTRY / "trace.zst", tmp_path / "n.zst"),
        "capture": tmp_path / "capture",
        "sqlite": tmp_path / "sqlite",
        "wal": tmp_path / "capture" / "waldump.txt.gz",
        "corpus": tmp_path / "corpus",
        "results": tmp_path / "results",
    }
    got["config"].write_text(zs.Config.preset("default").to_toml())
    got["grid"].write_text('preset = "default"\n[axes]\n"gc.policy" = ["greedy"]\n')
    shutil.copytree(PGBENCH, got["capture"])
    shutil.copytree(SQLITE, got["sqlite"])
    (got["corpus"] / "one").mkdir(parents=True)
    shutil.copyfile(CORPUS_ENTRY / "trace.zst", got["corpus"] / "one" / "trace.zst")
    got["results"].mkdir()
    (got["results"] / "sweep.json").write_text("{}\n")
    link = tmp_path / "link"
    link.symlink_to(got["msr"])
    got["link"] = link
    return got


#: (writer, command line, the input it must not destroy). `{name}` is a path of the
#: `inputs` fixture; every case names an input as (or, through a link, as) an output.
SAME_FILE = [
    ("run --json", ["run", *SMALL, "--trace", "{msr}", "--format", "msr", "--json", "{msr}"],
     "msr"),
    ("run --json via a link", ["run", *SMALL, "--trace", "{msr}", "--format", "msr",
     "--json", "{link}"], "msr"),
    ("run --json over --config", ["run", "--config", "{config}", "-w", "uniform",
     "--json", "{config}"], "config"),
    ("compare --csv", ["compare", *SMALL, "--policies", "greedy,fifo", "--trace", "{msr}",
     "--format", "msr", "--csv", "{msr}"], "msr"),
    ("compare --json", ["compare", *SMALL, "--policies", "greedy,fifo", "--trace", "{msr}",
     "--format", "msr", "--json", "{link}"], "msr"),
    ("compare --report", ["compare", "--config", "{config}", "--policies", "greedy,fifo",
     "-w", "uniform", "--report", "{config}"], "config"),
    ("trace stats --json", ["trace", "stats", "{msr}", "--format", "msr", "--json", "{msr}"],
     "msr"),
    ("trace convert --output", ["trace", "convert", "{msr}", "--from", "msr", "--to", "disksim",
     "-o", "{link}"], "msr"),
    ("trace analyze --json", ["trace", "analyze", "--values", "{msr}", "--json", "{msr}"],
     "msr"),
    ("trace list --json", ["trace", "list", "{corpus}", "--json",
     "{corpus}/one/trace.zst"], "corpus"),
    ("trace import-capture --out", ["trace", "import-capture", "{capture}", "--out",
     "{capture}/extents.txt"], "capture"),
    ("trace import-capture --json", ["trace", "import-capture", "{capture}", "--out",
     "{capture}/new.zst", "--json", "{capture}/inodes.txt"], "capture"),
    ("trace import-wal --out", ["trace", "import-wal", "{wal}", "--writes", "{native}",
     "--out", "{native}"], "native"),
    ("trace import-wal --json", ["trace", "import-wal", "{wal}", "--writes", "{native}",
     "--out", "{capture}/new.zst", "--json", "{wal}"], "capture"),
    ("trace import-sqlite --json", ["trace", "import-sqlite", "{sqlite}", "--out",
     "{sqlite}/new.zst", "--json", "{sqlite}/sqlite_hashwrite_excerpt.log"], "sqlite"),
    ("trace import-sqlite --out", ["trace", "import-sqlite", "{sqlite}", "--out",
     "{sqlite}/sqlite_wal_events_excerpt.csv"], "sqlite"),
    ("study --out", ["study", "{native}", "--out", "{native}"], "native"),
    ("study --out over --corpus", ["study", "--corpus", "{corpus}", "--out",
     "{corpus}/one/trace.zst"], "corpus"),
    ("sweep --out", ["sweep", "{grid}", "--out", "{grid}"], "grid"),
    ("report --out", ["report", "{results}", "--out", "{results}/sweep.json"], "results"),
]  # fmt: skip


def _fill(args: list[str], paths: dict[str, Path]) -> list[str]:
    return [a.format(**{k: str(v) for k, v in paths.items()}) for a in args]


def _snapshot(path: Path) -> dict[str, tuple[str, int]]:
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {str(f): digest(f) for f in files}


@pytest.mark.parametrize("args,victim", [c[1:] for c in SAME_FILE], ids=[c[0] for c in SAME_FILE])
def test_an_output_that_is_an_input_is_refused(cli, inputs, args, victim):
    before = _snapshot(inputs[victim])
    proc = cli(*_fill(args, inputs))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    message = proc.stderr.strip().splitlines()[-1]
    assert "refusing" in message or "not a folder" in message, message
    assert _snapshot(inputs[victim]) == before


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "--json", "{dir}"],
        ["run", *SMALL, "-w", "uniform", "--json", "{dir}"],
        ["trace", "generate-notified", "--out", "{dir}"],
        ["trace", "stats", "{msr}", "--format", "msr", "--json", "{sock}"],
        ["reproduce", "ba-gc", "--out", "{file}"],
        ["demo", "--out", "{file}"],
        ["capture", "--out", "{file}", "--", "true"],
        ["trace", "analyze", "--values", "{msr}", "--out", "{file}"],
        [
            "compare",
            *SMALL,
            "--policies",
            "greedy,fifo",
            "-w",
            "uniform",
            "--csv",
            "{out}",
            "--report",
            "{out}",
        ],
    ],  # fmt: skip
    ids=lambda a: " ".join(a[:2]),
)
def test_an_output_that_is_no_file_or_no_folder_is_refused(cli, tmp_path, inputs, args):
    (tmp_path / "dir").mkdir()
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    (tmp_path / "file").write_text("mine\n")
    paths = {**inputs, "dir": tmp_path / "dir", "sock": tmp_path / "sock",
             "file": tmp_path / "file", "out": tmp_path / "out.csv"}  # fmt: skip
    try:
        proc = cli(*_fill(args, paths))
    finally:
        sock.close()
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        "refusing" in proc.stderr or "not a folder" in proc.stderr or "same path" in (proc.stderr)
    ), proc.stderr
    assert (tmp_path / "file").read_text() == "mine\n"
    assert stat.S_ISSOCK((tmp_path / "sock").lstat().st_mode)
    assert not (tmp_path / "out.csv").exists()


def test_every_writer_is_covered():
    """Every argument of the command line that writes is marked, and each marked writer
    has a case above: a new writer must join the table."""
    from zombiesim.cli import build_parser
    from zombiesim.cli.parser import PATH_ROLE

    parser = build_parser()
    marked = set()

    def walk(p, prefix):
        for action in p._actions:
            if hasattr(action, "choices") and isinstance(action.choices, dict):
                for name, sub in action.choices.items():
                    walk(sub, f"{prefix} {name}".strip())
            role = getattr(action, PATH_ROLE, None)
            if role and role[0] == "output":
                marked.add(f"{prefix} {action.option_strings[0]}")

    walk(parser, "")
    covered = {c[0] for c in SAME_FILE}
    for writer in marked:
        command, flag = writer.rsplit(" ", 1)
        if command in ("validate", "demo", "reproduce", "capture", "trace generate-notified"):
            continue  # no file inputs: the no-file / no-folder cases cover them
        if command == "trace analyze" and flag == "--out":
            continue  # a folder output: the no-folder case covers it
        assert any(c.startswith(f"{command} {flag}") for c in covered), writer


def test_the_api_refuses_too(tmp_path):
    trace = read_only_copy(MSR, tmp_path / "t.csv")
    before = digest(trace)
    with pytest.raises(zs.InputError, match="same file as the input"):
        zs.trace.convert(trace, "msr", trace, "disksim")
    capture = tmp_path / "capture"
    shutil.copytree(PGBENCH, capture)
    with pytest.raises(zs.InputError, match="same file as the input"):
        zs.trace.import_capture(capture, capture / "uptime_start.txt")
    assert digest(trace) == before


def test_a_fifo_and_standard_output_are_still_written():
    _io.refuse_clobbering([("--json", "-", "file"), ("--csv", "/dev/null", "file")], [])
