"""One scalar column per run, or by `x` and `hue`: bars or lines (`metric`, `waf`,
`erases`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .columns import category, fmt, is_numeric, resolve, runs, short, summary
from .figure import (
    BAR_COLOUR,
    SMALL,
    category_ticks,
    colour,
    legend,
    no_data,
    record,
    set_value_scale,
    spaced_ticks,
    target,
)


def metric(
    df,
    column: str,
    x: str | None = None,
    hue: str | None = None,
    ax=None,
    ylabel: str | None = None,
    title: str | None = None,
):
    """`column` per run: bars per label when `x` is None, bars per x value when x is
    categorical (side by side per hue), lines (one per hue) when x is numeric. Rows that
    share (x, hue) are drawn as their mean with min-max error bars. The value axis (and
    a numeric x) is linear unless its values span more than `figure.LOG_RATIO`, and the
    x labels never overlap (`figure.value_scale`, `figure.spaced_ticks`)."""
    frame = runs(df)
    if "label" not in frame.columns:
        frame = frame.assign(label=[str(i) for i in range(len(frame))])
    column = resolve(frame, column)
    xcol = resolve(frame, x) if x is not None else "label"
    hcol = resolve(frame, hue) if hue is not None else None
    fig, ax = target(ax)
    name = ylabel or column
    lines = x is not None and is_numeric(frame[xcol])
    keys = list(dict.fromkeys([xcol] + ([hcol] if hcol is not None else [])))
    data = frame.copy()
    for key in keys:
        if key != xcol or not lines:
            data[key] = category(data[key])
    stats = summary(data, column, keys)
    hkey = keys[1] if len(keys) > 1 else None
    if stats.empty:
        no_data(ax, f"no values of {column}", title or name)
    elif lines:
        _lines(ax, stats, xcol, hkey)
    else:
        _bars(ax, stats, xcol, hkey)
    default = f"{name} by {short(xcol)}" if x is not None else f"{name} by run"
    ax.set_title(title or default[0].upper() + default[1:])
    ax.set_xlabel(short(xcol) if x is not None else "run")
    ax.set_ylabel(name)
    if hkey is not None:
        legend(ax, short(hkey))
    value = short(column)
    out = stats.rename(
        columns={
            "mean": value,
            "min": f"{value} min",
            "max": f"{value} max",
            "count": "runs",
            **{k: short(k) for k in keys},
        }
    )
    record(ax, out)
    return fig


def _groups(stats, hkey: str | None) -> list[tuple[Any, Any]]:
    """(hue value, its rows) in order; one group of every row without a hue."""
    if hkey is None:
        return [(None, stats)]
    return [(h, stats[stats[hkey] == h]) for h in dict.fromkeys(stats[hkey])]


def _error_bars(ax, xs: Sequence[float], part, colour: str = "#333") -> None:
    """Min-max error bars where more than one run was averaged."""
    several = (part["count"] > 1).to_numpy()
    if not several.any():
        return
    mean, lo, hi = (part[c].to_numpy()[several] for c in ("mean", "min", "max"))
    xs = [x for x, s in zip(xs, several, strict=True) if s]
    ax.errorbar(xs, mean, yerr=spread(mean, lo, hi), fmt="none", ecolor=colour, capsize=3)


def spread(mean, lo, hi):
    """Error bar lengths below and above `mean` reaching `lo` and `hi` (never negative:
    the mean of equal values may differ from them in the last bit)."""
    import numpy as np

    return [np.clip(mean - lo, 0, None), np.clip(hi - mean, 0, None)]


def _bars(ax, stats, xkey: str, hkey: str | None) -> None:
    cats = list(dict.fromkeys(stats[xkey]))
    pos = {c: i for i, c in enumerate(cats)}
    groups = _groups(stats, hkey)
    width = 0.8 / len(groups)
    labelled = len(stats) <= 12
    for i, (h, part) in enumerate(groups):
        offset = (i - (len(groups) - 1) / 2) * width
        xs = [pos[c] + offset for c in part[xkey]]
        bars = ax.bar(
            xs,
            part["mean"],
            width=width,
            color=colour(i) if hkey else BAR_COLOUR,
            label=str(h) if hkey else None,
        )
        _error_bars(ax, xs, part)
        if labelled:
            ax.bar_label(bars, labels=[fmt(v) for v in part["mean"]], fontsize=SMALL, padding=2)
    category_ticks(ax, cats)
    ax.margins(y=0.12)
    ax.grid(alpha=0.3, axis="y")
    set_value_scale(ax, [*stats["mean"], *stats["min"], *stats["max"]], bars=True)


#: A numeric x axis with at most this many distinct values is labelled at the values
#: themselves (those with room: `figure.spaced_ticks`); with more, at round numbers.
MARKED_VALUES = 12


def _lines(ax, stats, xkey: str, hkey: str | None) -> None:
    for i, (h, part) in enumerate(_groups(stats, hkey)):
        part = part.sort_values(xkey)
        several = (part["count"] > 1).any()
        yerr = spread(*(part[c].to_numpy() for c in ("mean", "min", "max"))) if several else None
        ax.errorbar(
            part[xkey],
            part["mean"],
            yerr=yerr,
            marker="o",
            ms=4,
            lw=1.6,
            capsize=3,
            color=colour(i) if hkey else BAR_COLOUR,
            label=str(h) if hkey else None,
        )
    xs = stats[xkey].astype(float)
    set_value_scale(ax, xs, axis="x")
    set_value_scale(ax, [*stats["min"], *stats["max"]])
    ticks = sorted(set(xs.dropna()))
    if len(ticks) <= MARKED_VALUES:
        spaced_ticks(ax, ticks, [fmt(t) for t in ticks], upright=False)
    ax.grid(alpha=0.3)


def waf(df, x: str | None = None, hue: str | None = None, ax=None):
    """Write amplification (measured phase) per run, or by `x` and `hue`."""
    return metric(df, "waf", x=x, hue=hue, ax=ax, ylabel="WAF", title=None)


def erases(df, x: str | None = None, hue: str | None = None, ax=None):
    """Block erases (measured phase, `flash.erases`) per run, or by `x` and `hue`."""
    return metric(df, "flash.erases", x=x, hue=hue, ax=ax, ylabel="block erases")
