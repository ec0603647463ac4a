"""`Report`: read-only attribute access over a run's JSON report.

`rep.waf`, `rep.gc.pages_copied`, `rep.flash.programs_by_cause.gc` and
`rep["gc"]["pages_copied"]` all work; `rep.raw` is the parsed dict, `rep.to_json()` the
report exactly as the simulator wrote it (byte-identical for identical reproducible runs).
The schema is documented in `docs/report.md`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["SERIES_FIELDS", "STATES", "Report", "Section", "copied_shares", "flatten"]


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Section(value)
    if isinstance(value, list):
        return tuple(_wrap(v) for v in value)
    return value


class Section(Mapping[str, Any]):
    """A read-only view of one JSON object: attribute and item access, nested views."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]):
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        try:
            return _wrap(self._data[name])
        except KeyError:
            raise AttributeError(f"no field `{name}` (fields: {', '.join(self._data)})") from None

    def __getitem__(self, key: str) -> Any:
        return _wrap(self._data[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("reports are read-only")

    def __dir__(self) -> list[str]:
        return [*self._data, "to_dict"]

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of this section as plain dicts and lists."""
        return copy.deepcopy(self._data)

    def __reduce__(self):
        return (type(self), (self._data,))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts to one level with dotted keys; lists and `None` sections are dropped."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, name + "."))
        elif isinstance(value, list | tuple):
            continue
        else:
            out[name] = value
    return out


#: The fields of one time-series point (`series[]` in the report).
SERIES_FIELDS = (
    "host_write_pages",
    "flash_programs",
    "flash_erases",
    "gc_pages_copied",
    "waf_interval",
    "waf_cumulative",
    "free_blocks",
)

#: The states of a valid flash page GC relocates (SPEC §1; 003 Fig. 5), report order.
STATES = ("live", "host_shadow", "device_shadow", "twin_shadow")


def copied_shares(gc: Mapping[str, Any]) -> dict[str, float] | None:
    """`gc.copied_by_state` as shares of the pages relocated; `None` without relocations
    (or in a report that predates the field)."""
    by_state = gc.get("copied_by_state")
    if not by_state:
        return None
    total = sum(by_state.get(s, 0) for s in STATES)
    if not total:
        return None
    return {s: by_state.get(s, 0) / total for s in STATES}


class Report(Section):
    """Everything one run produced (see `docs/report.md` for the schema)."""

    __slots__ = ("_json",)

    def __init__(self, data: dict[str, Any] | str):
        if isinstance(data, str):
            text, data = data, json.loads(data)
        else:
            text = None
        super().__init__(data)
        object.__setattr__(self, "_json", text)

    @classmethod
    def from_json(cls, text: str) -> Report:
        return cls(text)

    @property
    def raw(self) -> dict[str, Any]:
        """The parsed report (do not modify; use `to_dict()` for a copy)."""
        return self._data

    @property
    def interrupted(self) -> bool:
        return bool(self._data.get("run", {}).get("interrupted", False))

    @property
    def timed(self) -> bool:
        """Whether the run was in timing mode (`latency`, `throughput`, `timing` are set)."""
        return self._data.get("latency") is not None

    @property
    def is_trace(self) -> bool:
        """Whether the run replayed a block trace (`trace` is set)."""
        return self._data.get("trace") is not None

    @property
    def copied_shares(self) -> dict[str, float] | None:
        """The pages GC relocated by their state as shares of all it relocated (003
        Fig. 8): `{live, host_shadow, device_shadow, twin_shadow}` summing to 1; `None`
        when GC relocated nothing."""
        return copied_shares(self._data.get("gc") or {})

    @property
    def flows(self) -> dict[str, Any] | None:
        """A `flows:` workload's section: `arbitration`, `fairness` (min ÷ max slowdown),
        `ended_by`, and `flows[]`, each with its `name`, `workload`, `queue_depth`,
        `class`, `weight`, `requests`, `share`, `throughput`, `latency`,
        `alone_mean_us` and `slowdown`; `None` for other workloads."""
        return self._data.get("flows")

    @property
    def steady_state(self) -> dict[str, Any]:
        """Whether the measured phase reached steady state, and the evidence:
        `reached` (True, False, or None when the phase was too short to split), and
        `waf` and, in timed runs, `write_latency_us`, each with the quarter before the
        last and the last quarter, their relative `change` and the `tolerance`
        (`stats.steady_waf_tolerance`, `stats.steady_latency_tolerance`); when not
        reached, `precondition_keys` names what ages the device further."""
        return self._data.get("steady_state") or {"reached": None}

    @property
    def placement(self) -> str | None:
        """The placement that ran: a Python one given as `placement=` (its
        `run.placement`, e.g. "python:by_frequency"), else `ftl.placement`."""
        run = self._data.get("run", {})
        if run.get("placement"):
            return run["placement"]
        return run.get("config", {}).get("ftl", {}).get("placement")

    @property
    def policy(self) -> str | None:
        """The victim policy that ran: a Python one given as `victim=` (its
        `run.victim_policy`, e.g. "python:cost_benefit"), else `gc.policy`."""
        run = self._data.get("run", {})
        if run.get("victim_policy"):
            return run["victim_policy"]
        return run.get("config", {}).get("gc", {}).get("policy")

    def to_json(self) -> str:
        """The report as JSON (the simulator's own text when it came from a run)."""
        if self._json is not None:
            return self._json
        return json.dumps(self._data, indent=2)

    def to_row(self, label: str | None = None, *, lists: bool = False) -> dict[str, Any]:
        """One flat dict of scalars with dotted keys, `label` first (default: the policy).

        Covers every counter, the device and precondition sections, `run.*` (wall time,
        seed, workload, ...) and the resolved config as `config.<key>`; the time series is
        left out (see `series_frame()`). Timed runs add `elapsed_s`, `latency.read.*`,
        `latency.write.*`, `throughput.*`, `timing.gc_busy_s` and, instead of the
        per-resource lists, `timing.channel_utilisation_mean`/`_max` and
        `timing.die_utilisation_mean`/`_max`; trace replays add `trace.*` (`records`,
        `flushes`, `skipped_lines`, `remap`, `remapped.*`, ...); content-aware runs add
        `content.*` (`writes_avoided`, `pool_hit_rate`, ...); runs with a device write
        buffer add `buffer.*` (`read_hits`, `write_hits`, `evictions`, `flushed_pages`,
        ...). The GC columns include 003's `gc.latency_s`, `gc.buffer_reads`,
        `gc.fast_programs`, `gc.skipped`, `gc.copied_by_state.*` and, derived from them,
        `gc.copied_share.{live,host_shadow,device_shadow,twin_shadow}` (shares of the pages
        GC relocated; `None` when it relocated none). Runs with a host write buffer add
        `host_buffer.*` (the same counters as `buffer.*`) and the channel's `notify.*`;
        runs whose device keeps a clock add `refresh.*` (`blocks`, `pages`, `restarts`,
        `program_share`, ...); runs with power losses add `power_loss.*` (`events`,
        `device_buffer_lost_pages`, `durable_pages_lost`, ...). `flows:` runs add
        `flows.arbitration`, `flows.fairness` and per flow
        `flows.<name>.{requests, share, iops, mean_us, p99_us, alone_mean_us, slowdown}`.
        Sections that are null (timing off, a synthetic workload, content off, no
        buffer, no host buffer, no clock, no power loss) add no columns.

        With `lists=True` the row also carries what the figures draw, as lists (one
        value per point): `series.<field>` for every field of the time series plus
        `series.drive_writes`, for timed runs `latency.<kind>.cdf_q` and
        `latency.<kind>.cdf_us` (kind `read`, `write`, `all`), and for `flows:` runs
        `flows.<name>.series_t_s` and `flows.<name>.series_mean_us` (each flow's latency
        over the phase)."""
        data = dict(self._data)
        run = dict(data.pop("run", {}) or {})
        config = run.pop("config", {}) or {}
        data.pop("series", None)
        for section in (
            "latency",
            "throughput",
            "timing",
            "trace",
            "content",
            "buffer",
            "host_buffer",
            "refresh",
            "power_loss",
        ):
            if data.get(section) is None:
                data.pop(section, None)
        gc = data.get("gc")
        if isinstance(gc, Mapping) and "copied_by_state" in gc:
            shares = copied_shares(gc)
            gc = dict(gc)
            gc["copied_share"] = shares or dict.fromkeys(STATES)
            data["gc"] = gc
        timing = data.get("timing")
        if timing is not None:
            timing = dict(timing)
            for name in ("channel_utilisation", "die_utilisation"):
                values = list(timing.pop(name, None) or [])
                timing[f"{name}_mean"] = sum(values) / len(values) if values else None
                timing[f"{name}_max"] = max(values) if values else None
            data["timing"] = timing
        flows = data.get("flows")
        if flows is not None:
            # Each flow by name: flows.<name>.{requests,share,iops,mean_us,p99_us,...}.
            data["flows"] = {
                "arbitration": flows["arbitration"],
                "fairness": flows["fairness"],
                **{
                    f["name"]: {
                        "requests": f["requests"],
                        "share": f["share"],
                        "iops": f["throughput"]["iops"],
                        "mean_us": f["latency"]["all"]["mean_us"],
                        "p99_us": f["latency"]["all"]["p99_us"],
                        "alone_mean_us": f["alone_mean_us"],
                        "slowdown": f["slowdown"],
                    }
                    for f in flows["flows"]
                },
            }
        row: dict[str, Any] = {"label": label if label is not None else self.policy}
        row.update(flatten(data))
        row.update(flatten(run, "run."))
        row.update(flatten(config, "config."))
        if lists:
            row.update(self._list_columns())
        return row

    def _list_columns(self) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        series = self._data.get("series") or []
        logical = (self._data.get("device") or {}).get("logical_pages") or 0
        fields = list(series[0]) if series else list(SERIES_FIELDS)
        out["series.drive_writes"] = [
            p["host_write_pages"] / logical if logical else 0.0 for p in series
        ]
        for name in fields:
            out[f"series.{name}"] = [p.get(name) for p in series]
        for flow in (self._data.get("flows") or {}).get("flows", []):
            points = flow.get("series") or []
            out[f"flows.{flow['name']}.series_t_s"] = [t for t, _ in points]
            out[f"flows.{flow['name']}.series_mean_us"] = [us for _, us in points]
        latency = self._data.get("latency")
        if latency is not None:
            for kind in ("read", "write", "all"):
                cdf = (latency.get(kind) or {}).get("cdf") or []
                out[f"latency.{kind}.cdf_q"] = [q for q, _ in cdf]
                out[f"latency.{kind}.cdf_us"] = [us for _, us in cdf]
        return out

    def series_frame(self):
        """The measured phase's time series as a pandas DataFrame, one row per point, with
        a `drive_writes` column (host pages written so far / logical pages)."""
        import pandas as pd

        frame = pd.DataFrame(list(self._data.get("series", [])))
        logical = self._data.get("device", {}).get("logical_pages") or 0
        if not frame.empty and logical:
            frame.insert(0, "drive_writes", frame["host_write_pages"] / logical)
        return frame

    def __repr__(self) -> str:
        run = self._data.get("run", {})
        flags = " interrupted" if run.get("interrupted") else ""
        return (
            f"Report(waf={self._data.get('waf')!r}, policy={self.policy!r}, "
            f"workload={run.get('workload')!r}, seed={run.get('seed')!r}{flags})"
        )

    def __reduce__(self):
        return (Report, (self._json if self._json is not None else self._data,))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Report):
            return self._data == other._data
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
