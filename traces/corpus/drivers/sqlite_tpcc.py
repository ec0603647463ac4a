"""A TPC-C-like load on SQLite in WAL mode: W warehouses, New-Order (45%), Payment (43%),
Order-Status (4%), Delivery (4%) and Stock-Level (4%) transactions for a fixed time,
one connection, `synchronous=NORMAL`, the default WAL auto-checkpoint (1000 pages).
The schema keeps TPC-C's tables and the columns the transactions touch, with filler
so that rows have TPC-C's sizes. Deterministic for a seed (but for when time runs out).

usage: python sqlite_tpcc.py [SECONDS] [WAREHOUSES] [SEED]
"""

import random
import sqlite3
import sys
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
W = int(sys.argv[2]) if len(sys.argv) > 2 else 4
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 1
DISTRICTS, CUSTOMERS, ITEMS = 10, 3000, 100_000
rng = random.Random(SEED)


def filler(n: int) -> str:
    return "x" * n


def nurand(a: int, x: int, y: int) -> int:
    return (((rng.randint(0, a) | rng.randint(x, y)) + 42) % (y - x + 1)) + x


db = sqlite3.connect("tpcc.db", isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=NORMAL")
db.executescript(
    """
CREATE TABLE warehouse(w_id INTEGER PRIMARY KEY, w_ytd REAL, w_data TEXT);
CREATE TABLE district(d_w_id INT, d_id INT, d_ytd REAL, d_next_o_id INT, d_data TEXT,
    PRIMARY KEY(d_w_id, d_id));
CREATE TABLE customer(c_w_id INT, c_d_id INT, c_id INT, c_balance REAL, c_ytd REAL,
    c_payment_cnt INT, c_delivery_cnt INT, c_data TEXT, PRIMARY KEY(c_w_id, c_d_id, c_id));
CREATE TABLE history(h_c_id INT, h_w_id INT, h_amount REAL, h_data TEXT);
CREATE TABLE item(i_id INTEGER PRIMARY KEY, i_price REAL, i_data TEXT);
CREATE TABLE stock(s_w_id INT, s_i_id INT, s_quantity INT, s_ytd INT, s_order_cnt INT,
    s_data TEXT, PRIMARY KEY(s_w_id, s_i_id));
CREATE TABLE orders(o_w_id INT, o_d_id INT, o_id INT, o_c_id INT, o_carrier_id INT,
    o_ol_cnt INT, PRIMARY KEY(o_w_id, o_d_id, o_id));
CREATE TABLE new_order(no_w_id INT, no_d_id INT, no_o_id INT,
    PRIMARY KEY(no_w_id, no_d_id, no_o_id));
CREATE TABLE order_line(ol_w_id INT, ol_d_id INT, ol_o_id INT, ol_number INT, ol_i_id INT,
    ol_quantity INT, ol_amount REAL, ol_delivery_d INT, ol_data TEXT,
    PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number));
"""
)
db.execute("BEGIN")
db.executemany(
    "INSERT INTO item VALUES(?,?,?)",
    ((i, rng.uniform(1, 100), filler(40)) for i in range(1, ITEMS + 1)),
)
for w in range(1, W + 1):
    db.execute("INSERT INTO warehouse VALUES(?,?,?)", (w, 300000.0, filler(80)))
    db.executemany(
        "INSERT INTO stock VALUES(?,?,?,?,?,?)",
        ((w, i, rng.randint(10, 100), 0, 0, filler(250)) for i in range(1, ITEMS + 1)),
    )
    for d in range(1, DISTRICTS + 1):
        db.execute("INSERT INTO district VALUES(?,?,?,?,?)", (w, d, 30000.0, 1, filler(80)))
        db.executemany(
            "INSERT INTO customer VALUES(?,?,?,?,?,?,?,?)",
            ((w, d, c, -10.0, 10.0, 1, 0, filler(500)) for c in range(1, CUSTOMERS + 1)),
        )
db.execute("COMMIT")


def new_order() -> None:
    w, d = rng.randint(1, W), rng.randint(1, DISTRICTS)
    c = nurand(1023, 1, CUSTOMERS)
    (o,) = db.execute(
        "SELECT d_next_o_id FROM district WHERE d_w_id=? AND d_id=?", (w, d)
    ).fetchone()
    db.execute("UPDATE district SET d_next_o_id=? WHERE d_w_id=? AND d_id=?", (o + 1, w, d))
    lines = rng.randint(5, 15)
    db.execute("INSERT INTO orders VALUES(?,?,?,?,NULL,?)", (w, d, o, c, lines))
    db.execute("INSERT INTO new_order VALUES(?,?,?)", (w, d, o))
    for n in range(1, lines + 1):
        i, q = nurand(8191, 1, ITEMS), rng.randint(1, 10)
        (price,) = db.execute("SELECT i_price FROM item WHERE i_id=?", (i,)).fetchone()
        db.execute(
            "UPDATE stock SET s_quantity=CASE WHEN s_quantity>=?+10 THEN s_quantity-? "
            "ELSE s_quantity-?+91 END, s_ytd=s_ytd+?, s_order_cnt=s_order_cnt+1 "
            "WHERE s_w_id=? AND s_i_id=?",
            (q, q, q, q, w, i),
        )
        db.execute(
            "INSERT INTO order_line VALUES(?,?,?,?,?,?,?,NULL,?)",
            (w, d, o, n, i, q, q * price, filler(24)),
        )


def payment() -> None:
    w, d, c = rng.randint(1, W), rng.randint(1, DISTRICTS), nurand(1023, 1, CUSTOMERS)
    h = rng.uniform(1, 5000)
    db.execute("UPDATE warehouse SET w_ytd=w_ytd+? WHERE w_id=?", (h, w))
    db.execute("UPDATE district SET d_ytd=d_ytd+? WHERE d_w_id=? AND d_id=?", (h, w, d))
    db.execute(
        "UPDATE customer SET c_balance=c_balance-?, c_ytd=c_ytd+?, "
        "c_payment_cnt=c_payment_cnt+1 WHERE c_w_id=? AND c_d_id=? AND c_id=?",
        (h, h, w, d, c),
    )
    db.execute("INSERT INTO history VALUES(?,?,?,?)", (c, w, h, filler(24)))


def order_status() -> None:
    w, d, c = rng.randint(1, W), rng.randint(1, DISTRICTS), nurand(1023, 1, CUSTOMERS)
    row = db.execute(
        "SELECT max(o_id) FROM orders WHERE o_w_id=? AND o_d_id=? AND o_c_id=?", (w, d, c)
    ).fetchone()
    if row[0] is not None:
        db.execute(
            "SELECT * FROM order_line WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id=?",
            (w, d, row[0]),
        ).fetchall()


def delivery() -> None:
    w, carrier = rng.randint(1, W), rng.randint(1, 10)
    for d in range(1, DISTRICTS + 1):
        row = db.execute(
            "SELECT min(no_o_id) FROM new_order WHERE no_w_id=? AND no_d_id=?", (w, d)
        ).fetchone()
        if row[0] is None:
            continue
        o = row[0]
        db.execute("DELETE FROM new_order WHERE no_w_id=? AND no_d_id=? AND no_o_id=?", (w, d, o))
        db.execute(
            "UPDATE orders SET o_carrier_id=? WHERE o_w_id=? AND o_d_id=? AND o_id=?",
            (carrier, w, d, o),
        )
        db.execute(
            "UPDATE order_line SET ol_delivery_d=? WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id=?",
            (int(time.time()), w, d, o),
        )


def stock_level() -> None:
    w, d = rng.randint(1, W), rng.randint(1, DISTRICTS)
    db.execute(
        "SELECT count(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id=ol_w_id "
        "AND s_i_id=ol_i_id WHERE ol_w_id=? AND ol_d_id=? AND s_quantity<?",
        (w, d, rng.randint(10, 20)),
    ).fetchone()


MIX = [(45, new_order), (43, payment), (4, order_status), (4, delivery), (4, stock_level)]


def pick():
    """A transaction, by TPC-C's mix."""
    n = rng.randrange(100)
    for share, tx in MIX:
        if n < share:
            return tx
        n -= share
    return MIX[-1][1]


end = time.monotonic() + SECONDS
done = 0
while time.monotonic() < end:
    tx = pick()
    db.execute("BEGIN")
    tx()
    db.execute("COMMIT")
    done += 1
db.close()
print(f"{done} transactions in {SECONDS:g} s, sqlite {sqlite3.sqlite_version}")
