"""`zombiesim capture --out DIR [options] -- CMD ARGS...`: record a command's I/O with kernel
trace events on a loop-device file system and write a capture folder (docs/capture.md)."""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from typing import Any

from .. import capture as cap
from .. import trace as traces
from .._errors import ConfigError
from .._format import count, size
from .common import EXIT_CHECK_FAILED, EXIT_OK, print_fields
from .parser import add_command, writes
from .trace_import import add_placement_option

EPILOG = """\
examples:
  sudo zombiesim capture --out dd-capture -- \\
      sh -c 'dd if=/dev/urandom of=f bs=4k count=256 conv=fsync'
  sudo zombiesim capture --out pg --size 2GiB --timeout 600 --keep-raw -- ./run-pgbench.sh
  zombiesim trace import-capture dd-capture --out dd.zst
  sudo zombiesim capture --out fio-hints --placement hint -- \
      fio --name=w --rw=randwrite --size=64m --write_hint=short --fsync=32
  sudo zombiesim capture --out git-trimmed --discard -- sh -c 'git clone ... && git gc'
  sudo zombiesim capture --out pg-fstrim --fstrim-every 30 -- ./run-pgbench.sh

CMD runs as the caller (root) with the new file system's mount point as its working
directory, also in $ZOMBIESIM_CAPTURE_DIR. Needs root (or CAP_SYS_ADMIN), tracefs, the
loop driver, losetup, mkfs.<fs>, filefrag and mount; a missing one is named (exit 2).
exit codes: 0 ok, 1 the command failed or timed out (the capture is still written),
2 bad input or a machine that cannot capture, 130 interrupted (nothing is left behind)
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "capture",
        cmd_capture,
        help="record a command's page-cache and block I/O (Linux, root) into a capture folder",
        description="Run CMD on a fresh file system on a loop device while kernel trace events "
        "record the page cache's clean -> dirty transitions and the block writes; write a "
        "capture folder (the layout of traces/samples/captures/pgbench-ext4/) and import it "
        "as DIR/trace.zst (docs/capture.md).",
        epilog=EPILOG,
    )
    writes(
        p.add_argument("--out", metavar="DIR", required=True, help="the capture folder to write"),
        folder=True,
    )
    p.add_argument(
        "--size",
        metavar="SIZE",
        type=_image_size,
        default=cap.DEFAULT_SIZE,
        help="size of the file system (a sparse image; default 512MiB)",
    )
    p.add_argument(
        "--fs",
        choices=sorted(cap.FILESYSTEMS),
        default="ext4",
        help="the file system (default ext4)",
    )
    p.add_argument(
        "--timeout",
        metavar="S",
        type=_seconds,
        help="kill the command after S seconds (the capture is still written, marked so)",
    )
    p.add_argument(
        "--keep-raw",
        action="store_true",
        help="keep the raw kernel trace in the folder (ftrace_raw.txt.gz)",
    )
    add_placement_option(p)
    p.add_argument(
        "--discard",
        action="store_true",
        help="mount with `discard`: the file system trims each extent it frees (the trace "
        "then has trims)",
    )
    p.add_argument(
        "--fstrim-every",
        metavar="S",
        type=_seconds,
        help="run `fstrim` on the file system every S seconds while CMD runs, and once when "
        "it ends (as a timer would)",
    )
    p.add_argument("--force", action="store_true", help="replace a non-empty --out folder")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines, no summary")
    p.add_argument(
        "cmd",
        nargs=argparse.REMAINDER,
        metavar="-- CMD ...",
        help="the command to run (after --)",
    )


def _image_size(text: str) -> int:
    try:
        return traces.parse_size(text, "--size")
    except ConfigError:
        raise argparse.ArgumentTypeError(
            f"expected a size above 0 (e.g. 512MiB, 2GiB), got {text!r}"
        ) from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected seconds above 0, got {text!r}")
    return value


def cmd_capture(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        args.subparser.error(
            "no command to run: give it after `--` (zombiesim capture --out DIR -- CMD ARGS...)"
        )
    minimum = cap.MIN_SIZE[args.fs]
    if args.size < minimum:
        args.subparser.error(f"--size: {args.fs} needs at least {size(minimum)}")

    def log(message: str) -> None:
        if not args.quiet:
            sys.stderr.write(f"zombiesim: capture: {message}\n")
            sys.stderr.flush()

    result = cap.capture(
        cmd,
        args.out,
        size=args.size,
        fs=args.fs,
        timeout=args.timeout,
        keep_raw=args.keep_raw,
        force=args.force,
        log=log,
        placement=args.placement,
        discard=args.discard,
        fstrim_every=args.fstrim_every,
    )
    if not args.quiet:
        _summary(result)
    return EXIT_CHECK_FAILED if result.failed else EXIT_OK


def _summary(r: cap.CaptureResult) -> None:
    c = r.counts
    state = cap.status_text(r.status, r.timed_out, r.timeout)
    events = ", ".join(f"{name} {count(n)}" for name, n in c.events.items()) or "none"
    n, p10, p50, p90 = c.lifetime
    fields = [
        (
            "command",
            f"{'FAILED: ' if r.failed else ''}{state}"
            + ("" if r.timed_out else f" after {r.elapsed_s:.2f} s"),
        ),
        ("file system", f"{r.fs}, {size(r.size)} on {r.loop_device}"),
        ("events", events),
        (
            "device",
            f"{count(c.device_blocks)} 4 KiB block writes in {count(c.device_requests)} "
            f"requests ({count(c.device_blocks_mapped)} to pages of {count(c.device_files)} "
            f"files, {count(c.device_blocks_unmapped)} metadata/journal/unmapped)",
        ),
        (
            "trims",
            f"{count(c.discarded_blocks)} 4 KiB blocks in {count(c.discard_requests)} "
            "discard requests"
            if c.discard_requests
            else "none (no --discard, no --fstrim-every)",
        ),
        (
            "page cache",
            f"{count(c.dirty_rows)} pages dirtied ({count(c.dirty_pages)} distinct, "
            f"{count(c.dirty_files)} files), {count(c.pages_still_dirty)} still dirty at the end"
            + (
                f"; {count(c.dirty_events)} dirty events (large folios)"
                if c.dirty_events != c.dirty_rows
                else ""
            ),
        ),
    ]
    if n:
        fields.append(
            (
                "zombie life",
                f"first dirty -> device write: n={count(n)}, p10 {p10:.3f} s, "
                f"p50 {p50:.3f} s, p90 {p90:.3f} s",
            )
        )
    if c.lost_events:
        fields.append(("lost", f"{count(c.lost_events)} events (the trace buffer overran)"))
    fields.append(("folder", str(r.folder)))
    fields.append(("trace", _trace_line(r)))
    print_fields(f"zombiesim capture · {shlex.join(r.command)}", fields)


def _trace_line(r: cap.CaptureResult) -> str:
    if r.trace is None:
        return r.import_note or "-"
    rep = r.import_report or {}
    parts = []
    if isinstance(rep.get("records"), int):
        parts.append(f"{count(rep['records'])} records")
    for key, what in (
        ("device_writes_joined_share", "device writes"),
        ("host_events_joined_share", "host events"),
    ):
        share = rep.get(key)
        if isinstance(share, int | float):
            parts.append(f"{share:.1%} of {what} joined")
    details = rep.get("details") or {}
    placed = {
        k.removeprefix("placement_writes_"): n
        for k, n in details.items()
        if k.startswith("placement_writes_")
    }
    if placed:
        ids = ", ".join(
            f"{i} ({count(n)})" for i, n in sorted(placed.items(), key=lambda kv: int(kv[0]))
        )
        parts.append(f"placement ids {ids} writes")
    return f"{r.trace}" + (f" ({', '.join(parts)})" if parts else "")
