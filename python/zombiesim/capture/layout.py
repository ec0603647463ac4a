"""The file system's layout after the run: `inodes.txt` and `extents.txt` (`filefrag` on
every regular file, and the ext4 journal read with `debugfs`), and `hints.txt` (each
file's Linux write-life hint)."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import struct
import subprocess
from pathlib import Path

from .environment import _which
from .folder import _EXTENT, EXTENTS, HINTS, INODES

#: fcntl(2) commands of Linux's write-life hints (F_LINUX_SPECIFIC_BASE + 11, + 12); the
#: argument is a pointer to a u64 (`RWH_WRITE_LIFE_*`: 0 not set, 1 none, 2 short,
#: 3 medium, 4 long, 5 extreme).
F_GET_RW_HINT = 1035
F_SET_RW_HINT = 1036


def write_life_hint(path: str | os.PathLike[str]) -> int | None:
    """The write-life hint Linux keeps on `path`'s inode (set by any process with
    `F_SET_RW_HINT`; it lasts while the inode is in memory); None where the kernel has no
    such hints (before 4.13) or the file cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return struct.unpack("Q", fcntl.fcntl(fd, F_GET_RW_HINT, bytes(8)))[0]
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTTY, errno.EOPNOTSUPP):
            raise
        return None
    finally:
        os.close(fd)


def write_hints(root: Path, folder: Path, names: list[str]) -> None:
    """`hints.txt` (`hint path`, files whose hint is set) of the files `names` under
    `root`: read at the end of the run, before the file system is unmounted, so each file
    has the hint it was last given. No `hints.txt` where the kernel keeps no hints."""
    hinted: list[tuple[int, str]] = []
    supported = False
    for rel in names:
        hint = write_life_hint(root / rel)
        if hint is None:
            continue
        supported = True
        if hint:
            hinted.append((hint, rel))
    if not supported and names:
        return
    with open(folder / HINTS, "w") as f:
        for hint, rel in hinted:
            f.write(f"{hint} {rel}\n")


def _list_files(root: Path) -> list[tuple[int, int, str]]:
    """`(ino, size, relative path)` of every regular file under `root` (symbolic links not
    followed), in walk order."""
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            if "\n" in rel:
                continue
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                files.append((st.st_ino, st.st_size, rel))
    return files


#: The pseudo-file the ext4 journal is listed as (inode 8), as in the pgbench capture.
JOURNAL = "<ext4-journal>"
JOURNAL_INODE = 8


def _journal_extents(device: str) -> list[tuple[int, int, int]]:
    """`(logical, physical, length)` of the ext4 journal (inode 8) on `device`, read with
    `debugfs -R "blocks <8>"` (read-only, fine while mounted); empty when that fails."""
    program = _which("debugfs")
    if program is None:
        return []
    try:
        proc = subprocess.run(
            [program, "-R", f"blocks <{JOURNAL_INODE}>", device],
            capture_output=True,
            text=True,
            timeout=120,
        )
        blocks = [int(b) for b in proc.stdout.split()]
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    extents: list[tuple[int, int, int]] = []
    for logical, block in enumerate(blocks):
        if extents and extents[-1][1] + extents[-1][2] == block:
            lo, ph, n = extents[-1]
            extents[-1] = (lo, ph, n + 1)
        else:
            extents.append((logical, block, 1))
    return extents


def write_layout(root: Path, folder: Path, journal: str | None = None) -> int:
    """`inodes.txt` and `extents.txt` of the file system mounted at `root` (with `journal`,
    an ext4 device, its journal too, as the pseudo-file `<ext4-journal>`); the number of
    files."""
    files = _list_files(root)
    with open(folder / INODES, "w") as f:
        for ino, size, rel in files:
            f.write(f"{ino} {size} {rel}\n")
    extents: dict[str, list[str]] = {rel: [] for _, _, rel in files}
    names = [rel for _, _, rel in files]
    for i in range(0, len(names), 200):
        batch = names[i : i + 200]
        proc = subprocess.run(
            [_which("filefrag") or "filefrag", "-e", "-b4096", "--", *batch],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=600,
        )
        current: str | None = None
        for line in proc.stdout.splitlines():
            if line.startswith("File size of "):
                head = line[len("File size of ") :]
                current = head[: head.rfind(" is ")]
                if current not in extents:
                    current = None
            elif current is not None and _EXTENT.match(line):
                extents[current].append(line)
    journal_extents = _journal_extents(journal) if journal else []
    with open(folder / EXTENTS, "w") as f:
        for rel in names:
            f.write(f"== {rel}\n")
            for line in extents[rel]:
                f.write(line + "\n")
        if journal_extents:
            f.write(f"== {JOURNAL}\n")
            for i, (lo, ph, n) in enumerate(journal_extents):
                last = "last,eof" if i == len(journal_extents) - 1 else ""
                f.write(f"{i:4d}: {lo}.. {lo + n - 1}: {ph}.. {ph + n - 1}: {n}: {last}\n")
    if journal_extents:
        with open(folder / INODES, "a") as f:
            f.write(f"{JOURNAL_INODE} 0 {JOURNAL}\n")
    write_hints(root, folder, names)
    return len(files)
