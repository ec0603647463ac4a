"""The time series of the measured phase (`series`)."""

from __future__ import annotations

from .columns import hue_values, resolve, runs, short
from .figure import legend, lines_frame, list_lines, no_data, record, set_value_scale, target

#: Axis labels of the time series' fields.
SERIES_LABELS = {
    "waf_cumulative": "cumulative WAF",
    "waf_interval": "WAF per interval",
    "free_blocks": "free blocks",
    "gc_pages_copied": "GC pages copied (cumulative)",
    "flash_erases": "erases (cumulative)",
    "flash_programs": "flash programs (cumulative)",
    "host_write_pages": "host pages written (cumulative)",
}


def series(df, y: str = "waf_cumulative", hue: str | None = "label", ax=None):
    """A time series field (`series.<y>`: `waf_cumulative`, `waf_interval`,
    `free_blocks`, ...) against drive writes into the measured phase, one line per run,
    one colour per `hue` value; linear from zero unless the values span more than
    `figure.LOG_RATIO` (`figure.value_scale`)."""

    frame = runs(df)
    fig, ax = target(ax)
    field = y.removeprefix("series.")
    name = SERIES_LABELS.get(field, field)
    title = f"{name[0].upper()}{name[1:]} over the measured phase"
    ycol, xcol = f"series.{field}", "series.drive_writes"
    ax.set_xlabel("drive writes into the measured phase")
    ax.set_ylabel(name)
    rows = []
    if ycol in frame.columns and xcol in frame.columns:
        rows = list_lines(ax, frame, xcol, ycol, hue_values(frame, hue))
    if rows:
        ax.set_title(title)
        ax.grid(alpha=0.3)
        values = [r[3] for r in rows]
        if set_value_scale(ax, values) == "linear" and min(values) >= 0:
            ax.set_ylim(bottom=0)
        legend(ax, short(resolve(frame, hue)) if hue else None)
    else:
        no_data(ax, "no time series\n(the measured phase was shorter than one point)", title)
    data = lines_frame(rows, ["drive_writes", field], frame, hue)
    record(ax, data)
    return fig
