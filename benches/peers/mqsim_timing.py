"""The MQSim recipe's (mqsim.py) timing mode (`--timing`): request latencies of the same
requests in both, MQSim's per-command host-interface and command-cycle figures for
zombiesim, the timed cases (a)-(d) and their traces, the runs, the latency tables and
`main_timing`, which runs them."""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

# The machine line is the benchmarks' own (benches/bench.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import cpu_model  # noqa: E402

# The recipe's other parts, beside this file (mqsim.py puts this folder on the path).
from mqsim_compare import print_rows, write_json  # noqa: E402
from mqsim_inputs import Device, mqsim_device_xml, mqsim_workload_xml, zombiesim_toml  # noqa: E402

# MQSim's NVMe host interface and ONFI bus, as its source charges them per 4 KiB
# command with the default PCIe settings (1 GB/s per lane, 4 lanes; TLPs of at most 128
# bytes payload plus 28 bytes of header, link and framing overhead; every message rounded
# up to whole 4-byte lane cycles, whole ns). docs/validation.md gives the formulas with
# their places in MQSim's source. A read takes 1.300 us of PCIe and 0.310 us of command
# cycles on top of tR and the page transfer (38.898 us in all), a write 1.308 us and
# 0.361 us (213.957 us).
MQSIM_SUBMIT_US = 0.041  # SQ tail doorbell 8 ns, SQE read request 8 ns, 72-byte SQE 25 ns
MQSIM_COMPLETE_US = 0.011  # the 16-byte CQE (a write's data read request, 8 ns, is left out)
MQSIM_LINK_MB_S = 4096 / 1.248  # 4 KiB in 32 TLPs of 156 bytes, 4 bytes per ns: 1,248 ns
MQSIM_COMMAND_US = 0.31  # a read's command and address cycles (290 ns) and ready signal (20)

# The keys zombiesim takes those figures in, where it has them (`zombiesim run
# --print-config` lists what it has). Without them zombiesim charges no host interface
# and no command cycles, and the table shows MQSim's ~1.6 us per command as a difference.
HOST_OVERHEAD_KEYS = {
    ("interface", "submit_us"): MQSIM_SUBMIT_US,
    ("interface", "complete_us"): MQSIM_COMPLETE_US,
    ("interface", "link_mb_s"): MQSIM_LINK_MB_S,
    ("timing", "command_us"): MQSIM_COMMAND_US,
}

# Trace records of the timing mode: (arrival in ns, logical page, 1 = read / 0 = write).
Record = tuple[int, int, int]


@dataclass(frozen=True)
class TimedCase:
    """One timed case: a warm-up MQSim replays from its trace and zombiesim gets as
    preconditioning (so that its latency figures cover the measured requests only),
    then the measured requests."""

    key: str
    title: str
    fill: bool
    random_drive_writes: float
    measured: list[Record]


def poisson_times(n: int, iops: float, rng: random.Random) -> list[int]:
    """Arrival times in ns of a Poisson stream from 0: with evenly spaced arrivals a
    device below saturation queues nothing, and the rates would all show the bare
    service time."""
    t, out = 0.0, []
    for _ in range(n):
        out.append(round(t))
        t += rng.expovariate(iops) * 1e9
    return out


def timed_cases(dev: Device, args: argparse.Namespace) -> list[TimedCase]:
    logical = dev.mqsim_logical_pages()
    n = args.requests

    def rng(key: str) -> random.Random:
        """Each case's own stream: a case's trace does not depend on the others run."""
        return random.Random(f"{args.seed}-{key}")

    r = rng("reads")
    cases = [
        TimedCase(
            "reads",
            f"(a) random 4 KiB reads {args.read_gap_us} us apart, filled device",
            True,
            0.0,
            [(i * args.read_gap_us * 1000, r.randrange(logical), 1) for i in range(n)],
        )
    ]
    # Each rate starts from an empty device, where GC starts only once nearly every
    # block has been written: far more pages than the writes of one rate, so no GC.
    for iops in args.write_iops:
        r = rng(f"writes-{iops}")
        times = poisson_times(n, iops, r)
        cases.append(
            TimedCase(
                f"writes-{iops}",
                f"(b) random 4 KiB writes, Poisson {iops:,}/s, empty device",
                False,
                0.0,
                [(t, r.randrange(logical), 0) for t in times],
            )
        )
    r = rng("mixed")
    times = poisson_times(n, args.mixed_iops, r)
    cases.append(
        TimedCase(
            "mixed",
            f"(c) 70/30 random read/write, Poisson {args.mixed_iops:,}/s, after a fill and "
            f"{args.warmup_drive_writes} drive writes (GC running)",
            True,
            args.warmup_drive_writes,
            [(t, r.randrange(logical), int(r.random() < 0.7)) for t in times],
        )
    )
    cases.append(
        TimedCase(
            "fill",
            f"(d) sequential fill, 4 KiB writes {args.fill_gap_us} us apart, empty device",
            False,
            0.0,
            [(i * args.fill_gap_us * 1000, i, 0) for i in range(logical)],
        )
    )
    only = set(args.timed_cases.split(",")) if args.timed_cases else None
    return [c for c in cases if only is None or c.key.split("-")[0] in only]


def write_timed_traces(
    case: TimedCase, dev: Device, work: Path, warmup_gap_ns: int, drain_ns: int, seed: int
) -> tuple[Path, Path, int]:
    """MQSim's trace (warm-up, a pause, the measured requests) and zombiesim's (the
    measured requests from time 0); (MQSim's, zombiesim's, the measured start in ns).

    The pause lets MQSim finish the warm-up before the first measured arrival: it does
    no GC when idle, so the device enters the measured phase as zombiesim's counting
    preconditioning leaves it (the same fill and as many uniform random writes; the
    random addresses differ)."""
    spp = dev.sectors_per_page
    logical = dev.mqsim_logical_pages()
    rng = random.Random(seed + 1)
    mq, zs = work / f"{case.key}.mqsim.trace", work / f"{case.key}.zombiesim.trace"
    t = 0
    with mq.open("w") as f:
        warm = list(range(logical)) if case.fill else []
        warm += [rng.randrange(logical) for _ in range(round(case.random_drive_writes * logical))]
        for lpn in warm:
            t += warmup_gap_ns
            f.write(f"{t} 0 {lpn * spp} {spp} 0\n")
        start = t + drain_ns if warm else 0
        f.writelines(f"{start + at} 0 {lpn * spp} {spp} {rd}\n" for at, lpn, rd in case.measured)
    with zs.open("w") as f:
        f.writelines(f"{at} 0 {lpn * spp} {spp} {rd}\n" for at, lpn, rd in case.measured)
    return mq, zs, start


def summarize(lat_ns: list[int]) -> dict | None:
    """count, mean and nearest-rank percentiles in us (zombiesim's come from an HDR
    histogram of 3 significant digits)."""
    if not lat_ns:
        return None
    s = sorted(lat_ns)

    def pct(q: float) -> float:
        return s[max(0, math.ceil(q * len(s)) - 1)] / 1000

    return {
        "count": len(s),
        "mean_us": sum(s) / len(s) / 1000,
        "p50_us": pct(0.5),
        "p99_us": pct(0.99),
        "p999_us": pct(0.999),
    }


def run_mqsim_timed(
    exe: Path, dev: Device, work: Path, trace: Path, start_ns: int, n: int
) -> dict | None:
    """MQSim on one trace, with a build that logs every request (MQSIM_REQUEST_LOG);
    None when it stops with an error (a modified build may run out of free blocks)."""
    (work / "workload.xml").write_text(mqsim_workload_xml(dev, trace.name))
    log = work / f"{trace.stem}.requests"
    log.unlink(missing_ok=True)
    out = work / "mqsim.log"
    t0 = time.perf_counter()
    with out.open("w") as f:
        proc = subprocess.run(
            [str(exe), "-i", "ssdconfig.xml", "-w", "workload.xml"],
            cwd=work,
            stdin=subprocess.DEVNULL,
            stdout=f,
            stderr=subprocess.STDOUT,
            env={**os.environ, "MQSIM_REQUEST_LOG": str(log)},
        )
    wall = time.perf_counter() - t0
    errors = [ln for ln in out.read_text().splitlines() if "ERROR" in ln]
    if proc.returncode or errors:
        print(f"  {exe} stopped: {errors[-1] if errors else f'exit {proc.returncode}'}")
        return None
    if not log.exists():
        raise SystemExit(f"{exe} wrote no request log: it needs the logging change (--help)")
    lat: dict[int, list[int]] = {0: [], 1: []}
    last = start_ns
    with log.open() as f:
        for line in f:
            arrival, done, rd = (int(x) for x in line.split())
            if arrival >= start_ns:
                lat[rd].append(done - arrival)
                last = max(last, done)
    served = len(lat[0]) + len(lat[1])
    return {
        "read": summarize(lat[1]),
        "write": summarize(lat[0]),
        "iops": served / ((last - start_ns) / 1e9) if last > start_ns else 0.0,
        "unserved": n - served,
        "wall_s": wall,
    }


def run_zombiesim_timed(
    exe: str, work: Path, trace: Path, config: Path, tag: str, sets: list[str]
) -> dict:
    out = work / f"zombiesim-{tag}.json"
    cmd = [exe, "run", "--config", str(config), "--trace", str(trace), "--format", "disksim"]
    cmd += ["--time-scale", "1e-6", "--json", str(out), "--quiet"]
    for kv in sets:
        cmd += ["--set", kv]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    r = json.loads(out.read_text())

    def pick(d: dict | None) -> dict | None:
        if not d or not d["count"]:
            return None
        return {k: d[k] for k in ("count", "mean_us", "p50_us", "p99_us", "p999_us")}

    return {
        "read": pick(r["latency"]["read"]),
        "write": pick(r["latency"]["write"]),
        "iops": r["throughput"]["iops"],
        "unserved": 0,
        "wall_s": wall,
    }


def zombiesim_overheads(exe: str, mqsims: bool) -> tuple[str, str, list[str]]:
    """The keys of HOST_OVERHEAD_KEYS that zombiesim has, set to MQSim's figures (or,
    `mqsims` false, to 0: no such time at all, whatever zombiesim's defaults); ([timing]
    lines, [interface] lines, the keys it lacks)."""
    shown = tomllib.loads(
        subprocess.run(
            [exe, "run", "--set", "timing.enabled=true", "--print-config"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    lines: dict[str, list[str]] = {"timing": [], "interface": []}
    missing = []
    for (section, key), value in HOST_OVERHEAD_KEYS.items():
        if key in shown.get(section, {}):
            lines[section].append(f"{key} = {value if mqsims else 0.0!r}")
        else:
            missing.append(f"{section}.{key}")
    return "\n".join(lines["timing"]), "\n".join(lines["interface"]), missing


TIMED_ROWS = [("mean", "mean_us"), ("p50", "p50_us"), ("p99", "p99_us"), ("p99.9", "p999_us")]


def fmt_us(us: float) -> str:
    """Latencies in us below 10 ms, in ms above."""
    return f"{us:,.2f} us" if us < 10_000 else f"{us / 1000:,.1f} ms"


def print_timed(title: str, runs: dict) -> None:
    names = list(runs)
    base = names[0]
    print(f"\n{title}")
    head = ["", *names]
    for other in names[1:]:
        head.append(f"{other} / {base}")
    body = []
    for kind in ("read", "write"):
        if all(runs[n][kind] is None for n in names):
            continue
        for label, key in TIMED_ROWS:
            row = [f"{kind} {label}"]
            vals = [runs[n][kind][key] if runs[n][kind] else None for n in names]
            row += [fmt_us(v) if v is not None else "-" for v in vals]
            row += [f"{v / vals[0]:.3f}" if v is not None and vals[0] else "-" for v in vals[1:]]
            body.append(row)
    iops = [runs[n]["iops"] for n in names]
    body.append(["throughput (IOPS)", *(f"{v:,.0f}" for v in iops)])
    body[-1] += [f"{v / iops[0]:.3f}" if iops[0] else "-" for v in iops[1:]]
    body.append(["wall time (s)", *(f"{runs[n]['wall_s']:.1f}" for n in names)])
    body[-1] += [""] * (len(names) - 1)
    print_rows(head, body)
    for n in names:
        if runs[n]["unserved"]:
            print(f"  {n}: {runs[n]['unserved']:,} measured requests never served")


def main_timing(args: argparse.Namespace, dev: Device, mqsims: dict[str, Path]) -> int:
    """The timing mode: the four cases of timed_cases, MQSim beside zombiesim timed."""
    withheld = dev.mqsim_translation_blocks()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="zombiesim-mqsim-timing-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "ssdconfig.xml").write_text(mqsim_device_xml(dev, args.mqsim_set))
    timing_extra, interface_extra, missing = zombiesim_overheads(
        args.zombiesim, not args.no_host_overheads
    )
    # MQSim's IO_Queue_Depth; arrivals beyond it wait in the host, as in zombiesim's
    # open replay, and both count the wait in the latency.
    interface = f'[interface]\nqueue_depth = 1024\nreplay = "open"\n{interface_extra}\n'
    print(
        f"device: {dev.planes} plane(s) x {dev.blocks_per_plane} blocks x "
        f"{dev.pages_per_block} pages x {dev.page_size} B ({dev.mqsim_logical_pages():,} "
        f"logical pages), GC below {dev.gc_threshold_blocks} free blocks per plane"
    )
    for name, value in args.mqsim_set.items():
        print(f"MQSim: {name} = {value}")
    for kv in args.zombiesim_set:
        print(f"zombiesim: {kv}")
    if args.no_host_overheads:
        print("zombiesim: no host-interface or command-cycle time (--no-host-overheads)")
    if missing:
        print(f"zombiesim lacks {', '.join(missing)}: no such time in its runs")
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; work folder {work}")
    results = {}
    for case in timed_cases(dev, args):
        mq, zs, start = write_timed_traces(
            case, dev, work, args.warmup_gap_us * 1000, round(args.drain_s * 1e9), args.seed
        )
        n = len(case.measured)
        runs = {}
        for label, path in mqsims.items():
            r = run_mqsim_timed(path, dev, work, mq, start, n)
            if r is not None:
                runs[label] = r
        config = work / f"zombiesim-{case.key}.toml"
        config.write_text(
            zombiesim_toml(
                dev,
                withheld,
                timed=True,
                fill=case.fill,
                random_drive_writes=case.random_drive_writes,
                timing_extra=timing_extra,
                extra=interface,
            )
        )
        runs["zombiesim"] = run_zombiesim_timed(
            args.zombiesim, work, zs, config, case.key, args.zombiesim_set
        )
        results[case.key] = {"title": case.title, "requests": n, "runs": runs}
        print_timed(f"{case.title}: {n:,} requests", runs)
    write_json(args, results)
    return 0
