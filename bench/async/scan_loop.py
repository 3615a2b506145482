#!/usr/bin/env python3
"""Runs back-to-back full-table filtered scans for a fixed time and reports them.

One keep-alive connection; each scan follows the continuation tokens until the
table is exhausted (a page ends at 1000 rows, 4 MiB or the server's page time
budget). Prints one JSON line: full scans finished, pages, and the pages'
latency percentiles.

  scan_loop.py --port P --sas SAS --table big --filter "Num eq -5" --seconds 10
"""
import argparse
import http.client
import json
import statistics
import time
import urllib.parse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--sas", required=True)
    ap.add_argument("--account", default="devstoreaccount1")
    ap.add_argument("--table", default="big")
    ap.add_argument("--filter", default="Num eq -5")
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()

    conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=120)
    headers = {"Accept": "application/json;odata=nometadata", "x-ms-version": "2019-02-02"}
    base = "/%s/%s()?%s&$filter=%s" % (args.account, args.table, args.sas, urllib.parse.quote(args.filter))
    deadline = time.monotonic() + args.seconds
    scans = pages = rows = errors = 0
    page_ms = []
    while time.monotonic() < deadline:
        token = None
        while True:
            url = base
            if token:
                url += "&NextPartitionKey=%s" % urllib.parse.quote(token[0])
                if token[1]:
                    url += "&NextRowKey=%s" % urllib.parse.quote(token[1])
            t0 = time.monotonic()
            conn.request("GET", url, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            page_ms.append((time.monotonic() - t0) * 1000)
            pages += 1
            if resp.status != 200:
                errors += 1
                break
            rows += len(json.loads(body)["value"])
            npk = resp.getheader("x-ms-continuation-NextPartitionKey")
            if not npk:
                scans += 1
                break
            token = (npk, resp.getheader("x-ms-continuation-NextRowKey"))
            if time.monotonic() >= deadline:
                break
    page_ms.sort()
    pct = lambda p: round(page_ms[min(len(page_ms) - 1, int(p * len(page_ms)))], 1) if page_ms else None
    print(json.dumps({"scans_finished": scans, "pages": pages, "rows": rows, "errors": errors,
                      "page_ms_p50": pct(0.5), "page_ms_p99": pct(0.99),
                      "page_ms_max": round(page_ms[-1], 1) if page_ms else None}))


if __name__ == "__main__":
    main()
