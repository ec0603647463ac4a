"""The `zombiesim` command line (also `python -m zombiesim`); see docs/cli.md.

One module per command (`run`, `compare`, `sweep` (with `report`), `validate`, `trace`,
`demo`, `capture`, and `listings` for presets, schemes, workloads and policies), each with
a `register(sub)` that adds its subparser; `parser` holds the shared flags and argument
types, `common` what the commands share at run time.

Exit codes: 0 success, 1 a check failed (`validate` out of tolerance, an integrity check),
2 bad input (config, arguments, workload, files), 130 interrupted (Ctrl-C, SIGINT),
143 terminated (SIGTERM). Both signals stop a run the same way: what finished is kept and
written (a partial report is marked `run.interrupted`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .. import _core
from .._errors import ZombiesimError
from . import common
from .common import EXIT_BAD_INPUT, EXIT_OK, error, interrupted
from .parser import Formatter

__all__ = ["build_parser", "main"]


#: The command modules, in the order `zombiesim --help` lists them, and the commands each
#: registers. A command line naming one of them imports that module only: `zombiesim run`
#: starts without the sweep engines, the reproductions or the capture tools.
COMMANDS: dict[str, tuple[str, ...]] = {
    "run": ("run",),
    "compare": ("compare",),
    "sweep": ("sweep", "report"),
    "study": ("study",),
    "validate": ("validate",),
    "reproduce": ("reproduce",),
    "listings": ("presets", "schemes", "workloads", "policies"),
    "trace": ("trace",),
    "demo": ("demo",),
    "capture": ("capture",),
}


def _modules_for(argv: Sequence[str] | None) -> list[str]:
    """The command modules a parser for `argv` needs: the one that owns the command it
    names, or all of them (no command, `--help`, or a name that is not a command)."""
    if argv is not None:
        # The top-level parser's options take no values: the first word is the command.
        command = next((a for a in argv if not a.startswith("-")), None)
        for module, names in COMMANDS.items():
            if command in names:
                return [module]
    return list(COMMANDS)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command-line parser: with `argv`, only the commands it can name are registered
    (see `COMMANDS`); without, all of them."""
    parser = argparse.ArgumentParser(
        prog="zombiesim",
        description="An SSD simulator whose garbage collector knows what the buffers "
        "above the flash hold.",
        epilog="Run `zombiesim COMMAND --help` for examples. Start with `zombiesim demo`.",
        formatter_class=Formatter,
    )
    parser.add_argument("--version", action="version", version=f"zombiesim {_core.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _modules_for(argv):
        importlib.import_module(f".{module}", __name__).register(sub)
    return parser


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """While a command runs, SIGTERM stops it as Ctrl-C does (a `KeyboardInterrupt` that
    the simulator notices within ~100 ms), and the exit code becomes 143."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: object) -> None:
        common.terminated = True
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    common.terminated = False
    if getattr(args, "trace_cache", None) is not None:
        # Every run of the command, the workers of a sweep included, reads it from here.
        os.environ["ZOMBIESIM_TRACE_CACHE"] = args.trace_cache
    try:
        common.refuse_clobbering_args(args)
        with _sigterm_interrupts():
            return args.func(args, parser)
    except ZombiesimError as e:
        error(e)
        return int(getattr(e, "exit_code", EXIT_BAD_INPUT))
    except KeyboardInterrupt:
        return interrupted()
    except BrokenPipeError:
        # The reader went away (`zombiesim ... | head`): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
