import json
import pickle
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zombiesim as zs


def test_preset_defaults():
    cfg = zs.Config.preset("default")
    assert cfg == zs.Config()
    assert cfg.get("gc.policy") == "greedy"
    assert cfg.get("ftl.over_provisioning") == pytest.approx(0.07)
    assert cfg.get("flash")["pages_per_block"] == 256
    assert isinstance(cfg.description, str) and cfg.description
    geo = cfg.geometry
    assert geo["physical_pages"] == geo["blocks"] * geo["pages_per_block"]
    assert geo["logical_pages"] < geo["physical_pages"]


def test_override_returns_new_config_and_converts_values():
    base = zs.Config.preset("default")
    cfg = base.override(
        {
            "gc.policy": "d-choices:10",
            "flash.page_size": "16KiB",
            "ftl.over_provisioning": 0.28,
            "flash.blocks_per_plane": 64,
            "precondition.fill": False,
        }
    )
    assert base.get("gc.policy") == "greedy"  # unchanged
    assert cfg.get("gc.policy") == "d-choices:10"
    assert cfg.get("flash.page_size") == 16384
    assert cfg.get("ftl.over_provisioning") == pytest.approx(0.28)
    assert cfg.get("flash.blocks_per_plane") == 64
    assert cfg.get("precondition.fill") is False
    assert cfg != base
    assert base.override({}) is base
    assert base.override([("gc.policy", "fifo")]).policy == "fifo"


def test_scheme_then_override_order():
    cfg = zs.Config.preset("default").scheme("cost-benefit")
    assert cfg.get("gc.policy") == "cost-benefit"
    assert cfg.override({"gc.policy": "fifo"}).get("gc.policy") == "fifo"


def test_config_is_immutable():
    cfg = zs.Config()
    with pytest.raises(AttributeError):
        cfg.foo = 1


def test_toml_round_trip_equality_and_hash(tmp_path):
    cfg = zs.Config.preset("default").override({"gc.policy": "fifo", "flash.blocks_per_plane": 64})
    again = zs.Config.from_toml(cfg.to_toml())
    assert again == cfg and hash(again) == hash(cfg)
    path = tmp_path / "c.toml"
    path.write_text(cfg.to_toml())
    assert zs.Config.load(path) == cfg
    assert cfg.to_dict()["gc"]["policy"] == "fifo"
    assert len({cfg, again, zs.Config()}) == 2


def test_pickle_round_trip():
    cfg = zs.Config.preset("default").override({"gc.policy": "random"})
    back = pickle.loads(pickle.dumps(cfg))
    assert back == cfg and back.get("gc.policy") == "random"
    assert isinstance(back, zs.Config)


def _waf_in_child(cfg: zs.Config) -> float:
    return zs.simulate(cfg, "uniform:drive_writes=0.2", seed=3, reproducible=True).waf


def test_config_crosses_a_process_pool(small):
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        child = pool.submit(_waf_in_child, small).result(timeout=60)
    assert child == _waf_in_child(small)


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"gc.polcy": "greedy"}, "gc.polcy"),  # unknown key
        ({"gc.policy": "bogus"}, "gc.policy"),  # bad value
        ({"flash.pages_per_block": "abc"}, "flash.pages_per_block"),  # wrong type
        ({"flash.blocks_per_plane": 1}, "ftl.over_provisioning"),  # impossible geometry
        ({"ftl.over_provisioning": 0}, "ftl.over_provisioning"),  # OP must be > 0
        ({"ftl.over_provisioning": -0.1}, "ftl.over_provisioning"),
    ],
)
def test_bad_settings_name_the_key(settings, key):
    with pytest.raises(zs.ConfigError) as info:
        zs.Config().override(settings)
    err = info.value
    assert f"`{key}`" in str(err)
    assert err.exit_code == 2 and err.kind == "config"
    assert isinstance(err, zs.ZombiesimError) and isinstance(err, ValueError)


def test_unknown_key_suggests_the_right_one():
    with pytest.raises(zs.ConfigError, match="did you mean `gc.policy`"):
        zs.Config().override({"gc.polcy": "greedy"})


def test_unknown_preset_and_scheme():
    with pytest.raises(zs.ConfigError, match="unknown preset `nope`"):
        zs.Config.preset("nope")
    with pytest.raises(zs.ConfigError, match="unknown scheme `nope`"):
        zs.Config().scheme("nope")


def test_load_errors_name_the_file(tmp_path):
    missing = tmp_path / "missing.toml"
    with pytest.raises(zs.InputError, match="missing.toml") as info:
        zs.Config.load(missing)
    assert info.value.exit_code == 2
    bad = tmp_path / "bad.toml"
    bad.write_text('[gc]\npolcy = "greedy"\n')
    with pytest.raises(
        zs.ConfigError, match=r"bad\.toml:2: .*gc\.polcy.*did you mean `gc\.policy`"
    ):
        zs.Config.load(bad)
    broken = tmp_path / "broken.toml"
    broken.write_text("[gc\n")
    with pytest.raises(zs.InputError, match=r"broken\.toml:1"):
        zs.Config.load(broken)


def test_override_rejects_unconvertible_values():
    with pytest.raises(zs.ConfigError, match="gc.policy"):
        zs.Config().override({"gc.policy": object()})


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=0.08, max_value=3.5, allow_nan=False))
def test_float_values_round_trip_exactly(op):
    assert zs.Config().override({"ftl.over_provisioning": op}).get("ftl.over_provisioning") == op


def test_errors_pickle_with_their_attributes():
    with pytest.raises(zs.ConfigError) as info:
        zs.Config().override({"gc.polcy": "greedy"})
    back = pickle.loads(pickle.dumps(info.value))
    assert type(back) is zs.ConfigError
    assert str(back) == str(info.value) and back.exit_code == 2 and back.kind == "config"


# -- keys a preset sets for another FTL -------------------------------------------------------


def test_a_presets_keys_for_another_ftl_are_dropped_with_a_note(cli):
    """`--preset ba-gc --set ftl.kind=page`: the preset's FAST keys are read by nothing
    under page mapping; they go back to their defaults, each with a note. A key the user
    sets is still refused when nothing reads it."""
    proc = cli(
        "run", "--preset", "ba-gc", "--set", "ftl.kind=page",
        "-w", "uniform:drive_writes=0.1,iops=2000",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "note: `ftl.log_blocks = 128` dropped" in proc.stderr
    cfg = zs.Config.preset("ba-gc").override({"ftl.kind": "page"})
    assert cfg.get("ftl.log_blocks") == 0 and len(cfg.notes) == 1
    assert zs.Config.preset("ba-gc").notes == ()
    proc = cli(
        "run", "--preset", "ba-gc", "--set", "ftl.kind=page", "--set", "ftl.log_blocks=64",
        "-w", "uniform:drive_writes=0.1,iops=2000",
    )  # fmt: skip
    assert proc.returncode == 2 and "`ftl.log_blocks`" in proc.stderr


def test_compare_applies_a_set_value_to_the_cells_that_read_it(cli, tmp_path):
    js = tmp_path / "r.json"
    args = ("compare", "--set", "flash.blocks_per_plane=64", "-w", "uniform:drive_writes=0.2")
    proc = cli(
        *args, "--set", "ftl.kind=page,dftl", "--set", "ftl.cmt_entries=4096", "--json", str(js)
    )
    assert proc.returncode == 0, proc.stderr
    assert "ftl.kind=page: `ftl.cmt_entries = 4096` dropped" in proc.stderr
    reports = json.loads(js.read_text())
    assert reports["ftl.kind=dftl"]["run"]["config"]["ftl"]["cmt_entries"] == 4096
    assert reports["ftl.kind=page"]["run"]["config"]["ftl"]["kind"] == "page"
    # A value no cell reads is refused, naming the key.
    proc = cli(*args, "--set", "ftl.kind=page,fast", "--set", "ftl.cmt_entries=4096")
    assert proc.returncode == 2 and "`ftl.cmt_entries`: no run reads it" in proc.stderr


def test_a_misspelt_key_in_a_file_gets_a_hint_on_the_command_line(cli, tmp_path):
    """As `--set` does: one line, the file and line, the nearest key or section."""
    for text, hint in [
        ('[gc]\npolcy = "greedy"\n',
         "bad.toml:2: config key `gc.polcy`: unknown key (did you mean `gc.policy`?)"),
        ('[timming]\nenabled = true\n', "did you mean `timing`?"),
    ]:  # fmt: skip
        (tmp_path / "bad.toml").write_text(text)
        proc = cli("run", "--config", str(tmp_path / "bad.toml"), "-w", "uniform")
        assert proc.returncode == 2 and hint in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
