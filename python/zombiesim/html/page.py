"""`Page`: one self-contained HTML page, the builder every report of the project uses.

No network and nothing external: the style and a small sorting script are inline, plots
are inline SVG inside `<figure>` with a caption and a "data (CSV)" link carrying the
numbers the plot drew, every table sits in a horizontally scrolling box with
click-to-sort headers and its own CSV link, and the run section says what ran (command,
version, workload, seed, configuration).

A table's first column (its label) stays in view while the rest scrolls sideways
(`position: sticky`), and so do the columns named in `Page.table(..., pin=...)` (a
claims table's verdict): such a column sticks to the box's right edge while the box is
scrolled left of it and to the right of the label once scrolled past it.

A table whose figures are all zero is not drawn: one line says why instead (`all_zero`,
`Page.table(..., if_all_zero=...)`), as a plot of a constant is one line of text
(`html.views`).
"""

from __future__ import annotations

import base64
import html
import io
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._core import __version__
from ..plot import is_numeric

__all__ = ["SCRIPT", "STYLE", "Page", "all_zero", "csv_link", "slug", "svg"]

STYLE = """
body { font-family: system-ui, sans-serif; margin: 0 auto; padding: 1em 1.5em;
  max-width: 1100px; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; }
nav { font-size: .95em; } nav a { margin-right: 1em; }
.scroll { overflow-x: auto; max-width: 100%; margin: .4em 0 .3em; }
table { border-collapse: separate; border-spacing: 0;
  font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right;
  white-space: nowrap; vertical-align: top; background: #fff; }
th { background: #f3f3f3; cursor: pointer; user-select: none; white-space: normal;
  vertical-align: bottom; min-width: 4em; }
th.pin, td.pin { position: sticky; left: 0; z-index: 1; }
th.pin:first-child, td.pin:first-child { box-shadow: inset -1px 0 0 #ccc; }
td.pin.wrap:first-child { min-width: 8em; max-width: 18em; }
th.pin:not(:first-child), td.pin:not(:first-child) { right: 0;
  box-shadow: inset 1px 0 0 #ccc, inset -1px 0 0 #ccc; }
th[aria-sort="ascending"]::after { content: " \\25B2"; font-size: .7em; }
th[aria-sort="descending"]::after { content: " \\25BC"; font-size: .7em; }
th.text, td.text { text-align: left; }
td.wrap { white-space: pre-wrap; min-width: 14em; max-width: 36em; }
tr.best td { font-weight: bold; color: #1f6f43; }
td.met, td.direction-only, td.explained, td.missed,
td.not-run { font-weight: bold; text-align: center; }
td.met { background: #d9f0df; color: #1a5e38; }
td.direction-only { background: #fcebc0; color: #6e5200; }
td.explained { background: #e1e7ee; color: #34495e; }
td.missed { background: #f8d7d7; color: #8f1b1b; }
td.not-run { background: #eadcf2; color: #5b2a6e; }
a.csv { font-size: .9em; }
p.table-links { margin: 0 0 1.5em; }
figure { margin: 1em 0 2em; }
figure svg { display: block; max-width: 100%; height: auto; }
img { max-width: 100%; }
figcaption { font-size: .95em; color: #444; margin-top: .3em; }
p.note { color: #444; }
pre { background: #f6f6f6; padding: .8em 1em; overflow-x: auto; }
dl.run { display: grid; grid-template-columns: max-content 1fr; gap: .3em 1.2em; }
dl.run dt { font-weight: bold; } dl.run dd { margin: 0; min-width: 0; }
dl.run pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: .6em 0; } summary { cursor: pointer; }
"""

#: Click-to-sort table headers: numeric when every non-empty cell of the column is a
#: number (a cell's `data-v` is its raw value), text otherwise; click again to reverse.
SCRIPT = """
(function () {
  function key(row, col) {
    var cell = row.cells[col];
    if (!cell) { return ""; }
    var raw = cell.getAttribute("data-v");
    return raw !== null ? raw : cell.textContent.trim();
  }
  function isNumber(text) { return text !== "" && isFinite(Number(text)); }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        var numeric = rows.every(function (r) {
          var k = key(r, col); return k === "" || isNumber(k);
        });
        rows.sort(function (a, b) {
          var x = key(a, col), y = key(b, col);
          if (x === y) { return 0; }
          if (x === "") { return 1; }
          if (y === "") { return -1; }
          var order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
          return ascending ? order : -order;
        });
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  // A pinned column after the first sticks just right of the pinned columns before it.
  function pin(table) {
    if (!table.tHead) { return; }
    var left = 0, offsets = [];
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      if (!th.classList.contains("pin")) { return; }
      if (col > 0) { offsets.push([col, left]); }
      left += th.getBoundingClientRect().width;
    });
    if (!offsets.length) { return; }
    Array.prototype.forEach.call(table.rows, function (row) {
      offsets.forEach(function (o) {
        var cell = row.cells[o[0]];
        if (cell) { cell.style.left = o[1] + "px"; }
      });
    });
  }
  function pinAll() { Array.prototype.forEach.call(tables, pin); }
  pinAll();
  window.addEventListener("load", pinAll);
  window.addEventListener("resize", pinAll);
})();
"""

esc = html.escape


def slug(text: str) -> str:
    """A file or anchor name from a title: `Fig. 5: WAF` -> `fig-5-waf`."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "data"


def svg(fig, salt: str | None = None) -> str:
    """`fig` as inline SVG markup (no XML prolog; text kept as text, not paths). `salt`
    seeds the element ids: the same figure and salt give the same markup, and figures of
    one page with different salts never share an id (default: random ids)."""
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue().decode("utf-8")
    text = text[text.index("<svg") :].strip()
    if salt is None:
        return text
    # matplotlib numbers its groups per figure (`axes_1`, ...): prefix the ids nothing
    # refers to, so that the page's figures never share one.
    refs = set(re.findall(r"url\(#([^)]+)\)", text)) | set(re.findall(r'href="#([^"]+)"', text))
    prefix = slug(salt)

    def unique(m: re.Match[str]) -> str:
        return m[0] if m[1] in refs else f'id="{prefix}-{m[1]}"'

    return re.sub(r'\bid="([^"]+)"', unique, text)


def csv_link(frame, name: str, text: str = "data (CSV)") -> str:
    """A link that downloads `frame` as `name.csv` (a base64 `data:` URL)."""
    data = base64.b64encode(frame.to_csv(index=False).encode("utf-8")).decode("ascii")
    return (
        f'<a class="csv" download="{esc(name)}.csv" '
        f'href="data:text/csv;base64,{data}">{esc(text)}</a>'
    )


def _missing(v: Any) -> bool:
    import pandas as pd

    if v is None:
        return True
    if isinstance(v, str | list | tuple | dict):
        return False
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def cell_text(v: Any) -> str:
    """A table cell's text: `n/a` for a missing value, numbers with digits that matter."""
    if _missing(v):
        return "n/a"
    if isinstance(v, bool | np_bool()):
        return str(bool(v)).lower()
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}"
    if isinstance(v, numbers.Real):
        v = float(v)
        if abs(v) >= 1000:
            return f"{v:,.0f}" if v.is_integer() else f"{v:,.1f}"
        return f"{v:.4g}"
    return str(v)


def np_bool() -> type:
    import numpy as np

    return np.bool_


def _sort_value(v: Any) -> str | None:
    """The raw number a numeric cell sorts by (`data-v`): empty when missing, None for
    anything that is not a number."""
    if _missing(v):
        return ""
    if isinstance(v, bool | np_bool()) or not isinstance(v, numbers.Real):
        return None
    return repr(float(v))


#: Text columns with a value longer than this (characters) wrap.
LONG_TEXT = 40


def _longest(values) -> int:
    return max((len(str(v)) for v in values if not _missing(v)), default=0)


def all_zero(frame, figures: Sequence[str] | None = None) -> bool:
    """Whether a table's figures are all zero: the columns `figures` (default: every
    numeric column but the first, the label), with at least one zero among them and
    nothing else but missing values."""
    if figures is None:
        figures = [c for c in frame.columns[1:] if is_numeric(frame[c])]
    elif any(c not in frame.columns or not is_numeric(frame[c]) for c in figures):
        return False
    values = [v for c in figures for v in frame[c] if not _missing(v)]
    return bool(values) and all(v == 0 for v in values)


class Page:
    """A report page, built section by section; `html()` gives the document.

    >>> page = Page("Runs")
    >>> page.heading("Results")
    >>> page.table(frame, name="results")          # doctest: +SKIP
    >>> page.figure(fig, caption="WAF per run", name="waf")   # doctest: +SKIP
    >>> text = page.html()                         # doctest: +SKIP
    """

    def __init__(self, title: str):
        self.title = title
        self.parts: list[str] = []
        self.sections: list[tuple[str, str]] = []
        self.figures = 0
        self.ids: set[str] = set()

    def unique_id(self, base: str) -> str:
        """`base` as an element id no other element of the page has (`base-2`, ...)."""
        anchor, n = slug(base), 1
        while anchor in self.ids:
            n += 1
            anchor = f"{slug(base)}-{n}"
        self.ids.add(anchor)
        return anchor

    def heading(self, text: str, level: int = 2) -> None:
        """A heading; level-2 headings are listed in the page's navigation."""
        anchor = self.unique_id(text)
        if level == 2:
            self.sections.append((anchor, text))
        self.parts.append(f'<h{level} id="{esc(anchor)}">{esc(text)}</h{level}>')

    def paragraph(self, text: str) -> None:
        self.parts.append(f"<p>{esc(text)}</p>")

    def note(self, text: str, *, data=None, name: str = "data") -> None:
        """One line that stands for a figure or table not drawn (a constant, all zeros),
        with a CSV link to `data` (saved as `name.csv`) when given."""
        link = f" {csv_link(data, slug(name), 'table (CSV)')}" if data is not None else ""
        self.parts.append(f'<p class="note">{esc(text)}{link}</p>')

    def raw(self, markup: str) -> None:
        """Markup added as it is (the caller escapes)."""
        self.parts.append(markup)

    def figure(self, fig, *, caption: str, name: str, data=None) -> None:
        """`fig` as inline SVG with `caption` and a CSV link to `data` (default: what the
        `zs.plot` functions drew into it)."""
        from ..plot import drawn

        frame = data if data is not None else drawn(fig)
        self.figures += 1
        markup = svg(fig, salt=f"{slug(self.title)}-{self.figures}")
        self.parts.append(
            f'<figure id="{self.unique_id("fig-" + name)}">{markup}<figcaption>{esc(caption)} '
            f"· {csv_link(frame, slug(name))}</figcaption></figure>"
        )

    def table(
        self,
        frame,
        *,
        name: str,
        formats: Mapping[str, Callable[[Any], str]] | None = None,
        row_classes: Sequence[str] | None = None,
        cell_classes: Mapping[str, Sequence[str]] | None = None,
        wrap: Sequence[str] = (),
        caption: str | None = None,
        pin: Sequence[str] = (),
        figures: Sequence[str] | None = None,
        if_all_zero: str | None = None,
    ) -> None:
        """`frame` as a sortable table in a scrolling box, followed by a CSV link to the
        same frame. `formats` turns a column's values into text (default `cell_text`),
        `row_classes` and `cell_classes` (by column) add CSS classes, `wrap` names the
        columns whose text may wrap (besides those with values over `LONG_TEXT`
        characters). The first column stays in view when the box scrolls sideways, and so
        do the columns named in `pin` (at the box's right edge until scrolled to, then
        beside the first column).

        When the table's `figures` (default: its numeric columns but the first) are all
        zero (`all_zero`), one line stands for it, with the CSV link: `if_all_zero`, which
        should say why they are zero, or by default that every figure is."""
        if all_zero(frame, figures):
            self.note(
                if_all_zero or f"Every figure of the {name} table is zero.", data=frame, name=name
            )
            return
        formats = formats or {}
        cell_classes = cell_classes or {}
        columns = list(frame.columns)
        unknown = [c for c in pin if c not in columns]
        if unknown:
            raise ValueError(f"pin: no column {', '.join(map(str, unknown))} in the table")
        pinned = {c for i, c in enumerate(columns) if i == 0 or c in pin}
        text_columns = {c for c in columns if not is_numeric(frame[c])}
        wrap = set(wrap) | {c for c in text_columns if _longest(frame[c]) > LONG_TEXT}

        def head_cell(c) -> str:
            classes = [k for k, on in (("text", c in text_columns), ("pin", c in pinned)) if on]
            attrs = f' class="{" ".join(classes)}"' if classes else ""
            return f'<th{attrs} scope="col">{esc(str(c))}</th>'

        head = "".join(head_cell(c) for c in columns)
        body = []
        for i, row in enumerate(frame.itertuples(index=False)):
            cells = []
            for c, v in zip(columns, row, strict=True):
                classes = []
                if c in text_columns:
                    classes.append("text")
                if c in wrap:
                    classes.append("wrap")
                if c in pinned:
                    classes.append("pin")
                if c in cell_classes:
                    classes.append(str(cell_classes[c][i]))
                attrs = f' class="{esc(" ".join(classes))}"' if classes else ""
                key = None if c in text_columns else _sort_value(v)
                if key is not None:
                    attrs += f' data-v="{esc(key)}"'
                text = formats[c](v) if c in formats else cell_text(v)
                cells.append(f"<td{attrs}>{esc(text)}</td>")
            cls = f' class="{esc(row_classes[i])}"' if row_classes and row_classes[i] else ""
            body.append(f"<tr{cls}>{''.join(cells)}</tr>")
        caption_html = f"<caption>{esc(caption)}</caption>" if caption else ""
        self.parts.append(
            f'<div class="scroll"><table class="sortable" id="{self.unique_id("table-" + name)}">'
            f"{caption_html}<thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>"
            f'<p class="table-links">{csv_link(frame, slug(name), "table (CSV)")}</p>'
        )

    def run_section(
        self,
        *,
        command: str | None = None,
        version: str | None = None,
        facts: Sequence[tuple[str, Any]] = (),
        config_toml: str | None = None,
        grid_text: str | None = None,
        heading: str = "Run",
    ) -> None:
        """What ran: the exact command (when given), the zombiesim version, `facts`
        (`(name, value)` pairs such as workload and seed; `None` values left out), the
        configuration's TOML and the grid file, each collapsible."""
        self.heading(heading)
        items = []
        if command:
            items.append(("command", f"<pre><code>{esc(command)}</code></pre>"))
        items.append(("zombiesim", f"<code>{esc(version or __version__)}</code>"))
        for key, value in facts:
            if value is not None:
                items.append((key, f"<code>{esc(str(value))}</code>"))
        rows = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in items)
        parts = [f'<dl class="run">{rows}</dl>']
        if grid_text:
            parts.append(
                f"<details open><summary>Grid file</summary><pre>{esc(grid_text)}</pre></details>"
            )
        if config_toml:
            parts.append(
                "<details><summary>Configuration (TOML)</summary>"
                f'<pre class="config">{esc(config_toml)}</pre></details>'
            )
        self.parts.append(f'<section class="run">{"".join(parts)}</section>')

    def html(self) -> str:
        """The whole document."""
        nav = ""
        if len(self.sections) > 1:
            links = "".join(f'<a href="#{esc(a)}">{esc(t)}</a>' for a, t in self.sections)
            nav = f"<nav>{links}</nav>"
        return "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                '<meta name="viewport" content="width=device-width, initial-scale=1">',
                f"<title>{esc(self.title)}</title><style>{STYLE}</style></head><body>",
                f"<h1>{esc(self.title)}</h1>",
                nav,
                *self.parts,
                f"<script>{SCRIPT}</script>",
                "</body></html>\n",
            ]
        )
