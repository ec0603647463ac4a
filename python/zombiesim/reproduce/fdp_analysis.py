"""The FDP reproduction's analysis (`fdp`): the papers' figures, the model of the
small-object cache's WAF, the ablations that explain a claim (`op_ablation`, `pi_reserve`,
`isolation_op`), the claims, tables and notes (`_analyse`)."""

from __future__ import annotations

from .._core import analytic_wa
from ..config import Config
from ..report import Report
from ._common import Claim, Reproduction, banded, change, pct, within
from .fdp_experiments import (
    ABLATION_OP,
    ISOLATION_SWEEP,
    JOINED_DEVICES,
    JOINED_SCHEMES,
    PAPER_ISOLATION,
    PI_RESERVES,
    SCALE_SETTINGS,
    SENSITIVITY,
    SOC_SHARES,
    SOC_WRITES,
    STREAMS_RESERVE,
)
from .fdp_figures import _fig_handles, _fig_joined, _fig_soc, _handles_frame, _soc_frame

#: Allison et al. (EuroSys'25): KV-cache trace, SOC 4%, device WAF without / with FDP.
PAPER_UTIL = {0.5: (1.3, 1.03), 1.0: (3.5, 1.03)}
#: §6.5, Fig. 9: with the SOC at 64% FDP's WAF is 2.5; without FDP "above 3" at every size.
PAPER_SOC64_FDP = 2.5
PAPER_NOFDP_FLOOR = 3.0

#: WARP Fig. 17c: per-handle WAF of the random and overwrite handles under PI.
PAPER_PI_SMALL_HANDLES = 3.8


def soc_model(rep: Report, soc: float, util: float) -> float:
    """The paper's model of the SOC's WAF (§4.2): FIFO at `alpha = 1 + S_OP / S_SOC`,
    the spare pages those the device leaves after its free-RU reserve and open RUs."""
    d = rep.raw["device"]
    logical = d["logical_pages"]
    spare = d["physical_pages"] - logical - d["held_back_pages_mean"]
    unused = (1.0 - util) * logical
    s_soc = soc * util * logical
    return analytic_wa("fifo", 1.0 + (spare + unused) / s_soc, d["pages_per_block"])


def soc_waf(rep: Report) -> float:
    """The small-object cache's WAF as the paper's model counts it: its host pages plus
    every GC copy over its host pages (the model takes the large-object log to cost
    nothing; ours copies some of it, which this then charges to the SOC, docs/fdp.md)."""
    f = rep.raw["fdp"]
    soc = f["handles"][0]["host_pages"]
    copies = rep.raw["gc"]["pages_copied"]
    return (soc + copies) / soc


def _op_ablation(waf: dict[str, float], nofdp05: float, nofdp1: float, fdp1: float):
    """The utilisation cells at each over-provisioning of the ablation, and the
    explanation it gives the claims without FDP when the paper's figures fall inside
    the range it spans (empty otherwise: then it explains nothing)."""
    import pandas as pd

    base_op = Config.preset("fdp").get("ftl.over_provisioning")
    rows = [{"op": base_op, "nofdp_50": nofdp05, "nofdp_100": nofdp1, "fdp_100": fdp1}]
    for op in ABLATION_OP:
        rows.append(
            {
                "op": op,
                "nofdp_50": waf[f"kvop/{op:g}/0.5/nofdp"],
                "nofdp_100": waf[f"kvop/{op:g}/1/nofdp"],
                "fdp_100": waf[f"kvop/{op:g}/1/fdp"],
            }
        )
    table = pd.DataFrame(rows)
    lo, hi = table.nofdp_100.min(), table.nofdp_100.max()
    paper = PAPER_UTIL[1.0][0]
    if not lo <= paper <= hi:
        return table, ""
    inside = table[table.nofdp_100.between(paper / 2, paper * 2)]
    first = inside.iloc[0]
    return table, (
        'the paper does not state its drive\'s OP ("typically 7-20%"); the ablation '
        "`op_ablation` runs the cells at OP 10%, 14% and 20%: without FDP, 100% utilisation "
        f"falls from {hi:.2f} to {lo:.2f}, bracketing the paper's {paper}; at OP "
        f"{first.op:.0%} it is {first.nofdp_100:.2f} (50%: {first.nofdp_50:.3f}), and FDP "
        f"stays at {table.fdp_100.max():.3f} or below at every OP"
    )


def _pi_reserve(waf: dict[str, float], scale: str):
    """PI against II at each GC reserve PI is given (II keeps `STREAMS_RESERVE`), and per
    OP the explanation it gives the PI-vs-II claim when the paper's change falls inside
    the range the reserves span (none otherwise)."""
    import pandas as pd

    rows = []
    notes: dict[float, str] = {}
    for op, (ii_p, pi_p) in PAPER_ISOLATION.items():
        ii = waf[f"streams/{op:g}/initial"]
        cells = [(STREAMS_RESERVE, waf[f"streams/{op:g}/persistent"])] + [
            (r, waf[f"pireserve/{op:g}/{r}"]) for r in PI_RESERVES[scale]
        ]
        for reserve, pi in cells:
            rows.append(
                {
                    "op": op,
                    "pi_reserve_rus": reserve,
                    "ii": ii,
                    "pi": pi,
                    "pi_vs_ii": change(pi, ii),
                }
            )
        changes = [change(pi, ii) for _, pi in cells]
        paper = change(pi_p, ii_p)
        if min(changes) <= paper <= max(changes):
            notes[op] = (
                "WARP does not state how many free RUs its PI keeps back for the three "
                "handles' GC streams; the ablation `pi_reserve` gives PI "
                f"{', '.join(str(r) for r, _ in cells)} (II keeps {STREAMS_RESERVE}): PI vs "
                f"II goes {', '.join(f'{c:+.1%}' for c in changes)}, bracketing the paper's "
                f"{paper:+.1%}: at this OP the reserve alone decides the sign"
            )
    return pd.DataFrame(rows), notes


def _isolation_op(waf: dict[str, float], scale: str):
    """II and PI over the OPs between WARP's two, with II also as WARP's emulator runs it
    (`FEMU_II`), and the explanation it gives the PI-vs-II claim at OP 10% when, at the OP
    whose II comes closest to WARP's II there (the same GC pressure), PI vs II is within
    2x of the paper's: with our II first, else with FEMU's (none otherwise)."""
    import pandas as pd

    ii_p, pi_p = PAPER_ISOLATION[0.10]
    paper = change(pi_p, ii_p)
    rows = []
    for op in sorted({*ISOLATION_SWEEP[scale], *PAPER_ISOLATION}):
        key = "streams" if op in PAPER_ISOLATION else "opsweep"
        ii, pi = waf[f"{key}/{op:g}/initial"], waf[f"{key}/{op:g}/persistent"]
        femu = waf[f"femuii/{op:g}"]
        rows.append(
            {
                "op": op,
                "ii": ii,
                "pi": pi,
                "pi_vs_ii": change(pi, ii),
                "ii_femu": femu,
                "pi_vs_ii_femu": change(pi, femu),
            }
        )
    table = pd.DataFrame(rows)
    table["ii_vs_warp_10"] = table.ii / ii_p - 1
    table["ii_femu_vs_warp_10"] = table.ii_femu / ii_p - 1
    at_10 = table[table.op == 0.10].iloc[0]
    lead = (
        f"at a nominal 10% our device has little GC to do (II {at_10.ii:.3f}, PI "
        f"{at_10.pi:.3f}; WARP's II {ii_p}); the ablation `isolation_op` runs II and PI at "
        f"OPs between WARP's two, and at "
    )
    for ii_col, gap_col, vs_col, what in (
        ("ii", "ii_vs_warp_10", "pi_vs_ii", "our II"),
        (
            "ii_femu",
            "ii_femu_vs_warp_10",
            "pi_vs_ii_femu",
            "II as WARP's emulator (FEMU's FDP FTL) runs it, its GC copies in the last "
            "handle's open RU beside that handle's host writes",
        ),
    ):
        best = table.loc[table[gap_col].abs().idxmin()]
        if best.op != 0.10 and 0.5 <= best[vs_col] / paper <= 2.0:
            return table, (
                f"{lead}{best.op:.1%}, where {what} ({best[ii_col]:.3f}) is closest to "
                f"WARP's II at 10%, PI vs II is {best[vs_col]:+.1%} (the paper's {paper:+.1%})"
            )
    return table, ""


def _waf_text(x: float) -> str:
    return f"{x:.3f}"


def _analyse(reports: dict[str, Report], scale: str) -> Reproduction:
    import pandas as pd

    # The paper's module, which imports this one: its title.
    from .fdp import TITLE

    waf = {k: r.raw["waf"] for k, r in reports.items()}
    claims: list[Claim] = []

    def kv(util: float, soc: float, tag: str) -> float:
        return waf[f"kv/{util:g}/{soc:g}/{tag}"]

    # CacheLib, Figs. 5-6: utilisation.
    exp = "CacheLib, KV cache, SOC 4% (Figs. 5-6)"
    nofdp1, fdp1 = kv(1.0, 0.04, "nofdp"), kv(1.0, 0.04, "fdp")
    nofdp05, fdp05 = kv(0.5, 0.04, "nofdp"), kv(0.5, 0.04, "fdp")
    paper_cut = change(PAPER_UTIL[1.0][1], PAPER_UTIL[1.0][0])
    op_table, op_note = _op_ablation(waf, nofdp05, nofdp1, fdp1)
    claims.append(
        banded(
            exp,
            "WAF with FDP vs without, 100% utilisation",
            paper_cut,
            change(fdp1, nofdp1),
            paper_text=f"{PAPER_UTIL[1.0][0]} -> {PAPER_UTIL[1.0][1]} ({paper_cut:+.1%})",
            ours_text=f"{nofdp1:.3f} -> {fdp1:.3f} ({change(fdp1, nofdp1):+.1%})",
        )
    )
    claims.append(
        within(
            exp,
            "WAF without FDP, 100% utilisation",
            f"{PAPER_UTIL[1.0][0]}",
            nofdp1,
            PAPER_UTIL[1.0][0] / 2,
            PAPER_UTIL[1.0][0] * 2,
            fmt=_waf_text,
            explanation=op_note,
        )
    )
    # Near 1 a factor on the WAF says nothing: band the amplification, WAF - 1.
    amp = PAPER_UTIL[1.0][1] - 1
    claims.append(
        within(
            exp,
            "amplification with FDP (WAF - 1), 100% utilisation",
            f"{amp:.2f} (WAF {PAPER_UTIL[1.0][1]})",
            fdp1 - 1,
            0.0,
            amp * 2,
            fmt=_waf_text,
        )
    )
    paper_rise = change(PAPER_UTIL[1.0][0], PAPER_UTIL[0.5][0])
    claims.append(
        banded(
            exp,
            "WAF without FDP, 50% -> 100% utilisation",
            paper_rise,
            change(nofdp1, nofdp05),
            paper_text=f"{PAPER_UTIL[0.5][0]} -> {PAPER_UTIL[1.0][0]} ({paper_rise:+.0%})",
            ours_text=f"{nofdp05:.3f} -> {nofdp1:.3f} ({change(nofdp1, nofdp05):+.0%})",
            explanation=op_note,
        )
    )
    claims.append(
        within(
            exp,
            "WAF with FDP stays flat from 50% to 100% utilisation",
            f"{PAPER_UTIL[0.5][1]} -> {PAPER_UTIL[1.0][1]}",
            fdp1 - fdp05,
            -0.05,
            0.05,
            fmt=lambda x: f"{x:+.3f}",
            ours_text=f"{fdp05:.3f} -> {fdp1:.3f}",
        )
    )
    # Fig. 9: SOC size.
    exp9 = "CacheLib, KV cache, 100% utilisation, SOC 4-64% (Fig. 9)"
    fdp64 = kv(1.0, 0.64, "fdp")
    claims.append(
        within(
            exp9,
            "WAF with FDP, SOC 64%",
            f"{PAPER_SOC64_FDP}",
            fdp64,
            PAPER_SOC64_FDP / 2,
            PAPER_SOC64_FDP * 2,
            fmt=_waf_text,
        )
    )
    below = all(kv(1.0, s, "fdp") < kv(1.0, s, "nofdp") for s in SOC_SHARES)
    claims.append(
        Claim(
            exp9,
            "FDP below no FDP at every SOC size",
            "yes (no FDP stays above 3)",
            ", ".join(
                f"{s:.0%} {kv(1.0, s, 'fdp'):.2f}/{kv(1.0, s, 'nofdp'):.2f}" for s in SOC_SHARES
            ),
            "lower at each",
            below,
        )
    )
    floor = min(kv(1.0, s, "nofdp") for s in SOC_SHARES)
    claims.append(
        within(
            exp9,
            "lowest WAF without FDP over the SOC sizes",
            f"above {PAPER_NOFDP_FLOOR:g}",
            floor,
            PAPER_NOFDP_FLOOR / 2,
            float("inf"),
            fmt=_waf_text,
        )
    )
    # App. A: the model of the SOC's WAF.
    model_rows = []
    for soc in SOC_SHARES:
        rep = reports[f"kv/1/{soc:g}/fdp"]
        alone = reports[f"socalone/{soc:g}"]
        model_rows.append(
            {
                "soc": soc,
                "ours": soc_waf(rep),
                "model": soc_model(rep, soc, 1.0),
                "soc_alone": soc_waf(alone),
                "model_alone": soc_model(alone, soc, 1.0),
            }
        )
    models = pd.DataFrame(model_rows)
    worst = max(abs(change(r.ours, r.model)) for r in models.itertuples())
    worst_alone = max(abs(change(r.soc_alone, r.model_alone)) for r in models.itertuples())
    soc_note = (
        f"the model takes the large-object log to cost nothing; the ablation `soc_alone` "
        f"(only bucket rewrites, the log's space written once) meets it within "
        f"{worst_alone:.1%} at every SOC size, so the difference is what GC copies of the "
        "log beside the SOC cost (WARP's 'Save Sequential'), charged to the SOC here"
        if worst_alone <= 0.16
        else ""
    )
    claims.append(
        within(
            "CacheLib, the SOC's WAF against the paper's model (§4.2, App. A)",
            "largest relative difference, SOC 4-64%",
            "model within 16% of experiment",
            worst,
            0.0,
            0.32,
            fmt=lambda x: f"{x:.1%}",
            explanation=soc_note,
        )
    )
    # WARP: II against PI.
    expw = "WARP, three streams 80/20, 5x written (Fig. 18)"
    reserve_table, reserve_notes = _pi_reserve(waf, scale)
    iso_table, iso_note = _isolation_op(waf, scale) if ISOLATION_SWEEP[scale] else (None, "")
    if iso_note and 0.10 not in reserve_notes:
        reserve_notes[0.10] = iso_note
    for op, (ii_p, pi_p) in PAPER_ISOLATION.items():
        ii = waf[f"streams/{op:g}/initial"]
        pi = waf[f"streams/{op:g}/persistent"]
        claims.append(
            banded(
                expw,
                f"PI vs II, OP {op:.0%}",
                change(pi_p, ii_p),
                change(pi, ii),
                paper_text=f"II {ii_p} PI {pi_p} ({change(pi_p, ii_p):+.1%})",
                ours_text=f"II {ii:.3f} PI {pi:.3f} ({change(pi, ii):+.1%})",
                explanation=reserve_notes.get(op, ""),
            )
        )
    pi_rep = reports["streams/0.05/persistent"].raw["fdp"]["handles"]
    small = max(h["waf"] or 0.0 for h in pi_rep[1:3])
    claims.append(
        within(
            "WARP, per-handle WAF under PI, OP 5% (Fig. 17c)",
            "largest of the random and overwrite handles",
            f"rises to {PAPER_PI_SMALL_HANDLES}",
            small,
            PAPER_PI_SMALL_HANDLES / 2,
            PAPER_PI_SMALL_HANDLES * 2,
            fmt=lambda x: f"{x:.2f}",
        )
    )
    # Uniform random: FDP with one handle is the page-mapped FTL with RU-sized units.
    u_fdp, u_page = waf["uniform/fdp"], waf["uniform/page"]
    d = reports["uniform/fdp"].raw["device"]
    alpha = d["physical_pages"] / (d["logical_pages"] + d["held_back_pages_mean"])
    ru_pages = reports["uniform/fdp"].raw["fdp"]["ru_bytes"] // d["page_size"]
    greedy = analytic_wa("greedy", alpha, int(ru_pages))
    claims.append(
        within(
            "Uniform random writes, one handle",
            "WAF against the greedy model at the RU's size (effective OP)",
            "WARP: 2.0 and 3.5 on two drives of unstated OP",
            change(u_fdp, greedy),
            -0.15,
            0.15,
            ours_text=f"{u_fdp:.3f} vs model {greedy:.3f} ({change(u_fdp, greedy):+.1%}); "
            f"page-mapped {u_page:.3f}",
        )
    )

    rows = []
    for label, rep in reports.items():
        parts = label.split("/")
        f = rep.raw.get("fdp") or {}
        rows.append(
            {
                "experiment": parts[0],
                "cell": "/".join(parts[1:]),
                "waf": rep.raw["waf"],
                "gc_pages_copied": rep.raw["gc"]["pages_copied"],
                "media_relocated": (f.get("events") or {}).get("media_relocated"),
                "handle_wafs": ", ".join(
                    f"{h['placement_id']}:{h['waf']:.2f}"
                    for h in f.get("handles", [])
                    if h["waf"] is not None
                ),
            }
        )
    frame = pd.DataFrame(rows)
    sens = pd.DataFrame(
        [
            {
                "soc_writes": sw,
                "waf_fdp": waf[f"kvsens/{sw:g}/fdp"],
                "waf_nofdp": waf[f"kvsens/{sw:g}/nofdp"],
            }
            for sw in SENSITIVITY
        ]
        + [{"soc_writes": SOC_WRITES, "waf_fdp": fdp1, "waf_nofdp": nofdp1}]
    ).sort_values("soc_writes")
    joined = _joined_frame(reports)
    notes = [
        f"{len(reports)} runs at scale `{scale}` on the `fdp` preset "
        f"({SCALE_SETTINGS[scale].blocks_per_plane} blocks per plane).",
        f"The KV-cache stand-in writes `soc_writes` = {SOC_WRITES} of its pages to the "
        "small-object cache, fitted to the paper's WAF with FDP through its model of the SOC "
        "(the paper gives no object sizes); see the sensitivity table.",
        "WARP picks a handle first and then a victim within it, and reclaims lazily in the "
        "background (§4.3); here GC picks over the whole reclaim group. With the same GC "
        f"reserve for both isolations ({STREAMS_RESERVE} free RUs) PI stays ahead of II at "
        "5% OP; the reserve PI keeps for its handles' GC streams decides the sign there "
        "(`pi_reserve`, docs/fdp.md).",
        "Two tenants (two KV caches, each on half of the device and of the writes, on "
        "identifiers 0-1 and 2-3): WAF "
        f"{waf['tenants/2/nofdp']:.3f} without FDP, {waf['tenants/2/fdp']:.3f} with it "
        "(runs table; not banded: no figure of the paper's is checked against it).",
        _joined_note(joined),
    ]
    return Reproduction(
        paper="fdp",
        title=TITLE,
        scale=scale,
        claims=claims,
        tables={
            "runs": frame,
            "soc_model": models,
            "sensitivity": sens,
            "op_ablation": op_table,
            "pi_reserve": reserve_table,
            **({"isolation_op": iso_table} if iso_table is not None else {}),
            "joined": joined,
        },
        figures={
            "WAF with and without FDP against the SOC's size (Fig. 9)": (
                lambda: _fig_soc(waf),
                lambda: _soc_frame(waf),
            ),
            "WAF per handle, three streams, OP 5% (Figs. 16-17)": (
                lambda: _fig_handles(reports),
                lambda: _handles_frame(reports),
            ),
            "Placement joined with zombie awareness: WAF per scheme (ours)": (
                lambda: _fig_joined(joined),
                lambda: joined,
            ),
        },
        notes=notes,
    )


def _joined_frame(reports):
    """WAF of each scheme on each device, against greedy on the same device and as a
    share of the oracle's gain over greedy there."""
    import pandas as pd

    rows = []
    for dev in JOINED_DEVICES:
        base = reports[f"joined/{dev}/gc-gd"].raw["waf"]
        ceiling = reports[f"joined/{dev}/oracle"].raw["waf"]
        for scheme in JOINED_SCHEMES:
            r = reports[f"joined/{dev}/{scheme}"].raw
            gain = base - ceiling
            rows.append(
                {
                    "device": dev,
                    "scheme": scheme,
                    "waf": r["waf"],
                    "vs_greedy": r["waf"] / base - 1.0,
                    "share_of_oracle_gain": (base - r["waf"]) / gain if gain > 0 else None,
                    "gc_pages_copied": r["gc"]["pages_copied"],
                }
            )
    return pd.DataFrame(rows)


def _joined_note(joined) -> str:
    def waf(dev: str, scheme: str) -> float:
        sel = joined[(joined.device == dev) & (joined.scheme == scheme)]
        return float(sel.waf.iloc[0])

    g0, gp = waf("nofdp", "gc-gd"), waf("persistent", "gc-gd")
    zp, zgp = waf("persistent", "zgc-gd-nz"), waf("persistent", "zgc-gd")
    z0, gi = waf("nofdp", "zgc-gd-nz"), waf("initial", "gc-gd")
    return (
        "Joined (ours): perfect hot/cold placement alone takes greedy from "
        f"{g0:.3f} to {gp:.3f} under PI ({pct(change(gp, g0))}) and to {gi:.3f} under II "
        f"({pct(change(gi, g0))}: II's shared GC pool mixes what placement separated); on the PI "
        f"device z-greedy still cuts WAF to {zp:.3f} ({pct(change(zp, gp))}) and the zombie block "
        f"to {zgp:.3f} ({pct(change(zgp, gp))}), against z-greedy's {pct(change(z0, g0))} without "
        "placement: "
        + (
            "notification keeps paying once placement separates lifetimes (a zombie dies at "
            "its write-back whatever handle holds it)."
            if zp < gp
            else "here notification does not pay once placement separates lifetimes."
        )
    )
