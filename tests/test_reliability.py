"""Reliability: interrupted and killed commands, determinism across every way of running,
and inputs too large for the device or the machine (docs/reliability.md)."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import Background, default_signals, endless_run, wait_for

import zombiesim as zs

ZOMBIESIM = str(Path(sys.executable).parent / "zombiesim")
SMALL = ("--set", "flash.blocks_per_plane=64")


def start(*args: str) -> subprocess.Popen:
    """A `zombiesim` command in the background, with the default signal handlers (the
    test runner may run as a background job, whose children ignore SIGINT)."""
    return subprocess.Popen(
        [ZOMBIESIM, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def canonical(report: dict) -> str:
    return sha(json.dumps(report, sort_keys=True))


# -- interrupted and killed --------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_compare_writes_partial_reports(tmp_path, sig):
    out = tmp_path / "runs.json"
    page = tmp_path / "runs.html"
    bg = Background(
        "compare", *SMALL, "--policies", "greedy,fifo", "-w", "uniform:drive_writes=100000",
        "--json", str(out), "--report", str(page), "--jobs", "2",
        marker=tmp_path / "started",
    )  # fmt: skip
    bg.wait_started()
    bg.send(sig)
    _, err = bg.communicate(timeout=60)
    assert bg.returncode == (130 if sig == signal.SIGINT else 143), err
    # Every run that had begun is written, marked interrupted; the signal may come before
    # the second run has begun (the first announces the start at once), and a run that had
    # not begun is skipped, as documented.
    reports = json.loads(out.read_text())
    assert reports and set(reports) <= {"greedy", "fifo"}
    for rep in reports.values():
        assert rep["run"]["interrupted"] is True and 0 <= rep["run"]["progress"] < 1
    assert page.read_text().rstrip().endswith("</html>")


def test_interrupted_reproduce_writes_what_ran(tmp_path):
    out = tmp_path / "rep"
    bg = Background(
        "reproduce", "zombie-chasing", "--out", str(out), "--quiet", "--jobs", "2",
        marker=tmp_path / "started",
    )  # fmt: skip
    bg.wait_started()  # its first run is under way: the reproduction has minutes to go
    bg.send(signal.SIGINT)
    _, err = bg.communicate(timeout=120)
    assert bg.returncode == 130, err
    assert "claims not evaluated" in err
    partial = json.loads((out / "partial.json").read_text())
    assert partial["interrupted"] is True and partial["claims"] is None
    assert partial["runs_started"] == len(partial["reports"])
    finished = [r for r in partial["reports"].values() if not r["run"]["interrupted"]]
    assert partial["runs_finished"] == len(finished)
    assert (out / "report.html").read_text().rstrip().endswith("</html>")
    assert not (out / "claims.csv").exists()


def test_a_killed_sweep_leaves_only_whole_files_and_resumes(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'preset = "default"\nworkload = "uniform:drive_writes=6"\n'
        '[set]\n"precondition.random_drive_writes" = 0.5\n'
        '[axes]\n"gc.policy" = ["greedy", "fifo", "cost-benefit"]\n'
        '"ftl.over_provisioning" = [0.07, 0.1, 0.14, 0.2]\n'
    )
    out = tmp_path / "r"
    proc = start("sweep", str(grid), "--out", str(out), "--jobs", "2")
    wait_for(lambda: len(list((out / "cells").glob("*.json"))) >= 2)
    proc.kill()  # SIGKILL: no handler runs
    proc.communicate(timeout=30)
    # Workers notice their parent is gone and exit; whatever they were writing is
    # either a whole file or a hidden temp file, never a truncated result.
    for path in out.rglob("*.json"):
        json.loads(path.read_text())
    assert json.loads((out / "sweep.json").read_text())["status"] == "running"
    kept = len(list((out / "cells").glob("*.json")))
    done = subprocess.run(
        [ZOMBIESIM, "sweep", str(grid), "--out", str(out), "--jobs", "2"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"{12 - kept} run, {kept} cached" in done.stdout
    assert not list(out.rglob(".*.tmp*"))  # the resumed sweep swept away stale temp files
    assert len(zs.load(out)) == 12


def test_a_killed_run_never_leaves_a_truncated_report(tmp_path):
    out = tmp_path / "rep.json"
    out.write_text('{"old": true}\n')
    bg = endless_run(tmp_path, "--json", str(out))
    bg.wait_started()
    bg.send(signal.SIGKILL)
    bg.communicate(timeout=30)
    assert json.loads(out.read_text()) == {"old": True}  # the old file, whole


# -- determinism -------------------------------------------------------------------------------


def test_every_way_of_running_gives_the_same_report(tmp_path, small):
    """The CLI, the Python API and a sweep cell give byte-identical reports for the same
    configuration, workload and seed; two runs of each give the same bytes again."""
    workload = "hotcold:r=0.9,f=0.1,drive_writes=1,read=0.2"
    cfg = small.override({"timing.enabled": True, "gc.policy": "cost-benefit"})
    api = zs.simulate(cfg, workload, seed=7, reproducible=True).to_json()
    assert zs.simulate(cfg, workload, seed=7, reproducible=True).to_json() == api

    config = tmp_path / "c.toml"
    config.write_text(cfg.to_toml())
    texts = []
    for name in ("a.json", "b.json"):
        done = subprocess.run(
            [ZOMBIESIM, "run", "--config", str(config), "-w", workload, "--seed", "7",
             "--reproducible", "--json", str(tmp_path / name), "-q"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        texts.append((tmp_path / name).read_text())
    assert sha(texts[0]) == sha(texts[1]) == sha(api if api.endswith("\n") else api + "\n")

    grid = {"config": str(config), "workload": workload, "axes": {"seed": [7]}}
    df = zs.sweep(grid, out=tmp_path / "sweep", jobs=1)
    record = json.loads((tmp_path / "sweep" / "cells" / f"{df.loc[0, 'cell']}.json").read_text())
    assert canonical(record["report"]) == canonical(json.loads(api))


# -- inputs too large --------------------------------------------------------------------------


def peak_rss_kib(cmd: list[str]) -> int:
    """The peak resident memory of one command (its own, measured by the kernel)."""
    script = (
        "import resource, subprocess, sys; "
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *cmd], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def test_a_trace_streams_in_memory_independent_of_its_length(tmp_path):
    """1 M and 4 M records of a generated trace: the longer one needs no more memory
    (the 100 M-record figure is in docs/reliability.md)."""
    peaks = {}
    for records in (1_000_000, 4_000_000):
        path = tmp_path / f"t{records}.zst"
        zs.trace.generate_notified(path, pages=100_000, records=records, delay=1000, seed=3)
        peaks[records] = peak_rss_kib(
            [ZOMBIESIM, "run", *SMALL, "--trace", str(path), "--format", "native",
             "--remap", "modulo", "-q"]
        )  # fmt: skip
    assert peaks[4_000_000] < peaks[1_000_000] * 1.10, peaks


def test_a_trace_beyond_the_device_is_refused_or_remapped(tmp_path):
    path = tmp_path / "far.csv"
    path.write_text("128166372000000000,h,0,Write,1099511627776,4096,100\n")  # at 1 TiB
    refused = subprocess.run(
        [ZOMBIESIM, "run", *SMALL, "--trace", str(path), "--format", "msr"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "beyond the device" in refused.stderr and "remap=modulo" in refused.stderr
    remapped = subprocess.run(
        [ZOMBIESIM, "run", *SMALL, "--trace", str(path), "--format", "msr", "--remap", "modulo"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert remapped.returncode == 0, remapped.stderr


def test_a_state_too_large_for_memory_is_refused_before_it_allocates(tmp_path):
    started = time.monotonic()
    done = subprocess.run(
        [ZOMBIESIM, "run", "--set", "flash.blocks_per_plane=4000000", "-w", "uniform",
         "--max-memory", "8GiB"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and time.monotonic() - started < 20
    assert "flash.blocks_per_plane" in done.stderr and "needs about 31" in done.stderr
    # The same check guards every cell of a sweep, before any cell runs.
    grid = tmp_path / "g.toml"
    grid.write_text(
        'preset = "default"\nworkload = "uniform"\n[axes]\n'
        '"flash.blocks_per_plane" = [64, 4000000]\n'
    )
    done = subprocess.run(
        [ZOMBIESIM, "sweep", str(grid), "--out", str(tmp_path / "r"), "--max-memory", "8GiB"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "flash.blocks_per_plane" in done.stderr
    assert not list((tmp_path / "r" / "cells").glob("*.json"))


def test_ctrl_c_while_runs_are_being_submitted_stops_the_started_ones():
    """A compare's first run reports progress at once, so Ctrl-C may come while the
    others are still being submitted: the runs already started must be told to stop,
    or the pool would wait for them to simulate to the end."""
    import threading

    from zombiesim.api import _run_pool

    stop = threading.Event()
    started = threading.Event()

    def first() -> str:
        started.set()
        if not stop.wait(timeout=30):  # a simulation that ends only when told to
            return "ran to the end"
        return "stopped"

    class Interrupting(dict):
        def items(self):
            yield "first", first
            started.wait(timeout=30)
            raise KeyboardInterrupt  # Ctrl-C while submitting the second run

    results, failure, interrupted = _run_pool(Interrupting(), 2, stop)
    assert interrupted and failure is None
    assert results == {"first": "stopped"}


def test_ctrl_c_inside_submit_loses_no_started_run(monkeypatch):
    """Under load the first run can report progress (and so be signalled) before the
    main thread has returned from submitting it: the `KeyboardInterrupt` then lands
    inside `submit`, before the run's future is known to the pool's caller. The run
    must still be stopped, waited for and returned (a compare once wrote no partial
    report in this case)."""
    import concurrent.futures as cf
    import threading

    from zombiesim.api import _run_pool

    stop = threading.Event()
    started = threading.Event()
    real_submit = cf.ThreadPoolExecutor.submit

    def first() -> str:
        started.set()
        return "stopped" if stop.wait(timeout=30) else "ran to the end"

    def submit_then_interrupt(pool, fn, /, *args, **kwargs):
        real_submit(pool, fn, *args, **kwargs)  # queued: a thread may run it at once
        started.wait(timeout=30)
        raise KeyboardInterrupt  # the signal's handler runs before submit returns

    monkeypatch.setattr(cf.ThreadPoolExecutor, "submit", submit_then_interrupt)
    results, failure, interrupted = _run_pool({"first": first, "second": first}, 2, stop)
    assert interrupted and failure is None
    assert results == {"first": "stopped"}
