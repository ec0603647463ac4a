"""SQLite in rollback-journal mode (`journal_mode=DELETE`, `synchronous=FULL`): a table of
ROWS rows of 200-600 bytes, then SECONDS of random single-row transactions (45% inserts,
35% updates, 20% deletes, keys uniform over those live), with a VACUUM at a quarter, half
and three quarters of the time. Each transaction writes the rollback journal, syncs it,
writes the database pages, syncs them and deletes the journal: the hot-journal pattern of
SQLite's default mode. Deterministic for a seed (but for when time runs out).

usage: python sqlite_rollback.py [SECONDS] [ROWS] [SEED]
"""

import random
import sqlite3
import sys
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
ROWS = int(sys.argv[2]) if len(sys.argv) > 2 else 50_000
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 1
rng = random.Random(SEED)

db = sqlite3.connect("kv.db", isolation_level=None)
db.execute("PRAGMA journal_mode=DELETE")
db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE kv (k INTEGER PRIMARY KEY, v BLOB)")


def value() -> bytes:
    return rng.randbytes(rng.randint(200, 600))


db.execute("BEGIN")
for k in range(ROWS):
    db.execute("INSERT INTO kv VALUES (?, ?)", (k, value()))
db.execute("COMMIT")
live = list(range(ROWS))
next_key = ROWS
start = time.monotonic()
vacuums = [SECONDS * f for f in (0.25, 0.5, 0.75)]
ops = 0
while (now := time.monotonic() - start) < SECONDS:
    if vacuums and now >= vacuums[0]:
        vacuums.pop(0)
        db.execute("VACUUM")
    r = rng.random()
    db.execute("BEGIN")
    if r < 0.45 or not live:
        db.execute("INSERT INTO kv VALUES (?, ?)", (next_key, value()))
        live.append(next_key)
        next_key += 1
    elif r < 0.80:
        db.execute("UPDATE kv SET v = ? WHERE k = ?", (value(), rng.choice(live)))
    else:
        i = rng.randrange(len(live))
        live[i], live[-1] = live[-1], live[i]
        db.execute("DELETE FROM kv WHERE k = ?", (live.pop(),))
    db.execute("COMMIT")
    ops += 1
db.close()
print(f"{ops} transactions, {len(live)} rows live")
