"""The performance benchmark: simulated flash programs per wall second and memory.

Runs fixed workloads on fixed devices (keep them unchanged so figures compare
across commits) through the Rust core alone (`examples/run_config`), each in a
fresh process so its peak resident memory can be read, and prints the figures
with the machine's CPU model.

    make bench            # builds, runs this, then `zombiesim validate --full`
    python benches/bench.py --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "examples" / "run_config"

# name, config file, workload, what the issue asks of it
CASES = [
    (
        "counting-16g greedy uniform 4KiB",
        "benches/configs/counting-16g.toml",
        "uniform:drive_writes=2",
        {"min_programs_per_s": 12e6, "max_bytes_per_page": 12.0},
    ),
]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run_once(config: str, workload: str) -> tuple[dict, float]:
    """Run the core once in a child process; return its report and peak RSS in bytes."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            [str(BINARY), str(ROOT / config), workload, "1"], stdout=out, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            sys.exit(f"bench: {config} {workload} failed: {proc.stderr.read().decode()}")
        out.seek(0)
        report = json.loads(out.read())
    return report, usage.ru_maxrss * 1024.0  # ru_maxrss is in KiB on Linux


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per case (median reported)")
    args = ap.parse_args()
    if not BINARY.exists():
        sys.exit(f"bench: {BINARY.relative_to(ROOT)} is missing; run `make bench`")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, {platform.system()}")
    failed = False
    for name, config, workload, targets in CASES:
        rates, host_rates, rss = [], [], []
        for _ in range(args.runs):
            report, peak = run_once(config, workload)
            wall = report["run"]["measured_wall_s"]
            rates.append(report["flash"]["programs"] / wall)
            host_rates.append(report["host"]["write_pages"] / wall)
            rss.append(peak)
        pages = report["device"]["physical_pages"]
        rate = statistics.median(rates)
        per_page = statistics.median(rss) / pages
        print(f"\n{name}  ({config}, {workload}, {args.runs} runs, medians)")
        print(f"  WAF (measured phase)       {report['waf']:.4f}")
        print(
            f"  flash programs / wall s    {rate / 1e6:.2f} M   (runs: "
            + ", ".join(f"{r / 1e6:.2f}" for r in rates)
            + ")"
        )
        print(f"  host page writes / wall s  {statistics.median(host_rates) / 1e6:.3f} M")
        print(
            f"  peak RSS                   {statistics.median(rss) / 2**20:.1f} MiB "
            f"= {per_page:.2f} bytes per physical page ({pages} pages)"
        )
        print(
            f"  simulator state            {report['device']['state_bytes'] / pages:.2f} "
            "bytes per physical page"
        )
        ok_rate = rate >= targets["min_programs_per_s"]
        ok_mem = per_page <= targets["max_bytes_per_page"]
        print(
            f"  target >= {targets['min_programs_per_s'] / 1e6:.0f} M programs/s: "
            f"{'met' if ok_rate else 'NOT met'};  <= {targets['max_bytes_per_page']:.0f} "
            f"bytes/page: {'met' if ok_mem else 'NOT met'}"
        )
        failed |= not (ok_rate and ok_mem)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
