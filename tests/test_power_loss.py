"""Power-loss injection from the CLI and Python: --power-loss-every and --power-loss-at, the
report's `power_loss` section, the run summary's line, and bad values refused naming the
flag or key."""

from __future__ import annotations

import json

import pytest

import zombiesim as zs

#: 256 MiB of flash with a 64 KiB (16-page) volatile device buffer, so every power loss
#: finds dirty pages to drop.
SMALL = ["--set", "flash.blocks_per_plane=64", "--set", "device.buffer=64KiB"]
WORKLOAD = "hotcold:r=0.9,f=0.1,read=0.25,requests=10000"


def summary(stdout: str) -> dict[str, str]:
    """The summary's lines by heading (`power loss`, `buffer`, ...)."""
    out = {}
    for line in stdout.splitlines():
        heading, text = line[:16].strip(), line[16:]
        if heading:
            out[heading] = text
    return out


def test_power_loss_every_prints_the_summary_line_and_loses_nothing_durable(cli, tmp_path):
    out = tmp_path / "r.json"
    proc = cli(
        "run", *SMALL, "--workload", WORKLOAD, "--power-loss-every", "1000", "--verify",
        "--json", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    line = summary(proc.stdout)["power loss"]
    assert line.startswith("10 events, ") and "0 durable pages lost (verified)" in line
    rep = json.loads(out.read_text())
    p = rep["power_loss"]
    assert p["events"] == rep["host"]["requests"] // 1000 == 10
    assert p["device_buffer_lost_pages"] > 0
    assert p["device_buffer_lost_pages"] == rep["buffer"]["lost_pages"]
    assert p["durable_pages_lost"] == 0
    assert rep["run"]["config"]["device"]["power_loss_every"] == 1000
    assert f"{p['device_buffer_lost_pages']:,} volatile pages lost" in line


def test_without_verify_durable_loss_is_not_checked(cli, tmp_path):
    out = tmp_path / "r.json"
    proc = cli(
        "run", *SMALL, "--workload", WORKLOAD, "--power-loss-every", "2500", "--json", str(out)
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "run with --verify to check" in summary(proc.stdout)["power loss"]
    p = json.loads(out.read_text())["power_loss"]
    assert p["events"] == 4 and p["durable_pages_lost"] is None


def test_power_loss_every_0_is_off(cli, tmp_path):
    out = tmp_path / "r.json"
    proc = cli(
        "run", *SMALL, "--workload", WORKLOAD, "--power-loss-every", "0", "--json", str(out)
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "power loss" not in summary(proc.stdout)
    rep = json.loads(out.read_text())
    assert rep["power_loss"] is None and rep["buffer"]["lost_pages"] == 0


def test_power_loss_at_adds_to_restart_at(cli, tmp_path):
    proc = cli(
        "run", "--set", "device.restart_at=[5.0]", "--power-loss-at", "2", "--restart-at", "1",
        "--power-loss-every", "300", "--print-config",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "restart_at = [1.0, 2.0, 5.0]" in proc.stdout
    assert "power_loss_every = 300" in proc.stdout
    # A power loss at a time on the device's clock (iops gives it): one event.
    out = tmp_path / "r.json"
    run = cli(
        "run", *SMALL, "--workload", WORKLOAD + ",iops=10000", "--power-loss-at", "0.5",
        "--verify", "--json", str(out),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    rep = json.loads(out.read_text())
    assert rep["power_loss"]["events"] == rep["refresh"]["restarts"] == 1
    assert rep["power_loss"]["durable_pages_lost"] == 0
    assert summary(run.stdout)["power loss"].startswith("1 event, ")


@pytest.mark.parametrize("flag", ["--power-loss-every", "--power-loss-at"])
@pytest.mark.parametrize("bad", ["-1", "x"])
def test_bad_values_exit_2_naming_the_flag(cli, flag, bad):
    proc = cli("run", flag, bad, "--print-config")
    assert proc.returncode == 2
    assert f"argument {flag}:" in proc.stderr


def test_power_loss_every_with_the_host_model_exits_2_naming_the_key(cli):
    proc = cli(
        "run", "--set", "timing.enabled=true", "--set", "host.cache=64MiB",
        "--power-loss-every", "100", "--workload", "uniform:requests=100",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "device.power_loss_every" in proc.stderr and "host model" in proc.stderr


def test_compare_takes_the_flags(cli, tmp_path):
    out = tmp_path / "r.json"
    proc = cli(
        "compare", *SMALL, "--policies", "greedy,cost-benefit", "--workload", WORKLOAD,
        "--power-loss-every", "1000", "--json", str(out), "--jobs", "1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    reports = json.loads(out.read_text())
    assert [r["power_loss"]["events"] for r in reports.values()] == [10, 10]
    # Without --verify nothing checks what a power loss took; with it, every run says.
    assert {r["power_loss"]["durable_pages_lost"] for r in reports.values()} == {None}
    proc = cli(
        "compare", *SMALL, "--set", "ftl.kind=page,dftl", "--workload", WORKLOAD,
        "--power-loss-every", "1000", "--verify", "--json", str(out), "--jobs", "1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    reports = json.loads(out.read_text())
    assert all(r["run"]["verified"] for r in reports.values())
    assert [r["power_loss"]["durable_pages_lost"] for r in reports.values()] == [0, 0]


def test_python_api_and_to_row(small):
    cfg = small.override({"device.buffer": "64KiB", "device.power_loss_every": 1000})
    rep = zs.simulate(cfg, WORKLOAD, verify=True)
    assert rep.power_loss.events == 10 and rep.power_loss.durable_pages_lost == 0
    row = rep.to_row()
    assert row["power_loss.events"] == 10 and row["power_loss.durable_pages_lost"] == 0
    assert row["config.device.power_loss_every"] == 1000
    off = zs.simulate(small.override({"device.buffer": "64KiB"}), WORKLOAD)
    assert off.power_loss is None
    assert not any(k.startswith("power_loss.") for k in off.to_row())
    with pytest.raises(zs.ConfigError, match="device.power_loss_every"):
        small.override({"device.power_loss_every": -1})
