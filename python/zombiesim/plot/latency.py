"""Request latency: the CDF of each timed run, its percentiles, and each flow's latency
over time."""

from __future__ import annotations

from .columns import hue_values, missing, numbers, resolve, runs, short
from .figure import (
    category_ticks,
    colour,
    legend,
    lines_frame,
    list_lines,
    no_data,
    record,
    set_value_scale,
    target,
)


def latency_cdf(df, kind: str = "all", hue: str | None = "label", ax=None):
    """The latency CDF of each timed run (`latency.<kind>.cdf_us` against `.cdf_q`; kind
    `read`, `write` or `all`), on a µs axis that is logarithmic when the latencies span
    more than `figure.LOG_RATIO` (`figure.value_scale`); one colour per `hue` value.
    Says "no timed runs" in the panel when no run was timed."""

    frame = runs(df)
    fig, ax = target(ax)
    title = f"Latency CDF ({kind} requests)" if kind != "all" else "Latency CDF (all requests)"
    qcol, ucol = f"latency.{kind}.cdf_q", f"latency.{kind}.cdf_us"
    timed = ucol in frame.columns and frame[ucol].map(lambda v: not missing(v)).any()
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("fraction of requests")
    rows = []
    if not timed:
        no_data(ax, "no timed runs\n(set timing.enabled = true)", title)
    else:
        rows = list_lines(ax, frame, ucol, qcol, hue_values(frame, hue))
        if rows:
            if set_value_scale(ax, [r[2] for r in rows], axis="x") == "log":
                ax.set_xlabel("latency (µs, log scale)")
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3, which="both")
            ax.set_title(title)
            legend(ax, short(resolve(frame, hue)) if hue else None)
        else:
            no_data(ax, f"no {kind} requests in the timed runs", title)
    data = lines_frame(rows, ["latency_us", "quantile"], frame, hue)
    record(ax, data)
    return fig


#: The percentiles `latency_percentiles` draws: (column suffix, legend).
PERCENTILES = (("p50_us", "p50"), ("p99_us", "p99"), ("p999_us", "p99.9"))


def latency_percentiles(df, kind: str = "all", ax=None):
    """p50, p99 and p99.9 latency (µs) of each timed run, grouped bars per label (mean
    over rows that share a label); a log axis only when they span more than
    `figure.LOG_RATIO` (`figure.value_scale`), labels spaced by `figure.spaced_ticks`."""
    import pandas as pd

    frame = runs(df)
    fig, ax = target(ax)
    title = f"p50 / p99 / p99.9 latency ({kind} requests)"
    cols = [f"latency.{kind}.{p}" for p, _ in PERCENTILES]
    data = pd.DataFrame({"label": frame.get("label", pd.Series(dtype=str)).astype(str)})
    for (p, _), col in zip(PERCENTILES, cols, strict=True):
        data[p] = numbers(frame, col)
    data = data.dropna(subset=[p for p, _ in PERCENTILES], how="all")
    data = data.groupby("label", sort=False).mean().reset_index()
    ax.set_ylabel("latency (µs)")
    ax.set_xlabel("run")
    if data.empty:
        no_data(ax, "no timed runs\n(set timing.enabled = true)", title)
    else:
        width = 0.8 / len(PERCENTILES)
        xs = range(len(data))
        for i, (p, name) in enumerate(PERCENTILES):
            ax.bar(
                [x + (i - 1) * width for x in xs], data[p], width=width, color=colour(i), label=name
            )
        category_ticks(ax, list(data["label"]))
        ax.grid(alpha=0.3, axis="y")
        set_value_scale(ax, data[[p for p, _ in PERCENTILES]].to_numpy().ravel(), bars=True)
        ax.set_title(title)
        legend(ax)
    record(ax, data)
    return fig


def flow_latency(df, ax=None):
    """Each flow's mean latency over simulated time (`flows.<name>.series_mean_us`
    against `.series_t_s`, the list columns of a `flows:` run), one colour per flow
    (and per run, labelled `run / flow`, when the frame holds several); a log µs axis
    when the latencies span more than `figure.LOG_RATIO`. Says "no flows" in the panel
    when no run had a `flows:` workload."""
    frame = runs(df)
    fig, ax = target(ax)
    title = "Latency of each flow over time"
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("mean latency (µs)")
    names = [
        c[len("flows.") : -len(".series_t_s")]
        for c in frame.columns
        if c.startswith("flows.") and c.endswith(".series_t_s")
    ]
    rows = []
    for r in range(len(frame)):
        for name in names:
            xs = frame[f"flows.{name}.series_t_s"].iloc[r]
            ys = frame[f"flows.{name}.series_mean_us"].iloc[r]
            if missing(xs) or not len(xs):
                continue
            label = name if len(frame) == 1 else f"{frame['label'].iloc[r]} / {name}"
            ax.plot(list(xs), list(ys), lw=1.4, color=colour(len({x[0] for x in rows})),
                    label=label)  # fmt: skip
            rows += [(label, t, us) for t, us in zip(xs, ys, strict=True)]
    import pandas as pd

    data = pd.DataFrame(rows, columns=["flow", "t_s", "mean_us"])
    if not rows:
        no_data(ax, "no flows\n(give a flows: workload)", title)
    else:
        if set_value_scale(ax, data["mean_us"]) == "log":
            ax.set_ylabel("mean latency (µs, log scale)")
        ax.grid(alpha=0.3, which="both")
        ax.set_title(title)
        legend(ax, "flow")
    record(ax, data)
    return fig
