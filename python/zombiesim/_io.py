"""Writing output files atomically (a temp file in the same directory, then `os.replace`)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ._errors import InputError, make_error


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write `data` to `path` so readers see either the old file or the whole new one.

    `"-"` writes to standard output. A directory that cannot be written raises
    `InputError` naming the path."""
    if str(path) == "-":
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
        else:
            sys.stdout.write(data)
            if not data.endswith("\n"):
                sys.stdout.write("\n")
        sys.stdout.flush()
        return
    target = Path(path)
    raw = data.encode() if isinstance(data, str) else data
    directory = target.parent if str(target.parent) else Path(".")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
        tmp = None
    except OSError as e:
        raise make_error(InputError, f"cannot write `{path}`: {e.strerror or e}", "io") from e
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
