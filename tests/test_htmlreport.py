"""`zs.plot` and the HTML pages (`zombiesim.html`): each plot draws the frame's numbers,
and every page is self-contained, with inline SVG figures, scrolling sortable tables,
CSV links carrying what was shown, and a run section."""

from __future__ import annotations

import base64
import csv
import io
import itertools
import math
import re
from html.parser import HTMLParser

import matplotlib.text
import pandas as pd
import pytest

import zombiesim as zs
from zombiesim.html import Page, standard_views
from zombiesim.htmlreport import comparison_html, sweep_html

#: A small timed device: a run of one drive write takes a few hundredths of a second.
#: (At 32 blocks per plane the default over-provisioning leaves GC too few spare blocks.)
SMALL = {"flash.blocks_per_plane": 64, "timing.enabled": True}
WORKLOAD = "uniform:drive_writes=1"


def small(**sets) -> zs.Config:
    return zs.Config.preset("default").override({**SMALL, **sets})


@pytest.fixture(scope="module")
def reports() -> dict[str, zs.Report]:
    return zs.compare_reports(small(), workload=WORKLOAD, policies=["greedy", "fifo"], jobs=2)


@pytest.fixture(scope="module")
def frame(reports):
    return zs.to_frame(reports, lists=True)


@pytest.fixture(scope="module")
def sweep_frame():
    """A hand-built 2-axis sweep (scheme x over-provisioning, two seeds each) with one
    failed cell, as the sweep engine builds it."""
    parts = []
    for seed in (1, 2):
        runs = {
            f"{scheme}/op={op}/seed={seed}": (
                small(**{"gc.policy": scheme, "ftl.over_provisioning": op}),
                "uniform:drive_writes=0.5",
            )
            for scheme in ("greedy", "fifo")
            for op in (0.1, 0.2)
        }
        df = zs.to_frame(zs.simulate_many(runs, seed=seed, jobs=2), lists=True)
        df["axis.seed"] = seed
        parts.append(df)
    df = pd.concat(parts, ignore_index=True)
    df["axis.scheme"] = df["label"].str.split("/").str[0]
    df["axis.ftl.over_provisioning"] = df["config.ftl.over_provisioning"]
    df["status"] = "ok"
    df["error"] = None
    failed = {"label": "cost-benefit/op=0.1/seed=1", "axis.scheme": "cost-benefit"}
    failed.update({"axis.ftl.over_provisioning": 0.1, "axis.seed": 1, "status": "failed"})
    failed["error"] = "ConfigError: config key `gc.policy`: no such policy"
    df = pd.concat([df, pd.DataFrame([failed])], ignore_index=True)
    df["cell"] = [f"{i:012x}" for i in range(len(df))]
    return df


def axes_of(fig):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


# -- zs.plot ---------------------------------------------------------------------------------


def test_waf_and_erases_draw_one_bar_per_run(frame):
    for plot, column in ((zs.plot.waf, "waf"), (zs.plot.erases, "flash.erases")):
        fig = plot(frame)
        (ax,) = axes_of(fig)
        heights = [p.get_height() for p in ax.patches]
        assert heights == pytest.approx(list(frame[column]))
        assert [t.get_text() for t in ax.get_xticklabels()] == list(frame["label"])
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
        drawn = zs.plot.drawn(fig)
        assert list(drawn["label"]) == list(frame["label"])
        assert list(drawn[column]) == pytest.approx(list(frame[column]))


def test_x_and_hue_take_short_names_and_average_the_seeds(sweep_frame):
    ok = sweep_frame[sweep_frame["status"] == "ok"]
    fig = zs.plot.waf(sweep_frame, x="ftl.over_provisioning", hue="scheme")
    (ax,) = axes_of(fig)
    means = ok.groupby(["axis.scheme", "axis.ftl.over_provisioning"])["waf"].agg(
        ["mean", "min", "max"]
    )
    # One line per scheme (the failed cell left out), each point the mean of two seeds
    # with a min-max error bar.
    lines = ax.containers
    assert [c.get_label() for c in lines] == ["greedy", "fifo"]
    for container in lines:
        data, _, (bar,) = container.lines
        expected = means.loc[container.get_label()]
        assert list(data.get_xdata()) == pytest.approx(list(expected.index))
        assert list(data.get_ydata()) == pytest.approx(list(expected["mean"]))
        spans = [seg[:, 1] for seg in bar.get_segments()]
        assert [min(s) for s in spans] == pytest.approx(list(expected["min"]))
        assert [max(s) for s in spans] == pytest.approx(list(expected["max"]))
    # The legend sits beside the panel, not on it.
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1
    # A config key resolves without `config.`; an unknown name says what it looked for.
    fig = zs.plot.metric(sweep_frame, "gc.pages_copied", x="gc.policy")
    assert [t.get_text() for t in axes_of(fig)[0].get_xticklabels()] == ["greedy", "fifo"]
    with pytest.raises(KeyError, match="axis.nothing"):
        zs.plot.waf(sweep_frame, x="nothing")


def test_categorical_x_draws_bars_side_by_side_per_hue(sweep_frame):
    fig = zs.plot.erases(sweep_frame, x="scheme", hue="ftl.over_provisioning")
    (ax,) = axes_of(fig)
    ok = sweep_frame[sweep_frame["status"] == "ok"]
    means = ok.groupby(["axis.ftl.over_provisioning", "axis.scheme"], sort=False)[
        "flash.erases"
    ].mean()
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == pytest.approx(sorted(means))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0.1", "0.2"]


def test_latency_cdf_draws_the_cdf_lists(frame):
    fig = zs.plot.latency_cdf(frame)
    (ax,) = axes_of(fig)
    assert ax.get_xscale() == "log"
    assert len(ax.lines) == len(frame)
    for line, (_, row) in zip(ax.lines, frame.iterrows(), strict=True):
        assert list(line.get_xdata()) == pytest.approx(row["latency.all.cdf_us"])
        assert list(line.get_ydata()) == pytest.approx(row["latency.all.cdf_q"])
    fig = zs.plot.latency_cdf(frame, kind="write")
    assert list(axes_of(fig)[0].lines[0].get_xdata()) == pytest.approx(
        frame["latency.write.cdf_us"].iloc[0]
    )


def test_untimed_runs_say_so():
    untimed = zs.to_frame(
        {"greedy": zs.simulate(small(**{"timing.enabled": False}), WORKLOAD)}, lists=True
    )
    for plot in (zs.plot.latency_cdf, zs.plot.latency_percentiles):
        (ax,) = axes_of(plot(untimed))
        assert any("no timed runs" in t.get_text() for t in ax.texts)
        assert not ax.lines and not ax.patches and ax.get_title()


def test_latency_percentiles_draw_p50_p99_p999(frame):
    fig = zs.plot.latency_percentiles(frame)
    (ax,) = axes_of(fig)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["p50", "p99", "p99.9"]
    heights = [p.get_height() for p in ax.patches]
    expected = [
        frame[f"latency.all.{p}"].iloc[i]
        for p in ("p50_us", "p99_us", "p999_us")
        for i in range(len(frame))
    ]
    assert heights == pytest.approx(expected)


def test_series_draws_each_run_against_drive_writes(frame):
    for field in ("waf_cumulative", "free_blocks", "waf_interval"):
        fig = zs.plot.series(frame, y=field)
        (ax,) = axes_of(fig)
        assert [line.get_label() for line in ax.lines] == list(frame["label"])
        for line, (_, row) in zip(ax.lines, frame.iterrows(), strict=True):
            assert list(line.get_xdata()) == pytest.approx(row["series.drive_writes"])
            assert list(line.get_ydata()) == pytest.approx(row[f"series.{field}"])


def test_gc_copies_stack_to_the_pages_copied(frame):
    fig = zs.plot.gc_copies(frame)
    (ax,) = axes_of(fig)
    totals = {}
    for patch in ax.patches:
        x = round(patch.get_x() + patch.get_width() / 2)
        totals[x] = totals.get(x, 0) + patch.get_height()
    assert [totals[i] for i in range(len(frame))] == pytest.approx(list(frame["gc.pages_copied"]))
    # Greedy on uniform writes copies only live pages: the other causes stay out of the legend.
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["live"]


def test_copies_by_cause_partitions_the_pages_copied():
    counters = {
        "label": ["zombies", "fast", "dftl"],
        "gc.pages_copied": [100, 50, 80],
        "gc.zombie_pages_copied": [30, 0, 0],
        "gc.copied_by_state.live": [60, 0, 80],
        "gc.copied_by_state.host_shadow": [25, 0, 0],
        "gc.copied_by_state.device_shadow": [10, 0, 0],
        "gc.copied_by_state.twin_shadow": [5, 0, 0],
        "flash.programs_by_cause.merge_partial": [0, 20, 0],
        "flash.programs_by_cause.merge_full": [0, 30, 0],
        "flash.programs_by_cause.translation": [0, 0, 7],
    }
    causes = zs.plot.copies_by_cause(pd.DataFrame(counters)).set_index("label")
    assert causes.loc["zombies"].to_dict() == {
        "live": 60,
        "zombie": 30,
        "shadow": 10,
        "merge": 0,
        "translation": 0,
    }
    assert causes.loc["fast", "merge"] == 50 and causes.loc["fast", "live"] == 0
    assert causes.loc["dftl", "translation"] == 7 and causes.loc["dftl", "live"] == 80
    copied = causes[["live", "zombie", "shadow", "merge"]].sum(axis=1)
    assert list(copied) == counters["gc.pages_copied"]


def test_heatmap_cells_are_the_means(sweep_frame):
    fig = zs.plot.heatmap(sweep_frame, x="ftl.over_provisioning", y="scheme", value="waf")
    (ax,) = axes_of(fig)
    grid = ax.images[0].get_array()
    ok = sweep_frame[sweep_frame["status"] == "ok"]
    means = ok.groupby(["axis.scheme", "axis.ftl.over_provisioning"])["waf"].mean()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["greedy", "fifo"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.1", "0.2"]
    for i, scheme in enumerate(("greedy", "fifo")):
        for j, op in enumerate((0.1, 0.2)):
            assert grid[i, j] == pytest.approx(means[(scheme, op)])
    assert len(ax.texts) == 4  # every cell annotated


def test_standard_views_are_legible(sweep_frame):
    views = standard_views(
        sweep_frame,
        x="ftl.over_provisioning",
        hue="scheme",
        heat=("ftl.over_provisioning", "scheme", "waf"),
    )
    assert [v.name for v in views] == [
        "waf-erases",
        "latency",
        "time-series",
        "gc-copies",
        "heatmap",
    ]
    for view in views:
        fig = view.figure
        assert fig.get_figwidth() <= 11.5  # ~1100 px: shown at full size, never scaled down
        for ax in axes_of(fig):
            assert ax.get_subplotspec().get_gridspec().ncols <= 2
            assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel(), view.name
        for text in fig.findobj(matplotlib.text.Text):
            if text.get_text().strip() and text.get_visible():
                assert text.get_fontsize() >= 8, (view.name, text.get_text())


# -- the pages -------------------------------------------------------------------------------


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None):
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node] = []
        self.text: list[str] = []

    def all(self, tag: str) -> list[Node]:
        out = [self] if self.tag == tag else []
        for child in self.children:
            out += child.all(tag)
        return out

    def content(self) -> str:
        return "".join(self.text) + "".join(c.content() for c in self.children)

    def ancestors(self) -> list[Node]:
        node, out = self.parent, []
        while node is not None:
            out.append(node)
            node = node.parent
        return out


class Tree(HTMLParser):
    """The page as a tree of `Node`s (html.parser: it must parse)."""

    VOID = {"meta", "br", "img", "input", "link", "hr"}

    def __init__(self, text: str):
        super().__init__()
        self.root = self.node = Node("#root", {}, None)
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.node)
        self.node.children.append(node)
        if tag not in self.VOID:
            self.node = node

    def handle_startendtag(self, tag, attrs):
        self.node.children.append(Node(tag, dict(attrs), self.node))

    def handle_endtag(self, tag):
        node = self.node
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None, f"</{tag}> closes nothing"
        self.node = node.parent

    def handle_data(self, data):
        self.node.text.append(data)


def csv_of(link: Node) -> list[dict[str, str]]:
    href = link.attrs["href"]
    prefix = "data:text/csv;base64,"
    assert href.startswith(prefix) and link.attrs["download"].endswith(".csv")
    text = base64.b64decode(href[len(prefix) :]).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def check_page(text: str) -> Node:
    """What every page promises; returns its tree."""
    root = Tree(text).root
    assert text.startswith("<!DOCTYPE html>")
    assert '<img src="http' not in text and "<link" not in text
    assert all("src" not in s.attrs for s in root.all("script"))  # inline only
    for fig in root.all("figure"):
        assert len(fig.all("svg")) >= 1 and len(fig.all("figcaption")) == 1
        (link,) = [a for a in fig.all("a") if "download" in a.attrs]
        assert link.content() == "data (CSV)" and csv_of(link)
    for table in root.all("table"):
        box = table.parent
        assert box.tag == "div" and box.attrs.get("class") == "scroll"
        assert "sortable" in table.attrs["class"]
        links = box.parent.children[box.parent.children.index(box) + 1].all("a")
        check_table_csv(table, csv_of(links[0]))
    assert "overflow-x: auto" in text
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids)), "an id is used twice"
    return root


def check_table_csv(table: Node, rows: list[dict[str, str]]) -> None:
    """The CSV holds the table: the same columns, rows and values (numbers by their raw
    value, `data-v`; text as shown; a missing value empty in the CSV, `n/a` shown)."""
    heads = [th.content() for th in table.all("th")]
    assert rows and list(rows[0]) == heads
    body = table.all("tbody")[0].all("tr")
    assert len(body) == len(rows)
    for tr, row in zip(body, rows, strict=True):
        for td, head in zip(tr.all("td"), heads, strict=True):
            value = row[head]
            if "data-v" in td.attrs:
                raw = td.attrs["data-v"]
                assert (raw == "") == (value == "")
                if raw:
                    assert float(raw) == pytest.approx(float(value)), (head, raw, value)
            elif value == "":
                assert td.content() in ("", "n/a", "-")
            else:
                assert td.content() == value, (head, td.content(), value)


def run_section(root: Node) -> str:
    (section,) = [s for s in root.all("section") if s.attrs.get("class") == "run"]
    return section.content()


def test_comparison_page(reports):
    config = small().to_toml()
    command = "zombiesim compare --policies greedy,fifo --workload uniform:drive_writes=1"
    text = comparison_html(reports, title="greedy vs fifo", config_toml=config, command=command)
    root = check_page(text)
    # The standard views: WAF and erases, latency, time series, GC copies.
    assert len(root.all("figure")) == 4 and text.count("<svg") == 4
    assert "<?xml" not in text
    (results,) = root.all("table")
    assert [tr.all("td")[0].content() for tr in results.all("tbody")[0].all("tr")] == [
        "greedy",
        "fifo",
    ]
    assert "p99 latency" in text and "read p99" in text
    run = run_section(root)
    assert command in run and "uniform:drive_writes=1" in run and zs.__version__ in run
    (details,) = [d for d in root.all("details") if "Configuration" in d.content()]
    assert details.all("pre")[0].content() == config


def test_comparison_page_with_shadow_runs_adds_its_section():
    cfg = zs.Config.preset("default").scheme(
        "sgc",
        {
            "flash.blocks_per_plane": 64,
            "host.buffer": "4MiB",
            "device.buffer": "4MiB",
            "ftl.over_provisioning": 0.15,
            "gc.low_watermark": 6,
            "gc.high_watermark": 6,
        },
    )
    workload = "footprint:growth=0.05,window=8MiB,read=0.3,drive_writes=0.5,iops=15000"
    reports = {"sgc": zs.simulate(cfg, workload), "ggc": zs.simulate(cfg.scheme("ggc"), workload)}
    text = comparison_html(reports, title="shadow")
    root = check_page(text)
    assert "relocated pages by state" in text and "twin-shadow" in text
    assert len(root.all("figure")) == 4  # no latency view: counting mode
    assert len(root.all("table")) == 2
    # GC copies by cause: the shadow states' copies are drawn (not only live).
    (gc,) = [f for f in root.all("figure") if f.attrs["id"] == "fig-gc-copies"]
    rows = csv_of([a for a in gc.all("a") if "download" in a.attrs][0])
    assert any(float(r.get("zombie") or 0) + float(r.get("shadow") or 0) > 0 for r in rows)


def test_sweep_page(sweep_frame):
    text = sweep_html(
        sweep_frame,
        title="sweep",
        axes=["scheme", "ftl.over_provisioning"],
        metrics=["waf", "flash.erases", "gc.pages_copied", "latency.all.p99_us"],
        command="zombiesim sweep grid.toml --out results",
        grid_text='[axes]\nscheme = ["greedy", "fifo", "cost-benefit"]\n',
        config_toml=small().to_toml(),
    )
    root = check_page(text)
    figures = {f.attrs["id"] for f in root.all("figure")}
    assert figures == {
        "fig-waf-erases",
        "fig-latency",
        "fig-time-series",
        "fig-gc-copies",
        "fig-heatmap",
    }
    results, failed = root.all("table")
    assert len(results.all("tbody")[0].all("tr")) == len(sweep_frame)
    assert [th.content() for th in results.all("th")][:3] == [
        "scheme",
        "ftl.over_provisioning",
        "status",
    ]
    (row,) = failed.all("tbody")[0].all("tr")
    assert [td.content() for td in row.all("td")][0] == "cost-benefit"
    assert "no such policy" in row.content()
    # The heat map's data: the mean WAF of each (scheme, over-provisioning) cell.
    (heat,) = [f for f in root.all("figure") if f.attrs["id"] == "fig-heatmap"]
    cells = csv_of([a for a in heat.all("a") if "download" in a.attrs][0])
    ok = sweep_frame[sweep_frame["status"] == "ok"]
    means = ok.groupby(["axis.scheme", "axis.ftl.over_provisioning"])["waf"].mean()
    assert len(cells) == 4
    for c in cells:
        assert float(c["waf"]) == pytest.approx(
            means[(c["scheme"], float(c["ftl.over_provisioning"]))]
        )
    run = run_section(root)
    assert "zombiesim sweep grid.toml --out results" in run and "cost-benefit" in run


def test_reproduction_page_renders_through_the_page_builder():
    frame = pd.DataFrame({"x": [1, 2, 3], "waf": [2.5, 2.0, math.nan], "scheme": ["a", "b", "c"]})

    def make():
        fig, ax = zs.plot.panels()
        ax.plot(frame["x"], frame["waf"])
        ax.set_title("WAF")
        ax.set_xlabel("x")
        ax.set_ylabel("WAF")
        return fig

    claims = [
        zs.reproduce.Claim("exp", "WAF", "-10%", "-12%", "lower", True),
        zs.reproduce.Claim("exp", "elapsed", "-10%", "+3%", "lower", False),
    ]
    rep = zs.reproduce.Reproduction(
        paper="test",
        title="A reproduction",
        scale="tiny",
        claims=claims,
        tables={"runs": frame},
        figures={
            "WAF against x": (make, lambda: frame),
            "drawn by zs.plot": lambda: zs.plot.waf(frame.assign(label=frame["scheme"])),
        },
        notes=["a note"],
    )
    root = check_page(rep.html())
    verdicts = [td for td in root.all("td") if td.attrs.get("class", "").endswith("met")]
    assert [td.attrs["class"].split()[-1] for td in verdicts] == ["met"]
    missed = [td for td in root.all("td") if "missed" in td.attrs.get("class", "")]
    assert [td.content() for td in missed] == ["missed"]
    # The verdict right after ours, kept in view (pinned) like the label column.
    claims = root.all("table")[0]
    heads = [th.content() for th in claims.all("th")]
    assert heads == ["experiment", "metric", "paper", "ours", "verdict", "expected", "why"]
    pinned = [h for h, th in zip(heads, claims.all("th"), strict=True) if "pin" in classes(th)]
    assert pinned == ["experiment", "verdict"]
    for tr in claims.all("tbody")[0].all("tr"):
        cells = dict(zip(heads, tr.all("td"), strict=True))
        assert {"pin", cells["verdict"].content()} <= classes(cells["verdict"])
        assert "pin" in classes(cells["experiment"]) and "pin" not in classes(cells["ours"])
    figures = root.all("figure")
    assert len(figures) == 2
    rows = csv_of([a for a in figures[0].all("a") if "download" in a.attrs][0])
    assert [r["x"] for r in rows] == ["1", "2", "3"] and rows[2]["waf"] == ""
    rows = csv_of([a for a in figures[1].all("a") if "download" in a.attrs][0])
    assert [(r["label"], r["waf"]) for r in rows] == [("a", "2.5"), ("b", "2.0")]
    assert "tiny" in run_section(root)


def classes(node: Node) -> set[str]:
    return set((node.attrs.get("class") or "").split())


def test_page_tables_keep_the_label_column_and_pinned_columns_in_view():
    """Every table's first column is pinned (`position: sticky` to the scroll box's left
    edge, on an opaque background), and so are the columns named in `pin` (sticky to the
    right edge too, placed right of the pinned columns before them by the page's script);
    no other cell is."""
    page = Page("t")
    frame = pd.DataFrame({"label": ["a", "b"], "x": [1, 2], "verdict": ["met", "missed"]})
    page.table(frame, name="t", pin=["verdict"])
    page.table(frame[["x", "label"]], name="u")
    text = page.html()
    root = check_page(text)
    first, second = root.all("table")
    for table, pinned in ((first, [True, False, True]), (second, [True, False])):
        for tr in table.all("tr"):
            cells = tr.all("th") or tr.all("td")
            assert ["pin" in classes(c) for c in cells] == pinned
    style = root.all("style")[0].content()
    rule = re.search(r"th\.pin, td\.pin \{([^}]*)\}", style)
    assert rule and "position: sticky" in rule[1] and "left: 0" in rule[1]
    assert re.search(r"th, td \{[^}]*background: #fff", style)  # opaque, content hides under
    assert re.search(r"td\.pin:not\(:first-child\) \{[^}]*right: 0", style)
    assert "cell.style.left" in root.all("script")[0].content()
    with pytest.raises(ValueError, match="nothing"):
        Page("t").table(frame, name="t", pin=["nothing"])


def test_claim_verdicts_are_coloured_and_spelled_out():
    """Each verdict has its own colour (met green, direction-only amber, explained
    blue-grey, missed red, not-run purple) on the cell that also says it in words."""
    from zombiesim.html.page import STYLE

    colours = {}
    for verdict in zs.reproduce.VERDICTS:
        rule = re.search(rf"td\.{verdict} \{{([^}}]*background[^}}]*)\}}", STYLE)
        assert rule, verdict
        colours[verdict] = re.search(r"background: (#[0-9a-f]{6})", rule[1])[1]
    assert len(set(colours.values())) == len(zs.reproduce.VERDICTS)
    rgb = {v: tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for v, c in colours.items()}
    r, g, b = rgb["met"]
    assert g > r and g > b  # green
    r, g, b = rgb["direction-only"]
    assert r > b and g > b  # amber
    r, g, b = rgb["explained"]
    assert b >= g >= r and b - r < 30  # blue-grey
    r, g, b = rgb["missed"]
    assert r > g and r > b  # red
    claims = [
        zs.reproduce.Claim("e", "m", "1", "2", "x", True, verdict)
        for verdict in ("met", "direction-only", "missed")
    ]
    claims.append(zs.reproduce.Claim("e", "m", "1", "2", "x", True, "direction-only", "ablation"))
    rep = zs.reproduce.Reproduction(paper="p", title="t", scale="tiny", claims=claims)
    root = Tree(rep.html()).root
    cells = [tr.all("td")[4] for tr in root.all("tbody")[0].all("tr")]
    assert [c.content() for c in cells] == ["met", "direction-only", "missed", "explained"]
    assert all(c.content() in classes(c) for c in cells)


class FakePaper:
    """A paper module whose `run` makes a Reproduction without simulating anything."""

    SCALES = ("tiny", "small")

    @staticmethod
    def run(ctx):
        claim = zs.reproduce.Claim("exp", "WAF", "-10%", "-12%", "lower", True)
        return zs.reproduce.Reproduction(ctx.paper, "Fake", ctx.scale, [claim])


def test_reproduction_pages_show_the_command_line(monkeypatch):
    """`zs.reproduce.run` puts the equivalent `zombiesim reproduce` command line in the
    report's run section, or the `command` it is given."""
    monkeypatch.setattr(zs.reproduce, "module", lambda paper: FakePaper)
    rep = zs.reproduce.run("shadowgc", scale="tiny", seed=7)
    assert rep.command == "zombiesim reproduce shadowgc --scale tiny --seed 7"
    run = run_section(check_page(rep.html()))
    assert rep.command in run and "tiny" in run and "7" in run
    rep = zs.reproduce.run("shadowgc", scale="tiny", jobs=2, command="make reproduce-it")
    assert "make reproduce-it" in run_section(check_page(rep.html()))
    rep = zs.reproduce.run("shadowgc", scale="tiny", jobs=2)
    assert rep.command == "zombiesim reproduce shadowgc --scale tiny --seed 1 --jobs 2"


def test_cli_reproduce_page_shows_its_command_line(cli, tmp_path):
    """`zombiesim reproduce PAPER --out DIR` (ba-gc at its tiny scale: seconds): the page
    carries the command that made it, as a compare or demo page does."""
    out = tmp_path / "ba gc"  # a space: the command is quoted as a shell would need it
    args = ["reproduce", "ba-gc", "--scale", "tiny", "--jobs", "2", "--quiet", "--out", str(out)]
    proc = cli(*args, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]  # 1: a claim missed at tiny
    run = run_section(check_page((out / "report.html").read_text()))
    assert f"zombiesim reproduce ba-gc --scale tiny --jobs 2 --quiet --out '{out}'" in run


def test_page_tables_sort_numbers_by_their_raw_value():
    page = Page("t")
    page.table(pd.DataFrame({"n": [1234567, 2, None], "name": ["a", "b", None]}), name="t")
    root = Tree(page.html()).root
    cells = [tr.all("td") for tr in root.all("tbody")[0].all("tr")]
    assert [c[0].attrs["data-v"] for c in cells] == ["1234567.0", "2.0", ""]
    assert [c[0].content() for c in cells] == ["1,234,567", "2", "n/a"]
    assert "data-v" not in cells[0][1].attrs and cells[2][1].content() == "n/a"


# -- 50 cells, flat series, all-zero tables ---------------------------------------------------

POLICIES = ("greedy", "cost-benefit", "fifo", "random", "d-choices:4")
RATIOS = (0.07, 0.09, 0.11, 0.13, 0.15, 0.17, 0.19, 0.21, 0.24, 0.28)


def fifty_cells(frame, spread: float):
    """A 50-cell sweep frame (5 policies x 10 over-provisioning ratios), each cell a copy
    of one of `frame`'s two timed runs (so its free blocks stay at GC's watermark
    throughout), with made-up latency percentiles: p50 100 to 149 µs, p99.9 `spread`
    x 100 µs, so that the chart's positive values span exactly `spread` times."""
    rows = []
    for i, (policy, ratio) in enumerate(itertools.product(POLICIES, RATIOS)):
        row = frame.iloc[i % len(frame)].copy()
        row["label"] = f"{policy} · {ratio}"
        row["axis.gc.policy"], row["axis.ftl.over_provisioning"] = policy, ratio
        row["latency.all.p50_us"] = 100.0 + i
        row["latency.all.p99_us"] = 100.0 * spread**0.5
        row["latency.all.p999_us"] = 100.0 * spread
        rows.append(row)
    df = pd.DataFrame(rows).reset_index(drop=True)
    df["status"], df["error"] = "ok", None
    df["cell"] = [f"{i:012x}" for i in range(len(df))]
    return df


def percentiles_panel(df):
    """The p50 / p99 / p99.9 panel of `df`'s latency view, drawn (its ticks are placed
    when the figure is drawn, once the layout has sized the panel)."""
    (view,) = [
        v
        for v in standard_views(df, x="ftl.over_provisioning", hue="gc.policy")
        if v.name == "latency"
    ]
    view.figure.canvas.draw()
    (ax,) = [ax for ax in axes_of(view.figure) if ax.get_title().startswith("p50")]
    return ax


@pytest.mark.parametrize(("spread", "scale"), [(20, "linear"), (40, "log")])
def test_fifty_cells_latency_chart_thins_its_labels_and_picks_its_scale(frame, spread, scale):
    """50 runs on the percentiles' x axis: upright labels, every few runs, none touching
    another; the value axis is linear unless the positive values span more than 30x,
    and on a log axis the smallest bar still stands a tenth of the panel tall. The
    sweep page's latency figure carries the same labels, upright, as SVG text."""
    df = fifty_cells(frame, spread)
    ax = percentiles_panel(df)
    labels = [t for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
    assert 10 <= len(labels) < 50
    assert {t.get_rotation() for t in labels} == {90}
    renderer = ax.figure.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert not [(a, b) for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)]
    assert ax.get_yscale() == scale
    low, high = ax.get_ylim()
    shortest = min(p.get_height() for p in ax.patches)
    if scale == "linear":
        assert low == 0
    else:
        assert math.log(shortest / low) / math.log(high / low) >= 0.1

    axes = ["gc.policy", "ftl.over_provisioning"]
    root = check_page(sweep_html(df, title="fifty", axes=axes, metrics=["waf"]))
    (latency,) = [f for f in root.all("figure") if f.attrs["id"] == "fig-latency"]
    runs = [
        text
        for g in latency.all("g")
        if re.search(r"(^|-)xtick_\d+$", g.attrs.get("id", ""))
        for text in g.all("text")
        if " · " in text.content()
    ]
    shown = [t.content() for t in runs]
    assert 10 <= len(shown) < 50 and shown == [n for n in df["label"] if n in shown]
    assert all("rotate(-90)" in t.attrs["transform"] for t in runs)


def notes(root: Node) -> list[str]:
    return [p.content() for p in root.all("p") if "note" in classes(p)]


def test_a_flat_series_is_one_line_of_text_not_a_plot(frame):
    """Free blocks at GC's watermark all along (as in every cell here): the page says so
    in one line and draws no free-blocks panel; when the cumulative WAF is flat too, the
    time-series figure is gone."""
    df = fifty_cells(frame, 20)
    axes, metrics = ["gc.policy", "ftl.over_provisioning"], ["waf"]
    root = check_page(sweep_html(df, title="fifty", axes=axes, metrics=metrics))
    assert "Free blocks: 2 throughout the measured phase of every run." in notes(root)
    for fig in root.all("figure"):
        assert "free blocks" not in fig.content().lower(), fig.attrs["id"]
    (series,) = [f for f in root.all("figure") if f.attrs["id"] == "fig-time-series"]
    assert "Cumulative WAF" in series.content()
    rows = csv_of([a for a in series.all("a") if "download" in a.attrs][0])
    assert "waf_cumulative" in rows[0] and "free_blocks" not in rows[0]

    df["series.waf_cumulative"] = [[3.5] * len(v) for v in df["series.waf_cumulative"]]
    root = check_page(sweep_html(df, title="fifty", axes=axes, metrics=metrics))
    assert "fig-time-series" not in {f.attrs["id"] for f in root.all("figure")}
    assert "Cumulative WAF: 3.5 throughout the measured phase of every run." in notes(root)


def test_a_table_of_zeros_is_one_line_saying_why(reports):
    """The comparison page's ShadowGC section, when no run used ShadowGC (host-shadow
    pages copied, as zombie-aware GC sees them, but no device buffer, no ShadowGC
    policy), says so in one line naming what is off, with no figure and no table; and
    any table whose figures are all zero (missing ones aside) is one line instead, with
    its CSV."""
    zombie_aware = {}
    for label, rep in reports.items():
        raw = rep.to_dict()
        raw["gc"]["copied_by_state"]["host_shadow"] = 100
        zombie_aware[label] = zs.Report(raw)
    root = check_page(comparison_html(zombie_aware, title="zombie-aware"))
    assert "ShadowGC" in root.content()
    assert "fig-shadowgc" not in {f.attrs["id"] for f in root.all("figure")}
    assert "table-shadowgc" not in {t.attrs["id"] for t in root.all("table")}
    (why,) = [n for n in notes(root) if "ShadowGC" in n]
    for off in ("gc.shadow_reads", "gc.fast_write", "gc.skip_shadows", "device.buffer"):
        assert off in why, why

    page = Page("t")
    zeros = pd.DataFrame({"label": ["a", "b"], "buffer reads": [0, 0], "skipped": [0, None]})
    page.table(zeros, name="zeros", if_all_zero="No run used ShadowGC.")
    page.table(zeros.assign(skipped=[0, 3]), name="some")
    root = check_page(page.html())
    (table,) = root.all("table")
    assert table.attrs["id"] == "table-some"
    (line,) = [p for p in root.all("p") if "No run used ShadowGC." in p.content()]
    assert "note" in classes(line) and csv_of(line.all("a")[0])[0]["label"] == "a"
