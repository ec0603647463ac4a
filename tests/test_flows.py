"""Multi-queue flows (docs/timing.md): each flow with its own submission queue, the
arbiter among them, per-flow latency, slowdown against running alone and fairness, from
the CLI and the Python API; the bad inputs."""

from __future__ import annotations

import json

import pytest

import zombiesim as zs

SMALL = {"flash.blocks_per_plane": 64, "timing.enabled": True}


def timed(**settings):
    return zs.Config.preset("default").override({**SMALL, **settings})


def test_run_reports_each_flow_its_slowdown_and_the_fairness(cli):
    proc = cli(
        "run", "--set", "flash.blocks_per_plane=64", "--set", "timing.enabled=true",
        "--workload", "flows:a=randread:qd=1:requests=2000,b=randwrite:qd=16:requests=4000",
        "--json", "-",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    f = rep["flows"]
    assert f["arbitration"] == "rr" and [x["name"] for x in f["flows"]] == ["a", "b"]
    a, b = f["flows"]
    assert a["queue_depth"] == 1 and b["queue_depth"] == 16
    assert a["latency"]["read"]["count"] == a["requests"] > 0
    assert b["latency"]["write"]["count"] == b["requests"] > 0
    assert a["share"] + b["share"] == pytest.approx(1.0)
    # The whole run's latency is the flows' together.
    assert rep["latency"]["all"]["count"] == a["requests"] + b["requests"]
    slow = [a["slowdown"], b["slowdown"]]
    assert f["fairness"] == pytest.approx(min(slow) / max(slow))
    # Each slows the other: reads wait behind queued writes, and under the default
    # preset's `suspend` scheduler every read suspends the program it finds running.
    assert a["slowdown"] > 1.5 and b["slowdown"] > 1.5, (a["slowdown"], b["slowdown"])
    text = cli(
        "run", "--set", "flash.blocks_per_plane=64", "--set", "timing.enabled=true",
        "--workload", "flows:a=randread:qd=1:requests=2000,b=randwrite:qd=16:requests=4000",
    ).stdout  # fmt: skip
    assert "fairness" in text and "a: qd 1" in text and "slowdown" in text


def test_a_readers_slowdown_rises_with_its_co_runners_intensity():
    # MQSim's paper (Fig. 7): a latency-sensitive flow slows down as the co-runner's
    # queue deepens.
    slowdowns = []
    for qd in (1, 4, 32):
        rep = zs.simulate(
            timed(),
            f"flows:a=randread:qd=1:requests=1500,b=randwrite:qd={qd}:requests=6000",
            reproducible=True,
        )
        slowdowns.append(rep.flows["flows"][0]["slowdown"])
    assert slowdowns[0] < slowdowns[1] < slowdowns[2], slowdowns
    assert slowdowns[2] > 2 * slowdowns[0], slowdowns


def test_weighted_round_robin_gives_the_heavier_flow_the_larger_share():
    # Both flows keep 32 writes waiting; the controller takes 4 at a time, so the
    # arbiter decides every command: high (4) against low (1).
    spec = (
        "flows:a=randwrite:qd=32:class=high:requests=8000,b=randwrite:qd=32:class=low:requests=8000"
    )
    cfg = timed(**{"interface.arbitration": "wrr", "interface.queue_depth": 4})
    rep = zs.simulate(cfg, spec, reproducible=True)
    a, b = rep.flows["flows"]
    assert (a["weight"], b["weight"]) == (4, 1)
    assert a["share"] > 0.7 and b["share"] < 0.3, (a["share"], b["share"])
    assert a["latency"]["all"]["mean_us"] < b["latency"]["all"]["mean_us"]
    # Round robin shares them evenly.
    rr = zs.simulate(
        timed(**{"interface.queue_depth": 4}),
        spec.replace(":class=high", "").replace(":class=low", ""),
        reproducible=True,
    )
    assert rr.flows["flows"][0]["share"] == pytest.approx(0.5, abs=0.02)
    row = rep.to_row()
    assert row["flows.a.share"] == a["share"] and row["flows.fairness"] == rep.flows["fairness"]


def test_compare_gives_each_flow_per_policy(cli, tmp_path):
    out = tmp_path / "cmp.csv"
    proc = cli(
        "compare", "--set", "flash.blocks_per_plane=64", "--set", "timing.enabled=true",
        "--set", "interface.queue_depth=4", "--set", "interface.arbitration=wrr",
        "--policies", "greedy,cost-benefit", "-q",
        "--workload",
        "flows:a=randwrite:qd=32:weight=3:requests=3000,b=randwrite:qd=32:requests=3000",
        "--csv", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    head, *rows = out.read_text().splitlines()
    assert len(rows) == 2
    assert "flows.a.slowdown" in head and "flows.fairness" in head


@pytest.mark.parametrize(
    ("spec", "sets", "needle"),
    [
        ("flows:a=randread:depth=4", [], "flow `a`"),
        ("flows:a=randread:qd=0", [], "flow `a`: qd=0"),
        ("flows:a=randread,b=randwrite:weight=4", [], "flow `b` gives weight"),
        ("flows:a=randread", ["timing.enabled=false"], "timing.enabled"),
        ("flows:a=randread", ["host.cache=64MiB", "host.threads=2"], "host.cache"),
    ],
)
def test_bad_flows_exit_2_with_one_line_naming_the_flow_and_key(cli, spec, sets, needle):
    args = ["run", "--set", "flash.blocks_per_plane=64", "--set", "timing.enabled=true"]
    for s in sets:
        args += ["--set", s]
    proc = cli(*args, "--workload", spec)
    assert proc.returncode == 2, proc.stdout
    assert needle in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_nvme_link_adds_its_time_to_every_command():
    # QD-1 reads on a filled device: with MQSim's link each read takes the doorbell and
    # SQ entry (0.041 µs), its 4 KiB of data (1.248 µs) and the CQ entry (0.011 µs) more.
    cfg = timed(**{"interface.queue_depth": 1, "precondition.random_drive_writes": 0})
    work = "uniform:read=1,requests=500"
    bare = zs.simulate(cfg, work, reproducible=True)["latency"]["read"]["mean_us"]
    link = {
        "interface.submit_us": 0.041,
        "interface.complete_us": 0.011,
        "interface.link_mb_s": 3282.0,
    }
    nvme = zs.simulate(cfg.override(link), work, reproducible=True)["latency"]["read"]["mean_us"]
    # (Means from 3-significant-digit histograms: about 0.03 µs at 55 µs.)
    assert nvme - bare == pytest.approx(0.041 + 1.248 + 0.011, abs=0.05), (bare, nvme)


def test_each_flow_has_its_latency_over_time_and_a_figure():
    rep = zs.simulate(
        timed(), "flows:a=randread:qd=1:requests=3000,b=randwrite:qd=8:requests=6000",
        reproducible=True,
    )  # fmt: skip
    for f in rep.flows["flows"]:
        times = [t for t, _ in f["series"]]
        assert 16 <= len(times) <= 256 and times == sorted(times)
        assert all(us > 0 for _, us in f["series"])
    row = rep.to_row(lists=True)
    assert len(row["flows.a.series_t_s"]) == len(rep.flows["flows"][0]["series"])
    fig = zs.plot.flow_latency(zs.to_frame({"run": rep}, lists=True))
    drawn = zs.plot.drawn(fig)
    assert set(drawn["flow"]) == {"a", "b"} and len(drawn) > 32
    empty = zs.plot.flow_latency(
        zs.to_frame({"run": zs.simulate(timed(), "uniform:requests=100")}, lists=True)
    )
    assert zs.plot.drawn(empty).empty


def test_a_flows_run_is_deterministic():
    spec = "flows:a=randread:qd=2:requests=800,b=zipf:theta=0.9:requests=1600:qd=4"
    a = zs.simulate(timed(), spec, reproducible=True, seed=7).to_json()
    b = zs.simulate(timed(), spec, reproducible=True, seed=7).to_json()
    c = zs.simulate(timed(), spec, reproducible=True, seed=8).to_json()
    assert a == b and a != c
