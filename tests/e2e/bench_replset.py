"""Issue 43's performance rows, through PyMongo, two servers side by side in one run:
a standalone and a `--replSet rs0` server, each on its own fresh file, alternating
rounds so machine noise falls on both.

Rows (medians over rounds; ratios replSet / standalone):
- sequential durable insertOne latency (on the replica set the driver makes it a
  retryable write: `lsid` + `txnNumber`, so the oplog entry and the session's record),
  and the same with `retryWrites=false` (the oplog entry alone);
- insertMany MB/s (1,000 documents of 1 KiB per call);
- hello vs ping on the replica set (same connection);
- a fresh `--replSet` server's first `ping` as primary, from process start.

Prints a readable summary, and `name<TAB>value` rows that `cargo xtask gates --only
replset` records.

Usage: python bench_replset.py SERVER_BINARY [ROUNDS]
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

from pymongo import MongoClient

BINARY = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 7


def start(extra, directory, name):
    db = os.path.join(directory, name)
    process = subprocess.Popen(
        [BINARY, "--port", "0", "--db", db, *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    started = time.perf_counter()
    port = None
    for line in process.stderr:
        if "Waiting for connections" in line or "listening on" in line:
            import json

            try:
                port = json.loads(line)["attr"]["port"]
            except Exception:  # plain format
                port = int(line.rsplit(":", 1)[1])
            break
    return process, port, started


def client(port, replica_set, retry=True):
    options = "replicaSet=rs0" if replica_set else "directConnection=true"
    if not retry:
        options += "&retryWrites=false"
    return MongoClient(f"mongodb://127.0.0.1:{port}/?{options}")


def per_op(fn, n):
    t = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - t) / n


def main():
    directory = tempfile.mkdtemp(prefix="mfdb-bench-rs-")
    plain, plain_port, _ = start([], directory, "plain.mfdb")
    rs, rs_port, _ = start(["--replSet", "rs0"], directory, "rs.mfdb")
    a, b = client(plain_port, False), client(rs_port, True)
    b_plain = client(rs_port, True, retry=False)
    a.admin.command("ping")
    b.admin.command("ping")
    b_plain.admin.command("ping")
    rows = {k: ([], []) for k in ("insertOne us", "insertMany MB/s", "insertOne noretry us")}
    hello, ping = [], []
    doc = {"pad": "x" * 1000}
    batch_bytes = 1000 * 1040
    for r in range(ROUNDS):
        for side, c in ((0, a), (1, b)):
            coll = c.bench[f"one{r}"]
            rows["insertOne us"][side].append(
                per_op(lambda i: coll.insert_one({"_id": i, **doc}), 300) * 1e6
            )
            many = c.bench[f"many{r}"]
            seconds = per_op(
                lambda i: many.insert_many([{"_id": i * 1000 + j, **doc} for j in range(1000)]),
                5,
            )
            rows["insertMany MB/s"][side].append(batch_bytes / seconds / 1e6)
            plain_client = a if side == 0 else b_plain
            noretry = plain_client.bench[f"noretry{r}"]
            rows["insertOne noretry us"][side].append(
                per_op(lambda i: noretry.insert_one({"_id": i, **doc}), 300) * 1e6
            )
        db = b.admin
        hello.append(per_op(lambda i: db.command("hello"), 2000) * 1e6)
        ping.append(per_op(lambda i: db.command("ping"), 2000) * 1e6)
    table = []
    for name, (x, y) in rows.items():
        mx, my = statistics.median(x), statistics.median(y)
        print(f"{name}: standalone {mx:.1f}, replSet {my:.1f}, ratio {my / mx:.3f}")
        key = name.replace(" ", "_").replace("/", "_per_")
        table += [(f"standalone_{key}", mx), (f"replset_{key}", my), (f"ratio_{key}", my / mx)]
    mh, mp = statistics.median(hello), statistics.median(ping)
    print(f"hello {mh:.1f} us, ping {mp:.1f} us, ratio {mh / mp:.3f}")
    table += [("replset_hello_us", mh), ("replset_ping_us", mp), ("ratio_hello_ping", mh / mp)]
    a.close()
    b.close()
    b_plain.close()
    for p in (plain, rs):
        p.terminate()
        p.wait()
    firsts = []
    for r in range(ROUNDS):
        process, port, started = start(["--replSet", "rs0"], directory, f"first{r}.mfdb")
        c = MongoClient(f"mongodb://127.0.0.1:{port}/?directConnection=true")
        reply = c.admin.command("hello")
        assert reply["isWritablePrimary"] and reply["setName"] == "rs0"
        c.admin.command("ping")
        firsts.append((time.perf_counter() - started) * 1e3)
        c.close()
        process.terminate()
        process.wait()
    print(f"first ping as primary on an empty file: median {statistics.median(firsts):.1f} ms "
          f"(min {min(firsts):.1f}, max {max(firsts):.1f}; includes process start and the "
          f"client's connection)")
    table.append(("replset_first_ping_ms", statistics.median(firsts)))
    for name, value in table:
        print(f"{name}\t{value:.3f}")


if __name__ == "__main__":
    main()
