"""The FTLs beyond page mapping (DFTL, SuperBlock, FAST, block) and 004's buffers from
Python and the CLI: every kind runs and verifies, the report's FTL section, the WAF order
of the literature, the combinations that are refused (exit 2, the key named), compare over
one key's values, and the `ba-gc` reproduction at a tiny scale."""

from __future__ import annotations

import json

import pytest

import zombiesim as zs

KINDS = ("page", "dftl", "superblock", "fast", "block")
#: 64 MiB of flash (4 x 64 blocks of 64 x 4 KiB pages), OP 25%: small enough for block
#: mapping's read-modify-writes to run in well under a second.
SMALL = {
    "flash.blocks_per_plane": 64,
    "flash.pages_per_block": 64,
    "ftl.over_provisioning": 0.25,
    "precondition.random_drive_writes": 0,
}
UNIFORM = "uniform:drive_writes=1"


def cfg(kind: str, **sets) -> zs.Config:
    extra = {"ftl.superblock_blocks": 4} if kind == "superblock" else {}
    return zs.Config.preset("default").override({**SMALL, "ftl.kind": kind, **extra, **sets})


@pytest.fixture(scope="module")
def uniform_reports() -> dict[str, zs.Report]:
    return {k: zs.simulate(cfg(k), UNIFORM, verify=True) for k in KINDS}


def test_every_kind_runs_verified_and_names_itself(uniform_reports):
    for kind, rep in uniform_reports.items():
        assert rep.ftl.kind == kind
        assert rep.waf is not None and rep.waf >= 1.0, kind
        assert rep.run.verified
        assert rep.io_time_s > 0
    assert uniform_reports["page"].ftl.merges is None
    merges = uniform_reports["fast"].ftl.merges
    assert merges.full > 0
    assert uniform_reports["block"].ftl.merges.full > 0
    # The fill warmed the CMT, which covers the whole device: every lookup hits.
    assert uniform_reports["dftl"].ftl.cmt.hit_ratio == 1.0


def test_uniform_random_writes_order_the_ftls_as_the_literature(uniform_reports):
    waf = {k: r.waf for k, r in uniform_reports.items()}
    # The CMT (65536 entries) covers this device's 12288 logical pages: DFTL ~ page.
    assert waf["page"] <= waf["dftl"] <= waf["page"] * 1.05, waf
    assert waf["dftl"] < waf["superblock"], waf
    assert waf["fast"] < waf["block"], waf
    assert waf["superblock"] < waf["fast"], waf


def test_a_small_cmt_shows_dftls_translation_traffic(uniform_reports):
    small = zs.simulate(cfg("dftl", **{"ftl.cmt_entries": 64}), UNIFORM, verify=True)
    flash = small.flash
    assert flash.programs_by_cause.translation > 0
    assert flash.reads_by_cause.translation > 0
    assert small.waf > uniform_reports["dftl"].waf * 1.1
    assert small.ftl.cmt.hit_ratio < uniform_reports["dftl"].ftl.cmt.hit_ratio


@pytest.mark.parametrize("policy", ["fab", "bplru", "3-region"])
@pytest.mark.parametrize("kind", ["superblock", "fast", "block"])
def test_block_granularity_buffers_run_on_the_block_mapped_ftls(kind, policy):
    rep = zs.simulate(
        cfg(kind, **{"device.buffer": "1MiB", "device.buffer_policy": policy}),
        "hotcold:r=0.8,f=0.1,drive_writes=0.5",
        verify=True,
    )
    assert rep.buffer.policy == policy
    assert rep.buffer.evictions > 0
    if policy == "bplru":
        # Padding reads the pages a victim block lacks.
        assert rep.flash.reads_by_cause.buffer > 0


def test_old_dirty_pages_are_flushed_after_the_maximum_age():
    sets = {"device.buffer": "8MiB", "device.buffer_max_dirty_age": 0.5}
    rep = zs.simulate(cfg("fast", **sets), "hotcold:r=0.9,f=0.01,requests=20000,iops=4000")
    assert rep.buffer.aged_pages > 0
    # Without arrival times the age cannot be known: refused, naming the key.
    with pytest.raises(zs.ConfigError, match="device.buffer_max_dirty_age"):
        zs.simulate(cfg("fast", **sets), "hotcold:requests=100")


@pytest.mark.parametrize(
    ("sets", "key"),
    [
        ({"ftl.kind": "fast", "ftl.log_blocks": 4000}, "ftl.log_blocks"),
        ({"ftl.kind": "dftl", "ftl.cmt_entries": 0}, "ftl.cmt_entries"),
        ({"ftl.cmt_entries": 10}, "ftl.cmt_entries"),
        ({"device.buffer": "1MiB", "device.buffer_policy": "bplru"}, "device.buffer_policy"),
        (
            {"ftl.kind": "dftl", "device.buffer": "1MiB", "device.buffer_policy": "fab"},
            "device.buffer_policy",
        ),
        ({"ftl.kind": "fast", "ftl.log_victim": "ba-vbs"}, "ftl.log_victim"),
        ({"ftl.kind": "fast", "ftl.buffer_aware_merge": True}, "ftl.buffer_aware_merge"),
        ({"ftl.kind": "block", "gc.policy": "cost-benefit"}, "gc.policy"),
        ({"ftl.kind": "fast", "gc.zombie_block": True}, "gc.zombie_block"),
        ({"ftl.kind": "superblock", "ftl.superblock_blocks": 1}, "ftl.superblock_blocks"),
    ],
)
def test_combinations_that_cannot_work_exit_2_naming_the_key(cli, sets, key):
    args = ["run", "--workload", "uniform:requests=10"]
    for k, v in {**SMALL, **sets}.items():
        args += ["--set", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
    proc = cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert key in proc.stderr, proc.stderr


def test_compare_over_the_values_of_one_key(cli, tmp_path):
    out = tmp_path / "kinds.json"
    args = ["compare", "--set", "ftl.kind=page,fast,block"]
    for k, v in SMALL.items():
        args += ["--set", f"{k}={v}"]
    proc = cli(*args, "--workload", "uniform:drive_writes=0.3", "--json", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    labels = list(json.loads(out.read_text()))
    assert labels == ["ftl.kind=page", "ftl.kind=fast", "ftl.kind=block"]
    proc = cli("compare", "--workload", "uniform:requests=10")
    assert proc.returncode == 2 and "nothing to compare" in proc.stderr


def test_the_ba_gc_schemes_on_a_high_locality_stand_in():
    base = zs.Config.preset("ba-gc").override(
        {
            "flash.blocks_per_plane": 2048,
            "ftl.log_blocks": 32,
            "ftl.over_provisioning": 0.0184,
            "device.buffer": "4MiB",
        }
    )
    # A hot set a little larger than the buffer (5 MiB against 4 MiB).
    work = "files:file=32KiB,seq=0.2,hot=0.02,r=0.85,size=4KiB,iops=2000,drive_writes=1"
    reps = {s: zs.simulate(base.scheme(s), work, verify=True) for s in ("fab", "bplru", "ba-gc")}
    assert reps["ba-gc"].gc.buffer_reads > 0
    assert reps["fab"].gc.buffer_reads == 0
    assert reps["ba-gc"].io_time_s <= reps["bplru"].io_time_s * 1.02
    assert reps["bplru"].io_time_s <= reps["fab"].io_time_s * 1.02


def test_reproduce_ba_gc_tiny(tmp_path):
    rep = zs.reproduce.run("ba-gc", scale="tiny", jobs=2)
    frame = rep.claims_frame()
    assert len(frame) >= 8
    written = rep.write(tmp_path)
    assert (tmp_path / "claims.csv") in written
    assert "stand_ins" in rep.tables and "buffer_sweep" in rep.tables


@pytest.mark.parametrize("kind", ["fast", "superblock"])
def test_the_run_summary_counts_and_times_merges_as_gc(cli, kind):
    """A block-mapped FTL collects by merging: the summary's GC programs and GC latency
    are its merges' (FAST's merges by kind), never "GC 0" beside thousands of copies."""
    proc = cli(
        "run", "--set", "flash.blocks_per_plane=64", "--set", f"ftl.kind={kind}",
        "--set", "timing.enabled=true", "-w", "uniform:drive_writes=0.3",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    flash = next(x for x in proc.stdout.splitlines() if x.strip().startswith("flash"))
    gc = next(x for x in proc.stdout.splitlines() if x.strip().startswith("GC "))
    assert "+ GC 0)" not in flash and "GC latency 0 ns" not in gc, (flash, gc)
    if kind == "fast":
        assert "full merges" in gc or "full merge" in gc
    rep = zs.simulate(
        cfg(kind, **{"timing.enabled": True}), "uniform:drive_writes=0.3", reproducible=True
    )
    # GC latency is the collections' flash time: the timing model's GC busy time.
    assert rep.raw["gc"]["latency_s"] == pytest.approx(rep.raw["timing"]["gc_busy_s"], rel=1e-9)
    assert rep.raw["gc"]["latency_s"] > 0


def test_a_cmt_for_under_one_percent_of_the_pages_under_random_writes_is_noted(cli):
    """DFTL with a cached mapping table far smaller than the device, under random writes,
    runs at a WAF made of translation traffic: the run says so (and not otherwise)."""
    base = ["run", "--preset", "default", "-w", UNIFORM, "--set", "ftl.kind=dftl"]
    for key, value in SMALL.items():
        base += ["--set", f"{key}={value}"]
    small = cli(*base, "--set", "ftl.cmt_entries=64")
    assert small.returncode == 0, small.stderr
    assert "ftl.cmt_entries = 64 covers 0.49% of the 13,107 logical pages" in small.stderr
    assert "translation traffic" in small.stderr
    whole = cli(*base, "--set", "ftl.cmt_entries=65536")
    assert whole.returncode == 0, whole.stderr
    assert "ftl.cmt_entries" not in whole.stderr
