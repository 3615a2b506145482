#!/usr/bin/env python3
"""Measures what --durability fsync costs against the default (WAL in the page cache).

For each mode: start tablestone on a fresh data dir (under --dir, default /var/tmp: a real disk,
not a tmpfs, or fsync costs nothing), then run single inserts from 1 client and from --clients
clients for --seconds each, and 100-operation batches from 1 client. Prints ops/s and latency
percentiles per mode and a Markdown table for docs/reliability.md.

Usage: durability_bench.py [--seconds 5] [--clients 8] [--dir /var/tmp] [--binary PATH]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tsclient  # noqa: E402


def run_load(port, clients, seconds, batch, label):
    lat = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    count = [0]

    def work(i):
        c = tsclient.Client(port)
        mine = []
        n = 0
        while time.monotonic() < stop:
            n += 1
            t0 = time.perf_counter()
            if batch:
                ops = [("PUT", {"PartitionKey": "%s-b%d-%d" % (label, i, n), "RowKey": "%03d" % j, "v": j}, None)
                       for j in range(100)]
                r, parts = c.batch("bench", ops)
                ok = r.status == 202 and len(parts) == 100
            else:
                r = c.insert("bench", {"PartitionKey": "%s-p%d" % (label, i), "RowKey": "%09d" % n, "v": n, "s": "x" * 200})
                ok = r.status == 204
            if not ok:
                raise RuntimeError("unexpected %r" % r)
            mine.append(time.perf_counter() - t0)
        c.close()
        with lock:
            lat.extend(mine)
            count[0] += len(mine)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    lat.sort()

    def pct(p):
        return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else 0

    return {"ops_s": count[0] / elapsed, "p50_ms": pct(0.5), "p99_ms": pct(0.99), "n": count[0]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--dir", default="/var/tmp")
    p.add_argument("--binary")
    args = p.parse_args()
    binary = args.binary or tsclient.default_binary()
    fs = subprocess.run(["df", "-T", args.dir], stdout=subprocess.PIPE, text=True).stdout.splitlines()[-1]
    print("data under %s (%s)" % (args.dir, " ".join(fs.split()[:2])))
    results = {}
    for mode in ("default", "fsync"):
        work = tempfile.mkdtemp(prefix="tablestone-dur.", dir=args.dir)
        srv = tsclient.Server(binary, os.path.join(work, "data"), extra_args=["--durability", mode],
                              log_path=os.path.join(work, "server.log"))
        srv.start()
        try:
            c = tsclient.Client(srv.port)
            assert c.create_table("bench").status == 204
            c.close()
            results[mode] = {
                "insert x1": run_load(srv.port, 1, args.seconds, False, "a"),
                "insert x%d" % args.clients: run_load(srv.port, args.clients, args.seconds, False, "b"),
                "batch100 x1": run_load(srv.port, 1, args.seconds, True, "c"),
            }
        finally:
            srv.stop()
            shutil.rmtree(work, ignore_errors=True)
        for k, v in results[mode].items():
            print("%-8s %-12s %8.0f ops/s  p50 %6.2f ms  p99 %6.2f ms  (%d ops)"
                  % (mode, k, v["ops_s"], v["p50_ms"], v["p99_ms"], v["n"]))
    print()
    print("| load | default ops/s | default p50 / p99 ms | fsync ops/s | fsync p50 / p99 ms | fsync cost |")
    print("|---|---:|---:|---:|---:|---:|")
    for k in results["default"]:
        d, f = results["default"][k], results["fsync"][k]
        print("| %s | %.0f | %.2f / %.2f | %.0f | %.2f / %.2f | %.1fx |"
              % (k, d["ops_s"], d["p50_ms"], d["p99_ms"], f["ops_s"], f["p50_ms"], f["p99_ms"],
                 d["ops_s"] / max(f["ops_s"], 1e-9)))


if __name__ == "__main__":
    main()
