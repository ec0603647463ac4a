"""HTML reports in a real browser (headless Chromium, `tests/browser.py`): no console
errors, every plot visible and on the page, nothing wider than the window.

The harness is first shown to catch each kind of fault on a deliberately broken page,
and to pass a clean one, so that a passing report check means something. Plots count
as an `<svg>` in a `<figure>` or an `<img>`, so these tests hold for either way the
report embeds its plots.

Wide tables scroll sideways in their box with the label column (and a claims table's
verdict) kept in view: checked at 1024 and 1280 px, scrolled fully left and fully right.
A 50-cell sweep's plots keep their tick labels apart: checked on the boxes the browser
gives each label's text, not by eye.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from browser import (
    WIDE_GRID,
    ChromiumError,
    _stderr_console,
    assert_renders_cleanly,
    build_compare_page,
    build_reproduction_page,
    build_sweep_page,
    find_chromium,
    label_boxes,
    overlapping_labels,
    render,
    table_cells,
    write_screenshot,
)

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="chromium not found: install Debian's chromium package (.ci/run does)",
)

#: A tiny valid PNG (1x1, teal), so the clean page needs no file beside it.
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGOQb2gAAAHhASDIyfM1AAAAAElFTkSuQmCC"
)

BROKEN_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>broken on purpose</title>
<script>console.error("intentional console error");</script>
</head><body>
<h1>Broken on purpose</h1>
<script>throw new Error("intentional exception");</script>
<figure><svg id="shown-svg" width="300" height="120"><rect width="300" height="120"
  fill="teal"/></svg><figcaption>a visible plot</figcaption></figure>
<figure><svg id="hidden-svg" width="300" height="120" style="display: none"><rect
  width="300" height="120"/></svg><figcaption>hidden plot</figcaption></figure>
<img id="broken-img" alt="broken image" src="no-such-plot.png">
<table id="wide-table" style="width: 3000px"><tr><td>far too wide</td></tr></table>
<div style="overflow-x: auto"><table id="scrolled-table" style="width: 3000px">
  <tr><td>wide, but in a scroll box</td></tr></table></div>
</body></html>
"""

CLEAN_PAGE = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>clean</title>
<style>body {{ max-width: 1100px; margin: 2em auto; }} svg, img {{ max-width: 100%; }}</style>
</head><body>
<script>console.log("a log line is not an error");</script>
<figure id="svg-plot"><svg width="1600" height="400" viewBox="0 0 1600 400"
  style="height: auto"><title>wide svg, scaled down</title>
  <g><rect width="1600" height="400" fill="#7fa8c9"/></g></svg>
  <figcaption>an inline SVG plot</figcaption></figure>
<figure><img id="png-plot" alt="a PNG plot" width="600" height="200"
  src="data:image/png;base64,{PNG_1X1}"></figure>
<div style="overflow-x: auto"><table style="width: 3000px"><tr><td>scrolls</td></tr>
  </table></div>
</body></html>
"""


def _plot(rendered, name):
    found = [p for p in rendered.plots if p["id_or_caption"] == name]
    assert len(found) == 1, (name, rendered.plots)
    return found[0]


def test_harness_reports_every_fault(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text(BROKEN_PAGE)
    r = render(page)

    errors = "\n".join(r.console_errors)
    assert "intentional console error" in errors
    assert "intentional exception" in errors
    assert "no-such-plot.png" in errors  # the failed image load, as a browser console shows

    assert len(r.plots) == 3, r.plots
    shown = _plot(r, "#shown-svg")
    assert shown["visible"] and shown["inside_page"], shown
    assert (shown["tag"], shown["width"], shown["height"]) == ("svg", 300, 120)
    hidden = _plot(r, "#hidden-svg")
    assert not hidden["visible"], hidden
    broken = _plot(r, "#broken-img")
    assert broken["tag"] == "img" and not broken["visible"], broken

    assert r.tables_overflowing == ["#wide-table (3000 px)"]
    assert r.scroll_width > r.page_width
    with pytest.raises(AssertionError, match="does not render cleanly") as exc:
        assert_renders_cleanly(page)
    for needle in ("intentional exception", "#hidden-svg", "#broken-img", "#wide-table"):
        assert needle in str(exc.value)


def test_harness_passes_a_clean_page(tmp_path):
    page = tmp_path / "clean.html"
    page.write_text(CLEAN_PAGE)
    r = assert_renders_cleanly(page)
    assert [p["tag"] for p in r.plots] == ["svg", "img"]
    assert r.console_logs == ["a log line is not an error"]
    svg = _plot(r, "an inline SVG plot")  # named by its figure's caption
    assert 0 < svg["width"] <= r.page_width  # 1600 px wide, scaled down to the page
    assert _plot(r, "#png-plot")["width"] == 600


def test_chromium_log_is_read_for_errors_the_page_recorder_missed():
    err = "\n".join(
        [
            '[1:1:1124/061817.8:INFO:CONSOLE:1] "seen by the recorder", source: file:///p (1)',
            '[1:1:1124/061817.8:INFO:CONSOLE:2] "just a log", source: file:///p (2)',
            '[1:1:1124/061817.8:INFO:CONSOLE(3)] "Uncaught missed", source: file:///p (3)',
            "[1:1:1124/061817.8:ERROR:dbus/bus.cc:405] Failed to connect to the bus",
        ]
    )
    got = _stderr_console(err, ["console.error: seen by the recorder"], ["just a log"])
    assert got == ["Uncaught missed (chromium log, file:///p (3))"]


def test_a_browser_that_cannot_start_is_a_clear_error(tmp_path, monkeypatch):
    fake = tmp_path / "fake-chromium"
    fake.write_text("#!/bin/sh\necho 'cannot open display: no such thing' >&2\nexit 3\n")
    fake.chmod(0o755)
    page = tmp_path / "clean.html"
    page.write_text(CLEAN_PAGE)
    monkeypatch.setenv("CHROMIUM", str(fake))
    with pytest.raises(ChromiumError, match=r"(?s)exit status 3.*cannot open display"):
        render(page)


@pytest.fixture(scope="module")
def compare_page(tmp_path_factory):
    return build_compare_page(tmp_path_factory.mktemp("compare") / "compare.html", title="t")


def test_compare_report_renders_cleanly(compare_page):
    r = render(compare_page)
    assert r.console_errors == []
    assert r.plots, "the compare report has no plot"
    for p in r.plots:
        assert p["visible"], p
        assert p["inside_page"], p
        assert p["width"] >= 300 and p["height"] >= 150, p  # a plot, not an icon
    assert r.tables_overflowing == []
    assert r.scroll_width <= r.page_width
    assert r.problems() == []


def test_compare_report_fits_a_narrow_window(compare_page):
    """At 1024 px (a small laptop), plots shrink to the page rather than run off it."""
    assert_renders_cleanly(compare_page, width=1024, height=768)


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory):
    # `zombiesim demo --quick` (an eighth of the paper's size) takes a couple of seconds.
    out = tmp_path_factory.mktemp("demo")
    proc = subprocess.run(
        [sys.executable, "-m", "zombiesim", "demo", "--quick", "--jobs", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out / "demo.html"


def test_demo_report_renders_cleanly(demo_page):
    assert_renders_cleanly(demo_page)


def _scrolls(table) -> None:
    """The table is wider than its box, and scrolling fully right moves it."""
    box = table["box"]
    assert box is not None, f"{table['id']} is not in a scrolling box"
    assert box["scroll_width"] > box["width"] + 50, (table["id"], box)
    assert table["scrolled_left"]["scroll_left"] == 0
    assert table["scrolled_right"]["scroll_left"] >= box["scroll_width"] - box["width"] - 1


@pytest.mark.parametrize("width", [1024, 1280])
def test_demo_results_table_keeps_its_labels_in_view(demo_page, width):
    """The results table has more columns than fit (latency, GC, shadow counters): the
    run labels stay at the box's left edge however far it is scrolled."""
    results = table_cells(demo_page, width=width)["table-results"]
    assert results["columns"][0] == "label"
    _scrolls(results)
    first, last = results["columns"][1], results["columns"][-1]
    left, right = results["scrolled_left"]["cells"], results["scrolled_right"]["cells"]
    assert not left[last]["visible"] and right[last]["visible"]  # the last column scrolls in
    assert left[first]["visible"] and not right[first]["visible"]  # the second one out
    for where, cells in (("scrolled left", left), ("scrolled right", right)):
        assert cells["label"]["visible"], (width, where, cells["label"])
        assert cells["label"]["left"] == 0, (width, where, cells["label"])


@pytest.mark.parametrize("width", [1024, 1280])
def test_claims_table_keeps_the_label_and_the_verdict_in_view(tmp_path, width):
    """A reproduction's claims table: experiment, metric, paper, ours, then the verdict;
    the experiment and the verdict stay in view (neither covering the other), scrolled
    fully left and fully right, while the columns between them scroll."""
    page = build_reproduction_page(tmp_path / "reproduction.html")
    claims = table_cells(page, width=width)["table-claims"]
    assert claims["columns"][:5] == ["experiment", "metric", "paper", "ours", "verdict"]
    _scrolls(claims)
    for where in ("scrolled_left", "scrolled_right"):
        cells = claims[where]["cells"]
        for column in ("experiment", "verdict"):
            assert cells[column]["visible"], (width, where, column, cells[column])
        assert cells["experiment"]["left"] == 0
        assert cells["verdict"]["left"] >= cells["experiment"]["right"] - 1, (width, where, cells)
    assert not claims["scrolled_right"]["cells"]["metric"]["visible"]


def test_value_analysis_page_renders_cleanly(tmp_path):
    """`zombiesim trace analyze --values FILE --out DIR`'s index.html: its SVG figures
    show, at 1280 and at 1024 px."""
    import zombiesim as zs

    trace = tmp_path / "fiu.txt"
    lines = [f"{1000 + i} 7 proc {8 * (i % 5)} 8 W 8 0 {i % 3:0>32}" for i in range(60)]
    trace.write_text("\n".join(lines) + "\n")
    analysis = zs.analyze.values(trace, pools=[1, 4])
    zs.analyze.write_outputs(analysis, tmp_path / "values")
    page = tmp_path / "values" / "index.html"
    rendered = assert_renders_cleanly(page)
    assert [p["tag"] for p in rendered.plots] == ["svg"] * 3
    assert_renders_cleanly(page, width=1024, height=768)


def test_sweep_report_renders_cleanly(tmp_path):
    """A two-axis sweep's report: every plot visible (the heat map among them), the
    results table in its scroll box, no console errors, at 1280 and at 1024 px."""
    page = build_sweep_page(tmp_path / "sweep.html")
    rendered = assert_renders_cleanly(page)
    assert len(rendered.plots) >= 5  # WAF/erases, latency x2, series, GC copies, heat map
    assert_renders_cleanly(page, width=1024, height=768)
    text = page.read_text()
    assert "gc.policy" in text and "ftl.over_provisioning" in text and "heat" in text.lower()


def test_screenshot_writes_a_png(tmp_path, compare_page):
    png = write_screenshot(compare_page, tmp_path / "shot.png", width=800, height=600)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (800, 600)


#: Two plots whose tick labels are SVG text as matplotlib writes it: in the first, two x
#: labels (one rotated) cover each other; in the second, none touches another.
OVERLAPPING_LABELS_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>labels</title></head><body>
<figure id="fig-crowded"><svg width="400" height="200" style="font: 10px sans-serif">
  <g id="p-1-xtick_1"><g id="p-1-text_1"><text x="100" y="150">greedy · 0.07</text></g></g>
  <g id="p-1-xtick_2"><g id="p-1-text_2"><text x="120" y="150">fifo · 0.09</text></g></g>
  <g id="p-1-xtick_3"><g id="p-1-text_3"><text transform="translate(200 150) rotate(-30)"
    >cost-benefit · 0.11</text></g></g>
  <g id="p-1-xtick_4"><g id="p-1-text_4"><text transform="translate(215 150) rotate(-30)"
    >random · 0.13</text></g></g>
  <g id="p-1-ytick_1"><g id="p-1-text_5"><text x="10" y="40">100</text></g></g>
</svg><figcaption>crowded</figcaption></figure>
<figure id="fig-apart"><svg width="400" height="200" style="font: 10px sans-serif">
  <g id="p-2-xtick_1"><g id="p-2-text_1"><text transform="translate(100 120) rotate(-90)"
    >greedy · 0.07</text></g></g>
  <g id="p-2-xtick_2"><g id="p-2-text_2"><text transform="translate(120 120) rotate(-90)"
    >fifo · 0.09</text></g></g>
  <g id="p-2-ytick_1"><g id="p-2-text_3"><text x="10" y="40">100</text></g></g>
  <text x="100" y="150">not a tick label</text>
</svg><figcaption>apart</figcaption></figure>
</body></html>
"""


def test_harness_finds_overlapping_tick_labels(tmp_path):
    """`label_boxes` measures each tick label as laid out (a rotated one by the box it
    covers), and `overlapping_labels` names the pairs that cover each other."""
    page = tmp_path / "labels.html"
    page.write_text(OVERLAPPING_LABELS_PAGE)
    crowded, apart = label_boxes(page)
    assert crowded["figure"] == "fig-crowded" and len(crowded["labels"]) == 5
    assert [(lb["axis"], lb["text"]) for lb in apart["labels"]] == [
        ("x", "greedy · 0.07"),
        ("x", "fifo · 0.09"),
        ("y", "100"),
    ]
    found = overlapping_labels(crowded)
    assert len(found) == 2, found
    assert "'greedy · 0.07' overlaps x label 'fifo · 0.09'" in found[0]
    assert "'cost-benefit · 0.11' overlaps x label 'random · 0.13'" in found[1]
    assert overlapping_labels(apart) == []


@pytest.fixture(scope="module")
def wide_sweep_page(tmp_path_factory):
    # 50 tiny cells on two workers, then `zombiesim report`: about ten seconds.
    return build_sweep_page(tmp_path_factory.mktemp("wide") / "sweep.html", WIDE_GRID)


def test_sweep_report_of_50_cells_keeps_its_labels_apart(wide_sweep_page):
    """At 1024 px, no two tick labels of any plot of a 50-cell sweep's report overlap:
    the 50 runs of the latency percentiles are turned upright and thinned, and the ten
    close over-provisioning ratios thinned, until each label has its own room."""
    figures = label_boxes(wide_sweep_page, width=1024, height=768)
    assert {f["figure"] for f in figures} >= {"fig-waf-erases", "fig-latency", "fig-heatmap"}
    problems = [line for f in figures for line in overlapping_labels(f)]
    assert problems == [], "\n".join(problems)
    (latency,) = [f for f in figures if f["figure"] == "fig-latency"]
    runs = [lb for lb in latency["labels"] if lb["axis"] == "x" and " · " in lb["text"]]
    assert 10 <= len(runs) < 50  # thinned, still naming a run every few bars
    assert_renders_cleanly(wide_sweep_page, width=1024, height=768)
