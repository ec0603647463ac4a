"""Writing output files atomically (a temp file in the same directory, then `os.replace`)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ._errors import InputError, ZombiesimError, make_error


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _cannot_write(path: str | os.PathLike[str], e: OSError) -> ZombiesimError:
    return make_error(InputError, f"cannot write `{path}`: {e.strerror or e}", "io")


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
    raw = data.encode() if isinstance(data, str) else data
    with atomic_output(path) as tmp:
        try:
            with open(tmp, "wb") as f:
                f.write(raw)
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            raise _cannot_write(path, e) from e


#: Suffixes the simulator's writers look at (compression is chosen by the file name).
_KEPT_SUFFIXES = (".gz", ".zst")


@contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[str]:
    """A temp path for a writer that opens files by name (the simulator's trace writer).

    The temp file is in the same directory and ends with the target's compression suffix
    (`.gz`, `.zst`), so it is written the same way; when the block ends it replaces `path`,
    and when the block raises it is removed."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    suffix = next((s for s in _KEPT_SUFFIXES if target.name.endswith(s)), "")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".tmp{suffix}", dir=directory)
        os.close(fd)
    except OSError as e:
        raise _cannot_write(path, e) from e
    try:
        try:
            yield tmp
        except ZombiesimError as e:
            if tmp not in str(e):
                raise
            # Errors name the file being written: name the target, not the temp file.
            message = str(e).replace(tmp, os.fspath(path))
            raise make_error(type(e), message, getattr(e, "kind", "io")) from e
        try:
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, target)
        except OSError as e:
            raise _cannot_write(path, e) from e
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
