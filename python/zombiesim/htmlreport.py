"""The HTML reports' entry points (the pages live in `zombiesim.html`):

- `comparison_html(reports, *, title, config_toml, workload, seed, notes, command)` and
  `write_comparison_html(path, reports, **kw)`: `zombiesim compare --report`, the demo;
- `sweep_html(df, *, title, axes, metrics, command, grid_text, config_toml, version)` and
  `write_sweep_html(path, df, **kw)`: a sweep's report.

Each page is self-contained: inline SVG plots (matplotlib's Agg canvas, never pyplot),
each with its numbers as a CSV link; tables in scrolling boxes, sortable, with CSV
links; the run (command, version, workload, seed, configuration).
"""

from __future__ import annotations

from .html import (
    STATE_COLOURS,
    STATE_NAMES,
    Page,
    comparison_html,
    shadow_figure,
    standard_views,
    sweep_html,
    write_comparison_html,
    write_sweep_html,
)

__all__ = [
    "STATE_COLOURS",
    "STATE_NAMES",
    "Page",
    "comparison_html",
    "shadow_figure",
    "standard_views",
    "sweep_html",
    "write_comparison_html",
    "write_sweep_html",
]
