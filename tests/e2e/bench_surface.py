"""Issue 22's performance rows, through PyMongo: currentOp and serverStatus against ping
with 100 idle cursors and 32 connections open, and an exhaust cursor against the same
cursor without exhaust over 100,000 small documents. Prints medians and ratios.

Usage: python bench_surface.py mongodb://127.0.0.1:PORT/ [--rounds N]
"""

import statistics
import sys
import time

from pymongo import CursorType, MongoClient


def median_us(run, count: int) -> float:
    """The median of `count` timed calls of `run`, in microseconds."""
    samples = []
    for _ in range(count):
        start = time.perf_counter_ns()
        run()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def admin_rows(uri: str, rounds: int) -> None:
    clients = [MongoClient(uri, directConnection=True) for _ in range(32)]
    for client in clients:
        client.admin.command("ping")
    client = clients[0]
    db = client["bench_surface"]
    db.drop_collection("idle")
    db.idle.insert_many([{"_id": i} for i in range(1000)])
    cursors = [db.idle.find({}, batch_size=2) for _ in range(100)]
    for cursor in cursors:
        next(cursor)
    open_now = client.admin.command("serverStatus")["metrics"]["cursor"]["open"]["total"]
    admin = client.admin
    results = {}
    for _ in range(rounds):
        for name, run in [
            ("ping", lambda: admin.command("ping")),
            ("serverStatus", lambda: admin.command("serverStatus")),
            ("currentOp", lambda: admin.command("currentOp")),
        ]:
            results.setdefault(name, []).append(median_us(run, 500))
    ping = statistics.median(results["ping"])
    print(f"open cursors {open_now}, connections {admin.command('serverStatus')['connections']['current']}")
    for name in ["ping", "serverStatus", "currentOp"]:
        value = statistics.median(results[name])
        print(f"{name:13} median {value:8.1f} us  {value / ping:5.2f}x ping")
    for cursor in cursors:
        cursor.close()
    client.drop_database("bench_surface")
    for other in clients:
        other.close()


def exhaust_rows(uri: str, rounds: int) -> None:
    client = MongoClient(uri, directConnection=True)
    db = client["bench_surface"]
    db.drop_collection("small")
    for start in range(0, 100_000, 10_000):
        db.small.insert_many([{"_id": i, "v": i % 97} for i in range(start, start + 10_000)])
    rates = {"plain": [], "exhaust": []}
    for _ in range(rounds):
        for name, kind in [("plain", CursorType.NON_TAILABLE), ("exhaust", CursorType.EXHAUST)]:
            start = time.perf_counter()
            seen = sum(1 for _ in db.small.find({}, batch_size=100, cursor_type=kind))
            elapsed = time.perf_counter() - start
            assert seen == 100_000, seen
            rates[name].append(seen / elapsed)
    plain = statistics.median(rates["plain"])
    exhaust = statistics.median(rates["exhaust"])
    print(f"plain cursor  {plain:10.0f} docs/s (batch 100)")
    print(f"exhaust       {exhaust:10.0f} docs/s  {exhaust / plain:5.2f}x plain")
    client.drop_database("bench_surface")
    client.close()


def main() -> None:
    uri = sys.argv[1]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    admin_rows(uri, rounds)
    exhaust_rows(uri, rounds)


if __name__ == "__main__":
    main()
