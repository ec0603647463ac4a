"""`capture()`: a capture from start to end — options checked, the loop device, the file
system, the trace instance and its reader taken (each with signals held), the command run,
everything undone, the folder converted, published and imported."""

from __future__ import annotations

import ctypes
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import InputError, make_error
from .command import CAPTURE_DIR_ENV, _resolve_program, _run_command, _signals_held, status_text
from .convert import ConvertResult, convert_raw
from .environment import (
    FILESYSTEMS,
    TRACEFS,
    _available_events,
    _environment_error,
    _run,
    check_environment,
)
from .folder import COMMAND, RAW, TRACE, UPTIME, write_uptime_start
from .layout import write_layout
from .tracefs import _PipeReader, _TraceInstance
from .trim import DISCARD_OPTION, PeriodicTrim, check_seconds

#: Default size of the file system image (sparse).
DEFAULT_SIZE = 512 << 20
#: Smallest image accepted (xfs wants 300 MB; ext4 makes do with far less).
MIN_SIZE = {"ext4": 16 << 20, "xfs": 300 << 20}
#: After the command and the sync, how long writeback and completions get to land.
SETTLE_S = 0.5


@dataclass
class CaptureResult:
    """What `capture` did."""

    folder: Path
    command: list[str]
    #: The command's exit status (negative: killed by that signal); None if it timed out.
    status: int | None
    timed_out: bool
    elapsed_s: float
    fs: str
    size: int
    loop_device: str
    counts: ConvertResult
    #: The time limit given, seconds.
    timeout: float | None = None
    #: `folder/trace.zst` when the importer ran, else None (see `import_note`).
    trace: Path | None = None
    import_note: str | None = None
    #: What the importer said (records, joined shares, ...), when it ran.
    import_report: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.timed_out or self.status != 0


def _syncfs(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.syncfs(fd) != 0:
            os.sync()
    except (OSError, AttributeError):
        os.sync()
    finally:
        os.close(fd)


def check_out(out: Path | str, force: bool = False) -> Path:
    """The capture folder's path, refused (InputError) when it is a file, or a non-empty
    folder without `force`."""
    out = Path(out)
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise make_error(InputError, f"--out `{out}`: exists and is not a folder", "io")
        if any(out.iterdir()) and not force:
            raise make_error(
                InputError,
                f"--out `{out}`: the folder exists and is not empty (--force replaces it)",
                "io",
            )
    parent = out.resolve().parent
    if not parent.is_dir():
        raise make_error(InputError, f"--out `{out}`: no directory `{parent}`", "io")
    if not os.access(parent, os.W_OK):
        raise make_error(InputError, f"--out `{out}`: cannot write in `{parent}`", "io")
    return out


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _publish(staging: Path, out: Path) -> None:
    """Move the finished folder into place (replacing an existing one, with --force)."""
    if out.exists():
        if out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        else:
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.rename(out, old)
            os.rename(staging, out)
            shutil.rmtree(old, ignore_errors=True)
            return
    os.rename(staging, out)


def capture(
    cmd: Sequence[str],
    out: Path | str,
    *,
    size: int = DEFAULT_SIZE,
    fs: str = "ext4",
    timeout: float | None = None,
    keep_raw: bool = False,
    force: bool = False,
    echo: bool = True,
    log: Callable[[str], None] | None = None,
    tracefs: Path | str = TRACEFS,
    placement: str = "none",
    discard: bool = False,
    fstrim_every: float | None = None,
) -> CaptureResult:
    """Run `cmd` on a fresh `fs` file system of `size` bytes on a loop device (its working
    directory, also in `$ZOMBIESIM_CAPTURE_DIR`), tracing its I/O, and write the capture
    folder `out` (see the module's documentation). The folder is assembled beside `out`
    and renamed at the end: a failed capture leaves nothing. A command that fails or times
    out still gives a capture (`result.failed`, noted in loop_summary.txt).

    `placement` is the import's (`zombiesim.trace.import_capture`): `none`, `file`,
    `file:N` or `hint`, checked before anything runs.

    Trims, as real systems send them (`capture.trim`): `discard` mounts the file system
    with `discard` (each freed extent trimmed once its journal commit lands);
    `fstrim_every` runs `fstrim` on it every so many seconds while the command runs, and
    once when it ends. Either gives the trace trim records; neither, none (the device
    never learns what a deleted file freed).

    Raises InputError (exit 2) naming what is missing when the machine cannot capture."""
    cmd = list(cmd)
    if not cmd:
        raise make_error(InputError, "capture: no command to run", "input")
    if fs not in FILESYSTEMS:
        raise make_error(
            InputError, f"--fs `{fs}`: expected one of {', '.join(FILESYSTEMS)}", "input"
        )
    if size < MIN_SIZE[fs]:
        raise make_error(
            InputError, f"--size: {fs} needs at least {MIN_SIZE[fs] >> 20} MiB, got {size}", "input"
        )
    check_seconds(timeout, "--timeout")
    check_seconds(fstrim_every, "--fstrim-every")
    _check_placement(placement)
    cmd[0] = _resolve_program(cmd[0])
    out = check_out(out, force)
    tracefs = Path(tracefs)
    missing = check_environment(fs, tracefs, fstrim=fstrim_every is not None)
    if missing:
        raise _environment_error("capture needs: " + "; ".join(missing))
    say = log or (lambda _msg: None)
    available = _available_events(tracefs) or set()

    size = -(-size // (1 << 20)) << 20
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.capture-", dir=out.resolve().parent))
    work = Path(tempfile.mkdtemp(prefix="zombiesim-capture-"))
    image, mnt = work / f"{fs}.img", work / "mnt"
    loop: str | None = None
    mounted = False
    instance: _TraceInstance | None = None
    reader: _PipeReader | None = None
    trimmer: PeriodicTrim | None = None
    published = False
    warnings: list[str] = []
    raw = staging / RAW
    try:
        with open(image, "wb") as f:
            f.truncate(size)
        # Each resource is taken and recorded with SIGINT and SIGTERM held, so a signal
        # cannot fall between the two and leave it behind (a loop device, a mount, a
        # trace instance, an open trace pipe): the `finally` below undoes what is recorded.
        with _signals_held():
            loop = _run(["losetup", "--find", "--show", str(image)], "attaching a loop device")
            loop = loop.strip()
        st = os.stat(loop)
        dev = (os.major(st.st_rdev), os.minor(st.st_rdev))
        say(f"{loop} ({dev[0]}:{dev[1]}): {fs}, {size >> 20} MiB")
        if fs == "ext4":
            # Inode tables and journal zeroed now, not by ext4lazyinit during the capture.
            init = "lazy_itable_init=0,lazy_journal_init=0,nodiscard"
            mkfs = ["mkfs.ext4", "-q", "-F", "-E", init]
        else:
            mkfs = ["mkfs.xfs", "-q", "-f", "-K"]
        _run([*mkfs, loop], f"mkfs.{fs}", timeout=600)
        mnt.mkdir()
        with _signals_held():
            options = ["-o", DISCARD_OPTION] if discard else []
            _run(["mount", "-t", fs, *options, loop, str(mnt)], "mounting the file system")
            mounted = True
        with _signals_held():
            instance = _TraceInstance(tracefs, f"zombiesim-{os.getpid()}")
        instance.configure(available, dev)
        with _signals_held():
            reader = _PipeReader(instance.path / "trace_pipe", raw)
            reader.start()
        write_uptime_start(staging / UPTIME)
        instance.start()
        say(f"tracing {', '.join(instance.enabled)}; running {shlex.join(cmd)}")
        if fstrim_every is not None:
            trimmer = PeriodicTrim(mnt, fstrim_every)
            trimmer.start()
        status, timed_out, elapsed, output = _run_command(cmd, mnt, timeout, echo)
        _syncfs(mnt)
        if trimmer is not None:
            warnings.extend(trimmer.finish())
        time.sleep(SETTLE_S)
        instance.stop()
        reader.finish()
        reader = None
        files = write_layout(mnt, staging, journal=loop if fs == "ext4" else None)
        # The device is no longer needed: free it before the (longer) conversion and import.
        enabled, loop_device = instance.enabled, loop
        with _signals_held():
            warnings.extend(_teardown(None, instance, mnt, loop, work))
        instance, loop, mounted = None, None, False
        say(f"{files} file{'' if files == 1 else 's'} on the file system; converting the trace")
        state = status_text(status, timed_out, timeout)
        failed = timed_out or status != 0
        (staging / COMMAND).write_bytes(
            f"$ {shlex.join(cmd)}\n# cwd {mnt} (${CAPTURE_DIR_ENV}); {fs} {size >> 20} MiB "
            f"on {loop_device}\n".encode()
            + output
            + (b"" if not output or output.endswith(b"\n") else b"\n")
            + f"# {state}{'' if timed_out else f' after {elapsed:.3f} s'}\n".encode()
        )
        trims = ["mounted with discard"] if discard else []
        if trimmer is not None:
            trims.append(f"fstrim every {fstrim_every:g} s and at the end ({trimmer.runs} runs)")
        notes = [
            f"command: {shlex.join(cmd)}",
            f"command {'FAILED: ' if failed else ''}{state}"
            + ("" if timed_out else f" after {elapsed:.3f} s"),
            f"file system: {fs}, {size >> 20} MiB on {loop_device} ({dev[0]}:{dev[1]}), "
            f"{files} file{'' if files == 1 else 's'}",
            f"trims: {'; '.join(trims) if trims else 'none (no discard, no fstrim)'}",
            f"events recorded: {', '.join(enabled)}",
            "content_xxh3 and t_app_write are empty (no hashing shim)",
        ]
        counts = convert_raw(raw, staging, device=dev, notes=notes)
        if not keep_raw:
            raw.unlink()
        result = CaptureResult(
            folder=out,
            command=cmd,
            status=status,
            timed_out=timed_out,
            elapsed_s=elapsed,
            fs=fs,
            size=size,
            loop_device=loop_device,
            counts=counts,
            timeout=timeout,
            warnings=warnings,
        )
        _import(staging, result, placement)
        os.chmod(staging, 0o777 & ~_umask())  # mkdtemp made it private
        _publish(staging, out)
        published = True
        return result
    finally:
        if trimmer is not None:
            trimmer.stop()
        with _signals_held():
            warnings.extend(_teardown(reader, instance, mnt if mounted else None, loop, work))
            if not published:
                shutil.rmtree(staging, ignore_errors=True)
            for w in warnings:
                sys.stderr.write(f"zombiesim: warning: {w}\n")


def _check_placement(placement: str) -> None:
    from .. import _core

    check = getattr(_core, "trace_check_capture_placement", None)
    if check is not None:
        check(placement)


def _import(folder: Path, result: CaptureResult, placement: str = "none") -> None:
    from .. import trace as traces

    importer = getattr(traces, "import_capture", None)
    if importer is None:
        result.import_note = (
            "not imported: this build has no zombiesim.trace.import_capture; later, "
            "`zombiesim trace import-capture DIR --out DIR/trace.zst`"
        )
        return
    try:
        report = importer(str(folder), str(folder / TRACE), placement=placement)
    except AttributeError as e:  # the Python side is there, the compiled core is older
        result.import_note = (
            f"not imported: the importer is not built into this zombiesim ({e}); later, "
            "`zombiesim trace import-capture DIR --out DIR/trace.zst`"
        )
        return
    except Exception as e:  # the capture is still worth keeping
        result.import_note = f"not imported: {e}"
        result.warnings.append(f"importing the capture failed: {e}")
        return
    result.trace = result.folder / TRACE
    result.import_report = report if isinstance(report, dict) else None


def _teardown(
    reader: _PipeReader | None,
    instance: _TraceInstance | None,
    mnt: Path | None,
    loop: str | None,
    work: Path,
) -> list[str]:
    """Undo everything, each step on its own; what could not be undone, as warnings."""
    warnings: list[str] = []

    def step(what: str, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except Exception as e:
            warnings.append(f"{what}: {e}")

    if instance is not None:
        step("stopping the trace", instance.stop)
    if reader is not None:
        reader.stopping.set()
        reader.join(timeout=10)
    if instance is not None:
        step(f"removing the trace instance {instance.path}", instance.remove)
    if mnt is not None:
        step(f"unmounting {mnt}", lambda: _umount(mnt))
    if loop is not None:
        step(f"detaching {loop}", lambda: _detach(loop))
    mount_point = work / "mnt"
    if not os.path.ismount(mount_point):
        shutil.rmtree(work, ignore_errors=True)
    elif mnt is not None:
        warnings.append(f"{mount_point} is still mounted; {work} was left in place")
    return warnings


def _detach(loop: str, timeout_s: float = 30.0) -> None:
    """Detach `loop` and wait until the kernel has let it go. `losetup -d` on a device
    something still holds for a moment (udev probing it after the unmount) only marks it
    to be cleared when the holder lets go, so the capture would end with its image
    still attached; its `backing_file` in sysfs is gone once it is released."""
    _run(["losetup", "-d", loop], "losetup -d")
    backing = Path("/sys/block") / Path(loop).name / "loop" / "backing_file"
    deadline = time.monotonic() + timeout_s
    while backing.exists():
        if time.monotonic() > deadline:
            raise OSError(f"{loop} is still attached {timeout_s:.0f} s after losetup -d")
        time.sleep(0.02)


def _umount(mnt: Path) -> None:
    for _ in range(10):
        proc = subprocess.run(["umount", str(mnt)], capture_output=True, text=True, timeout=120)
        if proc.returncode == 0:
            return
        time.sleep(0.5)
    # Something still holds it: detach it now, it goes when the last user does.
    _run(["umount", "--lazy", str(mnt)], "umount --lazy")
