"""What a new user hits: outputs that must not destroy what is at the path, inputs that must
neither hang nor exhaust memory, runs that did nothing, out-of-range arguments, signals,
tables that never cut a number. Each case is in the table of docs/cli.md ("Bad input")."""

from __future__ import annotations

import json
import os
import signal
import stat
import threading
import time
from pathlib import Path

import pytest
from processes import Background

import zombiesim as zs
from zombiesim import _core

SMALL = ["--set", "flash.blocks_per_plane=64"]
MSR_LINE = "128166372003061629,src1,0,{op},{offset},{size},100\n"


def msr(path: Path, *records: tuple[str, int, int]) -> Path:
    path.write_text("".join(MSR_LINE.format(op=o, offset=a, size=s) for o, a, s in records))
    return path


# -- outputs ---------------------------------------------------------------------------------


def test_json_through_a_symlink_updates_the_target_and_keeps_the_link(cli, tmp_path):
    target = tmp_path / "real" / "report.json"
    target.parent.mkdir()
    target.write_text("old")
    os.chmod(target, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    proc = cli("run", *SMALL, "-w", "uniform:drive_writes=0.2", "--json", str(link), "-q")
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["run"]["interrupted"] is False
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # an existing file keeps its mode
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]  # no temp files


def test_json_to_a_character_device_writes_to_it(cli):
    before = os.stat(os.devnull)
    assert stat.S_ISCHR(before.st_mode)
    proc = cli("run", *SMALL, "-w", "uniform:drive_writes=0.2", "--json", os.devnull, "-q")
    assert proc.returncode == 0, proc.stderr
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_outputs_to_a_fifo_are_written_into_it(cli, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    proc = cli("run", *SMALL, "-w", "uniform:drive_writes=0.2", "--json", str(fifo), "-q")
    reader.join(timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert json.loads(got[0])["waf"] > 1


def test_trace_convert_through_a_symlink_and_to_a_device(cli, tmp_path, msr_sample):
    target = tmp_path / "t.trace"
    target.write_text("old")
    link = tmp_path / "link.trace"
    link.symlink_to(target)
    args = ("trace", "convert", str(msr_sample), "--from", "msr", "--to", "disksim", "-q")
    proc = cli(*args, "-o", str(link))
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and target.read_text().count("\n") > 1000
    proc = cli(*args, "-o", os.devnull)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


# -- inputs that hang or exhaust memory -----------------------------------------------------


def test_trace_stats_on_an_absurd_record_is_quick_and_bounded(cli, tmp_path):
    path = msr(tmp_path / "huge.csv", ("Write", 4096, 10**18), ("Read", 0, 4096))
    started = time.monotonic()
    proc = cli("trace", "stats", str(path), "--format", "msr", "--json", "-", timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 20
    st = json.loads(proc.stdout)
    assert st["written_pages"] >= 10**18 // 4096 and st["unique_pages"] == st["written_pages"] + 1
    # `run` rejects the same record with a message naming it (beyond the device).
    proc = cli("run", *SMALL, "--trace", str(path), "--format", "msr")
    assert proc.returncode == 2 and "record 1" in proc.stderr


def test_trace_stats_stops_on_ctrl_c_within_a_second(tmp_path):
    """An endless trace (a FIFO a thread keeps writing records into) cannot be read to
    its end before the signal: the race a fixed sleep would run cannot be lost."""
    fifo = tmp_path / "endless.csv"
    os.mkfifo(fifo)
    block = "".join(
        MSR_LINE.format(op="Write", offset=(i * 7919 % 100_000) * 4096, size=4096)
        for i in range(10_000)
    ).encode()
    stop = threading.Event()

    def feed() -> None:
        try:
            with open(fifo, "wb") as f:  # blocks until the reader opens it
                while not stop.is_set():
                    f.write(block)
        except (BrokenPipeError, ValueError, OSError):
            pass  # the reader went away

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    bg = Background("trace", "stats", str(fifo), "--format", "msr", marker=tmp_path / "started")
    try:
        bg.wait_started()
        sent = bg.send(signal.SIGINT)
        _, err = bg.communicate(timeout=10)
        assert time.monotonic() - sent < 1.0
        assert bg.returncode == 130 and "interrupted" in err
    finally:
        stop.set()
        if bg.returncode is None:
            bg.proc.kill()
            bg.proc.communicate()
        writer.join(timeout=10)


def test_a_device_too_large_for_the_memory_limit_is_refused_before_allocating(cli):
    proc = cli(
        "run", "--set", "flash.blocks_per_plane=1000000", "-w", "uniform", "--max-memory", "1GiB"
    )
    assert proc.returncode == 2
    assert "flash.blocks_per_plane" in proc.stderr and "GiB" in proc.stderr
    total, parts = _core.memory_estimate(
        zs.Config.preset("default").override({"flash.blocks_per_plane": 1_000_000}).core
    )
    assert total > 2**30 and parts[0][1] == "flash.blocks_per_plane"
    with pytest.raises(zs.ConfigError, match="flash.blocks_per_plane"):
        zs.simulate(
            zs.Config.preset("default").override({"flash.blocks_per_plane": 1_000_000}),
            "uniform",
            max_memory="1GiB",
        )


def test_the_memory_estimate_bounds_the_state_the_run_reports(small):
    for cfg in (
        small,
        zs.Config.preset("dead-value-pool").override({"flash.blocks_per_plane": 64}),
        *(small.override({"ftl.kind": k}) for k in ("dftl", "superblock", "fast", "block")),
        small.override({"ftl.kind": "dftl", "ftl.cmt_entries": 4096}),
        zs.Config.preset("ba-gc").scheme(
            "ba-gc",
            {
                "flash.blocks_per_plane": 2048,
                "ftl.log_blocks": 32,
                "ftl.over_provisioning": 0.0184,
                "device.buffer": "4MiB",
            },
        ),
    ):
        total, _ = _core.memory_estimate(cfg.core)
        # Arrival times: the ba-gc preset's 30 s flush needs the device's clock.
        rep = zs.simulate(cfg, "uniform:drive_writes=0.2,iops=100000")
        assert rep.device.state_bytes <= total <= 2 * rep.device.state_bytes + (1 << 20)


@pytest.mark.parametrize(
    "setting",
    [
        "flash.page_size=1TiB",
        "flash.page_size=3000",
        "flash.channels=4294967295",
        "flash.blocks_per_plane=100000000",
    ],
)
def test_sizes_have_sane_bounds(cli, setting):
    proc = cli("run", "--set", setting, "-w", "uniform")
    assert proc.returncode == 2, proc.stderr
    assert "config key `flash." in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("offset", [2**64 - 1, 2**64 - 4096, 2**64 - 8191])
def test_offsets_that_overflow_are_malformed_lines(cli, tmp_path, offset):
    path = msr(tmp_path / "o.csv", ("Write", 0, 4096), ("Write", offset, 8192))
    for args in (
        ("run", *SMALL, "--trace", str(path), "--format", "msr", "--remap", "modulo"),
        ("trace", "stats", str(path), "--format", "msr"),
        ("trace", "convert", str(path), "--from", "msr", "--to", "disksim", "-o", os.devnull),
    ):
        proc = cli(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "o.csv:2:" in proc.stderr and "2^64" in proc.stderr


# -- runs that did nothing ------------------------------------------------------------------


def test_runs_that_write_nothing_say_so(cli, tmp_path, msr_sample):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    cases = [
        (("-w", "uniform:drive_writes=0"), "drive_writes"),
        (("-w", "uniform:requests=0"), "requests"),
        (("--trace", str(empty), "--format", "msr"), "no record"),
        (("--trace", str(msr_sample), "--format", "msr", "--limit", "0"), "limit of 0"),
        (("--trace", str(msr_sample), "--format", "msr", "--trace-device", "9"), "device 9"),
    ]
    for args, reason in cases:
        proc = cli("run", *SMALL, *args)
        assert proc.returncode == 2, (args, proc.stdout)
        assert reason in proc.stderr and "WAF" not in proc.stdout


def test_a_read_only_run_reports_waf_undefined_not_zero(cli, tmp_path):
    path = msr(tmp_path / "reads.csv", *[("Read", i * 4096, 4096) for i in range(50)])
    out = tmp_path / "r.json"
    proc = cli("run", *SMALL, "--trace", str(path), "--format", "msr", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "undefined" in proc.stdout
    rep = json.loads(out.read_text())
    assert rep["waf"] is None and rep["host"]["read_pages"] == 50


# -- arguments ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("--seed", "-1"),
        ("--seed", str(2**64)),
        ("--seed", "1.5"),
        ("-w", "uniform:drive_writes=1e30"),
        ("-w", "uniform:drive_writes=-1"),
        ("-w", "uniform:drive_writes=nan"),
        ("--max-memory", "lots"),
    ],
)
def test_numeric_arguments_are_range_checked(cli, args):
    full = ("run", *SMALL, *args) if "-w" in args else ("run", *SMALL, "-w", "uniform", *args)
    proc = cli(*full)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr


def test_jobs_must_be_at_least_one(cli):
    proc = cli("compare", *SMALL, "--policies", "greedy", "-w", "uniform", "--jobs", "0")
    assert proc.returncode == 2 and "--jobs" in proc.stderr


def test_the_python_api_raises_config_errors_naming_the_key(small):
    with pytest.raises(zs.ConfigError, match="Config.override"):
        small.override("gc.policy=greedy")
    with pytest.raises(zs.ConfigError, match="gc.policy"):
        small.override({"gc.policy": None})
    with pytest.raises(zs.ConfigError, match="gc.policy"):
        small.override({"gc.policy": object()})
    with pytest.raises(zs.ConfigError, match="pairs"):
        small.override([("gc.policy",)])
    for seed in (-1, 2**64, 1.5, "1"):
        with pytest.raises(zs.ConfigError, match="seed"):
            zs.simulate(small, "uniform", seed=seed)
    with pytest.raises(zs.ConfigError, match="jobs"):
        zs.compare(small, policies=["greedy"], workload="uniform", jobs=0)


def test_sigterm_writes_a_partial_report_and_exits_143(tmp_path):
    out = tmp_path / "partial.json"
    bg = Background(
        "run", "-w", "uniform:drive_writes=500", "--json", str(out), "-q",
        marker=tmp_path / "started",
    )  # fmt: skip
    bg.wait_started()
    sent = bg.send(signal.SIGTERM)
    _, err = bg.communicate(timeout=20)
    assert time.monotonic() - sent < 2
    assert bg.returncode == 143 and "terminated" in err
    report = json.loads(out.read_text())
    assert report["run"]["interrupted"] is True and 0 <= report["run"]["progress"] < 1


# -- presentation ---------------------------------------------------------------------------


def test_tables_never_cut_numbers(cli):
    args = (
        "compare",
        "--set",
        "flash.blocks_per_plane=64",
        "--set",
        "timing.enabled=true",
        "--policies",
        "greedy,fifo,cost-benefit,random",
        "-w",
        "uniform:drive_writes=0.3,read=0.3",
    )
    narrow = cli(*args, columns="80")
    assert narrow.returncode == 0, narrow.stderr
    assert "…" not in narrow.stdout
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80
    piped = cli(*args, columns=None)
    assert piped.returncode == 0, piped.stderr
    assert "…" not in piped.stdout
    header = next(line for line in piped.stdout.splitlines() if "label" in line)
    assert "write p99 µs" in header  # not a terminal: the full table, one row per run


def test_help_and_choices_say_what_happens(cli, tmp_path, msr_sample):
    proc = cli("demo", "--help")
    assert "zombie-chasing" in proc.stdout and "default preset" not in proc.stdout
    proc = cli("trace", "convert", str(msr_sample), "--from", "msr", "--to", "fiu")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
    proc = cli("trace", "analyze", "--values", str(msr_sample))
    assert proc.returncode == 2 and "MSR" in proc.stderr
    assert "zombiesim-demo" in (Path(__file__).parents[1] / ".gitignore").read_text()


# -- figures that are wrong -----------------------------------------------------------------


def test_effective_over_provisioning_is_absent_until_the_device_fills(small):
    no_fill = small.override({"precondition.fill": False, "precondition.random_drive_writes": 0})
    partial = zs.simulate(no_fill, "uniform:drive_writes=0.3")
    assert partial.device.effective_over_provisioning is None
    # A run that writes the whole space several times fills it and has the figure.
    full = zs.simulate(no_fill, "sequential:drive_writes=3")
    eff = full.device.effective_over_provisioning
    op = small.get("ftl.over_provisioning")
    assert eff is not None and 0 < eff <= op
    filled = zs.simulate(small, "uniform:drive_writes=0.3")
    assert 0 < filled.device.effective_over_provisioning <= op
