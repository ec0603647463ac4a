"""`zombiesim demo`: the headline of zombie-aware garbage collection, in one command.

000's four GC configurations (GC-GD, ZGC-GD, GC-CB, ZGC-CB) on its micro-benchmark (16
threads through a Linux-like page cache, 94% of writes to 6% of the space, half a read
per write), on the `zombie-chasing` preset scaled to a quarter, with the scheduler of a
current drive (`suspend`) in place of the prototype's foreground GC: the same request
stream for each; a table on the terminal, `demo.html` (table, plots, what sets the
latencies, and the run) and `demo.csv` (one row per scheme, every report field) in the
output directory.

The micro-benchmark is closed-loop: its threads keep the device saturated, so the
latencies are queueing delays (Little's law), not service times. The page says so with
the run's own figures: the load, the dies' utilisation and GC's share of it, the
commands in flight, and the read tail beside a reference run of GC-GD with the
prototype's `fifo` scheduler (GC holds its die), which shows what the scheduler removes
and what it cannot.

This module is self-contained so the demo can be swapped for another experiment without
touching the CLI: the CLI only calls `run_demo()` and prints what it returns.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from ._format import count, duration, num, size
from ._io import atomic_write
from .api import DEFAULT_SEED, MultiProgressFn, simulate_many, to_frame
from .config import Config
from .htmlreport import write_comparison_html
from .report import Report

__all__ = ["DEMO_SCHEMES", "DemoResult", "demo_setup", "latency_notes", "run_demo"]

TITLE = "zombiesim demo: garbage collection that knows what the page cache holds"
DEMO_SCHEMES = ["gc-gd", "zgc-gd", "gc-cb", "zgc-cb"]
DEMO_WORKLOAD = "zc-micro:x=6,rw=0.5"
#: How the dies share their time between host reads, host writes and GC: a current
#: drive's (host reads go before queued GC and suspend a program or erase in progress).
DEMO_SCHEDULER = "suspend"
#: The scheduler of 000's prototype (its firmware collects in the foreground): the
#: reference run beside which the page puts the demo's read tail.
REFERENCE_SCHEDULER = "fifo"
NOTES = (
    "Zombie Chasing (000) preset at a quarter of the paper's size (8 GB, 4 banks, DAC, "
    "per-bank GC; a 1 GiB page cache with Linux writeback defaults and 16 threads), "
    "preconditioned to the workload's steady state. The host tells the device which "
    "pages are dirty in its cache by piggybacking on read/write commands; ZGC-GD and "
    "ZGC-CB avoid copying those zombie pages and park the ones they must copy in a "
    "zombie block, so they copy fewer pages than GC-GD and GC-CB and finish sooner."
)


@dataclass(frozen=True)
class DemoResult:
    reports: dict[str, Report]
    html_path: Path
    csv_path: Path
    wall_s: float
    workload: str
    config: Config
    #: GC-GD with the prototype's scheduler (`fifo`), for the latency notes.
    reference: Report | None = None
    #: What sets the latencies, with the run's figures (the page's second paragraph).
    latency_text: str = ""


def demo_setup(quick: bool = False, scheduler: str = DEMO_SCHEDULER) -> tuple[Config, str]:
    """The demo's config and workload: the `zombie-chasing` preset at a quarter of the
    paper's size (`quick`: an eighth, with half the cache), its dies scheduled by
    `scheduler` (default: `suspend`, a current drive's)."""
    factor = 0.125 if quick else 0.25
    cfg = Config.preset("zombie-chasing").override(
        {
            "flash.blocks_per_plane": int(4096 * factor),
            "ftl.reserved_blocks": round(211 * factor),
            "host.cache": f"{int(4096 * factor)}MiB",
            "timing.scheduler": scheduler,
        }
    )
    return cfg, DEMO_WORKLOAD


def _device_text(cfg: Config) -> str:
    """The device in one phrase: dies, page, NAND times, bus, queue, buffer."""
    get = cfg.get
    dies = get("flash.channels") * get("flash.chips_per_channel") * get("flash.dies_per_chip")
    return (
        f"{dies} dies (one per bank), {size(get('flash.page_size'))} pages, read "
        f"{num(get('timing.read_us'), 0)} µs, program {num(get('timing.program_us'), 0)} µs, "
        f"erase {num(get('timing.erase_us') / 1000, 0)} ms, "
        f"{num(get('timing.channel_mb_s'), 0)} MB/s per channel, a command queue of "
        f"{get('interface.queue_depth')}, no write buffer"
    )


def latency_notes(reports: dict[str, Report], reference: Report | None, cfg: Config) -> str:
    """What sets the demo's latencies, in the run's own figures: the load, the dies'
    utilisation and GC's share of it, the commands in flight by Little's law, and the
    read tail beside `reference` (GC-GD with the prototype's scheduler)."""
    base = reports["gc-gd"].raw
    best_label = min(reports, key=lambda k: reports[k].waf)
    best = reports[best_label].raw
    elapsed = base["elapsed_s"]
    lat = base["latency"]
    done = lat["read"]["count"] + lat["write"]["count"]
    rate = done / elapsed if elapsed else 0.0
    in_flight = rate * lat["all"]["mean_us"] / 1e6
    dies = base["timing"]["die_utilisation"]
    busy = sum(dies) / len(dies) if dies else 0.0
    gc_share = base["timing"]["gc_busy_s"] / (len(dies) * elapsed) if dies and elapsed else 0.0
    blocked = lat.get("gc_blocked") or {}
    p99 = lat["read"]["p99_us"] / 1e6
    text = (
        f"The device: {_device_text(cfg)}, and the {cfg.get('timing.scheduler')} scheduler "
        "of a current drive (a host read goes before queued GC and suspends a program or "
        "erase in progress). The load: 16 threads in a closed loop, each issuing its next "
        "operation as soon as the last completes, and the page cache's flusher; nothing "
        "paces them, so the device is saturated and its latencies are queueing delays. "
        f"Under GC-GD the dies' utilisation is {busy * 100:.0f}%, and GC takes "
        f"{gc_share * 100:.0f}% of their time (WAF {num(reports['gc-gd'].waf, 2)}); the device "
        f"completes {count(round(rate))} commands/s with a mean latency of "
        f"{duration(lat['all']['mean_us'] / 1e6)}, so by Little's law (L = λW) about "
        f"{in_flight:.0f} commands are in it at any moment: a read waits behind the writes "
        "queued before it on its die."
    )
    if blocked:
        text += (
            f" The scheduler keeps GC off the read path: the {count(blocked.get('reads', 0))} "
            f"reads that met GC on their die waited {duration(blocked.get('mean_us', 0) / 1e6)} "
            "for it on average."
        )
    if reference is not None:
        ref_p99 = reference.raw["latency"]["read"]["p99_us"] / 1e6
        factor = ref_p99 / p99 if p99 else float("inf")
        text += (
            f" With the prototype's {REFERENCE_SCHEDULER} scheduler (GC holds its die until "
            f"the victim is clean) GC-GD's read p99 is {duration(ref_p99)}; here it is "
            f"{duration(p99)}, {factor:.1f}× lower"
            + (
                ", not 10×: what remains is the queue of writes, which no scheduler removes "
                "at this load."
                if factor < 10
                else "."
            )
        )
    text += (
        f" Fewer copies shorten the queue: {best_label.upper()} (WAF "
        f"{num(reports[best_label].waf, 2)}) has a read p99 of "
        f"{duration(best['latency']['read']['p99_us'] / 1e6)}."
    )
    return text


def run_demo(
    out_dir: str | os.PathLike[str] = "zombiesim-demo",
    *,
    quick: bool = False,
    jobs: int | None = None,
    seed: int = DEFAULT_SEED,
    progress: MultiProgressFn | None = None,
    command: str | None = None,
) -> DemoResult:
    """Run the demo and write `demo.html` and `demo.csv` into `out_dir` (created if
    needed); `command` is the command line the page shows. Raises
    `SimulationInterrupted` on Ctrl-C (nothing is written then)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cfg, workload = demo_setup(quick)
    ref_cfg, _ = demo_setup(quick, scheduler=REFERENCE_SCHEDULER)
    ref_label = f"gc-gd ({REFERENCE_SCHEDULER})"
    # The four schemes and the reference run on one pool: the same request stream each.
    runs = {s: (cfg.scheme(s), workload) for s in DEMO_SCHEMES}
    runs[ref_label] = (ref_cfg.scheme("gc-gd"), workload)
    start = time.perf_counter()
    reports = simulate_many(runs, seed=seed, jobs=jobs, progress=progress)
    reference = reports.pop(ref_label)
    wall = time.perf_counter() - start
    latency_text = latency_notes(reports, reference, cfg)
    html_path, csv_path = out / "demo.html", out / "demo.csv"
    write_comparison_html(
        html_path,
        reports,
        title=TITLE,
        config_toml=cfg.to_toml(),
        workload=workload,
        seed=seed,
        notes=NOTES + "\n\n" + latency_text,
        command=command,
    )
    atomic_write(csv_path, to_frame(reports).to_csv(index=False))
    return DemoResult(reports, html_path, csv_path, wall, workload, cfg, reference, latency_text)
