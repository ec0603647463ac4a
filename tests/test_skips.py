"""Skips are never silent: `make test` lists each with its reason (pytest -rs), and under
CI=true (as .ci/run runs) a skipped test fails (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

CASE = """
import pytest

def test_skipped():
    pytest.skip("chromium not found")

@pytest.mark.xfail(reason="known")
def test_expected_to_fail():
    assert False
"""


def _pytest(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess:
    folder = tmp_path / ("ci" if ci else "local")
    folder.mkdir()
    (folder / "conftest.py").write_text((TESTS / "conftest.py").read_text())
    (folder / "test_case.py").write_text(CASE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-n", "0",
         str(folder)],
        capture_output=True, text=True, env=env, cwd=folder, timeout=300,
    )  # fmt: skip


def test_a_skip_is_listed_with_its_reason(tmp_path):
    proc = _pytest(tmp_path, ci=False)
    assert proc.returncode == 0, proc.stdout
    assert "SKIPPED [1]" in proc.stdout and "chromium not found" in proc.stdout
    assert "1 skipped, 1 xfailed" in proc.stdout


def test_a_skip_fails_in_ci(tmp_path):
    proc = _pytest(tmp_path, ci=True)
    assert proc.returncode == 1, proc.stdout
    assert "skipped in CI" in proc.stdout and "chromium not found" in proc.stdout
    assert "1 failed, 1 xfailed" in proc.stdout


def test_make_test_lists_skips():
    makefile = (TESTS.parent / "Makefile").read_text()
    line = next(x for x in makefile.splitlines() if "-m pytest" in x and "test-python" not in x)
    report = next(w for w in line.split() if w.startswith("-r"))
    assert "s" in report and "f" in report  # skips with their reasons, and failures
