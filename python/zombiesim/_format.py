"""Number formatting and the comparison table's columns, shared by the CLI and HTML report."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .report import Report


def count(n: Any) -> str:
    """12,345,678"""
    return "-" if n is None else f"{int(n):,}"


def num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def size(nbytes: float) -> str:
    """Binary units: 1.00 GiB."""
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            if unit == "B" or value == int(value):
                return f"{value:.0f} {unit}"
            return f"{value:.2f} {unit}"
        value /= 1024
    return f"{value:.2f} TiB"


def seconds(s: Any) -> str:
    if s is None:
        return "-"
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s"


#: (heading, getter, formatter) of the comparison table, in display order.
COMPARE_COLUMNS: list[tuple[str, Callable[[Report], Any], Callable[[Any], str]]] = [
    ("WAF", lambda r: r.raw["waf"], lambda v: num(v, 3)),
    ("GC copies", lambda r: r.raw["gc"]["pages_copied"], count),
    ("erases", lambda r: r.raw["flash"]["erases"], count),
    ("copies/victim", lambda r: r.raw["gc"]["copies_per_victim"], lambda v: num(v, 1)),
    ("erase max", lambda r: r.raw["wear"]["erase_max"], count),
]


def best_label(reports: Mapping[str, Report]) -> str | None:
    """The label with the lowest WAF among the runs that finished."""
    finished = {k: r for k, r in reports.items() if not r.interrupted}
    if not finished:
        return None
    return min(finished, key=lambda k: finished[k].raw["waf"])
