"""`zombiesim trace formats|stats|convert|analyze`: list trace formats, summarize a trace,
convert one, analyse the values of a hashed one."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Mapping
from typing import Any

from rich.table import Table
from rich.text import Text

from .. import _core
from .. import trace as traces
from .._errors import InputError, make_error
from .._format import count, duration, nanos, num, percent, placement_ids, size
from . import trace_import
from .common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    check_writable,
    out,
    print_fields,
    progress_bar,
    trace_times,
    write_json,
)
from .parser import (
    add_command,
    device_option,
    format_option,
    on_error_option,
    page_size,
    reads,
    time_options,
    writes,
)

EPILOG = """\
examples:
  zombiesim trace formats
  zombiesim trace stats src1_0.csv --format msr
  zombiesim trace stats log.fio.gz --format fio --page-size 16KiB --json stats.json
  zombiesim trace stats ssdsim.trace --format disksim --time-scale 1e-6
  zombiesim trace convert src1_0.csv --from msr --to disksim -o src1_0.trace
  zombiesim trace convert src1_0.csv --from msr --to disksim > src1_0.trace
  zombiesim trace convert big.csv --from msr --to native -o big.zst --on-error skip
  zombiesim trace analyze --values nbdkit_hashlog_full_sqlite15s.log.gz --out sqlite-values
  zombiesim trace analyze --values device_writes_hashed.csv.gz --format pgbench-hashed \\
      --pools 10000,50000,100000

Files ending in .gz or .zst are decompressed on reading and compressed on writing.
exit codes: 0 ok, 2 bad input (a malformed line: `zombiesim: error: FILE:LINE: ...`)
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "trace",
        cmd_trace,
        help="block traces: statistics, conversion, formats",
        description="Summarize, convert and list block traces (docs/traces.md).",
        epilog=EPILOG,
    )
    trace_sub = p.add_subparsers(dest="trace_command", metavar="COMMAND")
    t = add_command(
        trace_sub,
        "stats",
        help="summarize a trace: mix, footprint, sizes, inter-arrival, write skew",
        description="Read a trace once and summarize it.",
        epilog=EPILOG,
    )
    reads(t.add_argument("file", metavar="FILE"))
    format_option(t, required=True)
    t.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    t.add_argument(
        "--page-size",
        metavar="SIZE",
        type=page_size,
        default=4096,
        help="page size for footprint and skew (default 4KiB)",
    )
    _read_options(t)
    time_options(t)
    writes(
        t.add_argument("--json", metavar="OUT", help="write the statistics as JSON (`-` = stdout)")
    )
    t = add_command(
        trace_sub,
        "convert",
        help="convert a trace to another format",
        description="Convert a trace between formats (to a file, or to stdout without -o).",
        epilog=EPILOG,
    )
    reads(t.add_argument("input", metavar="IN"))
    format_option(t, "--from", "from_format", "the input's format", required=True)
    t.add_argument(
        "--to",
        dest="to_format",
        metavar="FMT",
        required=True,
        choices=traces.writable_format_names(),
        help=f"the output's format: {', '.join(traces.writable_format_names())} "
        "(the hashed formats are read only)",
    )
    writes(
        t.add_argument(
            "--output",
            "-o",
            metavar="OUT",
            help="write here (atomically; .gz/.zst compress); default or `-`: stdout",
        )
    )
    _read_options(t)
    time_options(t)
    t.add_argument(
        "--lossy",
        action="store_true",
        help="leave out what the output format cannot hold (host events, content values, "
        "placement identifiers, trims into msr, ...) and count it, instead of stopping",
    )
    t.add_argument("--quiet", "-q", action="store_true", help="no `converted N records` line")
    t = add_command(
        trace_sub,
        "analyze",
        help="value analyses of a hashed trace (dead-value pool paper, §II)",
        description="CDFs of writes, invalidations and rebirths per unique value, intervals "
        "by popularity, and the write reduction of an infinite and of LRU dead-value pools "
        "(docs/content.md).",
        epilog=EPILOG,
    )
    reads(t.add_argument("--values", metavar="FILE", required=True, help="a hashed trace"))
    t.add_argument(
        "--format",
        choices=["fiu", "pgbench-hashed", "nbdkit-hashlog"],
        help="the trace's format (default: guessed from its first line)",
    )
    t.add_argument(
        "--pools",
        metavar="N,N,...",
        default=",".join(str(n) for n in range(100_000, 1_000_001, 100_000)),
        help="LRU pool sizes in entries (default 100000,...,1000000)",
    )
    t.add_argument("--limit", metavar="N", type=int, help="read only the first N records")
    writes(
        t.add_argument(
            "--out",
            metavar="DIR",
            help="write CSV files, analysis.json and index.html (plots and tables) here",
        ),
        folder=True,
    )
    writes(
        t.add_argument("--json", metavar="OUT", help="write the analysis as JSON (`-` = stdout)")
    )
    on_error_option(t, default="stop")
    trace_import.register(trace_sub)
    t = add_command(
        trace_sub,
        "list",
        help="the corpus of captured programs, with each trace's statistics",
        description="List the corpus of captured programs (traces/corpus/ in a checkout, "
        "or $ZOMBIESIM_CORPUS, or DIR): program, writes, ideal awareness, zombie lifetimes, "
        "write skew (docs/corpus.md).",
        epilog=EPILOG,
    )
    reads(
        t.add_argument("folder", metavar="DIR", nargs="?", help="the corpus folder"),
        folder=("*/trace.zst", "*/provenance.toml"),
    )
    writes(t.add_argument("--json", metavar="OUT", help="write the rows as JSON (`-` = stdout)"))
    t.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_command(
        trace_sub,
        "formats",
        help="list trace formats",
        description="List the trace formats.",
        epilog=EPILOG,
    )


def _read_options(parser: argparse.ArgumentParser) -> None:
    device_option(parser)
    on_error_option(parser, default="stop")


def cmd_trace(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    command = {
        "stats": _trace_stats,
        "convert": _trace_convert,
        "formats": _trace_formats,
        "list": _trace_list,
        "analyze": _trace_analyze,
        "import-capture": trace_import.cmd_import,
        "import-wal": trace_import.cmd_import,
        "import-sqlite": trace_import.cmd_import,
        "generate-notified": trace_import.cmd_generate,
    }
    if args.trace_command is None:
        args.subparser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    return command[args.trace_command](args)


# -- formats ---------------------------------------------------------------------------------


def _trace_formats(args: argparse.Namespace) -> int:
    table = Table("format", "description")
    for name, description in traces.formats():
        table.add_row(Text(name, style="bold"), Text(description))
    out.print(table)
    out.print(Text("Files ending in .gz or .zst are (de)compressed on the fly."))
    return EXIT_OK


# -- list ------------------------------------------------------------------------------------


def _trace_list(args: argparse.Namespace) -> int:
    from .. import corpus

    check_writable(args.json)
    found = corpus.entries(args.folder)
    rows = []
    with progress_bar(args) as bar:
        for e in found:

            def progress(phase: str, fraction: float | None, records: int, name=e.name) -> None:
                bar.update("list", f"reading {name} ({records:,} records)", 0, None)

            rows.append(corpus.summary(e, progress=progress))
    if args.json:
        write_json(args.json, json.dumps(rows, indent=2))
    if args.json == "-":
        return EXIT_OK
    table = Table(
        "trace",
        "program",
        "duration",
        "writes",
        "trims",
        "footprint",
        "ideal aware",
        "zombie life p50 / p90",
        "hottest 10%",
        "Gini",
        "ids",
        "size",
    )
    for r in rows:
        life = (
            f"{r['zombie_life_p50_s']:.3g} / {r['zombie_life_p90_s']:.3g} s"
            if r["zombie_life_p50_s"] is not None
            else "-"
        )
        table.add_row(
            Text(r["name"], style="bold"),
            Text(r["program"]),
            duration(r["duration_s"]),
            f"{count(r['writes'])} ({size(r['written_bytes'])})",
            f"{count(r['trims'])} ({size(r['trimmed_bytes'])})" if r["trims"] else "none",
            size(r["footprint_bytes"]),
            percent(r["ideal_awareness"]) if r["ideal_awareness"] is not None else "-",
            life,
            percent(r["hottest_10pct"]) if r["hottest_10pct"] is not None else "-",
            num(r["gini"], 3) if r["gini"] is not None else "-",
            str(r["placement_ids"]),
            size(r["trace_bytes"]),
        )
    out.print(table)
    out.print(Text(f"{len(rows)} traces in {args.folder or corpus.default_folder()}", style="dim"))
    return EXIT_OK


# -- stats -----------------------------------------------------------------------------------


def _trace_stats(args: argparse.Namespace) -> int:
    check_writable(args.json)
    with progress_bar(args) as bar:

        def progress(phase: str, fraction: float | None, records: int) -> None:
            bar.update("stats", f"reading {args.file} ({records:,} records)", 0, None)

        st = traces.stats(
            args.file,
            args.format,
            page_size=args.page_size,
            device=args.device,
            on_error=args.on_error,
            progress=progress,
            **trace_times(args),
        )
    if args.json:
        write_json(args.json, json.dumps(st, indent=2))
    if args.json == "-":
        return EXIT_OK
    print_fields(
        f"zombiesim {_core.__version__} · trace {st['format']}:{st['path']}", _stats_lines(st)
    )
    for i, text in enumerate(_histogram_lines(st)):
        out.print(Text(f"  {text}", style="bold" if i == 0 else None), soft_wrap=True)
    if args.json:
        out.print(Text(f"statistics written to {args.json}", style="dim"))
    return EXIT_OK


def _stats_lines(st: Mapping[str, Any]) -> list[tuple[str, str]]:
    page = st["page_size"]
    reads, writes, trims = st["reads"], st["writes"], st["trims"]
    ia, skew = st["interarrival"], st["write_skew"]
    lines = [
        (
            "records",
            f"{count(st['records'])} ({count(st['flushes'])} flushes), "
            f"{count(st['skipped_lines'])} skipped lines",
        ),
        ("duration", duration(st["duration_s"])),
        ("reads", f"{count(reads['count'])} ({size(reads['bytes'])})"),
        ("writes", f"{count(writes['count'])} ({size(writes['bytes'])})"),
        ("trims", f"{count(trims['count'])} ({size(trims['bytes'])})"),
        (
            "footprint",
            f"{count(st['unique_pages'])} unique pages ({size(st['footprint_bytes'])}); "
            f"written {count(st['written_pages'])} pages ({size(st['written_footprint_bytes'])})",
        ),
        (
            "inter-arrival",
            f"mean {nanos(ia['mean_ns'])}, p50 {nanos(ia['p50_ns'])}, "
            f"p99 {nanos(ia['p99_ns'])}, max {nanos(ia['max_ns'])}"
            if ia["count"]
            else "-",
        ),
    ]
    if skew["page_writes"]:
        shares = ", ".join(
            f"{pct}% {percent(skew[f'hottest_{pct}pct'])}" for pct in (1, 10, 20, 50)
        )
        lines.append(
            (
                "write skew",
                f"hottest {shares} of {count(skew['page_writes'])} page writes; "
                f"Gini {num(skew['gini'], 3)}",
            )
        )
    else:
        lines.append(("write skew", "- (no writes)"))
    lines.extend(_host_event_lines(st.get("host_events")))
    if st.get("placement"):
        lines.append(("placement", placement_ids(st["placement"])))
    lines.append(("page size", size(page)))
    return lines


def _host_event_lines(h: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """A notified trace's host events: dirtying, zombie lifetimes, ideal awareness."""
    if not h:
        return []
    life = h["zombie_lifetime"]
    return [
        (
            "host events",
            f"{count(h['dirty_events'])} dirty, {count(h['clean_events'])} clean; "
            f"{count(h['zombies'])} zombies born (page cache {count(h['page_cache_dirtied'])}, "
            f"database {count(h['database_dirtied'])}), "
            f"{count(h['dirty_at_end'])} dirty at the end",
        ),
        (
            "zombie life",
            f"dirty -> written: n={count(life['count'])}, p10 {life['p10_s']:.3g} s, "
            f"p50 {life['p50_s']:.3g} s, p90 {life['p90_s']:.3g} s, p99 {life['p99_s']:.3g} s"
            if life["count"]
            else "- (no dirty page was written)",
        ),
        (
            "ideal aware",
            f"{percent(h['ideal_awareness'])} of {count(h['overwrites'])} overwrites were "
            "announced by a dirty event (the most any channel can know)",
        ),
    ]


def _histogram_lines(st: Mapping[str, Any]) -> list[str]:
    """The request-size histogram as aligned lines: bucket, requests, share, a bar."""
    buckets = [b for b in st["size_histogram"] if b["count"]]
    if not buckets:
        return []
    total = sum(b["count"] for b in buckets)
    rows = [
        (f"≤ {size(b['le_bytes'])}", count(b["count"]), percent(b["count"] / total))
        for b in buckets
    ]
    w0 = max(13, *(len(r[0]) for r in rows))
    w1 = max(len("requests"), *(len(r[1]) for r in rows))
    w2 = max(len("share"), *(len(r[2]) for r in rows))
    lines = [f"{'request size':<{w0}} {'requests':>{w1}} {'share':>{w2}}"]
    for (bucket, n, share), b in zip(rows, buckets, strict=True):
        bar = "█" * max(1, round(b["count"] / total * 30))
        lines.append(f"{bucket:<{w0}} {n:>{w1}} {share:>{w2}} {bar}")
    return lines


# -- convert ---------------------------------------------------------------------------------


def _trace_convert(args: argparse.Namespace) -> int:
    options = {
        "device": args.device,
        "on_error": args.on_error,
        "lossy": args.lossy,
        **trace_times(args),
    }
    if args.output is not None and args.output != "-":
        check_writable(args.output)
        n = traces.convert(args.input, args.from_format, args.output, args.to_format, **options)
        where = args.output
    else:
        if args.to_format == "native" and sys.stdout.isatty():
            raise make_error(
                InputError,
                "not writing the binary native format to a terminal: give -o OUT or redirect",
                "io",
            )
        sys.stdout.flush()
        try:
            n = traces.convert(args.input, args.from_format, None, args.to_format, **options)
        except InputError as e:
            if "<stdout>" in str(e) and "roken pipe" in str(e):
                return EXIT_OK  # the reader went away (`... | head`)
            raise
        where = "stdout"
    if not args.quiet:
        left = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in n.dropped.items() if v)
        sys.stderr.write(
            f"converted {n} records ({args.from_format} -> {args.to_format}, {where})"
            + (f"; left out: {left}" if left else "")
            + "\n"
        )
    return EXIT_OK


# -- analyze ---------------------------------------------------------------------------------


def _trace_analyze(args: argparse.Namespace) -> int:
    from .. import analyze

    check_writable(args.json)
    try:
        pools = [int(x) for x in args.pools.split(",") if x.strip()]
    except ValueError:
        raise make_error(
            InputError, f"--pools {args.pools}: expected whole numbers, comma-separated", "config"
        ) from None
    if args.format is None:
        guessed = analyze.guess_format(args.values)
        sys.stderr.write(
            f"zombiesim: reading {args.values} as {guessed} (guessed; --format to choose)\n"
        )
    a = analyze.values(
        args.values, args.format, pools=pools, limit=args.limit, on_error=args.on_error
    )
    if args.json:
        write_json(args.json, json.dumps(a.data, indent=2))
    if args.json == "-":
        return EXIT_OK
    print_fields(
        f"zombiesim {_core.__version__} · values of {a.format}:{a.path}",
        [
            ("records", count(a.records)),
            ("page writes", f"{count(a.write_pages)} ({count(a.trim_pages)} trimmed pages)"),
            ("unique values", f"{count(a.unique_values)}; {percent(a.live_fraction)} live at end"),
            ("invalidations", count(a.invalidations)),
            ("rebirths", count(a.rebirths)),
        ],
    )
    pools_table = Table("pool", "entries", "writes left", "avoided", "reduction")
    for r in a.pool_rows():
        pools_table.add_row(
            r["pool"],
            "∞" if r["entries"] is None else count(r["entries"]),
            count(r["writes"] - r["avoided"]),
            count(r["avoided"]),
            percent(r["reduction"]),
        )
    out.print(pools_table)
    degrees = Table(
        "degree", "values", "writes", "invalidations", "rebirths", "create→death", "death→rebirth"
    )
    for r in a.by_degree:
        degrees.add_row(
            str(r["degree"]),
            count(r["values"]),
            count(r["writes"]),
            count(r["invalidations"]),
            count(r["rebirths"]),
            num(r["mean_create_to_death"], 1) if r["mean_create_to_death"] is not None else "-",
            num(r["mean_death_to_rebirth"], 1) if r["mean_death_to_rebirth"] is not None else "-",
        )
    out.print(degrees)
    cdf = a.cdf_writes
    top20 = next((y for x, y in cdf if x >= 0.2), None)
    if top20 is not None:
        out.print(Text(f"the most written 20% of values take {percent(top20)} of the writes"))
    if args.out:
        command = shlex.join(["zombiesim", *sys.argv[1:]])
        written = analyze.write_outputs(a, args.out, command=command)
        note = f"wrote {len(written)} files to {args.out} (index.html: plots and tables)"
        out.print(Text(note, style="dim"))
    return EXIT_OK
