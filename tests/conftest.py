"""Shared fixtures: small configs keep every run in the tens of milliseconds."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import zombiesim as zs

# Replays keep text traces parsed in the trace cache: the tests use one of their own (and
# so do the commands they start), never the user's.
_TRACE_CACHE = tempfile.mkdtemp(prefix="zombiesim-test-trace-cache-")
os.environ["ZOMBIESIM_TRACE_CACHE"] = _TRACE_CACHE
atexit.register(shutil.rmtree, _TRACE_CACHE, True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI (`CI=true`, as .ci/run is started) a skipped test fails: CI installs
    everything the tests need (chromium included), so a skip there means something is
    missing, not optional. Locally skips stay skips, listed with their reasons at the end
    of `make test` (pytest -rs)."""
    outcome = yield
    report = outcome.get_result()
    if (
        report.skipped
        and not hasattr(report, "wasxfail")
        and os.environ.get("CI", "").lower() == "true"
    ):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where nothing may be: {reason}"


#: 256 blocks x 256 pages x 4 KiB = 256 MiB of flash: fast, still well past GC start.
SMALL = {"flash.blocks_per_plane": 64}


@pytest.fixture(scope="session")
def small() -> zs.Config:
    return zs.Config.preset("default").override(SMALL)


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 60, columns: str | None = "160"
) -> subprocess.CompletedProcess:
    """`python -m zombiesim ARGS` with stdout/stderr captured as text (never a TTY), with
    `COLUMNS` set to `columns` (`None`: unset, as in a plain pipe)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run(
        [sys.executable, "-m", "zombiesim", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


@pytest.fixture
def cli():
    return run_cli


#: The MSR Cambridge excerpt the checkout ships (`traces/samples/`).
MSR_SAMPLE = Path(__file__).resolve().parents[1] / "traces/samples/msr-src1_0-excerpt.csv"


@pytest.fixture
def msr_sample() -> Path:
    if not MSR_SAMPLE.exists():
        pytest.fail(f"the shipped MSR excerpt is missing ({MSR_SAMPLE}): restore traces/samples/")
    return MSR_SAMPLE
