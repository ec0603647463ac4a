"""Zombie Chasing (seed 000, §5): the micro-benchmark sweeps and the TPC-C runs.

Experiments, all on the `zombie-chasing` preset (4 banks, DAC, per-bank GC, Linux page
cache with 16 threads, piggybacked notifications):

- locality sweep: x in {3, 6, 10, 20}, page cache 4 GB and 2 GB, read:write 0.5
  (000 Figs. 5-6), for GC-GD, ZGC-GD, GC-CB, ZGC-CB;
- read ratio: read:write in {0, 0.2, 0.5, 1, 2} at x = 6, 4 GB (Fig. 8, Table 3);
- the zombie block's share: ZGC-*-NZ at x in {6, 10, 20} (Fig. 9);
- notification by explicit command instead of piggybacking (§5.2.5);
- OLTP: a TPC-C-like workload with a 4 GB and a 3 GB database buffer (Fig. 10).

`small` divides the device and the caches by four (same ratios, minutes); `full` runs the
paper's sizes. The device is preconditioned to the workload's steady state first.
"""

from __future__ import annotations

from dataclasses import replace

from ..config import Config
from ..plot import legend, panels
from ._common import Claim, Context, Reproduction, banded, change, pct, within

TITLE = "Zombie Chasing (000): zombie-aware GC under a buffer cache"
DESCRIPTION = "locality and cache sweeps, read ratio, zombie block, notification cost, OLTP"
#: The default scale's wall time (2 cores, nothing else running: the docs' timings) and
#: verdicts (seed 1), for `reproduce --help`.
DEFAULT_TIME = "about 40 s"
DEFAULT_VERDICTS = {"met": 14, "direction-only": 1, "explained": 1}

#: The docs section on where ours differs, and the one that gives each scale's verdicts.
DOCS = "docs/zombie.md#where-ours-differs-and-why"
SCALES_DOCS = "docs/zombie.md#what-the-reproduction-shows"
#: Why a claim is not met, by (experiment, metric) and verdict (`_common.give_reasons`).
REASONS = {
    ("read ratio, x=6, 4 GB", "ZGC-CB WAF, read:write 2 vs 0"): {
        "direction-only": "with no reads our piggybacked channel carries one extent per "
        "writeback command, so the device knows about 11% of the dirty pages and ZGC-CB at "
        "read:write 0 is close to GC-CB, which makes the fall larger than 000's; 000's "
        "Table 3 values did not survive in its text, so its queue cannot be fitted: see "
        f"{DOCS}",
    },
    ("OLTP, 4 GB buffer", "zombie awareness (known / dirty)"): {
        "explained": "000 notifies Oracle's dirty buffers by a redo-log monitor and does not "
        "say which 30% it misses; ours piggybacks on the OLTP's many reads and loses "
        "nothing, as an ideal channel does (ablation/oltp-ideal/zgc-gd): see "
        f"{DOCS}",
    },
    ("micro x=3, 4 GB", "WAF, ZGC-GD vs GC-GD"): {
        "explained": "000 does not state the device's history, and what ZGC-GD still gains "
        "at x=3 moves with it (ablation/history=*, table sensitivity): a fresh fill leaves "
        "no gain anywhere, the workload's steady state makes greedy dear at x=3 too: see "
        f"{DOCS}",
    },
    ("OLTP, 4 GB buffer", "TPS, ZGC-?? vs GC-??"): {
        "direction-only": "000's database buffer held 46% dirty and ours holds 6-10% "
        "(Linux's thresholds), so less is left to gain; held at 000's dirty share "
        "(ablation/oltp-dirty/*, table oltp_sensitivity) the gains grow: see "
        f"{DOCS}",
    },
    ("zombie block, 4 GB", "WAF, ZGC-GD vs ZGC-GD-NZ at x=6"): {
        "direction-only@full": "ours {ours} against 000's {paper}: at full scale the "
        "zombie block gains less than half of 000's at x=6; the docs record it without a "
        f"further reason: see {SCALES_DOCS}",
    },
}

SCHEMES = ("gc-gd", "zgc-gd", "gc-cb", "zgc-cb")
LOCALITY = (3, 6, 10, 20)
READ_RATIOS = (0.0, 0.2, 0.5, 1.0, 2.0)
#: Page cache / DB buffer sizes of the paper, GiB.
CACHES = (4, 2)
OLTP_CACHES = (4, 3)


def _base(scale: str) -> tuple[Config, float]:
    cfg = Config.preset("zombie-chasing")
    if scale == "full":
        return cfg, 1.0
    factor = 0.25
    cfg = cfg.override(
        {
            "flash.blocks_per_plane": int(4096 * factor),
            "ftl.reserved_blocks": round(211 * factor),
        }
    )
    return cfg, factor


def _cache(gib: float, factor: float) -> str:
    return f"{round(gib * 1024 * factor)}MiB"


def _micro(x: float, rw: float) -> str:
    return f"zc-micro:x={x:g},rw={rw:g}"


#: "No room for improvement" at x = 3: a WAF change within this either way.
NO_GAIN = 0.10
#: "No improvement ... more than 20% in some cases" (§5.2.5), elapsed time vs GC-GD: at
#: least half the paper's lower bound, at most twice as slow.
COMMAND_BAND = (0.10, 1.0)
#: "About 70%" (§5.3.2).
AWARENESS_BAND = (0.55, 0.85)
#: 000 §5.3.2: Oracle's buffer held 1.83 GB dirty of 4 GB on average. Our database buffer
#: writes back by Linux's thresholds (10% background), so an ablation holds the paper's
#: dirty share instead (its DB writer, not Linux's flusher, decides when to write).
OLTP_DIRTY = {
    "host.dirty_background_ratio": 0.45,
    "host.dirty_ratio": 0.6,
    "host.dirty_expire_s": 300,
}
#: The ablations of settings 000 does not state, each run at x = 3 and x = 6 (4 GB):
#: (label, config overrides, what it shows).
ABLATIONS: tuple[tuple[str, dict, str], ...] = (
    (
        "cb-age=since-modified",
        {"gc.cb_age": "since-modified"},
        "LFS's age (now - last modification) instead of the modification time itself",
    ),
    ("history=fill", {"precondition.random_drive_writes": 0.0}, "a freshly filled device"),
    (
        "history=2-drives",
        {"precondition.random_drive_writes": 2.0},
        "fill and two drives of the workload (near its steady state)",
    ),
    ("gc-batch=+1", {"gc.high_watermark": 6}, "GC reclaims one block more per trigger"),
    ("gc-batch=+3", {"gc.high_watermark": 8}, "GC reclaims three blocks more per trigger"),
    (
        "gc-frontier=shared",
        {"ftl.gc_frontier": "shared"},
        "GC copies share the host's open block of their region",
    ),
)


def _ordered(claim: Claim, ok: bool, also: str) -> Claim:
    """`claim`, missed unless `ok` too (an order the paper states beside its figure)."""
    return replace(
        claim,
        expected=f"{claim.expected}, {also}",
        holds=claim.holds and ok,
        verdict=claim.verdict if ok else "missed",
    )


def run(ctx: Context) -> Reproduction:
    import pandas as pd

    base, factor = _base(ctx.scale)
    runs: dict[str, tuple[Config, str]] = {}

    def add(label: str, scheme: str, cache_gib: float, workload: str, **sets) -> None:
        cfg = base.scheme(scheme).override({"host.cache": _cache(cache_gib, factor), **sets})
        runs[label] = (cfg, workload)

    for cache in CACHES:
        for x in LOCALITY:
            for s in SCHEMES:
                add(f"micro/{cache}G/x{x}/rw0.5/{s}", s, cache, _micro(x, 0.5))
    for rw in READ_RATIOS:
        if rw == 0.5:
            continue
        for s in SCHEMES:
            add(f"micro/4G/x6/rw{rw:g}/{s}", s, 4, _micro(6, rw))
    for x in (6, 10, 20):
        for s in ("zgc-gd-nz", "zgc-cb-nz"):
            add(f"micro/4G/x{x}/rw0.5/{s}", s, 4, _micro(x, 0.5))
    add("notify/command", "zgc-gd", 4, _micro(6, 0.5), **{"notify.mode": "command"})
    for name, sets, _ in ABLATIONS:
        for x in (3, 6):
            for s in SCHEMES:
                add(f"ablation/{name}/x{x}/{s}", s, 4, _micro(x, 0.5), **sets)
    transactions = 50_000 if ctx.scale == "small" else 200_000
    oltp = f"oltp:db=0.96,transactions={transactions}"
    for cache in OLTP_CACHES:
        for s in SCHEMES:
            add(f"oltp/{cache}G/{s}", s, cache, oltp, **{"host.file_size": "16KiB"})
    add(
        "ablation/oltp-ideal/zgc-gd",
        "zgc-gd",
        4,
        oltp,
        **{"host.file_size": "16KiB", "notify.mode": "ideal"},
    )
    for s in SCHEMES:
        add(f"ablation/oltp-dirty/{s}", s, 4, oltp, **{"host.file_size": "16KiB", **OLTP_DIRTY})

    reports = ctx.simulate_many(runs)

    rows = []
    for label, rep in reports.items():
        parts = label.split("/")
        raw = rep.raw
        row = {
            "experiment": parts[0],
            "label": label,
            "scheme": parts[-1] if parts[0] != "notify" else "zgc-gd",
            "cache_gib": float(parts[1][:-1]) if parts[0] in ("micro", "oltp") else 4.0,
            "ablation": parts[1] if parts[0] == "ablation" else "",
            "waf": rep.waf,
            "elapsed_s": raw["app"]["elapsed_s"],
            "tps": raw["app"]["tps"] if raw["app"]["transactions"] else None,
            "awareness": raw["notify"]["awareness_mean"],
            "known_zombies_mean": raw["notify"]["known_zombies_mean"],
            "dirty_pages_mean": raw["cache"]["dirty_pages_mean"],
            "cache_pages": raw["cache"]["capacity_pages"],
            "gc_pages_copied": raw["gc"]["pages_copied"],
            "gc_zombie_pages_copied": raw["gc"]["zombie_pages_copied"],
        }
        if parts[0] == "micro":
            row["x"] = int(parts[2][1:])
            row["rw"] = float(parts[3][2:])
        elif parts[0] == "ablation" and parts[2].startswith("x"):
            row["x"] = int(parts[2][1:])
            row["rw"] = 0.5
        rows.append(row)
    frame = pd.DataFrame(rows)

    def get(label: str, field: str = "waf") -> float:
        return float(frame.loc[frame["label"] == label, field].iloc[0])

    def micro(cache: int, x: int, rw: float, scheme: str, field: str = "waf") -> float:
        return get(f"micro/{cache}G/x{x}/rw{rw:g}/{scheme}", field)

    def gain(cache: int, x: int, z: str = "zgc-gd", b: str = "gc-gd", field="waf") -> float:
        return change(micro(cache, x, 0.5, z, field), micro(cache, x, 0.5, b, field))

    sensitivity = _sensitivity(get)
    claims: list[Claim] = []
    g6 = gain(4, 6)
    claims.append(banded("micro x=6, 4 GB", "WAF, ZGC-GD vs GC-GD", -0.473, g6))
    t6 = gain(4, 6, field="elapsed_s")
    claims.append(banded("micro x=6, 4 GB", "elapsed, ZGC-GD vs GC-GD", -0.298, t6))
    c6 = gain(4, 6, "zgc-cb", "gc-cb")
    claims.append(
        banded(
            "micro x=6, 4 GB",
            "WAF, ZGC-CB vs GC-CB",
            -0.329,
            c6,
            paper_text="-32.9% (67.1% of GC-CB's)",
        )
    )
    ct6 = gain(4, 6, "zgc-cb", "gc-cb", "elapsed_s")
    claims.append(banded("micro x=6, 4 GB", "elapsed, ZGC-CB vs GC-CB", -0.253, ct6))
    g20 = gain(4, 20)
    claims.append(
        Claim(
            "micro, 4 GB",
            "ZGC-GD's WAF gain, x=20 vs x=6",
            "shrinks as locality falls (<5% with none)",
            f"{pct(g20)} vs {pct(g6)}",
            "smaller gain at x=20",
            g20 > g6,
        )
    )
    g6_2 = gain(2, 6)
    claims.append(
        _ordered(
            banded(
                "micro x=6, 2 GB",
                "WAF, ZGC-GD vs GC-GD",
                -0.30,
                g6_2,
                paper_text="about -30% (more than -35% with 4 GB)",
            ),
            g6_2 > g6,
            f"and smaller than with 4 GB ({pct(g6)})",
        )
    )
    g3 = gain(4, 3)
    x3_by_setting = sensitivity.set_index("setting")["ZGC-GD vs GC-GD x=3"]

    claims.append(
        within(
            "micro x=3, 4 GB",
            "WAF, ZGC-GD vs GC-GD",
            "no room for improvement (GC already cheap)",
            g3,
            -NO_GAIN,
            NO_GAIN,
            explanation=(
                "000 does not state the device's history; GC is cheap at x=3 here too "
                f"(GC-GD WAF {micro(4, 3, 0.5, 'gc-gd'):.2f} vs {micro(4, 6, 0.5, 'gc-gd'):.2f} "
                "at x=6), and what ZGC-GD still gains moves with the history: "
                + ", ".join(
                    f"{pct(x3_by_setting[name])} ({name})"
                    for name in ("history=fill", "history=2-drives")
                )
                + " (runs ablation/history=*, table sensitivity)"
            ),
        )
    )
    cb0, cb2 = micro(4, 6, 0.0, "zgc-cb"), micro(4, 6, 2.0, "zgc-cb")
    claims.append(
        banded(
            "read ratio, x=6, 4 GB",
            "ZGC-CB WAF, read:write 2 vs 0",
            change(3.96, 4.40),
            change(cb2, cb0),
            paper_text=f"3.96 vs 4.40 ({pct(change(3.96, 4.40))})",
            ours_text=f"{cb2:.2f} vs {cb0:.2f} ({pct(change(cb2, cb0))})",
        )
    )
    a0 = micro(4, 6, 0.0, "zgc-gd", "awareness")
    a2 = micro(4, 6, 2.0, "zgc-gd", "awareness")
    claims.append(
        Claim(
            "read ratio, x=6, 4 GB",
            "device's zombie awareness, read:write 2 vs 0 (Table 3)",
            "rises with the read ratio",
            f"{a2:.0%} vs {a0:.0%}",
            "higher with more reads",
            a2 > a0,
        )
    )
    nz6 = change(micro(4, 6, 0.5, "zgc-gd"), micro(4, 6, 0.5, "zgc-gd-nz"))
    nz20 = change(micro(4, 20, 0.5, "zgc-gd"), micro(4, 20, 0.5, "zgc-gd-nz"))
    claims.append(
        _ordered(
            banded(
                "zombie block, 4 GB",
                "WAF, ZGC-GD vs ZGC-GD-NZ at x=6",
                -0.18,
                nz6,
                paper_text="about -18% at x=6, under 3% at x=20",
                ours_text=f"{pct(nz6)} at x=6, {pct(nz20)} at x=20",
            ),
            nz6 < nz20,
            "and less at x=20",
        )
    )
    cmd = change(get("notify/command", "elapsed_s"), micro(4, 6, 0.5, "gc-gd", "elapsed_s"))
    claims.append(
        within(
            "notification, x=6, 4 GB",
            "ZGC-GD notified by command: elapsed vs GC-GD",
            "no improvement; more than +20% in some cases",
            cmd,
            COMMAND_BAND[0],
            COMMAND_BAND[1],
        )
    )
    for cache, tps_paper, waf_paper in ((4, 0.22, -0.26),):
        tps = change(get(f"oltp/{cache}G/zgc-gd", "tps"), get(f"oltp/{cache}G/gc-gd", "tps"))
        waf = change(get(f"oltp/{cache}G/zgc-gd"), get(f"oltp/{cache}G/gc-gd"))
        claims.append(banded(f"OLTP, {cache} GB buffer", "TPS, ZGC-GD vs GC-GD", tps_paper, tps))
        claims.append(banded(f"OLTP, {cache} GB buffer", "WAF, ZGC-GD vs GC-GD", waf_paper, waf))
    tps_cb = change(get("oltp/4G/zgc-cb", "tps"), get("oltp/4G/gc-cb", "tps"))
    waf_cb = change(get("oltp/4G/zgc-cb"), get("oltp/4G/gc-cb"))
    claims.append(banded("OLTP, 4 GB buffer", "TPS, ZGC-CB vs GC-CB", 0.144, tps_cb))
    claims.append(banded("OLTP, 4 GB buffer", "WAF, ZGC-CB vs GC-CB", -0.175, waf_cb))
    aware = get("oltp/4G/zgc-gd", "awareness")
    aware_ideal = get("ablation/oltp-ideal/zgc-gd", "awareness")
    claims.append(
        within(
            "OLTP, 4 GB buffer",
            "zombie awareness (known / dirty)",
            "about 70% (1.28 GB of 1.83 GB)",
            aware,
            AWARENESS_BAND[0],
            AWARENESS_BAND[1],
            fmt="{:.0%}".format,
            explanation=(
                "000 notifies Oracle's dirty buffers by a redo-log monitor and does not say "
                "which 30% it misses; ours piggybacks on the OLTP's many reads and loses "
                f"nothing: an ideal channel knows {aware_ideal:.0%} too "
                "(run ablation/oltp-ideal/zgc-gd)"
            ),
        )
    )

    notes = [
        f"Scale {ctx.scale}: device and caches x{factor:g} of the paper's "
        "(32 GB, 4 banks, 16 KiB pages, 2 MB blocks; 4 GB and 2 GB page caches; TPC-C buffers "
        "4 GB and 3 GB). Each run first fills the device and writes one drive of the "
        "workload's own pattern (precondition.pattern = workload); the paper filled a used "
        "prototype.",
        "Each claim is checked for direction and magnitude (within 2x of the paper's, or a "
        "stated range). Two settings 000 does not state are the preset's choices: "
        "cost-benefit's age is the block's modification time itself (000's text read "
        "literally, gc.cb_age = modified-time), and the device has been filled and then "
        "written one drive by the workload before each run. The sensitivity tables show "
        "what each choice, the GC batch, the GC frontier and the database buffer's dirty "
        "share do (runs ablation/*); docs/zombie.md explains each difference.",
    ]

    return Reproduction(
        paper=ctx.paper,
        title=TITLE,
        scale=ctx.scale,
        claims=claims,
        tables={
            "sensitivity": sensitivity,
            "oltp_sensitivity": _oltp_sensitivity(get),
            "runs": frame,
        },
        figures={
            "WAF and elapsed time against locality x (Figs. 5-6)": (
                lambda: _locality_figure(frame),
                lambda: _locality_data(frame),
            ),
            "Read ratio: WAF and awareness at x = 6, 4 GB (Fig. 8, Table 3)": (
                lambda: _read_ratio_figure(frame),
                lambda: _read_ratio_data(frame),
            ),
            "OLTP: TPS and WAF (Fig. 10)": (
                lambda: _oltp_figure(frame),
                lambda: _oltp_data(frame),
            ),
        },
        notes=notes,
    )


def _sensitivity(get):
    """The settings 000 does not state, one row each: what ZGC gains at x = 3 and x = 6."""
    import pandas as pd

    rows = []
    for name, _, what in (("preset", {}, "the zombie-chasing preset"), *ABLATIONS):
        prefix = "micro/4G" if name == "preset" else f"ablation/{name}"
        suffix = "/rw0.5" if name == "preset" else ""

        def at(
            x: int, scheme: str, field: str = "waf", prefix: str = prefix, suffix: str = suffix
        ) -> float:
            return get(f"{prefix}/x{x}{suffix}/{scheme}", field)

        rows.append(
            {
                "setting": name,
                "what": what,
                "GC-GD WAF x=3": at(3, "gc-gd"),
                "ZGC-GD vs GC-GD x=3": change(at(3, "zgc-gd"), at(3, "gc-gd")),
                "GC-GD WAF x=6": at(6, "gc-gd"),
                "ZGC-GD vs GC-GD x=6": change(at(6, "zgc-gd"), at(6, "gc-gd")),
                "GC-CB WAF x=6": at(6, "gc-cb"),
                "ZGC-CB vs GC-CB x=6": change(at(6, "zgc-cb"), at(6, "gc-cb")),
                "ZGC-CB elapsed vs GC-CB x=6": change(
                    at(6, "zgc-cb", "elapsed_s"), at(6, "gc-cb", "elapsed_s")
                ),
            }
        )
    return pd.DataFrame(rows)


def _oltp_sensitivity(get):
    """OLTP with the preset's DB buffer and with 000's dirty share (4 GB buffer)."""
    import pandas as pd

    rows = []
    for name, prefix, what in (
        ("preset", "oltp/4G", "Linux writeback thresholds (10% background)"),
        ("oltp-dirty", "ablation/oltp-dirty", "000's dirty share (1.83 of 4 GB)"),
    ):
        rows.append(
            {
                "setting": name,
                "what": what,
                "dirty share": get(f"{prefix}/gc-gd", "dirty_pages_mean")
                / get(f"{prefix}/gc-gd", "cache_pages"),
                "awareness ZGC-GD": get(f"{prefix}/zgc-gd", "awareness"),
                "TPS, ZGC-GD vs GC-GD": change(
                    get(f"{prefix}/zgc-gd", "tps"), get(f"{prefix}/gc-gd", "tps")
                ),
                "WAF, ZGC-GD vs GC-GD": change(get(f"{prefix}/zgc-gd"), get(f"{prefix}/gc-gd")),
                "TPS, ZGC-CB vs GC-CB": change(
                    get(f"{prefix}/zgc-cb", "tps"), get(f"{prefix}/gc-cb", "tps")
                ),
                "WAF, ZGC-CB vs GC-CB": change(get(f"{prefix}/zgc-cb"), get(f"{prefix}/gc-cb")),
            }
        )
    return pd.DataFrame(rows)


def _locality_data(frame):
    """What Figs. 5-6 draw: the micro-benchmark at read:write 0.5, by cache, x, scheme."""
    micro = frame[(frame["experiment"] == "micro") & (frame["rw"] == 0.5)]
    micro = micro[micro["scheme"].isin(SCHEMES)]
    columns = ["cache_gib", "x", "scheme", "waf", "elapsed_s"]
    return micro[columns].sort_values(["cache_gib", "scheme", "x"], ascending=[False, True, True])


def _locality_figure(frame):
    """Figs. 5-6 as a 2 x 2 grid: WAF (top) and elapsed time (bottom) against locality,
    4 GB cache (left) and 2 GB (right); each panel with its own legend."""
    fig, axes = panels(2, 2, height=3.6)
    data = _locality_data(frame)
    cells = [
        (cache, field, label)
        for field, label in (("waf", "WAF"), ("elapsed_s", "elapsed (s)"))
        for cache in CACHES
    ]
    for ax, (cache, field, label) in zip(axes, cells, strict=True):
        sub = data[data["cache_gib"] == cache]
        for scheme in SCHEMES:
            pts = sub[sub["scheme"] == scheme].sort_values("x")
            ax.plot(pts["x"], pts[field], marker="o", label=scheme.upper())
        ax.set_xticks(LOCALITY)
        ax.set_xlabel("locality x (%)")
        ax.set_ylabel(label)
        ax.set_title(f"{label}, {cache} GB cache")
        ax.grid(alpha=0.3)
        legend(ax, "scheme")
    return fig


def _read_ratio_data(frame):
    """What Fig. 8 and Table 3 draw: x = 6, 4 GB cache, by scheme and read ratio."""
    micro = frame[(frame["experiment"] == "micro") & (frame["x"] == 6) & (frame["cache_gib"] == 4)]
    micro = micro[micro["scheme"].isin(SCHEMES)]
    return micro[["scheme", "rw", "waf", "awareness"]].sort_values(["scheme", "rw"])


def _read_ratio_figure(frame):
    fig, (waf_ax, aware_ax) = panels(1, 2)
    data = _read_ratio_data(frame)
    for scheme in SCHEMES:
        pts = data[data["scheme"] == scheme]
        waf_ax.plot(pts["rw"], pts["waf"], marker="o", label=scheme.upper())
    waf_ax.set_xticks(READ_RATIOS, [f"{r:g}" for r in READ_RATIOS])
    waf_ax.set_xlabel("reads per write")
    waf_ax.set_ylabel("WAF")
    waf_ax.set_title("WAF against the read ratio (Fig. 8)")
    waf_ax.grid(alpha=0.3)
    legend(waf_ax, "scheme")
    pts = data[data["scheme"] == "zgc-gd"]
    aware_ax.bar([f"{r:g}" for r in pts["rw"]], pts["awareness"], color="#7fa8c9")
    aware_ax.set_xlabel("reads per write")
    aware_ax.set_ylabel("known zombies / dirty pages")
    aware_ax.set_title("ZGC-GD's zombie awareness (Table 3)")
    aware_ax.set_ylim(0, 1)
    return fig


def _oltp_data(frame):
    """What Fig. 10 draws: the OLTP runs by buffer size and scheme."""
    oltp = frame[frame["experiment"] == "oltp"]
    return oltp[["cache_gib", "scheme", "tps", "waf"]].sort_values(
        ["cache_gib", "scheme"], ascending=[False, True]
    )


def _oltp_figure(frame):
    """Fig. 10: TPS and WAF per buffer size, a bar per scheme; the legend beside the
    panels, never over a bar."""
    fig, (tps_ax, waf_ax) = panels(1, 2)
    oltp = _oltp_data(frame)
    caches = sorted(oltp["cache_gib"].unique(), reverse=True)
    width = 0.2
    for i, scheme in enumerate(SCHEMES):
        pts = oltp[oltp["scheme"] == scheme].set_index("cache_gib").loc[caches]
        xs = [c + (i - 1.5) * width for c in range(len(caches))]
        tps_ax.bar(xs, pts["tps"], width=width, label=scheme.upper())
        waf_ax.bar(xs, pts["waf"], width=width, label=scheme.upper())
    for ax, name in ((tps_ax, "TPS"), (waf_ax, "WAF")):
        ax.set_xticks(range(len(caches)), [f"{c:g} GB buffer" for c in caches])
        ax.set_xlabel("database buffer")
        ax.set_ylabel(name)
        ax.set_title(f"OLTP {name} (Fig. 10)")
        ax.grid(alpha=0.3, axis="y")
        legend(ax, "scheme")
    return fig
