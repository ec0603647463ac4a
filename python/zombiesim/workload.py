"""Synthetic workloads: small frozen objects holding a `NAME:key=value,...` spec.

>>> from zombiesim import workload
>>> str(workload.hotcold(r=0.9, f=0.1, drive_writes=3))
'hotcold:r=0.9,f=0.1,drive_writes=3'

Every builder checks its keys at once (`WorkloadError` names the bad key). Keys every
workload accepts: `read`, `trim` (fractions of requests), `size` (bytes per request, e.g.
`"16KiB"`), `reads="same"|"uniform"`, one of `drive_writes` (default 1), `requests`,
`bytes` (e.g. `"1GiB"`), and `iops` (open-loop arrivals: request k arrives at k/iops s).

`fs("postmark", vms=8, journal="vma")` is the file systems in VMs of docs/journaling.md:
`fs:postmark,vms=8,journal=vma` (the benchmark first, without a key).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _core
from .config import toml_value

__all__ = [
    "Workload",
    "footprint",
    "fs",
    "hotcold",
    "kvcache",
    "locality",
    "make",
    "parse",
    "sequential",
    "streams",
    "uniform",
    "values",
    "zipf",
]


@dataclass(frozen=True)
class Workload:
    """A checked workload spec; `str(w)` is the spec the CLI's `--workload` takes."""

    spec: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", _core.check_workload(self.spec))

    @property
    def name(self) -> str:
        """The generator's name (`uniform`, `hotcold`, ...)."""
        return self.spec.split(":", 1)[0].strip()

    @property
    def params(self) -> dict[str, str]:
        """The keys given in the spec, as strings, in order."""
        _, _, rest = self.spec.partition(":")
        out: dict[str, str] = {}
        for item in (i.strip() for i in rest.split(",")):
            if not item:
                continue
            if "=" not in item:  # `fs:BENCH,...`: the benchmark
                out["bench"] = item
                continue
            k, v = item.split("=", 1)
            out[k.strip()] = v.strip()
        return out

    def replace(self, **params: Any) -> Workload:
        """The same workload with some keys changed or added (`None` removes a key).
        Giving one of `drive_writes`/`requests`/`bytes` replaces whichever length was set."""
        merged: dict[str, Any] = dict(self.params)
        lengths = {"drive_writes", "requests", "bytes"}
        if lengths & params.keys():
            for k in lengths:
                merged.pop(k, None)
        merged.update(params)
        return make(self.name, **{k: v for k, v in merged.items() if v is not None})

    def __str__(self) -> str:
        return self.spec


def make(name: str, **params: Any) -> Workload:
    """`make("hotcold", r=0.9)` == `parse("hotcold:r=0.9")`; values as in `Config.override`."""
    bench = params.pop("bench", None) if name == "fs" else None
    items = ",".join(f"{k}={toml_value(v)}" for k, v in params.items())
    if bench is not None:
        items = f"{bench},{items}" if items else str(bench)
    return Workload(f"{name}:{items}" if items else name)


def parse(spec: str | Workload) -> Workload:
    """Check a `NAME:key=value,...` spec; raises `WorkloadError` naming the bad part."""
    if isinstance(spec, Workload):
        return spec
    return Workload(spec)


def uniform(**params: Any) -> Workload:
    """Writes uniformly random over the logical space."""
    return make("uniform", **params)


def sequential(**params: Any) -> Workload:
    """Writes in ascending order from `start` (a page), wrapping at the end."""
    return make("sequential", **params)


def hotcold(**params: Any) -> Workload:
    """A fraction `r` (0.9) of writes go to the first fraction `f` (0.1) of the space."""
    return make("hotcold", **params)


def locality(**params: Any) -> Workload:
    """Zombie Chasing locality: (100-x)% of writes to the first x% (x=6) of the space."""
    return make("locality", **params)


def zipf(**params: Any) -> Workload:
    """Zipf(`theta`=0.99) over request-sized slots; `scramble` spreads the hot slots."""
    return make("zipf", **params)


def values(**params: Any) -> Workload:
    """One-page writes at uniform addresses carrying content fingerprints: a fraction
    `unique` (0.3) never seen before, a fraction `rebirth` (0) rewriting a value that died
    (no logical page holds it) about `gap` (64) page writes ago, a fraction `recur` (0)
    rewriting one of `recur_pages` pages (default a 1024th of the logical pages; rank by
    Zipf(`recur_zipf`=1)) back to the other of its two values, the rest Zipf(`zipf`=1.1)
    over `catalog` values (default a quarter of the logical pages). Value popularity is
    independent of address; recurring writes go to their page, not a uniform one."""
    return make("values", **params)


def footprint(**params: Any) -> Workload:
    """A written footprint growing by a fraction `growth` (0.05) of the writes: those go to
    pages not written before (spread over the space); the rest rewrite the `window`
    ("64MiB") newest fresh pages, uniformly or Zipf(`theta`) over recency. With `phase`
    (bytes), a fraction `pause` of the phases do not grow. E.g. `footprint(growth=1)`
    grows linearly, `footprint(growth=0.3, phase="256MiB", pause=0.5)` with pauses."""
    return make("footprint", **params)


def kvcache(**params: Any) -> Workload:
    """A CacheLib-like flash cache on the first `utilisation` (1) of the logical space, its
    writes naming placement identifiers by engine (0: the small-object cache, the cache's
    last `soc`=0.04 of its pages, one-page bucket rewrites at random; 1: the large-object
    cache's log, written in order in `io`=256KiB requests, oldest first). `soc_writes`
    (0.5) of the written pages go to the small-object cache; `hints=False` drops the
    identifiers; `tenants`=N runs N such caches, each on 1/N of the space and of the
    writes, tenant t on identifiers 2t and 2t+1.
    E.g. `kvcache(soc=0.04, utilisation=1.0, drive_writes=3)`; docs/fdp.md."""
    return make("kvcache", **params)


def streams(**params: Any) -> Workload:
    """Three writers on their own placement identifiers (WARP's FIO mix): a sequential log
    over the first `space`=0.9 of the logical space (id 0, `seq`=0.88 of the written
    pages, `seq_size`=128KiB requests), uniform writes over the rest (id 1,
    `random`=0.06), and overwrites of the log's region (id 2, the rest; `overwrite` =
    "zoned" 80/20, "uniform" or "zipf" with `theta`). docs/workloads.md#streams."""
    return make("streams", **params)


def fs(bench: str, **params: Any) -> Workload:
    """ext3-like file systems, one per VM partition, running `bench` (`seq_write`,
    `rnd_write`, `postmark`, `untar`, `kernel_compile`) under a journaling mode
    (`journal="writeback"|"ordered"|"journal"|"vma"`), e.g.
    `fs("untar", vms=8, journal="vma")`; keys in docs/journaling.md. Needs timing."""
    return make("fs", bench=bench, **params)
