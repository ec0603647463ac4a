"""The ShadowGC reproduction's figures (`shadowgc`): Figs. 6-7 (WA and GC latency against
GGC), Fig. 8 (relocated pages by state) and Fig. 2 (delay and separation on greedy), each
with the data it draws."""

from __future__ import annotations

from ..plot import legend, panels
from ..report import STATES
from .shadowgc_experiments import BIG, REFERENCE

#: The schemes of Figs. 6-7 and of Fig. 2, against GGC and against greedy.
WA_SCHEMES = ("zgc", "hgc", "dgc", "sgc")
FIG2_SCHEMES = ("greedy+delay", "greedy+separation", "zgc", REFERENCE)


def _wa_kinds(kinds, has_big: bool) -> list[str]:
    return list(kinds) + ([k + BIG for k in kinds] if has_big else [])


def _changes(frame, kinds, schemes):
    """What the grouped bars draw: WA and GC latency change per workload and scheme."""
    rows = frame[frame["workload"].isin(list(kinds)) & frame["scheme"].isin(schemes)]
    return rows[["workload", "scheme", "waf_change", "gc_latency_change"]].reset_index(drop=True)


def _grouped(ax, frame, kinds, schemes, col, ylabel, title, names=None):
    width = 0.8 / len(schemes)
    for i, scheme in enumerate(schemes):
        ys = []
        for k in kinds:
            sel = frame[(frame["workload"] == k) & (frame["scheme"] == scheme)][col]
            ys.append(float(sel.iloc[0]) * 100 if len(sel) else 0.0)
        xs = [x + (i - (len(schemes) - 1) / 2) * width for x in range(len(kinds))]
        ax.bar(xs, ys, width=width, label=(names or {}).get(scheme, scheme.upper()))
    ax.set_xticks(range(len(kinds)), kinds)
    ax.axhline(0, color="#444", lw=0.8)
    ax.set_xlabel("workload")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
    legend(ax, "scheme")


def _fig_wa_latency(frame, kinds, has_big):
    """Figs. 6 (WA) and 7 (GC latency) against GGC: one row of two panels per buffer
    size (the paper's, then the large buffers)."""
    sets = [("", "")] + ([(BIG, " (large buffers)")] if has_big else [])
    fig, axes = panels(len(sets), 2)
    for i, (suffix, title) in enumerate(sets):
        shown = [k + suffix for k in kinds]
        wa_ax, lat_ax = axes[2 * i], axes[2 * i + 1]
        _grouped(wa_ax, frame, shown, WA_SCHEMES, "waf_change", "WA vs GGC (%)", "Fig. 6" + title)
        _grouped(
            lat_ax,
            frame,
            shown,
            WA_SCHEMES,
            "gc_latency_change",
            "GC latency vs GGC (%)",
            "Fig. 7" + title,
        )
        for ax in (wa_ax, lat_ax):
            ax.set_xticks(range(len(kinds)), kinds)
    return fig


def _states_data(frame, kinds):
    """What Fig. 8 draws: the shares of relocated pages by state, GGC and SGC."""
    rows = frame[frame["workload"].isin(list(kinds)) & frame["scheme"].isin(["ggc", "sgc"])]
    return rows[["workload", "scheme", *(f"share_{s}" for s in STATES)]].reset_index(drop=True)


def _fig_states(frame, kinds):
    from ..html import STATE_COLOURS, STATE_NAMES

    fig, axes = panels(1, 2)
    for ax, scheme in zip(axes, ("ggc", "sgc"), strict=True):
        bottom = [0.0] * len(kinds)
        for state in STATES:
            ys = []
            for k in kinds:
                sel = frame[(frame["workload"] == k) & (frame["scheme"] == scheme)]
                ys.append(float(sel[f"share_{state}"].iloc[0]))
            ax.bar(kinds, ys, bottom=bottom, color=STATE_COLOURS[state], label=STATE_NAMES[state])
            bottom = [b + y for b, y in zip(bottom, ys, strict=True)]
        ax.set_ylim(0, 1)
        ax.set_xlabel("workload")
        ax.set_ylabel("share of GC-relocated pages")
        ax.set_title(f"Fig. 8: {scheme.upper()}")
        legend(ax, "state")
    return fig


def _fig_fig2(frame, kinds):
    fig, (wa_ax, lat_ax) = panels(1, 2)
    names = {"zgc": "Zombie (ZGC)"}
    _grouped(
        wa_ax, frame, kinds, FIG2_SCHEMES, "waf_change", "WA vs greedy (%)", "Fig. 2(a)", names
    )
    _grouped(
        lat_ax,
        frame,
        kinds,
        FIG2_SCHEMES,
        "gc_latency_change",
        "GC latency vs greedy (%)",
        "Fig. 2(b)",
        names,
    )
    return fig
