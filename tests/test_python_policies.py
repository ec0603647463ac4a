"""Policies written in Python (`victim=`, `placement=`): exact against the built-in ones
they restate, rankings, errors, refusals."""

import json
import runpy
from pathlib import Path

import numpy as np
import pytest

import zombiesim as zs

WORKLOAD = "hotcold:r=0.8,f=0.2,drive_writes=2"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples/victim_policy.py"

# The example's restatements of greedy and cost-benefit are the ones held to exactness.
_EXAMPLE = runpy.run_path(str(EXAMPLE))
greedy = _EXAMPLE["greedy"]
cost_benefit = _EXAMPLE["cost_benefit"]


def _body(rep, config=None):
    """The report as JSON without what names the policy."""
    raw = json.loads(rep.to_json())
    raw["run"].pop("victim_policy", None)
    if config is not None:
        raw["run"]["config"] = config
    return json.dumps(raw, sort_keys=True)


def test_a_python_greedy_reproduces_greedy_exactly(small):
    ours = zs.simulate(small, WORKLOAD, victim=greedy, reproducible=True)
    builtin = zs.simulate(small, WORKLOAD, reproducible=True)
    assert ours.gc.victims > 100
    assert ours.run.victim_policy == "python:greedy" == ours.policy
    assert "victim_policy" not in builtin.raw["run"] and builtin.policy == "greedy"
    assert _body(ours) == _body(builtin)


def test_a_python_cost_benefit_reproduces_cost_benefit_exactly(small):
    ours = zs.simulate(small, WORKLOAD, victim=cost_benefit, reproducible=True)
    cb = small.override({"gc.policy": "cost-benefit"})
    builtin = zs.simulate(cb, WORKLOAD, reproducible=True)
    assert ours.waf != pytest.approx(zs.simulate(small, WORKLOAD).waf, rel=1e-9)
    assert _body(ours) == _body(builtin, json.loads(ours.to_json())["run"]["config"])


def test_the_candidates_hold_every_column(small):
    seen = []

    def look(c):
        seen.append(c)
        return c.block[np.argmin(c.valid)]

    zs.simulate(small, "uniform:drive_writes=0.5", victim=look)
    c = seen[-1]
    n = len(c)
    assert n > 0 and repr(c).startswith("Candidates(now=")
    cols = ("block", "valid", "invalid", "zombies", "last_modified", "age")
    cols += ("erase_count", "stream", "weight")
    for name in cols:
        col = getattr(c, name)
        assert isinstance(col, np.ndarray) and col.shape == (n,), name
    assert np.all(np.diff(c.block.astype(np.int64)) > 0)
    assert np.all(c.age == c.now - c.last_modified)
    pages = small.geometry["pages_per_block"]
    assert np.all(c.valid + c.invalid == pages)
    assert c.block is c.block  # built once


def test_a_ranking_serves_several_selections(small):
    calls = {"once": 0, "ranked": 0}

    def once(c):
        calls["once"] += 1
        return greedy(c)

    def ranked(c):
        calls["ranked"] += 1
        return c.block[np.argsort(c.valid, kind="stable")]

    a = zs.simulate(small, WORKLOAD, victim=once)
    b = zs.simulate(small, WORKLOAD, victim=ranked)
    assert calls["ranked"] * 2 < calls["once"]
    assert a.waf <= b.waf < 1.5 * a.waf


def test_an_exception_in_the_policy_is_raised_from_simulate(small):
    def broken(c):
        raise RuntimeError("policy bug")

    with pytest.raises(RuntimeError, match="policy bug"):
        zs.simulate(small, WORKLOAD, victim=broken)


@pytest.mark.parametrize(
    ("answer", "error", "match"),
    [
        (lambda c: 10**6, zs.ConfigError, "not one of the"),
        (lambda c: [], zs.ConfigError, "chose no block"),
        (lambda c: "three", TypeError, "block number or a sequence"),
        (lambda c: -1, TypeError, "block number or a sequence"),
    ],
)
def test_a_bad_answer_stops_the_run(small, answer, error, match):
    with pytest.raises(error, match=match):
        zs.simulate(small, WORKLOAD, victim=answer)


def test_what_cannot_run_a_python_policy_is_refused(small):
    with pytest.raises(TypeError, match="callable"):
        zs.simulate(small, WORKLOAD, victim=3)
    with pytest.raises(zs.ConfigError, match=r"gc\.policy"):
        zs.simulate(small.override({"gc.policy": "fifo"}), WORKLOAD, victim=greedy)


def test_a_trace_replay_takes_a_python_policy(small, msr_sample):
    ours = zs.simulate_trace(small, msr_sample, "msr", remap="modulo", victim=greedy)
    builtin = zs.simulate_trace(small, msr_sample, "msr", remap="modulo")
    assert ours.run.victim_policy == "python:greedy"
    assert ours.waf == builtin.waf and ours.gc.pages_copied == builtin.gc.pages_copied


def test_the_cli_runs_a_policy_from_a_file(cli, tmp_path):
    out = tmp_path / "r.json"
    args = ["run", "--set", "flash.blocks_per_plane=64", "--workload", WORKLOAD]
    args += ["--reproducible", "--json", str(out), "-q"]
    ours = cli(*args, "--victim", f"{EXAMPLE}:cost_benefit")
    assert ours.returncode == 0, ours.stderr
    raw = json.loads(out.read_text())
    assert raw["run"]["victim_policy"] == "python:cost_benefit"
    builtin = cli(*args[:-4], "--set", "gc.policy=cost-benefit", "--json", "-", "-q")
    assert json.loads(builtin.stdout)["waf"] == raw["waf"]


def test_the_cli_names_what_is_wrong_with_a_policy_file(cli, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def policy(c):\n    return c.block[0\n")
    wrong = {
        f"{tmp_path / 'missing.py'}:policy": "no such file",
        f"{bad}:policy": "bad.py:2",
        f"{EXAMPLE}:nothere": "`nothere` is not defined",
        "no-colon": "expected FILE.py:NAME",
    }
    for spec, message in wrong.items():
        r = cli("run", "--workload", "uniform:drive_writes=0.1", "--victim", spec)
        assert r.returncode == 2 and message in r.stderr, (spec, r.stderr)


def test_the_example_policies_run(small):
    for name in ("greedy", "cost_benefit", "oldest_of_the_emptiest"):
        rep = zs.simulate(small, "uniform:drive_writes=0.5", victim=_EXAMPLE[name])
        assert rep.policy == f"python:{name}" and rep.gc.victims > 0


# -- placement ------------------------------------------------------------------------

PLACED = {"flash.blocks_per_plane": 128, "gc.low_watermark": 6, "gc.high_watermark": 6}
HOT = "hotcold:r=0.9,f=0.1,drive_writes=2"


def write_count_placement():
    """`write-count:2` restated: each page's next write goes to the class of its count
    then (written once: 0, more: 1)."""
    counts: dict[int, int] = {}

    def write_count(w):
        out = []
        for lpn in w.lpn.tolist():
            c = min(counts.get(lpn, 0) + 1, 255)
            counts[lpn] = c
            out.append(min(1, (min(c + 1, 255)).bit_length() - 1))
        return out

    return write_count


def test_a_python_placement_reproduces_write_count_exactly():
    base = zs.Config.preset("default").override(PLACED)
    ours = zs.simulate(
        base.override({"ftl.placement": "python:2"}),
        HOT,
        placement=write_count_placement(),
        placement_batch=1,
        reproducible=True,
    )
    builtin = zs.simulate(base.override({"ftl.placement": "write-count:2"}), HOT, reproducible=True)
    assert ours.placement == "python:write_count" == ours.run.placement
    assert builtin.placement == "write-count:2"
    raw = json.loads(ours.to_json())
    raw["run"].pop("placement")
    assert _body(builtin) == json.dumps(
        {**raw, "run": {**raw["run"], "config": json.loads(builtin.to_json())["run"]["config"]}},
        sort_keys=True,
    )


def test_the_writes_hold_every_column_and_batches_are_whole():
    seen = []

    def look(w):
        seen.append(w)
        return np.zeros(len(w), dtype=np.uint32)

    cfg = zs.Config.preset("default").override({**PLACED, "ftl.placement": "python:2"})
    rep = zs.simulate(cfg, "uniform:drive_writes=0.5", placement=look, placement_batch=1000)
    assert all(len(w) == 1000 for w in seen)
    total = rep.host.write_pages + rep.precondition.host_write_pages
    assert len(seen) == total // 1000
    w = seen[-1]
    for name in ("lpn", "overwrite", "lifetime", "time", "stream"):
        assert getattr(w, name).shape == (1000,), name
    assert w.overwrite.dtype == np.bool_ and np.all(w.stream == 0)
    assert np.all(np.diff(w.time.astype(np.int64)) >= 0) and w.now >= w.time[-1]
    assert np.all(w.lifetime == 2**64 - 1)  # the workload gives no hint
    assert repr(w).startswith("Writes(now=")


@pytest.mark.parametrize(
    ("answer", "error", "match"),
    [
        (lambda w: [5] * len(w), ValueError, "chose stream 5"),
        (lambda w: [0], ValueError, "answered 1 streams for a batch of"),
        (lambda w: "x", TypeError, "sequence of streams"),
    ],
)
def test_a_bad_placement_answer_stops_the_run(answer, error, match):
    cfg = zs.Config.preset("default").override({**PLACED, "ftl.placement": "python:2"})
    with pytest.raises(error, match=match):
        zs.simulate(cfg, HOT, placement=answer)


def test_an_exception_in_the_placement_is_raised_from_simulate():
    def broken(w):
        raise KeyError("placement bug")

    cfg = zs.Config.preset("default").override({**PLACED, "ftl.placement": "python:2"})
    with pytest.raises(KeyError, match="placement bug"):
        zs.simulate(cfg, HOT, placement=broken)


def test_a_placement_and_python_k_go_together():
    base = zs.Config.preset("default").override(PLACED)
    with pytest.raises(zs.ConfigError, match=r"ftl\.placement.*none was given"):
        zs.simulate(base.override({"ftl.placement": "python:2"}), HOT)
    with pytest.raises(zs.ConfigError, match=r'needs ftl\.placement = "python:K"'):
        zs.simulate(base, HOT, placement=write_count_placement())
    with pytest.raises(zs.ConfigError, match="placement_batch"):
        zs.simulate(base, HOT, placement=write_count_placement(), placement_batch=0)
    fast = zs.Config.preset("default").override({"flash.blocks_per_plane": 64, "ftl.kind": "fast"})
    with pytest.raises(zs.ConfigError, match=r"ftl\.kind"):
        zs.simulate(fast, "uniform:drive_writes=0.2", placement=write_count_placement())


def test_the_cli_runs_a_placement_from_a_file(cli, tmp_path):
    policy = tmp_path / "place.py"
    policy.write_text("def cold(w):\n    return [1] * len(w)\n")
    args = ["run", "--workload", HOT, "--json", "-", "-q", "--reproducible"]
    for key, value in PLACED.items():
        args += ["--set", f"{key}={value}"]
    r = cli(*args, "--set", "ftl.placement=python:2", "--placement", f"{policy}:cold")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["run"]["placement"] == "python:cold"
    r = cli(*args, "--placement", f"{policy}:cold")
    assert r.returncode == 2 and "python:K" in r.stderr, r.stderr
