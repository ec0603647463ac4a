"""Record a command's I/O at three levels with Linux kernel trace events (docs/capture.md).

`capture(cmd, out)` runs `cmd` on a fresh file system on a loop device while a private
trace instance records, in one clock, the page cache's clean → dirty transitions
(`writeback:writeback_dirty_folio`), the block requests (`block:block_rq_issue` /
`block_rq_complete`) and, when the kernel has them, the application's writes
(`syscalls:sys_enter_pwrite64`, `ext4:ext4_da_write_begin`, the fsync family). It then
writes a *capture folder* in the layout of `traces/samples/captures/pgbench-ext4/`:

```text
uptime_start.txt              `uptime idle` (as /proc/uptime) and the epoch time at that moment
inodes.txt                    `ino size path` of every regular file after the run
extents.txt                   `filefrag -e -b4096` of every file, each under `== path`
hints.txt                     `hint path`: each file's Linux write-life hint (F_GET_RW_HINT)
                              where set, read at the end of the run (absent on a kernel
                              without hints)
extents_deleted.txt           the same for files deleted during the run (`== <ino N.G>`),
                              from ext4's block-map events
pagecache_dirty.csv.gz        t,ino,file,index            (t: kernel uptime seconds)
device_writes_hashed.csv.gz   t_wall,rwbs,fsblk,file,file_page,content_xxh3,t_app_write
loop_summary.txt              event counts, block writes mapped/unmapped, the command's status
command.txt                   the command, its exit status and its output
ftrace_raw.txt.gz             the raw trace (only with keep_raw=True)
trace.zst                     the imported trace, when `zombiesim.trace.import_capture` exists
```

`convert_raw(raw, folder)` turns a raw trace plus the folder's `uptime_start.txt`,
`extents.txt` and `inodes.txt` into the CSV files, `extents_deleted.txt` and
`loop_summary.txt`, on its own.
`check_environment()` lists what is missing for a capture here (empty: it can run).

Needs root (or CAP_SYS_ADMIN), tracefs, the loop driver, `losetup`, `mkfs.<fs>`,
`filefrag`, `mount`/`umount`. Content hashes are left empty (no hashing shim) and reads
are not recorded.

The package, one concept per module (each imports only those above it in this list):

- `environment`: what the machine needs (root, tracefs and its events, the loop driver,
  the helper programs), `check_environment()`, and running a helper program;
- `folder`: the capture folder's file names, and `uptime_start.txt`, `inodes.txt` and
  `extents.txt` read and written (`ExtentMap`);
- `convert`: the raw trace turned into the CSV files and `loop_summary.txt` (`convert_raw`);
- `tracefs`: the private trace instance and the reader of its `trace_pipe`;
- `layout`: the file system's files, extents and write-life hints after the run
  (`write_layout`);
- `command`: the command run in its own process group, its status, signals held;
- `run`: `capture()` itself: the resources taken and undone, the folder published and
  imported.
"""

from __future__ import annotations

# The public API is `__all__`; the other names are re-exported for the CLI, the tests and
# scripts that use them as `zombiesim.capture.X` (the tests replace the environment
# probes in `zombiesim.capture.environment`, where `check_environment` looks them up).
from .command import (  # noqa: F401
    CAPTURE_DIR_ENV,
    OUTPUT_LIMIT,
    status_text,
)
from .convert import (  # noqa: F401
    BLOCK,
    SECTORS_PER_BLOCK,
    ConvertResult,
    convert_raw,
)
from .environment import (  # noqa: F401
    CAP_SYS_ADMIN,
    FILESYSTEMS,
    OPTIONAL_EVENTS,
    REQUIRED_EVENTS,
    TRACEFS,
    _available_events,
    _exists,
    _mount_tracefs,
    _privileged,
    _tracefs_mounted,
    _which,
    check_environment,
)
from .folder import (  # noqa: F401
    COMMAND,
    DEVICE_CSV,
    DIRTY_CSV,
    EXTENTS,
    INODES,
    RAW,
    SUMMARY,
    TRACE,
    TRIMS_CSV,
    UPTIME,
    ExtentMap,
    read_inodes,
    read_uptime_start,
    write_uptime_start,
)
from .layout import (  # noqa: F401
    JOURNAL,
    JOURNAL_INODE,
    write_layout,
)
from .run import (  # noqa: F401
    DEFAULT_SIZE,
    MIN_SIZE,
    SETTLE_S,
    CaptureResult,
    capture,
    check_out,
)
from .tracefs import (  # noqa: F401
    BUFFER_KB,
    _remove_stale_instances,
)

__all__ = [
    "DEFAULT_SIZE",
    "FILESYSTEMS",
    "CaptureResult",
    "ConvertResult",
    "capture",
    "check_environment",
    "convert_raw",
]
