"""`zombiesim compare`: several policies or schemes on one workload or trace; the comparison
table (shared with `demo`) and the CSV, JSON and HTML outputs."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .._errors import ConfigError, SimulationInterrupted, make_error
from .._format import best_label, compare_columns, oracle_shares
from .._io import atomic_write
from .._progress import LazyProgress
from ..api import compare_configs, simulate_many, to_frame
from ..catalog import ftl_kinds
from ..config import Config
from ..report import Report
from ..trace import TraceInput
from ..workload import Workload
from .common import (
    EXIT_OK,
    base_config,
    check_writable,
    config_sets,
    describe,
    interrupted,
    load_config,
    memory_note,
    origin,
    out,
    progress_bar,
    report_notes,
    say_notes,
    source,
    write_json,
)
from .parser import (
    add_command,
    config_options,
    device_run_options,
    jobs_option,
    memory_option,
    name_list,
    seed_option,
    source_options,
    writes,
)

#: The FTL kinds `--ftl` takes (`ftl.kind`), from the registry of the Rust core.
FTL_KINDS = tuple(ftl_kinds())

EPILOG = """\
examples:
  zombiesim compare --policies fifo,greedy,cost-benefit --workload hotcold:r=0.9,f=0.1
  zombiesim compare --schemes baseline,cost-benefit --workload uniform:drive_writes=2 \\
      --csv results.csv --report results.html
  zombiesim compare --schemes gc-gd,gc-cb,oracle --workload hotcold:r=0.9,f=0.1
  zombiesim compare --set flash.blocks_per_plane=64 --policies greedy,d-choices:8,random \\
      --workload zipf --jobs 2 --json results.json
  zombiesim compare --set timing.enabled=true --policies greedy,cost-benefit \\
      --trace src1_0.csv --format msr --remap modulo --report trace.html
  zombiesim compare --preset shadowgc-1tb --schemes ggc,zgc,hgc,dgc,sgc \\
      --workload hotcold:r=0.9,f=0.01,drive_writes=0.5,iops=20000 \\
      --set host.buffer=128MiB --set device.buffer=128MiB --set flash.channels=2 \\
      --set flash.chips_per_channel=2 --set flash.blocks_per_plane=1024 --restart-at 12
  # every FTL through power losses, each checked by the integrity oracle
  zombiesim compare --set ftl.kind=page,dftl,fast --set device.buffer=4MiB \\
      --power-loss-every 2000 --verify --workload uniform:drive_writes=0.5

  # one key over several values: the five FTLs on one workload
  zombiesim compare --preset default --set ftl.kind=page,dftl,superblock,fast,block \\
      --workload uniform:drive_writes=2
  # 004's buffers on FAST (the ba-gc preset)
  zombiesim compare --preset ba-gc --schemes fab,bplru,ba-gc \\
      --workload files:file=1MiB,seq=0.7,hot=0.02,r=0.9,size=4KiB,iops=2000

Every run uses the same workload (or trace) and seed, so each sees the same request stream.
With timing.enabled=true the table adds read/write p99 latency and simulated elapsed time;
with ShadowGC keys (gc.shadow_reads, gc.fast_write, ...) or a host buffer, GC latency and
the share of relocated pages that were shadows; with an fs: workload, the file systems'
device requests and MiB and the journal's MiB; with the oracle policy among the runs
(--schemes gc-gd,zgc-gd,oracle), each run's share of the oracle's WAF gain over the first
run (in the table and, as oracle_gain_captured, in --json). --journal varies the
journal= key of an fs: workload, --ftl is ftl.kind over several values; together, every
mode on every FTL.
exit codes: 0 ok, 1 integrity check failed (--verify), 2 bad input, 130 interrupted
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "compare",
        cmd_compare,
        help="run several policies or schemes on one workload or trace",
        description="Run several policies or schemes on one workload (or trace) and seed; "
        "print a table, optionally write CSV, JSON and an HTML report with plots.",
        epilog=EPILOG,
    )
    config_options(p, scheme=False)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--policies", metavar="A,B,...", type=name_list, help="victim policies")
    which.add_argument("--schemes", metavar="A,B,...", type=name_list, help="schemes")
    p.add_argument(
        "--ftl",
        metavar="A,B,...",
        type=name_list,
        help=f"FTLs: ftl.kind over these values ({', '.join(FTL_KINDS)})",
    )
    p.add_argument(
        "--journal",
        metavar="A,B,...",
        type=name_list,
        help="journaling modes (writeback, ordered, journal, vma): the journal= key of an "
        "fs: workload; crossed with --ftl (labels MODE/FTL)",
    )
    source_options(p, required=True)
    device_run_options(p)
    seed_option(p)
    memory_option(p)
    jobs_option(p)
    p.add_argument(
        "--verify",
        action="store_true",
        help="run the integrity oracle in every run (slower); with power losses it also "
        "counts durable pages lost (power_loss.durable_pages_lost)",
    )
    writes(
        p.add_argument("--csv", metavar="OUT", help="write one row per run (every report field)")
    )
    writes(
        p.add_argument("--json", metavar="OUT", help="write {label: report} as JSON (`-` = stdout)")
    )
    writes(p.add_argument("--report", metavar="OUT.html", help="write an HTML report with plots"))
    p.add_argument("--quiet", "-q", action="store_true", help="no table, no progress bar")


def split_axis(sets: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], Any]:
    """`--set` pairs with the one whose value lists several comma-separated values (the
    axis of the comparison, `ftl.kind=page,dftl,fast`) taken out: `(sets, (key, values))`,
    or `(sets, None)`. A bracketed value (`[1, 2]`) is one TOML list, not an axis."""
    axes = [
        (i, k, v) for i, (k, v) in enumerate(sets) if "," in v and not v.lstrip().startswith("[")
    ]
    if not axes:
        return sets, None
    if len(axes) > 1:
        keys = ", ".join(k for _, k, _ in axes)
        raise make_error(
            ConfigError, f"compare varies one key at a time (several lists given: {keys})", "set"
        )
    i, key, value = axes[0]
    values = [v.strip() for v in value.split(",") if v.strip()]
    return sets[:i] + sets[i + 1 :], (key, values)


#: The journaling modes `--journal` takes (the `journal=` key of an `fs:` workload).
JOURNAL_MODES = ("writeback", "ordered", "journal", "vma")


def _unique(flag: str, values: list[str], known: tuple[str, ...]) -> list[str]:
    unknown = [v for v in values if v not in known]
    if unknown:
        raise make_error(
            ConfigError,
            f"{flag}: unknown {', '.join(f'`{v}`' for v in unknown)} (known: {', '.join(known)})",
            flag.lstrip("-"),
        )
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:
        raise make_error(ConfigError, f"{flag}: {', '.join(twice)} given twice", flag.lstrip("-"))
    return values


def spec_keys(spec: str) -> tuple[str, list[str]]:
    """A workload spec's name and the keys it gives (positional values, such as `fs:`'s
    benchmark, are left out)."""
    name, _, rest = spec.partition(":")
    keys = [item.split("=", 1)[0].strip() for item in rest.split(",") if "=" in item]
    return name.strip(), keys


def ftl_axis(args: argparse.Namespace, axis: Any) -> Any:
    """`--ftl A,B` as the `("ftl.kind", [A, B])` axis; refused beside a `--set` axis or a
    `--set ftl.kind=...`."""
    if not args.ftl:
        return axis
    if axis is not None:
        raise make_error(
            ConfigError,
            f"--ftl and --set {axis[0]}=A,B,... both vary a key: compare varies one config "
            "key at a time (--journal crosses with --ftl)",
            "ftl",
        )
    if any(k == "ftl.kind" for k, _ in args.set or []):
        raise make_error(
            ConfigError, "--ftl and --set ftl.kind=... both set the FTL: give one", "ftl"
        )
    return ("ftl.kind", _unique("--ftl", args.ftl, FTL_KINDS))


def journal_workloads(args: argparse.Namespace, src: Any) -> dict[str, Workload]:
    """`--journal A,B` as one `fs:` workload per mode (label = the mode); refused when
    the workload is not `fs:`, already gives `journal=`, or with --schemes, --policies or
    a --set axis."""
    if not args.journal:
        return {}
    if not isinstance(src, Workload) or spec_keys(src.spec)[0] != "fs":
        given = "a trace" if not isinstance(src, Workload) else f"`{src.spec}`"
        raise make_error(
            ConfigError,
            f"--journal varies the journal= key of an fs: workload (--workload "
            f"fs:BENCH,...), not {given}",
            "journal",
        )
    if "journal" in spec_keys(src.spec)[1]:
        raise make_error(
            ConfigError,
            f"--journal and the workload's own journal= (`{src.spec}`) both set the mode: drop one",
            "journal",
        )
    others = [
        f for f, given in (("--schemes", args.schemes), ("--policies", args.policies)) if given
    ]
    if others:
        raise make_error(
            ConfigError,
            f"--journal cannot be combined with {' or '.join(others)}: it crosses with --ftl only",
            "journal",
        )
    modes = _unique("--journal", args.journal, JOURNAL_MODES)
    return {m: Workload(f"{src.spec},journal={m}") for m in modes}


def ftl_label(label: str) -> str:
    """`ftl.kind=fast` -> `fast` (labels of the `--ftl` axis)."""
    return "/".join(p.removeprefix("ftl.kind=") for p in label.split("/"))


def cmd_compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    args.set, axis = split_axis(list(args.set or []))
    if args.journal and axis is not None:
        raise make_error(
            ConfigError,
            f"--journal cannot be combined with --set {axis[0]}=A,B,...: it crosses with "
            "--ftl only" + (" (--ftl A,B,... varies ftl.kind)" if axis[0] == "ftl.kind" else ""),
            "journal",
        )
    axis = ftl_axis(args, axis)
    # One key over several values, alone: the --set values go with each cell's value and
    # apply where read (`--set ftl.cmt_entries=N` to the DFTL cell of ftl.kind=page,dftl).
    per_cell = axis is not None and not (args.policies or args.schemes or args.journal)
    if per_cell:
        base = base_config(args)
        cells = compare_configs(base, vary=axis, sets=config_sets(args, base))
        cfg = next(iter(cells.values()))
    else:
        cfg = load_config(args)
    src = source(args, args.subparser)
    journals = journal_workloads(args, src)
    spec = describe(src) + (f" (journal: {', '.join(journals)})" if journals else "")
    check_writable(args.json, args.csv, args.report)
    if axis is None and not (args.policies or args.schemes or journals):
        raise make_error(
            ConfigError,
            "nothing to compare: give --policies, --schemes, --ftl, --journal (fs: "
            "workloads), or a --set KEY=A,B,... that lists several values of one key",
            "compare",
        )
    if axis is None and journals:
        variants = {"": cfg}
    elif per_cell:
        variants = cells
        if not args.quiet:
            for label, c in variants.items():
                say_notes(c.notes, label)
    else:
        variants = compare_configs(cfg, policies=args.policies, schemes=args.schemes, vary=axis)
    if args.ftl:
        variants = {ftl_label(label): c for label, c in variants.items()}
    runs: dict[str, tuple[Config, Workload | TraceInput]] = {}
    if journals:
        for mode, work in journals.items():
            for label, c in variants.items():
                runs[f"{mode}/{label}" if label else mode] = (c, work)
    else:
        runs = {label: (c, src) for label, c in variants.items()}
    if not args.quiet:
        memory_note(
            cfg,
            args.verify,
            runs=min(len(runs), args.jobs or os.cpu_count() or 1),
            limit=args.max_memory,
        )
    show = not args.quiet and "-" not in (args.json, args.csv, args.report)
    with progress_bar(args) as bar:
        try:
            reports = simulate_many(
                runs,
                seed=args.seed,
                verify=args.verify,
                max_memory=args.max_memory,
                force_unsafe=args.force_unsafe,
                jobs=args.jobs,
                progress=multi_progress(bar),
            )
        except SimulationInterrupted as e:
            bar.close()
            written = _write_outputs(args, e.reports, cfg, spec) if e.reports else []
            return interrupted(
                f"partial results written to {', '.join(written)}" if written else ""
            )
    written = _write_outputs(args, reports, cfg, spec)
    if not args.quiet:
        for label, rep in reports.items():
            report_notes(rep, label)
    if show:
        out.print(compare_table(reports, f"{spec} · seed {args.seed} · {origin(args)}"))
        for path in written:
            out.print(Text(f"wrote {path}", style="dim"))
    return EXIT_OK


def compare_table(
    reports: Mapping[str, Report], title: str | None = None, width: int | None = None
) -> RenderableType:
    """The runs side by side, the best WAF in bold green (when there is more than one).

    Numbers are never cut: one row per run when that fits `width` (default: the
    console's), else one column per run (metrics as rows), split into several tables
    when even that is too wide."""
    width = out.width if width is None else width
    columns = compare_columns(reports)
    cells = {label: [fmt(get(rep)) for _, get, fmt in columns] for label, rep in reports.items()}
    best = best_label(reports)
    highlight = best if len(reports) > 1 else None
    names = {k: k + (" (interrupted)" if r.interrupted else "") for k, r in reports.items()}
    caption = f"best WAF: {best}" if highlight is not None else None

    # One row per run: a column is as wide as its longest number or its heading (a
    # no_wrap column does not wrap its heading either: counting only the heading's words
    # let a long heading, such as the oracle's share, push the table past `width`).
    label_width = max(len(n) for n in names.values())
    widths = [
        max(max(len(c[i]) for c in cells.values()), len(heading))
        for i, (heading, _, _) in enumerate(columns)
    ]
    if _table_width([label_width, *widths]) <= width:
        rows = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
        rows.add_column("label", no_wrap=True, min_width=label_width)
        for (heading, _, _), w in zip(columns, widths, strict=True):
            rows.add_column(heading, justify="right", no_wrap=True, min_width=w)
        for label in reports:
            style = "bold green" if label == highlight else None
            rows.add_row(Text(names[label]), *cells[label], style=style)
        return rows

    # Transposed: a column per run; as many runs per table as fit.
    tables = []
    labels = list(reports)
    metric_width = max(len(h) for h, _, _ in columns)

    run_width = {k: max(len(names[k]), *(len(c) for c in cells[k])) for k in labels}
    start = 0
    while start < len(labels):
        end = start + 1
        while (
            end < len(labels)
            and _table_width([metric_width, *(run_width[k] for k in labels[start : end + 1])])
            <= width
        ):
            end += 1
        shown = labels[start:end]
        table = _transposed(shown, names, cells, columns, [run_width[k] for k in shown])
        table.title = title if start == 0 else None
        table.title_justify = "left"
        for i, label in enumerate(shown):
            if label == highlight:
                table.columns[i + 1].style = "bold green"
                table.columns[i + 1].header_style = "bold green"
        tables.append(table)
        start = end
    if caption is not None:
        tables[-1].caption = caption
        tables[-1].caption_justify = "left"
    return Group(*tables)


def _table_width(columns: list[int]) -> int:
    """Characters a boxed table with these column widths takes (a space of padding on
    each side of a cell, a border between and around the columns)."""
    return sum(w + 3 for w in columns) + 1


def _transposed(
    labels: list[str],
    names: Mapping[str, str],
    cells: Mapping[str, list[str]],
    columns: list,
    widths: list[int],
) -> Table:
    """Metrics as rows, one column per run (each `widths[i]` wide, never cut)."""
    table = Table()
    table.add_column("metric", no_wrap=True)
    for label, w in zip(labels, widths, strict=True):
        table.add_column(names[label], justify="right", no_wrap=True, min_width=w)
    for i, (heading, _, _) in enumerate(columns):
        table.add_row(heading, *(cells[label][i] for label in labels))
    return table


def multi_progress(bar: LazyProgress) -> Callable[[str, str, float | None, int], None]:
    """A `compare_reports` progress callback drawing one bar per run."""

    def progress(label: str, phase: str, fraction: float | None, pages: int) -> None:
        bar.update(
            label, f"{label} {phase}", fraction or 0.0, 1.0 if fraction is not None else None
        )

    return progress


def _write_outputs(
    args: argparse.Namespace, reports: Mapping[str, Report], cfg: Config, spec: str
) -> list[str]:
    """Write --json, --csv and --report; the files written (not stdout)."""
    written = []
    if args.json:
        # With an oracle run, each report gains the share of its gain (`oracle_shares`).
        shares = oracle_shares(reports) or {}
        data = {
            k: {**r.raw, "oracle_gain_captured": shares[k]} if shares else r.raw
            for k, r in reports.items()
        }
        write_json(args.json, json.dumps(data, indent=2))
        written.append(args.json)
    if args.csv:
        atomic_write(args.csv, to_frame(reports).to_csv(index=False))
        written.append(args.csv)
    if args.report:
        from ..htmlreport import write_comparison_html

        write_comparison_html(
            args.report,
            reports,
            title=f"zombiesim compare: {', '.join(reports)}",
            config_toml=cfg.to_toml(),
            workload=spec,
            seed=args.seed,
            command=shlex.join(["zombiesim", *sys.argv[1:]]),
        )
        written.append(args.report)
    return [w for w in written if w != "-"]
