"""The listings: `zombiesim presets [show NAME]`, `schemes`, `workloads`, `policies`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.table import Table
from rich.text import Text

from ..catalog import policies, preset_toml, presets, schemes, workload_common_keys, workloads
from .common import EXIT_OK, out
from .parser import add_command

EPILOG = """\
examples:
  zombiesim presets
  zombiesim presets show default > my.toml
  zombiesim schemes
  zombiesim workloads
  zombiesim policies
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "presets",
        cmd_presets,
        help="list presets, or show one as TOML",
        description="List the built-in presets, or print one as TOML.",
        epilog=EPILOG,
    )
    presets_sub = p.add_subparsers(dest="presets_command", metavar="show")
    show = presets_sub.add_parser("show", help="print a preset as TOML")
    show.add_argument("name", metavar="NAME")

    for name, func, help_text in [
        ("schemes", cmd_schemes, "list schemes and what each sets"),
        ("workloads", cmd_workloads, "list synthetic workloads and their keys"),
        ("policies", cmd_policies, "list victim policies"),
    ]:
        add_command(
            sub,
            name,
            func,
            help=help_text,
            description=help_text[0].upper() + help_text[1:] + ".",
            epilog=EPILOG,
        )


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
