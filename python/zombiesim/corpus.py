"""The corpus of captured programs (`traces/corpus/` in a checkout, docs/corpus.md): each
entry a folder holding a notified trace (`trace.zst`) and its provenance
(`provenance.toml`: the program and its version, the exact command, the file system, what
was joined). `entries()` reads them; `summary()` adds each trace's statistics."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import InputError, make_error

#: Where the corpus lies in a checkout (beside the Python package's source).
CHECKOUT_CORPUS = Path(__file__).resolve().parents[2] / "traces" / "corpus"
TRACE = "trace.zst"
PROVENANCE = "provenance.toml"


@dataclass
class Entry:
    name: str
    folder: Path
    provenance: dict[str, Any]

    @property
    def trace(self) -> Path:
        return self.folder / TRACE


def default_folder() -> Path:
    """`$ZOMBIESIM_CORPUS`, else the checkout's `traces/corpus/`."""
    env = os.environ.get("ZOMBIESIM_CORPUS")
    return Path(env) if env else CHECKOUT_CORPUS


def entries(folder: str | os.PathLike[str] | None = None) -> list[Entry]:
    """The corpus entries in `folder` (default: `default_folder()`), by name: every
    sub-folder with a `trace.zst`. A missing folder, or an entry whose provenance cannot
    be read, is an InputError naming it."""
    root = Path(folder) if folder is not None else default_folder()
    if not root.is_dir():
        raise make_error(
            InputError,
            f"`{root}`: no corpus folder here (give one, or set ZOMBIESIM_CORPUS; a checkout "
            "has traces/corpus/)",
            "io",
        )
    found = []
    for sub in sorted(p for p in root.iterdir() if (p / TRACE).is_file()):
        prov_path = sub / PROVENANCE
        try:
            prov = tomllib.loads(prov_path.read_text()) if prov_path.exists() else {}
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise make_error(InputError, f"`{prov_path}`: {e}", "io") from e
        found.append(Entry(sub.name, sub, prov))
    return found


def summary(
    entry: Entry, progress: Callable[[str, float | None, int], Any] | None = None
) -> dict[str, Any]:
    """One row of `trace list`: the provenance's program, version and duration, and the
    trace's statistics: writes, trims (a capture with `--discard` or `--fstrim-every`
    carries them), footprint, ideal awareness, zombie lifetimes, write skew, placement
    identifiers."""
    from . import trace as traces

    st = traces.stats(entry.trace, "native", progress=progress)
    h = st.get("host_events") or {}
    life = h.get("zombie_lifetime") or {}
    skew = st["write_skew"]
    p = entry.provenance
    return {
        "name": entry.name,
        "program": p.get("program", "?"),
        "version": p.get("version", "?"),
        "duration_s": st["duration_s"],
        "records": st["records"],
        "writes": st["writes"]["count"],
        "written_bytes": st["writes"]["bytes"],
        "trims": st["trims"]["count"],
        "trimmed_bytes": st["trims"]["bytes"],
        "footprint_bytes": st["written_footprint_bytes"],
        "ideal_awareness": h.get("ideal_awareness"),
        "zombies": h.get("zombies", 0),
        "zombie_life_p50_s": life.get("p50_s") if life.get("count") else None,
        "zombie_life_p90_s": life.get("p90_s") if life.get("count") else None,
        "hottest_10pct": skew["hottest_10pct"] if skew["page_writes"] else None,
        "gini": skew["gini"] if skew["page_writes"] else None,
        "placement_ids": len((st.get("placement") or {}).get("ids", [])),
        "files_deleted": p.get("files_deleted_during_run", 0),
        "trace_bytes": entry.trace.stat().st_size,
        "path": str(entry.trace),
    }
