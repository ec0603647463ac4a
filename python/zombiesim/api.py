"""Running simulations: one (`simulate`, `simulate_trace`), several side by side
(`compare`), the analytic checks (`validate`).

Every run happens in Rust with the GIL released, so the multi-run functions use a thread
pool and really run in parallel. Ctrl-C stops the runs within ~100 ms; the partial results
travel on the `SimulationInterrupted` exception.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import _core
from ._errors import ConfigError, SimulationInterrupted, WorkloadError, make_error
from ._pool import _check_jobs, _jobs, _run_pool
from .config import Config
from .report import Report
from .trace import TraceInput, parse_size
from .workload import Workload, parse

__all__ = [
    "DEFAULT_SEED",
    "compare",
    "compare_configs",
    "compare_reports",
    "simulate",
    "simulate_many",
    "simulate_trace",
    "to_frame",
    "validate",
]

DEFAULT_SEED = 1

#: `progress(phase, fraction, write_pages)`: phase is "precondition" or "measure", fraction
#: of that phase in [0, 1] (None when unknown), host pages written in it so far. Return
#: False to stop the run (the report comes back marked interrupted).
ProgressFn = Callable[[str, float | None, int], bool | None]

#: `victim(candidates)`: a victim policy (docs/python.md "Policies in Python"):
#: `candidates` holds one GC unit's candidate blocks as NumPy columns (`block`, `valid`,
#: `invalid`, `zombies`, `age`, `last_modified`, `erase_count`, `stream`, `weight`, and
#: `now`); the answer is a block number, or a ranking of them (best first) that serves
#: the next selections too.
VictimFn = Callable[[Any], Any]

#: `placement(writes)`: a placement under `ftl.placement = "python:K"` (docs/python.md
#: "Policies in Python"): every `placement_batch` host page writes, `writes` holds them
#: as NumPy columns (`lpn`, `overwrite`, `lifetime`, `time`, `stream`, and `now`); the
#: answer is one stream (0 to K - 1) per write: where that page's next write goes.
PlacementFn = Callable[[Any], Any]

#: What a run replays: a synthetic workload spec (checked) or a trace.
_Source = str | TraceInput


def _spec(workload: Workload | str) -> str:
    return str(parse(workload))


def _source(
    workload: Workload | str | TraceInput | None, trace: TraceInput | tuple | None = None
) -> _Source:
    """Exactly one of a workload (a `Workload`, a spec, or a `TraceInput`) and a trace."""
    if workload is not None and trace is not None:
        raise make_error(WorkloadError, "give a workload or a trace, not both", "workload")
    if trace is not None:
        return TraceInput.coerce(trace)
    if workload is None:
        raise make_error(WorkloadError, "nothing to run: give a workload or a trace", "workload")
    if isinstance(workload, TraceInput):
        return workload
    return _spec(workload)


class _Watch:
    """The callback handed to the binding: forwards to the user's, remembers why a run stopped."""

    def __init__(self, user: ProgressFn | None, stop: threading.Event | None = None):
        self.user = user
        self.stop = stop
        self.stopped_by_user = False

    def __call__(self, phase: str, fraction: float | None, write_pages: int) -> bool:
        if self.stop is not None and self.stop.is_set():
            return False
        if self.user is None:
            return True
        if self.user(phase, fraction, write_pages) is False:
            self.stopped_by_user = True
            return False
        return True


#: The largest seed (seeds are unsigned 64-bit numbers).
MAX_SEED = 2**64 - 1


@dataclass(frozen=True)
class _RunOptions:
    """What every run takes besides its config and source, checked once."""

    seed: int
    verify: bool = False
    reproducible: bool = False
    max_memory: int | None = None
    force_unsafe: bool = False
    inline_trace: bool = False
    trace_cache: str | os.PathLike[str] | bool | None = None
    victim: VictimFn | None = None
    placement: PlacementFn | None = None
    placement_batch: int = 4096

    def __post_init__(self) -> None:
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise make_error(
                ConfigError,
                f"config key `seed`: expected a whole number from 0 to 2^64 - 1, found {seed!r}",
                "config",
            )
        if self.max_memory is not None:
            object.__setattr__(self, "max_memory", parse_size(self.max_memory, "max_memory"))
        cache = self.trace_cache
        if not (cache is None or isinstance(cache, (bool, str, os.PathLike))):
            raise make_error(
                ConfigError,
                "config key `trace_cache`: expected a directory, False (no cache) or None "
                f"(as $ZOMBIESIM_TRACE_CACHE says), found {cache!r}",
                "config",
            )
        for name in ("victim", "placement"):
            fn = getattr(self, name)
            if fn is not None and not callable(fn):
                raise TypeError(f"{name} must be a callable, got {type(fn).__name__}")
        batch = self.placement_batch
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise make_error(
                ConfigError,
                f"config key `placement_batch`: expected a whole number from 1, found {batch!r}",
                "config",
            )

    def core(self) -> dict[str, Any]:
        """The binding's keyword arguments."""
        return {
            "seed": self.seed,
            "verify": bool(self.verify),
            "reproducible": bool(self.reproducible),
            "max_memory": self.max_memory,
            "force_unsafe": bool(self.force_unsafe),
            "inline_trace": bool(self.inline_trace),
            "trace_cache": _trace_cache_setting(self.trace_cache),
            "victim": self.victim,
            "placement": self.placement,
            "placement_batch": self.placement_batch,
        }


def _trace_cache_setting(cache: str | os.PathLike[str] | bool | None) -> str | None:
    """The binding's `trace_cache`: None as the environment says, "off", or a directory."""
    if cache is None or cache is True:
        return None
    if cache is False:
        return "off"
    return os.fspath(cache)


def _simulate(
    config: Config,
    source: _Source,
    opts: _RunOptions,
    watch: _Watch,
    warm: _core.PreconditionCache | None = None,
) -> Report:
    if isinstance(source, TraceInput):
        text = _core.simulate_trace(
            config.core,
            source.path,
            source.format,
            progress=watch,
            precondition_cache=warm,
            **opts.core(),
            **source.options(),
        )
    else:
        text = _core.simulate(
            config.core, source, progress=watch, precondition_cache=warm, **opts.core()
        )
    return Report(text)


def _run_one(
    config: Config | None,
    source: _Source,
    opts: _RunOptions,
    progress: ProgressFn | None,
    warm: _core.PreconditionCache | None = None,
) -> Report:
    watch = _Watch(progress)
    report = _simulate(Config.coerce(config), source, opts, watch, warm)
    if report.interrupted and not watch.stopped_by_user:
        raise SimulationInterrupted(report=report)
    return report


def simulate(
    config: Config | None = None,
    workload: Workload | str | TraceInput = "uniform",
    *,
    seed: int = DEFAULT_SEED,
    verify: bool = False,
    reproducible: bool = False,
    max_memory: int | str | None = None,
    force_unsafe: bool = False,
    inline_trace: bool = False,
    trace_cache: str | os.PathLike[str] | bool | None = None,
    precondition_cache: PreconditionCache | None = None,
    progress: ProgressFn | None = None,
    victim: VictimFn | None = None,
    placement: PlacementFn | None = None,
    placement_batch: int = 4096,
) -> Report:
    """Run one simulation and return its `Report`.

    `config` is a `Config` (None = the default preset); `workload` a `Workload`, a spec
    string such as `"hotcold:r=0.9,f=0.1,drive_writes=3"`, or a `TraceInput` (the same as
    `simulate_trace`). `verify` runs the integrity
    oracle and invariant checks (slower); `reproducible` leaves wall times out of the report
    so identical runs give byte-identical JSON. When `progress` returns False the partial
    report is returned (`report.run.interrupted` is true); Ctrl-C raises
    `SimulationInterrupted` carrying the partial report. `seed` is a whole number from 0
    to 2^64 - 1. A configuration whose state would not fit in `max_memory` bytes (or a
    size such as `"8GiB"`; default: the memory available now) raises `ConfigError`
    naming the key to change, before anything is allocated. `force_unsafe` runs a
    configuration the simulator refuses as unsafe (the skip policy, `gc.skip_shadows`,
    with a volatile device buffer) so that the integrity oracle (`verify=True`) can show
    the data it loses; it changes nothing else. A text trace is parsed (a compressed
    native one decompressed) on a thread of its own; `inline_trace` reads it on the
    simulating thread instead (what a worker of
    a pool with one simulation per core wants); it changes no result. A text trace read
    to its end is kept parsed in the trace cache, and read from there the next time
    (docs/traces.md): `trace_cache` names its directory, False turns it off, None (the
    default) leaves it to `$ZOMBIESIM_TRACE_CACHE` (default `~/.cache/zombiesim/traces`);
    it changes no result either. `precondition_cache` (a `PreconditionCache`) lets runs
    whose devices are configured alike age the device once: this run starts from its
    copy when the cache holds one, and leaves one there; the report is the same.
    `victim` decides GC's victims in place of `gc.policy` (`VictimFn`; the run ages its
    own device, and `report.run.victim_policy` names it); `placement` places host writes
    under `ftl.placement = "python:K"` (`PlacementFn`, asked every `placement_batch`
    host page writes; `report.run.placement` names it); an exception either raises
    stops the run and is raised here."""
    opts = _RunOptions(
        seed,
        verify,
        reproducible,
        max_memory,
        force_unsafe,
        inline_trace,
        trace_cache,
        victim,
        placement,
        placement_batch,
    )
    return _run_one(config, _source(workload), opts, progress, _warm(precondition_cache))


def simulate_trace(
    config: Config | None,
    path: str | os.PathLike[str],
    format: str,
    *,
    seed: int = DEFAULT_SEED,
    verify: bool = False,
    reproducible: bool = False,
    device: int | None = None,
    on_error: str = "stop",
    remap: str = "none",
    limit: int | None = None,
    time_scale: float = 1.0,
    time_offset: float = 0.0,
    max_memory: int | str | None = None,
    force_unsafe: bool = False,
    inline_trace: bool = False,
    trace_cache: str | os.PathLike[str] | bool | None = None,
    precondition_cache: PreconditionCache | None = None,
    progress: ProgressFn | None = None,
    victim: VictimFn | None = None,
    placement: PlacementFn | None = None,
    placement_batch: int = 4096,
) -> Report:
    """Replay a block trace (`format`: `zs.trace.formats()`) and return its `Report`.

    The device is preconditioned as for a synthetic run (`precondition.pattern` must be
    `uniform`), then the trace is the measured phase; `report.trace` says how many records
    were read, skipped and remapped. `device` keeps one device of the trace; `on_error`
    `"skip"` counts malformed lines instead of failing on the first (`InputError` naming
    `file:line`); `remap` fits the trace's addresses onto the device (`"none"`: a request
    beyond it is a `WorkloadError`; `"modulo"`; `"compact"`); `limit` replays only the
    first records; `time_scale` multiplies the trace's times and `time_offset` (seconds)
    is added after scaling (timing mode, open replay).
    `progress`'s fraction is `None` in the measured phase unless `limit` is given.
    Interruption, `seed`, `max_memory`, `force_unsafe`, `inline_trace`, `trace_cache`,
    `precondition_cache`, `victim` and `placement` work as in `simulate`."""
    opts = _RunOptions(
        seed,
        verify,
        reproducible,
        max_memory,
        force_unsafe,
        inline_trace,
        trace_cache,
        victim,
        placement,
        placement_batch,
    )
    source = TraceInput(
        os.fspath(path),
        format,
        device=device,
        on_error=on_error,
        remap=remap,
        limit=limit,
        time_scale=time_scale,
        time_offset=time_offset,
    )
    return _run_one(config, source, opts, progress, _warm(precondition_cache))


def compare_configs(
    config: Config | None = None,
    *,
    policies: Iterable[str] | None = None,
    schemes: Iterable[str] | None = None,
    configs: Mapping[str, Config] | None = None,
    vary: tuple[str, Iterable[Any]] | None = None,
    sets: Iterable[tuple[str, Any]] | None = None,
) -> dict[str, Config]:
    """The labelled configurations `compare` runs: one per policy (label = the policy), one
    per scheme (label = the scheme), or both crossed (label `scheme/policy`, the policy set
    after the scheme), or `configs` as given. `vary = (key, values)` runs each of them once
    per value of one config key (label `key=value`, after the scheme's: `scheme/key=value`),
    e.g. `("ftl.kind", ["page", "dftl", "fast"])`. With `vary` alone, `sets` (dotted
    keys and values) are applied to each cell together with its value, where read: a
    key that some cells do not read (`ftl.cmt_entries` beside `ftl.kind = page,dftl`)
    applies to the cells that read it and is dropped, with a note (`Config.notes`), from
    the others; one that no cell reads raises `ConfigError` naming it. Raises
    `ConfigError` for an unknown policy or scheme, or when nothing (or the same label
    twice) is asked for."""
    base = Config.coerce(config)
    policies = list(policies) if policies is not None else []
    schemes = list(schemes) if schemes is not None else []
    out: dict[str, Config] = {}
    if vary is not None:
        key, values = vary[0], list(vary[1])
        if not values:
            raise make_error(ConfigError, f"{key}: no values to compare", key)
        if not (policies or schemes or configs):
            extra = list(sets or [])
            drop = [k for k, _ in extra if k != key]
            cells = {
                f"{key}={v}": base.override([*extra, (key, v)], where_read=drop) for v in values
            }
            for k in drop:
                dropped = [
                    next((n for n in c.notes if n.startswith(f"`{k} = ")), None)
                    for c in cells.values()
                ]
                if all(dropped):
                    raise make_error(
                        ConfigError, f"config key `{k}`: no run reads it ({dropped[0]})", k
                    )
            return cells
        if sets:
            raise make_error(
                ConfigError,
                "compare_configs: `sets` go with `vary` alone; apply them to the base "
                "config (Config.override) when crossing with policies, schemes or configs",
                "config",
            )
        crossed = compare_configs(base, policies=policies, schemes=schemes, configs=configs)
        return {
            f"{label}/{key}={v}": cfg.override({key: v})
            for label, cfg in crossed.items()
            for v in values
        }

    def add(label: str, cfg: Config) -> None:
        if label in out:
            raise make_error(ConfigError, f"`{label}` is given twice", "config")
        out[label] = cfg

    if configs:
        for label, cfg in configs.items():
            add(str(label), Config.coerce(cfg))
    if schemes and policies:
        for s in schemes:
            with_scheme = base.scheme(s)
            for p in policies:
                add(f"{s}/{p}", with_scheme.override({"gc.policy": p}))
    elif schemes:
        for s in schemes:
            add(s, base.scheme(s))
    else:
        for p in policies:
            add(p, base.override({"gc.policy": p}))
    if not out:
        raise make_error(
            ConfigError, "nothing to compare: give policies, schemes or configs", "config"
        )
    return out


#: `progress(label, phase, fraction, write_pages)` for multi-run calls; False stops that run.
MultiProgressFn = Callable[[str, str, float | None, int], bool | None]


def compare_reports(
    config: Config | None = None,
    *,
    workload: Workload | str | TraceInput | None = None,
    trace: TraceInput | tuple | None = None,
    policies: Iterable[str] | None = None,
    schemes: Iterable[str] | None = None,
    configs: Mapping[str, Config] | None = None,
    seed: int = DEFAULT_SEED,
    jobs: int | None = None,
    verify: bool = False,
    reproducible: bool = False,
    max_memory: int | str | None = None,
    force_unsafe: bool = False,
    progress: MultiProgressFn | None = None,
) -> dict[str, Report]:
    """Like `compare`, but returns the full `Report` of each run, by label, in order."""
    source = _source(workload, trace)
    variants = compare_configs(config, policies=policies, schemes=schemes, configs=configs)
    return simulate_many(
        {label: (cfg, source) for label, cfg in variants.items()},
        seed=seed,
        jobs=jobs,
        verify=verify,
        reproducible=reproducible,
        max_memory=max_memory,
        force_unsafe=force_unsafe,
        progress=progress,
    )


#: How many simulations `gc.policy = "oracle"` with `gc.oracle_score = "best"` runs: one
#: per schedule of its envelope (21; 30 on a notified trace: docs/zombie.md, "The oracle").
ORACLE_ENVELOPE_RUNS = 21


def _relative_cost(cfg: Config) -> int:
    """A run's cost in plain runs, as far as the configuration tells: the oracle's
    envelope runs one simulation per schedule it is the best of."""
    gc = cfg.to_dict()["gc"]
    if gc["policy"] == "oracle" and gc["oracle_score"] == "best":
        return ORACLE_ENVELOPE_RUNS
    return 1


def _sharing_order(
    order: list[str],
    prepared: Mapping[str, tuple[Config, _Source]],
    seed: int,
    verify: bool,
    jobs: int,
) -> list[str]:
    """`order` rearranged so that runs aging the same device share it: the runs are
    grouped by the device their preconditioning gives (`PreconditionCache.key`), and
    the groups go `jobs` at a time, first one run of each (they age their devices side
    by side), then the rest of those groups (each starting from a copy). In the order
    given, runs of one device that start together all age it, and those far apart find
    it dropped when the cache cannot hold every device (a 1 TB device is about 0.6 GB
    of the cache's 4 GiB). A run whose device is never kept (its preconditioning replays
    its own workload: no key) is a group of its own."""
    groups: dict[str, list[str]] = {}
    for label in order:
        key = _core.PreconditionCache.key(prepared[label][0].core, seed, verify)
        groups.setdefault(f"own:{label}" if key is None else key, []).append(label)
    out: list[str] = []
    members = list(groups.values())
    for start in range(0, len(members), jobs):
        wave = members[start : start + jobs]
        out.extend(group[0] for group in wave)
        rest = [group[1:] for group in wave]
        for i in range(max(map(len, rest))):
            out.extend(group[i] for group in rest if i < len(group))
    return out


#: The most a cache of preconditioned devices keeps by default (bytes), and its share
#: of the memory available when it is made.
PRECONDITION_CACHE_MAX = 4 << 30
PRECONDITION_CACHE_SHARE = 0.25


class PreconditionCache:
    """Preconditioned devices kept for reuse: a run given one starts from a copy of a
    device aged under the same settings and seed when it holds one (every section but
    `host`, `notify` and `stats`, which the device never reads), and leaves a copy of
    the device it aged. Reports are byte-identical to the runs' own preconditioning;
    only wall times shrink. `max_bytes` (a number or a size such as `"2GiB"`) bounds the
    devices' estimated state; None: a quarter of the memory available now, at most
    4 GiB. The least recently used device goes first. `simulate_many` makes one per call
    unless given one; pass the same one to several calls to share across them."""

    def __init__(self, max_bytes: int | str | None = None, *, _sharers: int = 1):
        if max_bytes is None:
            budget = PRECONDITION_CACHE_MAX
            free = _core.available_memory()
            if free is not None:
                budget = min(budget, int(free * PRECONDITION_CACHE_SHARE) // max(1, _sharers))
        else:
            budget = parse_size(max_bytes, "max_bytes")
        self.max_bytes = budget
        self.core = _core.PreconditionCache(budget)

    def stats(self) -> dict[str, int]:
        """`hits` (runs that started from a kept device), `misses` (runs that aged their
        own), `devices` kept now and their estimated `bytes`."""
        return dict(self.core.stats())

    def __repr__(self) -> str:
        return f"PreconditionCache(max_bytes={self.max_bytes}, {self.stats()})"


def _warm(
    cache: PreconditionCache | None, key: str = "precondition_cache"
) -> _core.PreconditionCache | None:
    if cache is None:
        return None
    if not isinstance(cache, PreconditionCache):
        raise make_error(
            ConfigError,
            f"config key `{key}`: expected a zs.PreconditionCache or None, found {cache!r}",
            "config",
        )
    return cache.core


def simulate_many(
    runs: Mapping[str, tuple[Config, Workload | str | TraceInput]],
    *,
    seed: int = DEFAULT_SEED,
    jobs: int | None = None,
    verify: bool = False,
    reproducible: bool = False,
    max_memory: int | str | None = None,
    force_unsafe: bool = False,
    share_preconditioning: bool | PreconditionCache = True,
    progress: MultiProgressFn | None = None,
) -> dict[str, Report]:
    """Run each labelled `(config, workload or trace)` pair, in parallel (`jobs` threads,
    default: one per core), and return the reports by label in the order given. Unlike
    `compare_reports`, each run may have its own workload. Ctrl-C raises
    `SimulationInterrupted` carrying the reports that finished. `max_memory` applies to
    each run (runs in parallel add up: lower `jobs` when memory is short);
    `force_unsafe` to each run, as in `simulate`.

    Runs whose devices are configured alike (every section but `host`, `notify` and
    `stats`: other workloads, journaling modes, notification channels) precondition
    the device once and each start from a copy of it (`share_preconditioning`: True, a
    new `PreconditionCache` for the call; a `PreconditionCache`, that one; False, none).
    Every report is byte-identical to the run's alone; only wall times shrink."""
    opts = _RunOptions(seed, verify, reproducible, max_memory, force_unsafe)
    _check_jobs(jobs)
    prepared = {
        str(label): (Config.coerce(cfg), _source(source)) for label, (cfg, source) in runs.items()
    }
    stop = threading.Event()
    if share_preconditioning is True:
        warm = PreconditionCache().core
    elif share_preconditioning is False:
        warm = None
    else:
        warm = _warm(share_preconditioning, "share_preconditioning")

    def one(label: str, cfg: Config, src: _Source) -> Report:
        user = None
        if progress is not None:

            def user(phase: str, fraction: float | None, pages: int) -> bool | None:
                return progress(label, phase, fraction, pages)

        return _simulate(cfg, src, opts, _Watch(user, stop), warm)

    # The longest runs start first, so that none is left to run alone at the end; runs
    # that age the same device start after the first of them (the reports still come
    # back in the order given).
    order = sorted(prepared, key=lambda label: -_relative_cost(prepared[label][0]))
    if warm is not None:
        order = _sharing_order(order, prepared, seed, verify, _jobs(jobs, len(order)))
    tasks = {}
    for label in order:
        cfg, src = prepared[label]
        tasks[label] = lambda lbl=label, c=cfg, s=src: one(lbl, c, s)
    results, failure, interrupted = _run_pool(tasks, jobs, stop)
    ordered = {label: results[label] for label in prepared if label in results}
    if interrupted:
        raise SimulationInterrupted(reports=ordered)
    if failure is not None:
        raise failure
    return ordered


def to_frame(reports: Mapping[str, Report], *, lists: bool = False):
    """A pandas DataFrame with one `Report.to_row(label, lists=lists)` per report, `label`
    first. `lists=True` adds the time series and latency CDFs as list columns (what
    `zs.plot` draws)."""
    import pandas as pd

    rows = [rep.to_row(label, lists=lists) for label, rep in reports.items()]
    frame = pd.DataFrame(rows)
    if "label" in frame.columns:
        frame = frame[["label", *[c for c in frame.columns if c != "label"]]]
    return frame


def compare(
    config: Config | None = None,
    *,
    workload: Workload | str | TraceInput | None = None,
    trace: TraceInput | tuple | None = None,
    policies: Iterable[str] | None = None,
    schemes: Iterable[str] | None = None,
    configs: Mapping[str, Config] | None = None,
    seed: int = DEFAULT_SEED,
    jobs: int | None = None,
    verify: bool = False,
    reproducible: bool = False,
    max_memory: int | str | None = None,
    force_unsafe: bool = False,
    progress: MultiProgressFn | None = None,
):
    """Run several policies / schemes / configs on the same workload and seed (so every run
    sees the same request stream) and return a DataFrame, one row per run in the order
    given, columns from `Report.to_row()` with `label` first. Runs go on a pool of `jobs`
    threads (default: one per CPU).

    Give either `workload` (a `Workload` or spec) or `trace`: a `zs.TraceInput` (with its
    remap, device, ... options) or a `(path, format)` pair; every run then replays the
    same trace. `verify`, `reproducible`, `max_memory` and `force_unsafe` apply to every
    run, as in `simulate`."""
    return to_frame(
        compare_reports(
            config,
            workload=workload,
            trace=trace,
            policies=policies,
            schemes=schemes,
            configs=configs,
            seed=seed,
            jobs=jobs,
            verify=verify,
            reproducible=reproducible,
            max_memory=max_memory,
            force_unsafe=force_unsafe,
            progress=progress,
        )
    )


def validation_cases(full: bool = False) -> list[dict[str, Any]]:
    """The analytic validation cases (quick set, or the full table)."""
    return json.loads(_core.validation_cases(full))


def validate(
    full: bool = False,
    *,
    jobs: int | None = None,
    seed: int = DEFAULT_SEED,
    progress: Callable[[int, int], bool | None] | None = None,
):
    """Run the analytic checks (simulated vs. analytic WAF under uniform random writes) and
    return a DataFrame, one row per case: the case's fields plus `simulated_waf`,
    `analytic_waf`, `analytic_waf_nominal`, `effective_over_provisioning`, `error`
    (relative), `ok`, `wall_s`. `frame.attrs["ok"]` is true when every row is within
    `frame.attrs["tolerance"]`. `progress(done, total)` is called after each case and every
    ~100 ms while cases run (from the worker threads); False stops the rest
    (`frame.attrs["interrupted"]` is then true). Ctrl-C raises `SimulationInterrupted`
    whose `.report` is the frame of finished cases."""
    import pandas as pd

    _RunOptions(seed)  # checks the seed
    _check_jobs(jobs)
    cases = validation_cases(full)
    stop = threading.Event()
    tolerance = _core.validation_tolerance()

    finished = 0

    def tick(_phase: str, _fraction: float | None, _pages: int) -> bool | None:
        if progress is not None and progress(finished, len(cases)) is False:
            stop.set()
            return False
        return None

    def one(case: dict[str, Any]) -> dict[str, Any]:
        if stop.is_set():
            return {}
        watch = _Watch(tick, stop)
        row = json.loads(_core.validate_case(json.dumps(case), seed=seed, progress=watch))
        return {} if row["interrupted"] else row

    def frame(rows: dict[int, dict[str, Any]], interrupted: bool):
        ordered = [rows[i] for i in sorted(rows) if rows[i]]
        df = pd.DataFrame(ordered)
        df.attrs["tolerance"] = tolerance
        df.attrs["interrupted"] = interrupted
        df.attrs["ok"] = not interrupted and len(ordered) == len(cases) and bool(df["ok"].all())
        return df

    def on_done(_index: int, _row: dict[str, Any]) -> None:
        nonlocal finished
        finished += 1
        if progress is not None and progress(finished, len(cases)) is False:
            stop.set()

    tasks = {i: (lambda c=case: one(c)) for i, case in enumerate(cases)}
    results, failure, interrupted = _run_pool(tasks, jobs, stop, on_done)
    if interrupted:
        raise SimulationInterrupted(report=frame(results, True))
    if failure is not None:
        raise failure
    return frame(results, stop.is_set())
