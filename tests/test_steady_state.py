"""Whether a measured phase reached steady state (docs/timing.md): the report's
`steady_state`, the line `run` prints, and the FDP preset aged with the workload's own
writes so that its first figures are not a transient."""

from __future__ import annotations

import json

import zombiesim as zs

KVCACHE = "kvcache:soc=0.04"


def test_the_fdp_preset_is_steady_by_default_and_fdp_is_near_one():
    # The case at full size: FDP near 1 and steady; without FDP the mixed
    # handles amplify (the paper's direction).
    on = zs.simulate(zs.Config.preset("fdp"), KVCACHE, reproducible=True)
    assert on["waf"] <= 1.3, on["waf"]
    assert on.steady_state["reached"] is True, on.steady_state
    waf = on.steady_state["waf"]
    assert abs(waf["change"]) <= waf["tolerance"] == 0.02
    off = zs.simulate(
        zs.Config.preset("fdp").override({"fdp.enabled": False}), KVCACHE, reproducible=True
    )
    assert off["waf"] >= 2.0, off["waf"]


def test_a_transient_is_reported_with_the_keys_that_age_the_device(cli):
    # Aged by uniform writes to handle 0, the FDP device starts mixed: its WAF falls
    # through the measured phase, and the run says so.
    proc = cli(
        "run", "--preset", "fdp", "--workload", KVCACHE,
        "--set", "precondition.pattern=uniform", "--json", "-",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    s = rep["steady_state"]
    assert s["reached"] is False
    assert s["waf"]["change"] < -s["waf"]["tolerance"], s
    assert s["precondition_keys"] == ["precondition.random_drive_writes", "precondition.pattern"]
    text = cli("run", "--preset", "fdp", "--workload", KVCACHE,
               "--set", "precondition.pattern=uniform")  # fmt: skip
    line = next(ln for ln in text.stdout.splitlines() if "steady state" in ln)
    assert "NOT reached" in line and "precondition.pattern" in line, line


def test_a_timed_run_also_follows_write_latency():
    cfg = zs.Config.preset("default").override(
        {"flash.blocks_per_plane": 64, "timing.enabled": True}
    )
    rep = zs.simulate(cfg, "uniform:drive_writes=1", reproducible=True)
    s = rep.steady_state
    lat = s["write_latency_us"]
    assert lat is not None and lat["tolerance"] == 0.10
    assert lat["previous_quarter"] > 0 and lat["last_quarter"] > 0
    assert s["reached"] == (s["waf"]["steady"] and lat["steady"])


def test_a_phase_too_short_to_split_says_unknown(cli):
    proc = cli(
        "run", "--set", "flash.blocks_per_plane=64", "--set", "precondition.random_drive_writes=0",
        "--workload", "uniform:requests=20",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "steady state  unknown" in proc.stdout, proc.stdout


def test_a_tolerance_must_be_positive(cli):
    proc = cli("run", "--set", "stats.steady_waf_tolerance=0", "--workload", "uniform:requests=20")
    assert proc.returncode == 2
    assert "stats.steady_waf_tolerance" in proc.stderr
