#!/usr/bin/env python3
"""Times full drains of one $filter query over raw HTTP (bench/cold/run.sh).

One keep-alive connection, account SAS in the query string, continuation
tokens followed the way the SDKs do. Before the first measured drain one
Query Tables request opens the connection (it reads no entity), so the
first figure is the server's first scan, not the client's connect.

    scan.py --port 20002 --table cold --filter "Rating eq 5 and Age eq 41" --drains 2

Prints one JSON line: {"ms": [per drain], "entities": N, "pages": P,
"window": [[start, end] per drain, CLOCK_MONOTONIC seconds]}.
Standard library only.
"""
import argparse
import http.client
import json
import os
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from make_sas import DEFAULT_ACCOUNT, DEFAULT_KEY, make_sas  # noqa: E402

HEADERS = {"Accept": "application/json;odata=nometadata", "x-ms-version": "2019-02-02"}


def get(conn, path):
    conn.request("GET", path, headers=HEADERS)
    r = conn.getresponse()
    body = r.read()
    if r.status != 200:
        raise SystemExit(f"HTTP {r.status} on {path}: {body[:300]!r}")
    return r, body


def drain(conn, table, flt, sas):
    entities = pages = 0
    token = {}
    t0 = time.perf_counter()
    while True:
        q = {"$filter": flt, **token}
        path = f"/{DEFAULT_ACCOUNT}/{table}()?{urllib.parse.urlencode(q, quote_via=urllib.parse.quote)}&{sas}"
        r, body = get(conn, path)
        entities += len(json.loads(body)["value"])
        pages += 1
        token = {}
        for name in ("NextPartitionKey", "NextRowKey"):
            v = r.getheader("x-ms-continuation-" + name)
            if v is not None:
                token[name] = v
        if not token:
            break
    return (time.perf_counter() - t0) * 1000, entities, pages


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--table", default="cold")
    ap.add_argument("--filter", default="Rating eq 5 and Age eq 41")
    ap.add_argument("--drains", type=int, default=1)
    a = ap.parse_args()
    sas = make_sas(DEFAULT_ACCOUNT, DEFAULT_KEY)
    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=300)
    get(conn, f"/{DEFAULT_ACCOUNT}/Tables?{sas}")  # opens the connection; no entity read
    # "window": each drain's start and end on CLOCK_MONOTONIC (seconds), the
    # clock of `perf record -k CLOCK_MONOTONIC` (bench/busy/trace.sh).
    out = {"ms": [], "entities": 0, "pages": 0, "window": []}
    for _ in range(a.drains):
        start = time.monotonic()
        ms, out["entities"], out["pages"] = drain(conn, a.table, a.filter, sas)
        out["ms"].append(round(ms, 2))
        out["window"].append([round(start, 6), round(time.monotonic(), 6)])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
