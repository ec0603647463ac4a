"""LMDB (the `lmdb` binding; a copy-on-write B+tree in one memory-mapped file) with
synchronous commits: RECORDS records of 100-2000 bytes loaded in one transaction, then
SECONDS of small transactions of 1-8 puts and deletes each (70% puts, 30% deletes), keys
Zipf-distributed (theta 0.99) over twice the loaded key space, every commit synced
(`sync=True`, LMDB's default: fdatasync of the data file per commit). Deterministic for
a seed (but for when time runs out).

usage: python lmdb_kv.py [SECONDS] [RECORDS] [SEED]
"""

import bisect
import itertools
import random
import sys
import time

import lmdb

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
RECORDS = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 1
rng = random.Random(SEED)
KEYS = 2 * RECORDS

# Zipf(0.99) over KEYS ranks; rank r is key (r * a large odd number) mod KEYS, so the hot
# keys are scattered over the tree.
weights = [1 / (r + 1) ** 0.99 for r in range(KEYS)]
cumulative = list(itertools.accumulate(weights))


def zipf_key() -> bytes:
    rank = bisect.bisect_left(cumulative, rng.random() * cumulative[-1])
    return b"%012d" % ((rank * 2_654_435_761) % KEYS)


def value() -> bytes:
    return rng.randbytes(rng.randint(100, 2000))


env = lmdb.open("db", map_size=1 << 30, sync=True, metasync=True)
with env.begin(write=True) as txn:
    for i in range(RECORDS):
        txn.put(b"%012d" % (2 * i), value())
start = time.monotonic()
commits = 0
while time.monotonic() - start < SECONDS:
    with env.begin(write=True) as txn:
        for _ in range(rng.randint(1, 8)):
            k = zipf_key()
            if rng.random() < 0.7:
                txn.put(k, value())
            else:
                txn.delete(k)
    commits += 1
env.close()
print(f"{commits} commits")
