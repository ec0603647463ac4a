"""Placement policies from the CLI and Python (`ftl.placement`, docs/ftl.md#placement):
the default keeps the report as it was, `gc-age:K` runs verified and separates GC copies
by age, and settings a policy cannot work with are refused naming the key."""

from __future__ import annotations

import json
import subprocess
import sys

import zombiesim as zs

#: One GC unit of four planes with room for three GC streams' open blocks.
SETS = {
    "flash.blocks_per_plane": 128,
    "gc.low_watermark": 14,
    "gc.high_watermark": 16,
    "ftl.over_provisioning": 0.15,
    "precondition.random_drive_writes": 0,
}
#: 90% of the writes to 10% of the pages: cold pages survive GC again and again.
HOTCOLD = "hotcold:drive_writes=3"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "zombiesim", *args], capture_output=True, text=True, check=False
    )


def run(placement: str, tmp_path) -> dict:
    out = tmp_path / f"{placement.replace(':', '-')}.json"
    sets = [
        a for k, v in {**SETS, "ftl.placement": placement}.items() for a in ("--set", f"{k}={v}")
    ]
    done = cli("run", "--quiet", "--verify", *sets, "-w", HOTCOLD, "--json", str(out))
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def test_gc_age_runs_from_the_cli_and_separates_gc_copies_by_age(tmp_path):
    dac = run("dac", tmp_path)
    aged = run("gc-age:3", tmp_path)
    assert dac["run"]["config"]["ftl"]["placement"] == "dac"
    assert aged["run"]["config"]["ftl"]["placement"] == "gc-age:3"
    assert dac["run"]["verified"] and aged["run"]["verified"]
    # Same host writes, a different placement of the copies: a different GC cost.
    assert aged["host"]["write_pages"] == dac["host"]["write_pages"]
    assert aged["waf"] != dac["waf"]


def test_the_python_api_takes_the_key():
    cfg = zs.Config.preset("default").override({**SETS, "ftl.placement": "gc-age:2"})
    rep = zs.simulate(cfg, "uniform:drive_writes=0.5", verify=True)
    assert rep.run.verified


def test_settings_a_placement_cannot_work_with_exit_2_naming_the_key():
    for extra, key in [
        (["--set", "ftl.regions=2"], "ftl.regions"),
        (["--set", "ftl.gc_frontier=shared"], "ftl.gc_frontier"),
        (["--set", "gc.low_watermark=3", "--set", "gc.high_watermark=3"], "gc.low_watermark"),
        (["--set", "ftl.kind=fast"], "ftl.placement"),
    ]:
        done = cli(
            "run", "--set", "ftl.placement=gc-age:3", *extra, "-w", "uniform:drive_writes=0.1"
        )
        assert done.returncode == 2, (extra, done.stderr)
        assert key in done.stderr, (extra, done.stderr)
    done = cli("run", "--set", "ftl.placement=bogus", "-w", "uniform:drive_writes=0.1")
    assert done.returncode == 2 and "unknown placement `bogus`" in done.stderr, done.stderr


def test_the_placement_baselines_run_from_the_cli_verified(tmp_path):
    # Blocks of 64 pages: room for the oracle's twelve streams' open blocks.
    sets = {
        **SETS,
        "flash.blocks_per_plane": 512,
        "flash.pages_per_block": 64,
        "gc.low_watermark": 22,
        "gc.high_watermark": 22,
    }
    wafs = {}
    models = {}
    for placement in ("dac", "sepbit", "write-count:4", "midas:4", "oracle:6"):
        out = tmp_path / f"{placement.replace(':', '-')}.json"
        args = [
            a
            for k, v in {**sets, "ftl.placement": placement}.items()
            for a in ("--set", f"{k}={v}")
        ]
        done = cli("run", "--quiet", "--verify", *args, "-w", HOTCOLD, "--json", str(out))
        assert done.returncode == 0, (placement, done.stderr)
        rep = json.loads(out.read_text())
        assert rep["run"]["verified"]
        wafs[placement] = rep["waf"]
        models[placement] = rep.get("placement_model")
        # Per stream over the measured phase: every host page and every GC copy once.
        streams = rep.get("streams")
        if placement == "dac":
            assert streams is None
        else:
            assert sum(x["host_pages"] for x in streams) == rep["host"]["write_pages"]
            assert sum(x["gc_pages"] for x in streams) == rep["gc"]["pages_copied"], streams
            assert all(0.0 <= (x["valid_share_at_reclaim"] or 0.0) <= 1.0 for x in streams)
    # Knowing when each page dies beats every guess; the guesses beat one stream here.
    guesses = ("sepbit", "write-count:4", "midas:4")
    assert wafs["oracle:6"] < min(wafs[g] for g in guesses), wafs
    assert all(wafs[g] < wafs["dac"] for g in guesses), wafs
    # Only MiDAS fits a model, and says what it fitted: its FIFO groups.
    assert models["midas:4"]["sizes"] and models["midas:4"]["modelled"] > 0, models
    assert all(models[p] is None for p in models if p != "midas:4"), models


def test_the_placement_oracle_runs_only_at_the_device_level():
    done = cli(
        "run",
        "--set",
        "ftl.placement=oracle:4",
        "--set",
        "gc.low_watermark=14",
        "--set",
        "gc.high_watermark=14",
        "--set",
        "timing.enabled=true",
        "-w",
        "fs:postmark,vms=1",
    )
    assert done.returncode == 2 and "ftl.placement" in done.stderr, done.stderr
    done = cli("run", "--set", "ftl.placement=oracle:1", "-w", "uniform:drive_writes=0.1")
    assert done.returncode == 2 and "at least 2" in done.stderr, done.stderr
