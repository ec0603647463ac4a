"""Zombie Chasing from Python and the command line: the host model, schemes, the
notification channel, the reproduction."""

import json

import pytest

import zombiesim as zs

#: The zombie-chasing preset at an eighth of the paper's size.
EIGHTH = {"flash.blocks_per_plane": 512, "ftl.reserved_blocks": 26, "host.cache": "512MiB"}
EIGHTH_SET = [a for k, v in EIGHTH.items() for a in ("--set", f"{k}={v}")]


def small(scheme: str = "gc-gd", **sets) -> zs.Config:
    return zs.Config.preset("zombie-chasing").override(EIGHTH).scheme(scheme).override(sets)


def test_zgc_gd_copies_less_than_gc_gd_and_reports_the_host():
    reps = zs.compare_reports(
        small(), workload="zc-micro:x=6,rw=0.5", schemes=["gc-gd", "zgc-gd"], jobs=2
    )
    base, zombie = reps["gc-gd"], reps["zgc-gd"]
    assert zombie.waf < 0.9 * base.waf
    assert zombie.raw["app"]["elapsed_s"] < base.raw["app"]["elapsed_s"]
    notify = zombie.raw["notify"]
    assert notify["mode"] == "piggyback"
    assert 0.3 < notify["awareness_mean"] <= 1.0
    assert notify["series"] and notify["delivered_pages"] > 0
    cache = zombie.raw["cache"]
    assert cache["capacity_pages"] == 512 * 1024 // 16
    assert cache["writeback_pages"]["background"] + cache["writeback_pages"]["expire"] > 0
    assert zombie.raw["gc"]["zombie_pages_copied"] > 0


def test_no_notifications_make_zombie_schemes_equal_their_baselines():
    reps = zs.simulate_many(
        {
            s: (small(s, **{"notify.mode": "none"}), "zc-micro:x=6,rw=0.5,drive_writes=0.1")
            for s in ("gc-gd", "zgc-gd")
        },
        reproducible=True,
    )
    assert reps["gc-gd"].raw["flash"] == reps["zgc-gd"].raw["flash"]
    assert reps["zgc-gd"].raw["notify"]["awareness_mean"] == 0


def test_dropped_dirty_pages_withdraw_their_hints():
    # Postmark deletes files whose pages are still dirty: each such page's hint is
    # withdrawn, and the device never knows more zombies than there are dirty pages.
    cfg = zs.Config.preset("vma-journaling").override(
        {"notify.mode": "piggyback", "flash.blocks_per_plane": 4096}
    )
    n = zs.simulate(cfg, "fs:postmark,vms=1,files=1000,transactions=8000").raw["notify"]
    assert n["dropped_pages"] > 10_000 and n["withdrawn_pages"] > 0
    assert n["stale_marks_mean"] > 0
    assert all(p["known_zombies"] <= p["dirty_pages"] for p in n["series"])
    assert 0 < n["awareness_mean"] <= 1.0


def test_awareness_is_at_most_one_under_the_oracle(tmp_path):
    """The oracle marks pages whose death it is told from the future, dirty above the
    device or not: its awareness still counts at most the host's dirty pages."""
    trace = tmp_path / "n.zst"
    zs.trace.generate_notified(trace, pages=4000, records=60_000, delay=2000)
    cfg = zs.Config.preset("default").override(
        {
            "flash.blocks_per_plane": 128,
            "notify.mode": "piggyback",
            "gc.low_watermark": 8,
            "gc.high_watermark": 8,
        }
    )
    reps = zs.compare_reports(
        cfg, trace=zs.TraceInput(trace, "native", remap="compact"), schemes=["zgc-gd", "oracle"]
    )
    for label, rep in reps.items():
        notify = rep.raw["notify"]
        assert 0 < notify["awareness_mean"] <= 1.0, (label, notify["awareness_mean"])
        assert all(p["awareness"] <= 1.0 for p in notify["series"]), label


def test_oltp_reports_transactions_per_second():
    cfg = small("zgc-gd", **{"host.file_size": "16KiB"})
    rep = zs.simulate(cfg, "oltp:transactions=5000")
    assert rep.raw["app"]["transactions"] == 5000 and rep.raw["app"]["tps"] > 0


def test_host_model_without_timing_is_refused_naming_the_key():
    with pytest.raises(zs.ConfigError, match="timing.enabled"):
        zs.Config.preset("default").override({"host.cache": "64MiB"})


def test_cli_run_with_scheme_and_sets(cli, tmp_path):
    out = tmp_path / "zc.json"
    proc = cli(
        "run",
        "--preset",
        "zombie-chasing",
        *EIGHTH_SET,
        "--set",
        "gc.policy=z-greedy",
        "--set",
        "gc.zombie_block=true",
        "--set",
        "notify.mode=piggyback",
        "--workload",
        "zc-micro:x=6,rw=0.5,drive_writes=0.05",
        "--json",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["run"]["config"]["gc"]["policy"] == "z-greedy"
    assert report["app"]["threads"] == 16


def test_cli_schemes_list_the_papers_configurations(cli):
    proc = cli("schemes")
    assert proc.returncode == 0
    for name in ("gc-gd", "zgc-gd", "gc-cb", "zgc-cb", "zgc-gd-nz", "zgc-cb-nz"):
        assert name in proc.stdout


@pytest.mark.parametrize(
    ("sets", "key"),
    [
        (["notify.mode=sometimes"], "notify.mode"),
        (["host.dirty_ratio=1.5"], "host.dirty_ratio"),
        (["gc.zombie_block=true", "gc.low_watermark=2"], "gc.low_watermark"),
        (["gc.policy=greedy-delay:150"], "gc.policy"),
    ],
)
def test_cli_bad_host_settings_name_the_key(cli, sets, key):
    args = [a for s in sets for a in ("--set", s)]
    proc = cli("run", "--preset", "zombie-chasing", *args, "--workload", "zc-micro")
    assert proc.returncode == 2
    assert key in proc.stderr and "Traceback" not in proc.stderr


def test_cli_reproduce_rejects_an_unknown_paper(cli):
    proc = cli("reproduce", "nonsense")
    assert proc.returncode == 2


@pytest.fixture(scope="module")
def zc_small():
    """The small reproduction, run once: its reports by label and the outcome."""
    from zombiesim.reproduce import Context, module

    ctx = Context(paper="zombie-chasing", scale="small", jobs=2)
    rep = module("zombie-chasing").run(ctx)
    return ctx.reports, rep


def test_reproduce_zombie_chasing_meets_the_papers_magnitudes(zc_small, tmp_path):
    _, rep = zc_small
    frame = rep.claims_frame()
    assert {"paper", "ours", "expected", "verdict", "holds", "explanation"} <= set(frame.columns)
    assert len(frame) >= 15
    keys = frame["metric"] + " @ " + frame["experiment"]
    verdict = dict(zip(keys, frame["verdict"], strict=True))
    # The rows 000 states with numbers are met: direction and magnitude within 2x.
    for key in (
        "WAF, ZGC-GD vs GC-GD @ micro x=6, 4 GB",
        "elapsed, ZGC-GD vs GC-GD @ micro x=6, 4 GB",
        "WAF, ZGC-CB vs GC-CB @ micro x=6, 4 GB",
        "elapsed, ZGC-CB vs GC-CB @ micro x=6, 4 GB",
        "WAF, ZGC-GD vs GC-GD @ micro x=3, 4 GB",
        "ZGC-GD notified by command: elapsed vs GC-GD @ notification, x=6, 4 GB",
        "TPS, ZGC-GD vs GC-GD @ OLTP, 4 GB buffer",
        "TPS, ZGC-CB vs GC-CB @ OLTP, 4 GB buffer",
        "WAF, ZGC-GD vs GC-GD @ OLTP, 4 GB buffer",
    ):
        assert verdict[key] == "met", (key, frame.set_index("metric").loc[key.split(" @ ")[0]])
    assert "missed" not in set(frame["verdict"])
    # At most a few rows end explained, each naming the ablation run it rests on.
    explained = frame[frame["verdict"] == "explained"]
    assert len(explained) <= 3
    assert all("ablation/" in e for e in explained["explanation"])
    sens = rep.tables["sensitivity"]
    assert {"preset", "cb-age=since-modified", "history=fill", "gc-batch=+1"} <= set(
        sens["setting"]
    )
    written = {p.name for p in rep.write(tmp_path)}
    assert {"report.html", "claims.csv", "runs.csv", "sensitivity.csv"} <= written
    assert "claims met" in (tmp_path / "report.html").read_text()
    # Each claim not met says why, with the docs section, in claims.csv and on the page.
    from test_reproduce import assert_reasons, read_claims

    page = (tmp_path / "report.html").read_text()
    assert_reasons(read_claims(tmp_path / "claims.csv"), page=page)
    # The verdicts are the ones `reproduce --help` gives for the default scale.
    from zombiesim.reproduce import VERDICTS, zombie_chasing

    assert rep.tally() == {v: zombie_chasing.DEFAULT_VERDICTS.get(v, 0) for v in VERDICTS}


class _Flipped:
    """A report whose WAF is another's times `factor` (the rest as `rep`'s)."""

    def __init__(self, rep, waf: float):
        self.raw, self.waf = rep.raw, waf


def test_a_wrong_result_is_missed_and_reproduce_exits_1(zc_small, monkeypatch, tmp_path, capsys):
    from test_reproduce import assert_reasons, read_claims

    from zombiesim.cli import main
    from zombiesim.reproduce._common import Context

    reports, _ = zc_small
    flipped = dict(reports)
    # ZGC-GD writes 10% more than GC-GD at x = 6: the headline goes the wrong way.
    base = reports["micro/4G/x6/rw0.5/gc-gd"]
    flipped["micro/4G/x6/rw0.5/zgc-gd"] = _Flipped(
        reports["micro/4G/x6/rw0.5/zgc-gd"], base.waf * 1.1
    )

    def replay(self, runs):
        assert set(runs) <= set(flipped), set(runs) - set(flipped)
        return {label: flipped[label] for label in runs}

    monkeypatch.setattr(Context, "simulate_many", replay)
    assert main(["reproduce", "zombie-chasing", "--out", str(tmp_path / "flipped")]) == 1
    with open(tmp_path / "flipped" / "claims.csv") as f:
        text = f.read()
    assert "missed" in text
    # The missed claim has no reason in the module's table: a generic one, shown on the
    # terminal too.
    claims = read_claims(tmp_path / "flipped" / "claims.csv")
    missed = [c for c in claims if c["verdict"] == "missed"]
    assert missed and all("does not hold" in c["reason"] for c in missed)
    assert_reasons(claims, terminal=capsys.readouterr().out)
    # The same reports, unflipped, exit 0.
    monkeypatch.setattr(
        Context, "simulate_many", lambda self, runs: {label: reports[label] for label in runs}
    )
    assert main(["reproduce", "zombie-chasing", "--out", str(tmp_path / "as-run")]) == 0
    assert main(["reproduce", "zombie-chasing", "--out", str(tmp_path / "s"), "--strict"]) == 1


def test_claim_verdicts_have_bands():
    from zombiesim.reproduce import banded, within

    assert banded("e", "m", -0.30, -0.20).verdict == "met"
    assert banded("e", "m", -0.30, -0.61).verdict == "direction-only"
    assert banded("e", "m", -0.30, -0.14).verdict == "direction-only"
    assert banded("e", "m", -0.30, 0.01).verdict == "missed"
    assert not banded("e", "m", -0.30, 0.01).holds
    assert banded("e", "m", 0.22, 0.12).verdict == "met"
    assert within("e", "m", "~0", 0.05, -0.1, 0.1).verdict == "met"
    assert within("e", "m", "~0", -0.4, -0.1, 0.1).verdict == "missed"
    why = within("e", "m", "~70%", 1.0, 0.55, 0.85, explanation="run ablation/x")
    assert why.verdict == "explained" and why.holds and why.explanation == "run ablation/x"
    # A met claim carries no explanation.
    assert banded("e", "m", -0.3, -0.3, explanation="ablation/y").explanation == ""


def test_a_trace_goes_through_the_cache_open_loop_or_below_it():
    msr = zs.samples.path(zs.samples.MSR_EXCERPT)
    cfg = small(**{"host.threads": 0, "precondition.pattern": "uniform"})
    above = zs.simulate_trace(cfg, msr, "msr", remap="modulo")
    assert above.raw["app"]["threads"] == 0 and above.raw["cache"]["read_hits"] > 0
    # Buffered writes are absorbed: the device sees fewer page writes than the trace.
    assert above.raw["host"]["write_pages"] < above.raw["app"]["write_pages"]
    below = zs.simulate_trace(cfg.override({"host.trace": "below"}), msr, "msr", remap="modulo")
    assert below.raw["app"] is None


# -- zombie-aware settings with nothing to act on -----------------------------------------------

ROOMY = ("--set", "gc.low_watermark=6", "--set", "gc.high_watermark=6",
         "--set", "ftl.over_provisioning=0.1", "--set", "flash.blocks_per_plane=64")  # fmt: skip


def test_a_zombie_aware_scheme_without_a_host_says_the_device_learned_nothing(cli):
    proc = cli("run", *ROOMY, "--scheme", "zgc", "-w", "uniform:drive_writes=0.1")
    assert proc.returncode == 0, proc.stderr
    assert "note:" in proc.stderr and "gc.policy = z-greedy" in proc.stderr
    assert "gc.zombie_block" in proc.stderr and "learned of none" in proc.stderr
    # compare says it per run, and only of the runs it applies to.
    proc = cli("compare", *ROOMY, "--schemes", "ggc,zgc", "-w", "uniform:drive_writes=0.1")
    assert proc.returncode == 0, proc.stderr
    assert "zgc: gc.policy = z-greedy" in proc.stderr and "ggc:" not in proc.stderr
    # With a host buffer that announces its pages, there is nothing to say.
    proc = cli(
        "run", *ROOMY, "--set", "host.buffer=16MiB", "--scheme", "zgc",
        "-w", "uniform:drive_writes=0.1,iops=10000",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "note:" not in proc.stderr


@pytest.mark.parametrize("scheme", ["hgc", "sgc"])
def test_shadow_relocation_without_notifications_is_refused_naming_notify_mode(cli, scheme):
    proc = cli(
        "run", "--preset", "shadowgc-1tb", "--scheme", scheme,
        "--set", "flash.channels=2", "--set", "flash.chips_per_channel=2",
        "--set", "host.buffer=64MiB", "--set", "device.buffer=64MiB",
        "--set", "notify.mode=none", "-w", "uniform:drive_writes=0.1,iops=10000",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "notify.mode" in proc.stderr and "gc.fast_write" in proc.stderr


def test_a_registered_victim_policy_runs_from_the_cli(cli, tmp_path):
    # z-greedy-uncapped: one module under gc/ and one line of the policy registry.
    out = tmp_path / "uncapped.json"
    proc = cli(
        "run",
        "--preset",
        "zombie-chasing",
        *EIGHTH_SET,
        "--set",
        "gc.policy=z-greedy-uncapped",
        "--set",
        "notify.mode=piggyback",
        "--workload",
        "zc-micro:x=6,rw=0.5,drive_writes=0.05",
        "--verify",
        "--json",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["run"]["config"]["gc"]["policy"] == "z-greedy-uncapped"
    assert report["run"]["verified"]
    assert report["notify"]["delivered_pages"] > 0
    bad = cli("run", "--set", "gc.policy=bogus", "--workload", "uniform")
    assert bad.returncode == 2 and "z-greedy-uncapped" in bad.stderr, bad.stderr
