"""Reproductions of the seed papers' experiments (`zombiesim reproduce PAPER`).

Each paper has a module here with `TITLE`, `DESCRIPTION`, `SCALES` (when it is not
`DEFAULT_SCALES`), what its default scale takes and gives (`DEFAULT_TIME`,
`DEFAULT_VERDICTS`: `reproduce --help` shows them), why its claims may not be met
(`REASONS`, `DOCS`, `SCALES_DOCS`) and `run(ctx: Context) -> Reproduction`: it builds its
grid of runs, runs them through `ctx.simulate_many` (parallel, with progress, Ctrl-C safe),
and returns the tables, figures and *claims* — each of the paper's numbers beside ours with
a verdict: `met` (direction and magnitude within the claim's band), `direction-only`,
`explained` (by an ablation the reproduction includes), `missed` or `not-run` (a sample
trace an experiment reads is missing); `zombiesim reproduce` exits 1 for the last two.
Every claim that is not met carries its `reason` (a sentence and the docs section).
`Reproduction.write(dir)` writes `report.html`, `claims.csv` and one CSV per table, each
atomically.

```python
import zombiesim as zs
rep = zs.reproduce.run("zombie-chasing", scale="small", jobs=2)
rep.claims_frame()          # paper vs ours, each claim's verdict
rep.summary()               # "14 of 16 claims met, 1 direction only, 1 explained, 0 missed"
rep.write("out/")           # report.html, claims.csv, <table>.csv
```

The report's run section shows the command line (`run(..., command=...)`; by default the
equivalent `zombiesim reproduce PAPER --scale SCALE --seed SEED`).
"""

from __future__ import annotations

import importlib
import shlex
from types import ModuleType

from .._errors import InputError, make_error
from ._common import (
    DEFAULT_SCALE,
    FAILING,
    VERDICTS,
    Claim,
    Context,
    Reproduction,
    banded,
    change,
    not_run,
    pct,
    within,
)

__all__ = [
    "DEFAULT_SCALE",
    "FAILING",
    "VERDICTS",
    "PAPERS",
    "SCALES",
    "Claim",
    "Context",
    "Reproduction",
    "banded",
    "change",
    "command_line",
    "describe",
    "module",
    "not_run",
    "pct",
    "run",
    "scales",
    "within",
]

#: Paper name on the command line -> module in this package.
PAPERS: dict[str, str] = {
    "zombie-chasing": "zombie_chasing",
    "dead-value-pool": "dead_value_pool",
    "shadowgc": "shadowgc",
    "ba-gc": "ba_gc",
    "vma-journaling": "vma_journaling",
    "fdp": "fdp",
}

#: `small` runs in minutes on a laptop; `full` uses the paper's sizes; `tiny` (only some
#: papers: a module's own `SCALES`) runs in seconds, for tests.
SCALES = ("tiny", "small", "full")
#: The scales of a paper whose module does not name its own.
DEFAULT_SCALES = ("small", "full")


def scales(paper: str) -> tuple[str, ...]:
    """The scales `paper` runs at."""
    return tuple(getattr(module(paper), "SCALES", DEFAULT_SCALES))


def describe(paper: str) -> str:
    """One paragraph on `paper` from its module: what it reproduces (`TITLE`,
    `DESCRIPTION`), its scales, and its default scale's wall time and verdicts."""
    mod = module(paper)
    verdicts = getattr(mod, "DEFAULT_VERDICTS", {})
    counts = ", ".join(f"{verdicts[v]} {v}" for v in VERDICTS if verdicts.get(v))
    took = getattr(mod, "DEFAULT_TIME", "")
    return (
        f"{mod.TITLE}: {mod.DESCRIPTION}. Scales: {', '.join(scales(paper))}. "
        f"At {DEFAULT_SCALE}: {took}{'; ' if took and counts else ''}{counts}."
    )


def module(paper: str) -> ModuleType:
    """The module that reproduces `paper` (raises `InputError` naming the known papers)."""
    name = PAPERS.get(paper)
    if name is None:
        known = ", ".join(PAPERS)
        raise make_error(InputError, f"unknown paper `{paper}` (known: {known})", "paper")
    return importlib.import_module(f"{__name__}.{name}")


def command_line(
    paper: str, *, scale: str = DEFAULT_SCALE, seed: int = 1, jobs: int | None = None
) -> str:
    """The `zombiesim reproduce` command that runs what `run(paper, scale=..., seed=...,
    jobs=...)` runs."""
    args = ["zombiesim", "reproduce", paper, "--scale", scale, "--seed", str(seed)]
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    return shlex.join(args)


def run(
    paper: str,
    *,
    scale: str = DEFAULT_SCALE,
    seed: int = 1,
    jobs: int | None = None,
    progress=None,
    command: str | None = None,
) -> Reproduction:
    """Run every experiment of `paper` at `scale` and return the `Reproduction`.
    `command` is the command line its report shows (default: the equivalent
    `zombiesim reproduce PAPER --scale SCALE --seed SEED`, `command_line`)."""
    mod = module(paper)
    known = tuple(getattr(mod, "SCALES", DEFAULT_SCALES))
    if scale not in known:
        raise make_error(
            InputError,
            f"unknown scale `{scale}` for {paper} (use {' or '.join(known)})",
            "scale",
        )
    ctx = Context(paper=paper, scale=scale, seed=seed, jobs=jobs, progress=progress)
    rep = mod.run(ctx)
    rep.command = command or command_line(paper, scale=scale, seed=seed, jobs=jobs)
    rep.seed = seed
    return rep
