"""Leave-one-out over the tunables (docs/lifetimes.md, "Leave-one-out"): the choice made
without a trace is measured on it, and `zombiesim study --tune` writes the table."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import zombiesim as zs
from zombiesim import tuning


def _runs(wafs: dict[str, dict[float, float]]) -> list[dict]:
    return [
        {"tunable": "LZGC prior", "scheme": "lzgc-gd", "trace": t, "value": v, "waf": w}
        for t, by in wafs.items()
        for v, w in by.items()
    ]


def test_the_choice_left_out_is_made_without_the_trace():
    # 128 is best on a and b, by far on c; 8 wins on c alone.
    wafs = {
        "a": {8.0: 1.30, 32.0: 1.20, 128.0: 1.10},
        "b": {8.0: 1.30, 32.0: 1.20, 128.0: 1.10},
        "c": {8.0: 1.00, 32.0: 1.20, 128.0: 1.60},
    }
    bases = {(t, "gc-gd"): 1.25 for t in wafs}
    rows = tuning.leave_one_out(_runs(wafs), bases, {"lzgc-gd": "gc-gd"})
    by = {r["trace"]: r for r in rows}
    # In-sample: mean log ratio 8: (.039+.039-.223)/3 < 0; 128: (-.128-.128+.247)/3 < 0.
    assert {r["in-sample"] for r in rows} == {8.0}
    # Without c, 128 wins: c pays 1.60 where in-sample it had 1.00.
    assert by["c"]["left out"] == 128.0 and by["c"]["left-out waf"] == 1.60
    # Without a (or b), 8 still wins.
    assert by["a"]["left out"] == 8.0 and by["a"]["left-out waf"] == 1.30
    assert by["a"]["default waf"] == 1.20 and by["a"]["base waf"] == 1.25
    (s,) = tuning.summary(rows, 0.005)
    assert s["moved"] == 1 and s["traces"] == 3
    assert s["losses left out"] == 3  # a, b at 1.30 and c at 1.60, all above 1.25
    assert s["worst left out"] == pytest.approx(1.60 / 1.25 - 1)


def test_ties_go_to_the_default_and_unmeasured_values_do_not_compete():
    wafs = {"a": {8.0: 1.1, 32.0: 1.1}, "b": {8.0: 1.1, 32.0: 1.1, 128.0: 0.5}}
    bases = {(t, "gc-gd"): 1.2 for t in wafs}
    rows = tuning.leave_one_out(_runs(wafs), bases, {"lzgc-gd": "gc-gd"})
    # 128 was not measured on a: it competes only where a is left out.
    assert {r["trace"]: r["left out"] for r in rows} == {"a": 128.0, "b": 32.0}
    assert {r["in-sample"] for r in rows} == {32.0}


def test_every_tunable_is_a_key_its_schemes_read_and_others_refuse():
    base = zs.Config.preset("default").override(
        {"gc.low_watermark": 26, "gc.high_watermark": 26, "flash.pages_per_block": 64}
    )
    for t in tuning.TUNABLES:
        assert t.default in t.values, t
        for scheme in t.schemes:
            for v in t.values:
                base.scheme(scheme, {t.key: v})
    for key, value in (
        ("gc.lifetime_horizon", 2.0),
        ("gc.lifetime_prior", 8.0),
        ("gc.lifetime_gate", 0.75),
        ("gc.lifetime_page_prior", 256.0),
        ("gc.lifetime_class_prior", 16.0),
    ):
        with pytest.raises(zs.ConfigError, match=key.replace(".", r"\.")):
            base.scheme("zgc-gd", {key: value})
    with pytest.raises(zs.ConfigError, match="gc.lifetime_gate"):
        base.override({"gc.policy": "z-greedy", "gc.zombie_weight": "lifetime",
                       "gc.lifetime_gate": 0.75})  # fmt: skip
    for key, value in (
        ("gc.lifetime_horizon", 0.0),
        ("gc.lifetime_gate", 1.5),
        ("gc.lifetime_page_prior", 0.0),
        ("gc.lifetime_class_prior", -1.0),
    ):
        with pytest.raises(zs.ConfigError, match=key.replace(".", r"\.")):
            base.scheme("lzgc-gd", {key: value})
    with pytest.raises(zs.ConfigError, match="sepbit:0"):
        base.override({"ftl.placement": "sepbit:0"})


def test_a_tunable_changes_what_it_tunes(tmp_path):
    trace = tmp_path / "n.zst"
    zs.trace.generate_notified(trace, pages=12_000, records=60_000, delay=500, seed=3)
    base = zs.Config.preset("default").override(
        {
            "flash.blocks_per_plane": 64,
            "flash.pages_per_block": 64,
            "ftl.over_provisioning": 0.25,
            "gc.low_watermark": 6,
            "gc.high_watermark": 6,
            "notify.mode": "piggyback",
        }
    )
    src = zs.trace.TraceInput(str(trace), "native")
    wafs = {
        h: zs.simulate(base.scheme("lzgc-gd", {"gc.lifetime_horizon": h}), src).waf
        for h in (0.5, 1.0, 2.0)
    }
    assert len(set(wafs.values())) == 3, wafs


def test_study_tune_writes_the_leave_one_out_table(tmp_path):
    traces = []
    for seed in (3, 4):
        path = tmp_path / f"t{seed}.zst"
        zs.trace.generate_notified(path, pages=6_000, records=30_000, delay=300, seed=seed)
        traces.append(str(path))
    out = tmp_path / "s"
    done = subprocess.run(
        [sys.executable, "-m", "zombiesim", "study", *traces, "--schemes", "gc-gd",
         "--tune", "--out", str(out), "-q"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads((out / "tuning.json").read_text())
    tuned = {(r["tunable"], r["scheme"]) for r in rows}
    assert tuned == {(t.name, s) for t in tuning.TUNABLES for s in t.schemes}
    assert {r["trace"] for r in rows} == {"t3", "t4"}
    # With two traces each is chosen on the other alone.
    for r in rows:
        assert r["left-out waf"] is not None and r["base waf"] > 0
    study = {(r["trace"], r["scheme"]) for r in json.loads((out / "study.json").read_text())}
    assert ("t3", "lzgc-gd") in study and ("t3", "nosep") in study
    page = (out / "study.html").read_text()
    assert "Leave-one-out" in page
    assert (out / "tuning.csv").read_text().startswith("tunable,key,scheme,trace")
