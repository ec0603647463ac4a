"""What every reproduction shares: the run context, claims (paper vs ours) and the report.

A *claim* is one of the paper's findings put beside ours: the paper's figure as printed,
ours, what is expected and a *verdict*:

- `met`: the direction matches and the magnitude is within the claim's band (by default a
  factor of 2 of the paper's figure, or a stated range for claims like "about 70%");
- `direction-only`: the direction matches, the magnitude is outside the band;
- `explained`: not met, and the reproduction carries the ablation run that shows why the
  paper's setting cannot be matched (the claim's `explanation` says which; a
  reproduction keeps these to a few);
- `missed`: the direction (or a stated range) does not hold: `reproduce` exits 1.

Build claims with `banded` (a relative change against the paper's), `within` (a value in a
stated range) or `Claim(..., holds=...)` (a direction or an order, no magnitude).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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

__all__ = ["VERDICTS", "Claim", "Context", "Reproduction", "banded", "change", "pct", "within"]

#: Claim verdicts, best first.
VERDICTS = ("met", "direction-only", "explained", "missed")


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
    (its verdict is then `explained` unless the direction is wrong)."""

    experiment: str
    metric: str
    paper: str
    ours: str
    expected: str
    holds: bool
    verdict: str = ""
    explanation: str = ""

    def __post_init__(self) -> None:
        verdict = self.verdict or ("met" if self.holds else "missed")
        if verdict not in VERDICTS:
            raise ValueError(f"unknown claim verdict `{verdict}` (use {', '.join(VERDICTS)})")
        if verdict != "met" and self.explanation:
            verdict = "explained"
        object.__setattr__(self, "verdict", verdict)
        object.__setattr__(self, "holds", verdict != "missed")

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
        }


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

    @property
    def all_hold(self) -> bool:
        """No claim is missed (what `reproduce`'s exit status says)."""
        return all(c.holds for c in self.claims)

    @property
    def all_met(self) -> bool:
        """Every claim is met in direction and magnitude (`reproduce --strict`)."""
        return all(c.verdict == "met" for c in self.claims)

    def tally(self) -> dict[str, int]:
        """How many claims have each verdict."""
        return {v: sum(c.verdict == v for c in self.claims) for v in VERDICTS}

    def summary(self) -> str:
        """`12 of 16 claims met, 3 direction only, 1 explained, 0 missed`."""
        t = self.tally()
        return (
            f"{t['met']} of {len(self.claims)} claims met, {t['direction-only']} direction "
            f"only, {t['explained']} explained, {t['missed']} missed"
        )

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
        sideways, then expected and why), each figure as SVG with its data as CSV, the
        result tables, and the run (`command` when set, paper, scale, seed)."""
        from ..html.page import Page, slug

        page = Page(self.title)
        page.paragraph(f"Scale: {self.scale} · zombiesim {__version__} · {self.summary()}.")
        for note in self.notes:
            page.paragraph(note)
        page.heading("The paper's numbers beside ours")
        claims = self.claims_frame()
        if len(claims):
            # The verdict right after ours, kept in view when the table scrolls sideways.
            shown = ["experiment", "metric", "paper", "ours", "verdict", "expected", "explanation"]
            page.table(
                claims[shown].rename(columns={"explanation": "why"}),
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
