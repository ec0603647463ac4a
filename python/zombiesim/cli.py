"""The `zombiesim` command line (also `python -m zombiesim`); see docs/cli.md.

Exit codes: 0 success, 1 a check failed (`validate` out of tolerance, an integrity check),
2 bad input (config, arguments, workload, files), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from . import _core
from . import trace as traces
from ._errors import ConfigError, InputError, SimulationInterrupted, ZombiesimError, make_error
from ._format import (
    best_label,
    compare_columns,
    count,
    duration,
    nanos,
    num,
    percent,
    rate,
    seconds,
    size,
)
from ._io import atomic_write
from ._progress import LazyProgress
from .api import DEFAULT_SEED, compare_configs, compare_reports, simulate, to_frame, validate
from .catalog import policies, preset_toml, presets, schemes, workload_common_keys, workloads
from .config import Config
from .report import Report
from .trace import TraceInput
from .workload import Workload
from .workload import parse as parse_workload

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

out = Console(highlight=False)
if not out.is_terminal and "COLUMNS" not in os.environ:
    out.width = 120  # pipes and files: do not squeeze tables into 80 columns
err = Console(stderr=True, highlight=False)


# -- helpers ---------------------------------------------------------------------------------


def _one_line(message: object) -> str:
    return " ".join(line.strip() for line in str(message).splitlines() if line.strip())


def _error(message: object) -> None:
    sys.stderr.write(f"zombiesim: error: {_one_line(message)}\n")
    sys.stderr.flush()


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value.strip()


def _name_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected a comma-separated list of names")
    return names


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {text!r}")
    return value


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number, 0 or more, got {text!r}")
    return value


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _page_size(text: str) -> int:
    try:
        return traces.parse_size(text, "--page-size")
    except ConfigError:
        raise argparse.ArgumentTypeError(
            f"expected a size above 0 (e.g. 4096, 4KiB, 16KiB), got {text!r}"
        ) from None


def _check_writable(*paths: str | None) -> None:
    """Fail before a long run, not after it, when an output file cannot be written."""
    for path in paths:
        if path is None or path == "-":
            continue
        directory = Path(path).parent
        if Path(path).is_dir():
            raise make_error(InputError, f"cannot write `{path}`: is a directory", "io")
        if not directory.is_dir():
            raise make_error(InputError, f"cannot write `{path}`: no directory `{directory}`", "io")
        if not os.access(directory, os.W_OK):
            raise make_error(InputError, f"cannot write `{path}`: permission denied", "io")


def _write_json(path: str, text: str) -> None:
    atomic_write(path, text if text.endswith("\n") else text + "\n")


def _load_config(args: argparse.Namespace) -> Config:
    """--preset / --config, then --scheme, then every --set in order."""
    if args.config is not None:
        cfg = Config.load(args.config)
    else:
        cfg = Config.preset(args.preset or "default")
    if getattr(args, "scheme", None):
        cfg = cfg.scheme(args.scheme)
    return cfg.override(args.set or [])


def _origin(args: argparse.Namespace) -> str:
    return f"config {args.config}" if args.config else f"preset {args.preset or 'default'}"


def _wants_progress(args: argparse.Namespace) -> bool:
    return not getattr(args, "quiet", False)


# -- argument parser -------------------------------------------------------------------------


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)


def _config_options(parser: argparse.ArgumentParser, scheme: bool = True) -> None:
    group = parser.add_argument_group("configuration")
    source = group.add_mutually_exclusive_group()
    source.add_argument("--preset", metavar="NAME", help="start from a preset (default: `default`)")
    source.add_argument(
        "--config", metavar="FILE", help="start from a TOML file (keys left out use defaults)"
    )
    if scheme:
        group.add_argument("--scheme", metavar="NAME", help="apply a scheme (`zombiesim schemes`)")
    group.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        type=_key_value,
        help="override one dotted key, e.g. gc.policy=cost-benefit (repeatable; applied last)",
    )


#: (option, attribute) of the options that only apply to a trace replay.
_TRACE_OPTIONS = [
    ("--format", "format"),
    ("--trace-device", "trace_device"),
    ("--remap", "remap"),
    ("--on-error", "on_error"),
    ("--limit", "limit"),
    ("--time-scale", "time_scale"),
    ("--time-offset", "time_offset"),
]


def _source_options(parser: argparse.ArgumentParser, required: bool) -> None:
    """`--workload SPEC` or `--trace FILE --format FMT` with the trace's options."""
    group = parser.add_argument_group("what to run (one of)")
    which = group.add_mutually_exclusive_group(required=required)
    which.add_argument(
        "--workload", "-w", metavar="SPEC", help="a synthetic workload, NAME:key=value,..."
    )
    which.add_argument("--trace", metavar="FILE", help="replay a block trace (needs --format)")
    tr = parser.add_argument_group("trace options (with --trace; see docs/traces.md)")
    tr.add_argument(
        "--format",
        metavar="FMT",
        choices=traces.format_names(),
        help=f"the trace's format: {', '.join(traces.format_names())}",
    )
    tr.add_argument(
        "--trace-device", metavar="N", type=_non_negative_int, help="keep only this device"
    )
    tr.add_argument(
        "--remap",
        choices=traces.REMAP_MODES,
        help="fit addresses onto the device: none (default; beyond it is an error), "
        "modulo, compact",
    )
    tr.add_argument(
        "--on-error",
        choices=traces.ON_ERROR,
        help="a malformed line: stop (default, exit 2 naming file:line) or skip and count it",
    )
    tr.add_argument(
        "--limit", metavar="N", type=_non_negative_int, help="replay only the first N records"
    )
    _time_options(tr)


def _source(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Workload | TraceInput:
    """The checked workload or trace the arguments ask for (usage errors exit 2)."""
    if args.trace is None:
        given = [opt for opt, attr in _TRACE_OPTIONS if getattr(args, attr) is not None]
        if given:
            parser.error(f"{', '.join(given)} only apply with --trace")
        if args.workload is None:
            parser.error("one of the arguments --workload --trace is required")
        return parse_workload(args.workload)
    if args.format is None:
        parser.error(
            f"--trace needs --format FMT (one of {', '.join(traces.format_names())}; "
            "`zombiesim trace formats`)"
        )
    return TraceInput(
        args.trace,
        args.format,
        device=args.trace_device,
        on_error=args.on_error or "stop",
        remap=args.remap or "none",
        limit=args.limit,
        time_scale=1.0 if args.time_scale is None else args.time_scale,
        time_offset=args.time_offset or 0.0,
    )


def _time_options(group: Any) -> None:
    group.add_argument(
        "--time-scale",
        metavar="X",
        type=_non_negative_float,
        help="multiply the trace's times (0.5 = twice as fast; timing mode, open replay)",
    )
    group.add_argument(
        "--time-offset",
        metavar="S",
        type=_finite_float,
        help="add S seconds to every time after scaling (times below 0 become 0)",
    )


def _describe(source: Workload | TraceInput) -> str:
    return source.describe() if isinstance(source, TraceInput) else str(source)


def _seed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default {DEFAULT_SEED})"
    )


def _jobs_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs", "-j", type=int, metavar="N", help="parallel runs (default: one per CPU)"
    )


RUN_EPILOG = """\
examples:
  zombiesim run --workload uniform:drive_writes=2
  zombiesim run --preset default --set gc.policy=cost-benefit \\
      --workload hotcold:r=0.9,f=0.1,drive_writes=3 --json out.json
  zombiesim run --config my.toml --scheme fifo --set ftl.over_provisioning=0.28 \\
      --workload uniform --seed 7 --verify
  zombiesim run --set flash.page_size=16KiB --print-config
  zombiesim run --workload zipf:theta=0.99 --json - --reproducible | jq .waf
  zombiesim run --set timing.enabled=true --workload uniform:drive_writes=1,read=0.3
  zombiesim run --set timing.enabled=true --trace src1_0.csv --format msr --remap modulo
  zombiesim run --trace log.fio.gz --format fio --remap compact --on-error skip --limit 100000

exit codes: 0 ok, 1 integrity check failed (--verify), 2 bad input (also a malformed trace
line: `zombiesim: error: FILE:LINE: ...`), 130 interrupted
"""

COMPARE_EPILOG = """\
examples:
  zombiesim compare --policies fifo,greedy,cost-benefit --workload hotcold:r=0.9,f=0.1
  zombiesim compare --schemes baseline,cost-benefit --workload uniform:drive_writes=2 \\
      --csv results.csv --report results.html
  zombiesim compare --set flash.blocks_per_plane=64 --policies greedy,d-choices:8,random \\
      --workload zipf --jobs 2 --json results.json
  zombiesim compare --set timing.enabled=true --policies greedy,cost-benefit \
      --trace src1_0.csv --format msr --remap modulo --report trace.html

Every run uses the same workload (or trace) and seed, so each sees the same request stream.
With timing.enabled=true the table adds read/write p99 latency and simulated elapsed time.
exit codes: 0 ok, 2 bad input, 130 interrupted
"""

VALIDATE_EPILOG = """\
Runs uniform-random-write cases and checks the simulated write amplification against the
analytic models (within the tolerance shown).

examples:
  zombiesim validate              # quick set, about a second
  zombiesim validate --full -j 8 --json validation.json

exit codes: 0 all cases within tolerance, 1 a case is outside it, 130 interrupted
"""

DEMO_EPILOG = """\
Compares victim policies (fifo, greedy, cost-benefit, d-choices:10, random) on the default
preset under a hot/cold workload (90% of writes to 10% of the space) and writes
DIR/demo.html (plots and table) and DIR/demo.csv.

examples:
  zombiesim demo
  zombiesim demo --out /tmp/demo --quick
"""

TRACE_EPILOG = """\
examples:
  zombiesim trace formats
  zombiesim trace stats src1_0.csv --format msr
  zombiesim trace stats log.fio.gz --format fio --page-size 16KiB --json stats.json
  zombiesim trace convert src1_0.csv --from msr --to disksim -o src1_0.trace
  zombiesim trace convert src1_0.csv --from msr --to disksim > src1_0.trace
  zombiesim trace convert big.csv --from msr --to native -o big.zst --on-error skip

Files ending in .gz or .zst are decompressed on reading and compressed on writing.
exit codes: 0 ok, 2 bad input (a malformed line: `zombiesim: error: FILE:LINE: ...`)
"""

LIST_EPILOG = """\
examples:
  zombiesim presets
  zombiesim presets show default > my.toml
  zombiesim schemes
  zombiesim workloads
  zombiesim policies
"""


def _trace_format_option(
    parser: argparse.ArgumentParser, flag: str, dest: str, help_text: str
) -> None:
    parser.add_argument(
        flag,
        dest=dest,
        metavar="FMT",
        required=True,
        choices=traces.format_names(),
        help=f"{help_text}: {', '.join(traces.format_names())}",
    )


def _trace_read_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--device", metavar="N", type=_non_negative_int, help="keep only this device"
    )
    parser.add_argument(
        "--on-error",
        choices=traces.ON_ERROR,
        default="stop",
        help="a malformed line: stop (default, exit 2 naming file:line) or skip and count it",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zombiesim",
        description="An SSD simulator whose garbage collector knows what the buffers "
        "above the flash hold.",
        epilog="Run `zombiesim COMMAND --help` for examples. Start with `zombiesim demo`.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"zombiesim {_core.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "run",
        help="run one simulation",
        description="Run one simulation and print a summary.",
        epilog=RUN_EPILOG,
        formatter_class=_Formatter,
    )
    _config_options(p)
    _source_options(p, required=False)
    _seed_option(p)
    p.add_argument("--json", metavar="OUT", help="write the report as JSON (`-` = stdout)")
    p.add_argument("--verify", action="store_true", help="run the integrity oracle (slower)")
    p.add_argument(
        "--reproducible", action="store_true", help="leave wall times out (byte-identical JSON)"
    )
    p.add_argument(
        "--print-config", action="store_true", help="print the resolved config as TOML and exit"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no summary, no progress bar")
    p.set_defaults(func=cmd_run, subparser=p)

    p = sub.add_parser(
        "compare",
        help="run several policies or schemes on one workload or trace",
        description="Run several policies or schemes on one workload (or trace) and seed; "
        "print a table, optionally write CSV, JSON and an HTML report with plots.",
        epilog=COMPARE_EPILOG,
        formatter_class=_Formatter,
    )
    _config_options(p, scheme=False)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--policies", metavar="A,B,...", type=_name_list, help="victim policies")
    which.add_argument("--schemes", metavar="A,B,...", type=_name_list, help="schemes")
    _source_options(p, required=True)
    _seed_option(p)
    _jobs_option(p)
    p.add_argument("--csv", metavar="OUT", help="write one row per run (every report field)")
    p.add_argument("--json", metavar="OUT", help="write {label: report} as JSON (`-` = stdout)")
    p.add_argument("--report", metavar="OUT.html", help="write an HTML report with plots")
    p.add_argument("--quiet", "-q", action="store_true", help="no table, no progress bar")
    p.set_defaults(func=cmd_compare, subparser=p)

    p = sub.add_parser(
        "validate",
        help="check simulated WAF against the analytic models",
        description="Check simulated write amplification against the analytic models.",
        epilog=VALIDATE_EPILOG,
        formatter_class=_Formatter,
    )
    p.add_argument(
        "--full", action="store_true", help="the whole table (minutes) not the quick set"
    )
    _jobs_option(p)
    p.add_argument("--json", metavar="OUT", help="write the rows as JSON (`-` = stdout)")
    p.add_argument("--quiet", "-q", action="store_true", help="no table, no progress bar")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "presets",
        help="list presets, or show one as TOML",
        description="List the built-in presets, or print one as TOML.",
        epilog=LIST_EPILOG,
        formatter_class=_Formatter,
    )
    presets_sub = p.add_subparsers(dest="presets_command", metavar="show")
    show = presets_sub.add_parser("show", help="print a preset as TOML")
    show.add_argument("name", metavar="NAME")
    p.set_defaults(func=cmd_presets)

    for name, func, help_text in [
        ("schemes", cmd_schemes, "list schemes and what each sets"),
        ("workloads", cmd_workloads, "list synthetic workloads and their keys"),
        ("policies", cmd_policies, "list victim policies"),
    ]:
        p = sub.add_parser(
            name,
            help=help_text,
            description=help_text[0].upper() + help_text[1:] + ".",
            epilog=LIST_EPILOG,
            formatter_class=_Formatter,
        )
        p.set_defaults(func=func)

    p = sub.add_parser(
        "trace",
        help="block traces: statistics, conversion, formats",
        description="Summarize, convert and list block traces (docs/traces.md).",
        epilog=TRACE_EPILOG,
        formatter_class=_Formatter,
    )
    trace_sub = p.add_subparsers(dest="trace_command", metavar="COMMAND")
    t = trace_sub.add_parser(
        "stats",
        help="summarize a trace: mix, footprint, sizes, inter-arrival, write skew",
        description="Read a trace once and summarize it.",
        epilog=TRACE_EPILOG,
        formatter_class=_Formatter,
    )
    t.add_argument("file", metavar="FILE")
    _trace_format_option(t, "--format", "format", "the trace's format")
    t.add_argument(
        "--page-size",
        metavar="SIZE",
        type=_page_size,
        default=4096,
        help="page size for footprint and skew (default 4KiB)",
    )
    _trace_read_options(t)
    t.add_argument("--json", metavar="OUT", help="write the statistics as JSON (`-` = stdout)")
    t = trace_sub.add_parser(
        "convert",
        help="convert a trace to another format",
        description="Convert a trace between formats (to a file, or to stdout without -o).",
        epilog=TRACE_EPILOG,
        formatter_class=_Formatter,
    )
    t.add_argument("input", metavar="IN")
    _trace_format_option(t, "--from", "from_format", "the input's format")
    _trace_format_option(t, "--to", "to_format", "the output's format")
    t.add_argument(
        "--output",
        "-o",
        metavar="OUT",
        help="write here (atomically; .gz/.zst compress); default or `-`: stdout",
    )
    _trace_read_options(t)
    _time_options(t)
    t.add_argument("--quiet", "-q", action="store_true", help="no `converted N records` line")
    trace_sub.add_parser(
        "formats",
        help="list trace formats",
        description="List the trace formats.",
        epilog=TRACE_EPILOG,
        formatter_class=_Formatter,
    )
    p.set_defaults(func=cmd_trace, trace_parser=p)

    p = sub.add_parser(
        "demo",
        help="compare policies on the default preset; table + HTML report",
        description="The main job on the embedded default preset.",
        epilog=DEMO_EPILOG,
        formatter_class=_Formatter,
    )
    p.add_argument(
        "--out", metavar="DIR", default="zombiesim-demo", help="output directory (./zombiesim-demo)"
    )
    p.add_argument("--quick", action="store_true", help="a shorter run (same device)")
    _jobs_option(p)
    _seed_option(p)
    p.set_defaults(func=cmd_demo)
    return parser


# -- run -------------------------------------------------------------------------------------


def _summary(rep: Report) -> list[tuple[str, str]]:
    """The `run` summary as (heading, text) lines."""
    r = rep.raw
    host, flash, gc, wear = r["host"], r["flash"], r["gc"], r["wear"]
    dev, pre, run = r["device"], r["precondition"], r["run"]
    status = "interrupted" if run["interrupted"] else "complete"
    by_cause = flash["programs_by_cause"]
    lines = [
        ("WAF", num(r["waf"], 3)),
        (
            "host",
            f"{count(host['write_pages'])} page writes "
            f"({size(host['write_pages'] * dev['page_size'])}), {count(host['read_pages'])} "
            f"reads, {count(host['trim_pages'])} trims, {count(host['requests'])} requests",
        ),
        (
            "flash",
            f"{count(flash['programs'])} programs (host {count(by_cause['host'])} + GC "
            f"{count(by_cause['gc'])}), {count(flash['reads'])} reads, "
            f"{count(flash['erases'])} erases",
        ),
        (
            "GC",
            f"{count(gc['pages_copied'])} pages copied from {count(gc['victims'])} victims "
            f"({num(gc['copies_per_victim'], 1)} copies/victim), "
            f"{count(gc['invocations'])} invocations",
        ),
        (
            "wear",
            f"erases per block: min {count(wear['erase_min'])}, "
            f"mean {num(wear['erase_mean'], 1)}, max {count(wear['erase_max'])}",
        ),
    ]
    lines += _timing_summary(rep) + _trace_summary(rep)
    lines += [
        (
            "device",
            f"{count(dev['blocks'])} blocks x {dev['pages_per_block']} pages x "
            f"{size(dev['page_size'])} = {size(dev['physical_pages'] * dev['page_size'])}, "
            f"OP {dev['over_provisioning'] * 100:.1f}% "
            f"(effective {dev['effective_over_provisioning'] * 100:.1f}%)",
        ),
        (
            "precondition",
            f"{count(pre['host_write_pages'])} page writes ({num(pre['drive_writes'], 2)} "
            f"drive writes), WAF {num(pre['waf'], 3)}, "
            f"{'steady' if pre['steady'] else 'not steady'}",
        ),
        (
            "run",
            f"wall {seconds(run['wall_s'])} (measured phase {seconds(run['measured_wall_s'])}),"
            f" {run['progress'] * 100:.0f}% {status}" + (", verified" if run["verified"] else ""),
        ),
    ]
    return lines


def _utilisation(values: Sequence[float]) -> str:
    if not values:
        return "-"
    return f"mean {percent(sum(values) / len(values))}, max {percent(max(values))}"


def _timing_summary(rep: Report) -> list[tuple[str, str]]:
    """Timing mode: simulated elapsed time, throughput, GC busy time, utilisation."""
    r = rep.raw
    if not rep.timed:
        return []
    lines = [("elapsed", f"{duration(r['elapsed_s'])} simulated (measured phase)")]
    tp = r.get("throughput")
    if tp is not None:
        lines.append(
            (
                "throughput",
                f"{rate(tp['iops'])} IOPS ({rate(tp['read_iops'])} read, "
                f"{rate(tp['write_iops'])} write), {rate(tp['mb_s'])} MB/s",
            )
        )
    timing = r.get("timing")
    if timing is not None:
        lines.append(
            ("GC busy", f"{duration(timing['gc_busy_s'])} of flash time (summed over dies)")
        )
        lines.append(
            (
                "utilisation",
                f"channels {_utilisation(timing['channel_utilisation'])}; "
                f"dies {_utilisation(timing['die_utilisation'])}",
            )
        )
    return lines


def _trace_summary(rep: Report) -> list[tuple[str, str]]:
    """Trace replays: records, flushes, skipped lines (and examples), remapping."""
    t = rep.raw.get("trace")
    if t is None:
        return []
    lines = [
        (
            "trace",
            f"{count(t['records'])} records, {count(t['flushes'])} flushes, "
            f"{count(t['skipped_lines'])} skipped lines",
        )
    ]
    for example in t.get("skipped_examples") or []:
        lines.append(("", f"skipped line {example}"))
    rm = t["remapped"]
    text = (
        f"{t['remap']}: {count(rm['remapped_requests'])} of {count(rm['requests'])} requests "
        f"and {count(rm['remapped_pages'])} of {count(rm['pages'])} pages moved"
    )
    if t["remap"] == "compact":
        text += f", {count(rm['distinct_pages'])} distinct pages"
    lines.append(("remap", text))
    return lines


def _latency_table(rep: Report) -> Table | None:
    """Read and write latency in µs: count, mean, p50, p99, p99.9, max."""
    latency = rep.raw.get("latency")
    if latency is None:
        return None
    table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 0), header_style="bold")
    table.add_column("latency µs", min_width=13)
    for heading in ("count", "mean", "p50", "p99", "p99.9", "max"):
        table.add_column(heading, justify="right")
    for kind in ("read", "write"):
        lat = latency[kind]
        if lat["count"]:
            cells = [num(lat[k], 1) for k in ("mean_us", "p50_us", "p99_us", "p999_us", "max_us")]
        else:
            cells = ["-"] * 5
        table.add_row(kind, count(lat["count"]), *cells)
    return table


def _print_summary(rep: Report, origin: str) -> None:
    run = rep.raw["run"]
    policy = run["config"]["gc"]["policy"]
    out.print(
        Text(
            f"zombiesim {run['version']} · {origin} · {policy} · {run['workload']} · "
            f"seed {run['seed']}",
            style="dim",
        ),
        soft_wrap=True,
    )
    for heading, text in _summary(rep):
        line = Text()
        line.append(f"  {heading:<14}", style="bold")
        line.append(text, style="bold" if heading == "WAF" else None)
        out.print(line, soft_wrap=True)
    table = _latency_table(rep)
    if table is not None:
        out.print(Padding(table, (0, 0, 0, 2), expand=False))


def cmd_run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    cfg = _load_config(args)
    if args.print_config:
        sys.stdout.write(cfg.to_toml())
        return EXIT_OK
    source = _source(args, args.subparser)
    _check_writable(args.json)
    to_stdout = args.json == "-"
    show = not args.quiet and not to_stdout
    with LazyProgress(enabled=False if args.quiet else None) as bar:
        try:
            rep = simulate(
                cfg,
                source,
                seed=args.seed,
                verify=args.verify,
                reproducible=args.reproducible,
                progress=bar.simulation_callback("run"),
            )
        except SimulationInterrupted as e:
            bar.close()
            if args.json and e.report is not None:
                _write_json(args.json, e.report.to_json())
                _interrupted(f"partial report written to {args.json}" if not to_stdout else "")
            else:
                _interrupted()
            return EXIT_INTERRUPTED
    if args.json:
        _write_json(args.json, rep.to_json())
    if show:
        _print_summary(rep, _origin(args))
        if args.json:
            out.print(Text(f"report written to {args.json}", style="dim"))
    return EXIT_OK


def _interrupted(detail: str = "") -> None:
    sys.stderr.write("zombiesim: interrupted" + (f" ({detail})" if detail else "") + "\n")


# -- compare ---------------------------------------------------------------------------------


def _compare_table(reports: Mapping[str, Report], title: str | None = None) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("label", no_wrap=True)
    columns = compare_columns(reports)
    for heading, _, _ in columns:
        table.add_column(heading, justify="right")
    best = best_label(reports)
    for label, rep in reports.items():
        cells = [fmt(get(rep)) for _, get, fmt in columns]
        name = label + (" (interrupted)" if rep.interrupted else "")
        style = "bold green" if label == best and len(reports) > 1 else None
        table.add_row(Text(name), *cells, style=style)
    if best is not None and len(reports) > 1:
        table.caption = f"best WAF: {best}"
        table.caption_justify = "left"
    return table


def _multi_progress(bar: LazyProgress) -> Callable[[str, str, float | None, int], None]:
    def progress(label: str, phase: str, fraction: float | None, pages: int) -> None:
        bar.update(
            label, f"{label} {phase}", fraction or 0.0, 1.0 if fraction is not None else None
        )

    return progress


def _write_compare_outputs(
    args: argparse.Namespace, reports: Mapping[str, Report], cfg: Config, spec: str
) -> list[str]:
    written = []
    if args.json:
        _write_json(args.json, json.dumps({k: r.raw for k, r in reports.items()}, indent=2))
        written.append(args.json)
    if args.csv:
        atomic_write(args.csv, to_frame(reports).to_csv(index=False))
        written.append(args.csv)
    if args.report:
        from .htmlreport import write_comparison_html

        write_comparison_html(
            args.report,
            reports,
            title=f"zombiesim compare: {', '.join(reports)}",
            config_toml=cfg.to_toml(),
            workload=spec,
            seed=args.seed,
        )
        written.append(args.report)
    return [w for w in written if w != "-"]


def cmd_compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    cfg = _load_config(args)
    source = _source(args, args.subparser)
    spec = _describe(source)
    _check_writable(args.json, args.csv, args.report)
    variants = compare_configs(cfg, policies=args.policies, schemes=args.schemes)
    show = not args.quiet and "-" not in (args.json, args.csv, args.report)
    with LazyProgress(enabled=False if args.quiet else None) as bar:
        try:
            reports = compare_reports(
                workload=source if isinstance(source, Workload) else None,
                trace=source if isinstance(source, TraceInput) else None,
                configs=variants,
                seed=args.seed,
                jobs=args.jobs,
                progress=_multi_progress(bar),
            )
        except SimulationInterrupted as e:
            bar.close()
            written = _write_compare_outputs(args, e.reports, cfg, spec) if e.reports else []
            _interrupted(f"partial results written to {', '.join(written)}" if written else "")
            return EXIT_INTERRUPTED
    written = _write_compare_outputs(args, reports, cfg, spec)
    if show:
        out.print(_compare_table(reports, f"{spec} · seed {args.seed} · {_origin(args)}"))
        for path in written:
            out.print(Text(f"wrote {path}", style="dim"))
    return EXIT_OK


# -- validate --------------------------------------------------------------------------------


def _validate_table(df: Any) -> Table:
    tol = df.attrs.get("tolerance", 0.02)
    table = Table(title=f"analytic validation (tolerance {tol * 100:.1f}%)", title_justify="left")
    table.add_column("policy", no_wrap=True)
    for heading in ("OP", "b", "blocks", "simulated", "analytic", "nominal", "error %"):
        table.add_column(heading, justify="right")
    table.add_column("ok", justify="center")
    for row in df.to_dict("records"):
        error = row.get("error")
        table.add_row(
            Text(str(row["policy"])),
            num(row["over_provisioning"], 3),
            str(row["pages_per_block"]),
            count(row["blocks"]),
            num(row["simulated_waf"], 3),
            num(_none(row.get("analytic_waf")), 3),
            num(_none(row.get("analytic_waf_nominal")), 3),
            "-" if _none(error) is None else f"{error * 100:.2f}",
            Text("yes", style="green") if row["ok"] else Text("NO", style="bold red"),
        )
    return table


def _none(value: Any) -> Any:
    """NaN (how pandas stores a JSON null in a float column) back to None."""
    return None if value is None or value != value else value


def _rows_json(df: Any) -> str:
    rows = [{k: _none(v) for k, v in row.items()} for row in df.to_dict("records")]
    return json.dumps(rows, indent=2)


def cmd_validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    _check_writable(args.json)
    show = not args.quiet and args.json != "-"
    with LazyProgress(enabled=False if args.quiet else None) as bar:

        def progress(done: int, total: int) -> None:
            bar.update("validate", f"validate ({done}/{total} cases)", done, total)

        try:
            df = validate(args.full, jobs=args.jobs, progress=progress)
        except SimulationInterrupted as e:
            bar.close()
            if args.json and e.report is not None:
                _write_json(args.json, _rows_json(e.report))
            _interrupted()
            return EXIT_INTERRUPTED
    if args.json:
        _write_json(args.json, _rows_json(df))
    ok = bool(df.attrs["ok"])
    if show:
        out.print(_validate_table(df))
        passed = int(df["ok"].sum())
        style = "green" if ok else "bold red"
        out.print(Text(f"{passed}/{len(df)} cases within tolerance", style=style))
    return EXIT_OK if ok else EXIT_CHECK_FAILED


# -- listings --------------------------------------------------------------------------------


def cmd_presets(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.presets_command == "show":
        sys.stdout.write(preset_toml(args.name))
        return EXIT_OK
    table = Table("preset", "description")
    for p in presets():
        table.add_row(Text(p.name, style="bold"), Text(p.description))
    out.print(table)
    return EXIT_OK


def cmd_schemes(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    table = Table("scheme", "description", "sets")
    for s in schemes():
        sets = "\n".join(f"{k} = {v}" for k, v in s.settings.items())
        table.add_row(Text(s.name, style="bold"), Text(s.description), Text(sets))
    out.print(table)
    return EXIT_OK


def cmd_workloads(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    table = Table("workload", "keys (defaults)", "description")
    for w in workloads():
        table.add_row(Text(w.name, style="bold"), Text(w.keys or "-"), Text(w.description))
    out.print(table)
    out.print(Text(f"Every workload also takes: {workload_common_keys()}"))
    out.print(Text("Syntax: NAME:key=value,key=value  e.g. hotcold:r=0.9,f=0.1,drive_writes=3"))
    return EXIT_OK


def cmd_policies(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    for p in policies():
        out.print(Text(p))
    return EXIT_OK


# -- trace -----------------------------------------------------------------------------------


def cmd_trace(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    command = {"stats": _trace_stats, "convert": _trace_convert, "formats": _trace_formats}
    if args.trace_command is None:
        args.trace_parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    return command[args.trace_command](args)


def _trace_formats(args: argparse.Namespace) -> int:
    table = Table("format", "description")
    for name, description in traces.formats():
        table.add_row(Text(name, style="bold"), Text(description))
    out.print(table)
    out.print(Text("Files ending in .gz or .zst are (de)compressed on the fly."))
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
    lines.append(("page size", size(page)))
    return lines


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


def _trace_stats(args: argparse.Namespace) -> int:
    _check_writable(args.json)
    st = traces.stats(
        args.file,
        args.format,
        page_size=args.page_size,
        device=args.device,
        on_error=args.on_error,
    )
    if args.json:
        _write_json(args.json, json.dumps(st, indent=2))
    if args.json == "-":
        return EXIT_OK
    out.print(
        Text(f"zombiesim {_core.__version__} · trace {st['format']}:{st['path']}", style="dim"),
        soft_wrap=True,
    )
    for heading, text in _stats_lines(st):
        line = Text()
        line.append(f"  {heading:<14}", style="bold")
        line.append(text)
        out.print(line, soft_wrap=True)
    for i, text in enumerate(_histogram_lines(st)):
        out.print(Text(f"  {text}", style="bold" if i == 0 else None), soft_wrap=True)
    if args.json:
        out.print(Text(f"statistics written to {args.json}", style="dim"))
    return EXIT_OK


def _trace_convert(args: argparse.Namespace) -> int:
    options = {
        "device": args.device,
        "on_error": args.on_error,
        "time_scale": 1.0 if args.time_scale is None else args.time_scale,
        "time_offset": args.time_offset or 0.0,
    }
    if args.output is not None and args.output != "-":
        _check_writable(args.output)
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
        sys.stderr.write(
            f"converted {n} records ({args.from_format} -> {args.to_format}, {where})\n"
        )
    return EXIT_OK


# -- demo ------------------------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .demo import run_demo

    target = Path(args.out)
    if target.exists() and not target.is_dir():
        raise make_error(InputError, f"cannot write into `{target}`: not a directory", "io")
    with LazyProgress() as bar:
        try:
            result = run_demo(
                target,
                quick=args.quick,
                jobs=args.jobs,
                seed=args.seed,
                progress=_multi_progress(bar),
            )
        except SimulationInterrupted:
            bar.close()
            _interrupted()
            return EXIT_INTERRUPTED
    out.print(
        _compare_table(
            result.reports, f"demo: {result.workload} · seed {args.seed} · preset default"
        )
    )
    out.print(f"finished in {seconds(result.wall_s)}")
    out.print(Text(f"wrote {result.html_path}"))
    out.print(Text(f"wrote {result.csv_path}"))
    return EXIT_OK


# -- entry point -----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return args.func(args, parser)
    except ZombiesimError as e:
        _error(e)
        return int(getattr(e, "exit_code", EXIT_BAD_INPUT))
    except KeyboardInterrupt:
        _interrupted()
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`zombiesim ... | head`): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
