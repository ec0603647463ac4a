"""What the commands share: exit codes, the stdout console, error and interrupt messages,
output files, and turning the configuration and source flags into a config and a workload
or trace."""

from __future__ import annotations

import argparse
import os
import sys
import tomllib
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.text import Text

from .. import _core
from .._errors import InputError, make_error
from .._format import size
from .._io import atomic_write, folder_files, refuse_clobbering, resolve_output
from .._progress import LazyProgress
from ..config import Config
from ..report import Report
from ..trace import TraceInput, format_names
from ..workload import Workload
from ..workload import parse as parse_workload
from .parser import PATH_ROLE, TRACE_OPTIONS

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143

out = Console(highlight=False)
if not out.is_terminal and "COLUMNS" not in os.environ:
    # Pipes and files: tables at their full width, never squeezed into 80 columns.
    out.width = 1000


# -- messages --------------------------------------------------------------------------------


def error(message: object) -> None:
    """`zombiesim: error: MESSAGE` on stderr, on one line."""
    one_line = " ".join(line.strip() for line in str(message).splitlines() if line.strip())
    sys.stderr.write(f"zombiesim: error: {one_line}\n")
    sys.stderr.flush()


#: Set when SIGTERM (not Ctrl-C) stopped the command.
terminated = False


def interrupted(detail: str = "") -> int:
    """Say the run was interrupted (and what was kept); the exit code to return: 130 after
    Ctrl-C (SIGINT), 143 after SIGTERM."""
    word = "terminated" if terminated else "interrupted"
    sys.stderr.write(f"zombiesim: {word}" + (f" ({detail})" if detail else "") + "\n")
    return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED


def progress_bar(args: argparse.Namespace) -> LazyProgress:
    """The progress bar on stderr, off with `--quiet`."""
    return LazyProgress(enabled=False if getattr(args, "quiet", False) else None)


def print_fields(title: str, fields: Iterable[tuple[str, str]], bold: str | None = None) -> None:
    """A dim title line, then `  heading       text` lines (the text of `bold` in bold)."""
    out.print(Text(title, style="dim"), soft_wrap=True)
    for heading, text in fields:
        line = Text()
        line.append(f"  {heading:<14}", style="bold")
        line.append(text, style="bold" if heading == bold else None)
        out.print(line, soft_wrap=True)


# -- output files ----------------------------------------------------------------------------


def refuse_clobbering_args(args: argparse.Namespace) -> None:
    """Refuse, before any work, an output argument that would destroy an input or is not
    a file (`_io.refuse_clobbering`): the arguments of the command's parser marked with
    `parser.reads` / `parser.writes`."""
    parser = getattr(args, "subparser", None)
    if parser is None:
        return
    inputs: list[tuple[str, str]] = []
    outputs: list[tuple[str, str, str]] = []
    for action in _parsed_actions(parser, args):
        role = getattr(action, PATH_ROLE, None)
        value = getattr(args, action.dest, None)
        if role is None or value is None:
            continue
        label = action.option_strings[0] if action.option_strings else str(action.metavar)
        for path in value if isinstance(value, list) else [value]:
            if role[0] == "output":
                outputs.append((label, path, role[1]))
                continue
            inputs.append((label, path))
            if role[1] and os.path.isdir(path):
                names = role[1] if isinstance(role[1], tuple) else None
                inputs.extend((label, f) for f in folder_files(path, names))
    refuse_clobbering(outputs, inputs)


def _parsed_actions(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list:
    """The actions of `parser` and of the sub-command parsers `args` went through
    (`zombiesim trace stats` ends in the `stats` parser under `trace`)."""
    found = []
    for action in parser._actions:
        found.append(action)
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                found.extend(_parsed_actions(chosen, args))
    return found


def check_writable(*paths: str | None) -> None:
    """Fail before a long run, not after it, when an output file cannot be written."""
    for path in paths:
        if path is None or path == "-":
            continue
        target, replaceable = resolve_output(path)
        if target.is_dir():
            raise make_error(InputError, f"cannot write `{path}`: is a directory", "io")
        if not replaceable:  # a device or FIFO, written in place
            if not os.access(target, os.W_OK):
                raise make_error(InputError, f"cannot write `{path}`: permission denied", "io")
            continue
        directory = target.parent
        if not directory.is_dir():
            raise make_error(InputError, f"cannot write `{path}`: no directory `{directory}`", "io")
        if not os.access(directory, os.W_OK):
            raise make_error(InputError, f"cannot write `{path}`: permission denied", "io")


#: Above this much simulator state, `run` and `compare` say how much a run will hold.
MEMORY_NOTE_BYTES = 1 << 30


def memory_note(cfg: Config, verify: bool = False, runs: int = 1, limit: int | None = None) -> None:
    """Tell (on stderr) how much memory a large run will take; a run over the limit is
    refused by the simulator itself, before it allocates, with its own message."""
    total, parts = _core.memory_estimate(cfg.core, verify)
    limit = limit if limit is not None else _core.available_memory()
    if total * runs < MEMORY_NOTE_BYTES or (limit is not None and total > limit):
        return
    largest = max(parts, key=lambda p: p[2])
    each = f" each, {size(total * runs)} for {runs} runs at once" if runs > 1 else ""
    sys.stderr.write(
        f"zombiesim: note: this run holds about {size(total)} of simulator state{each} "
        f"(mostly {largest[0]}: `{largest[1]}`)\n"
    )


def unaware_keys(report: Report) -> list[str]:
    """The zombie- or shadow-aware settings of a run whose device learned of no zombie or
    host-shadow page (no host model, host buffer or notified trace: the report has no
    `notify` section), so each acted as its base policy; `[]` when none."""
    raw = report.raw
    if raw.get("notify") is not None or raw.get("oracle") is not None:
        return []  # a channel, or the oracle's marks from the future
    cfg = raw["run"]["config"]
    policy = str(cfg["gc"]["policy"])
    keys = []
    if policy.startswith(("z-", "greedy-delay")):
        keys.append(f"gc.policy = {policy}")
    keys += [
        key
        for key, on in (
            ("gc.zombie_block", cfg["gc"].get("zombie_block")),
            ("gc.fast_write", cfg["gc"].get("fast_write")),
        )
        if on
    ]
    return keys


def unaware_note(report: Report, label: str = "") -> None:
    """Say (on stderr) that a run's zombie-aware settings had nothing to act on."""
    keys = unaware_keys(report)
    if keys:
        say_notes(
            [
                f"{', '.join(keys)} act on pages the host announces, and this run has no host "
                "that announces any (no host.cache, host.buffer or notified trace): the "
                "device learned of none and collected as its base policy would"
            ],
            label,
        )


#: A DFTL cached mapping table covering less than this share of the logical pages gets a
#: note when most lookups missed.
SMALL_CMT_SHARE = 0.01


def small_cmt_note(report: Report, label: str = "") -> None:
    """Say (on stderr) that a DFTL run's cached mapping table covered less than 1% of the
    logical pages and most lookups missed (random writes): its WAF is then mostly
    translation-page traffic, which a table sized to the device would not have."""
    raw = report.raw
    ftl = raw["run"]["config"]["ftl"]
    cmt = (raw.get("ftl") or {}).get("cmt")
    if ftl["kind"] != "dftl" or not cmt:
        return
    logical = raw["device"]["logical_pages"]
    entries = min(int(ftl["cmt_entries"]), logical)
    if entries >= SMALL_CMT_SHARE * logical or (cmt["hit_ratio"] or 0.0) >= 0.5:
        return
    say_notes(
        [
            f"ftl.cmt_entries = {entries:,} covers {entries / logical:.2%} of the "
            f"{logical:,} logical pages and {cmt['hit_ratio']:.1%} of lookups hit: most "
            "writes read and later rewrite a translation page, and GC rewrites the "
            "translation pages of the pages it moves, so the WAF is mostly DFTL's "
            "translation traffic (docs/ftl.md); a table covering the pages written "
            "removes it"
        ],
        label,
    )


def report_notes(report: Report, label: str = "") -> None:
    """The notes a finished run's report calls for (on stderr)."""
    unaware_note(report, label)
    small_cmt_note(report, label)


def write_json(path: str, text: str) -> None:
    atomic_write(path, text if text.endswith("\n") else text + "\n")


# -- configuration and source ----------------------------------------------------------------


def base_config(args: argparse.Namespace) -> Config:
    """--preset / --config, as given."""
    if args.config is not None:
        return Config.load(args.config)
    return Config.preset(args.preset or "default")


def config_sets(args: argparse.Namespace, base: Config) -> list[tuple[str, Any]]:
    """Every --set in order, with --restart-at and --power-loss-at added to
    `device.restart_at` among them and --power-loss-every setting
    `device.power_loss_every` after them."""
    sets = restart_sets(base, list(args.set or []), getattr(args, "restart_at", None))
    every = getattr(args, "power_loss_every", None)
    if every is not None:
        sets.append((POWER_LOSS_EVERY_KEY, every))
    return sets


def load_config(args: argparse.Namespace) -> Config:
    """--preset / --config, then --scheme, then every --set (`config_sets`), validated
    together. What the preset or file set for keys nothing in the result reads is
    dropped, each with a note on stderr (not with --quiet)."""
    cfg = base_config(args)
    sets = config_sets(args, cfg)
    if getattr(args, "scheme", None):
        # Together: a scheme may need keys only --set gives (dgc needs device.buffer).
        cfg = cfg.scheme(args.scheme, sets)
    else:
        cfg = cfg.override(sets)
    if not getattr(args, "quiet", False):
        say_notes(cfg.notes)
    return cfg


def say_notes(notes: Iterable[str], label: str = "") -> None:
    """`zombiesim: note: ...` on stderr, one line each (`label: ` before each)."""
    who = f"{label}: " if label else ""
    for note in notes:
        sys.stderr.write(f"zombiesim: note: {who}{note}\n")


RESTART_KEY = "device.restart_at"
POWER_LOSS_EVERY_KEY = "device.power_loss_every"


def restart_sets(
    cfg: Config, sets: list[tuple[str, Any]], restart_at: list[float] | None
) -> list[tuple[str, Any]]:
    """`sets` with the --restart-at (and --power-loss-at) times added to
    `device.restart_at`: to the last `--set device.restart_at=[...]` when there is one
    (it is replaced by the merged list), else to the value `cfg` has; merged in time
    order."""
    if not restart_at:
        return sets
    times: list[Any] = list(cfg.get(RESTART_KEY) or [])
    last = max((i for i, (k, _) in enumerate(sets) if k == RESTART_KEY), default=None)
    if last is not None:
        try:
            given = tomllib.loads(f"v = {sets[last][1]}")["v"]
        except tomllib.TOMLDecodeError:
            given = None
        if not isinstance(given, list):
            # Let the configuration check name the key and the bad value.
            return sets
        times = given
        sets = [kv for i, kv in enumerate(sets) if i != last]
    merged = [*times, *restart_at]
    if all(isinstance(t, int | float) and not isinstance(t, bool) for t in merged):
        merged = sorted(merged)
    return [*sets, (RESTART_KEY, merged)]


def origin(args: argparse.Namespace) -> str:
    return f"config {args.config}" if args.config else f"preset {args.preset or 'default'}"


def trace_times(args: argparse.Namespace) -> dict[str, Any]:
    """`time_scale` and `time_offset` from --time-scale / --time-offset (or their defaults)."""
    return {
        "time_scale": 1.0 if args.time_scale is None else args.time_scale,
        "time_offset": args.time_offset or 0.0,
    }


def source(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Workload | TraceInput:
    """The checked workload or trace the arguments ask for (usage errors exit 2)."""
    if args.trace is None:
        given = [opt for opt, attr in TRACE_OPTIONS if getattr(args, attr) is not None]
        if given:
            parser.error(f"{', '.join(given)} only apply with --trace")
        if args.workload is None:
            parser.error("one of the arguments --workload --trace is required")
        return parse_workload(args.workload)
    if args.format is None:
        parser.error(
            f"--trace needs --format FMT (one of {', '.join(format_names())}; "
            "`zombiesim trace formats`)"
        )
    return TraceInput(
        args.trace,
        args.format,
        device=args.trace_device,
        on_error=args.on_error or "stop",
        remap=args.remap or "none",
        limit=args.limit,
        **trace_times(args),
    )


def describe(source: Workload | TraceInput) -> str:
    return source.describe() if isinstance(source, TraceInput) else str(source)
