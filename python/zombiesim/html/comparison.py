"""The comparison page (`zombiesim compare --report`, the demo): the comparison table,
the standard views, the ShadowGC section (GC latency and relocated pages by state, 003
Figs. 7-8) for runs that have shadow data, and the run.

The ShadowGC section is one line instead when every ShadowGC figure is zero
(`SHADOWGC_FIGURES`: what only a device write buffer or a ShadowGC policy produces), and
the line says which of the two the runs lack (`shadowgc_idle`): zombie-aware runs
relocate host-shadow pages (dirty in the host's cache) without ShadowGC being in play."""

from __future__ import annotations

import os
from collections.abc import Mapping

from .. import plot
from .._format import SHADOW_KEYS, best_label, compare_columns, count, has_shadow
from .._io import atomic_write
from ..report import STATES, Report
from .page import Page, all_zero
from .views import add_views, standard_views

__all__ = [
    "SHADOWGC_FIGURES",
    "STATE_COLOURS",
    "STATE_NAMES",
    "comparison_html",
    "shadow_figure",
    "shadow_frame",
    "shadowgc_idle",
    "write_comparison_html",
]

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


def results_frame(reports: Mapping[str, Report]):
    """The comparison table's raw values (`_format.compare_columns`), one row per run,
    `label` first (marked when the run was interrupted)."""
    import pandas as pd

    columns = compare_columns(reports)
    rows = []
    for label, rep in reports.items():
        row = {"label": label + (" (interrupted)" if rep.interrupted else "")}
        row.update({heading: get(rep) for heading, get, _ in columns})
        rows.append(row)
    return pd.DataFrame(rows, columns=["label", *(h for h, _, _ in columns)])


def _results_table(page: Page, reports: Mapping[str, Report]) -> None:
    columns = compare_columns(reports)
    best = best_label(reports) if len(reports) > 1 else None
    page.table(
        results_frame(reports),
        name="results",
        formats={heading: fmt for heading, _, fmt in columns},
        row_classes=["best" if label == best else "" for label in reports],
    )


def shadow_frame(reports: Mapping[str, Report]):
    """Per run: the pages GC relocated by state (count and share), buffer reads, fast
    programs, skipped pages, accumulated GC latency and refresh pages."""
    import pandas as pd

    rows = []
    for label, rep in reports.items():
        gc = rep.raw["gc"]
        by_state = gc.get("copied_by_state") or {}
        shares = rep.copied_shares or {}
        refresh = rep.raw.get("refresh")
        row = {"label": label}
        for state in STATES:
            row[STATE_NAMES[state]] = by_state.get(state, 0)
            row[f"{STATE_NAMES[state]} share"] = shares.get(state)
        row.update(
            {
                "buffer reads": gc.get("buffer_reads"),
                "fast programs": gc.get("fast_programs"),
                "skipped": gc.get("skipped"),
                "GC latency s": gc.get("latency_s"),
                "refresh pages": refresh["pages"] if refresh else None,
            }
        )
        rows.append(row)
    return pd.DataFrame(rows)


def shadow_figure(reports: Mapping[str, Report]):
    """A matplotlib `Figure` for ShadowGC runs: the accumulated GC latency per label
    (003 Fig. 7: reads with ECC, buffer reads, normal and fast programs, erases; relative
    to the first run above each bar) and the share of GC-relocated pages by state
    (003 Fig. 8: stacked bars of live, host-, device- and twin-shadow pages)."""
    labels = list(reports)
    fig, (lat_ax, share_ax) = plot.panels(1, 2)
    xs = range(len(labels))

    latency = [reports[k].raw["gc"].get("latency_s") or 0.0 for k in labels]
    bars = lat_ax.bar(xs, latency, color="#7fa8c9")
    first = latency[0] if latency else 0.0
    rel = [f"{v / first - 1:+.1%}" if first and i else "" for i, v in enumerate(latency)]
    lat_ax.bar_label(bars, labels=rel, fontsize=plot.SMALL, padding=2)
    plot.category_ticks(lat_ax, labels)
    lat_ax.set_xlabel("run")
    lat_ax.set_ylabel("accumulated GC latency (s)")
    lat_ax.set_title(f"GC latency (vs {labels[0]})" if labels else "GC latency")
    lat_ax.margins(y=0.12)
    plot.set_value_scale(lat_ax, latency, bars=True)

    bottom = [0.0] * len(labels)
    shares = [reports[k].copied_shares or dict.fromkeys(STATES, 0.0) for k in labels]
    for state in STATES:
        heights = [sh[state] for sh in shares]
        share_ax.bar(
            xs, heights, bottom=bottom, color=STATE_COLOURS[state], label=STATE_NAMES[state]
        )
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    plot.category_ticks(share_ax, labels)
    share_ax.set_ylim(0, 1)
    share_ax.set_xlabel("run")
    share_ax.set_ylabel("share of GC-relocated pages")
    share_ax.set_title("Relocated pages by state")
    plot.legend(share_ax, "state")
    return fig


#: The columns of `shadow_frame` that only ShadowGC's setting produces: pages relocated
#: in the states a device write buffer makes, and what the ShadowGC policies do.
SHADOWGC_FIGURES = ("device-shadow", "twin-shadow", "buffer reads", "fast programs", "skipped")


def shadowgc_idle(reports: Mapping[str, Report]) -> str | None:
    """When every ShadowGC figure of these runs (`SHADOWGC_FIGURES`) is zero, why, in one
    sentence: which of a device write buffer (`device.buffer`, where device- and
    twin-shadow pages live) and a ShadowGC policy (`gc.shadow_reads`, `gc.fast_write`,
    `gc.skip_shadows`) no run has; None when a run has a ShadowGC figure."""
    if not all_zero(shadow_frame(reports), SHADOWGC_FIGURES):
        return None
    configs = [r.raw["run"].get("config") or {} for r in reports.values()]
    buffered = any((c.get("device") or {}).get("buffer") for c in configs)
    on = [f"gc.{k}" for k in SHADOW_KEYS if any((c.get("gc") or {}).get(k) for c in configs)]
    lacking = []
    if not buffered:
        lacking.append("a device write buffer (device.buffer = 0: no device- or twin-shadow pages)")
    if not on:
        lacking.append(f"a ShadowGC policy ({', '.join(f'gc.{k}' for k in SHADOW_KEYS)})")
    if lacking:
        why = "ShadowGC is not in play: no run has " + " or ".join(lacking)
    else:
        why = f"ShadowGC is on ({', '.join(on)}), but GC never met a shadow page it acts on"
    return (
        f"{why}, so its figures (device- and twin-shadow pages relocated, buffer reads, "
        "fast programs, skipped pages) are zero in every run."
    )


def _shadow_section(page: Page, reports: Mapping[str, Report]) -> None:
    frame = shadow_frame(reports)
    idle = shadowgc_idle(reports)
    if idle is not None:
        host = [
            (r.raw["gc"].get("copied_by_state") or {}).get("host_shadow") for r in reports.values()
        ]
        if any(host):
            idle += (
                " The host-shadow (zombie) pages GC relocated are in the results table "
                "(shadow copies) and in GC copies by cause."
            )
        page.heading("ShadowGC")
        page.table(frame, name="shadowgc", figures=SHADOWGC_FIGURES, if_all_zero=idle)
        return
    page.heading("ShadowGC: GC latency and the share of GC-relocated pages by state")
    page.figure(
        shadow_figure(reports),
        caption="Accumulated GC latency (003 Fig. 7) and the relocated pages by state "
        "(003 Fig. 8: live, host-, device- and twin-shadow).",
        name="shadowgc",
        data=frame,
    )
    counts = {STATE_NAMES[s]: count for s in STATES}
    counts.update({k: count for k in ("buffer reads", "fast programs", "skipped")})
    page.table(frame, name="shadowgc", formats=counts)


def comparison_html(
    reports: Mapping[str, Report],
    *,
    title: str = "zombiesim comparison",
    config_toml: str | None = None,
    workload: str | None = None,
    seed: int | None = None,
    notes: str | None = None,
    command: str | None = None,
) -> str:
    """The comparison page as a string: the table (best WAF in bold), the standard views
    (`html.views.standard_views`, one bar or line per run), the ShadowGC section when a
    run has shadow data (one line saying why when its figures are all zero), and the run
    (`command` when given, version, workload, seed and the base configuration
    `config_toml`)."""
    from ..api import to_frame

    first = next(iter(reports.values()), None)
    if first is not None:
        workload = workload if workload is not None else first.raw["run"]["workload"]
        seed = seed if seed is not None else first.raw["run"]["seed"]
    page = Page(title)
    for part in (notes or "").split("\n\n"):
        if part.strip():
            page.paragraph(part.strip())
    best = best_label(reports)
    if reports:
        page.paragraph(
            f"{len(reports)} runs of the same workload and seed (each saw the same request "
            "stream)" + (f"; lowest WAF: {best}." if best is not None else ".")
        )
    page.heading("Results (measured phase)")
    _results_table(page, reports)
    if reports:
        add_views(page, standard_views(to_frame(reports, lists=True)))
    if any(has_shadow(r) for r in reports.values()):
        _shadow_section(page, reports)
    page.run_section(
        command=command,
        facts=[("workload", workload), ("seed", seed), ("runs", ", ".join(reports) or None)],
        config_toml=config_toml,
    )
    return page.html()


def write_comparison_html(
    path: str | os.PathLike[str], reports: Mapping[str, Report], **kwargs
) -> None:
    """Write `comparison_html(reports, **kwargs)` to `path` atomically."""
    atomic_write(path, comparison_html(reports, **kwargs))
