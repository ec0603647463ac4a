"""zombiesim's MiDAS and greedy beside the MiDAS authors' own simulator on the same writes.

A recipe run by hand (not in CI, not imported by the tests). It needs the authors'
trace-driven simulator (github sungkyun123/MiDAS-Simulation, C++) built, given on the
command line; nothing of it is part of this project. It builds with `make` where Boost's
headers are installed (it uses Boost.Math's Lambert W for one model formula; give the
compiler `-I` to a Boost checkout otherwise).

The simulator's model, which this recipe gives zombiesim too: a device of `--device-gb`
GiB of flash (2^30 bytes each) holding 10^9 bytes a GB of logical space (244,140 pages
of 4 KiB: 7.37% over-provisioning), cut into segments of `--segment-mb` MB (blocks of
512 pages; 2 MB: one block); the whole logical space written in order first, then the
trace; GC while fewer than 4 segments are free, copies written through one log. The
simulator runs MiDAS only (its baseline switch aborts), so greedy comes from zombiesim,
whose greedy in this model matches an independent re-implementation exactly
(docs/validation.md, "A second MiDAS").

For each trace (a native zombiesim trace: a corpus entry's `trace.zst`) it

1. keeps the device writes, numbers their 4 KiB pages in order of first write
   (compact), and scales each page to `k` pages (`k` chosen so the footprint fills the
   nearest to 80% of the logical space, as the corpus study sizes its devices), so a
   capture of a few hundred MiB fills the simulator's smallest device; the trace is
   repeated until at least `--drive-writes` of the logical space is written after the
   fill (MiDAS's model window is four device capacities, its groups are refitted once a
   window);
2. writes it in the simulator's format (`time type lba bytes`, type 1 = write) and as an
   MSR trace for zombiesim;
3. runs the authors' MiDAS (victims by greedy in the last group), zombiesim's greedy with
   one stream for host and GC writes at the simulator's 4 free segments, zombiesim's
   greedy and MiDAS at 8 (the least MiDAS's seven streams per plane are allowed), and
   prints WAF after the fill side by side.

    python benches/peers/midas.py --midas PATH/TO/ssdsimul \\
        traces/corpus/fio-zipf/trace.zst traces/corpus/sqlite-tpcc/trace.zst

The figures and what differs: docs/validation.md, "A second MiDAS".
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import zombiesim as zs
from zombiesim.trace import TraceInput

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mqsim import print_rows  # noqa: E402
from sepbit import native_writes  # noqa: E402

PAGE = 4096
#: Pages of a block in the simulator (its segments are whole blocks).
PAGES_PER_BLOCK = 512
#: Logical pages per GB: the simulator's 10^9 bytes.
PAGES_PER_GB = 10**9 // PAGE
#: The simulator's GC trigger: fewer free segments than this.
FREE_SEGMENTS = 4
#: The least GC watermark zombiesim allows MiDAS on one plane (its seven streams).
MIDAS_WATERMARK = 8
#: The share of the logical space the scaled footprint fills (as the corpus study).
FILL = 0.8


def write_input(trace: Path, work: Path, gb: int, drive_writes: float) -> tuple[Path, Path, str]:
    """The simulator's trace and zombiesim's MSR copy of it; a line describing them."""
    name = trace.parent.name if trace.name == "trace.zst" else trace.stem.split(".")[0]
    ids: dict[int, int] = {}
    pages = []
    for _t, off, size in native_writes(trace):
        for b in range(off // PAGE, (off + size + PAGE - 1) // PAGE):
            pages.append(ids.setdefault(b, len(ids)))
    logical = gb * PAGES_PER_GB
    if len(ids) > logical:
        sys.exit(f"{trace}: a footprint of {len(ids)} pages does not fit {gb} GB")
    k = max(1, round(FILL * logical / len(ids)))
    while k * len(ids) > logical:
        k -= 1
    per_pass = len(pages) * k / logical
    passes = max(1, math.ceil(drive_writes / per_pass))
    theirs, msr = work / f"{name}.txt", work / f"{name}.msr.csv"
    with theirs.open("w") as t, msr.open("w") as m:
        lines = [(p * k, k * PAGE) for p in pages]
        # Their format has no time: every pass is the same text.
        one_pass = "".join(f"0 1 {lba} {size}\n" for lba, size in lines)
        for n in range(passes):
            t.write(one_pass)
            base = n * len(lines)
            m.write(
                "".join(
                    f"{base + i},host,0,Write,{lba * PAGE},{size},0\n"
                    for i, (lba, size) in enumerate(lines)
                )
            )
    what = (
        f"{name}: {len(ids):,} pages x {k} = {k * len(ids) / logical:.0%} of the space, "
        f"{per_pass * passes:.1f} drive writes ({passes} pass{'es' if passes > 1 else ''})"
    )
    return theirs, msr, what


def theirs(exe: Path, trace: Path, gb: int, segment_mb: int) -> float:
    """WAF after the in-order fill by the authors' MiDAS (greedy victims in its last group)."""
    done = subprocess.run(
        [str(exe), trace.name, "greedy", str(gb), str(segment_mb)],
        cwd=trace.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    found = [re.search(rf"{key}: (\d+)", done.stdout) for key in ("USERWRITE", "COPYWRITE")]
    if not all(found):
        sys.exit(f"no USERWRITE/COPYWRITE in the simulator's output:\n{done.stdout[-2000:]}")
    user, copies = (int(f.group(1)) for f in found if f)
    # Its page count starts at 1, and the fill (every logical page once) copies nothing.
    return 1 + copies / (user - 1 - gb * PAGES_PER_GB)


def ours(msr: Path, gb: int, segment_mb: int, watermark: int, placement: str) -> float:
    """zombiesim in the simulator's model: WAF of the measured phase (after the fill)."""
    pages_per_block = PAGES_PER_BLOCK * segment_mb // 2
    blocks = (gb << 30) // (pages_per_block * PAGE)
    logical = gb * PAGES_PER_GB
    cfg = zs.Config.preset("default").override(
        {
            "flash.channels": 1,
            "flash.chips_per_channel": 1,
            "flash.dies_per_chip": 1,
            "flash.planes_per_die": 1,
            "flash.pages_per_block": pages_per_block,
            "flash.blocks_per_plane": blocks,
            "ftl.over_provisioning": blocks * pages_per_block / logical - 1,
            "precondition.fill": True,
            "precondition.random_drive_writes": 0,
            "gc.policy": "greedy",
            "gc.low_watermark": watermark,
            "gc.high_watermark": watermark,
        }
    )
    if placement == "midas":
        cfg = cfg.override({"ftl.placement": "midas"})
    else:
        cfg = cfg.override({"ftl.gc_frontier": "shared"})
    rep = zs.simulate(cfg, TraceInput(str(msr), "msr", remap="none"))
    if rep.raw["device"]["logical_pages"] != logical:
        sys.exit(f"zombiesim's device has {rep.raw['device']['logical_pages']} logical pages")
    return rep.waf


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("traces", nargs="+", type=Path, help="native traces (trace.zst)")
    p.add_argument("--midas", required=True, type=Path, help="the simulator's built ssdsimul")
    p.add_argument("--device-gb", type=int, default=1, help="logical GB (default %(default)s)")
    p.add_argument(
        "--segment-mb", type=int, default=2, help="segment size, even MB (default %(default)s)"
    )
    p.add_argument(
        "--drive-writes",
        type=float,
        default=16.0,
        help="least drive writes after the fill (default %(default)s)",
    )
    p.add_argument("--workdir", type=Path, help="keep the converted traces here")
    args = p.parse_args()
    if args.segment_mb < 2 or args.segment_mb % 2:
        p.error("--segment-mb: an even number of MB (blocks of 2 MB)")
    exe = args.midas.resolve()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="midas-"))
    work.mkdir(parents=True, exist_ok=True)
    head = [
        "trace",
        f"greedy ({FREE_SEGMENTS})",
        "MiDAS theirs",
        "",
        f"greedy ({MIDAS_WATERMARK})",
        "MiDAS ours",
        "",
        "ours/theirs",
    ]
    body, notes = [], []
    for trace in args.traces:
        mine, msr, what = write_input(trace, work, args.device_gb, args.drive_writes)
        notes.append(what)
        g4 = ours(msr, args.device_gb, args.segment_mb, FREE_SEGMENTS, "dac")
        t = theirs(exe, mine, args.device_gb, args.segment_mb)
        g8 = ours(msr, args.device_gb, args.segment_mb, MIDAS_WATERMARK, "dac")
        o = ours(msr, args.device_gb, args.segment_mb, MIDAS_WATERMARK, "midas")
        body.append(
            [
                mine.stem,
                f"{g4:.3f}",
                f"{t:.3f}",
                f"{t / g4 - 1:+.1%}",
                f"{g8:.3f}",
                f"{o:.3f}",
                f"{o / g8 - 1:+.1%}",
                f"{o / t - 1:+.1%}",
            ]
        )
    print_rows(head, body)
    for line in notes:
        print("  " + line)
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
