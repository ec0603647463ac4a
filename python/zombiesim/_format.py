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


def duration(s: Any) -> str:
    """A (simulated) time span in the unit that suits it: 850 ns, 12.3 µs, 4.56 ms, 7.89 s,
    8,056.68 s (2 h 14 min)."""
    if s is None:
        return "-"
    s = float(s)
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    if s < 120:
        return f"{s:.2f} s"
    minutes = int(s // 60)
    hours, minutes = divmod(minutes, 60)
    spelled = f"{hours} h {minutes} min" if hours else f"{minutes} min"
    return f"{s:,.2f} s ({spelled})"


def nanos(ns: Any) -> str:
    """Nanoseconds in the unit that suits them (see `duration`)."""
    return "-" if ns is None else duration(float(ns) / 1e9)


def rate(x: Any) -> str:
    """A rate with the digits that matter: 12,345.6, 42.57, 0.0867."""
    if x is None:
        return "-"
    x = float(x)
    if abs(x) >= 100:
        return f"{x:,.1f}"
    if abs(x) >= 1 or x == 0:
        return f"{x:.2f}"
    return f"{x:.3g}"


def percent(fraction: Any, digits: int = 1) -> str:
    return "-" if fraction is None else f"{fraction * 100:.{digits}f}%"


def placement_ids(p: Mapping[str, Any], shown: int = 16) -> str:
    """A trace's placement identifiers (`{writes, ids}`): `160 writes carry one; 2 ids: 0, 1`
    (the first `shown` ids, then `...`)."""
    ids = list(p["ids"])
    listed = ", ".join(str(i) for i in ids[:shown]) + (", ..." if len(ids) > shown else "")
    return (
        f"{count(p['writes'])} writes carry one; {count(len(ids))} "
        f"id{'' if len(ids) == 1 else 's'}: {listed}"
    )


def _percent2(fraction: Any) -> str:
    return percent(fraction, 2)


#: (heading, getter, formatter) of the comparison table, in display order.
COMPARE_COLUMNS: list[tuple[str, Callable[[Report], Any], Callable[[Any], str]]] = [
    ("WAF", lambda r: r.raw["waf"], lambda v: num(v, 3)),
    ("GC copies", lambda r: r.raw["gc"]["pages_copied"], count),
    ("erases", lambda r: r.raw["flash"]["erases"], count),
    ("copies/victim", lambda r: r.raw["gc"]["copies_per_victim"], lambda v: num(v, 1)),
    ("erase max", lambda r: r.raw["wear"]["erase_max"], count),
]


#: Extra columns when any run was in timing mode.
TIMING_COLUMNS: list[tuple[str, Callable[[Report], Any], Callable[[Any], str]]] = [
    ("read p99 µs", lambda r: _latency(r, "read", "p99_us"), lambda v: num(v, 1)),
    ("write p99 µs", lambda r: _latency(r, "write", "p99_us"), lambda v: num(v, 1)),
    ("elapsed s", lambda r: r.raw.get("elapsed_s"), lambda v: num(v, 3)),
]


#: Extra columns when any run had the host model (a buffer cache and notifications).
HOST_COLUMNS: list[tuple[str, Callable[[Report], Any], Callable[[Any], str]]] = [
    ("zombie copies", lambda r: r.raw["gc"]["zombie_pages_copied"], count),
    ("aware", lambda r: (r.raw.get("notify") or {}).get("awareness_mean"), percent),
]

#: Extra columns when any run involved ShadowGC (003): its accumulated GC latency (Fig. 7),
#: the share of relocated pages that were shadows (Fig. 8), GC reads served by the device
#: buffer, fast-mode programs, and refresh's share of flash programs.
SHADOW_COLUMNS: list[tuple[str, Callable[[Report], Any], Callable[[Any], str]]] = [
    ("GC latency s", lambda r: r.raw["gc"].get("latency_s"), lambda v: num(v, 1)),
    ("shadow copies", lambda r: _shadow_share(r), percent),
    ("buffer reads", lambda r: r.raw["gc"].get("buffer_reads"), count),
    ("fast programs", lambda r: r.raw["gc"].get("fast_programs"), count),
    ("refresh", lambda r: (r.raw.get("refresh") or {}).get("program_share"), _percent2),
]


def _merges(rep: Report) -> int | None:
    merges = (rep.raw.get("ftl") or {}).get("merges")
    return None if merges is None else sum(merges.values())


def _cmt_hits(rep: Report) -> float | None:
    cmt = (rep.raw.get("ftl") or {}).get("cmt")
    return None if cmt is None else cmt.get("hit_ratio")


#: The FTL's own columns, when any run used an FTL other than page mapping: 004's I/O
#: execution time, the merges, DFTL's cache hit ratio and translation programs.
FTL_COLUMNS: list[tuple[str, Callable[[Report], Any], Callable[[Any], str]]] = [
    ("I/O time s", lambda r: r.raw.get("io_time_s"), lambda v: num(v, 1)),
    ("merges", _merges, count),
    ("CMT hits", _cmt_hits, percent),
    (
        "translation",
        lambda r: r.raw["flash"]["programs_by_cause"].get("translation"),
        count,
    ),
]


def _tps(rep: Report) -> float | None:
    """Transactions per second; `None` for a run that committed none (no TPS, not 0)."""
    app = rep.raw.get("app") or {}
    return app.get("tps") if app.get("transactions") else None


#: The transaction rate, when any run committed transactions.
TPS_COLUMN = ("TPS", _tps, rate)

MIB = 1 << 20


def _fs(rep: Report) -> dict[str, Any] | None:
    return rep.raw.get("fs")


def _fs_mib(rep: Report) -> float | None:
    fs = _fs(rep)
    return None if fs is None else fs["bytes"] / MIB


def _fs_journal_mib(rep: Report) -> float | None:
    fs = _fs(rep)
    return None if fs is None else fs["io"]["journal"]["write_bytes"] / MIB


#: The file systems' device traffic (002 Figs. 2-3), when any run had an `fs:` workload;
#: the erases (002 Fig. 4) are among `COMPARE_COLUMNS` already.
FS_COLUMNS: list[tuple[str, Callable[[Report], Any], Callable[[Any], str]]] = [
    ("FS I/O requests", lambda r: (_fs(r) or {}).get("requests"), count),
    ("FS I/O MiB", _fs_mib, lambda v: num(v, 1)),
    ("journal MiB", _fs_journal_mib, lambda v: num(v, 1)),
]

#: `fs.io` kinds in display order.
FS_KINDS = ("data", "metadata", "journal")


def fs_summary(rep: Report) -> list[tuple[str, str]]:
    """The `run` summary's lines for an `fs:` workload (none for other workloads): the
    benchmark and journaling mode, the file-system operations, the journal's transactions
    and checkpoints, and the device requests and MiB by what they hold."""
    fs = _fs(rep)
    if fs is None:
        return []
    ops = fs["ops"]
    plural = {"create": "creates", "mkdir": "mkdirs", "delete": "deletes"}
    op_text = ", ".join(f"{count(ops[k])} {plural.get(k, k + 's')}" for k in ops if ops.get(k))
    io = fs["io"]

    def kind(name: str) -> str:
        t = io[name]
        reqs = t["read_requests"] + t["write_requests"]
        mib = (t["read_bytes"] + t["write_bytes"]) / MIB
        return f"{name} {count(reqs)} / {num(mib, 1)} MiB"

    lines = [
        (
            "file systems",
            f"{fs['bench']}, {fs['journal']} journaling, {fs['vms']} VMs x "
            f"{size(fs['partition_bytes'])} partitions ({size(fs['block_bytes'])} blocks, "
            f"journal {size(fs['journal_bytes'])} each)",
        ),
        ("FS ops", f"{count(fs['operations'])} ({op_text or 'none'})"),
        (
            "journal",
            f"{count(fs['transactions'])} transactions, {count(fs['checkpoints'])} "
            f"checkpoints, {count(fs['journal_blocks'])} log blocks written"
            + (
                f", {count(fs['vmm_journal_blocks'])} blocks journaled in VMM memory"
                if fs.get("vmm_journal_blocks")
                else ""
            ),
        ),
        (
            "FS I/O",
            f"{count(fs['requests'])} requests, {num(fs['bytes'] / MIB, 1)} MiB: "
            + ", ".join(kind(k) for k in FS_KINDS),
        ),
    ]
    return lines


def _latency(rep: Report, kind: str, key: str) -> Any:
    latency = rep.raw.get("latency")
    if latency is None or not latency[kind]["count"]:
        return None
    return latency[kind][key]


def _shadow_share(rep: Report) -> float | None:
    """The share of GC-relocated pages that were shadows (host, device or twin)."""
    shares = rep.copied_shares
    return None if shares is None else 1.0 - shares["live"]


#: The `gc.*` keys of the ShadowGC policies.
SHADOW_KEYS = ("shadow_reads", "fast_write", "skip_shadows")


def has_shadow(rep: Report) -> bool:
    """Whether a run involved ShadowGC: a host write buffer, a ShadowGC policy on, or GC
    relocating any page in a shadow state."""
    raw = rep.raw
    if raw.get("host_buffer") is not None:
        return True
    gc_config = (raw.get("run") or {}).get("config", {}).get("gc", {})
    if any(gc_config.get(k) for k in SHADOW_KEYS):
        return True
    share = _shadow_share(rep)
    return bool(share) or bool(raw["gc"].get("skipped"))


#: The heading of the oracle column (`oracle_shares`).
ORACLE_SHARE = "share of the oracle's gain captured"


def _is_oracle(rep: Report) -> bool:
    return rep.raw.get("oracle") is not None


def oracle_shares(reports: Mapping[str, Report]) -> dict[str, float | None] | None:
    """When the runs include the `oracle` policy (and another run before it): each run's
    share of the oracle's gain, `(WAF_baseline - WAF_run) / (WAF_baseline - WAF_oracle)`,
    the baseline being the first run and the oracle the first run of `gc.policy =
    "oracle"`; `None` for every run when the oracle gains nothing over the baseline (or a
    WAF is undefined). `None` without an oracle run."""
    labels = list(reports)
    oracle = next((k for k in labels if _is_oracle(reports[k])), None)
    if oracle is None or len(labels) < 2:
        return None
    base = reports[labels[0]].raw["waf"]
    best = reports[oracle].raw["waf"]
    gain = None if base is None or best is None else base - best
    return {
        k: None if not gain or gain <= 0 or r.raw["waf"] is None else (base - r.raw["waf"]) / gain
        for k, r in reports.items()
    }


def _share(fraction: Any) -> str:
    """A share of the oracle's gain, `—` when there is none to share."""
    return "—" if fraction is None else percent(fraction)


def compare_columns(
    reports: Mapping[str, Report],
) -> list[tuple[str, Callable[[Report], Any], Callable[[Any], str]]]:
    """The comparison table's columns for these runs: `COMPARE_COLUMNS`, plus
    `TIMING_COLUMNS` when any run was timed, `HOST_COLUMNS` when any had a notification
    channel, `SHADOW_COLUMNS` when any involved ShadowGC (`has_shadow`; the refresh
    column only when a device kept a clock), `FTL_COLUMNS` when any ran an FTL other than
    page mapping (merges only with a block-mapped one, the CMT columns only with DFTL),
    `FS_COLUMNS` when any ran an `fs:` workload, the TPS column when any committed
    transactions, and the share of the oracle's gain each run captured when one ran the
    `oracle` policy (`oracle_shares`)."""
    columns = list(COMPARE_COLUMNS)
    if any(r.timed for r in reports.values()):
        columns += TIMING_COLUMNS
    if any(r.raw.get("notify") is not None for r in reports.values()):
        columns += HOST_COLUMNS
    if any(has_shadow(r) for r in reports.values()):
        clock = any(r.raw.get("refresh") is not None for r in reports.values())
        columns += [c for c in SHADOW_COLUMNS if clock or c[0] != "refresh"]
    kinds = {(r.raw.get("ftl") or {}).get("kind", "page") for r in reports.values()}
    if kinds - {"page"}:
        columns += [
            c
            for c in FTL_COLUMNS
            if (c[0] not in ("CMT hits", "translation") or "dftl" in kinds)
            and (c[0] != "merges" or kinds & {"superblock", "fast", "block"})
        ]
    if any(_fs(r) is not None for r in reports.values()):
        columns += FS_COLUMNS
    if any((r.raw.get("app") or {}).get("transactions") for r in reports.values()):
        columns.append(TPS_COLUMN)
    shares = oracle_shares(reports)
    if shares is not None:
        by_report = {id(r): shares[k] for k, r in reports.items()}
        columns.append((ORACLE_SHARE, lambda r: by_report.get(id(r)), _share))
    return columns


def best_label(reports: Mapping[str, Report]) -> str | None:
    """The label with the lowest WAF among the runs that finished."""
    finished = {k: r for k, r in reports.items() if not r.interrupted and r.raw["waf"] is not None}
    if not finished:
        return None
    return min(finished, key=lambda k: finished[k].raw["waf"])
