"""zombiesim beside SSDSim on the same trace: whole-process wall time, programs, erases, WAF.

A recipe run by hand (not in CI, not imported by the tests). It needs an SSDSim
executable built from SSDSim's own sources (the C simulator of Yang Hu et al.; the Linux
port at https://github.com/huaicheng/ssdsim builds with `gcc -O2 -fcommon -w -o ssd
*.c`), given on the command line; nothing of SSDSim is part of this project.

It

1. writes one trace in SSDSim's ASCII format (arrival time in ns, device, start sector,
   size in 512-byte sectors, 1 = read / 0 = write; SSDSim's `get_requests`): a
   sequential fill of every logical page, then uniform random 4 KiB writes (seeded),
   one record every `--gap-us`, then one read of page 0 (SSDSim divides by its count of
   read requests when it prints its statistics, and ends with a SIGFPE on a trace
   without one). SSDSim's reader drops a file's last record (it stops when reading a
   line meets the end of the file, and its readme wants no newline after the last), so
   one more write follows that neither simulator serves: zombiesim stops before it
   (`--limit`). zombiesim reads the same file as a DiskSim trace (`--format disksim
   --time-scale 1e-6`: SSDSim's first column is nanoseconds, DiskSim's milliseconds),
   parsing the text on every run (`--trace-cache off`), as SSDSim does;
2. writes SSDSim's parameter file and zombiesim's TOML for one device: 4 channels x 2
   chips x 2 dies x 2 planes x 1,152 blocks x 64 pages (SSDSim's most per block) of
   4 KiB, 9 GiB of flash. SSDSim's `overprovide` 0.07 leaves 2,194,145 logical pages
   (`(int)(physical sectors x (1 - 0.07))`, in single precision, is that many pages
   and 2 sectors); zombiesim's over-provisioning is set to give the same figure. Page
   mapping, no DRAM buffer, no advanced commands (no copyback, two-plane or interleave);
   SSDSim's fully dynamic allocation, which with the device idle at every arrival takes
   the channels, chips, dies and planes in turn (zombiesim: `allocation = "stripe"`);
   greedy GC per plane, queued below `--gc-threshold` free blocks (SSDSim: free pages
   below that many blocks' worth, its `gc hard threshold`), copies written to the
   plane's one open block (zombiesim: `gc_frontier = "shared"`); no preconditioning in
   zombiesim (the fill is in the trace). Both are given SSDSim's stock latencies (read
   20 us, program 200 us, erase 1.5 ms, 25 ns per byte on the channel: 40 MB/s), planes
   of a die not in parallel, and SSDSim's request queue of 5 (`interface.queue_depth`);
3. runs SSDSim, zombiesim in counting mode and zombiesim with its timing model, each as
   a whole process, `--runs` times, the order turned round on every other run, and
   prints the wall-time medians, the median of the per-run ratios SSDSim / zombiesim,
   and each simulator's flash programs, erases and WAF (SSDSim's `program count` less
   the page it writes before the simulation for the trace's read).

SSDSim runs in the work folder (it reads `page.parameters` there and asks for the
trace's name on standard input); its per-request log `ex.out` and its `statistic10.dat`
are written there as always (`--discard-ssdsim-log`: `ex.out` is a link to /dev/null).

    python benches/peers/ssdsim.py --ssdsim PATH/TO/ssd
    python benches/peers/ssdsim.py --ssdsim PATH/TO/ssd --writes 200000 --runs 1

What the figures are and how the two differ: docs/performance.md, "Beside SSDSim".
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The machine line is the benchmarks' own (benches/bench.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import cpu_model  # noqa: E402

# WAF over the whole trace and after the fill, as the MQSim recipe computes them.
from mqsim import add_trace_options, add_waf, print_rows  # noqa: E402

SECTOR = 512
PAGE_SIZE = 4096
SECTORS_PER_PAGE = PAGE_SIZE // SECTOR

CHANNELS = 4
CHIPS_PER_CHANNEL = 2
DIES_PER_CHIP = 2
PLANES_PER_DIE = 2
BLOCKS_PER_PLANE = 1152
# SSDSim stops (an endless loop after "the last write page larger than 64") past page 64
# of a block.
PAGES_PER_BLOCK = 64
PLANES = CHANNELS * CHIPS_PER_CHANNEL * DIES_PER_CHIP * PLANES_PER_DIE
PHYSICAL_PAGES = PLANES * BLOCKS_PER_PLANE * PAGES_PER_BLOCK
# SSDSim's spare share of the physical sectors (its `overprovide`).
SSDSIM_OVERPROVIDE = 0.07
LOGICAL_PAGES = 2_194_145

DEFAULT_WRITES = 2_000_000
SENTINEL_DELAY_NS = 10**15  # 11.6 days
DEFAULT_GC_THRESHOLD = 4

# SSDSim's stock timings (its page.parameters), given to both.
READ_NS = 20_000
PROGRAM_NS = 200_000
ERASE_NS = 1_500_000
BYTE_NS = 25  # t_WC and t_RC: one byte on the channel
QUEUE_DEPTH = 5  # SSDSim's request queue (queue_length)


def f32(x: float) -> float:
    """x rounded to single precision, as SSDSim's float parameters and products are."""
    return struct.unpack("f", struct.pack("f", x))[0]


def ssdsim_logical_sectors() -> int:
    """SSDSim's largest sector plus one: `(int)(sectors x (1 - overprovide))` in float."""
    return int(f32(f32(PHYSICAL_PAGES * SECTORS_PER_PAGE) * f32(1 - f32(SSDSIM_OVERPROVIDE))))


def zombiesim_op() -> float:
    """zombiesim's over-provisioning (physical / logical - 1) giving LOGICAL_PAGES: half a
    page above it, so that floor(physical / (1 + op)) is it."""
    return PHYSICAL_PAGES / (LOGICAL_PAGES + 0.5) - 1.0


def write_trace(path: Path, writes: int, gap_ns: int, seed: int) -> int:
    """The fill, the random writes, one read and the record SSDSim drops; records served."""
    rng = random.Random(seed)
    spp = SECTORS_PER_PAGE

    def records():
        for lpn in range(LOGICAL_PAGES):
            yield lpn, 0
        for _ in range(writes):
            yield rng.randrange(LOGICAL_PAGES), 0
        # SSDSim divides by its count of read requests when it prints its statistics.
        yield 0, 1

    n = 0
    with path.open("w") as f:
        lines = []
        for n, (lpn, ope) in enumerate(records(), start=1):
            lines.append(f"{n * gap_ns} 0 {lpn * spp} {spp} {ope}\n")
            if len(lines) == 65536:
                f.writelines(lines)
                lines.clear()
        f.writelines(lines)
        # Read by SSDSim's reader but not served (zombiesim's --limit leaves it out). Once
        # it has read it SSDSim no longer moves its clock, so it comes long after the rest:
        # SSDSim finishes every request before it (and does not spin forever on those
        # still queued when the trace's writes come faster than its device). No newline
        # after it (SSDSim's readme).
        f.write(f"{n * gap_ns + SENTINEL_DELAY_NS} 0 0 {spp} 0")
    return n


def ssdsim_parameters(gc_threshold: int) -> str:
    # GC is queued on a plane when its free pages drop below blocks x pages x this
    # (`gc hard threshold`; `gc threshold` is read only with active writes, off here):
    # half a page below gc_threshold blocks, so that the float product compares as that.
    frac = (gc_threshold * PAGES_PER_BLOCK - 0.5) / (BLOCKS_PER_PLANE * PAGES_PER_BLOCK)
    chips = "".join(f"chip number[{c}] = {CHIPS_PER_CHANNEL};\n" for c in range(CHANNELS))
    timings = {
        "t_PROG": PROGRAM_NS,
        "t_DBSY": 50,
        "t_BERS": ERASE_NS,
        "t_CLS": 12,
        "t_CLH": 5,
        "t_CS": 20,
        "t_CH": 5,
        "t_WP": 12,
        "t_ALS": 12,
        "t_ALH": 5,
        "t_DS": 12,
        "t_DH": 5,
        "t_WC": BYTE_NS,
        "t_WH": 10,
        "t_ADL": 70,
        "t_R": READ_NS,
        "t_AR": 10,
        "t_CLR": 10,
        "t_RR": 20,
        "t_RP": 12,
        "t_WB": 100,
        "t_RC": BYTE_NS,
        "t_REA": 30,
        "t_CEA": 45,
        "t_RHZ": 100,
        "t_CHZ": 30,
        "t_RHOH": 15,
        "t_RLOH": 5,
        "t_COH": 15,
        "t_REH": 10,
        "t_IR": 0,
        "t_RHW": 100,
        "t_WHR": 60,
        "t_RST": 5000,
    }
    rest = {
        "erase limit": 100000,
        "flash operating current": 25000.0,
        "flash supply voltage": 3.3,
        "dram active current": 125000,
        "dram standby current": 50000,
        "dram refresh current": 5000,
        "dram voltage": 3.3,
        "address mapping": 1,  # page mapping
        "wear leveling": 0,
        "gc": 1,
        "overprovide": SSDSIM_OVERPROVIDE,
        "gc threshold": f"{frac:.9f}",
        "buffer management": 0,
        "scheduling algorithm": 1,  # FCFS
        "gc hard threshold": f"{frac:.9f}",
        "allocation": 0,  # dynamic
        "static_allocation": 0,
        "dynamic_allocation": 0,  # channel, chip, die and plane all dynamic
        "advanced command": 0,  # none: no copyback, two-plane or interleave
        "advanced command priority": 0,
        "greed CB command": 0,
        "greed MPW command": 0,
        "aged": 0,
        "aged ratio": 0.7,
        "queue_length": QUEUE_DEPTH,
    }
    return (
        "# written by zombiesim's benches/peers/ssdsim.py\n"
        "dram capacity = 0;\n" + chips + f"channel number = {CHANNELS};\n"  # no write buffer
        f"chip number = {CHANNELS * CHIPS_PER_CHANNEL};\n"
        f"die number = {DIES_PER_CHIP};\n"
        f"plane number = {PLANES_PER_DIE};\n"
        f"block number = {BLOCKS_PER_PLANE};\n"
        f"page number = {PAGES_PER_BLOCK};\n"
        f"subpage page = {SECTORS_PER_PAGE};\n"
        f"page capacity = {PAGE_SIZE};\n"
        f"subpage capacity = {SECTOR};\n"
        + "".join(f"{k} = {v};\n" for k, v in timings.items())
        + "".join(f"{k} = {v};\n" for k, v in rest.items())
    )


def zombiesim_toml(gc_threshold: int, timed: bool) -> str:
    interface = f"\n[interface]\nqueue_depth = {QUEUE_DEPTH}\n" if timed else ""
    return f"""# The device SSDSim is given (benches/peers/ssdsim.py)
[flash]
channels = {CHANNELS}
chips_per_channel = {CHIPS_PER_CHANNEL}
dies_per_chip = {DIES_PER_CHIP}
planes_per_die = {PLANES_PER_DIE}
blocks_per_plane = {BLOCKS_PER_PLANE}
pages_per_block = {PAGES_PER_BLOCK}
page_size = {PAGE_SIZE}

[ftl]
kind = "page"
over_provisioning = {zombiesim_op()!r}
gc_frontier = "shared"
allocation = "stripe"

[gc]
policy = "greedy"
scope = "plane"
low_watermark = {gc_threshold}
high_watermark = {gc_threshold}

[timing]
enabled = {str(timed).lower()}
read_us = {READ_NS / 1000}
program_us = {PROGRAM_NS / 1000}
erase_us = {ERASE_NS / 1000}
channel_mb_s = {1000.0 / BYTE_NS}
multi_plane = false
scheduler = "fifo"
{interface}
[precondition]
fill = false
random_drive_writes = 0.0
"""


def timed_process(
    cmd: list[str], cwd: Path | None, stdin: bytes | None, log: Path, ok: int = 0
) -> dict:
    """Run one process to its end: wall seconds, its CPU seconds and its peak RSS."""
    with log.open("wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(
            cmd,
            cwd=cwd,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        if stdin is not None:
            p.stdin.write(stdin)
            p.stdin.close()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != ok:
        raise SystemExit(f"{cmd[0]} exited with {p.returncode}: see {log}")
    return {
        "wall_s": wall,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "max_rss_mib": ru.ru_maxrss / 1024,
    }


def stat(text: str, name: str) -> int:
    m = re.search(rf"^{re.escape(name)}:\s*(-?\d+)", text, re.M)
    if m is None:
        raise SystemExit(f"SSDSim's statistic10.dat has no {name!r}")
    return int(m.group(1))


def run_ssdsim(exe: Path, work: Path, trace: Path, discard_log: bool) -> dict:
    stats = work / "statistic10.dat"
    stats.unlink(missing_ok=True)
    ex_out = work / "ex.out"
    ex_out.unlink(missing_ok=True)
    if discard_log:
        ex_out.symlink_to(os.devnull)
    log = work / "ssdsim.log"
    # It reads the trace's name from standard input; its main returns 1 when it is done.
    r = timed_process([str(exe)], work, f"{trace.name}\n".encode(), log, ok=1)
    if not stats.exists() or "the simulation is completed" not in log.read_text(errors="replace"):
        raise SystemExit(f"SSDSim did not finish: see {log}")
    text = stats.read_text(errors="replace")
    host = stat(text, "write request count")
    # One flash read, the trace's; none for partly overwritten pages (all writes are whole).
    reads = stat(text, "read count"), stat(text, "read request count")
    if reads != (1, 1) or stat(text, "the read operation leaded by un-covered update count"):
        raise SystemExit("SSDSim read more than the trace's one page: see statistic10.dat")
    # Its `program count` includes the page it wrote for the read before the simulation
    # (SSDSim writes every page a trace reads first; the fill overwrites it).
    programs = stat(text, "program count") - 1
    # Every request is one page: the programs beyond the requests are GC copies.
    r.update(
        {
            "host_writes": host,
            "programs": programs,
            "erases": stat(text, "erase count"),
            "direct_erases": stat(text, "direct erase count"),
            "gc_copies": programs - host,
        }
    )
    return r


def run_zombiesim(exe: str, work: Path, trace: Path, config: Path, records: int) -> dict:
    out = work / f"{config.stem}.json"
    out.unlink(missing_ok=True)
    cmd = [exe, "run", "--config", str(config), "--trace", str(trace), "--format", "disksim"]
    cmd += ["--time-scale", "1e-6", "--limit", str(records), "--trace-cache", "off"]
    cmd += ["--json", str(out), "--quiet"]
    r = timed_process(cmd, None, None, work / f"{config.stem}.log")
    rep = json.loads(out.read_text())
    r.update(
        {
            "host_writes": rep["host"]["write_pages"],
            "programs": rep["flash"]["programs"],
            "erases": rep["flash"]["erases"],
            "gc_victims": rep["gc"]["victims"],
            "gc_copies": rep["gc"]["pages_copied"],
            "logical_pages": rep["device"]["logical_pages"],
            # Its own count, from the reading of the configuration to the report.
            "in_process_wall_s": rep["run"]["wall_s"],
        }
    )
    return r


COUNT_ROWS = [
    ("host page writes", "host_writes", "{:,}"),
    ("flash programs", "programs", "{:,}"),
    ("GC page copies", "gc_copies", "{:,}"),
    ("erases", "erases", "{:,}"),
    ("WAF (whole trace)", "waf", "{:.4f}"),
    ("WAF after the fill", "waf_after_fill", "{:.4f}"),
    ("peak RSS (MiB)", "max_rss_mib", "{:.1f}"),
]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--ssdsim", type=Path, required=True, help="a built SSDSim executable")
    p.add_argument(
        "--zombiesim",
        default=shutil.which("zombiesim") or str(Path(sys.executable).parent / "zombiesim"),
        help="the zombiesim CLI (default: the one on PATH, else beside this Python)",
    )
    p.add_argument("--runs", type=int, default=3, help="paired runs (default %(default)s)")
    p.add_argument(
        "--writes",
        type=int,
        default=DEFAULT_WRITES,
        help="random page writes after the fill (default %(default)s)",
    )
    p.add_argument(
        "--gc-threshold",
        type=int,
        default=DEFAULT_GC_THRESHOLD,
        help="GC starts below this many free blocks in a plane (default %(default)s)",
    )
    add_trace_options(p)
    p.add_argument(
        "--discard-ssdsim-log",
        action="store_true",
        help="SSDSim's per-request log (ex.out, a line and a flush per request) to "
        "/dev/null through a symbolic link, not the disk",
    )
    p.add_argument(
        "--workdir", type=Path, help="trace, configurations and outputs (default: a new temp dir)"
    )
    p.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = p.parse_args(argv)

    if not os.access(args.ssdsim, os.X_OK):
        p.error(f"--ssdsim: {args.ssdsim} is not an executable")
    ssdsim = args.ssdsim.resolve()
    if args.runs < 1 or args.writes < 1:
        p.error("--runs and --writes must be at least 1")
    if not 2 <= args.gc_threshold < BLOCKS_PER_PLANE // 16:
        p.error("--gc-threshold: 2 to a few dozen blocks")
    spare = ssdsim_logical_sectors() - LOGICAL_PAGES * SECTORS_PER_PAGE
    if not 0 <= spare < SECTORS_PER_PAGE:
        raise SystemExit(f"SSDSim's logical capacity is not {LOGICAL_PAGES} pages")

    work = args.workdir or Path(tempfile.mkdtemp(prefix="zombiesim-ssdsim-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "page.parameters").write_text(ssdsim_parameters(args.gc_threshold))
    configs = {"counting": work / "zombiesim-counting.toml", "timed": work / "zombiesim-timed.toml"}
    for mode, path in configs.items():
        path.write_text(zombiesim_toml(args.gc_threshold, timed=mode == "timed"))
    trace = work / "trace.ascii"
    records = write_trace(trace, args.writes, args.gap_us * 1000, args.seed)

    print(
        f"device: {CHANNELS} channels x {CHIPS_PER_CHANNEL} chips x {DIES_PER_CHIP} dies x "
        f"{PLANES_PER_DIE} planes x {BLOCKS_PER_PLANE} blocks x {PAGES_PER_BLOCK} pages x "
        f"{PAGE_SIZE} B = {PHYSICAL_PAGES:,} pages, {LOGICAL_PAGES:,} logical "
        f"(SSDSim overprovide {SSDSIM_OVERPROVIDE}, zombiesim OP {zombiesim_op():.6f}); "
        f"GC below {args.gc_threshold} free blocks per plane"
    )
    print(
        f"trace: {LOGICAL_PAGES:,} fill writes, then {args.writes:,} uniform random page "
        f"writes (seed {args.seed}), one every {args.gap_us} us"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs, load {load}; work folder {work}")
    if args.discard_ssdsim_log:
        print("SSDSim's per-request log goes to /dev/null")

    runners = {
        "SSDSim": lambda: run_ssdsim(ssdsim, work, trace, args.discard_ssdsim_log),
        "zombiesim counting": lambda: run_zombiesim(
            args.zombiesim, work, trace, configs["counting"], records
        ),
        "zombiesim timed": lambda: run_zombiesim(
            args.zombiesim, work, trace, configs["timed"], records
        ),
    }
    names = list(runners)
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for i in range(args.runs):
        order = names if i % 2 == 0 else names[::-1]
        for n in order:
            r = runners[n]()
            add_waf(r, LOGICAL_PAGES)
            runs[n].append(r)
            print(f"  run {i + 1}: {n} {r['wall_s']:.1f} s", flush=True)

    for n in names:
        counts = {(r["programs"], r["erases"], r["host_writes"]) for r in runs[n]}
        if len(counts) > 1:
            print(f"warning: {n}'s counts differ between runs: {sorted(counts)}")
        if runs[n][-1]["host_writes"] != records - 1:
            print(f"warning: {n} served {runs[n][-1]['host_writes']:,} of {records - 1:,} writes")
    lp = runs["zombiesim counting"][-1]["logical_pages"]
    if lp != LOGICAL_PAGES:
        print(f"warning: zombiesim has {lp:,} logical pages, SSDSim {LOGICAL_PAGES:,}")

    def ratios(n: str) -> list[float]:
        return [a["wall_s"] / b["wall_s"] for a, b in zip(runs["SSDSim"], runs[n], strict=True)]

    summary = {
        n: {
            "wall_s_median": statistics.median(r["wall_s"] for r in runs[n]),
            "cpu_s_median": statistics.median(r["cpu_s"] for r in runs[n]),
            "wall_s_runs": [r["wall_s"] for r in runs[n]],
            **{k: v for k, v in runs[n][-1].items() if k not in ("wall_s", "cpu_s")},
        }
        for n in names
    }
    for n in names[1:]:
        summary[n]["in_process_wall_s_median"] = statistics.median(
            r["in_process_wall_s"] for r in runs[n]
        )
        del summary[n]["in_process_wall_s"]
        summary[n]["ssdsim_ratio_runs"] = ratios(n)
        summary[n]["ssdsim_ratio_median"] = statistics.median(ratios(n))

    print(f"\n{args.runs} paired run(s), whole processes")
    head = ["", *names]
    body = [
        ["wall time, median (s)", *(f"{summary[n]['wall_s_median']:.2f}" for n in names)],
        [
            "wall time, runs (s)",
            *(" ".join(f"{w:.1f}" for w in summary[n]["wall_s_runs"]) for n in names),
        ],
        ["CPU time, median (s)", *(f"{summary[n]['cpu_s_median']:.2f}" for n in names)],
        [
            "zombiesim's own wall_s, median",
            "",
            *(f"{summary[n]['in_process_wall_s_median']:.2f}" for n in names[1:]),
        ],
        [
            "SSDSim / this, median of runs",
            "",
            *(f"{summary[n]['ssdsim_ratio_median']:.1f}x" for n in names[1:]),
        ],
        *[[label, *(fmt.format(summary[n][key]) for n in names)] for label, key, fmt in COUNT_ROWS],
    ]
    print_rows(head, body)
    print(
        f"  SSDSim: {summary['SSDSim']['direct_erases']:,} of its erases took blocks "
        "left with no valid page (no copies)"
    )
    if args.json:
        settings = {k: v for k, v in vars(args).items() if k not in ("json", "workdir")}
        settings = {k: str(v) if isinstance(v, Path) else v for k, v in settings.items()}
        doc = {
            "settings": settings,
            "machine": cpu_model(),
            "cpus": os.cpu_count(),
            "load_before": load,
            "results": summary,
        }
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
