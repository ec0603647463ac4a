"""What every reproduction shares: the run context, claims (paper vs ours) and the report.

A *claim* is one of the paper's findings put beside ours: the paper's figure as printed,
ours, what is expected and a *verdict*:

- `met`: the direction matches and the magnitude is within the claim's band (by default a
  factor of 2 of the paper's figure, or a stated range for claims like "about 70%");
- `direction-only`: the direction matches, the magnitude is outside the band;
- `explained`: not met, and the reproduction carries the ablation run that shows why the
  paper's setting cannot be matched (the claim's `explanation` says which; a
  reproduction keeps these to a few);
- `missed`: the direction (or a stated range) does not hold: `reproduce` exits 1;
- `not-run`: the experiment could not run (a sample trace it reads is missing): `reproduce`
  exits 1, as for `missed`, since nothing was checked (`not_run`).

Build claims with `banded` (a relative change against the paper's), `within` (a value in a
stated range) or `Claim(..., holds=...)` (a direction or an order, no magnitude).

Every claim that is not met carries a *reason*: one sentence and the docs section that says
more (`docs/PAGE.md#anchor`). A paper's module gives them in `REASONS`, keyed by the
claim's (experiment, metric) (`fnmatch` patterns, so an experiment that names its scale's
buffer size matches at every scale), each a sentence or one per verdict; `Reproduction`
attaches them (`give_reasons`). A claim with no entry gets a generic one that never leaves
it empty: at a scale other than the default, that the docs' reasons are the default
scale's (`SCALES_DOCS`, the paper's section on its scales); at the default scale, what its
verdict means and the paper's section (`DOCS`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from .._core import __version__
from .._errors import SimulationInterrupted
from .._io import atomic_write
from ..api import MultiProgressFn, simulate_many
from ..config import Config
from ..report import Report
from ..trace import TraceInput
from ..workload import Workload

__all__ = [
    "DEFAULT_SCALE",
    "FAILING",
    "VERDICTS",
    "Claim",
    "Context",
    "Reasons",
    "Reproduction",
    "banded",
    "change",
    "give_reasons",
    "missing_sample",
    "not_run",
    "pct",
    "within",
]

#: Claim verdicts, best first.
VERDICTS = ("met", "direction-only", "explained", "missed", "not-run")
#: The verdicts that make `reproduce` exit 1: a claim that does not hold, or was not checked.
FAILING = ("missed", "not-run")
#: The scale `reproduce` runs by default (the one the docs' reasons are written for).
DEFAULT_SCALE = "small"

#: Why claims are not met, by (experiment, metric) (`fnmatch` patterns): a sentence with the
#: docs section, or one per verdict (`{"direction-only": ..., "missed": ...}`), or per
#: verdict at one scale (`"missed@full"`, tried first). A sentence may name the claim's
#: `{ours}`, `{paper}`, `{expected}` and `{scale}`.
Reasons = Mapping[tuple[str, str], "str | Mapping[str, str]"]


def change(new: float, old: float) -> float:
    """Relative change of `new` against `old` (−0.25 = 25% lower); 0 when `old` is 0."""
    return (new - old) / old if old else 0.0


def pct(x: float) -> str:
    """A relative change as printed in claims: `+12.3%`."""
    return f"{x:+.1%}"


@dataclass(frozen=True)
class Claim:
    """One finding of the paper beside ours.

    `holds` says whether the claim's check passed; `verdict` refines it (`met` when it
    holds and no finer verdict was given, `missed` when it does not). `explanation` names
    the ablation in this reproduction that shows why a claim that is not met cannot be
    (its verdict is then `explained` unless the direction is wrong or it did not run).
    `reason` says, in one sentence with the docs section, why a claim is not met (empty
    when it is; `give_reasons` fills it)."""

    experiment: str
    metric: str
    paper: str
    ours: str
    expected: str
    holds: bool
    verdict: str = ""
    explanation: str = ""
    reason: str = ""

    def __post_init__(self) -> None:
        verdict = self.verdict or ("met" if self.holds else "missed")
        if verdict not in VERDICTS:
            raise ValueError(f"unknown claim verdict `{verdict}` (use {', '.join(VERDICTS)})")
        if verdict not in ("met", "not-run") and self.explanation:
            verdict = "explained"
        object.__setattr__(self, "verdict", verdict)
        object.__setattr__(self, "holds", verdict not in FAILING)
        if verdict == "met":
            object.__setattr__(self, "reason", "")

    def row(self) -> dict[str, Any]:
        return {
            "experiment": self.experiment,
            "metric": self.metric,
            "paper": self.paper,
            "ours": self.ours,
            "expected": self.expected,
            "verdict": self.verdict,
            "holds": self.holds,
            "explanation": self.explanation,
            "reason": self.reason,
        }


def not_run(experiment: str, metric: str, paper: str, expected: str, reason: str) -> Claim:
    """A claim whose experiment could not run: `reason` says what is missing and how to get
    it (`missing_sample`). `reproduce` exits 1 for it, as for a missed claim."""
    return Claim(experiment, metric, paper, "not run", expected, False, "not-run", reason=reason)


def missing_sample(relative: str) -> str | None:
    """None when the shipped sample trace `relative` (under `zombiesim.samples.folder()`) is
    there; otherwise what is missing, where it was looked for and how to get it back."""
    from .. import samples
    from .._errors import InputError

    try:
        samples.path(relative)
    except InputError as e:
        return str(e)
    return None


#: What a verdict that is not met means, for the generic reasons.
_VERDICT_PHRASE = {
    "direction-only": "the direction holds, the magnitude is outside the band",
    "explained": "it is not met, and the ablation named in `explanation` shows why",
    "missed": "what was expected does not hold",
    "not-run": "the experiment did not run",
}


def give_reasons(
    claims: list[Claim],
    reasons: Reasons,
    *,
    scale: str,
    docs: str,
    scales_docs: str,
    default_scale: str = DEFAULT_SCALE,
) -> list[Claim]:
    """`claims` with the reason of each one that is not met: its own if it has one (a
    `not-run` claim's), else the first entry of `reasons` whose (experiment, metric)
    patterns match it and that has a sentence for its verdict (at this scale, as
    `"missed@full"`, or at any, as `"missed"`), else a generic one: at a scale other than
    `default_scale`, that the docs give the reasons at the default scale (`scales_docs`);
    at the default scale, what the verdict means (`docs`)."""
    out = []
    for c in claims:
        if c.verdict == "met" or c.reason:
            out.append(c)
            continue
        text = ""
        for (experiment, metric), entry in reasons.items():
            if fnmatchcase(c.experiment, experiment) and fnmatchcase(c.metric, metric):
                text = (
                    entry
                    if isinstance(entry, str)
                    else entry.get(f"{c.verdict}@{scale}") or entry.get(c.verdict, "")
                )
                if text:
                    break
        if text:
            text = text.format(ours=c.ours, paper=c.paper, expected=c.expected, scale=scale)
        elif scale != default_scale:
            text = (
                f"at the `{scale}` scale {_VERDICT_PHRASE[c.verdict]}; the docs give each "
                f"claim's reasons at the default `{default_scale}` scale, and what each scale "
                f"changes: see {scales_docs}"
            )
        else:
            text = f"{_VERDICT_PHRASE[c.verdict]}; no reason is recorded for it here: see {docs}"
        out.append(replace(c, reason=text))
    return out


def banded(
    experiment: str,
    metric: str,
    paper: float,
    ours: float,
    *,
    factor: float = 2.0,
    paper_text: str | None = None,
    ours_text: str | None = None,
    explanation: str = "",
) -> Claim:
    """A relative change (fractions: −0.25 = 25% lower) checked against the paper's:
    `met` when it has the paper's sign and its size is within `factor` of the paper's
    either way, `direction-only` when only the sign matches, `missed` otherwise."""
    if paper == 0:
        raise ValueError("a banded claim needs a non-zero paper figure (use `within`)")
    same = ours * paper > 0
    ratio = ours / paper if same else 0.0
    met = same and 1 / factor <= ratio <= factor
    verdict = "met" if met else "direction-only" if same else "missed"
    direction = "lower" if paper < 0 else "higher"
    return Claim(
        experiment,
        metric,
        paper_text or pct(paper),
        ours_text or pct(ours),
        f"{direction}, within {factor:g}x of the paper ({pct(paper / factor)} to "
        f"{pct(paper * factor)})",
        same,
        verdict,
        "" if met else explanation,
    )


def within(
    experiment: str,
    metric: str,
    paper_text: str,
    ours: float,
    lo: float,
    hi: float,
    *,
    fmt=pct,
    ours_text: str | None = None,
    explanation: str = "",
) -> Claim:
    """A value checked against a stated range [`lo`, `hi`] (a "~0" or "about 70%" claim):
    `met` inside, `missed` outside (`explained` with an `explanation`)."""
    ok = lo <= ours <= hi
    return Claim(
        experiment,
        metric,
        paper_text,
        ours_text or fmt(ours),
        f"within {fmt(lo)} to {fmt(hi)}",
        ok,
        "met" if ok else "missed",
        "" if ok else explanation,
    )


@dataclass
class Context:
    """Where a reproduction runs: the paper, the scale, the seed, parallelism and progress."""

    paper: str
    scale: str = "small"
    seed: int = 1
    jobs: int | None = None
    progress: MultiProgressFn | None = None
    #: Every report run so far, by label (a label is unique across the reproduction).
    reports: dict[str, Report] = field(default_factory=dict)

    def simulate_many(
        self, runs: Mapping[str, tuple[Config, Workload | str | TraceInput]]
    ) -> dict[str, Report]:
        """Run labelled `(config, workload)` pairs in parallel; remember and return them.
        On Ctrl-C the `SimulationInterrupted` raised carries every report of the
        reproduction so far (`.reports`: finished runs, then the partial ones, each
        marked `run.interrupted`)."""
        try:
            out = simulate_many(
                runs, seed=self.seed, jobs=self.jobs, progress=self.progress, reproducible=True
            )
        except SimulationInterrupted as e:
            self.reports.update(e.reports)
            e.reports = dict(self.reports)
            raise
        self.reports.update(out)
        return out


@dataclass
class Reproduction:
    """The outcome of `zombiesim reproduce PAPER`."""

    paper: str
    title: str
    scale: str
    claims: list[Claim]
    #: Result tables (pandas DataFrames), written as `<name>.csv`.
    tables: dict[str, Any] = field(default_factory=dict)
    #: The report's figures by caption: a function returning a matplotlib `Figure`, or a
    #: pair `(make_figure, make_frame)` whose frame is the figure's data (its CSV link;
    #: without one, what the `zs.plot` functions drew).
    figures: dict[str, Callable[[], Any] | tuple[Callable[[], Any], Callable[[], Any]]] = field(
        default_factory=dict
    )
    notes: list[str] = field(default_factory=list)
    #: The command line that made it, shown in the report's run section
    #: (`zombiesim.reproduce.run` sets it).
    command: str | None = None
    #: The seed of its runs (`zombiesim.reproduce.run` sets it).
    seed: int | None = None

    def __post_init__(self) -> None:
        """Give every claim that is not met its reason, from the paper's module (`REASONS`,
        `DOCS`, `SCALES_DOCS`; generic ones for a paper without a module)."""
        from . import PAPERS, module

        mod = module(self.paper) if self.paper in PAPERS else None
        self.claims = give_reasons(
            self.claims,
            getattr(mod, "REASONS", {}),
            scale=self.scale,
            docs=getattr(mod, "DOCS", "docs/cli.md#verdicts-reasons-and-not-run"),
            scales_docs=getattr(mod, "SCALES_DOCS", "docs/cli.md#verdicts-reasons-and-not-run"),
        )

    @property
    def all_hold(self) -> bool:
        """No claim is missed or not run (what `reproduce`'s exit status says)."""
        return all(c.holds for c in self.claims)

    @property
    def not_run(self) -> list[Claim]:
        """The claims whose experiment could not run."""
        return [c for c in self.claims if c.verdict == "not-run"]

    @property
    def all_met(self) -> bool:
        """Every claim is met in direction and magnitude (`reproduce --strict`)."""
        return all(c.verdict == "met" for c in self.claims)

    def tally(self) -> dict[str, int]:
        """How many claims have each verdict."""
        return {v: sum(c.verdict == v for c in self.claims) for v in VERDICTS}

    def summary(self) -> str:
        """`12 of 16 claims met, 3 direction only, 1 explained, 0 missed` (and `, 2 not
        run` when some did not run)."""
        t = self.tally()
        text = (
            f"{t['met']} of {len(self.claims)} claims met, {t['direction-only']} direction "
            f"only, {t['explained']} explained, {t['missed']} missed"
        )
        return text + (f", {t['not-run']} not run" if t["not-run"] else "")

    def claims_frame(self):
        import pandas as pd

        return pd.DataFrame([c.row() for c in self.claims])

    def write(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write `report.html`, `claims.csv` and `<table>.csv` into `directory` (created if
        missing), each atomically. Returns the paths written."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        path = out / "claims.csv"
        atomic_write(path, self.claims_frame().to_csv(index=False))
        written.append(path)
        for name, frame in self.tables.items():
            path = out / f"{name}.csv"
            atomic_write(path, frame.to_csv(index=False))
            written.append(path)
        path = out / "report.html"
        atomic_write(path, self.html())
        written.append(path)
        return written

    def html(self) -> str:
        """The report page (`zombiesim.html.Page`): the claims (experiment, metric, paper,
        ours, then the verdict, coloured and kept in view when the table scrolls
        sideways, then expected and why: the explaining ablation and the reason a claim is
        not met), each figure as SVG with its data as CSV, the result tables, and the run
        (`command` when set, paper, scale, seed)."""
        from ..html.page import Page, slug

        page = Page(self.title)
        page.paragraph(f"Scale: {self.scale} · zombiesim {__version__} · {self.summary()}.")
        for note in self.notes:
            page.paragraph(note)
        page.heading("The paper's numbers beside ours")
        claims = self.claims_frame()
        if len(claims):
            # The verdict right after ours, kept in view when the table scrolls sideways;
            # last, why a claim is not met: the explaining ablation, then the reason.
            shown = ["experiment", "metric", "paper", "ours", "verdict", "expected"]
            why = [" — ".join(t for t in (c.explanation, c.reason) if t) for c in self.claims]
            page.table(
                claims[shown].assign(why=why),
                name="claims",
                cell_classes={"verdict": list(claims["verdict"])},
                wrap=["metric"],
                pin=["verdict"],
            )
        else:
            page.paragraph("No claims.")
        if self.figures:
            page.heading("Figures")
        for name, entry in self.figures.items():
            make, data = entry if isinstance(entry, tuple) else (entry, None)
            page.figure(make(), caption=name, name=slug(name), data=data() if data else None)
        for name, frame in self.tables.items():
            page.heading(f"Table: {name}")
            page.table(frame, name=name)
        page.run_section(
            command=self.command,
            facts=[("paper", self.paper), ("scale", self.scale), ("seed", self.seed)],
        )
        return page.html()
