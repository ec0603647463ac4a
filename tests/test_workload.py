import pytest
from hypothesis import given
from hypothesis import strategies as st

import zombiesim as zs
from zombiesim import workload


def test_builders_make_specs():
    assert str(workload.uniform()) == "uniform"
    assert str(workload.uniform(drive_writes=2)) == "uniform:drive_writes=2"
    w = workload.hotcold(r=0.9, f=0.1, drive_writes=3)
    assert str(w) == "hotcold:r=0.9,f=0.1,drive_writes=3"
    assert w.name == "hotcold" and w.params == {"r": "0.9", "f": "0.1", "drive_writes": "3"}
    assert str(workload.zipf(theta=0.8, scramble=False)) == "zipf:theta=0.8,scramble=false"
    assert str(workload.sequential(start=10, bytes="1MiB")) == "sequential:start=10,bytes=1MiB"
    assert str(workload.locality(x=6, read=0.5)) == "locality:x=6,read=0.5"
    w = workload.footprint(growth=0.3, phase="256MiB", pause=0.5, iops=1000)
    assert str(w) == "footprint:growth=0.3,phase=256MiB,pause=0.5,iops=1000"


def test_parse_and_equality():
    w = workload.parse("hotcold:r=0.9,f=0.1")
    assert w == workload.hotcold(r=0.9, f=0.1)
    assert workload.parse(w) is w
    assert isinstance(w, zs.Workload)


def test_workload_is_frozen_and_hashable():
    w = workload.uniform()
    with pytest.raises(AttributeError):
        w.spec = "zipf"
    assert len({w, workload.uniform(), workload.zipf()}) == 2


def test_replace_swaps_the_length_key():
    w = workload.hotcold(r=0.8, drive_writes=3)
    assert str(w.replace(requests=100)) == "hotcold:r=0.8,requests=100"
    assert str(w.replace(r=0.7)) == "hotcold:r=0.7,drive_writes=3"
    assert str(w.replace(r=None)) == "hotcold:drive_writes=3"


@pytest.mark.parametrize(
    ("build", "needle"),
    [
        (lambda: workload.uniform(foo=1), "unknown key `foo`"),
        (lambda: workload.hotcold(r=2), "r = 2"),
        (lambda: workload.footprint(growth=2), "growth = 2"),
        (lambda: workload.footprint(window=0), "window = 0"),
        (lambda: workload.uniform(iops=0), "iops = 0"),
        (lambda: workload.parse("bogus:x=1"), "unknown workload `bogus`"),
        (lambda: workload.uniform(drive_writes=1, requests=5), "at most one"),
        (lambda: workload.parse("uniform:drive_writes"), "not `key=value`"),
    ],
)
def test_bad_workloads_fail_at_construction(build, needle):
    with pytest.raises(zs.WorkloadError, match=needle) as info:
        build()
    assert info.value.exit_code == 2


def test_simulate_rejects_bad_spec_strings(small):
    with pytest.raises(zs.WorkloadError, match="unknown key `colour`"):
        zs.simulate(small, "uniform:colour=blue")


@given(
    r=st.floats(min_value=0, max_value=1, allow_nan=False),
    f=st.floats(min_value=0.01, max_value=1, exclude_max=True, allow_nan=False),
)
def test_hotcold_params_round_trip(r, f):
    w = workload.hotcold(r=r, f=f)
    assert float(w.params["r"]) == r and float(w.params["f"]) == f
    assert workload.parse(str(w)) == w
