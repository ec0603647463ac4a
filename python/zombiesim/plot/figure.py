"""Figures and panels for `zs.plot`: an Agg canvas without pyplot, legends beside the
panels, the two rules every chart of a report follows (tick labels that never overlap:
`spaced_ticks`; a log value axis only for a wide range: `value_scale`), and what each
panel drew (`drawn`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
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


# -- tick labels that never overlap --------------------------------------------------------

#: The space a tick label keeps clear beside its neighbours, in ems of its font.
LABEL_GAP_EM = 0.6
#: A line of text's height, in ems (DejaVu Sans' ascent plus descent, rounded up).
LINE_EM = 1.2


def text_width(text: str, size: float) -> float:
    """How wide `text` is set at `size` points in matplotlib's font, in points."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    width, _, _ = text_to_path.get_text_width_height_descent(
        text, FontProperties(size=size), ismath=False
    )
    return width


def _tick_size(axis: str) -> float:
    """The points of the tick labels' default font (`xtick.labelsize`, `ytick.labelsize`)."""
    import matplotlib
    from matplotlib.font_manager import FontProperties

    return FontProperties(size=matplotlib.rcParams[f"{axis}tick.labelsize"]).get_size_in_points()


def _panel_points(ax, axis: str) -> float:
    """The length of `ax`'s `axis` in points before the layout runs (its place on the
    subplot grid): what `spaced_ticks` judges whether labels fit side by side by."""
    box = ax.get_position()
    fig = ax.figure
    inches = box.width * fig.get_figwidth() if axis == "x" else box.height * fig.get_figheight()
    return inches * 72


def _spaced_locator(positions: Sequence[float], pitch: float):
    """A matplotlib `Locator` of the `positions` to label: from the lowest up, each one
    at least `pitch` points past the last kept, measured along the axis when the figure
    is drawn (after the layout has sized the panel, whatever the axis' scale)."""
    from matplotlib.ticker import Locator

    class SpacedLocator(Locator):
        def __call__(self):
            axis = self.axis
            lo, hi = sorted(axis.get_view_interval())
            shown = sorted(p for p in positions if lo <= p <= hi)
            if len(shown) < 2:
                return shown
            scale = axis.get_transform()
            a, b = scale.transform([lo, hi])
            box = axis.axes.bbox
            pixels = box.width if axis.axis_name == "x" else box.height
            length = pixels * 72 / axis.axes.figure.dpi
            if not (length > 0 and math.isfinite(b - a) and b != a):
                return shown
            kept: list[float] = []
            last = -math.inf
            for p, t in zip(shown, scale.transform(shown), strict=True):
                at = (t - a) / (b - a) * length
                if at - last >= pitch:
                    kept.append(p)
                    last = at
            return kept

        def tick_values(self, vmin, vmax):
            return [p for p in positions if min(vmin, vmax) <= p <= max(vmin, vmax)]

    return SpacedLocator()


def spaced_ticks(
    ax, positions: Sequence[float], names: Sequence[Any], *, axis: str = "x", upright: bool = True
) -> None:
    """Label `ax`'s `axis` with `names` at `positions` so that no two labels overlap,
    however many there are: the rule of every chart of a report.

    - An x axis whose labels all fit side by side (each as wide as the longest plus
      `LABEL_GAP_EM`, judged at the panel's place on the figure's grid) keeps them
      level at the default size. Otherwise, with `upright`, they turn upright (90°: a
      label then needs only a line's height of the axis, and its box on the page is
      its text's) at `SMALL` points; without it (a numeric axis) they stay level.
    - When the figure is drawn, after the layout has sized the panel, only labels at
      least one label's room apart (its width level, `LINE_EM` plus the gap upright
      or on a y axis) are shown: every k-th of evenly spaced categories, the first of
      values crowded together. Names stay in the order of their positions.
    """
    from matplotlib.ticker import FuncFormatter, NullLocator

    positions = [float(p) for p in positions]
    names = [str(n) for n in names]
    by_position = dict(zip(positions, names, strict=True))
    size = _tick_size(axis)
    longest = max((text_width(n, size) for n in names), default=0.0)
    level = axis == "y" or not upright
    if axis == "x" and upright:
        level = len(names) * (longest + LABEL_GAP_EM * size) <= _panel_points(ax, axis)
    if axis == "x" and level:
        pitch = longest + LABEL_GAP_EM * size
    else:
        size = size if level else SMALL
        pitch = (LINE_EM + LABEL_GAP_EM) * size
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(_spaced_locator(positions, pitch))
    target.set_major_formatter(FuncFormatter(lambda v, _: _nearest(by_position, v)))
    target.set_minor_locator(NullLocator())
    ax.tick_params(axis=axis, which="major", labelsize=size, labelrotation=0 if level else 90)


def _nearest(by_position: dict[float, str], v: float) -> str:
    """The name at `v`, or at the position nearest it (a position through a float round
    trip); nothing when none is within a millionth of the span."""
    if v in by_position or not by_position:
        return by_position.get(v, "")
    p = min(by_position, key=lambda q: abs(q - v))
    span = max(by_position) - min(by_position) or 1.0
    return by_position[p] if abs(p - v) <= 1e-6 * span else ""


def category_ticks(ax, names: Sequence[Any], *, axis: str = "x") -> None:
    """One tick per category at 0, 1, ..., labelled by `spaced_ticks` (level when they
    fit, else upright and every k-th)."""
    names = list(names)
    spaced_ticks(ax, range(len(names)), names, axis=axis)


# -- the value axis: linear unless the range is wide ----------------------------------------

#: A value axis is logarithmic only when its positive values span more than this
#: (largest / smallest); up to it a linear axis keeps every bar in proportion.
LOG_RATIO = 30.0


def value_scale(values: Iterable[Any], *, stacked: bool = False) -> str:
    """`"log"` or `"linear"` for an axis that shows `values`: the rule of every chart of
    a report. Log only when the positive, finite values span more than `LOG_RATIO`
    (30x): a p99.9 a hundred times the p50 then still shows both. Otherwise linear, so
    that a small bar is a small bar, not a stub at the bottom of a log axis. Stacked
    bars are always linear (on a log axis a segment no longer shows its share), and
    so is an axis with a negative value or fewer than two positive ones."""
    values = list(values)
    if stacked or any(f is not None and f < 0 for f in map(_finite, values)):
        return "linear"
    positive = _positives(values)
    if len(positive) < 2 or max(positive) / min(positive) <= LOG_RATIO:
        return "linear"
    return "log"


def _finite(v: Any) -> float | None:
    """`v` as a finite float, None when it is not one."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _positives(values: Iterable[Any]) -> list[float]:
    """The finite numbers above zero among `values` (anything else left out)."""
    return [f for f in map(_finite, values) if f is not None and f > 0]


#: A log axis spanning at most this many decades is marked at 1, 2 and 5 times each power
#: of ten, in plain numbers (with only a power of ten or two it would say little).
FEW_DECADES = 3


def set_value_scale(
    ax, values: Iterable[Any], *, axis: str = "y", bars: bool = False, stacked: bool = False
) -> str:
    """Give `ax`'s `axis` the scale `value_scale(values)` chooses, and return it. Call it
    after drawing. On a log axis of at most `FEW_DECADES` decades the ticks are at 1, 2
    and 5 times the powers of ten, as plain numbers. With `bars` on a log axis, the axis
    starts at the power of ten at or below half the smallest positive value, so that
    the shortest bar still stands at least a third of a decade tall."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    values = list(values)
    scale = value_scale(values, stacked=stacked)
    (ax.set_xscale if axis == "x" else ax.set_yscale)(scale)
    if scale == "linear":
        return scale
    positive = _positives(values)
    target = ax.xaxis if axis == "x" else ax.yaxis
    if max(positive) / min(positive) <= 10**FEW_DECADES:
        target.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
        target.set_minor_formatter(NullFormatter())
    if bars:
        bottom = 10 ** math.floor(math.log10(min(positive) / 2))
        if axis == "x":
            ax.set_xlim(left=bottom)
        else:
            ax.set_ylim(bottom=bottom)
    return scale


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
