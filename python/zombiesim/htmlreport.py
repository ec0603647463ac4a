"""A self-contained HTML page comparing runs: a WAF bar chart, for timed runs a p99
latency bar chart, and WAF-over-time lines (a PNG embedded as base64), the comparison
table, for ShadowGC runs the GC latency and the relocated pages by state (003 Figs. 7-8)
as a plot and a table, and the config, workload and seed.

Plots use matplotlib's Agg canvas directly, so nothing here touches pyplot's global state
or needs a display.
"""

from __future__ import annotations

import base64
import html
import io
import os
from collections.abc import Mapping

from ._core import __version__
from ._format import best_label, compare_columns, count, has_shadow, percent
from ._io import atomic_write
from .report import STATES, Report

__all__ = ["comparison_figure", "comparison_html", "shadow_figure", "write_comparison_html"]

#: Colours of the page states in the by-state plots (live, host, device, twin shadow).
STATE_COLOURS = {
    "live": "#9aa5b1",
    "host_shadow": "#c98f7f",
    "device_shadow": "#7fa8c9",
    "twin_shadow": "#8fbf7f",
}
STATE_NAMES = {
    "live": "live",
    "host_shadow": "host-shadow",
    "device_shadow": "device-shadow",
    "twin_shadow": "twin-shadow",
}


def comparison_figure(reports: Mapping[str, Report]):
    """A matplotlib `Figure`: WAF per label (bars, best in a darker colour); when any run
    was timed, the p99 read and write latency per label (grouped bars, µs); and each run's
    cumulative WAF against drive writes into the measured phase (lines)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    labels = list(reports)
    timed = any(r.timed for r in reports.values())
    fig = Figure(figsize=(15, 4.4) if timed else (11, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    if timed:
        bars_ax, latency_ax, lines_ax = fig.subplots(1, 3, width_ratios=[1, 1.1, 1.4])
    else:
        bars_ax, lines_ax = fig.subplots(1, 2, width_ratios=[1, 1.5])

    best = best_label(reports)
    wafs = [reports[k].raw["waf"] for k in labels]  # None: the run wrote nothing
    colours = ["#1f6f43" if k == best else "#7fa8c9" for k in labels]
    bars = bars_ax.bar(range(len(labels)), [w or 0.0 for w in wafs], color=colours)
    bar_labels = [f"{w:.2f}" if w is not None else "n/a" for w in wafs]
    bars_ax.bar_label(bars, labels=bar_labels, fontsize=8, padding=2)
    bars_ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=9)
    bars_ax.set_ylabel("write amplification (measured phase)")
    bars_ax.set_title("WAF per run")
    bars_ax.margins(y=0.12)

    if timed:
        _latency_bars(latency_ax, reports)

    for label in labels:
        series = reports[label].series_frame()
        if series.empty:
            continue
        lines_ax.plot(series["drive_writes"], series["waf_cumulative"], label=label, lw=1.6)
    lines_ax.set_xlabel("drive writes into the measured phase")
    lines_ax.set_ylabel("cumulative WAF")
    lines_ax.set_title("WAF over time")
    lines_ax.set_ylim(bottom=0)
    lines_ax.grid(alpha=0.3)
    if lines_ax.lines:
        lines_ax.legend(fontsize=8)
    else:
        lines_ax.text(
            0.5,
            0.5,
            "no time series\n(the measured phase was shorter than one point)",
            ha="center",
            va="center",
            transform=lines_ax.transAxes,
            fontsize=9,
            color="#666",
        )
    return fig


def _latency_bars(ax, reports: Mapping[str, Report]) -> None:
    """p99 read and write latency per label, side by side (in ms; a run without reads or
    writes, or untimed, has no bar)."""
    labels = list(reports)
    width = 0.4
    for i, (kind, colour) in enumerate((("read", "#7fa8c9"), ("write", "#c98f7f"))):
        values = []
        for k in labels:
            latency = reports[k].raw.get("latency")
            summary = latency[kind] if latency is not None else None
            values.append(summary["p99_us"] if summary and summary["count"] else 0.0)
        xs = [x + (i - 0.5) * width for x in range(len(labels))]
        heights = [v / 1000 for v in values]
        bars = ax.bar(xs, heights, width=width, color=colour, label=f"{kind} p99")
        ax.bar_label(bars, labels=[_short_us(v) for v in values], fontsize=7, padding=2)
    ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=9)
    ax.set_ylabel("p99 latency (ms)")
    ax.set_title("p99 request latency")
    ax.margins(y=0.15)
    ax.legend(fontsize=8)


def shadow_figure(reports: Mapping[str, Report]):
    """A matplotlib `Figure` for ShadowGC runs: the accumulated GC latency per label
    (003 Fig. 7: reads with ECC, buffer reads, normal and fast programs, erases; relative
    to the first run above each bar) and the share of GC-relocated pages by state
    (003 Fig. 8: stacked bars of live, host-, device- and twin-shadow pages)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    labels = list(reports)
    fig = Figure(figsize=(12, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    lat_ax, share_ax = fig.subplots(1, 2)
    xs = range(len(labels))

    latency = [reports[k].raw["gc"].get("latency_s") or 0.0 for k in labels]
    bars = lat_ax.bar(xs, latency, color="#7fa8c9")
    first = latency[0] if latency else 0.0
    rel = [f"{v / first - 1:+.1%}" if first and i else "" for i, v in enumerate(latency)]
    lat_ax.bar_label(bars, labels=rel, fontsize=8, padding=2)
    lat_ax.set_xticks(xs, labels, rotation=30, ha="right", fontsize=9)
    lat_ax.set_ylabel("accumulated GC latency (s)")
    lat_ax.set_title(f"GC latency (vs {labels[0]})" if labels else "GC latency")
    lat_ax.margins(y=0.12)

    bottom = [0.0] * len(labels)
    shares = [reports[k].copied_shares or dict.fromkeys(STATES, 0.0) for k in labels]
    for state in STATES:
        heights = [sh[state] for sh in shares]
        share_ax.bar(
            xs, heights, bottom=bottom, color=STATE_COLOURS[state], label=STATE_NAMES[state]
        )
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    share_ax.set_xticks(xs, labels, rotation=30, ha="right", fontsize=9)
    share_ax.set_ylim(0, 1)
    share_ax.set_ylabel("share of GC-relocated pages")
    share_ax.set_title("Relocated pages by state")
    share_ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def _shadow_table(reports: Mapping[str, Report]) -> str:
    """The relocated pages by state (count and share), buffer reads, fast programs,
    skipped pages, GC latency and refresh, one row per run."""
    esc = html.escape
    heads = [
        "label",
        *(STATE_NAMES[s] for s in STATES),
        "buffer reads",
        "fast programs",
        "skipped",
        "GC latency s",
        "refresh pages",
    ]
    rows = []
    for label, rep in reports.items():
        gc = rep.raw["gc"]
        by_state = gc.get("copied_by_state") or {}
        shares = rep.copied_shares or {}
        cells = [esc(label)]
        for state in STATES:
            n = by_state.get(state, 0)
            share = shares.get(state)
            cells.append(f"{count(n)} ({percent(share)})" if share is not None else count(n))
        refresh = rep.raw.get("refresh")
        cells += [
            count(gc.get("buffer_reads")),
            count(gc.get("fast_programs")),
            count(gc.get("skipped")),
            f"{gc.get('latency_s', 0.0):,.1f}",
            count(refresh["pages"]) if refresh else "-",
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{esc(h)}</th>" for h in heads)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _short_us(us: float) -> str:
    if not us:
        return ""
    if us >= 1e6:
        return f"{us / 1e6:.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:.1f} ms"
    return f"{us:.0f} µs"


def _png_base64(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return base64.b64encode(buf.getvalue()).decode("ascii")


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: 4px 12px; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.best td { font-weight: bold; color: #1f6f43; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; }
img { max-width: 100%; }
.meta td { text-align: left; }
"""


def comparison_html(
    reports: Mapping[str, Report],
    *,
    title: str = "zombiesim comparison",
    config_toml: str | None = None,
    workload: str | None = None,
    seed: int | None = None,
    notes: str | None = None,
) -> str:
    """The page as a string. `config_toml` is the base config shown under the table."""
    esc = html.escape
    first = next(iter(reports.values()), None)
    if first is not None:
        workload = workload if workload is not None else first.raw["run"]["workload"]
        seed = seed if seed is not None else first.raw["run"]["seed"]
    best = best_label(reports)
    columns = compare_columns(reports)

    head = "".join(f"<th>{esc(h)}</th>" for h, _, _ in columns)
    body = []
    for label, rep in reports.items():
        cells = "".join(f"<td>{esc(fmt(get(rep)))}</td>" for _, get, fmt in columns)
        mark = " (interrupted)" if rep.interrupted else ""
        cls = ' class="best"' if label == best else ""
        body.append(f"<tr{cls}><td>{esc(label)}{mark}</td>{cells}</tr>")

    meta = [("workload", workload), ("seed", seed), ("zombiesim", __version__)]
    meta_rows = "".join(
        f"<tr><td>{esc(k)}</td><td><code>{esc(str(v))}</code></td></tr>"
        for k, v in meta
        if v is not None
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
    ]
    if notes:
        parts.append(f"<p>{esc(notes)}</p>")
    if reports:
        img = _png_base64(comparison_figure(reports))
        alt = (
            "WAF per run, p99 latency and WAF over time"
            if any(r.timed for r in reports.values())
            else "WAF per run and over time"
        )
        parts.append(f'<img alt="{alt}" src="data:image/png;base64,{img}">')
    parts += [
        "<h2>Results (measured phase)</h2>",
        f"<table><thead><tr><th>label</th>{head}</tr></thead>",
        f"<tbody>{''.join(body)}</tbody></table>",
    ]
    if any(has_shadow(r) for r in reports.values()):
        img = _png_base64(shadow_figure(reports))
        parts += [
            "<h2>ShadowGC: GC latency and the share of GC-relocated pages by state</h2>",
            f'<img alt="GC latency and relocated pages by state" '
            f'src="data:image/png;base64,{img}">',
            _shadow_table(reports),
        ]
    parts.append(f'<h2>Run</h2><table class="meta">{meta_rows}</table>')
    if config_toml:
        parts.append(f"<h2>Base configuration</h2><pre>{esc(config_toml)}</pre>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_comparison_html(
    path: str | os.PathLike[str], reports: Mapping[str, Report], **kwargs
) -> None:
    """Write `comparison_html(reports, **kwargs)` to `path` atomically."""
    atomic_write(path, comparison_html(reports, **kwargs))
