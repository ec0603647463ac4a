"""The ShadowGC reproduction's experiments (`shadowgc`): the schemes compared, the
footprint stand-ins and the MSR excerpt they run on, the device and buffers at each scale,
and the grid of runs (`_runs`) those make."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import samples
from ..config import Config
from ..trace import TraceInput
from ._common import Context, missing_sample

SCHEMES = ("ggc", "zgc", "hgc", "dgc", "sgc")
#: 003 Fig. 2 (greedy itself is GGC) and the reference policy.
FIG2 = ("greedy+delay", "greedy+separation")
REFERENCE = "cost-benefit"

#: The stand-ins: how many of the paper's fifteen traces grow their footprint that way
#: (003 §2.2: nine like src12, five like prn1, one, web2, linear). The averages weight
#: each stand-in by it.
STAND_INS = {
    "slow": ("src12-like: footprint grows very slowly", 9),
    "moderate": ("prn1-like: grows moderately, with pauses", 5),
    "linear": ("web2-like: grows linearly", 1),
}
MSR = "msr-src1_0"
MSR_FILE = samples.MSR_EXCERPT

#: Arrival rate of the synthetic requests (the device's clock in counting mode).
IOPS = 20_000
READ = 0.3

#: The paper's buffers: 128 MB each on a 1 TB device.
PAPER_BUFFER_MIB = 128
PAPER_DEVICE_BYTES = 1 << 40
#: The MSR excerpt's buffers at most: it writes 37 MiB (about 2,400 16 KiB pages) in all,
#: so larger buffers hold most of it and GC hardly runs.
MSR_BUFFER_MAX_MIB = 1


@dataclass(frozen=True)
class Scale:
    """What a scale sets."""

    geometry: dict[str, Any]
    #: The rewritten window of the slow and moderate stand-ins, MiB.
    window_mib: int
    #: The moderate stand-in's phase (it pauses every other phase), MiB.
    phase_mib: int
    #: Length of each synthetic run, in drive writes of the workload.
    drive_writes: float
    #: The paper's absolute buffers (each), MiB, in a second set of runs where the main set
    #: (the paper's share of the device) is smaller: half the window at `small`. At
    #: `full` the main set has them already.
    big_buffer_mib: int


#: 4 of the preset's 64 planes. Its GC watermarks (66) are for 64 planes; 4 planes
#: need 6 (8 kept).
FOUR_PLANES = {
    "flash.channels": 2,
    "flash.chips_per_channel": 2,
    "gc.low_watermark": 8,
    "gc.high_watermark": 8,
}

SCALE_SETTINGS = {
    "tiny": Scale(
        {**FOUR_PLANES, "flash.blocks_per_plane": 256},
        window_mib=64,
        phase_mib=256,
        drive_writes=0.5,
        big_buffer_mib=32,
    ),
    "small": Scale(
        FOUR_PLANES,
        window_mib=256,
        phase_mib=1024,
        drive_writes=2.0,
        big_buffer_mib=PAPER_BUFFER_MIB,
    ),
    "full": Scale(
        {},
        # 32 times the buffers, as at `small` (8 MiB against 256 MiB): the full scale is
        # the small one at the paper's size, not a different experiment.
        window_mib=4096,
        phase_mib=4096,
        drive_writes=0.5,
        big_buffer_mib=PAPER_BUFFER_MIB,
    ),
}


def ratio_buffer_mib(cfg: Config) -> int:
    """Each buffer at the paper's share of the device (128 MB per TB), whole MiB, at least 1."""
    g = cfg.geometry
    device_bytes = g["physical_pages"] * g["page_size"]
    return max(1, round(PAPER_BUFFER_MIB * device_bytes / PAPER_DEVICE_BYTES))


def device(scale: str) -> Config:
    """The `shadowgc-1tb` preset with the scale's geometry."""
    return Config.preset("shadowgc-1tb").override(SCALE_SETTINGS[scale].geometry)


def stand_in(kind: str, s: Scale) -> str:
    """The `footprint` spec of a stand-in (without its length and arrival rate)."""
    window = f"window={s.window_mib}MiB"
    if kind == "slow":
        return f"footprint:growth=0.02,{window},read={READ:g}"
    if kind == "moderate":
        return f"footprint:growth=0.3,{window},phase={s.phase_mib}MiB,pause=0.5,read={READ:g}"
    if kind == "linear":
        return f"footprint:growth=1,read={READ:g}"
    raise ValueError(kind)


def _midpoint_s(cfg: Config, drive_writes: float) -> float:
    """Half the run on the device's clock: requests / 2 / iops (one page per request)."""
    writes = drive_writes * cfg.geometry["logical_pages"]
    return round(writes / (1 - READ) / 2 / IOPS, 3)


#: Label of the runs with the large buffers: `<kind>@big/<scheme>`.
BIG = "@big"
#: Label of the aging ablation's runs: `<kind>@aged/<scheme>`.
AGED = "@aged"
#: The stand-ins the aging ablation runs (the two whose schemes differ).
AGED_KINDS = ("slow", "moderate")
#: The schemes the aging ablation runs (besides ZDELAY): greedy+delay's threshold
#: never bites at these buffer sizes, so it is left out.
AGED_SCHEMES = (*SCHEMES, "greedy+separation")
#: Greedy with 000's delay rule (z-greedy's i - min(z, i/2), the one ZGC uses), without
#: ZGC's separation: the delay ablation of Fig. 2.
ZDELAY = "greedy+zdelay"


def aged_by_random_writes(cfg: Config) -> dict[str, Any]:
    """003 §4.1's aging read literally ("the SSD is filled with uniform random workloads
    so that GC may be triggered"): no in-order fill, one physical capacity of uniform
    random single-page writes, so GC has just started; unwritten logical pages stay
    free."""
    g = cfg.geometry
    return {
        "precondition.fill": False,
        "precondition.random_drive_writes": round(g["physical_pages"] / g["logical_pages"], 4),
        "precondition.steady_tolerance": 0.0,
    }


def _runs(ctx: Context, s: Scale) -> tuple[dict[str, tuple[Config, Any]], str | None]:
    """The runs, and why the MSR excerpt's could not be made (None when they were)."""
    base = device(ctx.scale)
    restart = {"device.restart_at": [_midpoint_s(base, s.drive_writes)]}
    length = f"drive_writes={s.drive_writes:g},iops={IOPS}"
    runs: dict[str, tuple[Config, Any]] = {}

    def buffers(mib: int) -> dict[str, str]:
        return {"host.buffer": f"{mib}MiB", "device.buffer": f"{mib}MiB"}

    ratio = ratio_buffer_mib(base)
    every = (*SCHEMES, *FIG2, REFERENCE)
    zdelay = {"gc.policy": "z-greedy"}
    for kind in STAND_INS:
        spec = f"{stand_in(kind, s)},{length}"
        for scheme in every:
            runs[f"{kind}/{scheme}"] = (base.scheme(scheme, {**buffers(ratio), **restart}), spec)
        runs[f"{kind}/{ZDELAY}"] = (
            base.scheme("ggc", {**buffers(ratio), **restart, **zdelay}),
            spec,
        )
    aged = aged_by_random_writes(base)
    for kind in AGED_KINDS:
        spec = f"{stand_in(kind, s)},{length}"
        for scheme in AGED_SCHEMES:
            cfg = base.scheme(scheme, {**buffers(ratio), **restart, **aged})
            runs[f"{kind}{AGED}/{scheme}"] = (cfg, spec)
        cfg = base.scheme("ggc", {**buffers(ratio), **restart, **aged, **zdelay})
        runs[f"{kind}{AGED}/{ZDELAY}"] = (cfg, spec)
    if s.big_buffer_mib != ratio:
        for kind in STAND_INS:
            spec = f"{stand_in(kind, s)},{length}"
            for scheme in SCHEMES:
                cfg = base.scheme(scheme, {**buffers(s.big_buffer_mib), **restart})
                runs[f"{kind}{BIG}/{scheme}"] = (cfg, spec)
    missing = missing_sample(MSR_FILE)
    if missing is None:
        from .. import trace as traces

        path = samples.path(MSR_FILE)
        duration = traces.stats(str(path), "msr")["duration_s"]
        msr = {
            **buffers(min(ratio, MSR_BUFFER_MAX_MIB)),
            "device.restart_at": [round(duration / 2, 3)],
        }
        trace = TraceInput(str(path), "msr", remap="modulo")
        for scheme in every:
            runs[f"{MSR}/{scheme}"] = (base.scheme(scheme, msr), trace)
    return runs, missing
