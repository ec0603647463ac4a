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
from rich.table import Table
from rich.text import Text

from . import _core
from ._errors import InputError, SimulationInterrupted, ZombiesimError, make_error
from ._format import COMPARE_COLUMNS, best_label, count, num, seconds, size
from ._io import atomic_write
from ._progress import LazyProgress
from .api import DEFAULT_SEED, compare_configs, compare_reports, simulate, to_frame, validate
from .catalog import policies, preset_toml, presets, schemes, workload_common_keys, workloads
from .config import Config
from .report import Report
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

exit codes: 0 ok, 1 integrity check failed (--verify), 2 bad input, 130 interrupted
"""

COMPARE_EPILOG = """\
examples:
  zombiesim compare --policies fifo,greedy,cost-benefit --workload hotcold:r=0.9,f=0.1
  zombiesim compare --schemes baseline,cost-benefit --workload uniform:drive_writes=2 \\
      --csv results.csv --report results.html
  zombiesim compare --set flash.blocks_per_plane=64 --policies greedy,d-choices:8,random \\
      --workload zipf --jobs 2 --json results.json

Every run uses the same workload and seed, so each sees the same request stream.
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

LIST_EPILOG = """\
examples:
  zombiesim presets
  zombiesim presets show default > my.toml
  zombiesim schemes
  zombiesim workloads
  zombiesim policies
"""


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
    p.add_argument("--workload", "-w", metavar="SPEC", help="NAME:key=value,... (`workloads`)")
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
        help="run several policies or schemes on one workload",
        description="Run several policies or schemes on one workload and seed; print a "
        "table, optionally write CSV, JSON and an HTML report with plots.",
        epilog=COMPARE_EPILOG,
        formatter_class=_Formatter,
    )
    _config_options(p, scheme=False)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--policies", metavar="A,B,...", type=_name_list, help="victim policies")
    which.add_argument("--schemes", metavar="A,B,...", type=_name_list, help="schemes")
    p.add_argument("--workload", "-w", metavar="SPEC", required=True, help="NAME:key=value,...")
    _seed_option(p)
    _jobs_option(p)
    p.add_argument("--csv", metavar="OUT", help="write one row per run (every report field)")
    p.add_argument("--json", metavar="OUT", help="write {label: report} as JSON (`-` = stdout)")
    p.add_argument("--report", metavar="OUT.html", help="write an HTML report with plots")
    p.add_argument("--quiet", "-q", action="store_true", help="no table, no progress bar")
    p.set_defaults(func=cmd_compare)

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
    return [
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


def cmd_run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    cfg = _load_config(args)
    if args.print_config:
        sys.stdout.write(cfg.to_toml())
        return EXIT_OK
    if not args.workload:
        args.subparser.error("the following arguments are required: --workload")
    workload = parse_workload(args.workload)
    _check_writable(args.json)
    to_stdout = args.json == "-"
    show = not args.quiet and not to_stdout
    with LazyProgress(enabled=False if args.quiet else None) as bar:
        try:
            rep = simulate(
                cfg,
                workload,
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
    for heading, _, _ in COMPARE_COLUMNS:
        table.add_column(heading, justify="right")
    best = best_label(reports)
    for label, rep in reports.items():
        cells = [fmt(get(rep)) for _, get, fmt in COMPARE_COLUMNS]
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
    spec = str(parse_workload(args.workload))
    _check_writable(args.json, args.csv, args.report)
    variants = compare_configs(cfg, policies=args.policies, schemes=args.schemes)
    show = not args.quiet and "-" not in (args.json, args.csv, args.report)
    with LazyProgress(enabled=False if args.quiet else None) as bar:
        try:
            reports = compare_reports(
                workload=spec,
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
