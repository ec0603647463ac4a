"""Writing output files without destroying what is at the path.

- A regular file (or a path that does not exist yet) is replaced atomically: a temp file
  in the same directory, then `os.replace`, so readers see the old file or the whole new
  one, and a failed or killed write leaves the old file as it was.
- A symbolic link is followed: its final target is replaced atomically (the temp file
  sits beside the target), and the link stays a link.
- A character or block device, a FIFO or a socket is written directly (opened and
  written in place): replacing it would delete the device node or the pipe.
"""

from __future__ import annotations

import os
import stat
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


def resolve_output(path: str | os.PathLike[str]) -> tuple[Path, bool]:
    """Where writing `path` really goes, and whether it can be replaced atomically.

    Symbolic links are followed to their final target (which may not exist yet); a
    target that exists and is not a regular file (a device, FIFO or socket) is written
    in place (`False`)."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return target, True
    return target, stat.S_ISREG(mode) or stat.S_ISDIR(mode)


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
    target, replaceable = resolve_output(path)
    if not replaceable:
        try:
            with open(target, "wb") as f:
                f.write(raw)
        except OSError as e:
            raise _cannot_write(path, e) from e
        return
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

    The temp file is in the same directory as the target (a symbolic link's target, see
    `resolve_output`) and ends with the path's compression suffix (`.gz`, `.zst`), so it
    is written the same way; when the block ends it replaces the target, and when the
    block raises it is removed. A device or FIFO is handed over as it is, to be written
    in place."""
    target, replaceable = resolve_output(path)
    if not replaceable:
        yield os.fspath(target)
        return
    directory = target.parent if str(target.parent) else Path(".")
    name = Path(path).name
    suffix = next((s for s in _KEPT_SUFFIXES if name.endswith(s)), "")
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
            try:
                mode = stat.S_IMODE(os.stat(target).st_mode)  # keep an existing file's mode
            except OSError:
                mode = 0o666 & ~_umask()
            os.chmod(tmp, mode)
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


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(device, inode) of what `path` names after following links; None if nothing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def refuse_clobbering(
    outputs: list[tuple[str, str | os.PathLike[str], str]],
    inputs: list[tuple[str, str | os.PathLike[str]]],
) -> None:
    """Before any work: refuse an output that would destroy something.

    `outputs` are `(label, path, kind)` with kind `file` or `folder`; `inputs` are
    `(label, path)`. Labels name where a path came from (`--json`, `FILE`). Refused,
    each an InputError naming both paths (exit 2), and nothing is written:

    - a file output that is the same file as an input (device and inode, after links);
    - two outputs that are the same file (the second would replace the first);
    - a file output that exists and is a directory, a block device or a socket (a FIFO
      or a character device such as `/dev/stdout` is written in place, and `-` is
      standard output);
    - a folder output that exists and is not a directory.
    """
    seen: dict[tuple[int, int], str] = {}
    written: dict[str, str] = {}
    for label, path in inputs:
        ident = _identity(path)
        if ident is not None:
            seen.setdefault(ident, f"the input `{os.fspath(path)}` ({label})")
    for label, path, kind in outputs:
        if path is None or os.fspath(path) == "-":
            continue
        shown = f"`{os.fspath(path)}` ({label})"
        where = os.path.realpath(path)
        if where in written:
            raise make_error(
                InputError,
                f"the output {shown} is the same path as the output {written[where]}: the "
                "second would replace the first (name another output)",
                "io",
            )
        written[where] = shown
        try:
            st = os.stat(path)
        except OSError:
            continue  # nothing there yet (a link to nothing is written where it points)
        mode = st.st_mode
        if kind == "folder":
            if not stat.S_ISDIR(mode):
                raise make_error(
                    InputError,
                    f"the output {shown} exists and is not a folder (name a folder)",
                    "io",
                )
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            raise make_error(
                InputError,
                f"the output {shown} is {_kind(mode)}, not a file: refusing to write it "
                "(name a file)",
                "io",
            )
        ident = (st.st_dev, st.st_ino)
        if ident in seen and stat.S_ISREG(mode):
            raise make_error(
                InputError,
                f"the output {shown} is the same file as {seen[ident]}: refusing to "
                "overwrite it (name another output)",
                "io",
            )
        seen[ident] = f"the output {shown}"


def folder_files(
    folder: str | os.PathLike[str], patterns: tuple[str, ...] | None = None
) -> list[str]:
    """The regular files in `folder` that a command given it reads: those matching
    `patterns` (glob patterns relative to it, e.g. `*/trace.zst`), or every file directly
    in it. Nothing when it is not a folder."""
    root = Path(folder)
    if not root.is_dir():
        return []
    found = [p for pattern in patterns or ("*",) for p in sorted(root.glob(pattern))]
    return [os.fspath(p) for p in found if p.is_file()]
