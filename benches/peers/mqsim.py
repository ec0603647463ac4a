"""zombiesim beside MQSim on the same trace: WAF, GC victims, programs, wall time, latencies.

A recipe run by hand (not in CI, not imported by the tests). It needs an MQSim
executable built from MQSim's own repository (https://github.com/CMU-SAFARI/MQSim),
given on the command line; nothing of MQSim is part of this project.

For each case it

1. writes one trace in MQSim's ASCII format (arrival time in ns, device, start LBA in
   512-byte sectors, size in sectors, 0 = write / 1 = read): a sequential fill of every
   logical page, then page-sized writes, uniform random (`uniform`) or 80 % of them to
   the first 20 % of the pages (`hotcold`), for a number of drive writes. zombiesim reads
   the same file as a DiskSim trace (`--format disksim --time-scale 1e-6`: MQSim's first
   column is nanoseconds, DiskSim's milliseconds);
2. writes MQSim's device and workload XML and zombiesim's TOML for the same model: one
   page size, page-level mapping with the whole table in SRAM (MQSim's
   `Ideal_Mapping_Table`), greedy victims, GC per plane started below the same number of
   free blocks, host and GC writes to separate open blocks, the same logical capacity,
   MQSim's translation blocks withheld from zombiesim, no write cache, no
   preconditioning (the fill comes from the trace);
3. runs MQSim, zombiesim in counting mode and zombiesim with its timing model on (the
   same latencies as MQSim), and prints the figures side by side.

    python benches/peers/mqsim.py --mqsim PATH/TO/MQSim
    python benches/peers/mqsim.py --mqsim PATH/TO/MQSim --cases uniform \\
        --channels 2 --chips-per-channel 2 --blocks-per-plane 512

Why these settings, and why MQSim's WAF comes out a little higher: docs/validation.md.

Timing mode (`--timing`): request latencies instead of WAF, on the same device and
settings, zombiesim timed with an open-loop replay (`interface.replay = "open"`, queue
depth 1024 as MQSim's `IO_Queue_Depth`). Cases: (a) random 4 KiB reads far apart on a
filled device (unloaded latency), (b) random 4 KiB writes at rising Poisson rates up to
saturation on an empty device (no GC), (c) 70/30 random reads and writes after a fill
and a drive write of random writes (GC running), (d) a sequential fill. MQSim replays a
warm-up (the fill, the random writes) from its trace, then pauses, then the measured
requests; zombiesim gets the warm-up as counting preconditioning and replays only the
measured requests, so its report's latencies (mean, p50, p99, p99.9) are theirs. Each
prints mean, p50, p99 and p99.9 of read and write latency and the throughput, MQSim
beside zombiesim, with ratios.

    python benches/peers/mqsim.py --mqsim PATH/TO/MQSim-with-log --timing
    python benches/peers/mqsim.py --mqsim PATH/TO/MQSim-with-log --timing \\
        --timed-cases mixed --mqsim-set Preemptible_GC_Enabled=true

MQSim build for the timing mode. MQSim's own output gives only averages per flow, so
the timing mode needs a build that writes one line per completed request, "arrival_ns
completion_ns 1|0" (1 = read), to the file named by the environment variable
MQSIM_REQUEST_LOG. In MQSim's `src/host/IO_Flow_Base.cpp`, function
`IO_Flow_Base::NVMe_consume_io_request`, right after `request_delay` is computed: open a
function-static `std::ofstream` on `getenv("MQSIM_REQUEST_LOG")` (or "/dev/null") and
write `request->Arrival_time`, `Simulator->Time()` and whether `request->Type` is
`Host_IO_Request_Type::READ`; add `#include <fstream>` and `#include <cstdlib>`. A
static object is flushed when MQSim returns from main, also when requests stay
unserved. Then `make` as usual. Nothing else changes; the WAF mode runs with it too.

This file holds the command line and the WAF mode's loop; beside it, mqsim_inputs.py
writes what both simulators are given, mqsim_compare.py runs them and prints the tables,
and mqsim_timing.py is the timing mode.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

# The machine line is the benchmarks' own (benches/bench.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import cpu_model  # noqa: E402

# The recipe's parts beside this file (mqsim_inputs.py, mqsim_compare.py, mqsim_timing.py),
# wherever it is run or imported from.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mqsim_compare import (  # noqa: E402
    add_waf,
    print_rows,
    print_table,
    run_mqsim,
    run_zombiesim,
    write_json,
)
from mqsim_inputs import (  # noqa: E402
    DEFAULT_GC_THRESHOLD,
    MQSIM_MIN_GC_THRESHOLD,
    Device,
    mqsim_device_xml,
    mqsim_workload_xml,
    write_trace,
    zombiesim_toml,
)
from mqsim_timing import main_timing  # noqa: E402

#: `main`, and what the SSDSim and MIDAS recipes import from here (`from mqsim import ...`).
__all__ = ["add_trace_options", "add_waf", "main", "print_rows"]


def add_trace_options(p: argparse.ArgumentParser) -> None:
    """The generated trace's keys, shared with the SSDSim recipe."""
    p.add_argument(
        "--gap-us", type=int, default=5000, help="time between trace records (default %(default)s)"
    )
    p.add_argument(
        "--seed", type=int, default=1, help="the trace's random addresses (default %(default)s)"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--mqsim", type=Path, required=True, help="a built MQSim executable")
    p.add_argument(
        "--also-mqsim",
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="another MQSim executable (a modified build) to run beside it (repeatable)",
    )
    p.add_argument(
        "--zombiesim",
        default=shutil.which("zombiesim") or str(Path(sys.executable).parent / "zombiesim"),
        help="the zombiesim CLI (default: the one on PATH, else beside this Python)",
    )
    p.add_argument(
        "--cases",
        default="uniform,hotcold",
        help="comma list of uniform, hotcold (default %(default)s)",
    )
    p.add_argument("--channels", type=int, default=1, help="(default %(default)s)")
    p.add_argument("--chips-per-channel", type=int, default=1, help="(default %(default)s)")
    p.add_argument("--blocks-per-plane", type=int, default=2048, help="(default %(default)s)")
    p.add_argument("--pages-per-block", type=int, default=256, help="(default %(default)s)")
    p.add_argument("--page-size", type=int, default=4096, help="bytes (default %(default)s)")
    p.add_argument(
        "--op",
        type=float,
        default=0.0625,
        help="MQSim's Overprovisioning_Ratio, 1 - logical / physical (default %(default)s)",
    )
    p.add_argument(
        "--gc-threshold",
        type=int,
        default=DEFAULT_GC_THRESHOLD,
        help=f"GC starts below this many free blocks in a plane (MQSim: at least "
        f"{MQSIM_MIN_GC_THRESHOLD}; default %(default)s)",
    )
    p.add_argument(
        "--drive-writes",
        type=float,
        default=3.0,
        help="random writes after the fill (default %(default)s)",
    )
    add_trace_options(p)
    p.add_argument(
        "--no-withhold",
        action="store_true",
        help="also run zombiesim without MQSim's translation blocks withheld",
    )
    p.add_argument("--no-timed", action="store_true", help="skip zombiesim's timed run")
    p.add_argument(
        "--mqsim-set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set an element of MQSim's ssdconfig.xml, e.g. PCIe_Lane_Bandwidth=1000 or "
        "Preemptible_GC_Enabled=true (repeatable)",
    )
    tg = p.add_argument_group(
        "timing mode",
        "--timing compares request latencies instead of WAF. MQSim must then be a build "
        "that logs each request: in IO_Flow_Base::NVMe_consume_io_request, one line "
        "'arrival_ns completion_ns 1|0' (1 = read) per request to the file named by "
        "$MQSIM_REQUEST_LOG (this script's docstring, 'MQSim build', has the details)",
    )
    tg.add_argument("--timing", action="store_true", help="run the timed cases (a)-(d)")
    tg.add_argument(
        "--timed-cases",
        default="",
        help="comma list of reads, writes, mixed, fill (default: all)",
    )
    tg.add_argument(
        "--requests",
        type=int,
        default=20_000,
        help="measured requests of (a)-(c) (default %(default)s)",
    )
    tg.add_argument(
        "--read-gap-us",
        type=int,
        default=1000,
        help="(a): time between reads (default %(default)s)",
    )
    tg.add_argument(
        "--write-iops",
        default="1000,2000,3000,4000,4500,5000",
        help="(b): mean arrival rates, comma list (default %(default)s)",
    )
    tg.add_argument(
        "--mixed-iops", type=int, default=400, help="(c): mean arrival rate (default %(default)s)"
    )
    tg.add_argument(
        "--warmup-drive-writes",
        type=float,
        default=1.0,
        help="(c): random writes after the fill, before the measured requests "
        "(default %(default)s)",
    )
    tg.add_argument(
        "--warmup-gap-us",
        type=int,
        default=5000,
        help="MQSim's warm-up writes: time between them (default %(default)s)",
    )
    tg.add_argument(
        "--drain-s",
        type=float,
        default=60.0,
        help="MQSim: pause between warm-up and measured requests (default %(default)s)",
    )
    tg.add_argument(
        "--fill-gap-us",
        type=int,
        default=100,
        help="(d): time between the fill's writes; below the ~213 us a write takes, the "
        "fill runs at the device's pace (default %(default)s)",
    )
    tg.add_argument(
        "--zombiesim-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a key of zombiesim's matched TOML, e.g. gc.max_victims_per_trigger=1 "
        "(repeatable)",
    )
    tg.add_argument(
        "--no-host-overheads",
        action="store_true",
        help="set zombiesim's host-interface and command-cycle keys (where it has them) to 0 "
        "instead of MQSim's figures",
    )
    p.add_argument(
        "--workdir", type=Path, help="traces, configs and outputs (default: a new temp dir)"
    )
    p.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = p.parse_args(argv)

    mqsims = {"MQSim": args.mqsim}
    for spec in args.also_mqsim:
        label, sep, path = spec.partition("=")
        if not sep:
            p.error(f"--also-mqsim {spec}: expected LABEL=PATH")
        mqsims[label] = Path(path)
    for label, path in mqsims.items():
        if not os.access(path, os.X_OK):
            p.error(f"{label}: {path} is not an executable")
        mqsims[label] = path.resolve()
    overrides = {}
    for spec in args.mqsim_set:
        name, sep, value = spec.partition("=")
        if not sep:
            p.error(f"--mqsim-set {spec}: expected NAME=VALUE")
        overrides[name] = value
    args.mqsim_set = overrides
    try:
        args.write_iops = [int(x) for x in args.write_iops.split(",") if x.strip()]
    except ValueError:
        p.error("--write-iops: a comma list of integers")
    if args.gc_threshold < MQSIM_MIN_GC_THRESHOLD:
        p.error(f"--gc-threshold: MQSim's is at least {MQSIM_MIN_GC_THRESHOLD}")
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    for c in cases:
        if c not in ("uniform", "hotcold"):
            p.error(f"--cases: unknown case {c!r}")

    dev = Device(
        channels=args.channels,
        chips_per_channel=args.chips_per_channel,
        blocks_per_plane=args.blocks_per_plane,
        pages_per_block=args.pages_per_block,
        page_size=args.page_size,
        mqsim_op=args.op,
        gc_threshold_blocks=args.gc_threshold,
    )
    if args.timing:
        return main_timing(args, dev, mqsims)
    withheld = dev.mqsim_translation_blocks()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="zombiesim-mqsim-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "ssdconfig.xml").write_text(mqsim_device_xml(dev, args.mqsim_set))
    configs = {"zombiesim": work / "zombiesim.toml"}
    configs["zombiesim"].write_text(zombiesim_toml(dev, withheld, timed=False))
    if not args.no_timed:
        configs["zombiesim timed"] = work / "zombiesim-timed.toml"
        configs["zombiesim timed"].write_text(zombiesim_toml(dev, withheld, timed=True))
    if args.no_withhold:
        configs["zombiesim, none withheld"] = work / "zombiesim-none-withheld.toml"
        configs["zombiesim, none withheld"].write_text(zombiesim_toml(dev, 0, timed=False))

    print(
        f"device: {dev.planes} plane(s) x {dev.blocks_per_plane} blocks x "
        f"{dev.pages_per_block} pages x {dev.page_size} B, MQSim OP {dev.mqsim_op} "
        f"({dev.mqsim_logical_pages():,} logical pages), GC below {dev.gc_threshold_blocks} "
        f"free blocks per plane, {withheld} translation block(s) per plane withheld from "
        f"zombiesim; {args.drive_writes} drive writes after the fill"
    )
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; work folder {work}")
    results = {}
    for case in cases:
        trace = work / f"{case}.trace"
        gap_ns = args.gap_us * 1000
        fill, total = write_trace(trace, dev, case, args.drive_writes, gap_ns, args.seed)
        (work / "workload.xml").write_text(mqsim_workload_xml(dev, trace.name))
        runs = {label: run_mqsim(path, work) for label, path in mqsims.items()}
        for label, config in configs.items():
            tag = case + "-" + config.stem
            runs[label] = run_zombiesim(args.zombiesim, work, trace, config, tag)
        for label, r in runs.items():
            add_waf(r, fill)
            lp = r.get("logical_pages")
            if lp is not None and lp != dev.mqsim_logical_pages():
                print(f"warning: {label} has {lp} logical pages, MQSim {dev.mqsim_logical_pages()}")
        results[case] = runs
        print_table(case, fill, total, runs)
    write_json(args, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
