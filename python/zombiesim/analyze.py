"""Value analyses of a hashed trace (the dead-value pool paper, §II, Figs. 1-6).

The counting runs in Rust (`_core.analyze_values`); this module picks the format, turns the
result into tables, CSV files and an HTML page (`zombiesim.html.Page`: inline SVG
plots, each with its data as CSV).

>>> import zombiesim as zs                                            # doctest: +SKIP
>>> a = zs.analyze.values("nbdkit_hashlog_full_sqlite15s.log.gz")    # doctest: +SKIP
>>> a.pools[0]["reduction"]   # write reduction with an infinite pool  # doctest: +SKIP
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import _core
from ._errors import InputError, make_error
from ._io import atomic_write

__all__ = [
    "DEFAULT_POOLS",
    "ValueAnalysis",
    "guess_format",
    "html",
    "values",
    "views",
    "write_outputs",
]

#: LRU pool sizes analysed by default (001 Fig. 5: 100 K to 1 M entries).
DEFAULT_POOLS: tuple[int, ...] = tuple(range(100_000, 1_000_001, 100_000))

#: The trace formats that carry content hashes.
HASHED_FORMATS: tuple[str, ...] = ("fiu", "pgbench-hashed", "nbdkit-hashlog")


def guess_format(path: str | os.PathLike[str]) -> str:
    """The hashed format of `path`, from its first non-empty line: a `t_wall,...` header
    or seven comma-separated fields is `pgbench-hashed`, a line starting `W `, `F `, `T `,
    `Z ` or `R ` with a number after it is `nbdkit-hashlog`, nine fields are `fiu`."""
    name = os.fspath(path)
    try:
        if name.endswith(".zst"):
            raise make_error(
                InputError, f"{name}: cannot guess the format of a .zst file; give --format", "io"
            )
        opener = gzip.open if name.endswith(".gz") else open
        with opener(name, "rt", encoding="utf-8", errors="replace") as f:
            line = ""
            for raw in f:
                line = raw.strip()
                if line and not line.startswith("#"):
                    break
    except OSError as e:
        raise make_error(InputError, f"cannot read `{name}`: {e.strerror or e}", "io") from e
    fields = line.split()
    columns = [c.strip() for c in line.split(",")]
    if line.startswith("t_wall,") or (
        len(columns) == 7 and re.fullmatch(r"[0-9a-fA-F]{16}", columns[5]) is not None
    ):
        return "pgbench-hashed"
    if len(columns) == 7 and columns[3].lower() in {"read", "write"}:
        raise make_error(
            InputError,
            f"{name}:1: this looks like an MSR Cambridge trace, which carries no content "
            f"hashes; value analyses need a hashed trace ({', '.join(HASHED_FORMATS)})",
            "trace",
        )
    if len(fields) >= 2 and fields[0] in {"W", "F", "T", "Z", "R"} and fields[1].isdigit():
        return "nbdkit-hashlog"
    if len(fields) == 9:
        return "fiu"
    raise make_error(
        InputError,
        f"{name}:1: cannot tell the hashed format from `{line[:60]}`; give --format "
        f"({', '.join(HASHED_FORMATS)})",
        "trace",
    )


@dataclass(frozen=True)
class ValueAnalysis:
    """The analysis of one trace: the fields of `_core.analyze_values` as attributes."""

    data: dict[str, Any]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(name) from None

    def pool_rows(self) -> list[dict[str, Any]]:
        """One row per pool: `pool`, `entries`, `writes`, `avoided`, `reduction`."""
        return [
            {
                "pool": _pool_name(p["entries"]),
                "entries": p["entries"],
                "writes": p["writes"],
                "avoided": p["avoided"],
                "reduction": p["reduction"],
            }
            for p in self.data["pools"]
        ]

    def miss_rows(self) -> list[dict[str, Any]]:
        """Pool lookups by popularity degree for every pool (Fig. 6)."""
        rows = []
        for p in self.data["pools"]:
            pool = _pool_name(p["entries"])
            for degree, hits, misses in p["by_degree"]:
                rows.append({"pool": pool, "degree": degree, "hits": hits, "misses": misses})
        return rows


def values(
    path: str | os.PathLike[str],
    format: str | None = None,
    *,
    pools: Sequence[int] = DEFAULT_POOLS,
    limit: int | None = None,
    on_error: str = "stop",
) -> ValueAnalysis:
    """Analyse the written values of a hashed trace (`format` guessed when `None`)."""
    import json

    name = os.fspath(path)
    fmt = format or guess_format(name)
    sizes = [int(n) for n in pools]
    if any(n < 1 for n in sizes):
        raise make_error(InputError, "pool sizes must be at least 1 entry", "config")
    try:
        text = _core.analyze_values(name, fmt, sizes, limit=limit, on_error=on_error)
    except InputError as e:
        if format is not None:
            raise
        guessed = f" (read as {fmt}, guessed from the first line; give --format if that is wrong)"
        raise make_error(InputError, f"{e}{guessed}", getattr(e, "kind", "trace")) from e
    return ValueAnalysis(json.loads(text))


def workload(
    spec: str,
    logical_pages: int,
    *,
    pools: Sequence[int] = DEFAULT_POOLS,
    page_size: int = 4096,
    seed: int = 1,
    limit: int | None = None,
) -> ValueAnalysis:
    """Analyse the values a synthetic workload (`values:...`) writes on `logical_pages`
    pages, as for a hashed trace: a stand-in's statistics beside its trace's."""
    import json

    sizes = [int(n) for n in pools]
    if any(n < 1 for n in sizes):
        raise make_error(InputError, "pool sizes must be at least 1 entry", "config")
    text = _core.analyze_workload(
        str(spec), int(logical_pages), sizes, page_size=page_size, seed=seed, limit=limit
    )
    return ValueAnalysis(json.loads(text))


def _csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    if rows:
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return buf.getvalue()


def _cdf_rows(a: ValueAnalysis) -> list[dict[str, Any]]:
    return [
        {"curve": kind, "fraction_of_values": x, "fraction_of_events": y}
        for kind in ("writes", "invalidations", "rebirths")
        for x, y in a.data[f"cdf_{kind}"]
    ]


def _pool_name(entries: int | None) -> str:
    return "infinite" if entries is None else f"lru-{entries}"


def views(a: ValueAnalysis) -> list:
    """The analysis's figures (`zombiesim.html.View`s: CSV name, caption, matplotlib
    `Figure`), drawn with `zs.plot`'s panels, two a row, each panel's numbers recorded
    for the figure's CSV (`zs.plot.drawn`): Figs. 3 and 2 (values), 4a-b and 4c (by
    popularity degree), 1/5 and 6 (pools)."""
    import pandas as pd
    from matplotlib.ticker import MaxNLocator

    from . import plot
    from .html.views import View
    from .plot.figure import BAR_COLOUR, colour, no_data, record

    out = []

    fig, (ax_cdf, ax_inv) = plot.panels(1, 2)
    cdf = pd.DataFrame(_cdf_rows(a), columns=["curve", "fraction_of_values", "fraction_of_events"])
    for i, kind in enumerate(("writes", "invalidations", "rebirths")):
        part = cdf[cdf["curve"] == kind]
        ax_cdf.plot(
            part["fraction_of_values"],
            part["fraction_of_events"],
            label=kind,
            lw=1.6,
            color=colour(i),
        )
    ax_cdf.set_xlabel("fraction of unique values (most written first)")
    ax_cdf.set_ylabel("cumulative fraction of events")
    ax_cdf.set_title("Fig. 3: writes, invalidations, rebirths per value")
    ax_cdf.set_xlim(0, 1)
    ax_cdf.set_ylim(0, 1.02)
    ax_cdf.grid(alpha=0.3)
    plot.legend(ax_cdf)
    record(ax_cdf, cdf)
    inv = pd.DataFrame(
        a.data["invalidation_count_cdf"], columns=["invalidations", "fraction_of_values"]
    )
    ax_inv.step(inv["invalidations"], inv["fraction_of_values"], where="post", lw=1.6)
    ax_inv.set_xlabel("invalidations of a value")
    ax_inv.set_ylabel("fraction of values with at most that many")
    ax_inv.set_title(f"Fig. 2: invalidation counts (live at the end: {a.live_fraction:.0%})")
    ax_inv.set_ylim(0, 1.02)
    ax_inv.grid(alpha=0.3)
    record(ax_inv, inv)
    out.append(
        View(
            "values",
            "Fig. 3: the cumulative share of page writes, invalidations and rebirths taken "
            "by the unique values, most written first; Fig. 2: the share of values "
            "invalidated at most k times.",
            fig,
        )
    )

    fig, (ax_int, ax_reb) = plot.panels(1, 2)
    degrees = pd.DataFrame(a.data["by_degree"])
    intervals = []
    for i, (key, label) in enumerate(
        (("mean_create_to_death", "creation → death"), ("mean_death_to_rebirth", "death → rebirth"))
    ):
        rows = [(r["degree"], r[key]) for r in a.data["by_degree"] if r[key] is not None]
        ax_int.plot(
            [d for d, _ in rows], [v for _, v in rows], marker="o", label=label, color=colour(i)
        )
        intervals += [{"interval": label, "degree": d, "mean_page_writes": v} for d, v in rows]
    ax_int.set_xlabel("popularity degree  floor(log2(writes + 1))")
    ax_int.set_ylabel("mean page writes between")
    ax_int.set_title("Fig. 4a-b: intervals by popularity")
    ax_int.grid(alpha=0.3)
    plot.legend(ax_int)
    record(ax_int, pd.DataFrame(intervals, columns=["interval", "degree", "mean_page_writes"]))
    rebirths = (
        degrees[["degree", "rebirths"]]
        if len(degrees)
        else pd.DataFrame(columns=["degree", "rebirths"])
    )
    ax_reb.bar(rebirths["degree"], rebirths["rebirths"], color=BAR_COLOUR)
    ax_reb.set_xlabel("popularity degree")
    ax_reb.set_ylabel("rebirths")
    ax_reb.set_title("Fig. 4c: rebirths by popularity")
    record(ax_reb, rebirths)
    out.append(
        View(
            "popularity",
            "By popularity degree (floor(log2(writes + 1)) of a value): the mean page writes "
            "from a value's creation to its death and from its death to its rebirth "
            "(Fig. 4a-b), and its rebirths (Fig. 4c).",
            fig,
        )
    )

    fig, (ax_pool, ax_miss) = plot.panels(1, 2)
    pools = pd.DataFrame(a.pool_rows())
    pools["writes_left"] = pools["writes"] - pools["avoided"]
    xs = range(len(pools))
    bars = ax_pool.bar(xs, pools["writes_left"], color=BAR_COLOUR)
    ax_pool.bar_label(
        bars, labels=[f"-{r:.0%}" for r in pools["reduction"]], fontsize=plot.SMALL, padding=2
    )
    plot.category_ticks(ax_pool, [p.removeprefix("lru-") for p in pools["pool"]])
    ax_pool.axhline(a.write_pages, color="grey", ls="--", lw=1, label="no pool")
    ax_pool.set_xlabel("pool (entries)")
    ax_pool.set_ylabel("page writes left")
    ax_pool.set_title("Figs. 1, 5: writes with an infinite / LRU pool")
    ax_pool.margins(y=0.12)
    plot.legend(ax_pool)
    record(ax_pool, pools[["pool", "entries", "writes", "avoided", "writes_left", "reduction"]])
    lru = [p for p in a.data["pools"] if p["entries"] is not None]
    title = "Fig. 6: misses by popularity"
    if lru:
        p = min(lru, key=lambda q: q["entries"])
        misses = pd.DataFrame(p["by_degree"], columns=["degree", "hits", "misses"])
        ax_miss.bar(misses["degree"], misses["misses"], color=BAR_COLOUR)
        ax_miss.set_title(f"{title}, LRU of {p['entries']:,} entries")
        ax_miss.set_xlabel("popularity degree")
        ax_miss.set_ylabel("pool misses")
        record(
            ax_miss,
            misses.assign(pool=_pool_name(p["entries"]))[["pool", "degree", "hits", "misses"]],
        )
    else:
        no_data(ax_miss, "no LRU pool analysed", title)
    out.append(
        View(
            "pools",
            "The page writes left with an infinite and with LRU dead-value pools of "
            "--pools entries (no GC erasing anything; the bars say the write reduction, "
            "the dashed line the writes without a pool: Figs. 1, 5), and the pool misses "
            "by popularity degree of the smallest LRU pool (Fig. 6).",
            fig,
        )
    )
    for ax in (ax_inv, ax_int, ax_reb, ax_miss):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if not a.write_pages:  # a trace of reads and trims only: say so rather than draw axes
        for view in out:
            for ax in view.figure.axes:
                title = ax.get_title()
                ax.clear()
                no_data(ax, "no page writes in the trace", title)
    return out


def html(a: ValueAnalysis, *, command: str | None = None) -> str:
    """The analysis's page (`zombiesim.html.Page`): the summary, the figures as inline
    SVG with their data as CSV, the pools and by-degree tables, and the run (`command`
    when given)."""
    import pandas as pd

    from .html.page import Page
    from .html.views import add_views

    page = Page(f"Values of {a.path} ({a.format})")
    page.paragraph(
        f"{a.write_pages:,} page writes, {a.unique_values:,} unique values, "
        f"{a.invalidations:,} invalidations, {a.rebirths:,} rebirths; "
        f"{a.live_fraction:.1%} of values live at the end."
    )
    add_views(page, views(a))
    page.heading("Pools")
    page.table(pd.DataFrame(a.pool_rows()), name="pools")
    page.heading("By popularity degree")
    degrees = pd.DataFrame(a.data["by_degree"])
    if len(degrees):
        page.table(degrees, name="by_degree")
    else:
        page.paragraph("No values were written.")
    page.run_section(
        command=command,
        facts=[
            ("trace", a.path),
            ("format", a.format),
            ("records", f"{a.records:,}"),
            ("pools", ", ".join(_pool_name(p["entries"]) for p in a.data["pools"])),
        ],
    )
    return page.html()


def write_outputs(
    a: ValueAnalysis, out_dir: str | os.PathLike[str], *, command: str | None = None
) -> list[str]:
    """Write `pools.csv`, `by_degree.csv`, `cdf.csv`, `misses.csv`, `analysis.json` and
    `index.html` (the page `html(a, command=command)`: plots and tables) into `out_dir`;
    returns the paths written."""
    import json

    os.makedirs(out_dir, exist_ok=True)
    files = {
        "pools.csv": _csv(a.pool_rows()),
        "by_degree.csv": _csv(a.data["by_degree"]),
        "cdf.csv": _csv(_cdf_rows(a)),
        "misses.csv": _csv(a.miss_rows()),
        "analysis.json": json.dumps(a.data, indent=2),
        "index.html": html(a, command=command),
    }
    written = []
    for name, text in files.items():
        path = os.path.join(os.fspath(out_dir), name)
        atomic_write(path, text)
        written.append(path)
    return written
