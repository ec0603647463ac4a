"""ShadowGC (seed 003, §§2.2 and 4): GC that uses the pages of both write buffers.

Experiments, all on the `shadowgc-1tb` preset's flash (512 x 16 KiB pages per block, OP 7%,
read 120 us, program 600/300 us) with fewer planes, counting mode, the device
preconditioned by uniform random writes (the `precondition` defaults: fill, then random
writes until the WAF settles), notifications piggybacked, and one restart of the system
(as after a power failure) half-way through every run:

- **Fig. 6-8**: GGC, ZGC, HGC, DGC and SGC on three stand-ins for 003 Fig. 1's kinds of
  footprint growth, built with the `footprint` workload (30% reads): slow (src12-like,
  nine of the paper's fifteen traces), moderate with pauses (prn1-like, five) and linear
  (web2-like, one), and on the shared MSR src1_0 excerpt. Write amplification and the
  accumulated GC latency against GGC, and the relocated pages by state. The host and
  device buffers keep the paper's share of the device (128 MB per TB: 8 MiB each on the
  64 GiB device of the default scale).
- **Fig. 2**: greedy (= GGC), greedy+delay (the threshold rule, and 000's delay rule
  that ZGC uses: `greedy+zdelay`) and greedy+separation on the same stand-ins,
  and cost-benefit as a reference for what greedy leaves on these workloads.
- **Aging ablation**: the slow and moderate stand-ins again, the device aged as 003
  §4.1 says (random writes until it is full, no in-order fill) instead of the default
  preconditioning: how GGC's WAF sets the size of every scheme's gain.
- **Buffers of 128 MiB**: the five schemes again with the paper's absolute buffer size,
  which on the scaled device holds half the stand-ins' rewritten window: how the gains
  grow when the buffers hold most of what is rewritten.

Scales: `tiny` (8 GiB device, for tests), `small` (64 GiB: the preset's 2048 blocks per
plane on 4 of its 64 planes; the default, a few minutes on two cores), `full` (the
preset's 1 TB, with its GC watermarks of 66 blocks, and the rewritten window grown with
the buffers: 4 GiB against 128 MiB, as 256 MiB against 8 MiB at `small`).

The device keeps a clock for fast-write retention and the restart: with timing off it is
the requests' arrival times (`iops=20000` on the synthetic workloads, the trace's own
timestamps on the MSR excerpt).

The grid of runs is built in `shadowgc_experiments`, the claims, tables and notes in
`shadowgc_analysis`, the figures in `shadowgc_figures`; this module holds what `zombiesim
reproduce` reads (`TITLE`, `REASONS`, `run`, ...) and re-exports their names.
"""

from __future__ import annotations

from ._common import Context, Reproduction
from .shadowgc_analysis import (
    BAND,
    MSR_CLAIM,
    PAPER_LATENCY_SGC,
    PAPER_WA,
    REFRESH_LIMIT,
    _analyse,
)
from .shadowgc_experiments import (
    AGED,
    AGED_KINDS,
    AGED_SCHEMES,
    BIG,
    FIG2,
    FOUR_PLANES,
    IOPS,
    MSR,
    MSR_BUFFER_MAX_MIB,
    MSR_FILE,
    PAPER_BUFFER_MIB,
    PAPER_DEVICE_BYTES,
    READ,
    REFERENCE,
    SCALE_SETTINGS,
    SCHEMES,
    STAND_INS,
    ZDELAY,
    Scale,
    _runs,
    aged_by_random_writes,
    device,
    ratio_buffer_mib,
    stand_in,
)
from .shadowgc_figures import FIG2_SCHEMES, WA_SCHEMES

__all__ = [
    "AGED",
    "AGED_KINDS",
    "AGED_SCHEMES",
    "BAND",
    "BIG",
    "DEFAULT_TIME",
    "DEFAULT_VERDICTS",
    "DESCRIPTION",
    "DOCS",
    "FIG2",
    "FIG2_SCHEMES",
    "FOUR_PLANES",
    "IOPS",
    "MSR",
    "MSR_BUFFER_MAX_MIB",
    "MSR_CLAIM",
    "MSR_FILE",
    "PAPER_BUFFER_MIB",
    "PAPER_DEVICE_BYTES",
    "PAPER_LATENCY_SGC",
    "PAPER_WA",
    "READ",
    "REASONS",
    "REFERENCE",
    "REFRESH_LIMIT",
    "SCALES",
    "SCALES_DOCS",
    "SCALE_SETTINGS",
    "SCHEMES",
    "STAND_INS",
    "TITLE",
    "WA_SCHEMES",
    "ZDELAY",
    "Scale",
    "aged_by_random_writes",
    "device",
    "ratio_buffer_mib",
    "run",
    "stand_in",
]

TITLE = "ShadowGC (003): garbage collection that uses both write buffers"
DESCRIPTION = "GGC/ZGC/HGC/DGC/SGC on footprint stand-ins and MSR: WA, GC latency, states"

#: The scales this paper runs at (`tiny` is for tests).
SCALES = ("tiny", "small", "full")
#: The default scale's wall time (2 cores, nothing else running: the docs' timings) and
#: verdicts (seed 1), for `reproduce --help`.
DEFAULT_TIME = "about 2 min"
DEFAULT_VERDICTS = {"met": 12, "explained": 2, "missed": 2}

#: The docs section on why ours differ, and the one on running it at each scale.
DOCS = "docs/shadowgc.md#why-ours-differ-from-the-papers"
SCALES_DOCS = "docs/shadowgc.md#running-the-reproduction"
_AGING = (
    "GGC's WAF is high after the default aging (greedy collects hot blocks before they "
    "have died) and every program a scheme saves saves about WAF - 1 GC copies with it; "
    "aged as 003 §4.1 says (the aging table) the gain falls into the paper's band"
)
#: Why a claim is not met, by (experiment, metric) and verdict (`_common.give_reasons`).
REASONS = {
    ("Fig. 6, * MiB buffers (9:5:1)", "WA, ZGC vs GGC"): {"explained": f"{_AGING}: see {DOCS}"},
    ("Fig. 6, * MiB buffers (9:5:1)", "WA, DGC vs GGC"): {
        "explained": f"{_AGING}: see {DOCS}",
        "missed@full": "explained at the default scale by the aging ablation, which gives "
        "-1.0% here, just outside the 2x band around the paper's -2.3%: see "
        "docs/shadowgc.md#what-the-reproduction-shows-and-where-it-differs",
    },
    ("Fig. 2, * MiB buffers (9:5:1)", "WA, greedy+delay vs greedy"): {
        "missed": "with buffers of the paper's share few of GGC's relocations are "
        "host-shadow (2% at the default scale), so no candidate block comes near half "
        "zombie and greedy+delay skips nothing; where delay does bite on these stand-ins it "
        "helps, since a delayed block's host-shadow pages die once the host writes them "
        f"back: see {DOCS}",
    },
    ("Fig. 2, * MiB buffers (9:5:1)", "WA, Zombie (ZGC: separation + delay) vs *"): {
        "missed": "z-greedy's delay makes GC take a cold block and let the hot one die, as "
        "cost-benefit does by age, so delay helps here; 003 explains its opposite result "
        "by workloads with good locality, while our stand-ins' growing footprint keeps "
        f"invalidating cold pages: see {DOCS}",
    },
    ("MSR src1_0 excerpt", "shadow pages among relocated pages, every scheme"): {
        "missed@full": "on the 1 TB device the excerpt's 37 MiB spread over 64 planes, "
        "under a block each, so GC never runs and the claim has nothing to judge: see "
        "docs/shadowgc.md#what-the-reproduction-shows-and-where-it-differs",
    },
}


def run(ctx: Context) -> Reproduction:
    s = SCALE_SETTINGS[ctx.scale]
    runs, msr_missing = _runs(ctx, s)
    reports = ctx.simulate_many(runs)
    return _analyse(reports, ctx.scale, s, msr_missing)
