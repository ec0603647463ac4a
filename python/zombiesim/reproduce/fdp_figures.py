"""The FDP reproduction's figures (`fdp`): WAF against the SOC's size (Fig. 9), WAF per
handle under the two isolations (Figs. 16-17) and the joined experiment's WAF per scheme,
each with the data it draws."""

from __future__ import annotations

from ..plot import legend, panels
from .fdp_experiments import JOINED_DEVICES, JOINED_SCHEMES, SOC_SHARES


def _soc_frame(waf):
    import pandas as pd

    return pd.DataFrame(
        [
            {"soc": s, "fdp": waf[f"kv/1/{s:g}/fdp"], "nofdp": waf[f"kv/1/{s:g}/nofdp"]}
            for s in SOC_SHARES
        ]
    )


def _fig_soc(waf):
    fig, ax = panels(1, 1)
    data = _soc_frame(waf)
    xs = [s * 100 for s in data["soc"]]
    ax.plot(xs, list(data["nofdp"]), marker="o", label="without FDP")
    ax.plot(xs, list(data["fdp"]), marker="o", label="with FDP")
    ax.set_xlabel("small-object cache (% of the device)")
    ax.set_ylabel("device WAF")
    ax.set_title("KV cache at 100% utilisation")
    ax.grid(alpha=0.3)
    legend(ax)
    return fig


def _handles_frame(reports):
    import pandas as pd

    rows = []
    for iso in ("initial", "persistent"):
        for h in reports[f"streams/0.05/{iso}"].raw["fdp"]["handles"][:3]:
            rows.append({"isolation": iso, "handle": h["placement_id"], "waf": h["waf"]})
    return pd.DataFrame(rows)


def _fig_handles(reports):
    fig, ax = panels(1, 1)
    data = _handles_frame(reports)
    width = 0.4
    for i, iso in enumerate(("initial", "persistent")):
        sel = data[data["isolation"] == iso]
        ax.bar([h + i * width for h in sel["handle"]], list(sel["waf"]), width, label=iso)
    ax.set_xticks([h + width / 2 for h in range(3)], ["0 log", "1 random", "2 overwrite"])
    ax.set_ylabel("handle WAF")
    ax.set_title("Three streams, OP 5%")
    legend(ax, "isolation")
    return fig


JOINED_LABELS = {"nofdp": "no placement", "initial": "FDP, II", "persistent": "FDP, PI"}


def _fig_joined(joined):
    fig, ax = panels(1, 1)
    width = 0.2
    for i, scheme in enumerate(JOINED_SCHEMES):
        sel = joined[joined.scheme == scheme]
        xs = [JOINED_DEVICES.index(d) + i * width for d in sel.device]
        ax.bar(xs, list(sel.waf), width, label=scheme)
    ax.set_xticks(
        [d + 1.5 * width for d in range(len(JOINED_DEVICES))],
        [JOINED_LABELS[d] for d in JOINED_DEVICES],
    )
    ax.set_ylabel("device WAF")
    ax.set_title("Hot/cold notified trace, ideal channel")
    legend(ax, "scheme")
    return fig
