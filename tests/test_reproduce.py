"""What `zombiesim reproduce` tells its user about every paper: the help lists each paper
and its scales from the modules; every claim that is not met carries a reason with a docs
section that exists, in claims.csv, on the page and on the terminal; an experiment that
cannot run is a `not-run` claim that fails the command (test_shadowgc.py and
test_content.py run them with the sample traces hidden).

`assert_reasons` is shared with the tests that run each reproduction (test_zombie.py,
test_content.py, test_shadowgc.py, test_fs.py, test_fdp.py)."""

from __future__ import annotations

import csv
import html
import re
import unicodedata
from pathlib import Path

import pytest

import zombiesim as zs
from zombiesim import reproduce
from zombiesim.reproduce import _common
from zombiesim.reproduce._common import Claim, Reproduction

ROOT = Path(__file__).resolve().parents[1]
#: A docs section as the reasons name it.
DOCS_LINK = re.compile(r"docs/[\w.-]+\.md#[\w-]+")


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def assert_reasons(rows, *, page: str | None = None, terminal: str | None = None) -> None:
    """Every claim in `rows` (dicts, as `claims.csv` or `claims_frame()` gives them) that is
    not met has a reason naming a docs section, and a met one has none; with `page` (the
    report's HTML) and `terminal` (what the command printed) each reason is shown there."""
    rows = list(rows)
    assert rows, "no claims"
    for row in rows:
        reason = row.get("reason")
        reason = "" if reason is None or reason != reason else str(reason)  # NaN from CSV
        if row["verdict"] == "met":
            assert reason == "", row
            continue
        assert reason.strip(), row
        assert DOCS_LINK.search(reason), row
        if page is not None:
            assert html.escape(reason, quote=False) in page or html.escape(reason) in page, row
        if terminal is not None:
            assert _squeeze(reason) in _squeeze(terminal), row


def read_claims(path: Path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


# -- anchors: as GitHub makes them from a page's headings -------------------------------------


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of `markdown`: the text lowercased, inline
    code and link markup dropped, every character but letters, digits, spaces, hyphens and
    underscores removed, spaces turned to hyphens, `-1`, `-2` ... after a repeat. Headings
    inside fenced code blocks do not count."""
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = re.match(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if fenced or not m:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(2)).lower()
        slug = "".join(
            ch
            for ch in text
            if ch in " -_" or unicodedata.category(ch)[0] in "LN"  # letters and numbers
        ).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def _reason_texts() -> dict[str, list[str]]:
    """Every reason a paper's module can give, by paper: its table's sentences, and the
    generic ones (`give_reasons` on a claim of each verdict with no entry, at the default
    scale and at another)."""
    texts: dict[str, list[str]] = {}
    for paper in reproduce.PAPERS:
        mod = reproduce.module(paper)
        found = []
        for entry in mod.REASONS.values():
            found += [entry] if isinstance(entry, str) else list(entry.values())
        for verdict in ("direction-only", "explained", "missed"):
            claim = Claim("no such experiment", "m", "p", "o", "e", False, verdict)
            for scale in reproduce.scales(paper):
                found += [
                    c.reason
                    for c in _common.give_reasons(
                        [claim],
                        mod.REASONS,
                        scale=scale,
                        docs=mod.DOCS,
                        scales_docs=mod.SCALES_DOCS,
                    )
                ]
        texts[paper] = found
    return texts


def test_every_reason_names_a_docs_section_that_exists():
    # The anchors as GitHub makes them (a check of `anchors` itself).
    page = (
        "# Title\n## `reproduce vma-journaling`\n## Why ours differ from the paper's\n"
        "```sh\n# not a heading\n```\n## Title\n### Reproduction (`zombiesim reproduce x`)\n"
    )
    assert anchors(page) == {
        "title",
        "reproduce-vma-journaling",
        "why-ours-differ-from-the-papers",
        "title-1",
        "reproduction-zombiesim-reproduce-x",
    }
    texts = _reason_texts()
    assert set(texts) == set(reproduce.PAPERS)
    checked = set()
    for paper, reasons in texts.items():
        mod = reproduce.module(paper)
        links = [mod.DOCS, mod.SCALES_DOCS]
        for reason in reasons:
            assert reason.strip(), paper
            found = DOCS_LINK.findall(reason)
            assert found, (paper, reason)
            links += found
        for link in links:
            page, _, anchor = link.partition("#")
            path = ROOT / page
            assert path.is_file(), (paper, link)
            assert anchor in anchors(path.read_text()), (paper, link)
            checked.add(link)
    # Every paper's docs, not one shared page.
    assert len({link.partition("#")[0] for link in checked}) >= len(reproduce.PAPERS)


def test_a_reason_is_never_empty_and_a_table_entry_wins():
    reasons = {
        ("Fig. 6, * MiB buffers", "WA, X"): {
            "missed": "ours {ours} against {paper}: see docs/a.md#b",
            "missed@full": "at full: see docs/a.md#c",
        },
        ("E", "M"): "any verdict: see docs/a.md#d",
    }

    def why(experiment, metric, verdict, scale="small", explanation=""):
        claim = Claim(experiment, metric, "-1%", "+2%", "lower", False, verdict, explanation)
        kw = {"scale": scale, "docs": "docs/p.md#q", "scales_docs": "docs/p.md#s"}
        return _common.give_reasons([claim], reasons, **kw)[0].reason

    assert (
        why("Fig. 6, 8 MiB buffers", "WA, X", "missed") == "ours +2% against -1%: see docs/a.md#b"
    )
    assert why("Fig. 6, 128 MiB buffers", "WA, X", "missed", "full") == "at full: see docs/a.md#c"
    assert why("E", "M", "direction-only") == "any verdict: see docs/a.md#d"
    # No sentence for this verdict: the generic one, which names the scale at another scale.
    assert why("Fig. 6, 8 MiB buffers", "WA, X", "direction-only").endswith("see docs/p.md#q")
    tiny = why("Fig. 6, 8 MiB buffers", "WA, X", "direction-only", "tiny")
    assert "`tiny`" in tiny and tiny.endswith("see docs/p.md#s")
    assert "explanation" in why("other", "m", "explained", explanation="ablation/x")
    # A met claim has no reason, and a claim's own reason (a not-run one's) is kept.
    none = {"scale": "small", "docs": "", "scales_docs": ""}
    met = Claim("E", "M", "p", "o", "e", True)
    assert _common.give_reasons([met], reasons, **none)[0].reason == ""
    gone = reproduce.not_run("E", "M", "p", "e", "the trace is missing: see docs/x.md#y")
    kept = _common.give_reasons([gone], reasons, **none)[0].reason
    assert kept == "the trace is missing: see docs/x.md#y"


def test_not_run_is_a_verdict_that_fails_the_reproduction():
    assert "not-run" in reproduce.VERDICTS
    gone = reproduce.not_run("E", "M", "p", "e", "missing: see docs/x.md#y")
    assert gone.verdict == "not-run" and not gone.holds and gone.ours == "not run"
    # An explanation does not turn it into `explained`.
    assert Claim("E", "M", "p", "o", "e", False, "not-run", "ablation/x").verdict == "not-run"
    met = Claim("E", "M", "p", "o", "e", True)
    rep = Reproduction(paper="nonesuch", title="t", scale="small", claims=[met, gone])
    assert not rep.all_hold and rep.not_run == [gone]
    assert rep.tally()["not-run"] == 1
    assert rep.summary().endswith(", 1 not run")
    assert "not run" not in Reproduction("nonesuch", "t", "small", [met]).summary()


# -- the help ---------------------------------------------------------------------------------


def test_help_describes_every_paper_and_its_scales(cli):
    proc = cli("reproduce", "--help")
    assert proc.returncode == 0, proc.stderr
    for paper in reproduce.PAPERS:  # an entry of the papers' list: the name, then its text
        assert re.search(rf"^  {re.escape(paper)} +\S", proc.stdout, re.M), paper
    text = _squeeze(proc.stdout)
    for paper in reproduce.PAPERS:
        mod = reproduce.module(paper)
        # What it reproduces, its scales, its default scale's time and verdicts: one entry.
        assert _squeeze(reproduce.describe(paper)) in text, paper
        entry = _squeeze(reproduce.describe(paper))
        assert mod.TITLE in entry and _squeeze(mod.DESCRIPTION) in entry
        assert f"Scales: {', '.join(reproduce.scales(paper))}." in entry
        assert mod.DEFAULT_TIME in entry
        assert mod.DEFAULT_VERDICTS and all(
            f"{n} {v}" in entry for v, n in mod.DEFAULT_VERDICTS.items()
        )
        assert set(mod.DEFAULT_VERDICTS) <= set(reproduce.VERDICTS)
    # --scale names every paper that has a `tiny` scale (fdp among them).
    start = text.index("--scale", text.index("--help"))  # the option's help, not the usage
    scale_help = text[start : text.index("--out", start)]
    tiny = [p for p in reproduce.PAPERS if "tiny" in reproduce.scales(p)]
    assert "fdp" in tiny
    for paper in tiny:
        assert paper in scale_help, (paper, scale_help)
    assert "not-run" in text and "reason" in text


# -- a reproduction run through the command line ----------------------------------------------


def test_reasons_reach_claims_csv_the_page_and_the_terminal(cli, tmp_path):
    """ba-gc at its tiny scale (seconds): each claim that is not met has its reason in the
    printed table, claims.csv and report.html."""
    out = tmp_path / "ba-gc"
    args = ("reproduce", "ba-gc", "--scale", "tiny", "--jobs", "2", "--quiet", "--out", str(out))
    proc = cli(*args, columns="4000")  # wide: the table folds no reason
    claims = read_claims(out / "claims.csv")
    assert "reason" in claims[0]
    assert proc.returncode == (1 if any(c["holds"] != "True" for c in claims) else 0)
    assert any(c["verdict"] != "met" for c in claims), "nothing to check at this scale"
    assert_reasons(claims, page=(out / "report.html").read_text(), terminal=proc.stdout)


@pytest.mark.parametrize("paper", list(reproduce.PAPERS))
def test_every_paper_names_its_default_scale_figures(paper):
    mod = reproduce.module(paper)
    assert reproduce.DEFAULT_SCALE in reproduce.scales(paper)
    assert re.fullmatch(r"(about )?\d+ (s|min)( \d+ s)?", mod.DEFAULT_TIME), mod.DEFAULT_TIME
    assert sum(mod.DEFAULT_VERDICTS.values()) > 0
    assert zs.reproduce.describe(paper).startswith(mod.TITLE)
