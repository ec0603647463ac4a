"""The VMA journaling reproduction's analysis (`vma-journaling`): each run's metrics (the
GC overhead among them), 002's figures, the claims checked against them, the tables (the
`ablation` table's findings among them) and the notes (`_analyse`)."""

from __future__ import annotations

import math
from typing import Any

from ..report import Report
from ._common import Claim, Reproduction, change
from .vma_journaling_experiments import (
    BENCHES,
    CLAIMS_GRID,
    CMT_BENCH,
    CMT_FRACTION,
    FTLS,
    MACRO,
    MICRO,
    MODES,
    VARIANTS,
    Scale,
    partition_bytes,
    stretch,
    workload,
)
from .vma_journaling_figures import TRAFFIC, _fig_metric, _fig_requests, _fig_traffic, _metric_data

#: The magnitude band: ours within this factor of the paper's figure (or range).
BAND = 2.0
#: VMA's erases count as "similar" to the metadata-only modes' when at most this much
#: above the mean of writeback's and ordered's (002: "similar or even lower").
SIMILAR = 0.25

#: 002 §IV, VMA's cuts against the journal mode (fractions, low to high).
PAPER_ERASE_CUT_MICRO = (0.346, 0.56)
PAPER_ERASE_CUT_MACRO = (0.484, 0.865)
PAPER_TRAFFIC_CUT = (0.424, 0.567)
PAPER_REQUEST_CUT = (0.094, 0.489)
PAPER_GC_CUT_MICRO = (0.131, 0.632)
PAPER_GC_CUT_MACRO = (0.27, 0.806)
#: The largest erase cut per FTL ("up to").
PAPER_MAX_ERASE_CUT = {"fast": 0.64, "superblock": 0.83, "dftl": 0.865}
#: The largest GC overhead cut per FTL ("up to").
PAPER_MAX_GC_CUT = {"fast": 0.632, "superblock": 0.759, "dftl": 0.806}
#: DFTL on untar: writeback's and ordered's erases as a share of journal's.
PAPER_DFTL_UNTAR_SHARE = {"writeback": 0.378, "ordered": 0.40}

#: The flash operations that are garbage collection's (merges for FAST and SuperBlock,
#: translation-page updates for DFTL).
GC_CAUSES = ("gc", "merge_switch", "merge_partial", "merge_full", "translation")


def gc_overhead_s(rep: Report, stretch: float = 1.0) -> float:
    """Flash time of garbage collection: the reads, programs and erases of GC, merges and
    DFTL's translation pages, at the run's latencies divided by `stretch`, s."""
    t = rep.raw["run"]["config"]["timing"]
    flash = rep.raw["flash"]

    def total(section: str) -> int:
        return sum(flash[section].get(c, 0) for c in GC_CAUSES)

    return (
        (
            total("programs_by_cause") * t["program_us"]
            + total("reads_by_cause") * t["read_us"]
            + total("erases_by_cause") * t["erase_us"]
        )
        / 1e6
        / stretch
    )


MIB = 2**20


def _metrics(rep: Report, stretch: float) -> dict[str, Any]:
    d = rep.raw
    fs = d["fs"]
    io = fs["io"]

    def mib(kind: str) -> float:
        return (io[kind]["read_bytes"] + io[kind]["write_bytes"]) / MIB

    cmt = (d["ftl"] or {}).get("cmt") or {}
    return {
        "erases": d["flash"]["erases"],
        "io_requests": fs["requests"],
        "io_mib": fs["bytes"] / MIB,
        "data_mib": mib("data"),
        "metadata_mib": mib("metadata"),
        "journal_mib": mib("journal"),
        "gc_overhead_s": gc_overhead_s(rep, stretch),
        "waf": d["waf"],
        "transactions": fs["transactions"],
        "checkpoints": fs["checkpoints"],
        "vmm_journal_blocks": fs["vmm_journal_blocks"],
        "elapsed_s": d["elapsed_s"] / stretch,
        "cmt_hit_ratio": cmt.get("hit_ratio"),
        "precondition_waf": d["precondition"]["waf"],
    }


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def _range(values: list[float]) -> str:
    return f"{min(values):.1%} to {max(values):.1%}" if values else "n/a"


def _paper_range(r: tuple[float, float]) -> str:
    return f"{r[0]:.1%} to {r[1]:.1%}"


def _in_band(cut: float, lo: float, hi: float) -> bool:
    """A cut (positive = fewer than journal) within `BAND` of the paper's range."""
    return lo / BAND <= cut <= min(1.0, hi * BAND)


def _group_cuts(
    experiment: str, what: str, col: str, micro, macro, cut, list_names: bool
) -> list[Claim]:
    """VMA's cut of `col` against journal on the micro and the macro benchmarks, every
    cell within `BAND` of the paper's range."""
    claims = []
    for group, names, paper in (("micro", MICRO, micro), ("macro", MACRO, macro)):
        cuts = [cut(b, f, col) for b in names for f in FTLS]
        label = f"{group} benchmarks" + (f" ({', '.join(names)})" if list_names else "")
        claims.append(
            Claim(
                experiment,
                f"{what}, VMA below journal, {label}",
                _paper_range(paper),
                _range(cuts),
                f"every cell lower, within {BAND:g}x of the range "
                f"({_pct(paper[0] / BAND)} to {_pct(min(1.0, paper[1] * BAND))})",
                all(_in_band(c, *paper) for c in cuts),
            )
        )
    return claims


def _largest_cuts(experiment: str, what: str, col: str, paper_cuts, cut) -> list[Claim]:
    """The largest cut of `col`, VMA against journal, per FTL, beside 002's "up to"."""
    claims = []
    for ftl in FTLS:
        best = max(cut(b, ftl, col) for b in BENCHES)
        paper = paper_cuts[ftl]
        claims.append(
            Claim(
                experiment,
                f"largest {what} cut, VMA vs journal, {ftl}",
                f"up to {_pct(paper)}",
                _pct(best),
                f"within {BAND:g}x",
                paper / BAND <= best <= min(1.0, paper * BAND),
            )
        )
    return claims


def _analyse(reports: dict[str, Report], scale: str, s: Scale) -> Reproduction:
    import pandas as pd

    # The paper's module, which imports this one: its title.
    from .vma_journaling import TITLE

    rows = []
    for label, rep in reports.items():
        bench, ftl, mode = label.split("/")
        rows.append({"benchmark": bench, "ftl": ftl, "mode": mode, **_metrics(rep, stretch(s))})
    every = pd.DataFrame(rows)
    frame = every[every["ftl"].isin(FTLS)].reset_index(drop=True)

    def value(bench: str, ftl: str, mode: str, col: str) -> float:
        sel = frame[(frame.benchmark == bench) & (frame.ftl == ftl) & (frame["mode"] == mode)]
        return float(sel[col].iloc[0])

    def cut(bench: str, ftl: str, col: str, mode: str = "vma") -> float:
        """How much lower `mode` is than journal (0.4 = 40% lower)."""
        return -change(value(bench, ftl, mode, col), value(bench, ftl, "journal", col))

    for col in ("erases", "io_requests", "io_mib", "gc_overhead_s"):
        frame[f"{col}_vs_journal"] = [
            change(getattr(r, col), value(r.benchmark, r.ftl, "journal", col))
            for r in frame.itertuples()
        ]
    frame["paper_vma_erase_cut"] = [
        (_paper_range(PAPER_ERASE_CUT_MICRO if r.benchmark in MICRO else PAPER_ERASE_CUT_MACRO))
        if r.mode == "vma"
        else ""
        for r in frame.itertuples()
    ]
    frame["paper_share_of_journal_erases"] = [
        f"{PAPER_DFTL_UNTAR_SHARE[r.mode]:.1%}"
        if (r.benchmark, r.ftl) == ("untar", "dftl") and r.mode in PAPER_DFTL_UNTAR_SHARE
        else ""
        for r in frame.itertuples()
    ]
    cells = [(b, f) for b in BENCHES for f in FTLS]
    n = len(cells)
    claims: list[Claim] = []

    # Fig. 4: journal mode erases the most.
    most = [
        (b, f)
        for b, f in cells
        if all(value(b, f, "journal", "erases") >= value(b, f, m, "erases") for m in MODES)
    ]
    missed = [f"{b}/{f}" for b, f in cells if (b, f) not in most]
    claims.append(
        Claim(
            "Fig. 4",
            "journal mode has the most erases (benchmark x FTL cells)",
            "every cell",
            f"{len(most)} of {n}" + (f" (not: {', '.join(missed)})" if missed else ""),
            "every cell",
            len(most) == n,
        )
    )
    # Fig. 4: VMA's cut against journal, micro and macro.
    claims += _group_cuts(
        "Fig. 4", "erases", "erases", PAPER_ERASE_CUT_MICRO, PAPER_ERASE_CUT_MACRO, cut, True
    )
    claims += _largest_cuts("Fig. 4", "erase", "erases", PAPER_MAX_ERASE_CUT, cut)
    # Fig. 4: VMA close to the metadata-only modes.
    close, texts = 0, []
    for b, f in cells:
        meta = (value(b, f, "writeback", "erases") + value(b, f, "ordered", "erases")) / 2
        ratio = value(b, f, "vma", "erases") / meta if meta else math.inf
        ok = ratio <= 1 + SIMILAR
        close += ok
        if not ok:
            texts.append(f"{b}/{f} {ratio:.2f}x")
    ratios = [
        value(b, f, "vma", "erases")
        / ((value(b, f, "writeback", "erases") + value(b, f, "ordered", "erases")) / 2)
        for b, f in cells
    ]
    claims.append(
        Claim(
            "Fig. 4",
            "VMA's erases against the mean of writeback's and ordered's",
            "similar or even lower",
            f"{min(ratios):.2f}x to {max(ratios):.2f}x; {close} of {n} within"
            + (f" (not: {', '.join(texts)})" if texts else ""),
            f"at most {1 + SIMILAR:.2f}x in every cell",
            close == n,
        )
    )
    # §IV-B: DFTL on untar, writeback and ordered as a share of journal.
    for mode, paper in PAPER_DFTL_UNTAR_SHARE.items():
        share = value("untar", "dftl", mode, "erases") / value("untar", "dftl", "journal", "erases")
        claims.append(
            Claim(
                "Fig. 4, DFTL, untar",
                f"{mode}'s erases as a share of journal's",
                _pct(paper),
                _pct(share),
                f"below 100%, within {BAND:g}x",
                share < 1 and paper / BAND <= share <= paper * BAND,
            )
        )
    # Figs. 2-3: I/O traffic and requests, VMA vs journal.
    for metric, col, paper in (
        ("I/O traffic (MiB)", "io_mib", PAPER_TRAFFIC_CUT),
        ("I/O requests", "io_requests", PAPER_REQUEST_CUT),
    ):
        cuts = [cut(b, f, col) for b, f in cells]
        claims.append(
            Claim(
                "Figs. 2-3",
                f"{metric}, VMA below journal",
                _paper_range(paper),
                _range(cuts),
                f"every cell lower, within {BAND:g}x of the range "
                f"({_pct(paper[0] / BAND)} to {_pct(min(1.0, paper[1] * BAND))})",
                all(_in_band(c, *paper) for c in cuts),
            )
        )
    # Figs. 2-3: ordered issues more I/O than writeback.
    more_req = [
        (b, f)
        for b, f in cells
        if value(b, f, "ordered", "io_requests") >= value(b, f, "writeback", "io_requests")
    ]
    more_mib = [
        (b, f)
        for b, f in cells
        if value(b, f, "ordered", "io_mib") >= value(b, f, "writeback", "io_mib")
    ]
    claims.append(
        Claim(
            "Figs. 2-3",
            "ordered issues more I/O than writeback (requests; MiB)",
            "more requests and more traffic",
            f"requests {len(more_req)} of {n}, MiB {len(more_mib)} of {n}",
            "at least as many, in every cell",
            len(more_req) == n and len(more_mib) == n,
        )
    )
    # Fig. 5: GC overhead, VMA vs journal.
    claims += _group_cuts(
        "Fig. 5", "GC overhead", "gc_overhead_s", PAPER_GC_CUT_MICRO, PAPER_GC_CUT_MACRO, cut, False
    )
    claims += _largest_cuts("Fig. 5", "GC overhead", "gc_overhead_s", PAPER_MAX_GC_CUT, cut)
    # §IV-B: SuperBlock and DFTL erase less than FAST.
    for ftl in ("superblock", "dftl"):
        pairs = [(b, m) for b in BENCHES for m in MODES]
        fewer = [
            (b, m) for b, m in pairs if value(b, ftl, m, "erases") < value(b, "fast", m, "erases")
        ]
        ratio = [value(b, ftl, m, "erases") / value(b, "fast", m, "erases") for b, m in pairs]
        claims.append(
            Claim(
                "Fig. 4",
                f"{ftl} erases less than FAST (benchmark x mode cells)",
                "less (consistent with [5], [6])",
                f"{len(fewer)} of {len(pairs)}; {min(ratio):.2f}x to {max(ratio):.2f}x FAST's",
                "fewer in every cell",
                len(fewer) == len(pairs),
            )
        )

    columns = [
        "benchmark",
        "ftl",
        "mode",
        "erases",
        "erases_vs_journal",
        "paper_vma_erase_cut",
        "paper_share_of_journal_erases",
        "io_requests",
        "io_requests_vs_journal",
        "io_mib",
        "io_mib_vs_journal",
        "data_mib",
        "metadata_mib",
        "journal_mib",
        "gc_overhead_s",
        "gc_overhead_s_vs_journal",
        "waf",
        "transactions",
        "checkpoints",
        "vmm_journal_blocks",
        "elapsed_s",
        "cmt_hit_ratio",
    ]
    tables = {"grid": frame[columns]}
    io = (
        frame.groupby(["benchmark", "mode"], sort=False)[
            ["io_requests", "io_mib", "data_mib", "metadata_mib", "journal_mib"]
        ]
        .mean()
        .reset_index()
    )
    tables["io_by_mode"] = io
    varied = every[every["ftl"].str.contains("~", regex=False)]
    if len(varied):
        tables["ablation"] = _ablation_table(frame, varied)
    sweep = every[every["ftl"].str.startswith("dftl@")]
    if len(sweep):
        chosen = frame[
            (frame.benchmark == CMT_BENCH)
            & (frame.ftl == "dftl")
            & frame["mode"].isin(("journal", "vma"))
        ]
        cmt = pd.concat([sweep, chosen])
        cmt = cmt.assign(
            cmt_fraction=[float(f.split("@")[1]) if "@" in f else CMT_FRACTION for f in cmt["ftl"]]
        )
        tables["dftl_cmt"] = (
            cmt[
                [
                    "benchmark",
                    "cmt_fraction",
                    "mode",
                    "erases",
                    "gc_overhead_s",
                    "cmt_hit_ratio",
                    "precondition_waf",
                    "waf",
                ]
            ]
            .sort_values(["cmt_fraction", "mode"])
            .reset_index(drop=True)
        )
    notes = [
        f"{len(reports)} runs at scale `{scale}` (device {s.blocks_per_plane} blocks of 64 x "
        f"2 KiB, sizes / {s.divisor}), 8 VMs; DFTL's CMT holds {CMT_FRACTION:g} of the "
        "logical pages. Workloads, e.g. "
        f"`{workload('untar', 'vma', s, partition_bytes(s))}`.",
        "Erases and GC overhead are of the measured phase (after the preset's fill and "
        "random preconditioning). GC overhead = flash time of the reads, programs and "
        "erases of GC, merges (FAST, SuperBlock) and translation pages (DFTL). I/O = the "
        "file systems' device requests and bytes, reads and writes.",
        f"A range claim holds when every cell's cut lies within {BAND:g}x of the paper's "
        "range (its low end halved, its high end doubled, at most 100%).",
    ]
    if "ablation" in tables:
        rows = tables["ablation"].itertuples()
        notes.append(
            "The `ablation` table runs the whole grid again under each variant: "
            + "; ".join(f"`{name}`, {what}" for name, (what, _) in VARIANTS.items())
            + f". `{CLAIMS_GRID}` is the grid the claims use. Cells where SuperBlock / "
            "DFTL erase less than FAST, and DFTL untar's writeback / ordered erases as a "
            "share of journal's: "
            + "; ".join(
                f"{r.variant} {r.superblock_fewer_than_fast} / {r.dftl_fewer_than_fast}, "
                f"{_pct(r.dftl_untar_writeback_share)} / {_pct(r.dftl_untar_ordered_share)}"
                for r in rows
            )
            + ". A sequential fill leaves the page-mapped FTLs no invalid pages to collect, "
            "so the short benchmarks erase nothing on them; random writes scatter every "
            "logical block, so sequential rewrites (seq_write) cost them more than FAST's "
            "switch merges."
        )
    return Reproduction(
        paper="vma-journaling",
        title=TITLE,
        scale=scale,
        claims=claims,
        tables=tables,
        figures={
            "Erases by journaling mode (Fig. 4)": (
                lambda: _fig_metric(frame, "erases", "erases"),
                lambda: _metric_data(frame, "erases"),
            ),
            "GC overhead by journaling mode (Fig. 5)": (
                lambda: _fig_metric(frame, "gc_overhead_s", "GC overhead (s)"),
                lambda: _metric_data(frame, "gc_overhead_s"),
            ),
            "I/O traffic by kind, mean over the FTLs (Fig. 3)": (
                lambda: _fig_traffic(io),
                lambda: io[["benchmark", "mode", *TRAFFIC]],
            ),
            "I/O requests, mean over the FTLs (Fig. 2)": (
                lambda: _fig_requests(io),
                lambda: io[["benchmark", "mode", "io_requests"]],
            ),
        },
        notes=notes,
    )


def _ablation_table(frame, varied):
    """The FTL and mode findings on the claims' grid (`frame`) and under each of
    `VARIANTS` (`varied`, whose FTL column reads `ftl~variant`)."""
    import pandas as pd

    grids = {CLAIMS_GRID: frame}
    for variant in VARIANTS:
        grid = varied[varied["ftl"].str.endswith(f"~{variant}")]
        grids[variant] = grid.assign(ftl=[f.split("~")[0] for f in grid["ftl"]])
    return pd.DataFrame([_findings(variant, grid) for variant, grid in grids.items()])


def _findings(variant: str, grid) -> dict[str, Any]:
    """One row of the `ablation` table: the claims about FTLs and modes, on `grid`."""
    cell = {(r.benchmark, r.ftl, r.mode): r._asdict() for r in grid.itertuples(index=False)}

    def erases(b: str, f: str, m: str) -> float:
        return float(cell[(b, f, m)]["erases"])

    def cut(b: str, f: str) -> float:
        journal = erases(b, f, "journal")
        return 1 - erases(b, f, "vma") / journal if journal else math.nan

    what = VARIANTS[variant][0] if variant in VARIANTS else "the preset's aging, all timed"
    row: dict[str, Any] = {"variant": variant, "what": what}
    cells = len(BENCHES) * len(MODES)
    for ftl in ("superblock", "dftl"):
        fewer = sum(erases(b, ftl, m) < erases(b, "fast", m) for b in BENCHES for m in MODES)
        row[f"{ftl}_fewer_than_fast"] = f"{fewer} of {cells}"
    row["page_mapped_cells_without_erases"] = sum(
        erases(b, f, m) == 0 for b in BENCHES for f in ("superblock", "dftl") for m in MODES
    )
    journal = erases("untar", "dftl", "journal")
    for mode in PAPER_DFTL_UNTAR_SHARE:
        row[f"dftl_untar_{mode}_share"] = (
            erases("untar", "dftl", mode) / journal if journal else math.nan
        )
    for group, names in (("micro", MICRO), ("macro", MACRO)):
        cuts = [cut(b, f) for b in names for f in FTLS]
        # Cells where journal mode erases nothing have no cut.
        row[f"vma_erase_cut_{group}"] = _range([c for c in cuts if not math.isnan(c)])
    ratios = []
    for b in BENCHES:
        for f in FTLS:
            meta = (erases(b, f, "writeback") + erases(b, f, "ordered")) / 2
            vma = erases(b, f, "vma")
            if meta or vma:
                ratios.append(vma / meta if meta else math.inf)
    row["vma_vs_metadata_max"] = max(ratios) if ratios else math.nan
    pairs = [(b, f) for b in BENCHES for f in FTLS]
    for col in ("io_requests", "io_mib"):
        more = sum(cell[(b, f, "ordered")][col] >= cell[(b, f, "writeback")][col] for b, f in pairs)
        row[f"ordered_{col}_at_least_writeback"] = f"{more} of {len(pairs)}"
    for ftl in FTLS:
        row[f"erases_{ftl}"] = int(sum(erases(b, ftl, m) for b in BENCHES for m in MODES))
    return row
