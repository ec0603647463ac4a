"""The sample traces the checkout ships (`traces/samples/`): every one the README, the
docs, the tests and the reproductions name is there, whole, and nothing reads a folder
beside the checkout."""

import re
import subprocess
from pathlib import Path

import pytest

import zombiesim as zs
from zombiesim import samples

ROOT = Path(__file__).resolve().parents[1]


def test_every_shipped_sample_is_there_and_whole():
    listed = samples.checksums()
    assert samples.MSR_EXCERPT in listed and len(listed) >= 20
    assert samples.verify() == []


def test_a_missing_or_altered_sample_is_named(tmp_path):
    root = tmp_path / "samples"
    root.mkdir()
    (root / "a.csv").write_text("1\n")
    (root / "SHA256SUMS").write_text(f"{'0' * 64}  a.csv\n{'1' * 64}  gone.csv\n")
    problems = samples.verify(root)
    assert len(problems) == 2
    assert problems[0].startswith("a.csv: SHA-256") and problems[1] == "gone.csv: missing"


def test_every_sample_file_is_listed_with_its_provenance():
    """No file under traces/samples/ escapes the checksum list, and the README names
    every top-level sample."""
    on_disk = {
        p.relative_to(samples.CHECKOUT_SAMPLES).as_posix()
        for p in samples.CHECKOUT_SAMPLES.rglob("*")
        if p.is_file() and p.name not in ("README.md", "SHA256SUMS")
    }
    assert on_disk == set(samples.checksums())
    readme = (samples.CHECKOUT_SAMPLES / "README.md").read_text()
    # A file at the top, or a capture folder (captures/NAME/).
    tops = {"/".join(name.split("/")[:2]) + "/" if "/" in name else name for name in on_disk}
    for top in tops:
        assert f"`{top}`" in readme, top


def test_a_missing_sample_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("ZOMBIESIM_TRACES", str(tmp_path))
    with pytest.raises(zs.InputError, match=r"sample trace `nope.csv` is missing.*traces/samples"):
        samples.path("nope.csv")
    assert samples.path  # the default folder comes back with the variable unset
    monkeypatch.delenv("ZOMBIESIM_TRACES")
    assert samples.path(samples.MSR_EXCERPT).is_file()


def _tracked_text_files():
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    suffixes = (".py", ".rs", ".md", ".toml", ".sh", ".txt", ".cfg")
    skip = ("traces/samples/", "traces/corpus/", "tests/test_samples.py")
    return [ROOT / f for f in out if f.endswith(suffixes) and not f.startswith(skip)] + [
        ROOT / "Makefile"
    ]


def test_nothing_reads_a_folder_beside_the_checkout():
    """The product, its tests and its docs use what the checkout ships: no path
    into a folder beside the checkout anywhere (the pattern below is the guard, and this
    file is left out of the scan)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an installed package): nothing to scan")
    pattern = re.compile(r"\.\./shared|shared/traces|\"shared\" / \"traces\"")
    hits = [
        f"{f.relative_to(ROOT)}:{i}: {line.strip()}"
        for f in _tracked_text_files()
        if f.exists()
        for i, line in enumerate(f.read_text(errors="replace").splitlines(), 1)
        if pattern.search(line)
    ]
    assert hits == [], "\n".join(hits)
