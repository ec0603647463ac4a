"""Sweeps: grid files, resumable runs, engines, the results folder and bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from processes import default_signals, wait_for

import zombiesim as zs
from zombiesim import sweeps

ZOMBIESIM = str(Path(sys.executable).parent / "zombiesim")

#: 3 policies x 2 OP ratios x 2 seeds on 256 MiB: tiny cells (~20 ms each).
SMALL = """\
title = "small"
preset = "default"
workload = "uniform:drive_writes=0.5"
metrics = ["waf", "flash.erases"]

[set]
"flash.blocks_per_plane" = 64
"precondition.random_drive_writes" = 0.5

[axes]
"gc.policy" = ["greedy", "cost-benefit", "fifo"]
"ftl.over_provisioning" = [0.07, 0.14]
seed = [1, 2]
"""

#: 2 axes, 24 cells of about half a second each (1 GiB): long enough to interrupt.
SLOW = """\
title = "slow"
preset = "default"
workload = "uniform:drive_writes=10"

[set]
"precondition.random_drive_writes" = 0.5
"precondition.steady_tolerance" = 0

[axes]
"gc.policy" = ["greedy", "cost-benefit", "fifo", "d-choices:4"]
"ftl.over_provisioning" = [0.07, 0.1, 0.14, 0.2, 0.25, 0.28]
"""


def write(tmp_path: Path, text: str, name: str = "grid.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([ZOMBIESIM, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def reports(folder: Path) -> dict[str, str]:
    """Each finished cell's report, as canonical JSON, by key."""
    out = {}
    for path in sorted((folder / "cells").glob("*.json")):
        record = json.loads(path.read_text())
        out[record["key"]] = json.dumps(record["report"], sort_keys=True)
    return out


# -- grid files --------------------------------------------------------------------------------


def test_grid_expands_in_axis_order_with_skips(tmp_path):
    text = SMALL + '\n[[skip]]\n"gc.policy" = "fifo"\nseed = 2\nreason = "not needed"\n'
    grid = sweeps.load_grid(write(tmp_path, text))
    assert grid.axes == ["gc.policy", "ftl.over_provisioning", "seed"]
    assert len(grid.cells) == 10 and len(grid.skipped) == 2
    assert grid.skipped[0].reason == "not needed"
    first = grid.cells[0]
    assert first.axes == {"gc.policy": "greedy", "ftl.over_provisioning": 0.07, "seed": 1}
    assert first.config.get("gc.policy") == "greedy"
    assert first.config.get("flash.blocks_per_plane") == 64  # [set] applies to every cell
    assert first.seed == 1 and grid.cells[1].seed == 2  # the last axis varies fastest
    assert first.label == "gc.policy=greedy · ftl.over_provisioning=0.07 · seed=1"


def test_scheme_axis_applies_the_schemes(tmp_path):
    text = 'preset = "zombie-chasing"\nworkload = "uniform"\n[axes]\nscheme = ["gc-gd", "zgc-gd"]\n'
    grid = sweeps.load_grid(write(tmp_path, text))
    assert [c.config.get("gc.policy") for c in grid.cells] == [
        zs.Config.preset("zombie-chasing").scheme(s).get("gc.policy") for s in ("gc-gd", "zgc-gd")
    ]


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (SMALL.replace('"gc.policy" = [', '"gc.polcy" = ['), "grid.toml:11", "gc.polcy"),
        (SMALL.replace("seed = [1, 2]", 'scheme = ["gc-gd", "nope"]'), "grid.toml:13", "nope"),
        (SMALL.replace("seed = [1, 2]", "seed = []"), "grid.toml:13", "empty"),
        (SMALL.replace('title = "small"', 'titel = "small"'), "grid.toml:1", "titel"),
        (SMALL + '[[skip]]\n"gc.polcy" = "fifo"\n', "grid.toml:15", "not an axis"),
        (SMALL.replace('"flash.blocks_per_plane"', '"flash.blocks_per_plan"'), "grid.toml:7", ""),
        (SMALL.replace("uniform:drive_writes=0.5", "unifrm"), "grid.toml:3", "unifrm"),
    ],
)
def test_bad_grids_name_the_line(tmp_path, text, where, words):
    with pytest.raises(zs.ZombiesimError) as err:
        sweeps.load_grid(write(tmp_path, text))
    assert where in str(err.value) and words in str(err.value)
    assert err.value.exit_code == 2


def test_bad_grid_exits_2_from_the_cli(tmp_path):
    grid = write(tmp_path, SMALL.replace("seed = [1, 2]", "seed = []"))
    done = cli("sweep", str(grid), "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert "grid.toml:13" in done.stderr and "empty" in done.stderr
    assert not (tmp_path / "r").exists()


def test_an_invalid_cell_is_named_or_skipped(tmp_path):
    text = SMALL.replace('"flash.blocks_per_plane" = 64', '"flash.blocks_per_plane" = 32')
    with pytest.raises(
        zs.ConfigError, match=r"the cell gc.policy=greedy · ftl.over_provisioning=0.07"
    ):
        sweeps.load_grid(write(tmp_path, text))
    grid = sweeps.load_grid(write(tmp_path, "skip_invalid = true\n" + text))
    assert len(grid.cells) == 6 and len(grid.skipped) == 6
    assert all(s.reason.startswith("invalid:") for s in grid.skipped)


# -- running -----------------------------------------------------------------------------------


def test_sweep_runs_every_cell_and_resumes_from_the_folder(tmp_path):
    out = tmp_path / "results"
    df = zs.sweep(write(tmp_path, SMALL), out=out, jobs=2)
    assert len(df) == 12 and (df["status"] == "ok").all()
    assert {"cell", "axis.gc.policy", "axis.seed", "waf", "series.waf_cumulative"} <= set(
        df.columns
    )
    # Each cell equals a plain run of its configuration.
    grid = sweeps.load_grid(write(tmp_path, SMALL))
    cell = grid.cells[5]
    alone = zs.simulate(cell.config, cell.source, seed=cell.seed, reproducible=True)
    assert df.loc[5, "waf"] == alone.waf
    record = json.loads((out / "cells" / f"{df.loc[5, 'cell']}.json").read_text())
    assert record["report"] == json.loads(alone.to_json())  # the whole report, not just WAF
    for name in ("results.parquet", "results.csv", "sweep.json"):
        assert (out / name).exists()
    loaded = zs.load(out)
    assert loaded["waf"].tolist() == df["waf"].tolist()
    assert loaded.loc[0, "series.waf_cumulative"] == df.loc[0, "series.waf_cumulative"]
    # Again: every cell is read, none runs.
    again = sweeps.run_grid(grid, out, jobs=2, report=False)
    assert (again.counts.done, again.counts.cached) == (0, 12)


def test_a_grown_grid_runs_only_its_new_cells(tmp_path):
    out = tmp_path / "r"
    zs.sweep(write(tmp_path, SMALL), out=out, jobs=2, report=False)
    grown = SMALL.replace('"fifo"]', '"fifo", "d-choices:4"]')
    result = sweeps.run_grid(sweeps.load_grid(write(tmp_path, grown)), out, jobs=2, report=False)
    assert (result.counts.done, result.counts.cached) == (4, 12)
    df = result.frame
    assert len(df) == 16 and df["axis.gc.policy"].tolist()[-4:] == ["d-choices:4"] * 4
    assert df["label"].tolist()[:2] == ["greedy · 0.07 · 1", "greedy · 0.07 · 2"]


def test_progress_counts_every_cell_and_the_cli_is_quiet_off_a_terminal(tmp_path):
    seen = []
    grid = write(tmp_path, SMALL)
    zs.sweep(
        grid,
        out=tmp_path / "r",
        jobs=2,
        report=False,
        progress=lambda c, eta: seen.append((c.done, c.cached, c.failed, c.running, c.total)),
    )
    assert seen[-1] == (12, 0, 0, 0, 12)
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)  # done only grows
    done = cli("sweep", str(grid), "--out", str(tmp_path / "r"), "--no-report")
    assert done.returncode == 0 and done.stderr == ""  # no bar when stderr is not a terminal
    assert "0 run, 12 cached, 0 failed of 12 cells" in done.stdout


def test_a_failed_cell_is_recorded_and_the_others_run(tmp_path):
    good = tmp_path / "good.csv"
    bad = tmp_path / "bad.csv"
    good.write_text("".join(f"{i * 1000},h,0,Write,{i * 4096},4096,10\n" for i in range(200)))
    bad.write_text(good.read_text() + "this is not a trace line\n")
    text = (
        'preset = "default"\n[set]\n"flash.blocks_per_plane" = 64\n'
        "[axes]\n"
        'trace = [{path = "good.csv", format = "msr"}, {path = "bad.csv", format = "msr"}]\n'
        '"gc.policy" = ["greedy", "fifo"]\n'
    )
    grid = write(tmp_path, text)
    done = cli("sweep", str(grid), "--out", str(tmp_path / "r"), "--no-report")
    assert done.returncode == 1, done.stderr
    assert "bad.csv:201" in done.stderr
    df = zs.load(tmp_path / "r")
    assert df["status"].tolist() == ["ok", "ok", "failed", "failed"]
    failed = json.loads(next((tmp_path / "r" / "failed").glob("*.json")).read_text())
    assert "bad.csv:201" in failed["error"] and "[gc]" in failed["config"]


def test_interrupted_sweep_resumes_without_recomputing(tmp_path):
    """SIGINT mid-sweep keeps the finished cells, exits 130 and writes the table; the
    next run computes exactly the rest, and leaves the kept cells untouched."""
    grid = write(tmp_path, SLOW)
    out = tmp_path / "results"
    proc = subprocess.Popen(
        [ZOMBIESIM, "sweep", str(grid), "--out", str(out), "--jobs", "2", "--no-report"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # The test runner may ignore SIGINT (a background job): give the child the default.
        preexec_fn=default_signals,
    )
    wait_for(lambda: len(list((out / "cells").glob("*.json"))) >= 4, proc=proc, what="4 cells")
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "run the same command again to resume" in stderr
    kept = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    assert 4 <= len(kept) < 24
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["status"] == "interrupted"
    assert len(zs.load(out)) == len(kept)
    assert not list(out.rglob(".*.tmp*"))  # no half-written file

    done = cli("sweep", str(grid), "--out", str(out), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    assert f"{24 - len(kept)} run, {len(kept)} cached, 0 failed of 24 cells" in done.stdout
    assert {
        p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json") if p.name in kept
    } == kept
    assert len(zs.load(out)) == 24
    assert (out / "report.html").exists()
    assert json.loads((out / "sweep.json").read_text())["status"] == "complete"


def test_results_folder_of_another_version_is_refused(tmp_path):
    grid = write(tmp_path, SMALL)
    out = tmp_path / "r"
    zs.sweep(grid, out=out, jobs=1, report=False)
    manifest = json.loads((out / "sweep.json").read_text())
    manifest["zombiesim"] = "0.0.1"
    (out / "sweep.json").write_text(json.dumps(manifest))
    done = cli("sweep", str(grid), "--out", str(out))
    assert done.returncode == 2
    assert str(out) in done.stderr and "zombiesim 0.0.1" in done.stderr


def test_a_folder_that_is_not_a_sweep_is_refused(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "notes.txt").write_text("mine")
    done = cli("sweep", str(write(tmp_path, SMALL)), "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and "not a sweep results folder" in done.stderr


def test_dry_run_lists_cells_with_estimates_and_refuses_big_ones(tmp_path):
    grid = write(tmp_path, SMALL)
    done = cli("sweep", str(grid), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "12 to run" in done.stdout and "KiB" in done.stdout
    frame = sweeps.plan(sweeps.load_grid(grid))
    assert len(frame) == 12 and (frame["est_s"] > 0).all() and (frame["memory_bytes"] > 0).all()
    refused = cli("sweep", str(grid), "--dry-run", "--max-memory", "1KiB")
    assert refused.returncode == 2 and "flash" in refused.stderr.lower()
    assert "--max-memory" in refused.stderr


def test_same_grid_gives_identical_reports(tmp_path):
    grid = write(tmp_path, SMALL)
    zs.sweep(grid, out=tmp_path / "a", jobs=2, report=False)
    zs.sweep(grid, out=tmp_path / "b", jobs=1, report=False)
    assert reports(tmp_path / "a") == reports(tmp_path / "b")


#: One device, four workloads: the local engine's worker ages it once.
WORKLOADS = """\
title = "workloads"
preset = "default"

[set]
"flash.blocks_per_plane" = 64
"precondition.random_drive_writes" = 0.5

[axes]
workload = ["uniform:drive_writes=0.3", "hotcold:r=0.8,f=0.2,drive_writes=0.3",
            "zipf:theta=0.9,drive_writes=0.3", "sequential:drive_writes=0.3"]
"""


def test_cells_on_one_device_share_its_preconditioning_and_change_no_report(tmp_path):
    """A worker keeps the devices it preconditioned for its next cells
    (`_core.PreconditionCache`): every cell's report equals the plain run's."""
    from zombiesim import _core
    from zombiesim.sweeps import cells

    path = write(tmp_path, WORKLOADS)
    grid = sweeps.load_grid(path)
    zs.sweep(path, out=tmp_path / "out", jobs=1, report=False)
    for cell in grid.cells:
        alone = zs.simulate(cell.config, cell.source, seed=cell.seed, reproducible=True)
        record = tmp_path / "out" / "cells" / f"{cells.cell_key(cell, False)}.json"
        assert json.loads(record.read_text())["report"] == json.loads(alone.to_json())
    warm = _core.PreconditionCache(1 << 30)
    for i, cell in enumerate(grid.cells):
        assert cells.run_cell(cells.task_for(cell, f"k{i}", False), None, warm)["status"] == "ok"
    assert warm.stats()["hits"] == len(grid.cells) - 1


# -- engines -----------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["ray", "dask"])
def test_engines_match_local(tmp_path, engine):
    module = {"ray": "ray", "dask": "distributed"}[engine]
    pytest.importorskip(
        module, reason=f"the {engine} extra is not installed (pip install 'zombiesim[{engine}]')"
    )
    grid = write(tmp_path, SMALL)
    zs.sweep(grid, out=tmp_path / "local", jobs=2, report=False)
    zs.sweep(grid, out=tmp_path / engine, engine=engine, jobs=2, report=False)
    assert reports(tmp_path / engine) == reports(tmp_path / "local")
    assert len(reports(tmp_path / "local")) == 12


def test_unknown_engine_and_misplaced_addresses(tmp_path):
    grid = write(tmp_path, SMALL)
    done = cli("sweep", str(grid), "--out", str(tmp_path / "r"), "--scheduler", "tcp://x:1")
    assert done.returncode == 2 and "--scheduler is for --engine dask" in done.stderr
    with pytest.raises(zs.ConfigError, match="unknown engine"):
        sweeps.make_engine("spark")


def test_report_command_writes_the_page(tmp_path):
    grid = write(tmp_path, SMALL)
    zs.sweep(grid, out=tmp_path / "r", jobs=2, report=False)
    done = cli("report", str(tmp_path / "r"), "--out", str(tmp_path / "page.html"))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "page.html").read_text()
    assert "<svg" in page and "gc.policy" in page
    missing = cli("report", str(tmp_path))
    assert missing.returncode == 2 and "not a sweep results folder" in missing.stderr


def test_environment_is_clean():
    # Workers of the local engine start clean: nothing here leaks into later tests.
    assert os.environ.get("ZOMBIESIM_SWEEP_WORKER") is None


class _Inline(sweeps.Engine):
    """Runs each cell when submitted, in this process, and records the order."""

    name = "inline"

    def __init__(self):
        self.order: list[str] = []
        self.outcomes: dict[int, dict] = {}

    @property
    def workers(self) -> int:
        return 1

    def submit(self, task):
        from zombiesim.sweeps.cells import run_cell

        self.order.append(task.config_toml)
        self.outcomes[len(self.order)] = run_cell(task)
        return len(self.order)

    def wait(self, handles, timeout):
        return set(handles)

    def outcome(self, handle):
        return self.outcomes[handle]

    def stop(self, handles):
        pass

    def close(self):
        pass


def test_several_grids_share_one_engine_the_first_cells_first(tmp_path):
    """`run_grids`: each grid into its own folder, one engine for all, the cells `first`
    picks submitted before the rest (whatever their grid), each grid reported done once."""
    from zombiesim.sweeps.runner import run_grids

    def grid(title: str, policies: list[str]):
        text = SMALL.replace('title = "small"', f'title = "{title}"')
        text = text.replace('["greedy", "cost-benefit", "fifo"]', str(policies))
        text = text.replace("seed = [1, 2]", "seed = [1]")
        return sweeps.load_grid(text.replace("[0.07, 0.14]", "[0.07]"))

    a, b = grid("a", ["greedy", "fifo"]), grid("b", ["greedy", "cost-benefit"])
    engine = _Inline()
    done: list[int] = []
    outcomes = run_grids(
        [(a, tmp_path / "a"), (b, tmp_path / "b")],
        engine=engine,
        report=False,
        first=lambda cell: cell.config.get("gc.policy") == "cost-benefit",
        on_grid_done=done.append,
    )
    assert [len(o.frame) for o in outcomes] == [2, 2]
    assert all((o.frame["status"] == "ok").all() for o in outcomes)
    assert 'policy = "cost-benefit"' in engine.order[0] and len(engine.order) == 4
    assert sorted(done) == [0, 1]
    # Each folder is a sweep of its own: loaded alone, resumed alone.
    assert list(sweeps.load(tmp_path / "b")["axis.gc.policy"]) == ["greedy", "cost-benefit"]
    again = run_grids([(a, tmp_path / "a")], engine=engine, report=False)
    assert again[0].counts.cached == 2 and len(engine.order) == 4
