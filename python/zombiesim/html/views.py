"""The standard views every report page shows, from a frame of runs
(`zs.to_frame(reports, lists=True)` or a sweep frame): WAF and erases, the latency CDF
and percentiles (timed runs only), the time series of cumulative WAF and free blocks, GC
copies by cause, and a heat map when two axes are swept. At most two panels a row.

A panel that would draw a constant says so in one line of text instead (`View.notes`),
and a figure whose every panel is constant is not drawn at all: a time series that stays
at one value through every run's measured phase (`Free blocks: 2 throughout the measured
phase of every run.`), a metric with one value in every run (two runs or more), GC that
copied no page in any run, a heat map with one value in every cell. The charts' own
rules (tick labels that never overlap, a log axis only past a 30x range) are
`zs.plot.spaced_ticks` and `zs.plot.value_scale`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import plot
from ..plot.columns import numbers, points
from ..plot.timeseries import SERIES_LABELS

__all__ = ["View", "add_views", "flat_metric", "flat_series", "standard_views"]


@dataclass(frozen=True)
class View:
    """One figure of a page: its CSV name, caption and matplotlib `Figure`, and the
    lines of text (`notes`) that stand for the panels left out because they would have
    drawn a constant; `figure` is None when every panel was."""

    name: str
    caption: str
    figure: Any
    notes: tuple[str, ...] = field(default=())


#: A run list longer than this is told by counts, not names, in a note.
NAMED_RUNS = 8


def _number(v: float) -> str:
    """A value as a note says it: whole numbers without decimals, else 4 digits."""
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:.4g}"


def _sentence(name: str) -> str:
    return name[:1].upper() + name[1:]


def flat_metric(df, column: str, name: str) -> str | None:
    """`"WAF: 2.5 in every run."` when two runs or more (a sweep frame's ok ones) all
    have the same value of `column`; None otherwise."""
    frame = plot.runs(df)
    if column not in frame.columns:
        return None
    values = numbers(frame, column).dropna()
    if len(values) < 2 or values.nunique() > 1:
        return None
    return f"{_sentence(name)}: {_number(values.iloc[0])} in every run."


def flat_series(df, field_name: str) -> str | None:
    """When every run's time series `series.<field_name>` (two points or more) stays at
    one value: `"Free blocks: 2 throughout the measured phase of every run."`, or, runs
    at different values, each value with its runs (named up to `NAMED_RUNS`, else
    counted); None when a run's series moves or no run has one."""
    frame = plot.runs(df)
    column = f"series.{field_name}"
    if column not in frame.columns:
        return None
    labels = frame["label"].astype(str) if "label" in frame.columns else None
    levels: dict[float, list[str]] = {}
    for i, cell in enumerate(frame[column]):
        values = points(cell)
        if len(values) < 2:
            continue
        if len(set(values)) > 1:
            return None
        label = labels.iloc[i] if labels is not None else str(i)
        levels.setdefault(values[0], []).append(label)
    if not levels:
        return None
    name = _sentence(SERIES_LABELS.get(field_name, field_name))
    runs = sum(len(v) for v in levels.values())
    if len(levels) == 1:
        (level,) = levels
        who = "every run" if runs > 1 else "the run"
        return f"{name}: {_number(level)} throughout the measured phase of {who}."
    parts = [
        f"{_number(v)} ({', '.join(levels[v])})"
        if runs <= NAMED_RUNS
        else f"{_number(v)} in {len(levels[v])} runs"
        for v in sorted(levels)
    ]
    return f"{name}: constant through each run's measured phase: {'; '.join(parts)}."


def _timed(df) -> bool:
    column = "latency.all.cdf_us"
    if column not in df.columns:
        return False
    return any(len(points(v)) for v in plot.runs(df)[column])


def _has_series(df) -> bool:
    column = "series.drive_writes"
    if column not in df.columns:
        return False
    return any(len(points(v)) for v in plot.runs(df)[column])


def _by(x: str | None, hue: str | None) -> str:
    """How a figure groups the runs, for its caption."""
    if x is None and hue is None:
        return "per run"
    if hue is None:
        return f"by {x}"
    if x is None:
        return f"per run, coloured by {hue}"
    return f"by {x}, one colour per {hue}"


#: A panel of a figure: what it shows (for the caption) and how to draw it into an Axes.
Panel = tuple[str, Callable[[Any], Any]]


def _figure(panels: Sequence[Panel]):
    """The panels side by side (one: a figure of its own size), None without any."""
    if not panels:
        return None
    fig, axes = plot.panels(1, len(panels))
    for (_, draw), ax in zip(panels, axes if len(panels) > 1 else [axes], strict=True):
        draw(ax)
    return fig


def _and(parts: Sequence[str]) -> str:
    return " and ".join(parts)


def standard_views(
    df,
    *,
    x: str | None = None,
    hue: str | None = None,
    heat: tuple[str, str, str] | None = None,
    gc_x: str = "label",
) -> list[View]:
    """The standard figures of `df`: `x` and `hue` as in `zs.plot.metric` (rows that
    share them are averaged, min-max error bars), the latency CDF and time series
    coloured by `hue` (each run by its label without one), GC copies by `gc_x`, and the
    heat map `heat = (x, y, value)` when given. A panel that would draw a constant is a
    note instead (`flat_metric`, `flat_series`)."""
    by = _by(x, hue)
    line_hue = hue or "label"
    views = []

    scalars = [
        ("waf", "WAF", "write amplification (flash programs / host page writes)", plot.waf),
        ("flash.erases", "block erases", "block erases", plot.erases),
    ]
    shown: list[Panel] = []
    notes = []
    for column, name, what, draw in scalars:
        flat = flat_metric(df, column, name)
        if flat is not None:
            notes.append(flat)
        else:
            shown.append((what, lambda ax, draw=draw: draw(df, x=x, hue=hue, ax=ax)))
    views.append(
        View(
            "waf-erases",
            f"{_sentence(_and([w for w, _ in shown]))} of the measured phase, {by}; several "
            "runs in one place: their mean, the error bar spans min to max.",
            _figure(shown),
            tuple(notes),
        )
    )
    if _timed(df):
        fig, (left, right) = plot.panels(1, 2)
        plot.latency_cdf(df, "all", hue=line_hue, ax=left)
        plot.latency_percentiles(df, "all", ax=right)
        views.append(
            View(
                "latency",
                "Request latency of the timed runs, reads and writes together, queueing "
                "included: the CDF and the p50, p99 and p99.9 of each run (p99 latency is "
                "the tail the GC policies move most); an axis is logarithmic only when its "
                f"values span more than {plot.LOG_RATIO:g}x.",
                fig,
            )
        )
    if _has_series(df):
        shown, notes = [], []
        for field_name in ("waf_cumulative", "free_blocks"):
            flat = flat_series(df, field_name)
            if flat is not None:
                notes.append(flat)
                continue
            shown.append(
                (
                    SERIES_LABELS[field_name].replace("free blocks", "free (erased) blocks"),
                    lambda ax, f=field_name: plot.series(df, f, hue=line_hue, ax=ax),
                )
            )
        views.append(
            View(
                "time-series",
                f"{_sentence(_and([w for w, _ in shown]))} against drive writes into the "
                "measured phase, one line per run.",
                _figure(shown),
                tuple(notes),
            )
        )
    copied = plot.copies_by_cause(df)
    if len(copied) and not copied[[c for c, _, _ in plot.CAUSES]].to_numpy().any():
        views.append(
            View("gc-copies", "", None, ("GC copies by cause: GC copied no page in any run.",))
        )
    else:
        fig, ax = plot.panels(1, 1, width=8.0)
        plot.gc_copies(df, x=gc_x, ax=ax)
        views.append(
            View(
                "gc-copies",
                "Pages copied by cause (mean per bar): live, zombie (the device knew a newer "
                "copy was dirty in the host), shadow (a newer copy in the device buffer "
                "only), merges of the block-mapped FTLs and DFTL's translation pages "
                "(zs.plot.copies_by_cause says how each is derived).",
                fig,
            )
        )
    if heat is not None:
        views.append(_heat_view(df, *heat))
    return views


def _heat_view(df, hx: str, hy: str, value: str) -> View:
    """The heat map of `value` by `hx` and `hy`, or a note when every cell has one value."""
    frame = plot.runs(df)
    keys = [plot.resolve(frame, hx), plot.resolve(frame, hy)]
    means = (
        frame[keys]
        .astype(str)
        .assign(_v=numbers(frame, plot.resolve(frame, value)))
        .dropna(subset=["_v"])
        .groupby(keys)["_v"]
        .mean()
    )
    if len(means) > 1 and means.nunique() == 1:
        name = "WAF" if value == "waf" else value
        note = f"{name}: {_number(means.iloc[0])} in every cell of {hx} by {hy}."
        return View("heatmap", "", None, (note,))
    fig, ax = plot.panels(1, 1, width=8.0, height=max(3.5, 0.9 * _distinct(df, hy) + 1.5))
    plot.heatmap(df, hx, hy, value, ax=ax)
    return View(
        "heatmap",
        f"{value} by {hx} and {hy}: the mean over the other axes and seeds in each cell.",
        fig,
    )


def _distinct(df, name: str) -> int:
    frame = plot.runs(df)
    return frame[plot.resolve(frame, name)].nunique(dropna=False)


def add_views(page, views: list[View], heading: str = "Plots") -> None:
    """Add `views` to `page` under `heading`: each view's notes (one line each), then
    its figure when it has one."""
    page.heading(heading)
    for view in views:
        for note in view.notes:
            page.note(note)
        if view.figure is not None:
            page.figure(view.figure, caption=view.caption, name=view.name)
