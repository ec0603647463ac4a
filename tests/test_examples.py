"""The files in `examples/` (the README's and the docs' sweeps, configuration and API
example) each run as documented; the grid docs/sweeps.md shows is the file itself."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
#: Every example and the test that runs it.
COVERED = {
    "README.md",
    "grid.toml",
    "traces-grid.toml",
    "small-device.toml",
    "replay.py",
    "victim_policy.py",
    "broken.csv",
}


def test_every_example_is_run_here():
    assert {p.name for p in EXAMPLES.iterdir()} == COVERED
    readme = (EXAMPLES / "README.md").read_text()
    for name in COVERED - {"README.md"}:
        assert f"`{name}`" in readme, name


def _sweep(cli, grid: str, out: Path) -> pd.DataFrame:
    proc = cli(
        "sweep", str(EXAMPLES / grid), "--out", str(out), "-q", "--jobs", "2", cwd=ROOT, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (out / "report.html").is_file()
    return pd.read_csv(out / "results.csv")


def test_the_grid_runs(cli, tmp_path):
    df = _sweep(cli, "grid.toml", tmp_path / "results")
    # 3 policies x 3 OPs x 3 seeds, less FIFO at the two larger OPs.
    assert len(df) == 21 and set(df["status"]) == {"ok"}
    assert set(df["axis.gc.policy"]) == {"greedy", "cost-benefit", "fifo"}
    # More over-provisioning, less write amplification, for every policy.
    greedy = df[df["axis.gc.policy"] == "greedy"].groupby("axis.ftl.over_provisioning")["waf"]
    assert greedy.mean().is_monotonic_decreasing


def test_the_trace_grid_runs(cli, tmp_path):
    df = _sweep(cli, "traces-grid.toml", tmp_path / "results")
    assert len(df) == 6 and set(df["status"]) == {"ok"}
    assert (df["trace.records"] == 10_001).all() and (df["waf"] > 1).all()


def test_the_config_file_runs(cli, tmp_path):
    out = tmp_path / "r.json"
    proc = cli(
        "run", "--config", str(EXAMPLES / "small-device.toml"), "--workload",
        "hotcold:r=0.9,f=0.1", "--json", str(out), "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    cfg = json.loads(out.read_text())["run"]["config"]
    assert cfg["gc"]["policy"] == "cost-benefit" and cfg["timing"]["enabled"] is True
    assert cfg["flash"]["blocks_per_plane"] == 128 and cfg["ftl"]["over_provisioning"] == 0.14


def test_the_api_example_runs():
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "replay.py")], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()[1:]]
    assert [r[0] for r in rows] == ["greedy", "cost-benefit", "fifo"]
    assert all(float(r[1]) > 1 for r in rows)


def test_the_victim_policy_example_runs():
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "victim_policy.py")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    waf = {line[:32].strip(): float(line.split()[-5]) for line in proc.stdout.splitlines()}
    assert waf["python greedy"] == waf["built-in greedy"]
    assert waf["python cost_benefit"] == waf["built-in cost-benefit"]
    assert len(waf) == 5


def test_the_docs_show_the_grid_file_itself():
    doc = (ROOT / "docs" / "sweeps.md").read_text()
    first = re.findall(r"```toml\n(.*?)```", doc, re.S)[0]
    assert first == (EXAMPLES / "grid.toml").read_text()


def test_the_broken_trace_names_its_line(cli):
    proc = cli("trace", "stats", str(EXAMPLES / "broken.csv"), "--format", "msr")
    assert proc.returncode == 2 and "broken.csv:4: expected 7 comma-separated" in proc.stderr
