"""What exists in this build: presets, schemes, workloads, victim policies, FTL kinds."""

from __future__ import annotations

from typing import NamedTuple

from . import _core

__all__ = [
    "Preset",
    "Scheme",
    "WorkloadInfo",
    "ftl_kinds",
    "policies",
    "preset_toml",
    "presets",
    "schemes",
    "workload_common_keys",
    "workloads",
]


class Preset(NamedTuple):
    name: str
    description: str


class Scheme(NamedTuple):
    name: str
    description: str
    #: dotted key -> value as TOML text, in the order the scheme sets them
    settings: dict[str, str]


class WorkloadInfo(NamedTuple):
    name: str
    #: the workload's own keys with their defaults, e.g. "r=0.9, f=0.1"
    keys: str
    description: str


def presets() -> list[Preset]:
    """Every built-in preset, for `Config.preset(name)`."""
    return [Preset(n, d) for n, d in _core.presets()]


def preset_toml(name: str) -> str:
    """A preset's TOML source (with its comments); unknown names raise `ConfigError`."""
    return _core.preset_toml(name)


def schemes() -> list[Scheme]:
    """Every scheme, for `Config.scheme(name)` / `compare(schemes=...)`."""
    return [Scheme(n, d, dict(s)) for n, d, s in _core.schemes()]


def workloads() -> list[WorkloadInfo]:
    """Every synthetic workload generator (see also `workload_common_keys()`)."""
    return [WorkloadInfo(*w) for w in _core.workloads()]


def workload_common_keys() -> str:
    """The keys every workload accepts."""
    return _core.workload_common_keys()


def policies() -> list[str]:
    """Every victim policy's syntax, e.g. `d-choices:D` (D = sample size)."""
    return list(_core.policies())


def ftl_kinds() -> list[str]:
    """Every FTL kind's name (`ftl.kind`), e.g. `page`, `dftl`."""
    return list(_core.ftl_kinds())
