"""The HTML reports: one page builder (`Page`) and the pages built with it.

- `comparison_html` / `write_comparison_html`: `zombiesim compare --report` and the demo;
- `sweep_html` / `write_sweep_html`: a grid of runs;
- `zombiesim.reproduce.Reproduction.html()`: a reproduction's report;
- `zombiesim.analyze.html()`: a hashed trace's value analyses (`zombiesim trace analyze`).

Every page is self-contained (inline style, script and SVG plots; no network), its
figures and tables each carry a CSV link with their numbers, tables scroll sideways with
their first column (and any `pin`ned one) kept in view and sort on a click, and a run
section says what ran. `standard_views` are the figures the pages share. A plot of a
constant and a table of zeros are one line of text instead, saying so (and why, where
the page knows: the ShadowGC section names the settings no run has).
"""

from .comparison import (
    STATE_COLOURS,
    STATE_NAMES,
    comparison_html,
    shadow_figure,
    write_comparison_html,
)
from .page import Page, csv_link, svg
from .sweep import sweep_html, write_sweep_html
from .views import View, add_views, standard_views

__all__ = [
    "STATE_COLOURS",
    "STATE_NAMES",
    "Page",
    "View",
    "add_views",
    "comparison_html",
    "csv_link",
    "shadow_figure",
    "standard_views",
    "svg",
    "sweep_html",
    "write_comparison_html",
    "write_sweep_html",
]
