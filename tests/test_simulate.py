import json
import pickle

import pandas as pd
import pytest

import zombiesim as zs


@pytest.fixture(scope="module")
def report(small):
    return zs.simulate(small, zs.workload.uniform(drive_writes=1), seed=1)


def test_report_counters_are_consistent(report):
    assert isinstance(report, zs.Report)
    assert report.waf >= 1
    progs = report.flash.programs_by_cause
    assert report.flash.programs == progs.host + progs.gc
    assert progs.host == report.host.write_pages
    assert report.gc.pages_copied == progs.gc
    assert report.waf == pytest.approx(report.flash.programs / report.host.write_pages)
    assert report.gc.pages_copied > 0 and report.flash.erases > 0
    assert report.wear.erase_min <= report.wear.erase_mean <= report.wear.erase_max
    assert report.precondition.host_write_pages > 0
    assert report.device.logical_pages == report.host.write_pages  # drive_writes=1
    assert report.run.interrupted is False and report.run.progress == 1.0


def test_report_access_styles(report):
    assert report["gc"]["pages_copied"] == report.gc.pages_copied
    assert report.raw["gc"]["pages_copied"] == report.gc.pages_copied
    assert report.run.config.gc.policy == "greedy" == report.policy
    with pytest.raises(AttributeError, match="no field"):
        report.gc.nonexistent  # noqa: B018
    with pytest.raises(AttributeError):
        report.waf = 2
    with pytest.raises(AttributeError):
        report.gc.pages_copied = 0
    copy = report.to_dict()
    copy["waf"] = -1
    assert report.waf != -1
    assert json.loads(report.to_json()) == report.raw
    assert pickle.loads(pickle.dumps(report)) == report
    assert zs.Report.from_json(report.to_json()) == report


def test_to_row_is_flat_scalars(report):
    row = report.to_row("mine")
    assert next(iter(row)) == "label" and row["label"] == "mine"
    assert report.to_row()["label"] == "greedy"
    assert row["waf"] == report.waf
    assert row["gc.pages_copied"] == report.gc.pages_copied
    assert row["flash.programs_by_cause.gc"] == report.flash.programs_by_cause.gc
    assert row["precondition.waf"] == report.precondition.waf
    assert row["config.gc.policy"] == "greedy"
    assert row["run.seed"] == 1
    assert all(not isinstance(v, dict | list | tuple) for v in row.values())
    assert not any(k.startswith("series") for k in row)


def test_series_frame(report):
    frame = report.series_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) > 10
    for col in ("drive_writes", "host_write_pages", "waf_interval", "waf_cumulative"):
        assert col in frame.columns
    assert frame["host_write_pages"].is_monotonic_increasing
    assert frame["waf_cumulative"].iloc[-1] == pytest.approx(report.waf, rel=0.05)


def test_same_seed_is_byte_identical_and_seeds_differ(small):
    w = zs.workload.uniform(drive_writes=0.5)
    a = zs.simulate(small, w, seed=7, reproducible=True)
    b = zs.simulate(small, w, seed=7, reproducible=True)
    c = zs.simulate(small, w, seed=8, reproducible=True)
    assert a.to_json() == b.to_json()
    assert a.run.wall_s is None
    assert c.to_json() != a.to_json()
    assert c.gc.pages_copied != a.gc.pages_copied


def test_spec_string_and_workload_object_agree(small):
    a = zs.simulate(small, "hotcold:r=0.8,f=0.2,drive_writes=0.3", seed=2, reproducible=True)
    b = zs.simulate(
        small, zs.workload.hotcold(r=0.8, f=0.2, drive_writes=0.3), seed=2, reproducible=True
    )
    assert a.to_json() == b.to_json()


def test_verify_runs_clean(small):
    rep = zs.simulate(small, "uniform:drive_writes=0.5,read=0.2,trim=0.05", seed=4, verify=True)
    assert rep.run.verified is True
    assert rep.host.read_pages > 0 and rep.host.trim_pages > 0


def test_progress_false_returns_an_interrupted_report(small):
    calls = []

    def stop_in_measure(phase, fraction, write_pages):
        calls.append((phase, fraction, write_pages))
        return phase != "measure"

    rep = zs.simulate(small, "uniform:drive_writes=200", progress=stop_in_measure)
    assert rep.run.interrupted is True and rep.interrupted
    assert 0 <= rep.run.progress < 1
    assert calls[-1][0] == "measure"
    assert all(p in ("precondition", "measure") for p, _, _ in calls)
    assert rep.host.write_pages < 200 * rep.device.logical_pages


def test_progress_false_at_once(small):
    rep = zs.simulate(small, "uniform:drive_writes=200", progress=lambda *a: False)
    assert rep.run.interrupted is True and rep.run.progress == 0


def test_keyboard_interrupt_raises_simulation_interrupted(small):
    def ctrl_c(phase, fraction, write_pages):
        raise KeyboardInterrupt

    with pytest.raises(zs.SimulationInterrupted) as info:
        zs.simulate(small, "uniform:drive_writes=200", progress=ctrl_c)
    assert isinstance(info.value, KeyboardInterrupt)
    assert info.value.report.run.interrupted is True


def test_callback_exceptions_propagate(small):
    def broken(phase, fraction, write_pages):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        zs.simulate(small, "uniform:drive_writes=200", progress=broken)


def test_default_config_is_the_default_preset():
    rep = zs.simulate(None, "uniform:requests=1000", reproducible=True)
    assert rep.device.blocks == zs.Config().geometry["blocks"]


def test_analytic_wa_is_exposed():
    assert zs.analytic_wa("greedy", 1.07, 256) == pytest.approx(7.6, abs=0.1)
    assert zs.analytic_wa("cost-benefit", 1.07, 256) is None


def test_simulate_many_starts_the_oracle_first_and_returns_the_order_given(small):
    """The oracle's envelope runs 21 simulations: it starts first, so that it does not run
    alone at the end; the reports still come back in the order the runs were given."""
    started: list[str] = []

    def progress(label, phase, fraction, pages):
        if label not in started:
            started.append(label)

    workload = "hotcold:r=0.8,f=0.2,drive_writes=0.2"
    runs = {
        "greedy": (small.scheme("gc-gd"), workload),
        "oracle": (small.scheme("oracle"), workload),
        "cost-benefit": (small.scheme("gc-cb"), workload),
    }
    reports = zs.simulate_many(runs, jobs=1, progress=progress, reproducible=True)
    assert list(reports) == ["greedy", "oracle", "cost-benefit"]
    assert started == ["oracle", "greedy", "cost-benefit"]
    assert reports["oracle"].raw["oracle"] is not None


def _vma_device() -> zs.Config:
    return zs.Config.preset("vma-journaling").override({"flash.blocks_per_plane": 2048})


def test_simulate_many_ages_each_device_once_and_changes_no_report(small):
    """Runs that differ only on the host side (journaling modes, notification channels,
    workloads) start from one preconditioned device; every report is byte-identical to
    the run's own preconditioning."""
    fs = "fs:postmark,files=100,transactions=400,vms=4,memory=6MiB"
    hot = "hotcold:r=0.8,f=0.2,drive_writes=0.2"
    runs = {f"fs/{m}": (_vma_device(), f"{fs},journal={m}") for m in ("writeback", "vma")}
    for mode in ("ideal", "piggyback"):
        marks = {"gc.policy": "z-greedy", "host.buffer": "1MiB", "notify.mode": mode}
        runs[f"zgc/{mode}"] = (small.override(marks), hot)
    runs["gc-gd"] = (small.scheme("gc-gd"), hot)
    shared = zs.simulate_many(runs, jobs=1, reproducible=True)
    alone = zs.simulate_many(runs, jobs=2, reproducible=True, share_preconditioning=False)
    assert list(shared) == list(runs)
    for label in runs:
        assert shared[label].to_json() == alone[label].to_json(), label


def test_a_precondition_cache_serves_only_devices_configured_alike(small):
    """The binding's cache, by hand: alike devices hit, a changed device key misses, a
    preconditioning that replays the workload is never kept, an empty budget keeps
    nothing and changes no report."""
    from zombiesim import _core, api

    def run(cfg, workload, cache):
        opts = api._RunOptions(1, reproducible=True)
        return api._simulate(cfg, workload, opts, api._Watch(None), cache)

    hot = "hotcold:r=0.8,f=0.2,drive_writes=0.1"
    cache = _core.PreconditionCache(1 << 30)
    first = run(small, hot, cache)
    again = run(small.override({"notify.mode": "command", "stats.series_points": 7}), hot, cache)
    assert cache.stats()["hits"] == 1 and cache.stats()["misses"] == 1
    assert again.waf == first.waf
    run(small.override({"gc.policy": "cost-benefit"}), hot, cache)
    run(small.override({"ftl.over_provisioning": 0.2}), hot, cache)
    stats = cache.stats()
    assert (stats["hits"], stats["misses"], stats["devices"]) == (1, 3, 3)
    assert stats["bytes"] > 0
    replay = {"precondition.pattern": "workload", "precondition.random_drive_writes": 1}
    own = small.override(replay)
    run(own, hot, cache)
    run(own, hot, cache)
    assert cache.stats()["hits"] == 1 and cache.stats()["misses"] == 3
    empty = _core.PreconditionCache(0)
    assert run(small, hot, empty).to_json() == first.to_json()
    assert run(small, hot, empty).to_json() == first.to_json()
    assert empty.stats() == {"hits": 0, "misses": 2, "devices": 0, "bytes": 0}


def test_runs_aging_one_device_wait_for_its_first_copy(small):
    """`simulate_many` groups runs by the device they age (the binding's key), so that
    a cache with room for as many devices as there are workers ages each device once,
    where the order given (every run after another device's) would age one per run;
    the reports are the runs' own."""
    from zombiesim import _core, api

    hot = "hotcold:r=0.8,f=0.2,drive_writes=0.05"
    devices = {
        "greedy": small,
        "cb": small.override({"gc.policy": "cost-benefit"}),
        "op": small.override({"ftl.over_provisioning": 0.2}),
    }
    runs = {
        f"{w}/{d}": (cfg.override({"notify.mode": "command"}) if w == "b" else cfg, hot)
        for w in ("a", "b", "c")
        for d, cfg in devices.items()
    }
    key = _core.PreconditionCache.key
    assert key(small.core, 1, False) == key(runs["b/greedy"][0].core, 1, False)
    assert key(small.core, 1, False) != key(devices["cb"].core, 1, False)
    assert key(small.core, 1, False) != key(small.core, 2, False)
    # A device aged with the workload's own writes is never kept: no key.
    own = small.override(
        {"precondition.pattern": "workload", "precondition.random_drive_writes": 1}
    )
    assert key(own.core, 1, False) is None
    prepared = {k: (zs.Config.coerce(c), s) for k, (c, s) in runs.items()}
    assert api._sharing_order(list(runs), prepared, 1, False, 2) == [
        *("a/greedy", "a/cb", "b/greedy", "b/cb", "c/greedy", "c/cb"),
        *("a/op", "b/op", "c/op"),
    ]
    alone = {k: zs.simulate(c, s, reproducible=True) for k, (c, s) in runs.items()}
    sizes = sorted(_device_bytes(cfg) for cfg in devices.values())
    # Room for one device, then for two: never for all three.
    for jobs, budget in ((1, sizes[2]), (2, sizes[1] + sizes[2])):
        assert sum(sizes) > budget and (jobs == 2 or sizes[0] + sizes[1] > budget)
        cache = zs.PreconditionCache(budget)
        many = zs.simulate_many(runs, jobs=jobs, reproducible=True, share_preconditioning=cache)
        assert list(many) == list(runs)
        for label in runs:
            assert many[label].to_json() == alone[label].to_json(), label
        misses = cache.stats()["misses"]
        # On one worker exactly one per device; on two, a run of a device could in
        # principle start before its first run kept the copy, but never one per run.
        assert misses == 3 if jobs == 1 else misses < len(runs), (jobs, cache.stats())


def _device_bytes(cfg) -> int:
    """What one preconditioned device of `cfg` weighs in a precondition cache."""
    from zombiesim import _core, api

    cache = _core.PreconditionCache(1 << 40)
    api._simulate(cfg, "uniform:drive_writes=0.01", api._RunOptions(1), api._Watch(None), cache)
    return cache.stats()["bytes"]


def test_a_precondition_cache_shared_by_plain_simulate_calls(small):
    """`zs.PreconditionCache` from the public API: two `simulate` calls on one device age it
    once and report as each run alone; a bad value names the key."""
    cache = zs.PreconditionCache("1GiB")
    assert cache.max_bytes == 1 << 30
    hot = "hotcold:r=0.8,f=0.2,drive_writes=0.1"
    a = zs.simulate(small, hot, reproducible=True, precondition_cache=cache)
    b = zs.simulate(small, "uniform:drive_writes=0.1", reproducible=True, precondition_cache=cache)
    assert (cache.stats()["misses"], cache.stats()["hits"]) == (1, 1)
    assert a.to_json() == zs.simulate(small, hot, reproducible=True).to_json()
    assert (
        b.to_json() == zs.simulate(small, "uniform:drive_writes=0.1", reproducible=True).to_json()
    )
    many = zs.simulate_many({"hot": (small, hot)}, reproducible=True, share_preconditioning=cache)
    assert many["hot"].to_json() == a.to_json() and cache.stats()["hits"] == 2
    assert 0 < zs.PreconditionCache().max_bytes <= 4 << 30
    with pytest.raises(zs.ConfigError, match="precondition_cache"):
        zs.simulate(small, hot, precondition_cache="yes")
    with pytest.raises(zs.ConfigError, match="share_preconditioning"):
        zs.simulate_many({"hot": (small, hot)}, share_preconditioning="yes")
    with pytest.raises(zs.ConfigError, match="max_bytes"):
        zs.PreconditionCache("lots")
