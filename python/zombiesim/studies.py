"""`zombiesim study`: every scheme on every trace, on one page (docs/lifetimes.md).

Each trace gets a device of its own, sized so that the pages it writes fill 80% of the
logical space (`FOOTPRINT_SHARE`, at least `MIN_PHYSICAL_BYTES` of flash), on
the preset with 256 KiB blocks (room for the streams of the placement schemes), a fill
and one drive of the trace's own writes before measuring, notifications piggybacked,
and one GC watermark for every scheme of the study: the least that all of them accept.
Under it runs a sweep per trace (`zs.sweep`: the scheme axis; resumable in
`OUT/runs/NAME/`). The page (`OUT/study.html`, with `study.csv` and `study.json`):

- WAF, erases, and each scheme's share of the victim oracle's gain over GC-GD, per
  scheme × trace; the placement ceiling (`placement-oracle`) beside it;
- the zombie lifetimes each trace showed (from a run of `lzgc-*`, in host page writes),
  as CDFs;
- where each scheme lost: a cell whose WAF is above its base's (GC-GD for the greedy
  family, GC-CB for cost-benefit's, and for the placements greedy with one stream,
  `nosep`: their papers' baseline) by more than `LOSS`;
- what trims change: a trimmed variant of a program (a trace named `NAME-discard` or
  `NAME-fstrim`, captured with the file system mounted with `discard` or fstrim on a
  timer) beside `NAME` when both are studied, each scheme's WAF on both.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import catalog, tuning
from . import corpus as corpus_mod
from ._errors import ConfigError, InputError, SimulationInterrupted, make_error
from ._io import atomic_write
from .config import Config

__all__ = [
    "BASE_OF",
    "BOUNDED",
    "DEFAULT_SCHEMES",
    "StudyTrace",
    "below_ceilings",
    "resolve_traces",
    "study",
    "study_device",
    "trim_effects",
    "trim_pairs",
]

#: What `zombiesim study` runs by default: the zombie-aware schemes and their
#: lifetime-aware variants with their bases, the placements, and both ceilings.
DEFAULT_SCHEMES = (
    "gc-gd",
    "nosep",
    "zgc-gd",
    "lzgc-gd",
    "gc-cb",
    "zgc-cb",
    "lzgc-cb",
    "sepbit",
    "write-count",
    "oracle",
    "placement-oracle",
)
#: The scheme each is measured against for "where it lost".
BASE_OF = {
    "zgc-gd": "gc-gd",
    "lzgc-gd": "gc-gd",
    "zgc-cb": "gc-cb",
    "lzgc-cb": "gc-cb",
    # The placements against their papers' baseline: greedy with one stream for host
    # writes and GC copies (GC-GD already gives GC copies a stream of their own).
    "sepbit": "nosep",
    "midas": "nosep",
    "write-count": "nosep",
}
#: The ceilings: the victim oracle (zombie marks from the future) and the placement one.
VICTIM_CEILING = "oracle"
PLACEMENT_CEILING = "placement-oracle"
#: What each ceiling bounds by construction (its envelope runs each of them): the victim
#: oracle the victim schemes, the placement oracle the placements.
BOUNDED = {
    VICTIM_CEILING: ("gc-gd", "gc-cb", "zgc-gd", "zgc-cb", "lzgc-gd", "lzgc-cb"),
    PLACEMENT_CEILING: ("gc-gd", "nosep", "sepbit", "midas", "write-count"),
}
#: The baseline of the oracle's share.
BASELINE = "gc-gd"
#: The share of the logical space the trace's written pages fill.
FOOTPRINT_SHARE = 0.8
#: The smallest device: 512 MiB of flash.
MIN_PHYSICAL_BYTES = 512 << 20
#: A loss: WAF above the base's by more than this share.
LOSS = 0.005
#: Smallest oracle gain a share is computed over, as a share of GC-GD's WAF: below it
#: the gain is within the spread of the envelope's near-identical members (about 1%), and
#: a share of it is a share of noise (pg-queue's LZGC-CB: -160% of a 0.8% gain).
MIN_GAIN = 0.02
#: The name suffixes of a trimmed variant of a corpus entry (traces/corpus/make.py).
TRIMMED_SUFFIXES = ("-discard", "-fstrim")
#: Settings every study device has.
STUDY_SETTINGS: dict[str, Any] = {
    "flash.pages_per_block": 64,
    "precondition.random_drive_writes": 1,
    "precondition.pattern": "workload",
    "notify.mode": "piggyback",
}


@dataclass(frozen=True)
class StudyTrace:
    name: str
    path: Path


def resolve_traces(names: Sequence[str], corpus: str | os.PathLike[str] | None = None):
    """The traces to study: each name is a corpus entry (`traces/corpus/NAME`), a folder
    holding `trace.zst`, or a native trace file; none: the whole corpus. An unknown name
    is an InputError naming it and listing the corpus."""
    if not names:
        return [StudyTrace(e.name, e.trace) for e in corpus_mod.entries(corpus)]
    known = None
    found = []
    for name in names:
        p = Path(name)
        if p.is_file():
            found.append(StudyTrace(p.name.split(".")[0], p))
            continue
        if (p / corpus_mod.TRACE).is_file():
            found.append(StudyTrace(p.name, p / corpus_mod.TRACE))
            continue
        if known is None:
            try:
                known = {e.name: e for e in corpus_mod.entries(corpus)}
            except InputError:
                known = {}
        if name in known:
            found.append(StudyTrace(name, known[name].trace))
            continue
        listed = ", ".join(known) or "none found"
        raise make_error(
            InputError,
            f"`{name}`: no such trace file, folder with {corpus_mod.TRACE}, or corpus entry "
            f"(the corpus: {listed})",
            "io",
        )
    names_seen = [t.name for t in found]
    dup = {n for n in names_seen if names_seen.count(n) > 1}
    if dup:
        raise make_error(InputError, f"two traces named {', '.join(sorted(dup))}", "io")
    return found


def study_device(
    trace: StudyTrace,
    schemes: Sequence[str],
    *,
    preset: str = "default",
    sets: Mapping[str, Any] | None = None,
) -> Config:
    """The device `trace` is studied on: the preset with `STUDY_SETTINGS` and `sets`,
    sized to the trace's written footprint, with the least GC watermark every scheme of
    `schemes` accepts. A scheme no watermark can make fit raises its ConfigError."""
    from . import trace as traces

    base = Config.preset(preset).override({**STUDY_SETTINGS, **(sets or {})})
    written_bytes = int(traces.stats(trace.path, "native")["written_footprint_bytes"])
    g = base.geometry
    block_bytes = g["pages_per_block"] * g["page_size"]
    logical = written_bytes / FOOTPRINT_SHARE
    physical = max(MIN_PHYSICAL_BYTES, logical * (1.0 + g["over_provisioning"]))
    bpp = math.ceil(physical / (g["planes"] * block_bytes))
    base = base.override({"flash.blocks_per_plane": bpp})
    watermark = int(base.get("gc.low_watermark"))
    while True:
        marks = {"gc.low_watermark": watermark, "gc.high_watermark": watermark}
        try:
            for s in schemes:
                base.override(marks).scheme(s)
            return base.override(marks)
        except ConfigError as e:
            # The only thing the study adjusts is the watermark; anything else is the
            # scheme's or the user's to fix.
            if "gc.low_watermark" not in str(e) or watermark > 4 * bpp:
                raise
            watermark += 1


def _sweep_grid(trace: StudyTrace, base_toml: str, schemes: Sequence[str]) -> dict[str, Any]:
    return {
        "title": f"study: {trace.name}",
        "config": base_toml,
        "trace": {"path": str(trace.path), "format": "native", "remap": "compact"},
        "metrics": ["waf", "flash.erases", "gc.pages_copied"],
        "axes": {"scheme": list(schemes)},
    }


def _lifetimes(folder: Path) -> dict[str, tuple[list[int], int]]:
    """The zombie lifetimes each finished cell of a sweep learnt, by scheme (the
    flattened table keeps no lists: they are read from the cells' reports)."""
    found = {}
    for path in sorted((folder / "cells").glob("*.json")):
        cell = json.loads(path.read_text())
        zw = (cell.get("report") or {}).get("zombie_weight")
        scheme = (cell.get("axes") or {}).get("scheme")
        if zw and scheme:
            found[scheme] = (list(zw.get("lifetimes") or []), int(zw.get("withdrawn") or 0))
    return found


def _rows(name: str, frame, folder: Path) -> list[dict[str, Any]]:
    learnt = _lifetimes(folder)
    rows = []
    for _, r in frame.iterrows():
        lifetimes, withdrawn = learnt.get(r["axis.scheme"], (None, None))
        rows.append(
            {
                "trace": name,
                "scheme": r["axis.scheme"],
                "status": r["status"],
                "error": r.get("error") if r["status"] != "ok" else None,
                "waf": r.get("waf"),
                "erases": r.get("flash.erases"),
                "copies": r.get("gc.pages_copied"),
                "lifetimes": lifetimes,
                "withdrawn": withdrawn,
            }
        )
    return rows


def _shares(rows: list[dict[str, Any]]) -> None:
    """Each row's share of the victim oracle's gain over GC-GD on its trace, and where
    it lost against its base (in place)."""
    by = {(r["trace"], r["scheme"]): r for r in rows}
    for r in rows:
        base = by.get((r["trace"], BASELINE))
        ceiling = by.get((r["trace"], VICTIM_CEILING))
        r["oracle_share"] = None
        if r["waf"] is not None and base and ceiling and base["waf"] is not None:
            gain = base["waf"] - ceiling["waf"]
            if gain >= MIN_GAIN * base["waf"]:
                r["oracle_share"] = (base["waf"] - r["waf"]) / gain
        own = by.get((r["trace"], BASE_OF.get(r["scheme"], "")))
        r["lost"] = bool(
            own and own["waf"] and r["waf"] is not None and r["waf"] > own["waf"] * (1 + LOSS)
        )


def below_ceilings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every scheme whose WAF is below the ceiling that bounds it (`BOUNDED`) on the
    same trace: what must never happen. One dict per case: trace, scheme, ceiling, both
    WAFs."""
    by = {(r["trace"], r["scheme"]): r for r in rows if r["status"] == "ok"}
    out = []
    for (trace, scheme), r in by.items():
        for ceiling, bounded in BOUNDED.items():
            c = by.get((trace, ceiling))
            if scheme in bounded and c is not None and r["waf"] < c["waf"]:
                out.append(
                    {
                        "trace": trace,
                        "scheme": scheme,
                        "ceiling": ceiling,
                        "waf": r["waf"],
                        "ceiling waf": c["waf"],
                    }
                )
    return out


def trim_pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    """(untrimmed, trimmed) trace names among `names`: `X-discard` or `X-fstrim` beside
    `X`."""
    present = set(names)
    pairs = []
    for name in names:
        for suffix in TRIMMED_SUFFIXES:
            if name.endswith(suffix) and name[: -len(suffix)] in present:
                pairs.append((name[: -len(suffix)], name))
    return pairs


def trim_effects(rows: list[dict[str, Any]], schemes: Sequence[str]) -> list[dict[str, Any]]:
    """Per trimmed variant and scheme: the WAF without trims (the untrimmed capture of the
    same program), with them, and the change."""
    by = {(r["trace"], r["scheme"]): r for r in rows if r["status"] == "ok"}
    out = []
    for plain, trimmed in trim_pairs(list(dict.fromkeys(r["trace"] for r in rows))):
        for s in schemes:
            a, b = by.get((plain, s)), by.get((trimmed, s))
            if a is None or b is None or not a["waf"] or b["waf"] is None:
                continue
            out.append(
                {
                    "program": plain,
                    "trimmed": trimmed,
                    "scheme": s,
                    "waf untrimmed": a["waf"],
                    "waf trimmed": b["waf"],
                    "change": b["waf"] / a["waf"] - 1,
                }
            )
    return out


def _lifetime_cdfs(rows: list[dict[str, Any]]) -> dict[str, tuple[list[float], list[float]]]:
    """Per trace, the CDF of its zombie lifetimes (host page writes) from the first run
    that learnt them: x = bucket upper bounds, y = share of zombies dead by then (the
    withdrawn never die)."""
    cdfs = {}
    for r in rows:
        if r["trace"] in cdfs or not r["lifetimes"]:
            continue
        counts = [float(c) for c in r["lifetimes"]]
        total = sum(counts) + float(r["withdrawn"] or 0)
        if total <= 0:
            continue
        xs, ys, acc = [], [], 0.0
        for k, c in enumerate(counts):
            acc += c
            xs.append(float(2 ** (k + 1) - 1))
            ys.append(acc / total)
        cdfs[r["trace"]] = (xs, ys)
    return cdfs


def _page(rows, cdfs, schemes, traces, command: str | None, loo=None) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from .html.page import Page

    frame = pd.DataFrame(rows)
    page = Page("Schemes × traces: WAF and the oracle's gain")
    page.paragraph(
        f"{len(schemes)} schemes on {len(traces)} traces. The share is of the victim "
        f"oracle's gain over {BASELINE.upper()} ((GC-GD − scheme) / (GC-GD − oracle)), "
        f"given where that gain is at least {MIN_GAIN:.0%} of GC-GD's WAF; "
        f"`{PLACEMENT_CEILING}` is the placement ceiling (pages grouped by their actual "
        "death). A loss: WAF above the scheme's base by more than "
        f"{LOSS:.1%} ({', '.join(f'{k} against {v}' for k, v in BASE_OF.items())})."
    )
    ok = frame[frame["status"] == "ok"]
    for metric, title, fmt in (
        ("waf", "WAF", "{:.3f}"),
        ("oracle_share", "Share of the oracle's gain", "{:.0%}"),
        ("erases", "Erases", "{:,.0f}"),
    ):
        if ok.empty:
            break
        table = ok.pivot(index="trace", columns="scheme", values=metric)
        table = table[[s for s in schemes if s in table.columns]]
        if metric == "oracle_share":
            table.loc["mean"] = table.mean(numeric_only=True)
        table = table.reset_index()
        page.heading(title)
        formats = {
            s: (lambda v, f=fmt: "" if v is None or pd.isna(v) else f.format(v))
            for s in schemes
            if s in table.columns
        }
        page.table(table, name=metric, formats=formats)
    if cdfs:
        fig, ax = plt.subplots(figsize=(7, 4))
        for name, (xs, ys) in sorted(cdfs.items()):
            ax.step(xs, ys, where="post", label=name)
        ax.set_xscale("log")
        ax.set_xlabel("zombie lifetime (host page writes from mark to death)")
        ax.set_ylabel("share of zombies dead")
        ax.set_ylim(0, 1)
        ax.legend(fontsize="small")
        data = pd.DataFrame(
            [
                {"trace": n, "lifetime_le": x, "cdf": y}
                for n, (xs, ys) in sorted(cdfs.items())
                for x, y in zip(xs, ys, strict=True)
            ]
        )
        page.heading("Zombie lifetimes")
        page.figure(
            fig,
            caption="Zombie lifetimes per trace, as the lifetime-aware GC learnt them "
            "(withdrawn zombies never die)",
            name="lifetimes",
            data=data,
        )
        plt.close(fig)
    lost = frame[frame["lost"]]
    page.heading("Where each scheme lost")
    if lost.empty:
        page.paragraph(f"No scheme lost against its base by more than {LOSS:.1%}.")
    else:
        by = {(r["trace"], r["scheme"]): r for r in rows}
        table = pd.DataFrame(
            [
                {
                    "scheme": r["scheme"],
                    "trace": r["trace"],
                    "base": BASE_OF[r["scheme"]],
                    "waf": r["waf"],
                    "base waf": by[(r["trace"], BASE_OF[r["scheme"]])]["waf"],
                    "worse by": r["waf"] / by[(r["trace"], BASE_OF[r["scheme"]])]["waf"] - 1,
                }
                for r in lost.to_dict("records")
            ]
        )
        page.table(
            table,
            name="lost",
            formats={"worse by": "{:+.1%}".format, "waf": "{:.3f}".format},
        )
    page.heading("The ceilings")
    below = below_ceilings(rows)
    bounds = "; ".join(f"{c} bounds {', '.join(b)}" for c, b in BOUNDED.items())
    if below:
        page.paragraph(f"Schemes below the ceiling that should bound them ({bounds}):")
        page.table(pd.DataFrame(below), name="below")
    else:
        page.paragraph(
            f"No scheme is below its ceiling ({bounds}; each runs them in its envelope)."
        )
    if loo is not None:
        tuning.page_section(page, loo, LOSS)
    effects = trim_effects(rows, schemes)
    if effects:
        page.heading("What trims change")
        page.paragraph(
            "Each trimmed variant (the same program captured with the file system mounted "
            "with `discard`, or fstrim on a timer) beside its capture without trims: the "
            "device then learns which blocks deleted files freed. The two are separate "
            "runs of the program, so their writes can differ beyond the trims."
        )
        page.table(
            pd.DataFrame(effects),
            name="trims",
            formats={
                "change": "{:+.1%}".format,
                "waf untrimmed": "{:.3f}".format,
                "waf trimmed": "{:.3f}".format,
            },
        )
    failed = frame[frame["status"] != "ok"]
    if not failed.empty:
        page.heading("Failed cells")
        page.table(failed[["trace", "scheme", "error"]], name="failed", wrap=["error"])
    page.run_section(command=command, facts=[("traces", ", ".join(t.name for t in traces))])
    return page.html()


def study(
    traces: Sequence[StudyTrace],
    *,
    out: str | os.PathLike[str],
    schemes: Sequence[str] = DEFAULT_SCHEMES,
    preset: str = "default",
    sets: Mapping[str, Any] | None = None,
    jobs: int | None = None,
    command: str | None = None,
    progress: Callable[[str, int, int], Any] | None = None,
    tune: bool = False,
) -> list[dict[str, Any]]:
    """Run `schemes` on every trace of `traces` (a sweep per trace in `OUT/runs/NAME/`,
    resumable) and write `OUT/study.html`, `study.csv` and `study.json`. Returns one row
    per scheme × trace: WAF, erases, copies, the oracle share, whether it lost against
    its base, and the zombie lifetimes its run learnt. The traces' cells share one pool
    of `jobs` workers; `progress(trace, i, n)` is called as each trace's last cell
    finishes (`i` of `n` traces done).

    `tune`: also run every tunable of `tuning.TUNABLES` at each of its values (sweeps in
    `OUT/tuning/TUNABLE/NAME/`; the tuned schemes and their bases join `schemes`) and
    write the leave-one-out table (`tuning.csv`, `tuning.json`, a section of the
    page)."""
    import pandas as pd

    from . import sweeps
    from .sweeps.runner import run_grids

    if not traces:
        raise make_error(InputError, "no trace to study", "io")
    unknown = [s for s in schemes if s not in {x.name for x in catalog.schemes()}]
    if unknown:
        raise make_error(ConfigError, f"unknown scheme(s): {', '.join(unknown)}", "scheme")
    if tune:
        tuned = [s for t in tuning.TUNABLES for s in t.schemes]
        schemes = list(dict.fromkeys([*schemes, *tuned, *(BASE_OF[s] for s in tuned)]))
    root = Path(out)
    (root / "runs").mkdir(parents=True, exist_ok=True)
    grids = []
    extra = []
    owner: list[tuple[int, tuning.Tunable]] = []  # the trace and tunable of each of `extra`
    for i, t in enumerate(traces):
        device = study_device(t, schemes, preset=preset, sets=sets)
        config_path = root / "runs" / f"{t.name}.device.toml"
        atomic_write(config_path, device.to_toml())
        grid = sweeps.load_grid(_sweep_grid(t, str(config_path), schemes))
        grids.append((grid, root / "runs" / t.name))
        for k in tuning.TUNABLES if tune else ():
            spec = {
                **_sweep_grid(t, str(config_path), ()),
                "title": f"{k.name}: {t.name}",
                "axes": tuning.grid_axes(k),
                "skip_invalid": True,
            }
            extra.append((sweeps.load_grid(spec), root / "tuning" / k.slug / t.name))
            owner.append((i, k))
    done = 0
    # Each trace's grids still running: its study's and its tunables'.
    left = [1 + sum(j == i for j, _ in owner) for i in range(len(traces))]

    def finished(i: int) -> None:
        nonlocal done
        t = i if i < len(traces) else owner[i - len(traces)][0]
        left[t] -= 1
        if left[t] == 0:
            done += 1
            if progress is not None:
                progress(traces[t].name, done, len(traces))

    # One pool for every trace, the ceilings (an envelope of runs each) first: the
    # workers never wait on one trace's slowest cell.
    outcomes = run_grids(
        grids + extra, jobs=jobs, report=False, first=_is_ceiling, on_grid_done=finished
    )
    if outcomes and outcomes[0].interrupted:
        raise SimulationInterrupted(report=None)
    rows: list[dict[str, Any]] = []
    for t, (_, folder), o in zip(traces, grids, outcomes, strict=False):
        rows.extend(_rows(t.name, o.frame, folder))
    _shares(rows)
    loo = None
    if tune:
        runs = [r for (i, k), o in zip(owner, outcomes[len(grids) :], strict=True)
                for r in _tuning_runs(k, traces[i].name, o.frame)]  # fmt: skip
        bases = {(r["trace"], r["scheme"]): r["waf"] for r in rows if r["status"] == "ok"}
        loo = tuning.leave_one_out(runs, bases, BASE_OF)
        atomic_write(root / "tuning.json", json.dumps(loo, indent=1, default=_json_default))
        atomic_write(root / "tuning.csv", pd.DataFrame(loo).to_csv(index=False))
    cdfs = _lifetime_cdfs(rows)
    atomic_write(root / "study.json", json.dumps(rows, indent=1, default=_json_default))
    table = pd.DataFrame([{k: v for k, v in r.items() if k != "lifetimes"} for r in rows])
    atomic_write(root / "study.csv", table.to_csv(index=False))
    atomic_write(root / "study.html", _page(rows, cdfs, list(schemes), traces, command, loo))
    return rows


def _tuning_runs(k: tuning.Tunable, trace: str, frame) -> list[dict[str, Any]]:
    """The finished runs of tunable `k`'s sweep on `trace`."""
    return [
        {
            "tunable": k.name,
            "scheme": r["axis.scheme"],
            "trace": trace,
            "value": _plain(r[f"axis.{k.key}"]),
            "waf": float(r["waf"]),
        }
        for _, r in frame.iterrows()
        if r["status"] == "ok" and r.get("waf") is not None
    ]


def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _is_ceiling(cell) -> bool:
    return cell.axes.get("scheme") in (VICTIM_CEILING, PLACEMENT_CEILING)


def _json_default(v: Any) -> Any:
    if hasattr(v, "item"):
        return v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return str(v)
