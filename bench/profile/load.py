#!/usr/bin/env python3
"""Fixed-count keep-alive load for profiling (callgrind/perf) tablestone.

Sends N requests of one kind over one keep-alive connection and checks every
status. Kinds: setup (create table `prof`, partition `pt` with --n entities),
get (point GET of existing keys), insert (POST with unique keys, return-no-
content), batch (a $batch of 100 inserts with unique keys per request, the
entity shape of bench/scale/load.lua: the bulk-load path), scale-get and
scale-insert (against a directory loaded by bench/scale/run.sh --keep, table
`big` of --count entities: GETs of random existing keys, and $batch requests
of 100 new keys between the existing ones of a random partition), upsert (PUT of existing keys), merge (MERGE If-Match * of existing keys), page (GET a 1000-entity page of partition pt), scan (filter on Num).
Authentication: the account SAS of bench/make_sas.py in the query string. --tls: over https:// (TLS 1.3,
--tls12 for 1.2), the certificate not checked.
Standard library only.
"""
import argparse
import http.client
import json
import os
import random
import ssl
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from make_sas import make_sas  # noqa: E402

ACCOUNT = "devstoreaccount1"
KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
       "K1SZFPTOtr/KBHBeksoGMGw==")
HEADERS = {"Accept": "application/json;odata=nometadata", "Content-Type": "application/json",
           "DataServiceVersion": "3.0", "x-ms-version": "2019-02-02"}


class OnePieceConnection(http.client.HTTPConnection):
    """Sends a request's headers and body in one send(), as the SDKs and wrk do. http.client sends them
    apart, and a server that sees headers without their body authenticates and routes them first
    (AdmitHeaders, server/http/session.cc): that is counted twice for about 40% of the writes, a cost wrk's
    and the SDKs' requests do not have."""

    def _send_output(self, message_body=None, encode_chunked=False):
        if isinstance(message_body, bytes):
            self._buffer.extend((b"", b""))
            head = b"\r\n".join(self._buffer)
            del self._buffer[:]
            return self.send(head + message_body)
        return super()._send_output(message_body, encode_chunked=encode_chunked)


class OnePieceTlsConnection(OnePieceConnection, http.client.HTTPSConnection):
    """OnePieceConnection over TLS (--tls): the server's certificate is not checked (a throwaway self-signed
    one made by callgrind.sh); TLS 1.3 unless --tls12."""


def entity(pk, rk, i):
    return {"PartitionKey": pk, "RowKey": rk, "Name": f"name-{rk}-abcdefghijklmnopqrstuvwxyz0123456789",
            "Num": i, "Big": str(i * 1000003), "Big@odata.type": "Edm.Int64", "Score": i / 7,
            "Active": i % 2 == 0, "When": "2024-01-01T00:00:00.000Z", "When@odata.type": "Edm.DateTime"}


def scale_entity(pk, i):
    """The entity of bench/scale/load.lua (10 properties, ~420 bytes of JSON)."""
    joined = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1577836800 + i % 100000000))
    return {"PartitionKey": pk, "RowKey": f"r{i:07d}", "Name": f"customer r{i:07d} of partition {pk}",
            "Email": f"user.{i}@example-{i % 97}.com", "City": ["Oslo", "Lima", "Pune", "Kobe", "Graz"][i % 5],
            "Age": 18 + i % 70, "Orders": str(i * 7919), "Orders@odata.type": "Edm.Int64",
            "Balance": (i % 100000) / 7, "Active": i % 3 != 0, "Joined": joined + "Z",
            "Joined@odata.type": "Edm.DateTime", "Id": f"{i % 4294967296:08x}-0000-4000-8000-{(i * 2654435761) % 4294967296:08x}0000",
            "Id@odata.type": "Edm.Guid", "Notes": f"note {i % 1000} lorem ipsum dolor sit amet, consectetur adipiscing"}


def batch_body(port, table, pk, first, row_keys=None):
    """One changeset of 100 inserts into partition pk, as bench/wrk/common.lua's batch_template: entities
    first..first+99, or those of `row_keys` (index, RowKey) when given."""
    head = ("--changeset_p\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
            f"POST http://127.0.0.1:{port}/{ACCOUNT}/{table} HTTP/1.1\r\n"
            "Content-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\n"
            "Prefer: return-no-content\r\nDataServiceVersion: 3.0\r\n\r\n")
    parts = ["--batch_p\r\nContent-Type: multipart/mixed; boundary=changeset_p\r\n\r\n"]
    for i, rk in row_keys or [(i, None) for i in range(first, first + 100)]:
        e = scale_entity(pk, i)
        if rk is not None:
            e["RowKey"] = rk
        parts.append(head + json.dumps(e, separators=(",", ":")) + "\r\n")
    parts.append("--changeset_p--\r\n--batch_p--\r\n")
    return "".join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["setup", "get", "insert", "batch", "scale-get", "scale-insert", "upsert", "merge",
                                     "page", "scan"])
    ap.add_argument("--port", type=int, default=20102)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--table", default="prof")
    ap.add_argument("--count", type=int, default=2000000, help="scale-*: entities of bench/scale/run.sh's table")
    ap.add_argument("--tls", action="store_true", help="https:// (certificate not checked)")
    ap.add_argument("--tls12", action="store_true", help="with --tls: TLS 1.2 instead of 1.3")
    ap.add_argument("--hold", metavar="PREFIX",
                    help="connect and send 20 point GETs first, then create PREFIX.ready and wait until "
                         "PREFIX.go exists before the N requests: a profiler zeroing its counters in between "
                         "counts the kept-alive connection's steady state, without its (TLS) handshake")
    args = ap.parse_args()
    sas = make_sas(ACCOUNT, KEY)
    if args.tls:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        tls.check_hostname = False
        tls.verify_mode = ssl.CERT_NONE
        if args.tls12:
            tls.maximum_version = ssl.TLSVersion.TLSv1_2
        conn = OnePieceTlsConnection("127.0.0.1", args.port, timeout=120, context=tls)
    else:
        conn = OnePieceConnection("127.0.0.1", args.port, timeout=120)
    t = args.table

    def req(method, path, body=None, extra=None, want=(200, 201, 204)):
        h = dict(HEADERS)
        h.update(extra or {})
        sep = "&" if "?" in path else "?"
        conn.request(method, f"/{ACCOUNT}/{path}{sep}{sas}", body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
        if r.status not in want:
            sys.exit(f"{method} {path}: {r.status} {data[:200]!r}")
        return data

    if args.hold:
        for i in range(20):
            req("GET", f"{t}(PartitionKey='pt',RowKey='r{i:07d}')")
        open(args.hold + ".ready", "w").close()
        while not os.path.exists(args.hold + ".go"):
            time.sleep(0.02)
    start = time.perf_counter()
    if args.kind == "setup":
        req("POST", "Tables", json.dumps({"TableName": t}), want=(201, 204, 409))
        for i in range(args.n):
            req("PUT", f"{t}(PartitionKey='pt',RowKey='r{i:07d}')", json.dumps(entity("pt", f"r{i:07d}", i)))
    elif args.kind == "get":
        for i in range(args.n):
            req("GET", f"{t}(PartitionKey='pt',RowKey='r{i % 1000:07d}')")
    elif args.kind == "insert":
        tag = int(time.time() * 1000)
        for i in range(args.n):
            pk = f"ins{tag}"
            req("POST", t, json.dumps(entity(pk, f"r{i:07d}", i)), {"Prefer": "return-no-content"})
    elif args.kind == "batch":
        tag = int(time.time() * 1000)
        for b in range(args.n):
            body = batch_body(args.port, t, f"b{tag}-{b}", b * 100)
            data = req("POST", "$batch", body, {"Content-Type": "multipart/mixed; boundary=batch_p"}, want=(202,))
            if b"HTTP/1.1 204" not in data:
                sys.exit(f"$batch {b}: {data[:300]!r}")
    elif args.kind in ("scale-get", "scale-insert"):
        # bench/scale/run.sh's layout: entity i is RowKey r<i> of partition p<i // psize>.
        psize = ((args.count + 9999) // 10000 + 99) // 100 * 100
        rnd = random.Random(7)  # the same keys for every binary compared
        tag = int(time.time())
        for b in range(args.n):
            if args.kind == "scale-get":
                i = rnd.randrange(args.count)
                req("GET", f"big(PartitionKey='p{i // psize:06d}',RowKey='r{i:07d}')")
                continue
            k = rnd.randrange(args.count // psize)
            picked = sorted(rnd.sample(range(k * psize, (k + 1) * psize), 100))
            # The suffix keeps every key new (a partition drawn twice, a rerun on the same directory)
            # and still between r<i> and r<i+1>.
            body = batch_body(args.port, "big", f"p{k:06d}", 0, [(i, f"r{i:07d}x{tag}.{b}") for i in picked])
            data = req("POST", "$batch", body, {"Content-Type": "multipart/mixed; boundary=batch_p"}, want=(202,))
            if b"HTTP/1.1 204" not in data:
                sys.exit(f"$batch: {data[-400:]!r}")
    elif args.kind == "upsert":  # Insert Or Replace of existing keys, as bench/wrk/upsert.lua
        for i in range(args.n):
            rk = f"r{i % 1000:07d}"
            req("PUT", f"{t}(PartitionKey='pt',RowKey='{rk}')", json.dumps(entity("pt", rk, i)))
    elif args.kind == "merge":  # Merge with If-Match *, as bench/wrk/merge.lua
        for i in range(args.n):
            rk = f"r{i % 1000:07d}"
            req("MERGE", f"{t}(PartitionKey='pt',RowKey='{rk}')", json.dumps(entity("pt", rk, i)),
                {"If-Match": "*"})
    elif args.kind == "page":
        for _ in range(args.n):
            req("GET", f"{t}()?$filter=PartitionKey%20eq%20'pt'&$top=1000")
    elif args.kind == "scan":
        for _ in range(args.n):
            req("GET", f"{t}()?$filter=Num%20ge%2049990")
    el = time.perf_counter() - start
    print(f"{args.kind}: {args.n} requests in {el:.3f} s = {args.n / el:.0f}/s")


if __name__ == "__main__":
    main()
