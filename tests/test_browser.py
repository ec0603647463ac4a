"""HTML reports in a real browser (headless Chromium, `tests/browser.py`): no console
errors, every plot visible and on the page, nothing wider than the window.

The harness is first shown to catch each kind of fault on a deliberately broken page,
and to pass a clean one, so that a passing report check means something. Plots count
as an `<svg>` in a `<figure>` or an `<img>`, so these tests hold for either way the
report embeds its plots.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from browser import (
    ChromiumError,
    _stderr_console,
    assert_renders_cleanly,
    build_compare_page,
    build_sweep_page,
    find_chromium,
    render,
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


def test_demo_report_renders_cleanly(tmp_path):
    # `zombiesim demo --quick` (an eighth of the paper's size) takes a couple of seconds.
    out = tmp_path / "demo"
    proc = subprocess.run(
        [sys.executable, "-m", "zombiesim", "demo", "--quick", "--jobs", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert_renders_cleanly(out / "demo.html")


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
