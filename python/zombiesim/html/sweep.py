"""The sweep page: one row per cell of a grid of runs (a sweep frame: the columns of
`zs.to_frame(reports, lists=True)` plus `cell`, `status`, `error` and `axis.<name>` per
swept axis), the failed cells, the standard views by the swept axes and the run."""

from __future__ import annotations

import os
from collections.abc import Sequence

from .. import plot
from .._io import atomic_write
from .page import Page
from .views import add_views, standard_views

__all__ = ["results_frame", "sweep_html", "write_sweep_html"]


def _axis(name: str) -> str:
    return f"axis.{name}"


def _column(df, name: str):
    """A column of `df`, or missing values when it has none."""
    import pandas as pd

    if name in df.columns:
        return df[name]
    return pd.Series([None] * len(df), index=df.index, dtype=object)


def results_frame(df, axes: Sequence[str], metrics: Sequence[str]):
    """One row per cell: its axis values (named by axis), status and `metrics`."""
    import pandas as pd

    out = pd.DataFrame({a: _column(df, _axis(a)) for a in axes})
    out["status"] = _column(df, "status")
    for m in metrics:
        out[m] = _column(df, m)
    return out.reset_index(drop=True)


def _failed(df, axes: Sequence[str]):
    import pandas as pd

    failed = df[_column(df, "status") != "ok"]
    out = pd.DataFrame({a: _column(failed, _axis(a)) for a in axes})
    out["error"] = _column(failed, "error")
    return out.reset_index(drop=True)


def _summary(df, axes: Sequence[str]) -> str:
    ok = int((_column(df, "status") == "ok").sum())
    parts = []
    for a in axes:
        values = list(dict.fromkeys(str(v) for v in _column(df, _axis(a))))
        parts.append(f"{a} ({', '.join(values)})")
    text = f"{len(df)} cells, {ok} ok, {len(df) - ok} failed"
    return text + (f"; axes: {'; '.join(parts)}." if parts else ".")


def _unique(df, column: str):
    """The one value every ok cell has in `column`, else None."""
    values = plot.runs(df).get(column)
    if values is None:
        return None
    distinct = values.dropna().unique()
    return distinct[0] if len(distinct) == 1 else None


def _views(df, axes: Sequence[str], metrics: Sequence[str]):
    """The standard views with hue = the first axis and x = the second (one axis: x);
    GC copies by the first axis; the heat map of the first metric when two axes."""
    if not axes:
        return standard_views(df)
    hue = axes[0] if len(axes) > 1 else None
    x = axes[1] if len(axes) > 1 else axes[0]
    heat = (axes[1], axes[0], metrics[0]) if len(axes) == 2 and metrics else None
    return standard_views(df, x=x, hue=hue, heat=heat, gc_x=axes[0])


def sweep_html(
    df,
    *,
    title: str,
    axes: Sequence[str],
    metrics: Sequence[str],
    command: str | None = None,
    grid_text: str | None = None,
    config_toml: str | None = None,
    version: str | None = None,
) -> str:
    """The sweep page as a string. `axes` are the swept axis names (columns
    `axis.<name>`), `metrics` the scalar columns to tabulate (the first is the heat
    map's). Shows the results table (one row per cell: axis values, status, metrics;
    one line instead when every metric is zero), the failed cells with their errors
    when any failed, the standard views of the ok cells (hue = first axis, x = second;
    a heat map when exactly two axes; a constant is a line of text) and the run
    (`command`, `version`, the grid file `grid_text`, the base `config_toml`)."""
    axes, metrics = list(axes), list(metrics)
    page = Page(title)
    page.paragraph(_summary(df, axes))
    page.heading("Results")
    page.table(
        results_frame(df, axes, metrics),
        name="results",
        figures=metrics,
        if_all_zero=f"Every metric ({', '.join(metrics)}) is zero in every cell that "
        "finished; the cells, their axis values and status are in the CSV.",
    )
    failed = _failed(df, axes)
    if not failed.empty:
        page.heading("Failed cells")
        page.table(failed, name="failed", wrap=["error"], figures=())
    if len(plot.runs(df)):
        add_views(page, _views(df, axes, metrics))
    page.run_section(
        command=command,
        version=version,
        facts=[
            ("workload", _unique(df, "run.workload")),
            ("seed", _unique(df, "run.seed")),
            ("axes", ", ".join(axes) or None),
        ],
        config_toml=config_toml,
        grid_text=grid_text,
    )
    return page.html()


def write_sweep_html(path: str | os.PathLike[str], df, **kwargs) -> None:
    """Write `sweep_html(df, **kwargs)` to `path` atomically."""
    atomic_write(path, sweep_html(df, **kwargs))
