"""The VMA journaling reproduction's figures (`vma-journaling`): erases and GC overhead per
FTL, benchmark and journaling mode (Figs. 4-5), and I/O traffic by kind and I/O requests
(Figs. 2-3), with the data each draws."""

from __future__ import annotations

from ..plot import legend, panels
from .vma_journaling_experiments import BENCHES, FTLS, MODES

#: The I/O traffic's kinds (Fig. 3), columns of the `io_by_mode` table.
TRAFFIC = ("data_mib", "metadata_mib", "journal_mib")


def _metric_data(frame, col: str):
    """What Figs. 4-5 draw: `col` per benchmark, FTL and journaling mode."""
    return frame[["benchmark", "ftl", "mode", col]].reset_index(drop=True)


def _fig_metric(frame, col: str, ylabel: str):
    """One panel per FTL, two a row, a bar per journaling mode for each benchmark."""
    rows = (len(FTLS) + 1) // 2
    fig, axes = panels(rows, 2, height=3.8)
    width = 0.8 / len(MODES)
    for ax, ftl in zip(axes, FTLS, strict=False):
        for i, mode in enumerate(MODES):
            ys = [
                float(
                    frame[(frame.benchmark == b) & (frame.ftl == ftl) & (frame["mode"] == mode)][
                        col
                    ].iloc[0]
                )
                for b in BENCHES
            ]
            ax.bar([j + i * width for j in range(len(BENCHES))], ys, width, label=mode)
        ax.set_xticks(
            [j + 0.4 - width / 2 for j in range(len(BENCHES))], BENCHES, rotation=30, ha="right"
        )
        ax.set_title(f"{ylabel}, {ftl}")
        ax.set_xlabel("benchmark")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, axis="y")
        legend(ax, "journaling")
    for ax in axes[len(FTLS) :]:
        ax.remove()
    return fig


def _mode_ticks(ax, io) -> None:
    xs = list(range(len(io)))
    ax.set_xticks(xs, [f"{r.benchmark}\n{r.mode}" for r in io.itertuples()], fontsize=8)
    ax.set_xlabel("benchmark and journaling mode")


def _fig_traffic(io):
    fig, ax = panels(1, 1, width=11.0)
    bottom = None
    xs = list(range(len(io)))
    for kind in TRAFFIC:
        ys = list(io[kind])
        ax.bar(xs, ys, 0.8, bottom=bottom, label=kind.removesuffix("_mib"))
        bottom = ys if bottom is None else [a + b for a, b in zip(bottom, ys, strict=True)]
    _mode_ticks(ax, io)
    ax.set_ylabel("MiB")
    ax.set_title("I/O traffic by kind (Fig. 3)")
    legend(ax, "kind")
    return fig


def _fig_requests(io):
    fig, ax = panels(1, 1, width=11.0)
    xs = list(range(len(io)))
    ax.bar(xs, list(io["io_requests"]), 0.8)
    _mode_ticks(ax, io)
    ax.set_ylabel("requests")
    ax.set_title("I/O requests (Fig. 2)")
    return fig
