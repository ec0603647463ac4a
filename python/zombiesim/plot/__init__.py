"""`zs.plot`: matplotlib figures of a frame of runs.

Every function takes a pandas DataFrame whose rows are runs, with the columns of
`zs.to_frame(reports, lists=True)` (scalar dotted columns such as `waf` and
`gc.pages_copied`, and list columns such as `series.waf_cumulative` and
`latency.all.cdf_us`), or a sweep frame with the same columns plus `status` and
`axis.<name>` (only its `status == "ok"` rows are drawn). Each returns a matplotlib
`Figure` on an Agg canvas (no pyplot, no display); given `ax`, it draws into that Axes
and returns its figure.

`x` and `hue` take a column name or a short one: `"scheme"` finds `axis.scheme`, then
`config.scheme`. Rows that share the same (x, hue), such as seeds, are drawn as their
mean with min-max error bars. `drawn(fig)` gives the numbers a figure's panels drew, as
one DataFrame.

Two rules hold for every chart (`figure`): tick labels never overlap (`spaced_ticks`:
level when they fit, else upright at 8 pt, and only as many as have room once the
layout has sized the panel), and a value axis is logarithmic only when its positive
values span more than `LOG_RATIO` (30x; `value_scale`), linear otherwise.

Modules: `scalar` (`metric`, `waf`, `erases`), `latency` (`latency_cdf`,
`latency_percentiles`, `flow_latency`), `timeseries` (`series`), `causes` (`copies_by_cause`,
`gc_copies`), `heat` (`heatmap`), `figure` (`panels`, `legend`, `drawn`, the two
rules) and `columns` (what a name means, which rows are drawn).

>>> import zombiesim as zs
>>> df = zs.to_frame(zs.compare_reports(cfg, workload="uniform", policies=["greedy", "fifo"]),
...                  lists=True)                                       # doctest: +SKIP
>>> zs.plot.waf(df).savefig("waf.svg")                                 # doctest: +SKIP
"""

from .causes import CAUSES, copies_by_cause, gc_copies
from .columns import is_numeric, resolve, runs, short
from .figure import (
    LOG_RATIO,
    SMALL,
    category_ticks,
    drawn,
    legend,
    panels,
    set_value_scale,
    spaced_ticks,
    value_scale,
)
from .heat import heatmap
from .latency import flow_latency, latency_cdf, latency_percentiles
from .scalar import erases, metric, waf
from .timeseries import series

__all__ = [
    "CAUSES",
    "LOG_RATIO",
    "SMALL",
    "category_ticks",
    "copies_by_cause",
    "drawn",
    "erases",
    "flow_latency",
    "gc_copies",
    "heatmap",
    "is_numeric",
    "latency_cdf",
    "latency_percentiles",
    "legend",
    "metric",
    "panels",
    "resolve",
    "runs",
    "series",
    "set_value_scale",
    "short",
    "spaced_ticks",
    "value_scale",
    "waf",
]
