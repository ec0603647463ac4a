"""The FDP reproduction's experiments (`fdp`): the OPs, SOC sizes and GC reserves taken
from the papers' figures, the devices and workloads (CacheLib's KV cache, WARP's three
streams, uniform random, the notified trace joined with zombie awareness) and the grid of
runs at each scale (`_runs`, `_joined_runs`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..trace import TraceInput, generate_notified
from ._common import Context

SOC_SHARES = (0.04, 0.2, 0.4, 0.64)
#: WARP Fig. 18 (256 MB RUs, 224 GB, 80/20 three streams at 5x): OP -> (II, PI).
PAPER_ISOLATION = {0.05: (2.178, 2.365), 0.10: (1.338, 1.181)}
#: GC reserve of the three-stream runs, free RUs (`gc.low_watermark` = `high`): the
#: least PI's three GC streams need, given to both isolations.
STREAMS_RESERVE = 4
#: WARP does not state how many free RUs its PI keeps back for the handles' GC streams;
#: PI is run again with these (the `pi_reserve` table; 12 = II's reserve per GC stream).
#: They are shares of the device's RUs, the same at every scale: 6, 8 and 12 of the
#: 1,024 RUs at `small` (WARP's device has 896), four times as many of the 4,096 at
#: `full`. The tiny device has no room for more at OP 5% (12 spare RUs).
PI_RESERVES = {"tiny": (), "small": (6, 8, 12), "full": (24, 32, 48)}
#: OPs between WARP's two at which II and PI run again (`isolation_op`): where our II
#: lies within the range of WARP's II over its two OPs, the device runs at WARP's GC
#: pressure whatever the nominal OP says.
ISOLATION_SWEEP = {
    "tiny": (),
    "small": (0.06, 0.07, 0.08, 0.085, 0.09, 0.095),
    "full": (0.06, 0.07, 0.08, 0.085, 0.09, 0.095),
}
#: Initial isolation as FEMU's FDP FTL (`hw/femu/bbssd/ftl-fdp.c`, WARP's emulator)
#: implements it: GC copies of every handle go to the open RU of the last handle, beside
#: its host writes (here the overwrite writer's); run beside our II in `isolation_op`.
FEMU_II = "initial-last-handle"
#: The paper does not state its drive's over-provisioning ("typically 7-20%", §6.1): the
#: utilisation cells are run again at these (the `op_ablation` table).
ABLATION_OP = (0.10, 0.14, 0.20)
#: The small-object cache's share of the written pages. The paper gives no object sizes;
#: with FDP the large-object cache's log costs nothing, so WAF - 1 = soc_writes x (SOC WAF
#: - 1), and with the paper's own model of the SOC (1.097 at SOC 4% on this device) its
#: WAF of 1.03 at 100% utilisation gives soc_writes = 0.03 / 0.097 = 0.31.
SOC_WRITES = 0.3
SENSITIVITY = (0.15, 0.5)


@dataclass(frozen=True)
class Scale:
    blocks_per_plane: int
    pages_per_block: int
    #: Measured device-writes of each run.
    drive_writes: float


SCALE_SETTINGS = {
    # 1 GiB: 256 RUs of 4 MiB.
    "tiny": Scale(blocks_per_plane=256, pages_per_block=64, drive_writes=2.0),
    "small": Scale(blocks_per_plane=1024, pages_per_block=256, drive_writes=3.0),
    "full": Scale(blocks_per_plane=4096, pages_per_block=256, drive_writes=5.0),
}
#: WARP measures at 5x the device written.
STREAMS_DRIVE_WRITES = 5.0


def device(scale: str, **settings: Any) -> Config:
    s = SCALE_SETTINGS[scale]
    return Config.preset("fdp").override(
        {
            "flash.blocks_per_plane": s.blocks_per_plane,
            "flash.pages_per_block": s.pages_per_block,
            **settings,
        }
    )


#: Device-writes of the workload's own writes before measuring: enough that nearly every
#: bucket of a 64% small-object cache has been written (the paper's caches are
#: prepopulated), whatever the write amplification does meanwhile.
CACHELIB_PRECONDITION = 4.0


def cachelib_device(scale: str, util: float) -> Config:
    """Trimmed at the start, as the paper trims the device; a cache using all of it is
    filled once (CacheLib prepopulates its caches: every bucket holds data), one using
    part of it is not (the rest stays trimmed); then `CACHELIB_PRECONDITION`
    device-writes of the workload's own writes."""
    return device(
        scale,
        **{
            "precondition.fill": util >= 1.0,
            "precondition.pattern": "workload",
            "precondition.random_drive_writes": CACHELIB_PRECONDITION,
            "precondition.steady_tolerance": 0.0,
        },
    )


def streams_device(scale: str, op: float, isolation: str) -> Config:
    """WARP's setting: the log filled once, three handles, each isolation given the same
    GC reserve (PI needs one fresh RU per handle's GC stream)."""
    return device(
        scale,
        **{
            "ftl.over_provisioning": op,
            "fdp.handles": 3,
            "fdp.isolation": isolation,
            "gc.low_watermark": STREAMS_RESERVE,
            "gc.high_watermark": STREAMS_RESERVE,
            "precondition.random_drive_writes": 0.0,
        },
    )


def kvcache(util: float, soc: float, fdp: bool, dw: float, soc_writes: float = SOC_WRITES) -> str:
    return (
        f"kvcache:utilisation={util:g},soc={soc:g},soc_writes={soc_writes:g},"
        f"hints={'true' if fdp else 'false'},drive_writes={dw:g}"
    )


#: The joined experiment's notified trace per scale: 4 KiB pages (90% of the device's
#: logical space at OP 20%), records; hot 10% of the pages take 90% of the picks, each
#: written back 10,000 steps after it went dirty.
JOINED_TRACE = {
    "tiny": (100_000, 600_000),
    "small": (100_000, 3_000_000),
    "full": (100_000, 10_000_000),
}
JOINED_SCHEMES = ("gc-gd", "zgc-gd-nz", "zgc-gd", "oracle")
JOINED_DEVICES = ("nofdp", "initial", "persistent")


def joined_device(fdp: str, scheme: str) -> Config:
    """512 MiB (the `default` preset, 128 blocks per plane), OP 20%, an ideal channel;
    FDP with two handles on one-block RUs, or off; the same GC reserve for every scheme
    (PI with the zombie block needs 13 RUs)."""
    settings: dict[str, Any] = {
        "flash.blocks_per_plane": 128,
        "ftl.over_provisioning": 0.2,
        "notify.mode": "ideal",
        "gc.low_watermark": 13,
        "gc.high_watermark": 13,
    }
    if fdp != "nofdp":
        settings |= {
            "fdp.enabled": True,
            "fdp.handles": 2,
            "fdp.ru_planes": 1,
            "fdp.isolation": fdp,
        }
    return Config.preset("default").scheme(scheme, settings)


def _joined_runs(scale: str, trace: Path) -> dict[str, tuple[Config, TraceInput]]:
    pages, records = JOINED_TRACE[scale]
    generate_notified(
        trace, pages=pages, records=records, hot_pages=0.1, hot_share=0.9, delay=10_000,
        placement=True,
    )  # fmt: skip
    runs = {}
    for dev in JOINED_DEVICES:
        for scheme in JOINED_SCHEMES:
            runs[f"joined/{dev}/{scheme}"] = (
                joined_device(dev, scheme),
                TraceInput(str(trace), "native"),
            )
    return runs


def _runs(ctx: Context) -> dict[str, tuple[Config, str]]:
    s = SCALE_SETTINGS[ctx.scale]
    runs: dict[str, tuple[Config, str]] = {}
    cells = {(1.0, soc) for soc in SOC_SHARES} | {(0.5, 0.04)}
    for util, soc in sorted(cells):
        for fdp in (True, False):
            tag = "fdp" if fdp else "nofdp"
            runs[f"kv/{util:g}/{soc:g}/{tag}"] = (
                cachelib_device(ctx.scale, util),
                kvcache(util, soc, fdp, s.drive_writes),
            )
    for op in ABLATION_OP:
        for util in (0.5, 1.0):
            for fdp in (True, False):
                tag = "fdp" if fdp else "nofdp"
                runs[f"kvop/{op:g}/{util:g}/{tag}"] = (
                    cachelib_device(ctx.scale, util).override({"ftl.over_provisioning": op}),
                    kvcache(util, 0.04, fdp, s.drive_writes),
                )
    # The paper's model of the SOC takes the log to cost nothing: the SOC alone (every
    # write a bucket rewrite, the log's space filled once and never rewritten) tests it.
    for soc in SOC_SHARES:
        runs[f"socalone/{soc:g}"] = (
            cachelib_device(ctx.scale, 1.0),
            kvcache(1.0, soc, True, s.drive_writes, soc_writes=1.0),
        )
    for fdp in (True, False):
        tag = "fdp" if fdp else "nofdp"
        runs[f"tenants/2/{tag}"] = (
            cachelib_device(ctx.scale, 1.0),
            kvcache(1.0, 0.04, fdp, s.drive_writes) + ",tenants=2",
        )
    for sw in SENSITIVITY:
        for fdp in (True, False):
            tag = "fdp" if fdp else "nofdp"
            runs[f"kvsens/{sw:g}/{tag}"] = (
                cachelib_device(ctx.scale, 1.0),
                kvcache(1.0, 0.04, fdp, s.drive_writes, sw),
            )
    for op in PAPER_ISOLATION:
        for iso in ("initial", "persistent"):
            runs[f"streams/{op:g}/{iso}"] = (
                streams_device(ctx.scale, op, iso),
                f"streams:drive_writes={STREAMS_DRIVE_WRITES:g}",
            )
        for reserve in PI_RESERVES[ctx.scale]:
            runs[f"pireserve/{op:g}/{reserve}"] = (
                streams_device(ctx.scale, op, "persistent").override(
                    {"gc.low_watermark": reserve, "gc.high_watermark": reserve}
                ),
                f"streams:drive_writes={STREAMS_DRIVE_WRITES:g}",
            )
        runs[f"streams/{op:g}/nofdp"] = (
            streams_device(ctx.scale, op, "initial"),
            f"streams:hints=false,drive_writes={STREAMS_DRIVE_WRITES:g}",
        )
    for op in ISOLATION_SWEEP[ctx.scale]:
        for iso in ("initial", "persistent"):
            runs[f"opsweep/{op:g}/{iso}"] = (
                streams_device(ctx.scale, op, iso),
                f"streams:drive_writes={STREAMS_DRIVE_WRITES:g}",
            )
    if ISOLATION_SWEEP[ctx.scale]:
        # II as WARP's emulator runs it: GC copies into the last handle's open RU.
        for op in sorted({*ISOLATION_SWEEP[ctx.scale], *PAPER_ISOLATION}):
            runs[f"femuii/{op:g}"] = (
                streams_device(ctx.scale, op, FEMU_II),
                f"streams:drive_writes={STREAMS_DRIVE_WRITES:g}",
            )
    uniform = f"uniform:drive_writes={s.drive_writes:g}"
    runs["uniform/fdp"] = (device(ctx.scale, **{"fdp.handles": 1}), uniform)
    runs["uniform/page"] = (device(ctx.scale, **{"fdp.enabled": False}), uniform)
    return runs
