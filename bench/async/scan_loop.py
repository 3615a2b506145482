#!/usr/bin/env python3
"""Runs back-to-back full-table filtered scans for a fixed time and reports them.

One keep-alive connection; each scan follows the continuation tokens until the
table is exhausted (a page ends at 1000 rows, 4 MiB or the server's page time
budget). Prints one JSON line: full scans finished, pages, and the pages'
latency percentiles.

  scan_loop.py --port P --sas SAS --table big --filter "Num eq -5" --seconds 10 [--batch]

--batch wraps each page's GET in a $batch (a query batch: one GET directly
under the batch boundary) and reads the page from the batch's only part.
"""
import argparse
import http.client
import json
import statistics
import time
import urllib.parse


def batch_get(conn, args, url, headers):
    """Sends GET `url` as the only part of a $batch; returns the part's status, headers, body."""
    path, _, query = url.partition("?")
    sas = args.sas
    inner = "GET http://127.0.0.1:%d%s?%s HTTP/1.1\r\nAccept: %s\r\n\r\n" % (
        args.port, path, query, headers["Accept"])
    body = ("--batch_q\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
            + inner + "--batch_q--\r\n").encode()
    h = dict(headers)
    h["Content-Type"] = "multipart/mixed; boundary=batch_q"
    conn.request("POST", "/%s/$batch?%s" % (args.account, sas), body=body, headers=h)
    resp = conn.getresponse()
    raw = resp.read().decode("utf-8", "replace")
    if resp.status != 202:
        return resp.status, {}, raw
    # The part: MIME headers, blank line, status line, headers, blank line, body.
    start = raw.index("HTTP/1.1 ")
    head, _, rest = raw[start:].partition("\r\n\r\n")
    lines = head.split("\r\n")
    status = int(lines[0].split()[1])
    part_headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        part_headers[name.strip().lower()] = value.strip()
    end = rest.rfind("\r\n--")
    return status, part_headers, rest[:end] if end >= 0 else rest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--sas", required=True)
    ap.add_argument("--account", default="devstoreaccount1")
    ap.add_argument("--table", default="big")
    ap.add_argument("--filter", default="Num eq -5")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--batch", action="store_true")
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
            if args.batch:
                status, part_headers, body = batch_get(conn, args, url, headers)
            else:
                conn.request("GET", url, headers=headers)
                resp = conn.getresponse()
                body = resp.read()
                status, part_headers = resp.status, {k.lower(): v for k, v in resp.getheaders()}
            page_ms.append((time.monotonic() - t0) * 1000)
            pages += 1
            if status != 200:
                errors += 1
                break
            rows += len(json.loads(body)["value"])
            npk = part_headers.get("x-ms-continuation-nextpartitionkey")
            if not npk:
                scans += 1
                break
            token = (npk, part_headers.get("x-ms-continuation-nextrowkey"))
            if time.monotonic() >= deadline:
                break
    page_ms.sort()
    pct = lambda p: round(page_ms[min(len(page_ms) - 1, int(p * len(page_ms)))], 1) if page_ms else None
    print(json.dumps({"scans_finished": scans, "pages": pages, "rows": rows, "errors": errors,
                      "page_ms_p50": pct(0.5), "page_ms_p99": pct(0.99),
                      "page_ms_max": round(page_ms[-1], 1) if page_ms else None}))


if __name__ == "__main__":
    main()
