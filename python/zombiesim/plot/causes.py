"""GC copies by cause: how they are derived (`copies_by_cause`) and drawn (`gc_copies`)."""

from __future__ import annotations

from .columns import category, numbers, resolve, runs, short
from .figure import category_ticks, legend, no_data, record, set_value_scale, target

#: GC copies' causes, stacking order: (column of `copies_by_cause`, legend, colour).
CAUSES = (
    ("live", "live", "#9aa5b1"),
    ("zombie", "zombie (host-/twin-shadow)", "#c98f7f"),
    ("shadow", "shadow (device buffer)", "#7fa8c9"),
    ("merge", "merge", "#e0b050"),
    ("translation", "translation (DFTL)", "#8fbf7f"),
)


def copies_by_cause(df):
    """The pages GC (and the FTL's merges and mapping) copied, by cause, one row per run
    (`label` and the `CAUSES` columns), from the report's counters:

    - `zombie` = `gc.zombie_pages_copied`: pages the device knew as zombies (dirty in
      the host's cache or buffer: host- or twin-shadow);
    - `shadow` = `gc.copied_by_state.{host_shadow,device_shadow,twin_shadow}` minus
      `zombie`: shadow pages that were not known zombies, i.e. pages with a newer dirty
      copy in the device buffer only (device-shadow);
    - `merge` = `flash.programs_by_cause.{merge_switch,merge_partial,merge_full}`: the
      block-mapped FTLs' merge copies (counted in `gc.pages_copied`, not by state);
    - `live` = `gc.pages_copied` minus the three above: the rest of the relocations
      (`gc.copied_by_state.live` for the page-mapped FTLs, SuperBlock's collections);
    - `translation` = `flash.programs_by_cause.translation`: DFTL's translation pages,
      on top of `gc.pages_copied`.

    So `live + zombie + shadow + merge == gc.pages_copied`. Revived pages (content-aware
    runs) are valid pages again and count where GC found them (live); the report has no
    separate count of their copies (`content.writes_avoided_revival` counts host writes,
    not copies)."""
    import pandas as pd

    frame = runs(df)

    def total(*columns: str):
        return sum(numbers(frame, c).fillna(0.0) for c in columns)

    copied = total("gc.pages_copied")
    zombie = total("gc.zombie_pages_copied")
    shadow = (
        total(*(f"gc.copied_by_state.{s}" for s in ("host_shadow", "device_shadow", "twin_shadow")))
        - zombie
    ).clip(lower=0)
    merge = total(*(f"flash.programs_by_cause.merge_{m}" for m in ("switch", "partial", "full")))
    live = (copied - zombie - shadow - merge).clip(lower=0)
    translation = total("flash.programs_by_cause.translation")
    return pd.DataFrame(
        {
            "label": frame.get("label", pd.Series(range(len(frame)))).astype(str),
            "live": live,
            "zombie": zombie,
            "shadow": shadow,
            "merge": merge,
            "translation": translation,
        }
    )


def gc_copies(df, x: str = "label", ax=None):
    """Stacked bars of the pages copied by cause (`copies_by_cause`: live, zombie,
    shadow, merge, translation) per `x` value (mean over rows that share one); causes
    that are zero everywhere stay out of the legend. Stacked, so on a linear axis
    (`figure.value_scale`); x labels spaced by `figure.spaced_ticks`."""
    frame = runs(df)
    xcol = resolve(frame, x)
    causes = copies_by_cause(frame)
    causes[short(xcol)] = list(category(frame[xcol]))
    names = [c for c, _, _ in CAUSES]
    data = causes.groupby(short(xcol), sort=False)[names].mean().reset_index()
    fig, ax = target(ax)
    title = "GC copies by cause"
    shown = [(c, name, col) for c, name, col in CAUSES if data[c].sum() > 0]
    if data.empty or not shown:
        no_data(ax, "GC copied nothing", title)
    else:
        xs = range(len(data))
        bottom = [0.0] * len(data)
        for c, name, col in shown:
            ax.bar(xs, data[c], bottom=bottom, color=col, label=name, width=0.7)
            bottom = [b + v for b, v in zip(bottom, data[c], strict=True)]
        category_ticks(ax, list(data[short(xcol)]))
        ax.grid(alpha=0.3, axis="y")
        set_value_scale(ax, bottom, stacked=True)
        ax.set_title(title)
        legend(ax, "cause")
    ax.set_xlabel("run" if xcol == "label" else short(xcol))
    ax.set_ylabel("pages copied")
    record(ax, data[[short(xcol), *(c for c, _, _ in shown)]] if shown else data)
    return fig
