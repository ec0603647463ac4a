"""Value analyses of a hashed trace (the dead-value pool paper, §II, Figs. 1-6).

The counting runs in Rust (`_core.analyze_values`); this module picks the format, turns the
result into tables, CSV files and an HTML page with plots.

>>> import zombiesim as zs                                            # doctest: +SKIP
>>> a = zs.analyze.values("nbdkit_hashlog_full_sqlite15s.log.gz")    # doctest: +SKIP
>>> a.pools[0]["reduction"]   # write reduction with an infinite pool  # doctest: +SKIP
"""

from __future__ import annotations

import csv
import gzip
import html
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import _core
from ._errors import InputError, make_error
from ._io import atomic_write

__all__ = ["DEFAULT_POOLS", "ValueAnalysis", "guess_format", "values", "write_outputs"]

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
                "pool": "infinite" if p["entries"] is None else f"lru-{p['entries']}",
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
            pool = "infinite" if p["entries"] is None else f"lru-{p['entries']}"
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


def figure(a: ValueAnalysis):
    """A matplotlib `Figure` with Figs. 2-6 of the paper for this trace."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(15, 8), layout="constrained")
    FigureCanvasAgg(fig)
    (ax_cdf, ax_inv, ax_int), (ax_reb, ax_pool, ax_miss) = fig.subplots(2, 3)
    for kind in ("writes", "invalidations", "rebirths"):
        pts = a.data[f"cdf_{kind}"]
        ax_cdf.plot([p[0] for p in pts], [p[1] for p in pts], label=kind, lw=1.6)
    ax_cdf.set_xlabel("fraction of unique values (most written first)")
    ax_cdf.set_ylabel("cumulative fraction")
    ax_cdf.set_title("Fig. 3: writes, invalidations, rebirths per value")
    ax_cdf.legend(fontsize=8)
    inv = a.data["invalidation_count_cdf"]
    ax_inv.step([p[0] for p in inv], [p[1] for p in inv], where="post")
    ax_inv.set_xlabel("invalidations of a value")
    ax_inv.set_ylabel("fraction of values with at most that many")
    ax_inv.set_title(f"Fig. 2: invalidation counts (live at end: {a.live_fraction:.0%})")
    rows = a.data["by_degree"]
    degrees = [r["degree"] for r in rows]
    for key, label in (
        ("mean_create_to_death", "creation → death"),
        ("mean_death_to_rebirth", "death → rebirth"),
    ):
        pts = [(r["degree"], r[key]) for r in rows if r[key] is not None]
        ax_int.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax_int.set_xlabel("popularity degree  floor(log2(writes + 1))")
    ax_int.set_ylabel("mean page writes between")
    ax_int.set_title("Fig. 4a-b: intervals by popularity")
    ax_int.legend(fontsize=8)
    ax_reb.bar(degrees, [r["rebirths"] for r in rows], color="#7fa8c9")
    ax_reb.set_xlabel("popularity degree")
    ax_reb.set_ylabel("rebirths")
    ax_reb.set_title("Fig. 4c: rebirths by popularity")
    prow = a.pool_rows()
    labels = [r["pool"].replace("lru-", "") for r in prow]
    bars = ax_pool.bar(range(len(prow)), [r["writes"] - r["avoided"] for r in prow])
    ax_pool.bar_label(bars, labels=[f"-{r['reduction']:.0%}" for r in prow], fontsize=7)
    ax_pool.set_xticks(range(len(prow)), labels, rotation=45, ha="right", fontsize=8)
    ax_pool.axhline(a.write_pages, color="grey", ls="--", lw=1, label="no pool")
    ax_pool.set_ylabel("page writes left")
    ax_pool.set_title("Figs. 1, 5: writes with an infinite / LRU pool")
    ax_pool.legend(fontsize=8)
    if len(a.data["pools"]) > 1:
        p = a.data["pools"][1]
        ax_miss.bar([d for d, _, _ in p["by_degree"]], [m for _, _, m in p["by_degree"]])
        ax_miss.set_title(f"Fig. 6: misses by popularity, LRU of {p['entries']:,} entries")
    ax_miss.set_xlabel("popularity degree")
    ax_miss.set_ylabel("pool misses")
    return fig


def write_outputs(a: ValueAnalysis, out_dir: str | os.PathLike[str]) -> list[str]:
    """Write `pools.csv`, `by_degree.csv`, `cdf.csv`, `misses.csv`, `analysis.json` and
    `index.html` (tables and plots) into `out_dir`; returns the paths written."""
    import json

    from .htmlreport import _STYLE, _png_base64

    os.makedirs(out_dir, exist_ok=True)
    files = {
        "pools.csv": _csv(a.pool_rows()),
        "by_degree.csv": _csv(a.data["by_degree"]),
        "cdf.csv": _csv(_cdf_rows(a)),
        "misses.csv": _csv(a.miss_rows()),
        "analysis.json": json.dumps(a.data, indent=2),
    }

    def table(rows: list[dict[str, Any]]) -> str:
        if not rows:
            return "<p>(none)</p>"
        head = "".join(f"<th>{html.escape(k)}</th>" for k in rows[0])
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in r.values()) + "</tr>"
            for r in rows
        )
        return f"<table><tr>{head}</tr>{body}</table>"

    png = _png_base64(figure(a))
    files["index.html"] = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>values of "
        f"{html.escape(a.path)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Values of {html.escape(a.path)} ({html.escape(a.format)})</h1>"
        f"<p>zombiesim {_core.__version__} · {a.write_pages:,} page writes, "
        f"{a.unique_values:,} unique values, {a.invalidations:,} invalidations, "
        f"{a.rebirths:,} rebirths; {a.live_fraction:.1%} of values live at the end.</p>"
        f"<img src='data:image/png;base64,{png}' alt='value analyses'>"
        f"<h2>Pools</h2>{table(a.pool_rows())}"
        f"<h2>By popularity degree</h2>{table(a.data['by_degree'])}"
        "</body></html>"
    )
    written = []
    for name, text in files.items():
        path = os.path.join(os.fspath(out_dir), name)
        atomic_write(path, text)
        written.append(path)
    return written


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)
