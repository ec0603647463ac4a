"""Victim policies written in Python, run by zombiesim in place of `gc.policy`.

    python examples/victim_policy.py                   # a synthetic hot/cold run
    python examples/victim_policy.py rocksdb-ycsb-a    # a corpus capture (traces/corpus)

At each garbage collection the simulator hands a policy one GC unit's candidate blocks as
NumPy columns (`c.block`, `c.valid`, `c.invalid`, `c.zombies`, `c.age`, `c.last_modified`,
`c.erase_count`, `c.stream`, `c.weight`, and `c.now`, sorted by block number) and takes back
a block number, or a ranking of blocks (best first) that serves the next selections too.
`greedy` and `cost_benefit` restate the built-in policies and give their reports exactly;
`oldest_of_the_emptiest` is a variant none of the built-in ones is.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import zombiesim as zs


def greedy(c):
    """Fewest valid pages; ties go to the lowest block, as the built-in greedy's do."""
    return c.block[np.argmin(c.valid)]


def cost_benefit(c):
    """LFS cost-benefit: the most `i * a / (2 v)` (a block with nothing valid first)."""
    v = c.valid.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(v == 0, np.inf, c.invalid * c.age.astype(np.float64) / (2.0 * v))
    return c.block[np.argmax(score)]


def oldest_of_the_emptiest(c):
    """Among the blocks within two pages of the fewest valid, the least recently
    modified: greedy's cost with cost-benefit's preference for cold blocks."""
    near = np.flatnonzero(c.valid <= c.valid.min() + 2)
    return c.block[near[np.argmax(c.age[near])]]


def main(argv: list[str]) -> None:
    if argv:
        from zombiesim.studies import resolve_traces, study_device

        trace = resolve_traces(argv[:1])[0]
        config = study_device(trace, ["nosep"])

        def run(cfg, **kw):
            return zs.simulate_trace(cfg, trace.path, "native", remap="compact", **kw)
    else:
        config = zs.Config.preset("default").override({"flash.blocks_per_plane": 256})

        def run(cfg, **kw):
            return zs.simulate(cfg, "hotcold:r=0.8,f=0.2,drive_writes=2", **kw)

    for label, cfg, victim in [
        ("built-in greedy", config, None),
        ("python greedy", config, greedy),
        ("built-in cost-benefit", config.override({"gc.policy": "cost-benefit"}), None),
        ("python cost_benefit", config, cost_benefit),
        ("python oldest_of_the_emptiest", config, oldest_of_the_emptiest),
    ]:
        start = time.perf_counter()
        rep = run(cfg, victim=victim)
        wall = time.perf_counter() - start
        print(f"{label:32} WAF {rep.waf:.4f}  victims {rep.gc.victims:7}  {wall:6.2f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
