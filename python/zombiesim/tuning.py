"""Leave-one-out: every tunable choice of the lifetime-aware schemes, measured on captures
it was not chosen on (docs/lifetimes.md, "Leave-one-out").

```text
  tunable (key, values, default) × its schemes × every trace ─► WAF(trace, scheme, value)
  score(value | traces) = mean over traces of log(WAF / WAF of the scheme's base)
  in-sample:     the value with the best score over every trace
  leave-one-out: for each trace T, the value with the best score over the others,
                 measured on T (ties: the default, then the order given)
```

A choice that generalizes gives, left out, what it gives in-sample; one that was fitted
to a few captures moves, and the trace left out shows what that costs. One tunable at a
time, the others at their defaults. The runs share the study's devices and pool
(`zombiesim study --tune`); a value the device cannot take (more streams than its
watermark leaves room for) is skipped and listed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["TUNABLES", "Tunable", "grid_axes", "leave_one_out", "page_section", "summary"]


@dataclass(frozen=True)
class Tunable:
    """A choice made once for every workload: the key that sets it, the values tried,
    the one shipped, and the schemes that read it."""

    name: str
    key: str
    schemes: tuple[str, ...]
    values: tuple[Any, ...]
    default: Any

    @property
    def slug(self) -> str:
        return self.name.lower().replace(" ", "-").replace("(", "").replace(")", "")


#: Every tunable choice of SepBIT, MiDAS, the write-count classes and LZGC that a
#: configuration key reaches, with the values the leave-one-out tries: the default in
#: the middle where it has a neighbour each side; MiDAS's groups and the write-count
#: classes only below it, since more streams would need another device (a higher
#: watermark) for every scheme of the study.
TUNABLES: tuple[Tunable, ...] = (
    Tunable("LZGC horizon", "gc.lifetime_horizon", ("lzgc-gd", "lzgc-cb"), (0.5, 1.0, 2.0), 1.0),
    Tunable("LZGC prior", "gc.lifetime_prior", ("lzgc-gd", "lzgc-cb"), (8.0, 32.0, 128.0), 32.0),
    Tunable("LZGC gate", "gc.lifetime_gate", ("lzgc-gd", "lzgc-cb"), (0.25, 0.5, 0.75), 0.5),
    Tunable(
        "LZGC page prior",
        "gc.lifetime_page_prior",
        ("lzgc-gd", "lzgc-cb"),
        (256.0, 1024.0, 4096.0),
        1024.0,
    ),
    Tunable(
        "LZGC class prior",
        "gc.lifetime_class_prior",
        ("lzgc-gd", "lzgc-cb"),
        (16.0, 64.0, 256.0),
        64.0,
    ),
    Tunable(
        "SepBIT batch", "ftl.placement", ("sepbit",), ("sepbit:4", "sepbit", "sepbit:64"), "sepbit"
    ),
    Tunable("MiDAS groups", "ftl.placement", ("midas",), ("midas:4", "midas:6", "midas"), "midas"),
    Tunable(
        "write-count classes",
        "ftl.placement",
        ("write-count",),
        ("write-count:2", "write-count:3", "write-count:4"),
        "write-count:4",
    ),
)


def grid_axes(t: Tunable) -> dict[str, list[Any]]:
    """The sweep axes of one tunable: its schemes × its values."""
    return {"scheme": list(t.schemes), t.key: list(t.values)}


def _score(wafs: dict[str, float], bases: dict[str, float], traces: Sequence[str]) -> float:
    logs = [math.log(wafs[t] / bases[t]) for t in traces if t in wafs and t in bases]
    return sum(logs) / len(logs) if logs else math.inf


def _best(
    by_value: dict[Any, dict[str, float]],
    bases: dict[str, float],
    traces: Sequence[str],
    t: Tunable,
) -> Any:
    # Only values measured on every trace compete; ties go to the default, then order.
    complete = [v for v in t.values if v in by_value and all(x in by_value[v] for x in traces)]
    order = sorted(complete, key=lambda v: (v != t.default, t.values.index(v)))
    return min(order, key=lambda v: _score(by_value[v], bases, traces)) if order else None


def leave_one_out(
    runs: list[dict[str, Any]], bases: dict[tuple[str, str], float], base_of: dict[str, str]
) -> list[dict[str, Any]]:
    """One row per tunable × scheme × trace: the base's WAF, the default's, the in-sample
    choice and its WAF, the leave-one-out choice and its WAF. `runs`: dicts with `tunable`
    (its name), `scheme`, `trace`, `value`, `waf` (failed or skipped runs left out);
    `bases`: the WAF of each (trace, scheme) the schemes are measured against;
    `base_of`: each tuned scheme's base."""
    out = []
    for t in TUNABLES:
        for scheme in t.schemes:
            mine = [r for r in runs if r["tunable"] == t.name and r["scheme"] == scheme]
            if not mine:
                continue
            by_value: dict[Any, dict[str, float]] = {}
            for r in mine:
                by_value.setdefault(r["value"], {})[r["trace"]] = r["waf"]
            base = base_of[scheme]
            b = {tr: w for (tr, s), w in bases.items() if s == base}
            traces = sorted({r["trace"] for r in mine} & set(b))
            chosen = _best(by_value, b, traces, t)
            for tr in traces:
                left = _best(by_value, b, [x for x in traces if x != tr], t)
                out.append(
                    {
                        "tunable": t.name,
                        "key": t.key,
                        "scheme": scheme,
                        "trace": tr,
                        "base": base,
                        "base waf": b[tr],
                        "default": t.default,
                        "default waf": by_value.get(t.default, {}).get(tr),
                        "in-sample": chosen,
                        "in-sample waf": by_value.get(chosen, {}).get(tr),
                        "left out": left,
                        "left-out waf": by_value.get(left, {}).get(tr),
                    }
                )
    return out


def summary(rows: list[dict[str, Any]], loss: float) -> list[dict[str, Any]]:
    """Per tunable × scheme: the default, the in-sample choice, the choices made with one
    trace left out, on how many traces that choice was not the default, and the worst
    change against the base, in-sample and left out (`loss`: the share above the base
    counted as a loss)."""
    out = []
    keys = dict.fromkeys((r["tunable"], r["scheme"]) for r in rows)
    for name, scheme in keys:
        mine = [r for r in rows if r["tunable"] == name and r["scheme"] == scheme]

        def worst(col: str, rs=mine) -> float:
            return max(r[col] / r["base waf"] - 1 for r in rs if r[col] is not None)

        out.append(
            {
                "tunable": name,
                "scheme": scheme,
                "default": mine[0]["default"],
                "in-sample": mine[0]["in-sample"],
                "left-out choices": ", ".join(
                    str(v) for v in dict.fromkeys(r["left out"] for r in mine)
                ),
                "moved": sum(r["left out"] != mine[0]["in-sample"] for r in mine),
                "traces": len(mine),
                "worst in-sample": worst("in-sample waf"),
                "worst left out": worst("left-out waf"),
                "losses left out": sum(
                    r["left-out waf"] is not None and r["left-out waf"] > r["base waf"] * (1 + loss)
                    for r in mine
                ),
            }
        )
    return out


def page_section(page, rows: list[dict[str, Any]], loss: float) -> None:
    """The study page's leave-one-out section: the summary per tunable and scheme, and
    the traces whose left-out choice differs from the in-sample one."""
    import pandas as pd

    page.heading("Leave-one-out")
    page.paragraph(
        "Each tunable chosen on every trace but one (the best mean log-WAF against the "
        "scheme's base), measured on the one left out; one tunable at a time, the others at "
        f"their defaults. A loss: WAF above the base by more than {loss:.1%}."
    )
    if not rows:
        page.paragraph("No tunable ran.")
        return
    pct = "{:+.2%}".format
    page.table(
        pd.DataFrame(summary(rows, loss)),
        name="leave-one-out",
        formats={"worst in-sample": pct, "worst left out": pct},
    )
    moved = [
        {
            "tunable": r["tunable"],
            "scheme": r["scheme"],
            "trace": r["trace"],
            "in-sample": r["in-sample"],
            "in-sample waf": r["in-sample waf"],
            "left out": r["left out"],
            "left-out waf": r["left-out waf"],
            "base waf": r["base waf"],
        }
        for r in rows
        if r["left out"] != r["in-sample"]
    ]
    if moved:
        page.heading("Where leaving the trace out moved the choice", level=3)
        num = "{:.4f}".format
        page.table(
            pd.DataFrame(moved),
            name="moved",
            formats={"in-sample waf": num, "left-out waf": num, "base waf": num},
        )
