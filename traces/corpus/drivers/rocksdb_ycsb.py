"""RocksDB loads through the `rocksdict` binding (RocksDB built into the wheel):

- `ycsb-a`: load RECORDS records of 1 KiB in key order, then YCSB workload A for SECONDS:
  50% reads, 50% updates, keys Zipf-distributed (theta 0.99, YCSB's default) and
  scattered over the key space (hashed, as YCSB's `hashed` insert order);
- `fill-update`: fill RECORDS records of 1 KiB in random key order, then overwrite
  uniformly random keys for SECONDS.

Default options but for a 16 MiB write buffer and 16 MiB target files (so that a short
run flushes and compacts many times); the write-ahead log on, not synced per write.
COMPACTION `universal` swaps RocksDB's leveled compaction for universal (size-tiered)
compaction: fewer, larger rewrites of whole sorted runs. Deterministic for a seed (but
for when time runs out).

usage: python rocksdb_ycsb.py ycsb-a|fill-update [SECONDS] [RECORDS] [SEED] [COMPACTION]
"""

import bisect
import hashlib
import random
import sys
import time

from rocksdict import DBCompactionStyle, Options, Rdict

MODE = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
RECORDS = int(sys.argv[3]) if len(sys.argv) > 3 else 200_000
SEED = int(sys.argv[4]) if len(sys.argv) > 4 else 1
COMPACTION = sys.argv[5] if len(sys.argv) > 5 else "level"
VALUE = 1024
rng = random.Random(SEED)

opts = Options(raw_mode=True)
opts.create_if_missing(True)
opts.set_write_buffer_size(16 << 20)
opts.set_target_file_size_base(16 << 20)
opts.set_max_background_jobs(2)
if COMPACTION == "universal":
    opts.set_compaction_style(DBCompactionStyle.universal())
elif COMPACTION != "level":
    sys.exit(f"unknown compaction {COMPACTION!r}: expected level or universal")
db = Rdict("db", opts)


def key(i: int) -> bytes:
    # YCSB's hashed order: record i's key is a hash of i.
    return b"user" + hashlib.blake2b(i.to_bytes(8, "little"), digest_size=8).hexdigest().encode()


def value() -> bytes:
    return rng.randbytes(VALUE)


def zipf_table(n: int, theta: float) -> list[float]:
    """Cumulative Zipf(theta) over ranks 1..n."""
    acc, out = 0.0, []
    for r in range(1, n + 1):
        acc += 1.0 / r**theta
        out.append(acc)
    return [x / acc for x in out]


order = list(range(RECORDS))
if MODE == "fill-update":
    rng.shuffle(order)
elif MODE != "ycsb-a":
    sys.exit(f"unknown mode {MODE!r}: expected ycsb-a or fill-update")
for i in order:
    db[key(i)] = value()
ops = 0
end = time.monotonic() + SECONDS
if MODE == "ycsb-a":
    cdf = zipf_table(RECORDS, 0.99)
    # Popular ranks scattered over the records, as YCSB's scrambled Zipfian does.
    rank_to_record = list(range(RECORDS))
    rng.shuffle(rank_to_record)
    while time.monotonic() < end:
        for _ in range(1000):
            k = key(rank_to_record[bisect.bisect_left(cdf, rng.random())])
            if rng.random() < 0.5:
                db.get(k)
            else:
                db[k] = value()
        ops += 1000
else:
    while time.monotonic() < end:
        for _ in range(1000):
            db[key(rng.randrange(RECORDS))] = value()
        ops += 1000
db.close()
print(f"{MODE}: {RECORDS} records loaded, {ops} operations in {SECONDS:g} s")
