#!/usr/bin/env python3
"""Many tables across many accounts (issue 20; docs/benchmarks.md, "Scale").

Starts tablestone (--tablestone BIN) on a fresh data directory with
--accounts accounts (AZURITE_ACCOUNTS: devstoreaccount1 plus generated ones)
and, over raw HTTP with one keep-alive connection and an account SAS each:
  1. loads 10,000 entities into table `ent` of devstoreaccount1 and measures
     point GETs of them with wrk (-t1 -c32, bench/wrk/get.lua): "before";
  2. creates --tables tables spread evenly over the accounts, timing each
     Create Table (median, p99);
  3. lists every account's tables with Query Tables, $top=100, following
     x-ms-continuation-NextTableName, and checks that each table is seen once;
  4. point GETs again ("with N tables");
  5. deletes every table it created, timing each Delete Table;
  6. point GETs again ("after deleting them").
Prints one JSON line per step and exits 1 if a check failed. Standard library
only (wrk from bench/install-bench-deps.sh).
"""
import argparse
import base64
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from make_sas import make_sas  # noqa: E402

DEV = "devstoreaccount1"
DEV_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
           "K1SZFPTOtr/KBHBeksoGMGw==")
JSON = {"Accept": "application/json;odata=nometadata", "Content-Type": "application/json",
        "DataServiceVersion": "3.0", "x-ms-version": "2019-02-02"}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(p / 100 * len(v) + 0.5)) - 1))]


class Client:
    def __init__(self, port, account, key):
        self.conn = http.client.HTTPConnection("127.0.0.1", port)
        self.account = account
        self.sas = make_sas(account, key)

    def call(self, method, path, body=None, extra=None):
        sep = "&" if "?" in path else "?"
        headers = dict(JSON, **(extra or {}))
        self.conn.request(method, f"/{self.account}/{path}{sep}{self.sas}", body=body, headers=headers)
        r = self.conn.getresponse()
        return r.status, r.getheaders(), r.read()


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return None


def point_gets(args, port, seconds):
    env = dict(os.environ, BENCH_WRK_DIR=os.path.join(HERE, "..", "wrk"), BENCH_SAS=make_sas(DEV, DEV_KEY),
               BENCH_TABLE="ent", BENCH_PK="pt", BENCH_N="10000")
    out = subprocess.run(["wrk", "-t1", "-c32", f"-d{seconds}s", "--timeout", "30s", "-s",
                          os.path.join(HERE, "..", "wrk", "get.lua"), f"http://127.0.0.1:{port}"],
                         env=env, capture_output=True, text=True, timeout=seconds + 60).stdout
    line = next(l for l in out.splitlines() if l.startswith("RESULT "))
    r = json.loads(line[len("RESULT "):])
    return {"ops_per_s": round(r["requests"] / (r["duration_us"] / 1e6)), "p50_us": r["p50_us"],
            "p99_us": r["p99_us"], "non2xx": r["non2xx"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tablestone", required=True)
    ap.add_argument("--accounts", type=int, default=20)
    ap.add_argument("--tables", type=int, default=5000)
    ap.add_argument("--get-seconds", type=int, default=5)
    args = ap.parse_args()

    accounts = [(DEV, DEV_KEY)] + [
        (f"scaleacct{i:02d}", base64.b64encode(f"scale-key-{i:02d}-0123456789abcdef".encode()).decode())
        for i in range(1, args.accounts)]
    work = tempfile.mkdtemp(prefix="tablestone-tables.")
    port = free_port()
    env = dict(os.environ, AZURITE_ACCOUNTS=";".join(f"{a}:{k}" for a, k in accounts))
    log = open(os.path.join(work, "server.log"), "w")
    server = subprocess.Popen([args.tablestone, "--tableHost", "127.0.0.1", "--tablePort", str(port), "-s",
                               "-l", os.path.join(work, "data")], env=env, stdout=log, stderr=log)
    ok = True

    def result(step, **fields):
        print(json.dumps({"step": step, **fields}), flush=True)

    try:
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.02)
        dev = Client(port, DEV, DEV_KEY)
        status, _, _ = dev.call("POST", "Tables", json.dumps({"TableName": "ent"}), {"Prefer": "return-no-content"})
        assert status == 204, status
        for start in range(0, 10000, 100):
            boundary, cs = "batch_t", "changeset_t"
            parts = [f"--{boundary}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n"]
            for i in range(start, start + 100):
                ent = json.dumps({"PartitionKey": "pt", "RowKey": f"r{i:07d}", "Name": f"name-{i}", "Num": i})
                parts.append(f"--{cs}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
                             f"POST http://127.0.0.1:{port}/{DEV}/ent HTTP/1.1\r\nContent-Type: application/json\r\n"
                             f"Accept: application/json;odata=nometadata\r\nPrefer: return-no-content\r\n\r\n{ent}\r\n")
            parts.append(f"--{cs}--\r\n--{boundary}--\r\n")
            status, _, body = dev.call("POST", "$batch", "".join(parts),
                                       {"Content-Type": f"multipart/mixed; boundary={boundary}"})
            assert status == 202 and b"HTTP/1.1 204" in body, (status, body[:300])
        result("get-before", tables=1, rss_mb=rss_mb(server.pid), **point_gets(args, port, args.get_seconds))

        clients = [Client(port, a, k) for a, k in accounts]
        names = {a: [] for a, _ in accounts}
        create_ms = []
        t0 = time.perf_counter()
        for i in range(args.tables):
            c = clients[i % len(clients)]
            name = f"t{i:05d}x"
            s = time.perf_counter()
            status, _, body = c.call("POST", "Tables", json.dumps({"TableName": name}), {"Prefer": "return-no-content"})
            create_ms.append((time.perf_counter() - s) * 1000)
            if status != 204:
                ok = False
                print(f"create {c.account}/{name}: {status} {body[:200]}", file=sys.stderr)
            names[c.account].append(name)
        result("create", tables=args.tables, accounts=len(accounts), seconds=round(time.perf_counter() - t0, 2),
               median_ms=round(statistics.median(create_ms), 3), p99_ms=round(pct(create_ms, 99), 3),
               rss_mb=rss_mb(server.pid))

        pages = seen_total = 0
        t0 = time.perf_counter()
        for c in clients:
            seen, token = [], None
            while True:
                q = "Tables?$top=100" + (f"&NextTableName={urllib.parse.quote(token)}" if token else "")
                status, headers, body = c.call("GET", q)
                assert status == 200, (status, body[:200])
                pages += 1
                seen += [t["TableName"] for t in json.loads(body)["value"]]
                token = dict((k.lower(), v) for k, v in headers).get("x-ms-continuation-nexttablename")
                if not token:
                    break
            expected = sorted(names[c.account] + (["ent"] if c.account == DEV else []))
            if sorted(seen) != expected:
                ok = False
                print(f"Query Tables of {c.account}: {len(seen)} tables, expected {len(expected)}", file=sys.stderr)
            seen_total += len(seen)
        result("query-tables", tables_seen=seen_total, pages=pages, seconds=round(time.perf_counter() - t0, 3),
               ms_per_page=round((time.perf_counter() - t0) * 1000 / pages, 3), complete=ok)

        result("get-with-tables", tables=args.tables + 1, rss_mb=rss_mb(server.pid),
               **point_gets(args, port, args.get_seconds))

        delete_ms = []
        t0 = time.perf_counter()
        for c in clients:
            for name in names[c.account]:
                s = time.perf_counter()
                status, _, body = c.call("DELETE", f"Tables('{name}')")
                delete_ms.append((time.perf_counter() - s) * 1000)
                if status != 204:
                    ok = False
                    print(f"delete {c.account}/{name}: {status} {body[:200]}", file=sys.stderr)
        result("delete", tables=len(delete_ms), seconds=round(time.perf_counter() - t0, 2),
               median_ms=round(statistics.median(delete_ms), 3), p99_ms=round(pct(delete_ms, 99), 3))
        result("get-after-deletes", tables=1, rss_mb=rss_mb(server.pid), **point_gets(args, port, args.get_seconds))
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
