"""What every reproduction shares: the run context, claims (paper vs ours) and the report.

A *claim* is one of the paper's findings put beside ours: the paper's figure as printed,
ours, the direction the paper reports ("ZGC-GD below GC-GD") and whether our result goes the
same way. Magnitudes at a reduced scale are not expected to match; directions are.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._core import __version__
from .._io import atomic_write
from ..api import MultiProgressFn, simulate_many
from ..config import Config
from ..report import Report
from ..trace import TraceInput
from ..workload import Workload

__all__ = ["Claim", "Context", "Reproduction", "change"]


def change(new: float, old: float) -> float:
    """Relative change of `new` against `old` (−0.25 = 25% lower); 0 when `old` is 0."""
    return (new - old) / old if old else 0.0


@dataclass(frozen=True)
class Claim:
    """One finding of the paper beside ours."""

    experiment: str
    metric: str
    paper: str
    ours: str
    expected: str
    holds: bool

    def row(self) -> dict[str, Any]:
        return {
            "experiment": self.experiment,
            "metric": self.metric,
            "paper": self.paper,
            "ours": self.ours,
            "expected": self.expected,
            "holds": self.holds,
        }


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
        """Run labelled `(config, workload)` pairs in parallel; remember and return them."""
        out = simulate_many(
            runs, seed=self.seed, jobs=self.jobs, progress=self.progress, reproducible=True
        )
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
    #: Functions returning a matplotlib `Figure`, embedded in the HTML report.
    figures: dict[str, Callable[[], Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def all_hold(self) -> bool:
        return all(c.holds for c in self.claims)

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
        from ..htmlreport import _STYLE, _png_base64

        esc = html.escape
        held = sum(c.holds for c in self.claims)
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{esc(self.title)}</title><style>{_STYLE}"
            "td.yes { color: #1f6f43; font-weight: bold; } td.no { color: #a02020; "
            "font-weight: bold; } td { text-align: left; }</style></head><body>",
            f"<h1>{esc(self.title)}</h1>",
            f"<p>Scale: <b>{esc(self.scale)}</b> · zombiesim {esc(__version__)} · "
            f"{held} of {len(self.claims)} directions match the paper.</p>",
        ]
        parts += [f"<p>{esc(n)}</p>" for n in self.notes]
        parts.append("<h2>The paper's numbers beside ours</h2><table><thead><tr>")
        parts.append(
            "".join(
                f"<th>{h}</th>"
                for h in ("experiment", "metric", "paper", "ours", "expected", "matches")
            )
        )
        parts.append("</tr></thead><tbody>")
        for c in self.claims:
            mark = '<td class="yes">yes</td>' if c.holds else '<td class="no">no</td>'
            cells = "".join(
                f"<td>{esc(str(v))}</td>"
                for v in (c.experiment, c.metric, c.paper, c.ours, c.expected)
            )
            parts.append(f"<tr>{cells}{mark}</tr>")
        parts.append("</tbody></table>")
        for name, make in self.figures.items():
            fig = make()
            parts.append(f"<h2>{esc(name)}</h2>")
            parts.append(f'<img alt="{esc(name)}" src="data:image/png;base64,{_png_base64(fig)}">')
        for name, frame in self.tables.items():
            parts.append(f"<h2>Table: {esc(name)}</h2>")
            parts.append(frame.to_html(index=False, float_format=lambda x: f"{x:.4g}"))
        parts.append("</body></html>\n")
        return "\n".join(parts)
