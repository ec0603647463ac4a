"""The argparse pieces the commands share: the help formatter, `add_command`, argument types
and the flag groups (configuration, what to run, trace reading, seed, jobs)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

from .. import trace as traces
from .._errors import ConfigError
from ..api import DEFAULT_SEED, MAX_SEED

#: A command: `(args, parser) -> exit code`, set as the `func` default of its subparser.
Command = Callable[[argparse.Namespace, argparse.ArgumentParser], int]


class Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)


def add_command(
    sub: Any,
    name: str,
    func: Command | None = None,
    *,
    help: str,
    description: str,
    epilog: str,
) -> argparse.ArgumentParser:
    """A subparser of `sub` (what `add_subparsers` returns) with the shared formatter. With
    `func`, the parsed arguments carry `func` and `subparser` (this parser, for usage errors)."""
    parser = sub.add_parser(
        name, help=help, description=description, epilog=epilog, formatter_class=Formatter
    )
    if func is not None:
        parser.set_defaults(func=func, subparser=parser)
    return parser


# -- path arguments ------------------------------------------------------------------------
#
# Every argument that names a file a command reads or writes is marked, so that `main`
# can refuse, before any work, an output that would destroy an input
# (`common.refuse_clobbering_args`): a new writer only has to mark its arguments.

#: The attribute a path argument's action carries: ("input", folder files) or
#: ("output", "file" | "folder").
PATH_ROLE = "zombiesim_path_role"


def reads(action: argparse.Action, folder: bool | tuple[str, ...] = False) -> argparse.Action:
    """Mark `action` (what `add_argument` returns) as a path the command reads. A folder
    input (`folder=True`) counts every file directly in it; a tuple gives glob patterns,
    relative to it, of the files in it that the command reads."""
    setattr(action, PATH_ROLE, ("input", folder))
    return action


def writes(action: argparse.Action, folder: bool = False) -> argparse.Action:
    """Mark `action` as a path the command writes: a file, or a folder it writes into."""
    setattr(action, PATH_ROLE, ("output", "folder" if folder else "file"))
    return action


# -- argument types --------------------------------------------------------------------------


def key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value.strip()


def name_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected a comma-separated list of names")
    return names


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {text!r}")
    return value


def positive_int(text: str) -> int:
    value = non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {text!r}")
    return value


def seed_value(text: str) -> int:
    """A seed: a whole number from 0 to 2^64 - 1."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 2^64 - 1, got {text}")
    return value


def _size(text: str, flag: str, examples: str) -> int:
    try:
        return traces.parse_size(text, flag)
    except ConfigError:
        raise argparse.ArgumentTypeError(
            f"expected a size above 0 (e.g. {examples}), got {text!r}"
        ) from None


def memory_size(text: str) -> int:
    return _size(text, "--max-memory", "8GiB, 512MiB")


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def non_negative_float(text: str) -> float:
    value = _number(text)
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a finite number, 0 or more, got {text!r}")
    return value


def finite_float(text: str) -> float:
    value = _number(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def page_size(text: str) -> int:
    return _size(text, "--page-size", "4096, 4KiB, 16KiB")


# -- flag groups -----------------------------------------------------------------------------


def config_options(parser: argparse.ArgumentParser, scheme: bool = True) -> None:
    group = parser.add_argument_group("configuration")
    source = group.add_mutually_exclusive_group()
    source.add_argument("--preset", metavar="NAME", help="start from a preset (default: `default`)")
    reads(
        source.add_argument(
            "--config", metavar="FILE", help="start from a TOML file (keys left out use defaults)"
        )
    )
    if scheme:
        group.add_argument("--scheme", metavar="NAME", help="apply a scheme (`zombiesim schemes`)")
    group.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        type=key_value,
        help="override one dotted key, e.g. gc.policy=cost-benefit (repeatable; applied last)",
    )


def device_run_options(parser: argparse.ArgumentParser) -> None:
    """--restart-at, --power-loss-at, --power-loss-every and --force-unsafe (run and
    compare)."""
    group = parser.add_argument_group("device events and safety")
    group.add_argument(
        "--restart-at",
        metavar="SECONDS",
        action="append",
        type=non_negative_float,
        help="a restart of the system at this time on the device's clock (repeatable; "
        "added to device.restart_at together with --set, in time order); with timing "
        "off the clock is the requests' arrival times (iops=N, trace timestamps)",
    )
    group.add_argument(
        "--power-loss-at",
        metavar="SECONDS",
        dest="restart_at",
        action="append",
        type=non_negative_float,
        help="a power loss (and power-on) at this time on the device's clock: the same "
        "as --restart-at, added to device.restart_at (repeatable)",
    )
    group.add_argument(
        "--power-loss-every",
        metavar="N",
        type=non_negative_int,
        help="a power loss after every N host requests of the measured phase "
        "(device.power_loss_every; 0 = off; needs no clock); with --verify the integrity "
        "oracle checks after each one that nothing durable was lost",
    )
    group.add_argument(
        "--force-unsafe",
        action="store_true",
        help="run a configuration refused as unsafe (the skip policy, gc.skip_shadows, "
        "with a volatile device buffer) so the integrity oracle (--verify) can show the "
        "data loss; implies nothing else",
    )


#: (option, attribute) of the options that only apply to a trace replay.
TRACE_OPTIONS = [
    ("--format", "format"),
    ("--trace-device", "trace_device"),
    ("--remap", "remap"),
    ("--on-error", "on_error"),
    ("--limit", "limit"),
    ("--time-scale", "time_scale"),
    ("--time-offset", "time_offset"),
]


def source_options(parser: argparse.ArgumentParser, required: bool) -> None:
    """`--workload SPEC` or `--trace FILE --format FMT` with the trace's options."""
    group = parser.add_argument_group("what to run (one of)")
    which = group.add_mutually_exclusive_group(required=required)
    which.add_argument(
        "--workload", "-w", metavar="SPEC", help="a synthetic workload, NAME:key=value,..."
    )
    reads(
        which.add_argument("--trace", metavar="FILE", help="replay a block trace (needs --format)")
    )
    tr = parser.add_argument_group("trace options (with --trace; see docs/traces.md)")
    format_option(tr)
    device_option(tr, "--trace-device")
    tr.add_argument(
        "--remap",
        choices=traces.REMAP_MODES,
        help="fit addresses onto the device: none (default; beyond it is an error), "
        "modulo, compact",
    )
    on_error_option(tr)
    tr.add_argument(
        "--limit", metavar="N", type=non_negative_int, help="replay only the first N records"
    )
    time_options(tr)
    tr.add_argument(
        "--trace-cache",
        metavar="DIR",
        help="keep text traces parsed in DIR and replay them from there the next time "
        "(`off`: parse every time; default: $ZOMBIESIM_TRACE_CACHE, else "
        "~/.cache/zombiesim/traces); changes no result",
    )


def format_option(
    group: Any,
    flag: str = "--format",
    dest: str = "format",
    help_text: str = "the trace's format",
    required: bool = False,
) -> None:
    group.add_argument(
        flag,
        dest=dest,
        metavar="FMT",
        required=required,
        choices=traces.format_names(),
        help=f"{help_text}: {', '.join(traces.format_names())}",
    )


def device_option(group: Any, flag: str = "--device") -> None:
    group.add_argument(flag, metavar="N", type=non_negative_int, help="keep only this device")


def on_error_option(group: Any, default: str | None = None) -> None:
    group.add_argument(
        "--on-error",
        choices=traces.ON_ERROR,
        default=default,
        help="a malformed line: stop (default, exit 2 naming file:line) or skip and count it",
    )


def time_options(group: Any) -> None:
    group.add_argument(
        "--time-scale",
        metavar="X",
        type=non_negative_float,
        help="multiply the trace's times (0.5 = twice as fast; timing mode, open replay)",
    )
    group.add_argument(
        "--time-offset",
        metavar="S",
        type=finite_float,
        help="add S seconds to every time after scaling (times below 0 become 0)",
    )


def seed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed",
        type=seed_value,
        default=DEFAULT_SEED,
        help=f"random seed, 0 to 2^64 - 1 (default {DEFAULT_SEED})",
    )


def memory_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-memory",
        metavar="SIZE",
        type=memory_size,
        help="refuse a run whose simulator state would exceed SIZE (default: the memory "
        "available now)",
    )


def jobs_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs", "-j", type=positive_int, metavar="N", help="parallel runs (default: one per CPU)"
    )
