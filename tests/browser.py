"""Render an HTML page in headless Chromium and report what a reader would see wrong.

`render(path)` copies the page to a temporary file with two scripts injected: one as the
first element of `<head>` that records `window.onerror`, unhandled promise rejections,
failed resource loads and `console.error` / `console.warn` calls, and one at the end of
`<body>` that, on `load`, measures every plot (the outermost `<svg>` inside a `<figure>`,
and every `<img>`), the page's scroll width against the viewport, and every table against
its horizontally scrollable box (if any), and writes the result as JSON into
`<pre id="__zs_check">`. Chromium dumps the DOM (`--dump-dom`) and the JSON is read back.
Chromium's own console log on stderr is read too, in case the page's errors escaped the
recorder.

`assert_renders_cleanly(path)` is what report tests call: no console errors, at least one
plot, every plot visible and inside the page, nothing wider than the viewport. It skips
the calling test when Chromium is not installed.

`render(path, probe=JS)` also runs a JavaScript function of the caller's once the page has
loaded and returns what it returned (`Rendered.probe`); `table_cells(path)` uses it to say
where each table's first-row cells show inside its scroll box, scrolled fully left and
fully right (sticky columns), and `label_boxes(path)` where each plot's tick labels show
(their `<text>` bounding boxes), for `overlapping_labels` to say which of them overlap.

Also used by `benches/screenshot.py` (`write_screenshot`). Standard library only, apart from
pytest in `assert_renders_cleanly`.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "ChromiumError",
    "Rendered",
    "assert_renders_cleanly",
    "find_chromium",
    "label_boxes",
    "overlapping_labels",
    "render",
    "table_cells",
    "write_screenshot",
]

#: Executables tried in order on PATH (after `$CHROMIUM`).
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

#: Wall-clock limit of one Chromium run, in seconds.
TIMEOUT_S = 60

#: Virtual time Chromium gives the page before dumping the DOM, in ms.
VIRTUAL_TIME_MS = 10_000

CHECK_ID = "__zs_check"

_FLAGS = (
    "--headless=new",
    "--no-sandbox",  # required as root (CI), harmless otherwise
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--enable-logging=stderr",
    "--v=0",
)

# First element of <head>: record errors and console.error/warn before any page script.
# console.log/info/debug are recorded separately, only so that their lines in Chromium's
# stderr log (which carries no level) are not mistaken for errors.
_HEAD_SCRIPT = r"""<script>(function () {
  var errors = (window.__zs_errors = []), logs = (window.__zs_logs = []);
  function text(args) {
    return Array.prototype.map.call(args, function (a) {
      if (a instanceof Error) return String(a);
      if (typeof a === "object") { try { return JSON.stringify(a); } catch (e) {} }
      return String(a);
    }).join(" ");
  }
  window.addEventListener("error", function (e) {
    var t = e.target;
    if (t && t !== window && t.tagName) {
      errors.push("failed to load <" + t.tagName.toLowerCase() + "> " +
                  (t.currentSrc || t.src || t.href || ""));
      return;
    }
    var where = e.filename ? " (" + e.filename + ":" + e.lineno + ")" : "";
    errors.push(String(e.message || e.error) + where);
  }, true);
  window.addEventListener("unhandledrejection", function (e) {
    errors.push("Uncaught (in promise) " + String(e.reason));
  });
  ["error", "warn"].forEach(function (level) {
    var orig = console[level];
    console[level] = function () {
      errors.push("console." + level + ": " + text(arguments));
      return orig.apply(console, arguments);
    };
  });
  ["log", "info", "debug"].forEach(function (level) {
    var orig = console[level];
    console[level] = function () {
      logs.push(text(arguments));
      return orig.apply(console, arguments);
    };
  });
})();</script>"""

# End of <body>: measure on `load` (or after 8 s of virtual time if `load` never comes).
_BODY_SCRIPT = r"""<pre id="__zs_check" hidden></pre><script>(function () {
  var done = false;
  function outermostSvg(svg) { return !svg.parentElement.closest("svg"); }
  function name(el, i) {
    if (el.id) return "#" + el.id;
    var fig = el.closest("figure"), cap = fig && fig.querySelector("figcaption");
    if (cap && cap.textContent.trim()) return cap.textContent.trim().slice(0, 120);
    if (el.getAttribute("alt")) return el.getAttribute("alt").slice(0, 120);
    if (el.getAttribute("aria-label")) return el.getAttribute("aria-label").slice(0, 120);
    var title = el.tagName.toLowerCase() === "svg" && el.querySelector("title");
    if (title && title.textContent.trim()) return title.textContent.trim().slice(0, 120);
    return el.tagName.toLowerCase() + "[" + i + "]";
  }
  function hiddenBy(el) {
    var why = [], cs = getComputedStyle(el);
    if (cs.visibility !== "visible") why.push("visibility: " + cs.visibility);
    for (var a = el; a && a.nodeType === 1; a = a.parentElement) {
      var s = getComputedStyle(a), tag = a.tagName.toLowerCase();
      if (s.display === "none") why.push("display: none on <" + tag + ">");
      if (parseFloat(s.opacity) === 0) why.push("opacity: 0 on <" + tag + ">");
    }
    return why;
  }
  function measure(loaded) {
    if (done) return;
    done = true;
    var de = document.documentElement, vw = de.clientWidth;
    var els = [];
    document.querySelectorAll("figure svg").forEach(function (s) {
      if (outermostSvg(s)) els.push(s);
    });
    document.querySelectorAll("img").forEach(function (im) { els.push(im); });
    var plots = els.map(function (el, i) {
      var r = el.getBoundingClientRect(), why = hiddenBy(el);
      if (r.width < 1 || r.height < 1) why.push("zero size");
      if (el.tagName.toLowerCase() === "img" && (!el.complete || el.naturalWidth === 0))
        why.push("image did not load");
      var left = r.left + window.scrollX, top = r.top + window.scrollY;
      return {
        tag: el.tagName.toLowerCase(), id_or_caption: name(el, i),
        width: Math.round(r.width), height: Math.round(r.height),
        left: Math.round(left), top: Math.round(top),
        visible: why.length === 0, hidden_by: why,
        inside_page: why.indexOf("zero size") < 0 && left >= -1 && top >= -1 &&
                     left + r.width <= vw + 1
      };
    });
    var tables = [];
    document.querySelectorAll("table").forEach(function (t, i) {
      var r = t.getBoundingClientRect(), left = r.left + window.scrollX;
      if (r.width <= vw + 1 && left >= -1 && left + r.width <= vw + 1) return;
      for (var a = t.parentElement; a && a !== document.body && a !== de; a = a.parentElement) {
        var ox = getComputedStyle(a).overflowX, ar = a.getBoundingClientRect();
        var aleft = ar.left + window.scrollX;
        if ((ox === "auto" || ox === "scroll") && aleft >= -1 && aleft + ar.width <= vw + 1)
          return;
      }
      var cap = t.querySelector("caption");
      tables.push((t.id ? "#" + t.id : cap ? cap.textContent.trim() : "table[" + i + "]") +
                  " (" + Math.round(r.width) + " px)");
    });
    document.getElementById("__zs_check").textContent = JSON.stringify({
      loaded: loaded, errors: window.__zs_errors || [], logs: window.__zs_logs || [],
      page_width: vw, page_height: window.innerHeight, scroll_width: de.scrollWidth,
      plots: plots, tables_overflowing: tables,
      probe: window.__zs_probe ? window.__zs_probe() : null
    });
  }
  // After every other load handler. (Not requestAnimationFrame: under virtual time no
  // frame may come before the budget runs out; getBoundingClientRect forces layout.)
  window.addEventListener("load", function () {
    setTimeout(function () { measure(true); }, 0);
  });
  setTimeout(function () { measure(false); }, 8000);
})();</script>"""


class ChromiumError(RuntimeError):
    """Chromium could not start, timed out or produced no result."""


@dataclass
class Rendered:
    """What headless Chromium saw. `plots`: one dict per plot element, with `tag`,
    `id_or_caption`, `width`, `height` (CSS px), `visible`, `inside_page` (and, for the
    message, `left`, `top`, `hidden_by`). `page_width`: the viewport width without its
    scroll bar; `scroll_width`: the document's, larger when content runs off the page."""

    console_errors: list[str]
    plots: list[dict]
    page_width: int
    scroll_width: int
    tables_overflowing: list[str]
    loaded: bool = True
    page_height: int = 0
    console_logs: list[str] = field(default_factory=list)
    #: What the `probe` function given to `render` returned (None without one).
    probe: object = None

    def problems(self) -> list[str]:
        """Everything `assert_renders_cleanly` objects to, one line each."""
        out = [f"console error: {e}" for e in self.console_errors]
        if not self.loaded:
            out.append("the page's load event never fired")
        if not self.plots:
            out.append("no plots (no <svg> in a <figure>, no <img>)")
        for p in self.plots:
            if not p["visible"]:
                why = ", ".join(p.get("hidden_by", [])) or "?"
                out.append(f"plot {p['id_or_caption']!r} ({p['tag']}) not visible: {why}")
            elif not p["inside_page"]:
                out.append(
                    f"plot {p['id_or_caption']!r} ({p['tag']}, {p['width']}x{p['height']} px "
                    f"at x={p.get('left')}) runs off the {self.page_width} px page"
                )
        out += [f"table wider than the page, not scrollable: {t}" for t in self.tables_overflowing]
        if self.scroll_width > self.page_width:
            out.append(
                f"page scrolls sideways: content {self.scroll_width} px wide "
                f"in a {self.page_width} px viewport"
            )
        return out


def find_chromium() -> str | None:
    """`$CHROMIUM` if set (a path or a name on PATH), else the first of chromium,
    chromium-browser, google-chrome on PATH; None if there is none."""
    env = os.environ.get("CHROMIUM")
    if env:
        return shutil.which(env) or (env if os.access(env, os.X_OK) else None)
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _chromium() -> str:
    exe = find_chromium()
    if exe is None:
        raise ChromiumError(
            "chromium not found: install Debian's chromium package, or set $CHROMIUM"
        )
    return exe


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _run(args: list[str], timeout: float) -> tuple[int, str, str]:
    """Run Chromium in its own session; on timeout kill the whole process group (the
    browser's helpers too) and raise `ChromiumError`."""
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # not yet reaped: the group is still ours
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        raise ChromiumError(
            f"chromium timed out after {timeout:g} s: {' '.join(args)}\n"
            f"--- stderr (tail) ---\n{_tail(err)}"
        ) from None
    return proc.returncode, out, err


def _chromium_args(exe: str, profile: str, width: int, height: int) -> list[str]:
    return [exe, *_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]


def _inject(page: bytes, base: str, probe: str | None = None) -> bytes:
    head_bits = _HEAD_SCRIPT.encode()
    if not re.search(rb"<base[\s>]", page, re.I):  # relative URLs still resolve
        head_bits += f'<base href="{html.escape(base)}">'.encode()
    m = re.search(rb"<head(\s[^>]*)?>", page, re.I)
    if m is None:
        m = re.search(rb"<html(\s[^>]*)?>", page, re.I)
        head_bits = b"<head>" + head_bits + b"</head>"
    at = m.end() if m else 0
    page = page[:at] + head_bits + page[at:]
    ends = [m.start() for m in re.finditer(rb"</body\s*>", page, re.I)]
    at = ends[-1] if ends else len(page)
    body = _BODY_SCRIPT
    if probe is not None:
        body = f"<script>window.__zs_probe = ({probe});</script>" + body
    return page[:at] + body.encode() + page[at:]


_CONSOLE_LINE = re.compile(r':CONSOLE[(:]\d*\)?\]\s*"(?P<msg>.*)", source: (?P<src>.*)$')


def _stderr_console(err: str, seen: list[str], logs: list[str]) -> list[str]:
    """Console lines of Chromium's log (which carry no level) that the in-page recorder
    did not already report as an error or log: reported as errors."""
    known_logs = set(logs)
    out = []
    for line in err.splitlines():
        m = _CONSOLE_LINE.search(line)
        if m:
            msg = m["msg"]
            if msg in known_logs or any(msg in s for s in seen):
                continue
            out.append(f"{msg} (chromium log, {m['src'].strip()})")
        elif "Uncaught" in line and not any(s in line for s in seen):
            out.append(f"chromium log: {line.strip()}")
    return out


def render(
    html_path: str | os.PathLike[str],
    *,
    width: int = 1280,
    height: int = 900,
    screenshot: str | os.PathLike[str] | None = None,
    probe: str | None = None,
) -> Rendered:
    """Load `html_path` in headless Chromium at `width`x`height` and report console
    errors, plots, tables and page width (see `Rendered`). `screenshot`: also write a
    PNG of the first `height` pixels there (a second Chromium run). `probe`: a JavaScript
    function expression, called once the page has loaded and been measured, whose
    JSON-serialisable result is `Rendered.probe`. Raises `ChromiumError` when Chromium
    is missing, fails, times out or reports nothing."""
    exe = _chromium()
    src = Path(html_path).resolve()
    base = src.parent.as_uri() + "/"
    tmp = Path(tempfile.mkdtemp(prefix="zs-browser-"))
    try:
        page = tmp / "page.html"
        page.write_bytes(_inject(src.read_bytes(), base, probe))
        profile = tmp / "profile"
        args = _chromium_args(exe, str(profile), width, height)
        args += [f"--virtual-time-budget={VIRTUAL_TIME_MS}", "--dump-dom", page.as_uri()]
        rc, out, err = _run(args, TIMEOUT_S)
        m = re.search(rf'<pre id="{CHECK_ID}"[^>]*>(.*?)</pre>', out, re.S)
        if rc != 0 or m is None or not m[1].strip():
            what = f"exit status {rc}" if rc != 0 else "no result in the dumped DOM"
            raise ChromiumError(
                f"chromium failed on {src} ({what}): {' '.join(args)}\n"
                f"--- stderr (tail) ---\n{_tail(err)}"
            )
        data = json.loads(html.unescape(m[1]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    errors = list(data["errors"])
    errors += _stderr_console(err, errors, data["logs"])
    rendered = Rendered(
        console_errors=errors,
        plots=data["plots"],
        page_width=data["page_width"],
        scroll_width=data["scroll_width"],
        tables_overflowing=data["tables_overflowing"],
        loaded=data["loaded"],
        page_height=data["page_height"],
        console_logs=data["logs"],
        probe=data.get("probe"),
    )
    if screenshot is not None:
        write_screenshot(src, screenshot, width=width, height=height)
    return rendered


def write_screenshot(
    html_path: str | os.PathLike[str],
    png_path: str | os.PathLike[str],
    *,
    width: int = 1280,
    height: int = 1600,
) -> Path:
    """Write a `width`x`height` PNG of the top of the page (not the full page) to
    `png_path` (its directory is created) and return its path."""
    exe = _chromium()
    src = Path(html_path).resolve()
    png = Path(png_path).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="zs-browser-"))
    try:
        shot = tmp / "shot.png"
        args = _chromium_args(exe, str(tmp / "profile"), width, height)
        args += [
            "--hide-scrollbars",
            f"--virtual-time-budget={VIRTUAL_TIME_MS}",
            f"--screenshot={shot}",
            src.as_uri(),
        ]
        rc, _, err = _run(args, TIMEOUT_S)
        if rc != 0 or not shot.exists() or shot.stat().st_size == 0:
            raise ChromiumError(
                f"chromium wrote no screenshot of {src} (exit status {rc}): {' '.join(args)}\n"
                f"--- stderr (tail) ---\n{_tail(err)}"
            )
        shutil.copyfile(shot, png)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return png


#: `table_cells`' probe: for each table, its scroll box and, scrolled fully left and then
#: fully right, where each cell of its first body row is, relative to the box's visible
#: part, and whether a reader sees it (inside that part, and on top at its centre).
TABLE_CELLS_PROBE = r"""function () {
  function scroller(el) {
    for (var a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      var ox = getComputedStyle(a).overflowX;
      if (ox === "auto" || ox === "scroll") return a;
    }
    return null;
  }
  function place(cell, box) {
    var b = box.getBoundingClientRect(), r = cell.getBoundingClientRect();
    var left = b.left + box.clientLeft, right = left + box.clientWidth;
    var inside = r.width > 0 && r.left >= left - 1 && r.right <= right + 1;
    var x = r.left + r.width / 2, y = r.top + r.height / 2, hit = null;
    if (x >= 0 && y >= 0 && x < window.innerWidth && y < window.innerHeight)
      hit = document.elementFromPoint(x, y);
    return {
      left: Math.round(r.left - left), right: Math.round(r.right - left),
      inside: inside, on_top: !!hit && cell.contains(hit),
      visible: inside && !!hit && cell.contains(hit)
    };
  }
  return Array.prototype.map.call(document.querySelectorAll("table"), function (t, i) {
    var heads = t.tHead ? Array.prototype.map.call(t.tHead.rows[0].cells, function (c) {
      return c.textContent.trim();
    }) : [];
    var out = {id: t.id || "table[" + i + "]", columns: heads, box: null};
    var box = scroller(t), row = t.tBodies.length ? t.tBodies[0].rows[0] : null;
    if (!box || !row) return out;
    box.scrollIntoView({block: "start"});
    function at(x) {
      box.scrollLeft = x;
      var cells = {};
      heads.forEach(function (h, c) { if (row.cells[c]) cells[h] = place(row.cells[c], box); });
      return {scroll_left: Math.round(box.scrollLeft), cells: cells};
    }
    out.box = {width: box.clientWidth, scroll_width: box.scrollWidth};
    out.scrolled_left = at(0);
    out.scrolled_right = at(box.scrollWidth);
    box.scrollLeft = 0;
    return out;
  });
}"""


def table_cells(
    html_path: str | os.PathLike[str], *, width: int = 1280, height: int = 900
) -> dict[str, dict]:
    """Each table of the page by id (`table[i]` without one): `columns` (header texts),
    `box` (`width`, `scroll_width` of its horizontally scrolling box; None without one)
    and, scrolled fully left (`scrolled_left`) and fully right (`scrolled_right`), the
    `cells` of its first body row by column: `left` and `right` (CSS px from the box's
    left edge), `inside` (within the box's visible part), `on_top` (not covered at its
    centre) and `visible` (both). Fails on console errors."""
    rendered = render(html_path, width=width, height=height, probe=TABLE_CELLS_PROBE)
    assert rendered.console_errors == [], rendered.console_errors
    return {t["id"]: t for t in rendered.probe}


#: `label_boxes`' probe: for each plot (the outermost `<svg>` of a `<figure>`), the
#: bounding box of each tick label as the browser lays it out: matplotlib's SVG keeps text
#: as `<text>` (`svg.fonttype = "none"`) inside a group `xtick_N` or `ytick_N` (its id
#: prefixed by the page), so a rotated label's box is what it covers on the screen.
LABEL_BOXES_PROBE = r"""function () {
  var tick = /(^|-)([xy])tick_\d+$/;
  var figures = [];
  document.querySelectorAll("figure svg").forEach(function (svg, i) {
    if (svg.parentElement.closest("svg")) return;
    var fig = svg.closest("figure"), labels = [];
    svg.querySelectorAll("g[id]").forEach(function (g) {
      var m = tick.exec(g.id);
      if (!m) return;
      var box = null, text = [];
      g.querySelectorAll("text").forEach(function (t) {
        var r = t.getBoundingClientRect();
        if (r.width <= 0 || r.height <= 0) return;
        text.push(t.textContent.trim());
        box = box ? {left: Math.min(box.left, r.left), top: Math.min(box.top, r.top),
                     right: Math.max(box.right, r.right), bottom: Math.max(box.bottom, r.bottom)}
                  : {left: r.left, top: r.top, right: r.right, bottom: r.bottom};
      });
      if (box) labels.push({axis: m[2], text: text.join(""), left: box.left, top: box.top,
                            right: box.right, bottom: box.bottom});
    });
    figures.push({figure: (fig && fig.id) || "figure[" + i + "]",
                  width: svg.getBoundingClientRect().width, labels: labels});
  });
  return figures;
}"""


def label_boxes(
    html_path: str | os.PathLike[str], *, width: int = 1280, height: int = 900
) -> list[dict]:
    """Each plot of the page, in order: `figure` (its `<figure>`'s id), `width` (CSS px as
    shown) and `labels`, one per tick label with its `axis` (`x` or `y`), `text` and
    bounding box (`left`, `top`, `right`, `bottom`, CSS px). Fails on console errors."""
    rendered = render(html_path, width=width, height=height, probe=LABEL_BOXES_PROBE)
    assert rendered.console_errors == [], rendered.console_errors
    return rendered.probe


def overlapping_labels(figure: dict, tolerance: float = 0.5) -> list[str]:
    """The pairs of `figure`'s tick labels (a `label_boxes` item) whose boxes overlap by
    more than `tolerance` px both ways, one line each."""
    labels = figure["labels"]
    out = []
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            wide = min(a["right"], b["right"]) - max(a["left"], b["left"])
            tall = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
            if wide > tolerance and tall > tolerance:
                out.append(
                    f"{figure['figure']}: {a['axis']} label {a['text']!r} overlaps "
                    f"{b['axis']} label {b['text']!r} ({wide:.1f} x {tall:.1f} px)"
                )
    return out


# --------------------------------------------------------------------------------------
# assert_renders_cleanly: THE check for report tests (sweep report, reproductions, ...).
#
#     from browser import assert_renders_cleanly
#     assert_renders_cleanly(tmp_path / "report.html")
#
# Skips the calling test when Chromium is not installed.
# --------------------------------------------------------------------------------------
def assert_renders_cleanly(
    html_path: str | os.PathLike[str], *, width: int = 1280, height: int = 900
) -> Rendered:
    """Render `html_path` and fail, listing every problem, unless: no console errors,
    at least one plot, every plot visible and inside the page, no table wider than the
    page outside a scrollable box, and no sideways scrolling. Returns the `Rendered`."""
    if find_chromium() is None:
        import pytest

        pytest.skip("chromium not found: install Debian's chromium package (.ci/run does)")
    rendered = render(html_path, width=width, height=height)
    problems = rendered.problems()
    assert not problems, f"{html_path} does not render cleanly at {width}x{height}:\n  " + (
        "\n  ".join(problems)
    )
    return rendered


# -- example pages (the browser tests and benches/screenshot.py build the same ones) ----------

#: The small device the example pages run on: 64 blocks per plane (at 32 the default
#: over-provisioning leaves GC too few spare blocks), timing on so latency views show.
EXAMPLE_SETTINGS = {"flash.blocks_per_plane": 64, "timing.enabled": True}

#: A two-axis sweep (3 policies x 3 over-provisioning ratios), a second each.
EXAMPLE_GRID = """\
title = "policies and over-provisioning"
preset = "default"
workload = "uniform:drive_writes=1"
metrics = ["waf", "flash.erases", "gc.pages_copied", "latency.all.p99_us"]

[set]
"flash.blocks_per_plane" = 64
"timing.enabled" = true

[axes]
"gc.policy" = ["greedy", "cost-benefit", "fifo"]
"ftl.over_provisioning" = [0.07, 0.14, 0.28]
"""


def build_compare_page(html_path: str | Path, title: str = "zombiesim compare") -> Path:
    """The `zombiesim compare --report` page of greedy against cost-benefit (one drive
    write of uniform random writes) at `html_path`."""
    import zombiesim as zs
    from zombiesim.htmlreport import write_comparison_html

    cfg = zs.Config.preset("default").override(EXAMPLE_SETTINGS)
    workload = "uniform:drive_writes=1"
    reports = zs.compare_reports(cfg, workload=workload, policies=["greedy", "cost-benefit"])
    write_comparison_html(
        html_path,
        reports,
        title=title,
        config_toml=cfg.to_toml(),
        workload=workload,
        seed=1,
        command="zombiesim compare --preset default --set flash.blocks_per_plane=64 "
        "--set timing.enabled=true --policies greedy,cost-benefit "
        f"--workload {workload} --report {Path(html_path).name}",
    )
    return Path(html_path)


#: A two-axis sweep of 50 cells (5 policies x 10 over-provisioning ratios, half a drive
#: write each: a few seconds on two workers): 50 runs on the latency chart's x axis, ten
#: close ratios on the WAF chart's, the free blocks flat at GC's watermark.
WIDE_GRID = """\
title = "fifty cells"
preset = "default"
workload = "uniform:drive_writes=0.5"
metrics = ["waf", "flash.erases", "latency.all.p99_us"]

[set]
"flash.blocks_per_plane" = 64
"timing.enabled" = true

[axes]
"gc.policy" = ["greedy", "cost-benefit", "fifo", "random", "d-choices:4"]
"ftl.over_provisioning" = [0.07, 0.09, 0.11, 0.13, 0.15, 0.17, 0.19, 0.21, 0.24, 0.28]
"""


def build_sweep_page(html_path: str | Path, grid_text: str = EXAMPLE_GRID) -> Path:
    """The report of `grid_text` (default `EXAMPLE_GRID`) swept into a folder beside
    `html_path`, written at `html_path` (`zombiesim report`)."""
    import zombiesim as zs
    from zombiesim import sweeps

    html_path = Path(html_path)
    folder = html_path.parent / "sweep-results"
    grid = html_path.parent / "grid.toml"
    grid.write_text(grid_text)
    zs.sweep(grid, out=folder, jobs=2, report=False)
    return sweeps.write_report(sweeps.ResultsStore(folder), out=html_path)


def build_reproduction_page(html_path: str | Path) -> Path:
    """A reproduction's report (`Reproduction.html()`, the page `zombiesim reproduce`
    writes) of made-up claims, no simulation: its claims table is wider than the window at
    1280 px, with the verdict past the right edge unless it is kept in view, and one
    figure. Written at `html_path`."""
    import zombiesim as zs
    from zombiesim.reproduce import Claim, Reproduction

    # Text of up to 40 characters does not wrap: the columns before the verdict are
    # wider together than a 1280 px window's table, and those after it wider than a
    # 1024 px window's table less the experiment and the verdict.
    order = "SGC < min(HGC, DGC) < GGC on every one"
    claims = [
        Claim(
            "Fig. 6, 4 MiB buffers (9:5:1), stand-ins",
            "WA order of the schemes on the footprint stand-ins",
            order,
            order,
            "the same order as the paper's, all four",
            True,
        ),
        Claim(
            "Fig. 7, 4 MiB buffers (9:5:1)",
            "GC latency, SGC vs GGC",
            "-40.0%",
            "-10.0%",
            "lower, within 2x (-20.0% to -80.0%)",
            True,
            "direction-only",
            explanation="fast programs: see the no-fast ablation",
        ),
        Claim(
            "Fig. 2, 4 MiB buffers",
            "WA, greedy+delay vs greedy",
            "-10.0%",
            "-3.0%",
            "lower, within 2x (-5.0% to -20.0%)",
            True,
            "direction-only",
        ),
        Claim("Fig. 2, 4 MiB buffers", "WA, separation", "-5.0%", "-4.0%", "lower", True),
        Claim("MSR src1_0 excerpt", "shadow pages", "about 70%", "12%", "60% to 80%", False),
    ]

    def figure():
        fig, ax = zs.plot.panels()
        ax.plot([1, 2, 3], [2.5, 2.0, 1.5])
        ax.set_title("WAF")
        ax.set_xlabel("x")
        ax.set_ylabel("WAF")
        return fig

    rep = Reproduction(
        paper="shadowgc",
        title="A reproduction",
        scale="tiny",
        claims=claims,
        figures={"WAF against x": figure},
        command="zombiesim reproduce shadowgc --scale tiny",
    )
    html_path = Path(html_path)
    html_path.write_text(rep.html())
    return html_path
