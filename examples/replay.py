"""Replay the shipped MSR Cambridge excerpt under three GC policies and print their WAF
and write latency: the Python API on a real trace (docs/python.md).

    python examples/replay.py
"""

from pathlib import Path

import zombiesim as zs

TRACE = Path(__file__).resolve().parents[1] / "traces" / "samples" / "msr-src1_0-excerpt.csv"


def main() -> None:
    base = zs.Config.preset("default").override({"timing.enabled": True})
    reports = {
        policy: zs.simulate_trace(
            base.override({"gc.policy": policy}), TRACE, "msr", remap="modulo", seed=1
        )
        for policy in ("greedy", "cost-benefit", "fifo")
    }
    print(f"{'policy':<14} {'WAF':>6} {'GC copies':>10} {'write p99 (us)':>15}")
    for policy, rep in reports.items():
        p99 = rep.raw["latency"]["write"]["p99_us"]
        print(f"{policy:<14} {rep.waf:>6.3f} {rep.raw['gc']['pages_copied']:>10,} {p99:>15,.1f}")


if __name__ == "__main__":
    main()
