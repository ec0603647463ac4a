"""Figures and panels for `zs.plot`: an Agg canvas without pyplot, legends beside the
panels, category ticks, and what each panel drew (`drawn`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: The colours of the plots' categories (matplotlib's tab10).
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
#: Bars without a hue.
BAR_COLOUR = "#4c78a8"
#: The smallest font the plots use, points.
SMALL = 8
#: Where the attribute holding what a panel drew lives on its Axes.
_DRAWN = "_zombiesim_drawn"


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


# -- figures and panels ----------------------------------------------------------------------


def panels(nrows: int = 1, ncols: int = 1, *, width: float | None = None, height: float = 4.0):
    """A `Figure` (constrained layout, Agg canvas) and its axes: one Axes when the grid
    is 1 x 1, else a flat list. `width` (inches) defaults to 6.4 for one column and 11
    for two: at 96 dpi two panels fill a ~1100 px page without being scaled down.
    `height` is per row."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    width = width if width is not None else (6.4 if ncols == 1 else 11.0)
    fig = Figure(figsize=(width, height * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    flat = [ax for row in axes for ax in row]
    return fig, flat[0] if len(flat) == 1 else flat


def target(ax):
    """The figure and axes to draw into: `ax`'s, or a new one-panel figure."""
    if ax is None:
        return panels()
    fig = ax.figure
    while getattr(fig, "figure", None) is not None and fig.figure is not fig:
        fig = fig.figure  # a SubFigure's root
    return fig, ax


def record(ax, frame) -> None:
    """Remember what `ax` drew (for `drawn`)."""
    setattr(ax, _DRAWN, frame.reset_index(drop=True))


def drawn(fig):
    """The numbers the `zs.plot` functions drew into `fig`, one DataFrame: each panel's
    rows, with a `panel` column (its title) when more than one panel drew; empty when
    none did."""
    import pandas as pd

    parts = [(ax.get_title(), getattr(ax, _DRAWN)) for ax in fig.axes if hasattr(ax, _DRAWN)]
    parts = [(title, frame) for title, frame in parts if not frame.empty]
    if not parts:
        return pd.DataFrame()
    if len(parts) == 1:
        return parts[0][1].copy()
    return pd.concat(
        [frame.assign(panel=title)[["panel", *frame.columns]] for title, frame in parts],
        ignore_index=True,
    )


def legend(ax, title: str | None = None) -> None:
    """`ax`'s legend outside the panel, to its right, so that it never covers data
    (constrained layout makes room for it); nothing when nothing is labelled."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    ax.legend(
        handles,
        labels,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        borderaxespad=0.0,
        fontsize=SMALL,
        title=title,
        title_fontsize=SMALL,
        frameon=False,
    )


def category_ticks(ax, names: Sequence[Any]) -> None:
    """One x tick per category at 0, 1, ...; slanted when there are many or long ones."""
    names = [str(n) for n in names]
    slant = len(names) > 4 or any(len(n) > 8 for n in names)
    ax.set_xticks(
        range(len(names)), names, rotation=30 if slant else 0, ha="right" if slant else "center"
    )


def no_data(ax, text: str, title: str) -> None:
    ax.text(
        0.5,
        0.5,
        text,
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=10,
        color="#666",
    )
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title)


def list_lines(ax, frame, xcol: str, ycol: str, hues: Sequence[str]) -> list[tuple]:
    """One line per run from its list columns `xcol` and `ycol`, coloured by its hue
    (one legend entry per hue). Returns what was drawn: `(hue, label, x, y)` rows."""
    from .columns import points

    colours = {h: colour(i) for i, h in enumerate(dict.fromkeys(hues))}
    labels = frame["label"].astype(str) if "label" in frame.columns else None
    seen: set[str] = set()
    rows: list[tuple] = []
    for i in range(len(frame)):
        xs, ys = points(frame[xcol].iloc[i]), points(frame[ycol].iloc[i])
        if not xs or not ys:
            continue
        h = hues[i]
        ax.plot(xs, ys, color=colours[h], lw=1.6, label=h if h not in seen else "_nolegend_")
        seen.add(h)
        label = labels.iloc[i] if labels is not None else str(i)
        rows += [(h, label, a, b) for a, b in zip(xs, ys, strict=True)]
    return rows


def lines_frame(rows: list[tuple], columns: list[str], frame, hue: str | None):
    """What `list_lines` drew as a DataFrame (`columns` after `hue`, `label`): the hue
    column is named for the hue, or dropped when the hue is the label itself."""
    import pandas as pd

    from .columns import resolve, short

    data = pd.DataFrame(rows, columns=["hue", "label", *columns])
    if hue in (None, "label"):
        return data.drop(columns="hue")
    return data.rename(columns={"hue": short(resolve(frame, hue))})
