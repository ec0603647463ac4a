import json

import pandas as pd
import pytest

import zombiesim as zs


def test_compare_one_row_per_policy_same_stream(small):
    policies = ["fifo", "greedy", "random", "d-choices:4"]
    df = zs.compare(small, policies=policies, workload="uniform:drive_writes=1", seed=1)
    assert isinstance(df, pd.DataFrame)
    assert list(df["label"]) == policies
    assert df.columns[0] == "label"
    assert list(df["config.gc.policy"]) == policies
    # Same workload and seed: every policy sees the same host stream.
    assert df["host.write_pages"].nunique() == 1
    assert df["host.requests"].nunique() == 1
    assert (df["waf"] >= 1).all()
    waf = dict(zip(df["label"], df["waf"], strict=True))
    assert waf["greedy"] <= waf["fifo"]
    assert waf["greedy"] <= waf["random"]


def test_cost_benefit_beats_greedy_on_skewed_workload():
    """The default preset, preconditioned with the workload, 3 measured drive writes of
    90/10 hot/cold: cost-benefit copies far fewer pages than greedy (5.9 vs 8.4 here)."""
    cfg = zs.Config.preset("default").override({"precondition.pattern": "workload"})
    reports = zs.compare_reports(
        cfg,
        policies=["greedy", "cost-benefit"],
        workload=zs.workload.hotcold(r=0.9, f=0.1, drive_writes=3),
        seed=1,
    )
    greedy, cb = reports["greedy"], reports["cost-benefit"]
    assert greedy.host.write_pages == cb.host.write_pages
    assert cb.waf < 0.9 * greedy.waf, (cb.waf, greedy.waf)


def test_compare_schemes_and_configs(small):
    df = zs.compare(small, schemes=["fifo", "cost-benefit"], workload="uniform:drive_writes=0.3")
    assert list(df["label"]) == ["fifo", "cost-benefit"]
    assert list(df["config.gc.policy"]) == ["fifo", "cost-benefit"]
    configs = {"op7": small, "op28": small.override({"ftl.over_provisioning": 0.28})}
    df = zs.compare(configs=configs, workload="uniform:drive_writes=1", jobs=1)
    assert list(df["label"]) == ["op7", "op28"]
    waf = dict(zip(df["label"], df["waf"], strict=True))
    assert waf["op28"] < waf["op7"]


def test_compare_crossed_schemes_and_policies(small):
    variants = zs.compare_configs(small, schemes=["baseline"], policies=["fifo", "greedy"])
    assert list(variants) == ["baseline/fifo", "baseline/greedy"]
    assert variants["baseline/fifo"].policy == "fifo"


def test_compare_errors(small):
    with pytest.raises(zs.ConfigError, match="unknown policy `bogus`"):
        zs.compare(small, policies=["greedy", "bogus"], workload="uniform")
    with pytest.raises(zs.ConfigError, match="given twice"):
        zs.compare(small, policies=["greedy", "greedy"], workload="uniform")
    with pytest.raises(zs.ConfigError, match="nothing to compare"):
        zs.compare(small, policies=[], workload="uniform")
    with pytest.raises(zs.WorkloadError):
        zs.compare(small, policies=["greedy"], workload="uniform:nope=1")


def test_compare_progress_sees_every_label_and_can_stop(small):
    seen = set()

    def progress(label, phase, fraction, pages):
        seen.add(label)
        return False

    reports = zs.compare_reports(
        small, policies=["fifo", "greedy"], workload="uniform:drive_writes=100", progress=progress
    )
    assert seen == {"fifo", "greedy"}
    assert all(r.run.interrupted for r in reports.values())


def test_quick_validation_passes():
    df = zs.validate(full=False)
    assert len(df) == len(zs.validation_cases(False)) == 4
    assert df.attrs["ok"] is True and df.attrs["tolerance"] == pytest.approx(0.02)
    assert bool(df["ok"].all())
    assert (df["error"].abs() <= df.attrs["tolerance"]).all()
    for col in ("policy", "simulated_waf", "analytic_waf", "analytic_waf_nominal"):
        assert col in df.columns


def test_validate_progress_can_stop():
    calls = []

    def progress(done, total):
        calls.append((done, total))
        return False

    df = zs.validate(progress=progress, jobs=1)
    assert calls and calls[0][1] == 4
    assert df.attrs["interrupted"] is True and df.attrs["ok"] is False
    assert len(df) < 4


def test_catalog_listings():
    assert "default" in [p.name for p in zs.presets()]
    assert "description" in zs.preset_toml("default")
    schemes = {s.name: s for s in zs.schemes()}
    assert schemes["cost-benefit"].settings == {"gc.policy": '"cost-benefit"'}
    assert {"uniform", "hotcold", "zipf"} <= {w.name for w in zs.workloads()}
    assert "drive_writes" in zs.workload_common_keys()
    assert {"greedy", "cost-benefit", "fifo", "random"} <= set(zs.policies())


def test_ftl_kinds_come_from_the_registry_and_each_one_runs(small):
    from zombiesim import catalog
    from zombiesim.cli.compare import FTL_KINDS

    kinds = catalog.ftl_kinds()
    assert kinds[:2] == ["page", "dftl"] and {"superblock", "fast", "block"} <= set(kinds)
    assert list(FTL_KINDS) == kinds
    configs = {k: small.override({"ftl.kind": k}) for k in kinds}
    df = zs.compare(configs=configs, workload="uniform:drive_writes=0.2", jobs=1)
    assert list(df["label"]) == kinds
    assert (df["waf"] >= 1.0).all()


def test_oracle_shares_of_its_gain():
    from zombiesim._format import _share, oracle_shares

    def rep(waf, oracle=False):
        return zs.Report({"waf": waf, "oracle": {"horizon": 8} if oracle else None})

    reports = {"base": rep(4.0), "mid": rep(3.5), "worse": rep(4.5), "oracle": rep(3.0, True)}
    assert oracle_shares(reports) == {"base": 0.0, "mid": 0.5, "worse": -0.5, "oracle": 1.0}
    assert oracle_shares({k: reports[k] for k in ("base", "mid")}) is None
    # The oracle gains nothing over the baseline (here it is the baseline): no share.
    flat = {"oracle": rep(3.0, True), "base": rep(4.0)}
    assert oracle_shares(flat) == {"oracle": None, "base": None}
    assert [_share(s) for s in (None, 0.5, -0.25)] == ["—", "50.0%", "-25.0%"]


def test_compare_cli_with_the_oracle_gives_the_share_of_its_gain(cli, tmp_path):
    js = tmp_path / "r.json"
    workload = "hotcold:r=0.8,f=0.2,drive_writes=0.5"
    args = ["--set", "flash.blocks_per_plane=64", "--workload", workload]
    proc = cli("compare", *args, "--schemes", "gc-gd,gc-cb,oracle", "--json", str(js))
    assert proc.returncode == 0, proc.stderr
    assert "share of the oracle's gain captured" in proc.stdout and "…" not in proc.stdout
    data = json.loads(js.read_text())
    waf = {k: v["waf"] for k, v in data.items()}
    share = {k: v["oracle_gain_captured"] for k, v in data.items()}
    gain = waf["gc-gd"] - waf["oracle"]
    assert gain > 0, waf
    assert share["gc-gd"] == 0 and share["oracle"] == pytest.approx(1.0)
    assert share["gc-cb"] == pytest.approx((waf["gc-gd"] - waf["gc-cb"]) / gain)
    assert f"{share['gc-cb'] * 100:.1f}%" in proc.stdout and "100.0%" in proc.stdout
    assert data["oracle"]["oracle"]["hints"] > 0 and data["gc-gd"]["oracle"] is None
    # The oracle first: it is its own baseline and gains nothing over it.
    proc = cli("compare", *args, "--schemes", "oracle,gc-gd", "--json", str(js))
    assert proc.returncode == 0, proc.stderr
    assert "—" in proc.stdout
    assert {v["oracle_gain_captured"] for v in json.loads(js.read_text()).values()} == {None}
    # `run` says what the oracle knew and told.
    proc = cli("run", *args, "--scheme", "oracle")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    i = next(i for i, x in enumerate(lines) if x.strip().startswith("oracle"))
    # 3 zero-horizon and 7 horizons × 3 told the future: this device has no room for
    # the zombie block, so neither the flipped nor the lifetime-aware members run.
    assert "best of 24 schedules:" in lines[i], lines[i]
    # The winner here is told the future (hints > 0 above): what it knew, on the next line.
    assert "horizon" in lines[i + 1] and "zombie marks from the future" in lines[i + 1]
