"""The `victim` case of bench.py: a victim policy written in Python (`victim=`) against
the built-in one it restates, on corpus captures, through the Python API in this
process. Each pair is run back to back (built-in, then Python) on the capture's study
device, the trace read from a warm cache; the figure is the median of the paired ratios
of whole-run wall time (preconditioning included: the policy runs there too), and the
cost per call of the Python policy beyond the built-in one (target: cost-benefit within
3x the built-in's time)."""

from __future__ import annotations

import runpy
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ("rocksdb-ycsb-a", "sqlite-tpcc")


def victim(n: int) -> bool:
    import zombiesim as zs
    from zombiesim.studies import resolve_traces, study_device

    example = runpy.run_path(str(ROOT / "examples" / "victim_policy.py"))
    calls = [0]

    def counted(policy):
        def call(c):
            calls[0] += 1
            return policy(c)

        return call

    print("\nvictim: Python victim policies (examples/victim_policy.py) against the built-in")
    ok = True
    with tempfile.TemporaryDirectory() as cache:
        for name in CAPTURES:
            trace = resolve_traces([name])[0]
            cfg = study_device(trace, ["nosep"])

            def run(cfg, victim=None, trace=trace, cache=cache):
                start = time.perf_counter()
                rep = zs.simulate_trace(
                    cfg, trace.path, "native", remap="compact", trace_cache=cache, victim=victim
                )
                return time.perf_counter() - start, rep

            run(cfg)  # fills the trace cache
            for builtin, python in (("greedy", "greedy"), ("cost-benefit", "cost_benefit")):
                ratios, extra = [], []
                for _ in range(n):
                    calls[0] = 0
                    tb, b = run(cfg.override({"gc.policy": builtin}))
                    tp, p = run(cfg, counted(example[python]))
                    if p.waf != b.waf:
                        print(f"  {name} {python}: WAF {p.waf} differs from {b.waf}")
                        ok = False
                    ratios.append(tp / tb)
                    extra.append((tp - tb) / max(calls[0], 1) * 1e6)
                ratio = statistics.median(ratios)
                target = python != "cost_benefit" or ratio <= 3.0
                ok = ok and target
                print(
                    f"  {name:16} {python:13} {ratio:5.2f}x the built-in's time "
                    f"({calls[0]} calls, {statistics.median(extra):5.1f} us extra per call)"
                    + ("" if python != "cost_benefit" else f"  [{'ok' if target else 'MISS'}]")
                )
    return ok
