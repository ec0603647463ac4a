"""The real traces the project ships (`traces/samples/` in a checkout; its README gives
each file's provenance and licence, `SHA256SUMS` their checksums).

```
traces/samples/
  msr-src1_0-excerpt.csv            MSR Cambridge, volume src1_0, first 10 001 records
  captures/pgbench-ext4/            PostgreSQL pgbench on ext4: page cache, device, WAL
  captures/fio-pareto/              fio's own iolog of Pareto random writes
  captures/sqlite-wal/              SQLite in WAL mode under a hashing block device
```

The README's examples, the docs, the tests and the reproductions read them from here.
`$ZOMBIESIM_TRACES` points at another folder laid out the same way (an installed
package has no checkout beside it); pointed at a folder that does not exist it hides
them, which the tests use to leave the real captures out of a quick reproduction.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ._errors import InputError, make_error

__all__ = ["CHECKOUT_SAMPLES", "MSR_EXCERPT", "checksums", "folder", "path", "verify"]

#: Where the samples lie in a checkout (beside the Python package's source).
CHECKOUT_SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples"
#: The MSR Cambridge excerpt, relative to the samples folder.
MSR_EXCERPT = "msr-src1_0-excerpt.csv"
#: The checksum list, relative to the samples folder (`sha256sum` format).
SUMS = "SHA256SUMS"


def folder() -> Path | None:
    """`$ZOMBIESIM_TRACES` if set (None when it is not a folder), else the checkout's
    `traces/samples/` (None when absent)."""
    env = os.environ.get("ZOMBIESIM_TRACES")
    root = Path(env) if env else CHECKOUT_SAMPLES
    return root if root.is_dir() else None


def path(relative: str) -> Path:
    """The shipped sample `relative` (e.g. `MSR_EXCERPT`), or an InputError that names
    where it was looked for and how to get it back."""
    root = folder()
    where = Path(os.environ.get("ZOMBIESIM_TRACES") or CHECKOUT_SAMPLES)
    found = root / relative if root is not None else None
    if found is None or not found.exists():
        raise make_error(
            InputError,
            f"the sample trace `{relative}` is missing: not in `{where}` (a checkout ships "
            "it in traces/samples/; `git checkout -- traces/samples` restores it, or set "
            "ZOMBIESIM_TRACES to a folder that holds it)",
            "io",
        )
    return found


def checksums(root: Path | None = None) -> dict[str, str]:
    """`{relative path: sha256}` as listed in the samples' `SHA256SUMS`."""
    root = root or CHECKOUT_SAMPLES
    sums = {}
    for line in (root / SUMS).read_text().splitlines():
        digest, _, name = line.partition("  ")
        if name:
            sums[name] = digest
    return sums


def verify(root: Path | None = None) -> list[str]:
    """What is wrong with the shipped samples: one line per file that is missing or
    whose SHA-256 differs from `SHA256SUMS` (empty when all are whole)."""
    root = root or CHECKOUT_SAMPLES
    problems = []
    for name, digest in checksums(root).items():
        file = root / name
        if not file.is_file():
            problems.append(f"{name}: missing")
            continue
        h = hashlib.sha256()
        with open(file, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        if h.hexdigest() != digest:
            problems.append(f"{name}: SHA-256 {h.hexdigest()}, expected {digest}")
    return problems
