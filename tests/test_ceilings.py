"""The ceilings bound what they should, on every capture of the corpus (docs/lifetimes.md,
"The ceilings"): the victim oracle is at or below every victim scheme a study runs, the
placement oracle at or below every placement, because each runs them in its envelope
and adds what knowing the future buys. One whole-corpus study, every default scheme and
MiDAS: minutes, not seconds."""

from __future__ import annotations

import pytest

from zombiesim import corpus, studies


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    traces = studies.resolve_traces([])
    schemes = [*studies.DEFAULT_SCHEMES, "midas"]
    out = tmp_path_factory.mktemp("ceilings")
    return studies.study(traces, out=out, schemes=schemes)


def test_the_study_covers_the_whole_corpus(rows):
    names = {r["trace"] for r in rows}
    assert names == {e.name for e in corpus.entries()}
    assert all(r["status"] == "ok" for r in rows), [r for r in rows if r["status"] != "ok"]


def test_no_scheme_is_below_its_ceiling_on_any_capture(rows):
    assert studies.below_ceilings(rows) == []
    # The check reads what it should: every bounded scheme met its ceiling on every trace.
    checked = {
        (r["trace"], r["scheme"])
        for r in rows
        for c, bounded in studies.BOUNDED.items()
        if r["scheme"] in bounded
    }
    assert len(checked) == len({r["trace"] for r in rows}) * len(
        set().union(*studies.BOUNDED.values())
    )


def test_below_ceilings_finds_a_scheme_under_its_ceiling():
    rows = [
        {"trace": "t", "scheme": "oracle", "status": "ok", "waf": 1.5},
        {"trace": "t", "scheme": "zgc-cb", "status": "ok", "waf": 1.4},
        {"trace": "t", "scheme": "sepbit", "status": "ok", "waf": 1.2},
        {"trace": "t", "scheme": "placement-oracle", "status": "ok", "waf": 1.3},
        {"trace": "t", "scheme": "midas", "status": "ok", "waf": 1.35},
    ]
    below = studies.below_ceilings(rows)
    assert [(b["scheme"], b["ceiling"]) for b in below] == [
        ("zgc-cb", "oracle"),
        ("sepbit", "placement-oracle"),
    ]
