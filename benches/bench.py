"""The performance benchmark: simulation speed and memory on fixed workloads.

Runs fixed workloads on fixed devices (keep them unchanged so figures compare
across commits) through the Rust core alone (`examples/run_config`), each in a
fresh process so its peak resident memory can be read, and prints median figures
with the machine's CPU model:

- counting-16g: counting mode, greedy, uniform random 4 KiB writes, 16 GiB logical,
  OP 7%: flash page programs per wall second, peak memory per physical page;
- timing-8x8: the same device with the NAND timing model on, 30/70 reads/writes,
  queue depth 32: host requests per wall second; timing-8x8-buffer: the same with a
  64 MiB device write buffer;
- replay: an MSR-format trace of 1 M and of 10 M records replayed on 1 GiB: records
  per second, and peak memory for both lengths (it must not grow with the trace); then
  the 10 M records converted to the native format (`zombiesim trace convert`, once);
  and the same traces through the trace path alone (`examples/trace_path`: read,
  parsed and remapped into requests, no device), to tell the trace's cost from the
  device's;
- notified: a synthetic notified trace (dirty events and writes, `trace generate-notified`)
  of 1 M and 10 M records on 1 GiB with z-greedy and piggybacked notifications: events
  per wall second (target >= 1 M) and peak memory for both lengths (must not grow);
- shadowgc: the ShadowGC preset scaled to 32 GiB with 128 MiB host and device write
  buffers, counting mode, a footprint workload whose writes hit the buffers: host
  requests per wall second for `ggc` and for `sgc`, and the ratio of their wall time
  per request (target: sgc at most 1.5x ggc);
- ftls: each FTL kind on a 4 GiB device (64-page blocks), counting mode, uniform random
  4 KiB writes: flash programs per wall second (target for DFTL and FAST: >= 3 M) and
  memory per physical page, peak RSS and the FTL's own state (DFTL's CMT aside; target
  <= 12 bytes);
- sweep: a 24-cell grid (4 GC policies x 6 over-provisioning ratios, cells of about 2 s)
  through `zombiesim sweep` on the local engine with 1 and with 2 workers, each into a
  fresh folder: the speed-up (target >= 1.8x on 2 cores) and the per-cell overhead, the
  wall time of the 1-worker sweep beyond the sum of its cells' own run times, per cell
  (process start, pool start, result writes, the table; target < 5% of a cell);
- fdp: the counting-16g device and workload with NVMe FDP on (two handles, reclaim units
  of one block on each of the 64 planes), and the same device page-mapped, paired run by
  run: flash programs per wall second of each and their ratio (target: FDP within 1.2x);
  then `kvcache` (two handles) on the FDP device;
- fs: `fs:postmark` with 8 VMs (1 GiB partitions) on 8 GiB of FAST flash with timing on,
  in `ordered` and `journal` modes: file-system operations per wall second (target:
  >= 200 K);
- shared: eight file-system runs (postmark and untar, 8 VMs, the four journaling modes)
  on one 2 GiB FAST device, through `zs.simulate_many` on one thread with its
  preconditioned device shared and without: the wall-time ratio, paired run by run
  (target <= 0.5), and the reports byte-identical;
- victim: victim policies written in Python (greedy, cost-benefit) against the built-in
  ones on two corpus captures, paired run by run: wall-time ratio and cost per call
  (target: cost-benefit within 3x; `bench_victim.py`).

    make bench            # builds, runs this, then `zombiesim validate --full`
    python benches/bench.py --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_victim import victim

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "examples" / "run_config"
#: The trace path alone: a trace read, parsed and remapped into requests, no device.
TRACE_PATH = ROOT / "target" / "release" / "examples" / "trace_path"
DATA = ROOT / "target" / "bench-data"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


#: What the bench binary reads from the environment beyond its arguments: no trace cache
#: and a reader thread unless a case says otherwise.
BINARY_ENV = ("ZOMBIESIM_TRACE_CACHE", "ZOMBIESIM_INLINE_TRACE")


def child_env(env: dict[str, str] | None) -> dict[str, str]:
    """This process's environment without BINARY_ENV, then `env`."""
    return {k: v for k, v in os.environ.items() if k not in BINARY_ENV} | (env or {})


def run_once(
    config: str, workload: str, sets: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> tuple[dict, float]:
    """Run the core once in a child process (`sets`: `key=value` overrides, `env`: the
    trace cache and inline parsing, see BINARY_ENV); return its report and peak RSS in
    bytes."""
    child = child_env(env)
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            [str(BINARY), str(ROOT / config), workload, "1", *sets],
            stdout=out,
            stderr=subprocess.PIPE,
            env=child,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"bench: {config} {workload} failed: {proc.stderr.read().decode()}")
        out.seek(0)
        report = json.loads(out.read())
    return report, usage.ru_maxrss * 1024.0  # ru_maxrss is in KiB on Linux


def runs(
    config: str,
    workload: str,
    n: int,
    sets: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> list[tuple[dict, float]]:
    return [run_once(config, workload, sets, env) for _ in range(n)]


def trace_path_rates(
    workload: str, logical_pages: int, n: int, env: dict[str, str] | None = None
) -> list[float]:
    """Records per wall second of the trace path alone (`examples/trace_path`: read,
    parse, remap, the requests counted, no device), `n` runs in fresh processes."""
    child = child_env(env)
    rates = []
    for _ in range(n):
        cmd = [str(TRACE_PATH), workload, str(logical_pages)]
        proc = subprocess.run(cmd, capture_output=True, env=child, check=False)
        if proc.returncode != 0:
            sys.exit(f"bench: trace_path {workload} failed: {proc.stderr.decode()}")
        out = json.loads(proc.stdout)
        rates.append(out["records"] / out["wall_s"])
    return rates


def med(values: list[float]) -> float:
    return statistics.median(values)


def fmt_runs(values: list[float], scale: float = 1e6) -> str:
    return ", ".join(f"{v / scale:.2f}" for v in values)


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def record_rates(results: list[tuple[dict, float]]) -> list[float]:
    """Trace records replayed per wall second of each run's measured phase."""
    return [r["trace"]["records"] / r["run"]["measured_wall_s"] for r, _ in results]


def goal(label: str, ok: bool) -> str:
    """A speed goal beyond the case's target: reported, never failing the bench."""
    return f"goal {label}: {'met' if ok else 'not yet'}"


def counting(n: int) -> bool:
    results = runs("benches/configs/counting-16g.toml", "uniform:drive_writes=2", n)
    rates = [r["flash"]["programs"] / r["run"]["measured_wall_s"] for r, _ in results]
    hosts = [r["host"]["write_pages"] / r["run"]["measured_wall_s"] for r, _ in results]
    report = results[-1][0]
    pages = report["device"]["physical_pages"]
    per_page = med([rss for _, rss in results]) / pages
    print("\ncounting-16g: greedy, uniform random 4 KiB writes, 16 GiB logical, OP 7%")
    print(f"  WAF (measured phase)       {report['waf']:.4f}")
    print(f"  flash programs / wall s    {med(rates) / 1e6:.2f} M   (runs: {fmt_runs(rates)})")
    print(f"  host page writes / wall s  {med(hosts) / 1e6:.3f} M")
    print(
        f"  peak RSS                   {per_page * pages / 2**20:.1f} MiB = {per_page:.2f} "
        f"bytes per physical page ({pages} pages)"
    )
    ok_rate, ok_mem = med(rates) >= 12e6, per_page <= 12.0
    print(f"  target >= 12 M programs/s: {verdict(ok_rate)};  <= 12 bytes/page: {verdict(ok_mem)}")
    print(f"  {goal('>= 40 M programs/s', med(rates) >= 40e6)}")
    return ok_rate and ok_mem


def timing(n: int, config: str = "timing-8x8", title: str = "") -> bool:
    results = runs(f"benches/configs/{config}.toml", "uniform:requests=4000000,read=0.3", n)
    rates = [r["host"]["requests"] / r["run"]["measured_wall_s"] for r, _ in results]
    report = results[-1][0]
    lat = report["latency"]
    print(f"\n{config}: timing on, 8 x 8, OP 7%, uniform 4 KiB 30/70 reads/writes, QD 32{title}")
    print(f"  host requests / wall s     {med(rates) / 1e6:.2f} M   (runs: {fmt_runs(rates)})")
    print(
        f"  WAF {report['waf']:.3f}; simulated {report['elapsed_s']:.1f} s, "
        f"{report['throughput']['iops']:.0f} IOPS; read p50/p99 {lat['read']['p50_us']:.0f}/"
        f"{lat['read']['p99_us']:.0f} us, write p50/p99 {lat['write']['p50_us']:.0f}/"
        f"{lat['write']['p99_us']:.0f} us"
    )
    buffer = report.get("buffer")
    if buffer is not None:
        reads = buffer["read_hits"] + buffer["read_misses"]
        writes = buffer["write_hits"] + buffer["write_misses"]
        print(
            f"  buffer: read hits {buffer['read_hits'] / max(reads, 1) * 100:.1f}%, "
            f"write hits {buffer['write_hits'] / max(writes, 1) * 100:.1f}%, "
            f"{buffer['evictions']} evictions"
        )
    ok = med(rates) >= 1e6
    reach = goal(">= 3 M requests/s", med(rates) >= 3e6)
    print(f"  target >= 1 M requests/s: {verdict(ok)};  {reach}")
    return ok


def timing_buffer(n: int) -> bool:
    return timing(n, "timing-8x8-buffer", ", 64 MiB write buffer")


def msr_trace(records: int) -> Path:
    """An MSR-format trace of `records` 4 KiB-aligned requests over 16 GiB (made once)."""
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"msr-{records // 1_000_000}m.csv"
    if path.exists():
        return path
    rng = random.Random(7)
    tmp = path.with_suffix(".tmp")
    t = 128166372003061629
    with open(tmp, "w") as f:
        chunk = []
        for i in range(records):
            t += rng.randrange(1, 20_000)
            op = "Read" if rng.random() < 0.3 else "Write"
            offset = rng.randrange(0, 1 << 22) * 4096
            size = 4096 * rng.choice((1, 1, 1, 2, 4, 16))
            chunk.append(f"{t},bench,0,{op},{offset},{size},0\n")
            if len(chunk) == 100_000 or i == records - 1:
                f.write("".join(chunk))
                chunk.clear()
    os.replace(tmp, path)
    return path


def native_trace(records: int) -> Path:
    """The MSR bench trace of `records` records converted to the native format (once)."""
    path = DATA / f"msr-{records // 1_000_000}m.native"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        cli = Path(sys.executable).parent / "zombiesim"
        cmd = [str(cli), "trace", "convert", "--from", "msr", "--to", "native"]
        subprocess.run([*cmd, "--quiet", "--output", str(tmp), str(msr_trace(records))], check=True)
        os.replace(tmp, path)
    return path


def replay(n: int) -> bool:
    print("\nreplay: MSR-format trace on 1 GiB, counting mode, modulo remapping")
    peaks = {}
    rate_10m = 0.0
    for records in (1_000_000, 10_000_000):
        path = msr_trace(records)
        results = runs("benches/configs/replay-1g.toml", f"trace:msr:modulo:{path}", n)
        rates = record_rates(results)
        peaks[records] = med([rss for _, rss in results])
        rate_10m = med(rates)
        print(
            f"  {records / 1e6:>4.0f} M records: {med(rates) / 1e6:.2f} M records / wall s, "
            f"peak RSS {peaks[records] / 2**20:.1f} MiB"
        )
    growth = peaks[10_000_000] / peaks[1_000_000] - 1
    ok = growth < 0.10
    print(
        f"  memory growth 1 M -> 10 M records: {growth * 100:+.1f}% "
        f"(independent of trace length: {verdict(ok)})"
    )
    print(f"  {goal('>= 5 M records/s', rate_10m >= 5e6)}")
    results = runs(
        "benches/configs/replay-1g.toml", f"trace:native:modulo:{native_trace(10_000_000)}", n
    )
    rates = record_rates(results)
    print(
        f"  the same 10 M records, native format: {med(rates) / 1e6:.2f} M records / wall s "
        f"(runs: {fmt_runs(rates)});  {goal('>= 15 M records/s', med(rates) >= 15e6)}"
    )
    # A sweep worker parses on its own thread; the trace cache spares it the parsing from
    # the second replay of a trace on.
    workload = f"trace:msr:modulo:{msr_trace(10_000_000)}"
    inline = {"ZOMBIESIM_INLINE_TRACE": "1"}
    cache = DATA / "trace-cache"
    shutil.rmtree(cache, ignore_errors=True)
    cached = inline | {"ZOMBIESIM_TRACE_CACHE": str(cache)}
    first = run_once("benches/configs/replay-1g.toml", workload, (), cached)
    cases = (
        ("parsed inline", inline),
        ("from the trace cache, inline", cached),
        ("from the trace cache, reader thread", {"ZOMBIESIM_TRACE_CACHE": str(cache)}),
    )
    for label, env in cases:
        results = runs("benches/configs/replay-1g.toml", workload, n, (), env)
        rates = record_rates(results)
        print(
            f"  the 10 M MSR records {label}: {med(rates) / 1e6:.2f} M records / wall s "
            f"(runs: {fmt_runs(rates)})"
        )
    first_rate = record_rates([first])[0]
    print(f"  (the replay that filled the cache, inline: {first_rate / 1e6:.2f} M records / s)")
    # The same records without the device: what the trace itself costs. Each replayed
    # record above is 2.9 page writes at WAF 8 (about 23 flash programs), so the device,
    # not the trace, bounds those figures.
    logical = first[0]["device"]["logical_pages"]
    paths = (
        ("MSR text, reader thread", workload, None),
        ("MSR text, inline", workload, inline),
        ("native", f"trace:native:modulo:{native_trace(10_000_000)}", None),
    )
    for label, trace, env in paths:
        rates = trace_path_rates(trace, logical, n, env)
        print(
            f"  the trace path alone (no device), {label}: {med(rates) / 1e6:.2f} M records / "
            f"wall s (runs: {fmt_runs(rates)})"
        )
    shutil.rmtree(cache, ignore_errors=True)
    return ok


def notified_trace(records: int) -> Path:
    """A synthetic notified trace of `records` records over 200 000 pages (made once)."""
    import zombiesim as zs

    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"notified-{records // 1_000_000}m.zst"
    if not path.exists():
        zs.trace.generate_notified(path, pages=200_000, records=records, delay=5000, seed=2)
    return path


def notified(n: int) -> bool:
    print("\nnotified: notified trace (dirty events + writes) on 1 GiB, counting mode,")
    print("  z-greedy with piggybacked notifications")
    peaks, rates_1m = {}, []
    sets = ("notify.mode=piggyback", "gc.policy=z-greedy")
    for records in (1_000_000, 10_000_000):
        path = notified_trace(records)
        results = runs("benches/configs/replay-1g.toml", f"trace:native:none:{path}", n, sets)
        rates = record_rates(results)
        peaks[records] = med([rss for _, rss in results])
        if records == 1_000_000:
            rates_1m = rates
        print(
            f"  {records / 1e6:>4.0f} M events: {med(rates) / 1e6:.2f} M events / wall s "
            f"(runs: {fmt_runs(rates)}), peak RSS {peaks[records] / 2**20:.1f} MiB"
        )
    growth = peaks[10_000_000] / peaks[1_000_000] - 1
    ok_mem, ok_rate = growth < 0.10, med(rates_1m) >= 1e6
    print(
        f"  memory growth 1 M -> 10 M events: {growth * 100:+.1f}% (independent of length: "
        f"{verdict(ok_mem)}); target >= 1 M events / wall s: {verdict(ok_rate)}"
    )
    return ok_mem and ok_rate


def shadowgc(n: int) -> bool:
    workload = "footprint:growth=0.05,window=512MiB,read=0.2,drive_writes=2,iops=50000"
    print("\nshadowgc: 32 GiB, 128 MiB host + device buffers, counting mode, " + workload)
    per_request = {}
    for scheme in ("ggc", "sgc"):
        results = runs(f"benches/configs/shadowgc-32g-{scheme}.toml", workload, n)
        walls = [r["run"]["measured_wall_s"] / r["host"]["requests"] for r, _ in results]
        per_request[scheme] = med(walls)
        report = results[-1][0]
        states = report["gc"]["copied_by_state"]
        shadow = 1 - states["live"] / max(report["gc"]["pages_copied"], 1)
        print(
            f"  {scheme}: {1 / per_request[scheme] / 1e6:.2f} M host requests / wall s "
            f"(runs: {fmt_runs([1 / w for w in walls])}); WAF {report['waf']:.3f}, "
            f"GC latency {report['gc']['latency_s']:.0f} s, shadow share of copies "
            f"{shadow * 100:.1f}%"
        )
    ratio = per_request["sgc"] / per_request["ggc"]
    ok = ratio <= 1.5
    print(f"  sgc / ggc wall time per request {ratio:.2f} (target <= 1.5: {verdict(ok)})")
    return ok


#: Per FTL kind: the overrides and whether the speed target applies (004/002's FTLs the
#: issue names: DFTL and FAST >= 3 M flash programs per wall second).
FTL_CASES: dict[str, tuple[tuple[str, ...], bool]] = {
    "page": (("ftl.kind=page",), False),
    "dftl": (("ftl.kind=dftl", "ftl.cmt_entries=65536"), True),
    "superblock": (("ftl.kind=superblock",), False),
    "fast": (("ftl.kind=fast",), True),
    "block": (("ftl.kind=block",), False),
}
#: DFTL's cached mapping table, bytes per entry (its CMT is left out of the per-page
#: memory target).
CMT_ENTRY_BYTES = 30


def ftls(n: int) -> bool:
    workload = "uniform:drive_writes=1"
    print(f"\nftls: 4 GiB flash, 64 x 4 KiB pages per block, OP 7%, counting mode, {workload}")
    ok = True
    for kind, (sets, target) in FTL_CASES.items():
        results = runs("benches/configs/ftl-4g.toml", workload, n, sets)
        rates = [r["flash"]["programs"] / r["run"]["measured_wall_s"] for r, _ in results]
        report = results[-1][0]
        pages = report["device"]["physical_pages"]
        rss = med([rss for _, rss in results])
        cmt = 0
        if kind == "dftl":
            cmt = report["run"]["config"]["ftl"]["cmt_entries"] * CMT_ENTRY_BYTES
        per_page = (rss - cmt) / pages
        state = (report["device"]["state_bytes"] - cmt) / pages
        line = (
            f"  {kind:10s} WAF {report['waf']:7.3f}  {med(rates) / 1e6:6.2f} M programs/s "
            f"(runs: {fmt_runs(rates)})  peak RSS {per_page:5.2f} B/page, FTL state "
            f"{state:5.2f} B/page{' (CMT aside)' if cmt else ''}"
        )
        if target:
            met = med(rates) >= 3e6 and state <= 12.0
            ok = ok and met
            line += f"  target >= 3 M/s, <= 12 B/page: {verdict(met)}"
        print(line)
    return ok


def fs(n: int) -> bool:
    print("\nfs: 8 VMs x fs:postmark on 8 GiB FAST flash (64 x 2 KiB pages), timing on")
    ok = True
    for mode in ("ordered", "journal"):
        workload = f"fs:postmark,vms=8,journal={mode}"
        results = runs("benches/configs/fs-8g.toml", workload, n)
        rates = [r["fs"]["operations"] / r["run"]["measured_wall_s"] for r, _ in results]
        report = results[-1][0]
        met = med(rates) >= 200e3
        ok = ok and met
        print(
            f"  {mode:8s} {report['fs']['operations']:,} operations, "
            f"{med(rates) / 1e3:7.1f} K operations/s (runs: {fmt_runs(rates, 1e3)} K), "
            f"erases {report['flash']['erases']:,}  target >= 200 K/s: {verdict(met)}"
        )
    return ok


FDP_SETS = ("fdp.enabled=true", "fdp.handles=2", "ftl.allocation=stripe")


def paired(
    n: int,
    config: str,
    first: tuple[str, tuple[str, ...]],
    second: tuple[str, tuple[str, ...]],
    rate,
) -> tuple[list[float], list[float], float]:
    """`n` pairs of runs (workload, sets), back to back: each side's `rate(report)` and
    the median of the paired ratios (drift in the machine's speed moves both runs of a
    pair)."""
    a, b = [], []
    for _ in range(n):
        a.append(rate(run_once(config, *first)[0]))
        b.append(rate(run_once(config, *second)[0]))
    return a, b, med([x / y for x, y in zip(a, b, strict=True)])


def fdp(n: int) -> bool:
    config = "benches/configs/counting-16g.toml"
    workload = "uniform:drive_writes=2"
    print("\nfdp: counting-16g with FDP on (64-plane superblock RUs) against page-mapped")
    page, placed, ratio = paired(
        n,
        config,
        (workload, ()),
        (workload, FDP_SETS),
        lambda r: r["flash"]["programs"] / r["run"]["measured_wall_s"],
    )
    print(f"  page-mapped {med(page) / 1e6:6.2f} M programs/s (runs: {fmt_runs(page)})")
    print(f"  FDP         {med(placed) / 1e6:6.2f} M programs/s (runs: {fmt_runs(placed)})")
    ok = ratio <= 1.2
    print(f"  page-mapped / FDP {ratio:.2f}, median of pairs (target <= 1.2: {verdict(ok)})")
    results = runs(config, "kvcache:soc=0.04,soc_writes=0.3,drive_writes=2", n, FDP_SETS)
    rates = [r["flash"]["programs"] / r["run"]["measured_wall_s"] for r, _ in results]
    print(
        f"  kvcache on FDP: WAF {results[-1][0]['waf']:.3f}, {med(rates) / 1e6:.2f} M "
        f"programs/s (runs: {fmt_runs(rates)})"
    )
    return ok


def flows(n: int) -> bool:
    """Four flows against the same requests as one: the arbiter and per-flow queues are
    all a multi-queue run adds (both also run their flows alone, the same requests)."""
    config = "benches/configs/timing-8x8.toml"
    one = "flows:a=uniform:read=0.3:requests=400000:qd=32"
    four = ",".join(f"{x}=uniform:read=0.3:requests=100000:qd=8" for x in "abcd")
    print("\nflows: timing-8x8, 400,000 requests as one flow (QD 32) and as four (QD 8 each)")
    single, multi, ratio = paired(
        n,
        config,
        (one, ()),
        ("flows:" + four, ()),
        lambda r: r["host"]["requests"] / r["run"]["measured_wall_s"],
    )
    print(f"  one flow   {med(single) / 1e6:6.2f} M requests/s (runs: {fmt_runs(single)})")
    print(f"  four flows {med(multi) / 1e6:6.2f} M requests/s (runs: {fmt_runs(multi)})")
    ok = ratio <= 1.3
    print(f"  one / four {ratio:.2f}, median of pairs (target <= 1.3: {verdict(ok)})")
    return ok


SWEEP_GRID = """\
title = "bench"
preset = "default"
workload = "uniform:drive_writes=64"
[set]
"precondition.random_drive_writes" = 0.5
"precondition.steady_tolerance" = 0
[axes]
"gc.policy" = ["greedy", "cost-benefit", "fifo", "d-choices:8"]
"ftl.over_provisioning" = [0.07, 0.1, 0.14, 0.2, 0.25, 0.28]
"""


def sweep_once(grid: Path, jobs: int) -> tuple[float, list[float]]:
    """Wall seconds of one `zombiesim sweep` into a fresh folder, and each cell's own
    run time."""
    import time

    import zombiesim as zs

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results"
        cmd = [str(Path(sys.executable).parent / "zombiesim"), "sweep", str(grid)]
        cmd += ["--out", str(out), "--jobs", str(jobs), "--no-report", "--quiet"]
        started = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        cells = zs.load(out)["wall_s"].tolist()
    return wall, cells


def sweep(n: int) -> bool:
    print("\nsweep: 24 cells (4 policies x 6 OP ratios, 1 GiB, ~2 s each), local engine,")
    print("  1 worker vs 2 workers (one run each)")
    DATA.mkdir(parents=True, exist_ok=True)
    grid = DATA / "sweep-grid.toml"
    grid.write_text(SWEEP_GRID)
    one, cells = sweep_once(grid, 1)
    two, _ = sweep_once(grid, 2)
    speedup = one / two
    per_cell = statistics.mean(cells)
    overhead = (one - sum(cells)) / len(cells)
    share = overhead / per_cell
    ok_speed, ok_overhead = speedup >= 1.8, share < 0.05
    print(
        f"  1 worker {one:.1f} s, 2 workers {two:.1f} s: speed-up {speedup:.2f}x "
        f"(target >= 1.8x: {verdict(ok_speed)})"
    )
    print(
        f"  cells {per_cell:.2f} s on average; overhead {overhead * 1000:.0f} ms per cell = "
        f"{share * 100:.1f}% of a cell (target < 5%: {verdict(ok_overhead)})"
    )
    return ok_speed and ok_overhead


#: The eight runs of the `shared` case: vma-journaling's small scale, one FTL.
SHARED_FS = (
    "fs:postmark,files=125,transactions=1250,vms=8,partition=239MiB,memory=6MiB,journal_size=4MiB",
    "fs:untar,files=1562,dirs=94,cpu=100,vms=8,partition=239MiB,memory=6MiB,journal_size=4MiB",
)


def shared(n: int) -> bool:
    import time

    import zombiesim as zs

    print("\nshared: 8 fs runs on one 2 GiB FAST device, simulate_many on 1 thread,")
    print("  the preconditioned device shared vs each run ageing its own (paired)")
    device = zs.Config.preset("vma-journaling").override(
        {"flash.blocks_per_plane": 16384, "ftl.kind": "fast"}
    )
    runs = {
        f"{bench.split(',')[0]}/{mode}": (device, f"{bench},journal={mode}")
        for bench in SHARED_FS
        for mode in ("writeback", "ordered", "journal", "vma")
    }
    ratios, walls, same = [], [], True
    for _ in range(n):
        timed = {}
        for share in (True, False):
            started = time.perf_counter()
            timed[share] = zs.simulate_many(
                runs, jobs=1, reproducible=True, share_preconditioning=share
            )
            walls.append((share, time.perf_counter() - started))
        ratios.append(walls[-2][1] / walls[-1][1])
        same = same and all(timed[True][k].to_json() == timed[False][k].to_json() for k in runs)
    with_s = med([w for s, w in walls if s])
    without = med([w for s, w in walls if not s])
    ok = med(ratios) <= 0.5 and same
    print(
        f"  shared {with_s:.2f} s, each its own {without:.2f} s: ratio {med(ratios):.2f} "
        f"(runs: {', '.join(f'{r:.2f}' for r in ratios)}; target <= 0.5: {verdict(ok)}); "
        f"reports identical: {same}"
    )
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per case (median reported)")
    ap.add_argument(
        "--only",
        choices=(
            "counting",
            "timing",
            "timing-buffer",
            "replay",
            "notified",
            "shadowgc",
            "ftls",
            "fdp",
            "flows",
            "fs",
            "sweep",
            "shared",
            "victim",
        ),
        help="one case",
    )
    args = ap.parse_args()
    if not BINARY.exists():
        sys.exit(f"bench: {BINARY.relative_to(ROOT)} is missing; run `make bench`")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, {platform.system()}")
    cases = {
        "counting": counting,
        "timing": timing,
        "timing-buffer": timing_buffer,
        "replay": replay,
        "notified": notified,
        "shadowgc": shadowgc,
        "ftls": ftls,
        "fdp": fdp,
        "flows": flows,
        "fs": fs,
        "sweep": sweep,
        "shared": shared,
        "victim": victim,
    }
    chosen = [args.only] if args.only else list(cases)
    results = [cases[name](args.runs) for name in chosen]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
