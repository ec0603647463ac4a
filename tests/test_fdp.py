"""NVMe FDP from the CLI and the Python API: the preset, the per-handle report, the
`streams` and `kvcache` workloads that name placement identifiers, the refusals, and
`reproduce fdp` at the tiny scale (docs/fdp.md)."""

from __future__ import annotations

import pytest

import zombiesim as zs

SMALL = {"flash.blocks_per_plane": 256, "flash.pages_per_block": 64}


def fdp(**settings):
    return zs.Config.preset("fdp").override({**SMALL, **settings})


def test_the_report_books_each_handle_and_the_log_adds_up():
    rep = zs.simulate(fdp(), "kvcache:soc=0.2,soc_writes=0.3,drive_writes=2", reproducible=True)
    f = rep["fdp"]
    handles = f["handles"]
    assert len(handles) == 8 and f["isolation"] == "initial"
    soc, loc = handles[0], handles[1]
    assert soc["host_pages"] > 0 and loc["host_pages"] > 0
    assert all(h["host_pages"] == 0 and h["waf"] is None for h in handles[2:])
    # The log's WAF over the handles' host pages is the report's.
    log = f["log"]
    page = rep["device"]["page_size"]
    assert log["host_bytes_with_metadata_written"] == rep["host"]["write_pages"] * page
    assert log["media_bytes_with_metadata_written"] / log["host_bytes_with_metadata_written"] == (
        pytest.approx(rep["waf"])
    )
    assert f["events"]["invalid_placement_identifier"] == 0
    assert f["events"]["media_relocated"] > 0
    # Without FDP the same workload's writes land on the default handle.
    off = zs.simulate(
        fdp(), "kvcache:soc=0.2,soc_writes=0.3,hints=false,drive_writes=2", reproducible=True
    )
    assert off["fdp"]["handles"][0]["host_pages"] == rep["host"]["write_pages"]


def test_cli_runs_the_preset_and_prints_the_handles(cli):
    proc = cli(
        "run", "--preset", "fdp", "--set", "flash.blocks_per_plane=256",
        "--set", "flash.pages_per_block=64", "--set", "fdp.isolation=persistent",
        "--set", "fdp.handles=3", "--set", "gc.low_watermark=4", "--set", "gc.high_watermark=4",
        "-w", "streams:drive_writes=1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "persistently isolated" in proc.stdout
    for h in ("handle 0:", "handle 1:", "handle 2:"):
        assert h in proc.stdout


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"ftl.kind": "fast"}, "fdp.enabled"),
        ({"gc.scope": "die"}, "gc.scope"),
        ({"fdp.isolation": "persistent"}, "gc.low_watermark"),
        ({"fdp.reclaim_groups": 3}, "fdp.reclaim_groups"),
    ],
)
def test_combinations_fdp_cannot_run_are_refused_naming_the_key(settings, key):
    with pytest.raises(zs.ConfigError) as e:
        fdp(**settings)
    assert key in str(e.value)


HOST = {"host.cache": "64MiB", "timing.enabled": True}


def handle_pages(rep):
    return [h["host_pages"] for h in rep["fdp"]["handles"]]


def test_the_writers_identifiers_pass_through_the_host_cache():
    """`host.placement = writer`: each dirty page keeps its writer's identifier and
    its writeback carries it, so the kvcache's two handles fill as on the direct path."""
    work = "kvcache:soc=0.2,soc_writes=0.3,drive_writes=1"
    rep = zs.simulate(fdp(**HOST, **{"host.placement": "writer"}), work, reproducible=True)
    soc, loc = handle_pages(rep)[:2]
    assert soc > 0 and loc > 0 and sum(handle_pages(rep)[2:]) == 0
    assert rep["fdp"]["events"]["invalid_placement_identifier"] == 0
    # The cache absorbs overwrites, so the handles see what was written back.
    assert soc + loc == rep["host"]["write_pages"]
    # Without identifiers every page goes to the default handle.
    off = zs.simulate(fdp(**HOST), work.replace("kvcache:", "kvcache:hints=false,"))
    assert handle_pages(off)[0] == off["host"]["write_pages"]


def test_the_fs_models_kinds_go_to_their_own_handles():
    """`host.placement = kind`: data to handle 0, metadata 1, journal 2; the journal's
    handle receives exactly the journal blocks the file systems wrote."""
    cfg = fdp(**HOST, **{"host.placement": "kind"})
    rep = zs.simulate(cfg, "fs:postmark,journal=journal,vms=2,transactions=300", reproducible=True)
    data, meta, journal = handle_pages(rep)[:3]
    assert data > 0 and meta > 0 and sum(handle_pages(rep)[3:]) == 0
    assert (
        journal
        == rep["fs"]["journal_blocks"] * rep["fs"]["block_bytes"] // (rep["device"]["page_size"])
    )


def test_files_spread_over_the_handles():
    cfg = fdp(**HOST, **{"host.placement": "file", "host.file_size": "256MiB", "fdp.handles": 4})
    rep = zs.simulate(cfg, "uniform:drive_writes=0.3", reproducible=True)
    assert all(p > 0 for p in handle_pages(rep)[:4])


@pytest.mark.parametrize(
    ("settings", "workload", "key"),
    [
        # A source with identifiers above a host layer that would drop them.
        (HOST, "streams:drive_writes=0.1", "host.placement"),
        ({"host.buffer": "16MiB"}, "streams:drive_writes=0.1", "host.buffer"),
        # host.placement where nothing gives or reads identifiers.
        ({**HOST, "host.placement": "writer"}, "uniform:drive_writes=0.1", "host.placement"),
        ({**HOST, "host.placement": "kind"}, "uniform:drive_writes=0.1", "host.placement"),
        ({**HOST, "host.placement": "file"}, "uniform:drive_writes=0.1", "host.placement"),
        ({**HOST, "host.placement": "writer", "fdp.enabled": False}, "streams", "host.placement"),
        ({"host.placement": "kind"}, "uniform:drive_writes=0.1", "host.placement"),
    ],
)
def test_identifiers_that_would_be_lost_or_unread_are_refused(settings, workload, key):
    with pytest.raises(zs.ConfigError) as e:
        zs.simulate(fdp(**settings), workload)
    assert key in str(e.value)


def test_workload_builders():
    assert str(zs.workload.kvcache(soc=0.04)) == "kvcache:soc=0.04"
    assert str(zs.workload.streams(seq=0.8)) == "streams:seq=0.8"
    with pytest.raises(zs.WorkloadError) as e:
        zs.simulate(fdp(), "kvcache:soc=1")
    assert "soc" in str(e.value)


def test_reproduce_fdp_tiny(tmp_path):
    rep = zs.reproduce.run("fdp", scale="tiny", jobs=2)
    frame = rep.claims_frame()
    assert len(frame) == 13
    assert {"runs", "soc_model", "sensitivity", "op_ablation", "joined"} <= set(rep.tables)
    # FDP cuts the KV cache's WAF at full utilisation, and its amplification stays small.
    row = frame[frame.metric == "WAF with FDP vs without, 100% utilisation"].iloc[0]
    assert row.verdict in ("met", "direction-only")
    # Placement joined with zombie awareness: perfect hot/cold placement helps greedy
    # under PI, z-greedy still helps on top of it, and the oracle bounds z-greedy.
    j = rep.tables["joined"].set_index(["device", "scheme"]).waf
    assert j["persistent", "gc-gd"] < 0.9 * j["nofdp", "gc-gd"]
    assert j["persistent", "zgc-gd-nz"] < 0.9 * j["persistent", "gc-gd"]
    for dev in ("nofdp", "initial", "persistent"):
        assert j[dev, "oracle"] <= j[dev, "zgc-gd-nz"]
    written = rep.write(tmp_path)
    assert (tmp_path / "report.html") in written
    assert (tmp_path / "joined.csv") in written
    # Each claim not met says why, with the docs section, in claims.csv and on the page.
    from test_reproduce import assert_reasons, read_claims

    page = (tmp_path / "report.html").read_text()
    assert_reasons(read_claims(tmp_path / "claims.csv"), page=page)


def test_the_op10_claim_is_explained_by_ii_as_warps_emulator_runs_it():
    """`isolation_op` on the small scale's figures (docs/fdp.md): our II matched on GC
    pressure gives -4.5% (outside 2x of WARP's -11.7%); II with its GC copies in the
    last handle's RU, as FEMU's FDP FTL does, gives -9.8% at OP 9.5%, and explains the
    claim; with neither within 2x there is no explanation."""
    from zombiesim.reproduce import fdp

    ops = (0.05, 0.06, 0.07, 0.08, 0.085, 0.09, 0.095, 0.10)
    ii = (2.061, 2.101, 1.651, 1.498, 1.468, 1.363, 1.133, 1.065)
    pi = (1.981, 1.839, 1.454, 1.363, 1.329, 1.302, 1.110, 1.065)
    femu = (2.228, 2.245, 1.916, 1.815, 1.794, 1.475, 1.230, 1.093)
    waf = {}
    for op, a, b, c in zip(ops, ii, pi, femu, strict=True):
        key = "streams" if op in fdp.PAPER_ISOLATION else "opsweep"
        waf[f"{key}/{op:g}/initial"], waf[f"{key}/{op:g}/persistent"] = a, b
        waf[f"femuii/{op:g}"] = c
    table, note = fdp._isolation_op(waf, "small")
    assert list(table.op) == list(ops)
    assert "9.5%" in note and "FEMU" in note and "-9.8%" in note, note
    # Without the emulator's gap (its II as ours), nothing explains the claim.
    for op, a in zip(ops, ii, strict=True):
        waf[f"femuii/{op:g}"] = a
    assert fdp._isolation_op(waf, "small")[1] == ""
