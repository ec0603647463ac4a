"""The standard views every report page shows, from a frame of runs
(`zs.to_frame(reports, lists=True)` or a sweep frame): WAF and erases, the latency CDF
and percentiles (timed runs only), the time series of cumulative WAF and free blocks, GC
copies by cause, and a heat map when two axes are swept. At most two panels a row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import plot
from ..plot.columns import points

__all__ = ["View", "add_views", "standard_views"]


@dataclass(frozen=True)
class View:
    """One figure of a page: its CSV name, caption and matplotlib `Figure`."""

    name: str
    caption: str
    figure: Any


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
    heat map `heat = (x, y, value)` when given."""
    by = _by(x, hue)
    line_hue = hue or "label"
    views = []

    fig, (left, right) = plot.panels(1, 2)
    plot.waf(df, x=x, hue=hue, ax=left)
    plot.erases(df, x=x, hue=hue, ax=right)
    views.append(
        View(
            "waf-erases",
            f"Write amplification (flash programs / host page writes) and block erases of "
            f"the measured phase, {by}; several runs in one place: their mean, the error "
            "bar spans min to max.",
            fig,
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
                "included: the CDF (log scale) and the p50, p99 and p99.9 of each run "
                "(p99 latency is the tail the GC policies move most).",
                fig,
            )
        )
    if _has_series(df):
        fig, (left, right) = plot.panels(1, 2)
        plot.series(df, "waf_cumulative", hue=line_hue, ax=left)
        plot.series(df, "free_blocks", hue=line_hue, ax=right)
        views.append(
            View(
                "time-series",
                "Cumulative WAF and free (erased) blocks against drive writes into the "
                "measured phase, one line per run.",
                fig,
            )
        )
    fig, ax = plot.panels(1, 1, width=8.0)
    plot.gc_copies(df, x=gc_x, ax=ax)
    views.append(
        View(
            "gc-copies",
            "Pages copied by cause (mean per bar): live, zombie (the device knew a newer "
            "copy was dirty in the host), shadow (a newer copy in the device buffer only), "
            "merges of the block-mapped FTLs and DFTL's translation pages "
            "(zs.plot.copies_by_cause says how each is derived).",
            fig,
        )
    )
    if heat is not None:
        hx, hy, value = heat
        fig, ax = plot.panels(1, 1, width=8.0, height=max(3.5, 0.9 * _distinct(df, hy) + 1.5))
        plot.heatmap(df, hx, hy, value, ax=ax)
        views.append(
            View(
                "heatmap",
                f"{value} by {hx} and {hy}: the mean over the other axes and seeds in each cell.",
                fig,
            )
        )
    return views


def _distinct(df, name: str) -> int:
    frame = plot.runs(df)
    return frame[plot.resolve(frame, name)].nunique(dropna=False)


def add_views(page, views: list[View], heading: str = "Plots") -> None:
    """Add `views` to `page` under `heading`."""
    page.heading(heading)
    for view in views:
        page.figure(view.figure, caption=view.caption, name=view.name)
