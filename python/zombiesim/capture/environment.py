"""What a capture needs of the machine: root, tracefs and its events, the loop driver and the
helper programs; `check_environment()` lists what is missing, and `_run` runs a helper
program, naming it when it fails."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from .._errors import InputError, make_error

#: Where tracefs is (or is mounted by the check).
TRACEFS = Path("/sys/kernel/tracing")
#: The events a capture cannot do without; alternatives in the tuple (older kernels
#: have `writeback_dirty_page`, renamed `writeback_dirty_folio` in 5.18).
REQUIRED_EVENTS: tuple[tuple[str, ...], ...] = (
    ("writeback:writeback_dirty_folio", "writeback:writeback_dirty_page"),
    ("block:block_rq_issue",),
    ("block:block_rq_complete",),
)
#: Recorded when the kernel has them: the application's writes and syncs.
OPTIONAL_EVENTS = (
    "syscalls:sys_enter_pwrite64",
    "syscalls:sys_enter_fsync",
    "syscalls:sys_enter_fdatasync",
    "syscalls:sys_enter_sync_file_range",
    "ext4:ext4_da_write_begin",
    # The size (order) of each folio the page cache adds: a dirty large folio is all of
    # its pages dirty, and `writeback_dirty_folio` names only the first.
    "filemap:mm_filemap_add_to_page_cache",
    "filemap:mm_filemap_delete_from_page_cache",
    # Which inode page each block holds as the run goes (ext4): blocks mapped for
    # writing, blocks freed, inodes freed. Files deleted during the run are joined by
    # them (extents.txt sees only the files left at the end).
    "ext4:ext4_ext_map_blocks_exit",
    "ext4:ext4_free_blocks",
    "ext4:ext4_free_inode",
)
#: Extra filters of single events (ANDed with their system's device filter): only
#: mappings made for writing that map something.
EVENT_FILTERS = {"ext4:ext4_ext_map_blocks_exit": "ret > 0 && flags & 1"}
#: File systems and the package their mkfs comes in.
FILESYSTEMS = {"ext4": "e2fsprogs", "xfs": "xfsprogs"}

CAP_SYS_ADMIN = 21


def _environment_error(message: str) -> Exception:
    return make_error(InputError, message, "environment")


# -- environment checks (each probe is a module function, so tests can replace it) -----------


def _privileged() -> bool:
    """Effective root, or CAP_SYS_ADMIN in the effective set."""
    if os.geteuid() == 0:
        return True
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> CAP_SYS_ADMIN & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False


def _tracefs_mounted(path: Path) -> bool:
    return (path / "available_events").exists()


def _mount_tracefs(path: Path) -> str | None:
    """Mount tracefs at `path`; None when it worked, else why not."""
    try:
        proc = subprocess.run(
            ["mount", "-t", "tracefs", "nodev", str(path)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return str(e)
    if proc.returncode != 0 or not _tracefs_mounted(path):
        return proc.stderr.strip() or f"exit status {proc.returncode}"
    return None


def _available_events(path: Path) -> set[str] | None:
    """The events tracefs offers, or None when they cannot be read."""
    try:
        with open(path / "available_events") as f:
            return {line.strip() for line in f if line.strip()}
    except OSError:
        return None


def _which(program: str) -> str | None:
    found = shutil.which(program)
    if found is None:
        # Root's tools may live in sbin directories a user's PATH leaves out.
        for d in ("/usr/sbin", "/sbin", "/usr/bin", "/bin"):
            if os.access(os.path.join(d, program), os.X_OK):
                return os.path.join(d, program)
    return found


def _exists(path: str) -> bool:
    return os.path.exists(path)


def check_environment(
    fs: str = "ext4", tracefs: Path | str = TRACEFS, mount: bool = True, fstrim: bool = False
) -> list[str]:
    """What a capture needs and this machine lacks, one item each naming the thing and how to
    get it; empty when a capture can run. With `mount`, an unmounted tracefs is mounted (as
    root) and named only if that fails; with `fstrim`, `fstrim` is needed too."""
    tracefs = Path(tracefs)
    missing: list[str] = []
    root = _privileged()
    if not root:
        missing.append(
            f"root privileges (effective uid {os.geteuid()}, no CAP_SYS_ADMIN): run it as "
            "root, e.g. `sudo zombiesim capture ...`"
        )
    if not _tracefs_mounted(tracefs):
        if not root:
            missing.append(
                f"tracefs at {tracefs} (not mounted): as root, `mount -t tracefs nodev {tracefs}`"
            )
        else:
            why = _mount_tracefs(tracefs) if mount else "not tried"
            if why is not None:
                missing.append(
                    f"tracefs at {tracefs} (not mounted, and `mount -t tracefs nodev "
                    f"{tracefs}` failed: {why}): a kernel with CONFIG_FTRACE and tracefs, "
                    "mounted there"
                )
    if _tracefs_mounted(tracefs):
        events = _available_events(tracefs)
        if events is None:
            missing.append(
                f"read access to {tracefs / 'available_events'} (to check the trace events): "
                "run as root"
            )
        else:
            for choices in REQUIRED_EVENTS:
                if not any(c in events for c in choices):
                    alt = f" (or {', '.join(choices[1:])})" if len(choices) > 1 else ""
                    missing.append(
                        f"kernel trace event `{choices[0]}`{alt} (not in "
                        f"{tracefs / 'available_events'}): a kernel with tracepoints "
                        "(CONFIG_TRACEPOINTS, CONFIG_BLK_DEV_IO_TRACE for block events)"
                    )
            if not _exists(str(tracefs / "instances")):
                missing.append(
                    f"trace instances ({tracefs / 'instances'} is absent): a kernel of 4.1 or later"
                )
    if not _exists("/dev/loop-control"):
        missing.append("/dev/loop-control (the loop block driver): `modprobe loop` as root")
    tools = [
        ("losetup", "util-linux"),
        (f"mkfs.{fs}", FILESYSTEMS.get(fs, fs)),
        ("filefrag", "e2fsprogs"),
        ("mount", "util-linux"),
        ("umount", "util-linux"),
    ]
    if fstrim:
        tools.append(("fstrim", "util-linux"))
    for program, package in tools:
        if _which(program) is None:
            missing.append(f"`{program}` (package {package}: `apt-get install {package}`)")
    return missing


def _run(cmd: list[str], what: str, timeout: float = 120) -> str:
    """Run a helper program; its stdout, or an error naming `what` and its stderr."""
    cmd = [_which(cmd[0]) or cmd[0], *cmd[1:]]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as e:
        raise _environment_error(f"{what} failed (`{shlex.join(cmd)}`): {e}") from e
    if proc.returncode != 0:
        detail = proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}"
        raise _environment_error(f"{what} failed (`{shlex.join(cmd)}`): {detail}")
    return proc.stdout
