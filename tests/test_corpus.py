"""The corpus of captured programs: what is checked in (provenance, sizes) and
`zombiesim trace list`."""

from __future__ import annotations

import json
import re
import tomllib

import pytest

from zombiesim import corpus
from zombiesim import trace as traces

#: An absolute path other than /dev/null in a command line.
ABSOLUTE = re.compile(r"(^|[\s'\"=])/(?!dev/null\b)")

#: What every entry's provenance states (docs/corpus.md).
PROVENANCE_KEYS = {
    "program",
    "version",
    "command",
    "file_system",
    "kernel",
    "date",
    "duration_s",
    "placement",
    "trims",
    "trimmed_blocks",
    "joined",
    "device_writes_joined_share",
    "host_events_joined_share",
}


def test_checked_in_corpus_has_provenance_and_fits():
    found = corpus.entries()
    untrimmed = [e for e in found if e.provenance.get("trims") == "none"]
    trimmed = [e for e in found if e.provenance.get("trims") != "none"]
    assert len(untrimmed) >= 14, [e.name for e in untrimmed]
    assert len({e.provenance["program"] for e in untrimmed}) >= 12
    # Trimmed variants: the same program captured with discard or fstrim, beside it.
    assert len(trimmed) >= 4, [e.name for e in trimmed]
    names = {e.name for e in found}
    for e in trimmed:
        assert e.provenance["trims"] == "discard" or e.provenance["trims"].startswith("fstrim:")
        assert e.provenance["trimmed_blocks"] > 0, e.name
        assert e.name.rsplit("-", 1)[0] in names, e.name
    total = 0
    for e in found:
        missing = PROVENANCE_KEYS - set(e.provenance)
        assert not missing, (e.name, missing)
        size = e.trace.stat().st_size
        assert size <= 10_000_000, (e.name, size)
        total += size
        # Nothing of the machine that made it: paths relative to the checkout.
        assert not ABSOLUTE.search(e.provenance["command"]), e.provenance["command"]
        assert e.provenance["device_writes_joined_share"] > 0.9, e.name
    assert total <= 150_000_000


def test_trace_list(cli, tmp_path):
    entry = tmp_path / "corpus" / "toy"
    entry.mkdir(parents=True)
    traces.generate_notified(entry / "trace.zst", pages=2000, records=20_000, placement=True)
    (entry / "provenance.toml").write_text('program = "toy"\nversion = "1"\n')
    (tmp_path / "corpus" / "not-an-entry").mkdir()
    proc = cli("trace", "list", str(tmp_path / "corpus"), "--json", "-")
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    assert row["name"] == "toy" and row["program"] == "toy"
    assert row["writes"] > 0 and row["placement_ids"] == 2
    assert 0.0 < row["ideal_awareness"] <= 1.0 and row["zombie_life_p50_s"] is not None
    assert row["trims"] == 0
    proc = cli("trace", "list", str(tmp_path / "corpus"), "-q")
    assert proc.returncode == 0 and "toy" in proc.stdout and "1 traces" in proc.stdout


def test_trace_list_shows_which_traces_carry_trims(cli, tmp_path):
    """A capture made with --discard or --fstrim-every has trims; `trace list` says how
    many, and `none` for one without."""
    iolog = tmp_path / "t.fio"
    iolog.write_text("fio version 3 iolog\n0 f add\n1 f open\n2 f write 0 8192\n"
                     "3 f trim 0 4096\n4 f close\n")  # fmt: skip
    for name, spec in (("trimmed", iolog), ("plain", None)):
        entry = tmp_path / "corpus" / name
        entry.mkdir(parents=True)
        if spec is None:
            traces.generate_notified(entry / "trace.zst", pages=100, records=100)
        else:
            traces.convert(spec, "fio", entry / "trace.zst", "native")
        (entry / "provenance.toml").write_text(f'program = "{name}"\n')
    proc = cli("trace", "list", str(tmp_path / "corpus"), "--json", "-")
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert rows["trimmed"]["trims"] == 1 and rows["trimmed"]["trimmed_bytes"] == 4096
    assert rows["plain"]["trims"] == 0
    proc = cli("trace", "list", str(tmp_path / "corpus"), "-q")
    line = {ln.split()[1]: ln for ln in proc.stdout.splitlines() if "│" in ln and "trace" not in ln}
    assert "1 (4 KiB)" in line["trimmed"] and "none" in line["plain"]


def test_trace_list_bad_folders(cli, tmp_path):
    proc = cli("trace", "list", str(tmp_path / "absent"))
    assert proc.returncode == 2 and "no corpus folder" in proc.stderr
    bad = tmp_path / "c" / "x"
    bad.mkdir(parents=True)
    traces.generate_notified(bad / "trace.zst", pages=100, records=100)
    (bad / "provenance.toml").write_text("program = \n")
    proc = cli("trace", "list", str(tmp_path / "c"))
    assert proc.returncode == 2 and "provenance.toml" in proc.stderr
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads("program = \n")
