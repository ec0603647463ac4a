"""The results folder of a sweep.

```text
results/
  sweep.json          the manifest: version, grid text, axes, metrics, every cell's key and
                      axis values, the skipped cells, and whether the sweep finished
  cells/KEY.json      one finished cell: its axis values and its report (written atomically)
  failed/KEY.json     one failed cell: its axis values, configuration and error
  results.parquet     every cell's report flattened, one row per cell (+ results.csv)
  report.html         the sweep report
```

A cell file appears whole or not at all (temp file, then rename), so a sweep killed at any
moment leaves only complete cells, and the next run takes up where it stopped. The folder
belongs to one zombiesim version: results of another could not be compared cell by cell,
so another version refuses it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._core import __version__
from .._errors import InputError, make_error
from .._io import atomic_write
from ..report import Report

__all__ = ["MANIFEST", "ResultsStore", "table_frame"]

MANIFEST = "sweep.json"
#: The layout of the folder (bump when it changes).
LAYOUT = 1


class ResultsStore:
    """A results folder; see the module doc."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.dir = Path(directory)

    # -- opening ---------------------------------------------------------------------------

    def manifest(self) -> dict[str, Any] | None:
        path = self.dir / MANIFEST
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise make_error(InputError, f"{path}: not a sweep manifest ({e})", "io") from None
        if not isinstance(data, dict) or "zombiesim" not in data:
            raise make_error(InputError, f"{path}: not a sweep manifest", "io")
        return data

    def open_for_writing(self) -> None:
        """Create the folder, or check that an existing one is a sweep folder of this
        version (`InputError` naming it otherwise)."""
        manifest = self.manifest()
        if manifest is None:
            if self.dir.exists() and any(self.dir.iterdir()):
                raise make_error(
                    InputError,
                    f"{self.dir}: the folder exists and is not a sweep results folder "
                    f"(no {MANIFEST}); give an empty or new --out folder",
                    "io",
                )
        else:
            self.check_version(manifest)
        for sub in ("cells", "failed"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self._remove_stale_temps()

    def _remove_stale_temps(self) -> None:
        """Temp files a killed sweep left behind (`.NAME.XXXX.tmp`: never a result)."""
        for folder in (self.dir, self.dir / "cells", self.dir / "failed"):
            for path in folder.glob(".*.tmp*"):
                path.unlink(missing_ok=True)

    def check_version(self, manifest: dict[str, Any]) -> None:
        theirs = manifest.get("zombiesim")
        if theirs != __version__ or manifest.get("layout") != LAYOUT:
            raise make_error(
                InputError,
                f"{self.dir}: results of zombiesim {theirs} (layout {manifest.get('layout')}); "
                f"this is zombiesim {__version__} (layout {LAYOUT}), whose reports may "
                "differ: sweep into a new --out folder",
                "io",
            )

    # -- cells -----------------------------------------------------------------------------

    def _cell_path(self, key: str, failed: bool = False) -> Path:
        return self.dir / ("failed" if failed else "cells") / f"{key}.json"

    def finished(self, key: str) -> bool:
        return self._cell_path(key).exists()

    def has_failed(self, key: str) -> bool:
        return self._cell_path(key, failed=True).exists()

    def write_ok(self, key: str, axes: dict[str, Any], label: str, outcome: dict) -> None:
        record = {
            "key": key,
            "axes": axes,
            "label": label,
            "status": "ok",
            "wall_s": outcome.get("wall_s"),
            "report": json.loads(outcome["report"]),
        }
        atomic_write(self._cell_path(key), json.dumps(record, indent=1) + "\n")
        failed = self._cell_path(key, failed=True)
        if failed.exists():
            failed.unlink()

    def write_failed(
        self, key: str, axes: dict[str, Any], label: str, config_toml: str, outcome: dict
    ) -> None:
        record = {
            "key": key,
            "axes": axes,
            "label": label,
            "status": "failed",
            "kind": outcome.get("kind"),
            "error": outcome.get("error"),
            "config": config_toml,
        }
        atomic_write(self._cell_path(key, failed=True), json.dumps(record, indent=1) + "\n")

    def read(self, key: str) -> dict[str, Any] | None:
        """A cell's record (ok first, then failed); None when it has not run."""
        for failed in (False, True):
            path = self._cell_path(key, failed)
            if path.exists():
                try:
                    return json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError) as e:
                    raise make_error(InputError, f"{path}: unreadable cell ({e})", "io") from None
        return None

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        data = {"layout": LAYOUT, "zombiesim": __version__, **manifest}
        atomic_write(self.dir / MANIFEST, json.dumps(data, indent=1) + "\n")

    # -- the table -------------------------------------------------------------------------

    def frame(self, manifest: dict[str, Any] | None = None):
        """Every cell of the manifest that has run, in grid order, as one DataFrame. The
        axis values and labels are the manifest's (a cell run for another grid carries
        that grid's), the outcome the cell file's."""
        manifest = manifest if manifest is not None else self.manifest()
        if manifest is None:
            raise make_error(InputError, f"{self.dir}: not a sweep results folder", "io")
        rows = []
        for cell in manifest.get("cells", []):
            record = self.read(cell["key"])
            if record is not None:
                rows.append({**record, "axes": cell["axes"], "label": cell["label"]})
        return table_frame(rows, manifest.get("axes", []))

    def write_table(self, frame) -> list[Path]:
        """`results.parquet` (every column, lists included) and `results.csv` (scalars)."""
        import io

        parquet = self.dir / "results.parquet"
        buf = io.BytesIO()
        _arrow_safe(frame).to_parquet(buf, index=False)
        atomic_write(parquet, buf.getvalue())
        scalars = frame[[c for c in frame.columns if not _is_list_column(frame[c])]]
        csv = self.dir / "results.csv"
        atomic_write(csv, scalars.to_csv(index=False))
        return [parquet, csv]


def _is_list_column(column) -> bool:
    return column.dtype == object and any(isinstance(v, list | tuple) for v in column)


def _arrow_safe(frame):
    """Object columns that mix types (an axis of `0` and `"4MiB"`) become strings, which
    Parquet can hold; list columns stay lists."""
    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if column.dtype != object or _is_list_column(column):
            continue
        kinds = {type(v) for v in column if v is not None and v == v}
        if len(kinds) > 1:
            out[name] = [None if v is None else str(v) for v in column]
    return out


def table_frame(records: Iterable[dict[str, Any]], axes: list[str]):
    """The sweep table from cell records: `cell`, `status`, `error`, `axis.<name>` per
    axis, `label`, `wall_s`, then the report's columns (`Report.to_row(lists=True)`)."""
    import pandas as pd

    rows = []
    for rec in records:
        row: dict[str, Any] = {
            "cell": rec["key"],
            "status": rec["status"],
            "error": rec.get("error"),
        }
        for name in axes:
            row[f"axis.{name}"] = rec["axes"].get(name)
        row["label"] = rec["label"]
        row["wall_s"] = rec.get("wall_s")
        if rec["status"] == "ok":
            report_row = Report(rec["report"]).to_row(rec["label"], lists=True)
            report_row.pop("label", None)
            row.update(report_row)
        rows.append(row)
    return pd.DataFrame(rows)
