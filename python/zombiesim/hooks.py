"""Policies written in Python, and where the command line finds them.

- A victim policy is a callable `policy(candidates)`: `candidates` holds one GC unit's
  candidate blocks as NumPy columns, sorted by block number (`block`, `valid`,
  `invalid`, `zombies`, `age`, `last_modified`, `erase_count`, `stream`, `weight`; `now`
  is the logical time, `len(candidates)` their number), and the answer is a block
  number, or a ranking of block numbers (best first) whose blocks serve the next
  selections too, each while it is still a candidate. `simulate(..., victim=policy)`
  runs it in place of `gc.policy`.
- A placement is a callable `placement(writes)` under `ftl.placement = "python:K"`:
  every `placement_batch` host page writes, `writes` holds them as NumPy columns
  (`lpn`, `overwrite`, `lifetime`, `time`, `stream`; `now`), and the answer is one
  stream (0 to K - 1) per write: where that page's next write goes.

`zombiesim run --victim FILE.py:NAME` and `--placement FILE.py:NAME` load them from a
file (docs/python.md, "Policies in Python").
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._errors import InputError, make_error

__all__ = ["load"]


def load(spec: str, option: str = "--victim") -> Callable[[Any], Any]:
    """The policy `spec` names: `FILE.py:NAME`, a function (or any callable) `NAME`
    defined in the Python file `FILE.py`. A missing file, a file that does not run, or
    a name it does not define raises `InputError` naming the file (and the line, for a
    syntax error), and `option` (the command-line option that gave it)."""
    path_text, sep, name = spec.rpartition(":")
    if not sep or not path_text or not name.isidentifier():
        raise make_error(
            InputError,
            f"{option} {spec!r}: expected FILE.py:NAME, e.g. policies.py:cost_benefit",
            "input",
        )
    path = Path(path_text)
    if not path.is_file():
        raise make_error(InputError, f"{path}: no such file ({option})", "input")
    module_name = f"zombiesim_policy_{abs(hash(path.resolve()))}"
    loader = importlib.util.spec_from_file_location(module_name, path)
    if loader is None or loader.loader is None:
        raise make_error(InputError, f"{path}: not a Python file ({option})", "input")
    module = importlib.util.module_from_spec(loader)
    sys.modules[module_name] = module
    try:
        loader.loader.exec_module(module)
    except SyntaxError as e:
        raise make_error(InputError, f"{path}:{e.lineno}: {e.msg} ({option})", "input") from e
    except Exception as e:
        raise make_error(
            InputError, f"{path}: running it raised {type(e).__name__}: {e} ({option})", "input"
        ) from e
    policy = getattr(module, name, None)
    if not callable(policy):
        found = "is not callable" if policy is not None else "is not defined"
        raise make_error(InputError, f"{path}: `{name}` {found} ({option})", "input")
    return policy
