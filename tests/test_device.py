"""The device layer from the CLI and the Python API: the write buffer, the scheduler,
bounded GC, and their bad input (exit 2, the key named)."""

from __future__ import annotations

import json

import pytest

import zombiesim as zs

SMALL = {"flash.blocks_per_plane": 64, "precondition.random_drive_writes": 0.5}


def small(**extra) -> zs.Config:
    return zs.Config.preset("default").override({**SMALL, **extra})


def test_buffer_section_and_buffer_programs_through_the_api():
    cfg = small(**{"device.buffer": "4MiB", "timing.enabled": True})
    rep = zs.simulate(cfg, "hotcold:r=0.9,f=0.05,drive_writes=1,read=0.3", seed=3)
    b = rep.buffer
    assert b.capacity_pages == 1024
    assert b.write_hits + b.write_misses == rep.host.write_pages
    assert b.read_hits > 0 and b.write_hits > 0
    assert rep.flash.programs_by_cause.host == 0
    assert rep.flash.programs_by_cause.buffer == b.dirty_evictions + b.flushed_pages
    row = rep.to_row()
    assert row["buffer.write_hits"] == b.write_hits
    plain = zs.simulate(small(**{"timing.enabled": True}), "uniform:drive_writes=0.2", seed=3)
    assert plain.buffer is None
    assert "buffer.write_hits" not in plain.to_row()


def test_schedulers_order_read_latency():
    reads = {}
    for scheduler in ("fifo", "rps", "suspend"):
        rep = zs.simulate(
            small(
                **{
                    "timing.enabled": True,
                    "timing.scheduler": scheduler,
                    "gc.max_victims_per_trigger": 1,
                    "interface.queue_depth": 1,
                    "ftl.allocation": "stripe",
                }
            ),
            "uniform:drive_writes=0.5,read=0.5",
            seed=2,
        )
        reads[scheduler] = rep.latency.read.mean_us
        assert rep.latency.gc_blocked.reads >= 0
    assert reads["fifo"] > 2 * reads["rps"]
    assert reads["rps"] > reads["suspend"]


def test_run_prints_buffer_and_gc_blocked_lines(cli):
    r = cli(
        "run",
        "--preset",
        "default",
        "--set",
        "flash.blocks_per_plane=64",
        "--set",
        "device.buffer=1MiB",
        "--set",
        "timing.enabled=true",
        "--set",
        "timing.scheduler=suspend",
        "--workload",
        "uniform:drive_writes=0.3,read=0.3",
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "buffer " in out and "lru (volatile)" in out
    assert "GC blocked" in out


@pytest.mark.parametrize(
    ("setting", "key"),
    [
        ("device.buffer=2GiB", "device.buffer"),
        ("device.buffer=-5", "device.buffer"),
        ("device.buffer=lots", "device.buffer"),
        ("device.buffer=100", "device.buffer"),
        ("device.buffer_policy=arc", "device.buffer_policy"),
        ("device.buffer_policy=cflru", "device.buffer_policy"),
        ("device.buffer_nonvolatile=true", "device.buffer_nonvolatile"),
        ("timing.suspend_us=-1", "timing.suspend_us"),
        ("timing.scheduler=rps", "timing.scheduler"),
        ("timing.max_suspensions=2", "timing.max_suspensions"),
        ("gc.hard_watermark=0", "gc.hard_watermark"),
        ("device.cflru_window=0", "device.cflru_window"),
    ],
)
def test_bad_device_settings_exit_2_naming_the_key(cli, setting, key):
    r = cli("run", "--preset", "default", "--set", setting, "--workload", "uniform")
    assert r.returncode == 2, r.stderr
    assert f"`{key}`" in r.stderr, r.stderr


def test_bounded_gc_needs_a_hard_watermark_below_low():
    with pytest.raises(zs.ConfigError, match="gc.hard_watermark"):
        zs.simulate(small(**{"gc.max_victims_per_trigger": 1, "gc.hard_watermark": 2}), "uniform")


def test_the_buffer_is_deterministic():
    cfg = small(**{"device.buffer": "2MiB", "timing.enabled": True, "timing.scheduler": "rps"})
    a = zs.simulate(cfg, "uniform:drive_writes=0.3,read=0.3", seed=9, reproducible=True)
    b = zs.simulate(cfg, "uniform:drive_writes=0.3,read=0.3", seed=9, reproducible=True)
    assert a.to_json() == b.to_json()
    assert json.loads(a.to_json())["buffer"]["capacity_pages"] == 512
