"""Screenshots of the HTML reports for the docs, taken with headless Chromium.

Builds the example pages of `tests/browser.py` (the `zombiesim compare --report` page of
greedy against cost-benefit on a small timed device, and the report of a two-axis sweep),
checks that each renders cleanly, and writes the top 1280x1600 px of each to
`docs/img/compare-report.png` and `docs/img/sweep-report.png`.
Needs Chromium (Debian's `chromium` package, or `$CHROMIUM`) and the built package:

    .venv/bin/python benches/screenshot.py
    .venv/bin/python benches/screenshot.py --keep-html /tmp/compare.html

To add another page: write a `build_..._page(html_path)` function that writes the page
(in `tests/browser.py`, so that a test renders it too), and add it to `PAGES`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from browser import (  # noqa: E402
    assert_renders_cleanly,
    build_compare_page,
    build_sweep_page,
    find_chromium,
    write_screenshot,
)

#: Where the screenshots go, and their size (CSS px: the top of the page, not all of it).
OUT_DIR = REPO / "docs" / "img"
WIDTH, HEIGHT = 1280, 1600


#: PNG name in `OUT_DIR` -> the function that builds its page at a given path.
PAGES: dict[str, Callable[[Path], Path]] = {
    "compare-report.png": build_compare_page,
    "sweep-report.png": build_sweep_page,
}


def shoot(build: Callable[[Path], Path], png: Path, keep_html: Path | None = None) -> Path:
    """Build a page with `build` (in a temporary directory unless `keep_html`), check it
    renders cleanly, and screenshot it to `png`."""
    with tempfile.TemporaryDirectory(prefix="zs-screenshot-") as tmp:
        html_path = build(keep_html or Path(tmp) / "page.html")
        assert_renders_cleanly(html_path, width=WIDTH)
        return write_screenshot(html_path, png, width=WIDTH, height=HEIGHT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR, help="default: docs/img")
    parser.add_argument("--keep-html", type=Path, help="also keep the page here")
    args = parser.parse_args(argv)
    if find_chromium() is None:
        print("chromium not found: install Debian's chromium package", file=sys.stderr)
        return 1
    for name, build in PAGES.items():
        png = shoot(build, args.out_dir / name, args.keep_html)
        print(f"wrote {png.relative_to(REPO) if png.is_relative_to(REPO) else png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
