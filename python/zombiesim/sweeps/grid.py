"""Grid files: what a sweep runs, read from TOML and checked before anything runs.

```toml
preset = "default"                  # or config = "base.toml" (beside the grid file)
workload = "uniform:drive_writes=2" # or trace = {path = "t.csv", format = "msr"}
metrics = ["waf", "flash.erases"]   # the columns the tables show (default: waf, erases, copies)

[set]                               # overrides applied to every cell
"flash.blocks_per_plane" = 64

[axes]                              # the grid: the product of every axis, first axis slowest
scheme = ["gc-gd", "zgc-gd"]        # special axes: scheme, workload, trace, seed
"ftl.over_provisioning" = [0.07, 0.14, 0.28]    # any config key

[[skip]]                            # cells to leave out: every key given must match
scheme = "gc-gd"
"ftl.over_provisioning" = [0.07, 0.14]
reason = "the baseline at the two small OPs is in last week's run"
```

A cell is one deterministic simulation: a resolved `Config`, a source (workload spec or
trace) and a seed. Every error names the grid file and the line of the key at fault.
"""

from __future__ import annotations

import itertools
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import catalog
from .._errors import ConfigError, InputError, WorkloadError, ZombiesimError, make_error
from ..config import Config
from ..trace import TraceInput
from ..workload import parse as parse_workload

__all__ = ["SPECIAL_AXES", "Cell", "Grid", "Skipped", "load_grid"]

#: Axes that are not config keys.
SPECIAL_AXES = ("scheme", "workload", "trace", "seed")

#: The metrics tabulated when the grid names none.
DEFAULT_METRICS = ("waf", "flash.erases", "gc.pages_copied")

_TOP_KEYS = {
    "title",
    "preset",
    "config",
    "scheme",
    "workload",
    "trace",
    "seed",
    "metrics",
    "verify",
    "skip_invalid",
    "set",
    "axes",
    "skip",
}
_TRACE_KEYS = {
    "path",
    "format",
    "device",
    "on_error",
    "remap",
    "limit",
    "time_scale",
    "time_offset",
}


@dataclass(frozen=True)
class Cell:
    """One simulation of the grid."""

    #: The axis values that made this cell, in axis order (what the tables show).
    axes: dict[str, Any]
    config: Config
    #: A workload spec, or a trace.
    source: str | TraceInput
    seed: int

    @property
    def label(self) -> str:
        """`scheme=zgc-gd · ftl.over_provisioning=0.14` (the axis values)."""
        return _label(self.axes)

    @property
    def short_label(self) -> str:
        """`zgc-gd · 0.14`: the axis values alone, what plots name the cell by."""
        return " · ".join(_show(v) for v in self.axes.values()) or "base"

    def axes_json(self) -> dict[str, Any]:
        return _axes_json(self.axes)


@dataclass(frozen=True)
class Skipped:
    axes: dict[str, Any]
    reason: str

    def axes_json(self) -> dict[str, Any]:
        return _axes_json(self.axes)


def _label(axes: Mapping[str, Any]) -> str:
    return " · ".join(f"{k}={_show(v)}" for k, v in axes.items()) or "base"


def _axes_json(axes: Mapping[str, Any]) -> dict[str, Any]:
    """Axis values as the tables and files show them (a trace by its file name)."""
    return {k: _show(v) if isinstance(v, TraceInput) else v for k, v in axes.items()}


@dataclass
class Grid:
    """A checked grid: its cells (in order) and the cells its filters left out."""

    path: str
    text: str
    title: str
    axes: list[str]
    metrics: list[str]
    cells: list[Cell]
    skipped: list[Skipped] = field(default_factory=list)
    verify: bool = False
    #: The base configuration (before axes), for the report's run section.
    base: Config | None = None


def _show(value: Any) -> str:
    if isinstance(value, TraceInput):
        return Path(value.path).name
    return str(value)


class _Source:
    """The grid file's text, for error messages that name the line of a key."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.lines = text.splitlines()

    def line_of(self, section: str | None, key: str | None = None) -> int | None:
        """The line (1-based) of `key` in `[section]` (`None`: the top level); without a
        key, the section's header. The first `[[section]]` table when it repeats."""
        current: str | None = None
        header = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
        for number, line in enumerate(self.lines, 1):
            m = header.match(line)
            if m:
                current = m.group(1).strip().strip('"')
                if key is None and current == section:
                    return number
                continue
            if key is not None and current == section:
                stripped = line.lstrip()
                for quoted in (f'"{key}"', f"'{key}'", key):
                    if stripped.startswith(quoted) and stripped[len(quoted) :].lstrip()[:1] == "=":
                        return number
        return None

    def error(
        self,
        message: str,
        section: str | None = None,
        key: str | None = None,
        cls: type[ZombiesimError] = ConfigError,
    ) -> ZombiesimError:
        line = self.line_of(section, key)
        where = f"{self.path}:{line}" if line else self.path
        return make_error(cls, f"{where}: {message}", "config")


def load_grid(grid: str | os.PathLike[str] | Mapping[str, Any]) -> Grid:
    """Read and check a grid: a path to a TOML file, TOML text (a string holding a newline
    or `=`), or a dict shaped like the file. Raises `ConfigError`/`InputError` naming the
    file and line (or the key) at fault."""
    if isinstance(grid, Mapping):
        return _build(dict(grid), "<grid>", "", Path.cwd())
    text_given = isinstance(grid, str) and ("\n" in grid or "=" in grid)
    if text_given:
        path, text, base_dir = "<grid>", str(grid), Path.cwd()
    else:
        path = os.fspath(grid)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise make_error(InputError, f"cannot read grid `{path}`: {reason}", "io") from e
        base_dir = Path(path).resolve().parent
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise make_error(InputError, f"{path}: {e}", "config") from None
    return _build(data, path, text, base_dir)


def _build(data: dict[str, Any], path: str, text: str, base_dir: Path) -> Grid:
    src = _Source(path, text)
    for key in data:
        if key not in _TOP_KEYS:
            known = ", ".join(sorted(_TOP_KEYS))
            raise src.error(f"unknown grid key `{key}` (known: {known})", None, key)
    for section in ("set", "axes"):
        if not isinstance(data.get(section, {}), dict):
            raise src.error(f"`{section}` must be a table", None, section)
    base = _base_config(data, src, base_dir)
    sets = dict(data.get("set", {}))
    _check_sets(base, sets, src)
    axes = _axes(data, src, base, base_dir)
    fixed = _fixed(data, src, base_dir, axes)
    metrics = data.get("metrics", list(DEFAULT_METRICS))
    if not isinstance(metrics, list) or not metrics or not all(isinstance(m, str) for m in metrics):
        raise src.error("`metrics` must be a non-empty list of report columns", None, "metrics")
    skips = _skips(data, src, axes)
    skip_invalid = _flag(data, "skip_invalid", src)
    grid = Grid(
        path=path,
        text=text,
        title=str(data.get("title") or Path(path).stem),
        axes=list(axes),
        metrics=list(metrics),
        cells=[],
        verify=_flag(data, "verify", src),
        base=_with_sets(base, sets),
    )
    names = list(axes)
    for combo in itertools.product(*axes.values()):
        values = dict(zip(names, combo, strict=True))
        reason = _matching_skip(skips, values)
        if reason is not None:
            grid.skipped.append(Skipped(values, reason))
            continue
        try:
            cell = _cell(base, sets, fixed, values)
        except ZombiesimError as e:
            if skip_invalid:
                grid.skipped.append(Skipped(values, f"invalid: {e}"))
                continue
            raise src.error(
                f"the cell {_label(values)} is not a valid configuration: {e} (leave it out with a "
                "[[skip]] table, or set skip_invalid = true)",
                "axes",
            ) from None
        grid.cells.append(cell)
    if not grid.cells:
        raise src.error("every cell of the grid is skipped: nothing to run", "axes")
    return grid


def _with_sets(base: Config, sets: dict[str, Any]) -> Config:
    """The base with `[set]` applied, for the report; without it when the overrides are
    valid only beside some axis values."""
    try:
        return base.override(sets)
    except ZombiesimError:
        return base


def _flag(data: dict[str, Any], key: str, src: _Source) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise src.error(f"`{key}` must be true or false, found {value!r}", None, key)
    return value


def _base_config(data: dict[str, Any], src: _Source, base_dir: Path) -> Config:
    if "preset" in data and "config" in data:
        raise src.error("give `preset` or `config`, not both", None, "config")
    try:
        if "config" in data:
            return Config.load(base_dir / str(data["config"]))
        return Config.preset(str(data.get("preset", "default")))
    except ZombiesimError as e:
        key = "config" if "config" in data else "preset"
        raise src.error(str(e), None, key, type(e)) from None


def _check_sets(base: Config, sets: dict[str, Any], src: _Source) -> None:
    for key, value in sets.items():
        try:
            base.override({key: value})
        except ZombiesimError as e:
            if "unknown key" in str(e):
                raise src.error(str(e), "set", key) from None
            # A value valid only beside the others (or a scheme): checked per cell.


def _axes(data: dict[str, Any], src: _Source, base: Config, base_dir: Path) -> dict[str, list[Any]]:
    axes: dict[str, list[Any]] = {}
    known_schemes = {s.name for s in catalog.schemes()}
    for name, values in data.get("axes", {}).items():
        if not isinstance(values, list):
            raise src.error(f"axis `{name}` must be a list of values", "axes", name)
        if not values:
            raise src.error(f"axis `{name}` is empty: give at least one value", "axes", name)
        if name in data and name in SPECIAL_AXES:
            raise src.error(f"`{name}` is both a fixed key and an axis", "axes", name)
        if name == "scheme":
            for v in values:
                if v not in known_schemes:
                    raise src.error(
                        f"unknown scheme `{v}` (`zombiesim schemes` lists them)", "axes", name
                    )
        elif name == "workload":
            values = [_workload(v, src, ("axes", name)) for v in values]
        elif name == "trace":
            values = [_trace(v, src, base_dir, ("axes", name)) for v in values]
        elif name == "seed":
            for v in values:
                if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**64:
                    raise src.error(f"seed {v!r}: expected a whole number >= 0", "axes", name)
        else:
            for v in values:
                if isinstance(v, dict):
                    raise src.error(f"axis `{name}`: a value cannot be a table", "axes", name)
            try:
                base.override({name: values[0]})
            except ZombiesimError as e:
                if "unknown key" in str(e):
                    raise src.error(str(e), "axes", name) from None
        if len(set(map(repr, values))) != len(values):
            raise src.error(f"axis `{name}` repeats a value", "axes", name)
        axes[name] = values
    if "workload" in axes and "trace" in axes:
        raise src.error("sweep workloads or traces, not both", "axes", "trace")
    return axes


def _workload(value: Any, src: _Source, where: tuple[str | None, str]) -> str:
    if not isinstance(value, str):
        raise src.error(f"a workload is a spec string, found {value!r}", *where)
    try:
        return str(parse_workload(value))
    except ZombiesimError as e:
        raise src.error(str(e), *where, WorkloadError) from None


def _trace(value: Any, src: _Source, base_dir: Path, where: tuple[str | None, str]) -> TraceInput:
    spec = {"path": value} if isinstance(value, str) else value
    if not isinstance(spec, dict) or "path" not in spec:
        raise src.error("a trace is a path or a table with `path` and `format`", *where)
    unknown = set(spec) - _TRACE_KEYS
    if unknown:
        raise src.error(
            f"unknown trace key `{sorted(unknown)[0]}` (known: {', '.join(sorted(_TRACE_KEYS))})",
            *where,
        )
    if "format" not in spec:
        raise src.error(f"trace `{spec['path']}`: give its `format`", *where)
    path = Path(str(spec["path"]))
    path = path if path.is_absolute() else base_dir / path
    if not path.is_file():
        raise src.error(f"trace `{spec['path']}` not found", *where, InputError)
    try:
        return TraceInput(**{**spec, "path": os.fspath(path)})
    except (ZombiesimError, TypeError) as e:
        raise src.error(f"trace `{spec['path']}`: {e}", *where) from None


def _fixed(
    data: dict[str, Any], src: _Source, base_dir: Path, axes: Mapping[str, Any]
) -> dict[str, Any]:
    """The source, scheme and seed when they are not axes."""
    fixed: dict[str, Any] = {}
    if "workload" in data and "trace" in data:
        raise src.error("give `workload` or `trace`, not both", None, "trace")
    if "trace" in data:
        fixed["trace"] = _trace(data["trace"], src, base_dir, (None, "trace"))
    elif "workload" in data:
        fixed["workload"] = _workload(data["workload"], src, (None, "workload"))
    elif "workload" not in axes and "trace" not in axes:
        raise src.error("say what to run: `workload`, `trace`, or an axis of either")
    if "scheme" in data:
        scheme = data["scheme"]
        if not isinstance(scheme, str):
            raise src.error(
                f"scheme {scheme!r}: expected one scheme's name (several go in [axes])",
                None,
                "scheme",
            )
        if scheme not in {s.name for s in catalog.schemes()}:
            raise src.error(f"unknown scheme `{scheme}`", None, "scheme")
        fixed["scheme"] = scheme
    seed = data.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise src.error(f"seed {seed!r}: expected a whole number >= 0", None, "seed")
    fixed["seed"] = seed
    return fixed


def _skips(data: dict[str, Any], src: _Source, axes: Mapping[str, Any]) -> list[dict[str, Any]]:
    skips = data.get("skip", [])
    if not isinstance(skips, list):
        raise src.error("`skip` must be an array of tables ([[skip]])", None, "skip")
    for entry in skips:
        for key in entry:
            if key != "reason" and key not in axes:
                raise src.error(
                    f"[[skip]] names `{key}`, which is not an axis (axes: {', '.join(axes)})",
                    "skip",
                    key,
                )
    return skips


def _matching_skip(skips: Sequence[dict[str, Any]], values: Mapping[str, Any]) -> str | None:
    for entry in skips:
        conditions = {k: v for k, v in entry.items() if k != "reason"}
        if all(_matches(values[k], v) for k, v in conditions.items()):
            return str(entry.get("reason", "left out by a [[skip]] table"))
    return None


def _matches(value: Any, wanted: Any) -> bool:
    if isinstance(value, TraceInput):
        value = Path(value.path).name
        wanted = [Path(str(w)).name for w in wanted] if isinstance(wanted, list) else wanted
        wanted = Path(str(wanted)).name if not isinstance(wanted, list) else wanted
    if isinstance(wanted, list):
        return any(_matches(value, w) for w in wanted)
    return value == wanted or str(value) == str(wanted)


def _cell(base: Config, sets: dict[str, Any], fixed: Mapping[str, Any], values: dict) -> Cell:
    overrides = dict(sets)
    for key, value in values.items():
        if key not in SPECIAL_AXES:
            overrides[key] = value
    scheme = values.get("scheme", fixed.get("scheme"))
    config = base.scheme(scheme, overrides) if scheme else base.override(overrides)
    if "trace" in values or "trace" in fixed:
        source: str | TraceInput = values.get("trace", fixed.get("trace"))
    else:
        source = values.get("workload", fixed.get("workload"))
    return Cell(axes=values, config=config, source=source, seed=values.get("seed", fixed["seed"]))
