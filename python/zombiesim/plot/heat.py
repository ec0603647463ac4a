"""A two-axis sweep as an annotated heat map (`heatmap`)."""

from __future__ import annotations

import math

from .columns import category, fmt, is_numeric, missing, resolve, runs, short, summary
from .figure import no_data, record, spaced_ticks, target


def _order(values) -> list:
    """A key column's values in order: numbers ascending, text as first seen."""
    present = [v for v in values if not missing(v)]
    if is_numeric(values):
        return sorted(set(present))
    return list(dict.fromkeys(str(v) for v in present))


def heatmap(df, x: str, y: str, value: str = "waf", ax=None):
    """A two-axis sweep as an annotated heat map: the mean of `value` over the rows of
    each (x, y) cell (other axes and seeds averaged), its colours on a linear scale;
    the axis values labelled by `figure.spaced_ticks`."""
    import numpy as np

    frame = runs(df)
    xcol, ycol = resolve(frame, x), resolve(frame, y)
    vcol = resolve(frame, value)
    data = frame.copy()
    for key in (xcol, ycol):
        if not is_numeric(data[key]):
            data[key] = category(data[key])
    stats = summary(data, vcol, [xcol, ycol])
    xs, ys = _order(stats[xcol]), _order(stats[ycol])
    grid = np.full((len(ys), len(xs)), np.nan)
    for row in stats.itertuples(index=False):
        grid[ys.index(row[1]), xs.index(row[0])] = row[2]
    fig, ax = target(ax)
    name = "WAF" if short(vcol) == "waf" else short(vcol)
    title = f"{name} by {short(xcol)} and {short(ycol)}"
    if stats.empty:
        no_data(ax, f"no values of {short(vcol)}", title)
    else:
        image = ax.imshow(grid, cmap="viridis", aspect="auto")
        for (i, j), v in np.ndenumerate(grid):
            if not math.isnan(v):
                dark = image.norm(v) < 0.55
                ax.text(
                    j,
                    i,
                    fmt(v),
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white" if dark else "black",
                )
        spaced_ticks(ax, range(len(xs)), xs)
        spaced_ticks(ax, range(len(ys)), ys, axis="y")
        bar = fig.colorbar(image, ax=ax)
        bar.set_label(f"{name} (mean)")
        ax.set_title(title)
    ax.set_xlabel(short(xcol))
    ax.set_ylabel(short(ycol))
    out = stats.rename(
        columns={
            xcol: short(xcol),
            ycol: short(ycol),
            "mean": short(vcol),
            "min": f"{short(vcol)} min",
            "max": f"{short(vcol)} max",
            "count": "runs",
        }
    )
    record(ax, out)
    return fig
