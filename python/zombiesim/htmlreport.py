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

import base64
import io

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
from .html.page import STYLE as _STYLE  # noqa: F401 (zs.analyze's page)

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


def _png_base64(fig) -> str:
    """`fig` as a base64 PNG (for pages not yet built with `Page`: `zs.analyze`'s)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return base64.b64encode(buf.getvalue()).decode("ascii")
