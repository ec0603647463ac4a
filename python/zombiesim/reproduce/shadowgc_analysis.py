"""The ShadowGC reproduction's analysis (`shadowgc`): each run's metrics, the paper's
figures and the claims checked against them, the tables and the notes (`_analyse`)."""

from __future__ import annotations

from typing import Any

from ..report import STATES, Report
from ._common import Claim, Reproduction, change, not_run
from .shadowgc_experiments import (
    AGED,
    AGED_KINDS,
    AGED_SCHEMES,
    BIG,
    FIG2,
    IOPS,
    MSR,
    READ,
    REFERENCE,
    SCHEMES,
    STAND_INS,
    ZDELAY,
    Scale,
    device,
    stand_in,
)
from .shadowgc_figures import (
    FIG2_SCHEMES,
    WA_SCHEMES,
    _changes,
    _fig_fig2,
    _fig_states,
    _fig_wa_latency,
    _states_data,
    _wa_kinds,
)

#: The paper's WA change against GGC (Fig. 6, averaged over fifteen traces) and GC latency.
PAPER_WA = {"zgc": -0.009, "hgc": -0.064, "dgc": -0.023, "sgc": -0.162}
PAPER_LATENCY_SGC = -0.205

#: The MSR excerpt's claim: experiment, metric, the paper's, what is expected.
MSR_CLAIM = (
    "MSR src1_0 excerpt",
    "shadow pages among relocated pages, every scheme",
    "smallest gain -0.6% (msnfs): few shadows, little to gain",
    "under 1% (GC ran): nothing is buffered twice",
)

#: The magnitude band of the claims: ours within this factor of the paper's figure.
BAND = 2.0
#: The limit the brief sets on refresh work (the paper saw under 1%).
REFRESH_LIMIT = 0.02


def _metrics(rep: Report) -> dict[str, Any]:
    raw = rep.raw
    gc = raw["gc"]
    refresh = raw.get("refresh") or {}
    shares = rep.copied_shares or dict.fromkeys(STATES, 0.0)
    notify = raw.get("notify") or {}
    host_buffer = raw.get("host_buffer") or {}
    return {
        "waf": rep.waf,
        "buffer_mib": raw["run"]["config"]["device"]["buffer"] / 2**20,
        "host_write_pages": raw["host"]["write_pages"],
        "flash_programs": raw["flash"]["programs"],
        "gc_pages_copied": gc["pages_copied"],
        "gc_victims": gc["victims"],
        "gc_latency_s": gc["latency_s"],
        "buffer_reads": gc["buffer_reads"],
        "fast_programs": gc["fast_programs"],
        **{f"share_{k}": v for k, v in shares.items()},
        "shadow_share": 1.0 - shares["live"] if rep.copied_shares else 0.0,
        "twin_discards": (raw.get("buffer") or {}).get("twin_discards", 0),
        "host_buffer_write_hits": host_buffer.get("write_hits"),
        "awareness": notify.get("awareness_mean"),
        "refresh_blocks": refresh.get("blocks", 0),
        "refresh_fast_blocks": refresh.get("fast_blocks", 0),
        "refresh_pages": refresh.get("pages", 0),
        "refresh_share": refresh.get("program_share", 0.0),
        "restarts": refresh.get("restarts", 0),
    }


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1%}"


def _band(ours: float, paper: float, factor: float = BAND) -> bool:
    """Same direction as the paper and a magnitude within `factor` of it."""
    if paper == 0:
        return abs(ours) < 0.01
    if (ours < 0) != (paper < 0) or ours == 0:
        return False
    ratio = abs(ours) / abs(paper)
    return 1 / factor <= ratio <= factor


def _analyse(reports: dict[str, Report], scale: str, s: Scale, msr_missing: str | None = None):
    """The tables, figures and claims; `msr_missing` says why the MSR excerpt did not run
    (its claim is then `not-run`)."""
    import pandas as pd

    # The paper's module, which imports this one: its title and docs section.
    from .shadowgc import DOCS, TITLE

    rows = []
    for label, rep in reports.items():
        workload, scheme = label.split("/", 1)
        rows.append({"workload": workload, "scheme": scheme, **_metrics(rep)})
    frame = pd.DataFrame(rows)

    def value(workload: str, scheme: str, col: str) -> float:
        sel = frame[(frame["workload"] == workload) & (frame["scheme"] == scheme)]
        return float(sel[col].iloc[0])

    # Changes against GGC (greedy) on the same workload and buffers, per run.
    frame["waf_change"] = [
        change(r.waf, value(r.workload, "ggc", "waf")) if pd.notna(r.waf) else None
        for r in frame.itertuples()
    ]
    frame["gc_latency_change"] = [
        change(r.gc_latency_s, value(r.workload, "ggc", "gc_latency_s")) for r in frame.itertuples()
    ]

    kinds = list(STAND_INS)
    weights = {k: STAND_INS[k][1] for k in kinds}
    has_big = (frame["workload"] == f"slow{BIG}").any()
    ratio_mib = int(value("slow", "ggc", "buffer_mib"))

    def weighted(scheme: str, col: str, suffix: str = "", over: Any = None) -> float:
        """`col` of `scheme` over the stand-ins `over` (all of them by default), each
        weighted by its share of the paper's traces."""
        over = kinds if over is None else over
        total = sum(weights[k] for k in over)
        return sum(weights[k] * value(k + suffix, scheme, col) for k in over) / total

    def per_kind(scheme: str, col: str, suffix: str = "") -> str:
        return ", ".join(f"{k} {_pct(value(k + suffix, scheme, col))}" for k in kinds)

    has_aged = (frame["workload"] == f"slow{AGED}").any()

    def weighted_aged(scheme: str, col: str, suffix: str = AGED) -> float:
        """The aging ablation's stand-ins weighted 9:5 (`suffix` "" for the same two
        stand-ins under the default aging)."""
        return weighted(scheme, col, suffix, over=AGED_KINDS)

    def ggc_wafs(suffix: str) -> str:
        return ", ".join(f"{k} {value(k + suffix, 'ggc', 'waf'):.2f}" for k in AGED_KINDS)

    claims: list[Claim] = []
    exp = f"Fig. 6, {ratio_mib} MiB buffers (9:5:1)"
    band = f"lower, within {BAND:g}x of the paper's"
    for scheme in ("zgc", "hgc", "dgc", "sgc"):
        ours = weighted(scheme, "waf_change")
        paper = PAPER_WA[scheme]
        explanation = ""
        if has_aged and not _band(ours, paper) and ours < 0:
            aged = weighted_aged(scheme, "waf_change")
            if _band(aged, paper):
                explanation = (
                    f"the magnitude follows GGC's WAF: aged as 003 §4.1 says (random writes "
                    f"until the device is full, no fill; runs slow{AGED}/* and "
                    f"moderate{AGED}/*) GGC's WAF is {ggc_wafs(AGED)} instead of "
                    f"{ggc_wafs('')} and {scheme.upper()} changes WA by {_pct(aged)} (9:5), "
                    "within the band; see the aging table"
                )
        claims.append(
            Claim(
                exp,
                f"WA, {scheme.upper()} vs GGC",
                _pct(paper),
                f"{_pct(ours)} ({per_kind(scheme, 'waf_change')})",
                band,
                _band(ours, paper),
                explanation=explanation,
            )
        )

    def order(suffix: str) -> tuple[str, bool]:
        """SGC <= min(HGC, DGC) <= GGC on every stand-in; one where GC relocates
        almost no shadows (< 1%) passes when the five are within 1% of GGC."""
        texts, ok = [], True
        for k in kinds:
            w = {sch: value(k + suffix, sch, "waf") for sch in SCHEMES}
            holds = w["sgc"] <= min(w["hgc"], w["dgc"]) <= w["ggc"]
            if holds:
                texts.append(f"{k} yes")
                continue
            shadows = value(k + suffix, "ggc", "shadow_share")
            spread = max(abs(v / w["ggc"] - 1) for v in w.values())
            tie = shadows < 0.01 and spread <= 0.01
            ok = ok and tie
            texts.append(
                f"{k} {'tie' if tie else 'no'} ({shadows:.1%} shadows, all within "
                f"{spread:.1%} of GGC)"
            )
        return ", ".join(texts), ok

    text, ok = order("")
    claims.append(
        Claim(
            f"Fig. 6, {ratio_mib} MiB buffers",
            "WA order SGC <= min(HGC, DGC) <= GGC, every stand-in",
            "SGC lowest (both buffers beat either)",
            text,
            "holds (a tie within 1% where < 1% of relocations are shadows)",
            ok,
        )
    )
    sgc_gain = {k: value(k, "sgc", "waf_change") for k in kinds}
    largest, smallest = min(sgc_gain, key=sgc_gain.get), max(sgc_gain, key=sgc_gain.get)
    claims.append(
        Claim(
            f"Fig. 6, {ratio_mib} MiB buffers",
            "SGC's largest and smallest WA reduction",
            "largest -43.4% (proj1), smallest -0.6% (msnfs)",
            f"largest {largest} {_pct(sgc_gain[largest])}, "
            f"smallest {smallest} {_pct(sgc_gain[smallest])}",
            "largest on slow growth, smallest on linear",
            largest == "slow" and smallest == "linear",
        )
    )
    lat = weighted("sgc", "gc_latency_change")
    claims.append(
        Claim(
            f"Fig. 7, {ratio_mib} MiB buffers (9:5:1)",
            "GC latency, SGC vs GGC",
            _pct(PAPER_LATENCY_SGC),
            f"{_pct(lat)} ({per_kind('sgc', 'gc_latency_change')})",
            band,
            _band(lat, PAPER_LATENCY_SGC),
        )
    )
    lat_h, lat_d = weighted("hgc", "gc_latency_change"), weighted("dgc", "gc_latency_change")
    claims.append(
        Claim(
            f"Fig. 7, {ratio_mib} MiB buffers (9:5:1)",
            "GC latency, HGC and DGC vs GGC",
            "lower (fast programs; buffer reads without ECC)",
            f"HGC {_pct(lat_h)}, DGC {_pct(lat_d)}",
            "both lower",
            lat_h < 0 and lat_d < 0,
        )
    )
    shadow = {k: value(k, "ggc", "shadow_share") for k in kinds}
    by_shadow = sorted(kinds, key=lambda k: shadow[k])
    by_gain = sorted(kinds, key=lambda k: -sgc_gain[k])
    claims.append(
        Claim(
            f"Fig. 8, {ratio_mib} MiB buffers",
            "more shadow pages, larger SGC gain",
            "the more shadow pages (proj1), the larger the improvement",
            ", ".join(f"{k} {shadow[k]:.1%} shadows -> {_pct(sgc_gain[k])}" for k in by_shadow),
            "gain ordered as GGC's shadow share",
            by_shadow == by_gain,
        )
    )
    sep = weighted("greedy+separation", "waf_change")
    sep_lat = weighted("greedy+separation", "gc_latency_change")
    claims.append(
        Claim(
            f"Fig. 2, {ratio_mib} MiB buffers (9:5:1)",
            "WA and GC latency, greedy+separation vs greedy",
            "lower (separation is effective)",
            f"WA {_pct(sep)}, latency {_pct(sep_lat)}",
            "both lower",
            sep < 0 and sep_lat < 0,
        )
    )
    delay = weighted("greedy+delay", "waf_change")
    zdelay = weighted(ZDELAY, "waf_change")
    victims_zombie = ", ".join(f"{k} {value(k, 'ggc', 'share_host_shadow'):.1%}" for k in kinds)
    claims.append(
        Claim(
            f"Fig. 2, {ratio_mib} MiB buffers (9:5:1)",
            "WA, greedy+delay vs greedy",
            "higher (delay degrades)",
            f"{_pct(delay)} ({per_kind('greedy+delay', 'waf_change')}) skipping blocks "
            f"over 50% zombie, which no victim is (host-shadow share of GGC's copies: "
            f"{victims_zombie}); with 000's delay rule (the one ZGC uses, {ZDELAY}) "
            f"{_pct(zdelay)}",
            "higher",
            delay > 0,
        )
    )
    z_vs_sep = change(weighted("zgc", "waf"), weighted("greedy+separation", "waf"))
    claims.append(
        Claim(
            f"Fig. 2, {ratio_mib} MiB buffers (9:5:1)",
            "WA, Zombie (ZGC: separation + delay) vs greedy+separation",
            "higher (delay undoes part of separation's gain)",
            _pct(z_vs_sep),
            "higher",
            z_vs_sep > 0,
        )
    )
    if has_big:
        big = f"{s.big_buffer_mib} MiB buffers"
        big_sgc = weighted("sgc", "waf_change", BIG)
        small_sgc = weighted("sgc", "waf_change")
        claims.append(
            Claim(
                f"Fig. 6, {big} (9:5:1)",
                "WA, SGC vs GGC, against the smaller buffers",
                "128 MB buffers; larger ones tested, not shown (§4.1)",
                f"{_pct(big_sgc)} ({per_kind('sgc', 'waf_change', BIG)}) against "
                f"{_pct(small_sgc)} with {ratio_mib} MiB",
                "lower, and a larger gain with the larger buffers",
                big_sgc < small_sgc < 0,
            )
        )
        text, ok = order(BIG)
        claims.append(
            Claim(
                f"Fig. 6, {big}",
                "WA order SGC <= min(HGC, DGC) <= GGC, every stand-in",
                "SGC lowest (both buffers beat either)",
                text,
                "holds (a tie within 1% where < 1% of relocations are shadows)",
                ok,
            )
        )
    worst = float(frame["refresh_share"].max())
    refreshed = int(frame["refresh_fast_blocks"].sum())
    claims.append(
        Claim(
            "§3.3, every run",
            "refresh programs / flash programs",
            "below 1% (negligible)",
            f"at most {worst:.3%}; {refreshed:,} fast blocks refreshed at the restarts "
            "of the HGC and SGC runs",
            f"below {REFRESH_LIMIT:.0%} in every run, refresh seen",
            worst < REFRESH_LIMIT and refreshed > 0,
        )
    )
    if (frame["workload"] == MSR).any():
        msr = frame[frame["workload"] == MSR]
        most = float(msr["shadow_share"].max())
        fewest = int(msr["gc_pages_copied"].min())
        experiment, metric, paper, expected = MSR_CLAIM
        claims.append(
            Claim(
                experiment,
                metric,
                paper,
                f"at most {most:.2%} of at least {fewest:,} relocations "
                f"(SGC WA {_pct(value(MSR, 'sgc', 'waf_change'))})",
                expected,
                fewest > 0 and most < 0.01,
            )
        )
    elif msr_missing is not None:
        experiment, metric, paper, expected = MSR_CLAIM
        claims.append(not_run(experiment, metric, paper, expected, f"{msr_missing}; see {DOCS}"))

    summary_rows = []
    for suffix in ("", BIG) if has_big else ("",):
        for scheme in (*SCHEMES, *FIG2, REFERENCE):
            if suffix and scheme not in SCHEMES:
                continue
            row = {
                "buffer_mib": s.big_buffer_mib if suffix else ratio_mib,
                "scheme": scheme,
                "paper_waf_change": PAPER_WA.get(scheme),
            }
            for col in ("waf_change", "gc_latency_change"):
                row[f"{col}_weighted"] = weighted(scheme, col, suffix)
                for k in kinds:
                    row[f"{col}_{k}"] = value(k + suffix, scheme, col)
            summary_rows.append(row)
    summary = pd.DataFrame(summary_rows)
    aging = None
    if has_aged:
        aging = pd.DataFrame(
            [
                {
                    "scheme": scheme,
                    "paper_waf_change": PAPER_WA.get(scheme),
                    "default_aging_waf_change": weighted_aged(scheme, "waf_change", ""),
                    "aged_by_random_writes_waf_change": weighted_aged(scheme, "waf_change"),
                    **{
                        f"{col}_{k}": value(k + suffix, scheme, "waf")
                        for k in AGED_KINDS
                        for col, suffix in (("waf_default", ""), ("waf_aged", AGED))
                    },
                }
                for scheme in (*AGED_SCHEMES, ZDELAY)
            ]
        )

    ggc_waf = ", ".join(f"{k} {value(k, 'ggc', 'waf'):.2f}" for k in kinds)
    cb = weighted(REFERENCE, "waf_change")
    notes = [
        f"Scale {scale}: the shadowgc-1tb flash, {_geometry(scale)}; host and device write "
        f"buffers of {ratio_mib} MiB each, the paper's share of the device (128 MB on "
        "1 TB)"
        + (f", and {s.big_buffer_mib} MiB in a second set of runs" if has_big else "")
        + "; LRU, the device's volatile; notifications piggybacked (one extent per "
        "command); counting mode; preconditioned by uniform random writes; a restart (as "
        "after a power failure) half-way through each run.",
        f"Stand-ins (footprint workload, {READ:.0%} reads, {s.drive_writes:g} drive writes, "
        f"iops={IOPS}): slow = `{stand_in('slow', s)}`, moderate = "
        f"`{stand_in('moderate', s)}`, linear = `{stand_in('linear', s)}`. Averages weight "
        "them 9:5:1, as the paper's fifteen traces split (003 §2.2); the MSR excerpt is "
        "left out of the averages.",
        f"GGC's WAF is high on these workloads ({ggc_waf}): at 7% OP greedy leaves the "
        "invalid pages of rarely rewritten blocks where they are and collects the hot "
        "blocks before they have died; cost-benefit, which waits for hot blocks, changes "
        f"WA by {_pct(cb)} here. Every program a scheme saves (DGC's buffered copy that "
        "is never written back, SGC's discarded twin) saves about WAF - 1 GC copies with "
        "it, and z-greedy's delay of blocks rich in host-shadow pages (the hot ones) works "
        "like cost-benefit's wait: that is why ZGC and DGC gain more than in the paper, "
        "and why delay helps separation here instead of hurting it (Fig. 2). "
        + _beyond_twice(weighted, lat),
        "The paper's per-trace WA and its absolute GC latency are in figures whose numbers "
        "are not in the text; only the averages and extremes above are compared.",
    ]
    if has_aged:
        notes.append(
            "Aging ablation (table `aging`; slow and moderate stand-ins weighted 9:5): "
            "the default preconditioning (fill, then uniform random writes until the WAF "
            "settles) leaves about 7% invalid pages in every block of cold data, nearly "
            "all of the over-provisioning, and greedy never collects them, so GGC's WAF is "
            f"{ggc_wafs('')}. Aged as 003 §4.1 says (random writes until the device is "
            "full, no in-order fill: unwritten pages stay free), it is "
            f"{ggc_wafs(AGED)}, and the changes against GGC are ZGC "
            f"{_pct(weighted_aged('zgc', 'waf_change'))}, HGC "
            f"{_pct(weighted_aged('hgc', 'waf_change'))}, DGC "
            f"{_pct(weighted_aged('dgc', 'waf_change'))}, SGC "
            f"{_pct(weighted_aged('sgc', 'waf_change'))} (paper -0.9%, -6.4%, -2.3%, "
            "-16.2%): ZGC and DGC fall into the paper's band, HGC and SGC fall below "
            "it. Neither aging gives the paper's four figures at once; the paper does not "
            "state its GGC WAF or the shadow shares behind Fig. 8. Delay (000's rule, "
            f"{ZDELAY}) changes WA by {_pct(weighted_aged(ZDELAY, 'waf_change', ''))} "
            f"under the default aging and {_pct(weighted_aged(ZDELAY, 'waf_change'))} "
            "aged: on these stand-ins it never degrades greedy as 003 Fig. 2 shows."
        )
    if has_big:
        notes.append(
            f"With {s.big_buffer_mib} MiB buffers (half the rewritten window each) the "
            f"buffers hold most of what is rewritten and every gain grows: SGC "
            f"{_pct(weighted('sgc', 'waf_change', BIG))}, DGC "
            f"{_pct(weighted('dgc', 'waf_change', BIG))}, HGC "
            f"{_pct(weighted('hgc', 'waf_change', BIG))}, ZGC "
            f"{_pct(weighted('zgc', 'waf_change', BIG))} WA against GGC (weighted), GC "
            f"latency SGC {_pct(weighted('sgc', 'gc_latency_change', BIG))}."
        )
    if (frame["workload"] == MSR).any():
        blocks = value(MSR, "ggc", "host_write_pages") / device(scale).geometry["pages_per_block"]
        msr_mib = int(value(MSR, "ggc", "buffer_mib"))
        notes.append(
            f"MSR src1_0 excerpt (remap modulo, {msr_mib} MiB buffers): it writes 37 MiB in "
            "2.2 h with almost no rewrites, so 128 MiB buffers would hold every write and "
            "nothing would reach flash; with small buffers its writes reach the device, but "
            "no page is buffered twice, so there are hardly any shadows. Its WA differences "
            f"are not the schemes' doing: the run writes {blocks:.1f} blocks' worth of "
            "pages, GC works in whole 512-page blocks, and the schemes with a dedicated "
            "stream open a fresh block for it on each plane, so a few victims decide the WA "
            "(GC victims: "
            + ", ".join(f"{sch} {value(MSR, sch, 'gc_victims'):.0f}" for sch in SCHEMES)
            + ")."
        )

    return Reproduction(
        paper="shadowgc",
        title=TITLE,
        scale=scale,
        claims=claims,
        tables={"runs": frame, "summary": summary, **({"aging": aging} if has_aged else {})},
        figures={
            "Fig. 6-7: WA and GC latency against GGC": (
                lambda: _fig_wa_latency(frame, kinds, has_big),
                lambda: _changes(frame, _wa_kinds(kinds, has_big), WA_SCHEMES),
            ),
            "Fig. 8: relocated pages by state (GGC and SGC)": (
                lambda: _fig_states(frame, kinds),
                lambda: _states_data(frame, kinds),
            ),
            "Fig. 2: delay and separation on greedy": (
                lambda: _fig_fig2(frame, kinds),
                lambda: _changes(frame, kinds, FIG2_SCHEMES),
            ),
        },
        notes=notes,
    )


def _beyond_twice(weighted, latency: float) -> str:
    """Which of the averaged figures are more than 2x the paper's, and by how much."""
    ratios = {f"{k.upper()} WA": weighted(k, "waf_change") / v for k, v in PAPER_WA.items()}
    ratios["SGC GC latency"] = latency / PAPER_LATENCY_SGC
    far = [f"{name} {r:.1f}x" for name, r in ratios.items() if r > 2 or r < 0.5]
    if not far:
        return "Every averaged figure is within 2x of the paper's."
    return "Averaged figures more than 2x the paper's: " + ", ".join(far) + "."


def _geometry(scale: str) -> str:
    g = device(scale).geometry
    gib = g["physical_pages"] * g["page_size"] / 2**30
    text = f"{g['planes']} planes x {g['blocks'] // g['planes']} blocks ({gib:,.0f} GiB)"
    text += f", GC watermarks {device(scale).get('gc.low_watermark')}"
    return text
