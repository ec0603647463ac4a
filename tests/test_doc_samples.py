"""Every sample of command output in the docs is what the command prints now, numbers
included (wall-clock times and the version aside): `python docs/samples.py` rewrites
them, and this test fails when one has drifted from the code (docs/samples.py says how
samples are found, run and compared)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load():
    spec = importlib.util.spec_from_file_location("doc_samples", ROOT / "docs" / "samples.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["doc_samples"] = module
    spec.loader.exec_module(module)
    return module


samples = _load()
SAMPLES = list(samples.samples())


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return samples.scratch_folder(tmp_path_factory.mktemp("samples"))


def test_the_docs_have_samples():
    pages = {s.page.name for s in SAMPLES}
    assert {"cli.md", "shadowgc.md"} <= pages and len(SAMPLES) >= 12


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.name for s in SAMPLES])
def test_a_sample_is_what_the_command_prints(sample, scratch):
    # The check in docs/samples.py --check, one sample at a time.
    now = samples.Sample(sample.page, sample.line, 0, 0, samples.regenerate(sample, scratch))
    assert samples.normalized(now.text()) == samples.normalized(sample.text()), (
        f"{sample.name} has drifted from what the command prints: run python docs/samples.py"
    )


def test_a_drifted_number_is_caught():
    """The comparison sees one changed figure, not only a changed line."""
    sample = next(s for s in SAMPLES if "WAF           5.900" in s.text())
    changed = sample.text().replace("WAF           5.900", "WAF           5.901")
    assert samples.normalized(changed) != samples.normalized(sample.text())


def test_wall_times_and_the_version_are_left_out():
    a = "zombiesim 0.1.0 · x\n  run           wall 344 ms (measured phase 192 ms), done in 1.2 s\n"
    b = "zombiesim 0.2.0 · x\n  run           wall 1.18 s (measured phase 751 ms), done in 3 s\n"
    assert samples.normalized(a) == samples.normalized(b)


def test_an_excerpt_keeps_its_lines_and_elisions():
    shown = "a\n  WAF           1.0\n  ...\n  GC            3 copies\n"
    printed = "a\n  WAF           2.0\n  host          9\n  GC            4 copies\n"
    assert (
        samples.excerpt(shown, printed)
        == "a\n  WAF           2.0\n  ...\n  GC            4 copies\n"
    )
