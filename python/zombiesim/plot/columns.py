"""The frame's columns for `zs.plot`: which rows to draw, what a short name means, and
the summaries (mean, min, max) the plots draw."""

from __future__ import annotations

import math
from typing import Any


def runs(df):
    """The rows to draw: a sweep frame's `status == "ok"` rows, every row otherwise."""
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    return df.reset_index(drop=True)


def resolve(df, name: str) -> str:
    """The column `name` means: itself, else `axis.<name>`, else `config.<name>`. Raises
    `KeyError` naming the columns that were looked for."""
    for candidate in (name, f"axis.{name}", f"config.{name}"):
        if candidate in df.columns:
            return candidate
    raise KeyError(f"no column `{name}` (nor `axis.{name}`, `config.{name}`) in the frame")


def short(column: str) -> str:
    """A column's name for axis labels and legends: `axis.scheme` -> `scheme`."""
    for prefix in ("axis.", "config."):
        if column.startswith(prefix):
            return column[len(prefix) :]
    return column


def missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def is_numeric(values) -> bool:
    """Whether a column holds numbers (not booleans) in every row that has a value."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(values):
        return False
    if pd.api.types.is_numeric_dtype(values):
        return True
    present = [v for v in values if not missing(v)]
    return bool(present) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in present
    )


def category(values):
    """A key column as text (missing values as `n/a`)."""
    return values.map(lambda v: "n/a" if missing(v) else str(v))


def points(value: Any) -> list[float]:
    """A list column's cell as a list (a missing cell: none)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    return [float(v) for v in value]


def numbers(frame, column: str):
    """A column as floats (missing: NaN); a column the frame lacks: all NaN."""
    import pandas as pd

    if column not in frame.columns:
        return pd.Series([math.nan] * len(frame), index=frame.index, dtype=float)
    return pd.to_numeric(frame[column], errors="coerce").astype(float)


def summary(frame, column: str, keys: list[str]):
    """Mean, min, max and count of `column` per combination of `keys`, in the order the
    combinations first appear; rows without a value are left out."""
    data = frame[keys].copy()
    data["_value"] = numbers(frame, column)
    data = data.dropna(subset=["_value"])
    grouped = data.groupby(keys, sort=False, dropna=False)["_value"]
    return grouped.agg(["mean", "min", "max", "count"]).reset_index()


def fmt(v: float) -> str:
    if missing(v):
        return ""
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def hue_values(frame, hue: str | None) -> list[str]:
    """Each row's hue value as text (the row's label without a hue)."""
    if hue is None:
        return [str(v) for v in frame.get("label", range(len(frame)))]
    return list(category(frame[resolve(frame, hue)]))
