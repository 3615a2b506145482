#!/usr/bin/env python3
"""A fixed number of requests of one kind over C keep-alive connections at once.

For instruction and context-switch counts per request (bench/callgrind/write_path.sh): the count is
exact, every status is checked, and the client is a separate process, so none of its work is in the
server's counts. Each connection sends its next request as soon as its previous answer is read, so
up to C requests are in the server at a time (group commit groups of up to C writes), as wrk's
connections keep them. The requests are those of bench/profile/load.py (same entity, headers, $batch
body), each sent in one write as wrk and the SDKs send them.

Kinds: setup (create table --table and --n entities in partition pt, one connection), get (GET of
the setup's keys), insert (POST with new keys, return-no-content), upsert (PUT of existing keys),
merge (MERGE with If-Match * of existing keys), batch (a $batch of 100 inserts into a new partition).
Standard library only.
"""
import argparse
import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "profile"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from load import ACCOUNT, HEADERS, KEY, batch_body, entity  # noqa: E402
from make_sas import make_sas  # noqa: E402


def raw_request(port, method, path, sas, body=b"", extra=None):
    headers = dict(HEADERS)
    headers.update(extra or {})
    headers["Host"] = f"127.0.0.1:{port}"
    headers["Content-Length"] = str(len(body))
    sep = "&" if "?" in path else "?"
    head = f"{method} /{ACCOUNT}/{path}{sep}{sas} HTTP/1.1\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    return head.encode() + body


def builder(kind, port, table, sas, tag, rows):
    """Returns (request bytes for index i, the statuses accepted)."""
    def ent(pk, rk, i):
        return json.dumps(entity(pk, rk, i)).encode()

    if kind == "setup":
        return (lambda i: raw_request(port, "PUT", f"{table}(PartitionKey='pt',RowKey='r{i:07d}')", sas,
                                      ent("pt", f"r{i:07d}", i))), (204,)
    if kind == "get":
        return (lambda i: raw_request(port, "GET", f"{table}(PartitionKey='pt',RowKey='r{i % rows:07d}')", sas)), (200,)
    if kind == "insert":
        return (lambda i: raw_request(port, "POST", table, sas, ent(f"ins{tag}", f"r{i:07d}", i),
                                      {"Prefer": "return-no-content"})), (204,)
    if kind == "upsert":
        return (lambda i: raw_request(port, "PUT", f"{table}(PartitionKey='pt',RowKey='r{i % rows:07d}')", sas,
                                      ent("pt", f"r{i % rows:07d}", i))), (204,)
    if kind == "merge":
        return (lambda i: raw_request(port, "MERGE", f"{table}(PartitionKey='pt',RowKey='r{i % rows:07d}')", sas,
                                      ent("pt", f"r{i % rows:07d}", i), {"If-Match": "*"})), (204,)
    if kind == "batch":
        return (lambda i: raw_request(port, "POST", "$batch", sas,
                                      batch_body(port, table, f"b{tag}-{i}", i * 100).encode(),
                                      {"Content-Type": "multipart/mixed; boundary=batch_p"})), (202,)
    raise SystemExit(f"unknown kind {kind}")


async def connection(port, make, want, next_index, n, kind):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while True:
            i = next_index[0]
            if i >= n:
                return
            next_index[0] = i + 1
            writer.write(make(i))
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split(" ")[1])
            length = 0
            for line in lines[1:]:
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            body = await reader.readexactly(length) if length else b""
            if status not in want:
                raise SystemExit(f"{kind} {i}: {status} {body[:200]!r}")
            if kind == "batch" and b"HTTP/1.1 204" not in body:
                raise SystemExit(f"$batch {i}: {body[:300]!r}")
    finally:
        writer.close()


async def run(args):
    sas = make_sas(ACCOUNT, KEY)
    if args.kind == "setup":
        r, w = await asyncio.open_connection("127.0.0.1", args.port)
        w.write(raw_request(args.port, "POST", "Tables", sas, json.dumps({"TableName": args.table}).encode()))
        head = await r.readuntil(b"\r\n\r\n")
        length = next((int(x.split(b":")[1]) for x in head.split(b"\r\n") if x.lower().startswith(b"content-length:")), 0)
        await r.readexactly(length)
        w.close()
        args.conns = 1
    make, want = builder(args.kind, args.port, args.table, sas, args.tag or int(time.time() * 1000), args.rows)
    next_index = [0]
    await asyncio.gather(*(connection(args.port, make, want, next_index, args.n, args.kind)
                           for _ in range(min(args.conns, max(args.n, 1)))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["setup", "get", "insert", "upsert", "merge", "batch"])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--conns", type=int, default=16)
    ap.add_argument("--table", default="prof")
    ap.add_argument("--rows", type=int, default=1000, help="entities the setup loaded (keys of get/upsert/merge)")
    ap.add_argument("--tag", type=int, default=0, help="key prefix of insert and batch (default: the time)")
    args = ap.parse_args()
    start = time.perf_counter()
    asyncio.run(run(args))
    el = time.perf_counter() - start
    print(f"{args.kind}: {args.n} requests over {args.conns} connections in {el:.3f} s")


if __name__ == "__main__":
    main()
