"""zombiesim's SepBIT beside the SepBIT authors' own simulator on the same traces.

A recipe run by hand (not in CI, not imported by the tests). It needs the authors'
trace-replay simulator (github fallfish/sepbit, `trace_replay/`, Java) compiled, given
by its class path on the command line; nothing of it is part of this project.

For each trace (a native zombiesim trace: a corpus entry's `trace.zst`) it

1. writes the trace's device writes in the simulator's input format (`volume,W,offset,
   length,timestamp_us`, one request per line, bytes) with its property file (`volume
   footprint_blocks max_offset`) and path list; host events, reads and trims are left
   out (the simulator replays writes only);
2. runs the simulator with NoSep and SepBIT, greedy victims, 512 KiB segments, GC when
   the volume's garbage proportion exceeds 15% (its defaults besides the segment size);
3. runs zombiesim on the same writes with the same model: one plane, blocks of 512 KiB,
   twice the space the data needs (the simulator's log has no capacity: GC alone keeps it
   at about 1/0.85 of the data), `gc.invalid_share_trigger = 0.15` (one victim after a
   write while invalid pages exceed 15% of the programmed ones, victims with 15% invalid
   or more), greedy; NoSep is one stream for host and GC writes (`ftl.gc_frontier =
   "shared"`), SepBIT `ftl.placement = "sepbit"`;
4. prints WAF side by side.

    python benches/peers/sepbit.py --classpath BUILD/classes:commons-lang3.jar \\
        traces/corpus/fio-zipf/trace.zst traces/corpus/sqlite-tpcc/trace.zst

The figures and what differs: docs/validation.md, "A second SepBIT".
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import zombiesim as zs
from zombiesim.trace import TraceInput

BLOCK = 4096
SEGMENT = 512 << 10
GP = 0.15
#: Bytes added past the largest offset in the property file: they size only the
#: simulator's index maps and SepBIT's FIFO ring.
HEADROOM = 4 << 30
RECORD = struct.Struct("<QQIHBB")
OP_READ, OP_WRITE = 0, 1


def native_writes(path: Path):
    """(time_ns, offset, size) of every device write of a native trace (docs/traces.md)."""
    raw = path.read_bytes()
    if path.suffix == ".zst":
        raw = subprocess.run(["zstd", "-dc", str(path)], check=True, capture_output=True).stdout
    magic = raw[:8]
    pos = 8 if magic == b"ZSTRACE1" else 16
    if not magic.startswith(b"ZSTRACE"):
        sys.exit(f"{path}: not a native trace")
    while pos + RECORD.size <= len(raw):
        t, off, size, _dev, op, flags = RECORD.unpack_from(raw, pos)
        pos += RECORD.size
        if flags & 2:
            pos += 2
        if flags & 1:
            pos += 8 * ((size + BLOCK - 1) // BLOCK)
        if op == OP_WRITE:
            yield t, off, size


def write_input(trace: Path, work: Path) -> tuple[Path, Path, Path, int]:
    """The simulator's trace, property and list files, and a zombiesim MSR copy of the
    same writes; returns them with the footprint in blocks."""
    name = trace.parent.name if trace.name == "trace.zst" else trace.stem.split(".")[0]
    csv, msr = work / f"{name}.csv", work / f"{name}.msr.csv"
    blocks, top = set(), 0
    with csv.open("w") as out, msr.open("w") as m:
        t0 = None
        for t, off, size in native_writes(trace):
            t0 = t if t0 is None else t0
            b0, b1 = off // BLOCK, (off + size + BLOCK - 1) // BLOCK
            out.write(f"0,W,{b0 * BLOCK},{(b1 - b0) * BLOCK},{(t - t0) // 1000}\n")
            m.write(f"{(t - t0) // 100},host,0,Write,{b0 * BLOCK},{(b1 - b0) * BLOCK},0\n")
            blocks.update(range(b0, b1))
            top = max(top, b1 * BLOCK)
    prop = work / f"{name}.csv.property"
    prop.write_text(f"0 {len(blocks)} {top + HEADROOM}\n")
    lst = work / f"{name}.csv.list"
    lst.write_text(f"{csv}\n")
    return lst, prop, msr, len(blocks)


def theirs(classpath: str, lst: Path, prop: Path, method: str, work: Path) -> float:
    out = work / f"out-{method}"
    shutil.rmtree(out, ignore_errors=True)
    for sub in ("segments", "indexmap", "ondiskfifo"):
        (out / sub).mkdir(parents=True)
    args = [
        "java", "-Xmx6g", "-cp", classpath, "gcsimulator.Simulator",
        "--path", str(lst), "--outputPrefix", f"{out}/", "--propertyPath", str(prop),
        "--selectionAlgorithm", "Greedy", "--setSeparateMethod", method,
        "--setNumOpenSegments", "6", "--setSystemGarbageProportionThreshold", str(GP),
        "--setSegmentSize", str(SEGMENT), "--setPickSegAmount", "1",
        "--printGCInfo", "0", "--printSegmentInSummary", "0",
    ]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    found = re.search(r"\*\* WA \*\*\s*:\s*([0-9.]+)", done.stdout)
    if not found:
        sys.exit(f"no WA in the simulator's output:\n{done.stdout[-2000:]}")
    return float(found.group(1))


def ours(msr: Path, footprint: int, placement: str) -> float:
    ppb = SEGMENT // BLOCK
    blocks = math.ceil(2 * footprint / ppb)
    cfg = zs.Config.preset("default").override(
        {
            "flash.channels": 1,
            "flash.chips_per_channel": 1,
            "flash.dies_per_chip": 1,
            "flash.planes_per_die": 1,
            "flash.pages_per_block": ppb,
            "flash.blocks_per_plane": blocks,
            # The logical space a little above the footprint (compact remap needs room).
            "ftl.over_provisioning": blocks * ppb / (footprint + 2) - 1,
            "precondition.fill": False,
            "precondition.random_drive_writes": 0,
            "gc.low_watermark": 5,
            "gc.high_watermark": 5,
            "gc.invalid_share_trigger": GP,
            "gc.policy": "greedy",
        }
    )
    cfg = cfg.override(
        {"ftl.placement": "sepbit"} if placement == "sepbit" else {"ftl.gc_frontier": "shared"}
    )
    return zs.simulate(cfg, TraceInput(str(msr), "msr", remap="compact")).waf


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("traces", nargs="+", type=Path, help="native traces (trace.zst)")
    p.add_argument("--classpath", required=True, help="the simulator's compiled classes (+ jars)")
    p.add_argument("--workdir", type=Path, help="keep the converted traces here")
    args = p.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="sepbit-"))
    work.mkdir(parents=True, exist_ok=True)
    head = ("trace", "NoSep theirs", "ours", "", "SepBIT theirs", "ours")
    print("{:20s} {:>12s} {:>7s} {:>7s} {:>13s} {:>7s}".format(*head))
    for trace in args.traces:
        lst, prop, msr, footprint = write_input(trace, work)
        row = []
        for method, placement in (("NoSep", "dac"), ("SepBIT", "sepbit")):
            t, o = theirs(args.classpath, lst, prop, method, work), ours(msr, footprint, placement)
            row.append(f"{t:12.3f} {o:7.3f} {o / t - 1:+7.1%}")
        print(f"{lst.stem.removesuffix('.csv'):20s} {row[0]} {row[1]}", flush=True)
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
