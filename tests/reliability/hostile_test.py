"""Hostile clients: every case gets a clear 4xx or a closed connection, the server keeps serving
others, and its memory stays bounded.

Run: TABLESTONE_BIN=build-rel/server/app/tablestone /usr/bin/python3 -m pytest -q tests/reliability/hostile_test.py

The server is started once for the module with short timeouts (read 2 s, idle 3 s) so the
slowloris and idle-connection cases finish quickly; after every case `server_ok` checks that a
normal signed request still succeeds.
"""

import json
import os
import resource
import select
import socket
import sys
import shutil
import tempfile
import time
import urllib.parse
from email.utils import formatdate

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tsclient  # noqa: E402

READ_TIMEOUT_MS = 2000
IDLE_TIMEOUT_MS = 3000
TABLE = "hostile"


@pytest.fixture(scope="module")
def server():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # inherited by the server too
    work = tempfile.mkdtemp(prefix="tablestone-hostile.")
    srv = tsclient.Server(tsclient.default_binary(), os.path.join(work, "data"),
                          extra_args=["--readTimeoutMs", str(READ_TIMEOUT_MS),
                                      "--idleTimeoutMs", str(IDLE_TIMEOUT_MS),
                                      # The idle-connection case opens 3,000 from one address; the
                                      # per-address cap has its own server (exhaustion_server).
                                      "--maxConnectionsPerAddress", "0"],
                          log_path=os.path.join(work, "server.log"))
    srv.start()
    c = tsclient.Client(srv.port)
    assert c.create_table(TABLE).status in (201, 204)
    assert c.insert(TABLE, {"PartitionKey": "p", "RowKey": "r", "v": 1}).status in (201, 204)
    c.close()
    yield srv
    code = srv.stop()
    assert code == 0, "exit code %r; log:\n%s" % (code, srv.log_tail())
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(autouse=True)
def server_ok(server):
    """After every case: the server is alive and a normal request on a new connection succeeds."""
    yield
    assert server.running(), "server died; log:\n" + server.log_tail()
    assert_serving(server)


def assert_serving(server):
    c = tsclient.Client(server.port, timeout=10)
    try:
        r = c.get(TABLE, "p", "r")
        assert r.status == 200, r
        assert r.json()["v"] == 1
    finally:
        c.close()


# ---- raw socket helpers ------------------------------------------------------------------------

def connect(server, timeout=10.0):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_until_close(s, limit=1 << 20):
    """Reads until the peer closes (or the socket timeout); returns (data, closed)."""
    data = b""
    try:
        while len(data) < limit:
            chunk = s.recv(65536)
            if not chunk:
                return data, True
            data += chunk
    except socket.timeout:
        return data, False
    except ConnectionResetError:
        return data, True
    return data, False


def status_of(data):
    if not data.startswith(b"HTTP/1.1 "):
        return None
    return int(data[9:12])


def body_of(data):
    return data.partition(b"\r\n\r\n")[2]


def send_and_read_until_close(server, raw):
    """Sends raw on a new connection; returns (everything read, whether the server closed)."""
    s = connect(server, timeout=10)
    try:
        send_all(s, raw)
        return read_until_close(s)
    finally:
        s.close()


def send_all(s, data):
    try:
        s.sendall(data)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False  # the server answered early and closed; its response may still be readable


def signed_raw(server, method, path, body=b"", extra_headers=None, content_type=None):
    """A complete signed request as bytes (path relative to the account, sent as given)."""
    full = "/" + tsclient.ACCOUNT + path
    hdrs = {"Host": "127.0.0.1:%d" % server.port, "x-ms-date": formatdate(usegmt=True),
            "x-ms-version": tsclient.API_VERSION, "Accept": tsclient.MINIMAL,
            "DataServiceVersion": "3.0"}
    if content_type:
        hdrs["Content-Type"] = content_type
    hdrs.update(extra_headers or {})
    hdrs["Authorization"] = tsclient.sign(method, full, hdrs)
    head = "%s %s HTTP/1.1\r\n" % (method, full)
    head += "".join("%s: %s\r\n" % kv for kv in hdrs.items())
    if body or method in ("POST", "PUT", "MERGE", "PATCH"):
        head += "Content-Length: %d\r\n" % len(body)
    return head.encode("latin-1") + b"\r\n" + body


def read_one_response(s):
    """Reads one HTTP response (headers and Content-Length body), or what arrives until the peer
    closes or the socket times out."""
    data = b""
    try:
        while True:
            head_end = data.find(b"\r\n\r\n")
            if head_end >= 0:
                length = 0
                for line in data[:head_end].split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip() or 0)
                if len(data) >= head_end + 4 + length:
                    return data
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk
    except (socket.timeout, ConnectionResetError):
        return data


def roundtrip(server, raw, timeout=10.0):
    """Sends raw bytes and reads the first response. The client keeps its sending side open, as
    HTTP clients do: a client that half-closes while its request waits for an executor lane
    is treated as gone (docs/compatibility.md, "Clients that leave")."""
    s = connect(server, timeout)
    try:
        send_all(s, raw)
        return read_one_response(s)
    finally:
        s.close()


def assert_4xx(data, code=None, status=None):
    st = status_of(data)
    assert st is not None, "no HTTP response: %r" % data[:300]
    assert 400 <= st < 500, "expected a 4xx, got %r" % data[:600]
    if status is not None:
        assert st == status, data[:600]
    if code is not None:
        body = body_of(data)
        assert code.encode() in body, "expected error code %s in %r" % (code, body[:400])


# ---- slow and idle clients ---------------------------------------------------------------------

def peer_closed(s):
    """True when the server has closed the connection (or sent something and closed)."""
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        return False
    try:
        data = s.recv(65536, socket.MSG_PEEK)
    except (ConnectionResetError, BrokenPipeError):
        return True
    if data:
        data, closed = read_until_close(s)
        assert status_of(data) in (None, 400, 408), data[:300]
        return True
    return True


def trickle(server, s, data, interval, max_seconds):
    """Sends `data` one byte per `interval` until the server closes; returns seconds until closed
    (None if it stayed open)."""
    t0 = time.monotonic()
    for i, byte in enumerate(data):
        if not send_all(s, bytes([byte])) or peer_closed(s):
            return time.monotonic() - t0
        if i == 5:
            assert_serving(server)  # others are served meanwhile
        time.sleep(interval)
        if time.monotonic() - t0 > max_seconds:
            break
    s.settimeout(max(1.0, max_seconds - (time.monotonic() - t0)))
    _, closed = read_until_close(s)
    return time.monotonic() - t0 if closed else None


def test_slowloris_headers_trickled(server):
    """Headers trickled one byte every 0.25 s never complete: closed at the read deadline."""
    s = connect(server)
    try:
        request = b"GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 400
        took = trickle(server, s, request, 0.25, READ_TIMEOUT_MS / 1000 + 8)
    finally:
        s.close()
    assert took is not None, "slowloris connection still open"
    assert took < READ_TIMEOUT_MS / 1000 + 3, "closed only after %.1f s" % took


def test_slow_body_is_cut_at_read_deadline(server):
    """Headers complete, body trickled: the whole-request deadline still closes the connection."""
    body = json.dumps({"PartitionKey": "slow", "RowKey": "1", "x": "y" * 100}).encode()
    raw = signed_raw(server, "POST", "/" + TABLE, body, content_type="application/json")
    head = raw[:len(raw) - len(body)]
    s = connect(server)
    try:
        send_all(s, head)
        took = trickle(server, s, body, 0.25, READ_TIMEOUT_MS / 1000 + 8)
    finally:
        s.close()
    assert took is not None and took < READ_TIMEOUT_MS / 1000 + 3, took
    c = tsclient.Client(server.port)
    assert c.get(TABLE, "slow", "1").status == 404  # the partial request was not executed
    c.close()


def test_thousands_of_idle_connections_are_cheap_and_reaped(server):
    # 3000, or what the descriptor limit allows (the server inherits the same limit).
    n = min(3000, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 200)
    rss_before = server.rss_kb()
    socks = []
    try:
        for _ in range(n):
            socks.append(connect(server, timeout=10))
        time.sleep(0.5)
        assert_serving(server)
        rss_during = server.rss_kb()
        grow_mb = (rss_during - rss_before) / 1024
        print("idle connections: %d open, RSS %d -> %d KiB (+%.1f MiB)" % (n, rss_before, rss_during, grow_mb))
        assert grow_mb < 100, "RSS grew %.1f MiB for %d idle connections" % (grow_mb, n)
        # The idle timeout closes them all.
        time.sleep(IDLE_TIMEOUT_MS / 1000 + 2)
        closed = 0
        for s in socks:
            s.settimeout(5)
            _, was_closed = read_until_close(s)
            closed += was_closed
        assert closed == n, "%d of %d idle connections still open after the idle timeout" % (n - closed, n)
    finally:
        for s in socks:
            s.close()
    time.sleep(0.5)
    rss_after = server.rss_kb()
    print("after close: RSS %d KiB" % rss_after)
    assert (rss_after - rss_before) / 1024 < 100


def test_half_open_request_with_short_body_is_closed(server):
    """Content-Length promises more than is sent, then the client waits: closed at the deadline."""
    raw = signed_raw(server, "POST", "/" + TABLE, b'{"PartitionKey":"h","RowKey":"1"}',
                     content_type="application/json")
    raw = raw.replace(b"Content-Length: 33", b"Content-Length: 5000")
    s = connect(server, timeout=READ_TIMEOUT_MS / 1000 + 10)
    t0 = time.monotonic()
    try:
        send_all(s, raw)
        data, closed = read_until_close(s)
        assert closed or status_of(data) in (400, 408)
    finally:
        s.close()
    assert time.monotonic() - t0 < READ_TIMEOUT_MS / 1000 + 6


# ---- oversized input ---------------------------------------------------------------------------

def test_oversized_header_gets_431_and_close(server):
    raw = (b"GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n")
    data = roundtrip(server, raw)
    assert_4xx(data)
    assert status_of(data) in (400, 431)


def test_many_headers(server):
    raw = b"GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\n" + b"".join(
        b"X-H%d: v\r\n" % i for i in range(20000)) + b"\r\n"
    assert_4xx(roundtrip(server, raw))


def test_oversized_body_gets_413_before_upload(server):
    """A declared body over the limit is refused from its headers: 413, no need to send it."""
    raw = signed_raw(server, "POST", "/" + TABLE, b"", content_type="application/json")
    raw = raw.replace(b"Content-Length: 0", b"Content-Length: %d" % (64 << 20))
    s = connect(server)
    try:
        send_all(s, raw)
        send_all(s, b"{" + b" " * 65536)
        data, _ = read_until_close(s)
    finally:
        s.close()
    assert_4xx(data, code="RequestBodyTooLarge", status=413)


def test_oversized_chunked_body_gets_413(server):
    raw = signed_raw(server, "POST", "/" + TABLE, b"", content_type="application/json")
    raw = raw.replace(b"Content-Length: 0\r\n", b"Transfer-Encoding: chunked\r\n")
    s = connect(server, timeout=20)
    try:
        send_all(s, raw)
        chunk = b"x" * (1 << 20)
        for _ in range(8):
            if not send_all(s, b"%x\r\n" % len(chunk) + chunk + b"\r\n"):
                break
        data, _ = read_until_close(s)
    finally:
        s.close()
    assert_4xx(data, status=413)


def flood_until_closed(s, prefix, filler, max_bytes, sample):
    """Sends prefix, then filler repeatedly until the peer stops taking it or max_bytes went out;
    calls sample() every few MiB. Returns the bytes of filler sent."""
    if not send_all(s, prefix):
        return 0
    sent = 0
    s.settimeout(2.0)
    while sent < max_bytes:
        try:
            n = s.send(filler)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            break
        sent += n
        if sent % (4 << 20) < n:
            sample()
    return sent


def test_endless_chunk_size_line_is_refused_with_bounded_memory(server):
    """Issue 22, finding 1: a chunk-size line (here a chunk extension) that never ends used to be
    buffered without limit (256 MiB sent grew the server by 411 MiB). The connection's read buffer
    now has a maximum (session.h ReadBufferLimit, 24 KiB by default): 400 and close at once."""
    raw = signed_raw(server, "POST", "/" + TABLE, b"", content_type="application/json")
    raw = raw.replace(b"Content-Length: 0\r\n", b"Transfer-Encoding: chunked\r\n")
    rss_before = server.rss_kb()
    peak = [rss_before]
    s = connect(server, timeout=20)
    try:
        sent = flood_until_closed(s, raw + b"1;ext=", b"a" * 65536, 64 << 20,
                                  lambda: peak.__setitem__(0, max(peak[0], server.rss_kb())))
        peak[0] = max(peak[0], server.rss_kb())
        s.settimeout(5)
        data, _ = read_until_close(s)
    finally:
        s.close()
    grow_mb = (peak[0] - rss_before) / 1024
    print("endless chunk line: %d bytes taken, RSS %d -> peak %d KiB" % (sent, rss_before, peak[0]))
    # The kernel's socket buffers take a few MiB before the server's close is seen.
    assert sent < (16 << 20), "the server kept reading %d bytes of one chunk-size line" % sent
    assert grow_mb < 8, "RSS grew %.1f MiB" % grow_mb
    assert status_of(data) == 400, data[:300]


def test_endless_trailer_is_refused(server):
    """A trailer section that never ends after the last chunk is bounded the same way."""
    raw = signed_raw(server, "POST", "/" + TABLE, b"", content_type="application/json")
    raw = raw.replace(b"Content-Length: 0\r\n", b"Transfer-Encoding: chunked\r\n")
    s = connect(server, timeout=20)
    try:
        sent = flood_until_closed(s, raw + b"2\r\n{}\r\n0\r\nX-T: ", b"b" * 65536, 64 << 20, lambda: None)
        s.settimeout(5)
        data, _ = read_until_close(s)
    finally:
        s.close()
    assert sent < (16 << 20), sent
    assert status_of(data) in (400, 431), data[:300]


def unsigned_post_head(server, length, extra=""):
    return ("POST /%s/%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nx-ms-version: %s\r\n"
            "Content-Type: application/json\r\nContent-Length: %d\r\n%s\r\n"
            % (tsclient.ACCOUNT, TABLE, server.port, tsclient.API_VERSION, length, extra)).encode()


def test_unauthenticated_body_is_refused_before_it_is_read(server):
    """Issue 22, finding 5: a request that fails authentication on its headers is answered 403 at
    once, without the server reading (or the client having to send) its body."""
    s = connect(server, timeout=10)
    try:
        send_all(s, unsigned_post_head(server, 4 << 20))
        data = read_one_response(s)  # no body sent at all
    finally:
        s.close()
    assert_4xx(data, status=403)
    assert b"connection: close" in data.lower()


def test_100_continue_only_after_authentication(server):
    s = connect(server, timeout=10)
    try:
        send_all(s, unsigned_post_head(server, 1000, "Expect: 100-continue\r\n"))
        data = read_one_response(s)
    finally:
        s.close()
    assert status_of(data) == 403, data[:300]  # not "100 Continue"
    body = b'{"PartitionKey":"c","RowKey":"1"}'
    raw = signed_raw(server, "POST", "/" + TABLE, body, content_type="application/json",
                     extra_headers={"Expect": "100-continue", "Prefer": "return-no-content"})
    head, _, _ = raw.partition(b"\r\n\r\n")
    s = connect(server, timeout=10)
    try:
        send_all(s, head + b"\r\n\r\n")
        first = read_one_response(s)
        assert status_of(first) == 100, first[:300]
        send_all(s, body)
        second = read_one_response(s)
    finally:
        s.close()
    assert status_of(second) in (201, 204), second[:300]


def test_unauthenticated_bodies_cost_no_memory(server):
    """50 unsigned connections each promising a 4 MiB body and sending 1 MiB of it: the bodies
    used to be buffered (199 MB for 50 connections); now each is refused on its headers and the
    rest is read and dropped."""
    rss_before = server.rss_kb()
    socks = []
    try:
        for _ in range(50):
            s = connect(server, timeout=10)
            send_all(s, unsigned_post_head(server, 4 << 20))
            socks.append(s)
        chunk = b"x" * 65536
        for _ in range(16):
            for s in socks:
                try:
                    s.setblocking(False)
                    s.send(chunk)
                except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                    pass
        time.sleep(0.5)
        grow_mb = (server.rss_kb() - rss_before) / 1024
        print("50 unauthenticated 4 MiB bodies: RSS +%.1f MiB" % grow_mb)
        assert grow_mb < 20, "RSS grew %.1f MiB" % grow_mb
    finally:
        for s in socks:
            s.close()


def test_garbage_request_line(server):
    for raw in (b"\x00\x01\x02\x03\r\n\r\n", b"GET\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                b"G\xffT / HTTP/1.1\r\nHost: x\r\n\r\n",
                b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
                b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"):
        data = roundtrip(server, raw)
        assert data == b"" or 400 <= (status_of(data) or 0) < 500, (raw, data[:300])


# ---- invalid UTF-8 -----------------------------------------------------------------------------

def send_signed(server, method, path, body=b"", **kw):
    return roundtrip(server, signed_raw(server, method, path, body, **kw))


def test_invalid_utf8_in_url_key(server):
    data = send_signed(server, "GET", "/%s(PartitionKey='%%FF%%FE',RowKey='r')" % TABLE)
    assert_4xx(data)


def test_invalid_utf8_in_json_values_and_keys(server):
    for body in (b'{"PartitionKey":"p","RowKey":"bad","v":"\xff\xfe"}',
                 b'{"PartitionKey":"\xc3","RowKey":"r2"}',
                 b'{"PartitionKey":"p","RowKey":"\xed\xa0\x80"}',  # encoded surrogate
                 b'{"PartitionKey":"p","RowKey":"r3","\xff":"name"}',
                 b'{"PartitionKey":"p","RowKey":"r4","v":"\\ud800"}'):  # lone surrogate escape
        data = send_signed(server, "POST", "/" + TABLE, body, content_type="application/json")
        assert_4xx(data, status=400)


def test_invalid_utf8_in_filter(server):
    q = "$filter=" + "PartitionKey%20eq%20'%FF'"
    data = send_signed(server, "GET", "/%s()?%s" % (TABLE, q))
    assert_4xx(data, status=400)


# ---- deep nesting ------------------------------------------------------------------------------

def test_deeply_nested_json(server):
    for body in (b"[" * 100000 + b"]" * 100000,
                 b'{"PartitionKey":"p","RowKey":"n","a":' + b'{"a":' * 50000 + b"1" + b"}" * 50001,
                 b"[" * 500000):
        data = send_signed(server, "POST", "/" + TABLE, body, content_type="application/json")
        assert_4xx(data, status=400)


def test_deeply_nested_filter(server):
    for f in ("(" * 5000 + "PartitionKey eq 'p'" + ")" * 5000,
              "not " * 5000 + "(PartitionKey eq 'p')",
              " and ".join("RowKey eq '%d'" % i for i in range(2000)),
              "(" * 200000):
        q = "$filter=" + urllib.parse.quote(f)
        data = send_signed(server, "GET", "/%s()?%s" % (TABLE, q))
        st = status_of(data)
        # Long filters may also hit the header limit (431) first; either is a clean refusal.
        assert st in (400, 414, 431), data[:400]


# ---- query options and continuation tokens -----------------------------------------------------

def test_huge_top(server):
    for top in ("1001", "1000000000", "99999999999999999999999", "-1", "1e3", "abc", ""):
        data = send_signed(server, "GET", "/%s()?$top=%s" % (TABLE, top))
        assert_4xx(data, status=400)
    data = send_signed(server, "GET", "/%s()?$top=1000" % TABLE)
    assert status_of(data) == 200


def test_forged_continuation_tokens(server):
    c = tsclient.Client(server.port)
    try:
        for npk, nrk in (("garbage", None), ("1!4!cA--", "!!!"), ("1!999!cA--", None),
                         ("2!4!cA--", "1!4!cA--"), ("1!4!" + "%FF%FE", None),
                         ("1!" + "9" * 30 + "!x", None), ("1!8!" + "_w--" * 2, None),  # base64 of 0xFF..
                         ("A" * 8000, None)):
            path = "/%s()?NextPartitionKey=%s" % (TABLE, npk)
            if nrk is not None:
                path += "&NextRowKey=" + nrk
            r = c.request("GET", path)
            assert 400 <= r.status < 500, (npk, nrk, r)
        # A well-formed token naming a key past every row: an empty page, not an error.
        import base64
        b = base64.b64encode("zzzz".encode()).decode().replace("=", "-").replace("+", "*").replace("/", "_")
        r = c.request("GET", "/%s()?NextPartitionKey=1!%d!%s" % (TABLE, len(b), b))
        assert r.status == 200 and r.json()["value"] == []
    finally:
        c.close()


# ---- truncated and malformed batches -----------------------------------------------------------

def batch_body(server, n=3, boundary="batch_b", changeset="changeset_c", pk="tb"):
    base = "http://127.0.0.1:%d/%s" % (server.port, tsclient.ACCOUNT)
    out = ["--" + boundary, "Content-Type: multipart/mixed; boundary=" + changeset, ""]
    for i in range(n):
        out += ["--" + changeset, "Content-Type: application/http", "Content-Transfer-Encoding: binary", "",
                "POST %s/%s HTTP/1.1" % (base, TABLE), "Content-Type: application/json",
                "Accept: application/json", "", json.dumps({"PartitionKey": pk, "RowKey": str(i)})]
    out += ["--%s--" % changeset, "--%s--" % boundary, ""]
    return "\r\n".join(out).encode()


def test_truncated_multipart_bodies(server):
    """A body cut anywhere gets 400, or a 202 whose change set either failed as a whole (nothing
    written) or held only the operations that arrived complete (the parser accepts a missing
    closing delimiter, as the service does); never a partially applied change set."""
    c = tsclient.Client(server.port)
    try:
        n = 3
        length = len(batch_body(server, n, pk="x"))
        for cut in sorted({1, 10, 40, 80, length // 3, length // 2, length - 30, length - 3}):
            pk = "tb%d" % cut
            full = batch_body(server, n, pk=pk)
            body = full[:cut]
            data = send_signed(server, "POST", "/$batch", body, content_type="multipart/mixed; boundary=batch_b")
            st = status_of(data)
            assert st in (400, 202), (cut, data[:500])
            rows = c.query_all(TABLE, "PartitionKey eq '%s'" % pk)
            if st == 400:
                assert rows == [], (cut, rows)
                continue
            parts = tsclient.parse_batch_parts(tsclient.Response(st, {}, body_of(data)))
            assert parts, (cut, data[:500])
            if all(200 <= p[0] < 300 for p in parts):
                complete = sum(1 for i in range(n)
                               if body.find(json.dumps({"PartitionKey": pk, "RowKey": str(i)}).encode()) != -1)
                assert len(rows) == len(parts) <= complete, (cut, len(rows), len(parts), complete)
            else:
                assert rows == [], "a failed change set left rows behind (cut %d): %s" % (cut, rows)
    finally:
        c.close()


def test_batch_with_wrong_boundary_and_huge_part_count(server):
    data = send_signed(server, "POST", "/$batch", batch_body(server),
                       content_type="multipart/mixed; boundary=nope")
    assert_4xx(data, status=400)
    big = batch_body(server, n=101, boundary="b2", changeset="c2")
    data = send_signed(server, "POST", "/$batch", big, content_type="multipart/mixed; boundary=b2")
    st = status_of(data)
    # The service refuses 101 operations: 400 with the error inside a 202 multipart or as a plain 400.
    assert st in (400, 202)
    if st == 202:
        assert b"400" in body_of(data)
    c = tsclient.Client(server.port)
    try:
        assert c.get(TABLE, "tb", "100").status == 404
    finally:
        c.close()


def test_pipelined_garbage_after_valid_request(server):
    ok = signed_raw(server, "GET", "/%s(PartitionKey='p',RowKey='r')" % TABLE)
    data = roundtrip(server, ok + b"\xff\xfe garbage \r\n\r\n")
    assert status_of(data) == 200
    second = data.find(b"HTTP/1.1 ", 10)
    if second != -1:
        assert 400 <= status_of(data[second:]) < 500


# ---- issue 22, round 2: header injection, smuggling, SAS ranges, page size ---------------------

def props_xml(cors_rules_xml):
    return ("<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties><Cors>%s</Cors>"
            "</StorageServiceProperties>" % cors_rules_xml).encode()


def set_cors(c, rules_xml):
    return c.request("PUT", "/?restype=service&comp=properties", body=props_xml(rules_xml),
                     content_type="application/xml", accept=None)


def test_cors_rule_with_crlf_is_refused_and_never_reaches_a_header(server):
    """Issue 22, finding 2: CR/LF written as character references in a CORS rule were stored and
    then sent raw in the Access-Control-* headers of every response to a request with Origin (even
    an unauthenticated 403), injecting Set-Cookie. Now Set Service Properties refuses the rule."""
    c = tsclient.Client(server.port)
    try:
        for field, value in (("ExposedHeaders", "x-a&#13;&#10;Set-Cookie: injected=1"),
                             ("AllowedHeaders", "x-a&#10;Set-Cookie: injected=1"),
                             ("AllowedOrigins", "http://a.example&#13;&#10;Set-Cookie: injected=1")):
            rule = {"AllowedOrigins": "*", "ExposedHeaders": "", "AllowedHeaders": ""}
            rule[field] = value
            xml = ("<CorsRule><AllowedOrigins>%s</AllowedOrigins><AllowedMethods>GET</AllowedMethods>"
                   "<MaxAgeInSeconds>5</MaxAgeInSeconds><ExposedHeaders>%s</ExposedHeaders>"
                   "<AllowedHeaders>%s</AllowedHeaders></CorsRule>"
                   % (rule["AllowedOrigins"], rule["ExposedHeaders"], rule["AllowedHeaders"]))
            r = set_cors(c, xml)
            assert r.status == 400, (field, r)
            assert r.header("x-ms-error-code") == "InvalidXmlNodeValue", (field, r)
            # Whatever is stored, no response header carries the injected line.
            raw = ("GET /%s/%s() HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: http://a.example\r\n"
                   "x-ms-version: %s\r\n\r\n" % (tsclient.ACCOUNT, TABLE, server.port, tsclient.API_VERSION))
            data = roundtrip(server, raw.encode())
            head = data.partition(b"\r\n\r\n")[0].lower()
            assert status_of(data) == 403, data[:300]
            assert b"injected" not in head and b"set-cookie" not in head, head
        # A valid rule still works.
        r = set_cors(c, "<CorsRule><AllowedOrigins>http://a.example</AllowedOrigins><AllowedMethods>GET"
                        "</AllowedMethods><MaxAgeInSeconds>5</MaxAgeInSeconds><ExposedHeaders>x-ms-meta-*"
                        "</ExposedHeaders><AllowedHeaders>x-ms-meta-abc,x-ms-*</AllowedHeaders></CorsRule>")
        assert r.status == 202, r
    finally:
        set_cors(c, "")
        c.close()


def smuggled_insert(server, rk):
    body = json.dumps({"PartitionKey": "smuggled", "RowKey": rk}).encode()
    return signed_raw(server, "POST", "/" + TABLE, body, content_type="application/json",
                      extra_headers={"Prefer": "return-no-content"})


def assert_not_inserted(server, rk):
    c = tsclient.Client(server.port)
    try:
        assert c.get(TABLE, "smuggled", rk).status == 404, "the smuggled request ran"
    finally:
        c.close()


@pytest.mark.parametrize("name,framing", [
    # Beast framed these by Content-Length (or as bodiless), so the bytes after them ran as a
    # request of their own.
    ("te-not-final-chunked", {"Transfer-Encoding": "chunked, identity", "Content-Length": "5"}),
    ("te-identity", {"Transfer-Encoding": "identity"}),
    ("te-unknown", {"Transfer-Encoding": "gzip"}),
    ("te-and-cl", {"Content-Length": "5", "Transfer-Encoding": "chunked"}),
    ("cl-twice", {"Content-Length": "5", "content-length": "5"}),
])
def test_request_smuggling_is_refused(server, name, framing):
    """Issue 22, finding 3 (RFC 9112 section 6): 400, the connection closes, and the request
    hidden behind the first one never runs."""
    outer = signed_raw(server, "GET", "/%s(PartitionKey='p',RowKey='r')" % TABLE)
    head = outer.partition(b"\r\n\r\n")[0]
    extra = b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in framing.items())
    raw = head + b"\r\n" + extra + b"\r\n" + b"0\r\n\r\n" + smuggled_insert(server, name)
    data, closed = send_and_read_until_close(server, raw)
    assert status_of(data) == 400, data[:400]
    assert data.count(b"HTTP/1.1 ") == 1, data[:800]  # nothing answered after the refusal
    assert closed
    assert b"connection: close" in data.lower()
    assert_not_inserted(server, name)


@pytest.mark.parametrize("host_lines", [
    b"",  # no Host
    b"Host: 127.0.0.1\r\nHost: evil.example\r\n",
    b"Host: evil.example/\"x\r\n",
    b"Host: a b\r\n",
])
def test_host_must_be_one_valid_value(server, host_lines):
    """Issue 22, finding 3 and 'also seen': an HTTP/1.1 request needs exactly one Host, and a Host
    that is not host[:port] (it was reflected into odata.metadata URLs) is refused."""
    raw = (b"GET /%s/Tables HTTP/1.1\r\n" % tsclient.ACCOUNT.encode()) + host_lines + b"\r\n"
    data, closed = send_and_read_until_close(server, raw)
    assert status_of(data) == 400, data[:400]
    assert closed


SAS_TABLE = "sasrange"


def service_sas(table, sp="r", spk="", srk="", epk="", erk="", sv=tsclient.API_VERSION):
    import base64
    import hashlib
    import hmac
    se = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    to_sign = "\n".join([sp, "", se, "/table/%s/%s" % (tsclient.ACCOUNT, table.lower()), "", "", "", sv,
                         spk, srk, epk, erk])
    sig = base64.b64encode(hmac.new(base64.b64decode(tsclient.ACCOUNT_KEY), to_sign.encode(),
                                    hashlib.sha256).digest()).decode()
    q = {"sv": sv, "tn": table, "sp": sp, "se": se, "sig": sig}
    for k, v in (("spk", spk), ("srk", srk), ("epk", epk), ("erk", erk)):
        if v:
            q[k] = v
    return urllib.parse.urlencode(q, quote_via=urllib.parse.quote)


def decode_continuation(token):
    import base64
    _, _, b = token.split("!", 2)
    return base64.b64decode(b.replace("-", "=").replace("*", "+").replace("_", "/")).decode()


def encode_continuation(key):
    import base64
    b = base64.b64encode(key.encode()).decode().replace("=", "-").replace("+", "*").replace("/", "_")
    return "1!%d!%s" % (len(b), b)


def sas_get(server, path_and_query):
    raw = ("GET /%s%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nx-ms-version: %s\r\nAccept: %s\r\n\r\n"
           % (tsclient.ACCOUNT, path_and_query, server.port, tsclient.API_VERSION, tsclient.MINIMAL))
    data = roundtrip(server, raw.encode())
    head, _, body = data.partition(b"\r\n\r\n")
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()
    return status_of(data), headers, body


@pytest.fixture(scope="module")
def sas_table(server):
    c = tsclient.Client(server.port)
    try:
        assert c.create_table(SAS_TABLE).status in (201, 204)
        for pk in ("a", "b", "c", "d"):
            for rk in ("1", "2", "3"):
                assert c.insert(SAS_TABLE, {"PartitionKey": pk, "RowKey": rk}).status in (201, 204)
    finally:
        c.close()
    return SAS_TABLE


def test_sas_key_range_bounds_data_and_continuations(server, sas_table):
    """Issue 22, finding 4: with a range SAS (spk=b, srk=2, epk=c, erk=2) no key outside the range
    appears in a body or in the x-ms-continuation-* headers, with any $top (the continuation of
    the last in-range page used to name c/3, the first row after the range)."""
    inside = [("b", "2"), ("b", "3"), ("c", "1"), ("c", "2")]
    sas = service_sas(sas_table, spk="b", srk="2", epk="c", erk="2")
    for top in (1, 2, 3, 4, 5, None):
        seen = []
        cont = ""
        for _ in range(20):
            q = sas + ("&$top=%d" % top if top else "") + cont
            status, headers, body = sas_get(server, "/%s()?%s" % (sas_table, q))
            assert status == 200, body[:300]
            seen += [(e["PartitionKey"], e["RowKey"]) for e in json.loads(body)["value"]]
            npk = headers.get("x-ms-continuation-nextpartitionkey")
            if not npk:
                break
            nrk = headers.get("x-ms-continuation-nextrowkey", "")
            key = (decode_continuation(npk), decode_continuation(nrk) if nrk else "")
            assert key in inside, ("continuation outside the SAS range", top, key)
            cont = "&NextPartitionKey=%s&NextRowKey=%s" % (urllib.parse.quote(npk), urllib.parse.quote(nrk))
        assert seen == inside, (top, seen)


def test_sas_continuation_outside_the_range_is_an_empty_final_page(server, sas_table):
    """A forged continuation token past the SAS range: an empty page and no continuation
    (docs/compatibility.md, "SAS key ranges"); one before the range starts at the range."""
    sas = service_sas(sas_table, spk="b", epk="c")
    past = "&NextPartitionKey=%s&NextRowKey=%s" % (encode_continuation("d"), encode_continuation("1"))
    status, headers, body = sas_get(server, "/%s()?%s%s" % (sas_table, sas, past))
    assert status == 200, body[:300]
    assert json.loads(body)["value"] == []
    assert "x-ms-continuation-nextpartitionkey" not in headers
    before = "&NextPartitionKey=%s&NextRowKey=%s" % (encode_continuation("a"), encode_continuation("1"))
    status, headers, body = sas_get(server, "/%s()?%s%s&$top=1" % (sas_table, sas, before))
    assert status == 200
    assert [(e["PartitionKey"], e["RowKey"]) for e in json.loads(body)["value"]] == [("b", "1")]
    assert decode_continuation(headers["x-ms-continuation-nextpartitionkey"]) == "b"


def rows_scanned(server):
    """The server's tablestone_query_rows_scanned_total for the test account (docs/observability.md)."""
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    c.request("GET", "/_tablestone/metrics")
    text = c.getresponse().read().decode()
    c.close()
    for line in text.splitlines():
        if line.startswith("tablestone_query_rows_scanned_total{") and 'account="%s"' % tsclient.ACCOUNT in line:
            return int(float(line.rsplit(" ", 1)[1]))
    raise AssertionError("no rows_scanned counter for %s in /metrics" % tsclient.ACCOUNT)


def test_sas_key_range_query_costs_what_the_key_filtered_query_costs(server):
    """Issue 22, finding 4: a range SAS bounds the scan itself. Over 40 partitions x 25 rows, a SAS
    for partitions k10..k12 reads the rows of those partitions only, no more than the same query
    written as a PartitionKey filter with account-key auth (tablestone_query_rows_scanned_total)."""
    table = "sasrangecost"
    c = tsclient.Client(server.port)
    try:
        assert c.create_table(table).status in (201, 204)
        for p in range(40):
            ops = [("POST", {"PartitionKey": "k%02d" % p, "RowKey": "%03d" % r}, None) for r in range(25)]
            r, parts = c.batch(table, ops)
            assert r.status == 202 and all(st == 201 or st == 204 for st, _ in parts), (r, parts[:2])
        before = rows_scanned(server)
        keyed = c.query_all(table, "PartitionKey ge 'k10' and PartitionKey le 'k12'")
        keyed_cost = rows_scanned(server) - before
    finally:
        c.close()
    assert len(keyed) == 75
    sas = service_sas(table, spk="k10", epk="k12")
    before = rows_scanned(server)
    status, headers, body = sas_get(server, "/%s()?%s" % (table, sas))
    sas_cost = rows_scanned(server) - before
    assert status == 200, body[:300]
    assert "x-ms-continuation-nextpartitionkey" not in headers
    assert [(e["PartitionKey"], e["RowKey"]) for e in json.loads(body)["value"]] == \
        [(e["PartitionKey"], e["RowKey"]) for e in keyed]
    print("range SAS scanned %d rows, key-filtered query %d, table 1000" % (sas_cost, keyed_cost))
    assert sas_cost <= keyed_cost, (sas_cost, keyed_cost)
    assert sas_cost <= 76, sas_cost  # the range's 75 rows (+1 to see its end), not the table's 1,000


def test_sas_with_unknown_signed_version_is_refused(server, sas_table):
    """Issue 22, 'also seen': sv must be a version the service knows (403 AuthenticationFailed)."""
    for sv in ("2099-01-01", "9999-99-99", "banana"):
        sas = service_sas(sas_table, sv=sv)
        status, headers, body = sas_get(server, "/%s()?%s" % (sas_table, sas))
        assert status == 403, (sv, body[:300])
        assert headers.get("x-ms-error-code") == "AuthenticationFailed", (sv, headers)
    status, _, body = sas_get(server, "/%s()?%s" % (sas_table, service_sas(sas_table)))
    assert status == 200, body[:300]


def test_pages_of_control_characters_stay_near_4_mib(server):
    """Issue 22, finding 6: the page limit counted stored bytes, so strings of control characters
    (six bytes each in JSON) made pages of 20+ MB. Now a page's body stays under 4.5 MiB."""
    table = "ctlpage"
    c = tsclient.Client(server.port, timeout=60)
    try:
        assert c.create_table(table).status in (201, 204)
        value = "\x01" * 32000
        for i in range(10):
            entity = {"PartitionKey": "p", "RowKey": "%02d" % i}
            for j in range(6):
                entity["s%d" % j] = value
            assert c.insert(table, entity).status in (201, 204)
        rows, pages, cont = 0, 0, {}
        while True:
            qs = urllib.parse.urlencode(cont)
            r = c.request("GET", "/%s()%s" % (table, "?" + qs if qs else ""))
            assert r.status == 200, r
            pages += 1
            assert len(r.body) <= 4.5 * (1 << 20), "page of %d bytes" % len(r.body)
            rows += len(r.json()["value"])
            npk = r.header("x-ms-continuation-NextPartitionKey")
            if not npk:
                break
            cont = {"NextPartitionKey": npk, "NextRowKey": r.header("x-ms-continuation-NextRowKey")}
        assert rows == 10
        assert pages >= 3
    finally:
        c.delete_table(table)
        c.close()


def point_get_p99_ms(server, n=300):
    """p99 of n signed point GETs over one keep-alive connection, in ms."""
    c = tsclient.Client(server.port)
    try:
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            assert c.get(TABLE, "p", "r").status == 200
            times.append((time.perf_counter() - t0) * 1000)
    finally:
        c.close()
    times.sort()
    return times[int(len(times) * 0.99) - 1]


class PortOnly:
    """What the attack helpers need of the server fixture, safe to hand to another process."""

    def __init__(self, port):
        self.port = port


def attack_endless_chunk_lines(server, stop):
    raw = signed_raw(server, "POST", "/" + TABLE, b"", content_type="application/json")
    raw = raw.replace(b"Content-Length: 0\r\n", b"Transfer-Encoding: chunked\r\n")
    while not stop.is_set():
        s = connect(server, timeout=5)
        try:
            flood_until_closed(s, raw + b"1;ext=", b"a" * 65536, 8 << 20, lambda: None)
        finally:
            s.close()


def attack_split_headers(server, stop):
    """200 connections, each sending its header one byte at a time."""
    socks = []
    try:
        for _ in range(200):
            s = connect(server, timeout=5)
            s.setblocking(False)
            socks.append([s, b"GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000])
        while not stop.is_set():
            for entry in socks:
                s, rest = entry
                if rest:
                    try:
                        s.send(rest[:1])
                        entry[1] = rest[1:]
                    except (BlockingIOError, BrokenPipeError, ConnectionResetError, OSError):
                        entry[1] = b""
            time.sleep(0.05)
    finally:
        for s, _ in socks:
            s.close()


def attack_unauthenticated_bodies(server, stop):
    """A new unsigned connection every 20 ms, each promising 4 MiB and sending up to 1 MiB: about
    50 MiB/s of bodies the server must refuse (the finding: 50 such connections held 199 MB)."""
    chunk = b"x" * 65536
    while not stop.wait(0.02):
        s = connect(server, timeout=5)
        try:
            send_all(s, unsigned_post_head(server, 4 << 20))
            s.setblocking(False)
            for _ in range(16):
                try:
                    s.send(chunk)
                except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                    break
        finally:
            s.close()


@pytest.mark.parametrize("attack", [attack_endless_chunk_lines, attack_split_headers,
                                    attack_unauthenticated_bodies],
                         ids=["endless-chunk-line", "split-headers", "unauthenticated-bodies"])
def test_normal_client_latency_during_attack(server, attack):
    """Issue 22: during each pre-authentication attack a normal client's point-GET p99 stays
    within 2x of its unloaded p99, or 10 ms above it where that is more: unloaded p99 is a
    fraction of a millisecond here, and on a 2-core machine the attacking process takes a core
    and the server's I/O thread shares the other with the data it must read and drop. Before
    the fixes the endless-chunk flood took p99 to ~500 ms and hundreds of MiB. Memory stays
    within the bounds of docs/reliability.md ("Memory bounds")."""
    import multiprocessing
    if os.environ.get("ASAN_OPTIONS") or os.environ.get("TSAN_OPTIONS"):
        pytest.skip("latency under a sanitizer build measures the sanitizer, not the server")
    alone = min(point_get_p99_ms(server), point_get_p99_ms(server))
    rss_before = server.rss_kb()
    # The attacker is another process: in a thread it would hold this process's GIL and slow the
    # measuring client instead of the server.
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    attacker = ctx.Process(target=attack, args=(PortOnly(server.port), stop), daemon=True)
    attacker.start()
    try:
        time.sleep(0.3)
        # The better of two, as for `alone`: one scheduler hiccup on a loaded 2-core machine is
        # not the server (a CI run under three parallel builds saw 20 ms against an 18 ms bound);
        # a real stall (the ~500 ms before the fixes) shows in both.
        during = min(point_get_p99_ms(server), point_get_p99_ms(server))
        grow_mb = (server.rss_kb() - rss_before) / 1024
    finally:
        stop.set()
        attacker.join(30)
        if attacker.is_alive():
            attacker.kill()
    print("%s: p99 alone %.2f ms, during %.2f ms, RSS +%.1f MiB" % (attack.__name__, alone, during, grow_mb))
    assert during <= max(2 * alone, alone + 10.0), "p99 %.2f ms during the attack, %.2f ms alone" % (during, alone)
    assert grow_mb < 20, "RSS grew %.1f MiB" % grow_mb


# ---- admin routes with two accounts (issue 30 items 1, 2, 3, 6, 8; docs/admin-api.md) -----------

ACCT1, KEY1 = "acct1", "a2V5LW9uZS1mb3ItdGVzdHMtb25seS0wMDAwMDAwMDAwMDA="
ACCT2, KEY2 = "acct2", "a2V5LXR3by1mb3ItdGVzdHMtb25seS0xMTExMTExMTExMTE="
ADMIN, ADMIN_KEY = "tablestone-admin", "YWRtaW4ta2V5LWZvci10ZXN0cy1vbmx5LTIyMjIyMjIyMjI="
SECRET_SIG = "U2VjcmV0U2lnbmF0dXJlT2ZUaGVIb3N0aWxlVGVzdA%3D%3D"


@pytest.fixture(scope="module")
def admin_srv():
    """Two configured accounts (AZURITE_ACCOUNTS), --adminApi, a separate --adminKey, the access
    log and the debug log on, and a trace with bodies from the start."""
    import base64 as b64
    work = tempfile.mkdtemp(prefix="tablestone-hostile-admin.")
    os.chmod(work, 0o700)
    trace_dir = os.path.join(work, "traces")
    os.mkdir(trace_dir)
    srv = tsclient.Server(tsclient.default_binary(), os.path.join(work, "data"),
                          extra_args=["--adminApi", "--accessLog=true", "--logLevel", "debug",
                                      "--snapshotDir", os.path.join(work, "snapshots"), "--traceDir", trace_dir,
                                      "--trace", os.path.join(trace_dir, "start.jsonl"), "--traceBodies"],
                          log_path=os.path.join(work, "server.log"))
    saved = {k: os.environ.get(k) for k in ("AZURITE_ACCOUNTS", "TABLESTONE_ADMIN_KEY")}
    os.environ["AZURITE_ACCOUNTS"] = "%s:%s;%s:%s" % (ACCT1, KEY1, ACCT2, KEY2)
    os.environ["TABLESTONE_ADMIN_KEY"] = ADMIN_KEY
    try:
        srv.start()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert b64.b64decode(KEY1) and b64.b64decode(KEY2)
    srv.work = work
    srv.trace_dir = trace_dir
    yield srv
    code = srv.stop()
    assert code == 0, "exit code %r; log:\n%s" % (code, srv.log_tail())
    shutil.rmtree(work, ignore_errors=True)


def admin_signed(method, target, body=b"", account=ACCT1, key=KEY1, host=None, port=None,
                 content_type=None):
    """(headers, body) of an admin request signed as docs/admin-api.md says."""
    import base64 as b64
    import hashlib
    import hmac
    if not isinstance(body, (bytes, bytearray)):
        body = json.dumps(body).encode()
        content_type = content_type or "application/json"
    split = urllib.parse.urlsplit(target)
    digest = b64.b64encode(hashlib.sha256(body).digest()).decode()
    hdrs = {"Host": host or "127.0.0.1:%d" % port, "x-ms-date": formatdate(usegmt=True),
            "x-ms-content-sha256": digest, "Content-Length": str(len(body))}
    if content_type:
        hdrs["Content-Type"] = content_type
    resource = "/" + account + split.path
    last = None
    for name, value in sorted((k.lower(), v) for k, v in urllib.parse.parse_qsl(split.query,
                                                                                 keep_blank_values=True)):
        resource += ("," if name == last else "\n" + name + ":") + value
        last = name
    to_sign = "\n".join([method, content_type or "", hdrs["x-ms-date"], digest, resource])
    sig = b64.b64encode(hmac.new(b64.b64decode(key), to_sign.encode(), hashlib.sha256).digest()).decode()
    hdrs["Authorization"] = "SharedKey %s:%s" % (account, sig)
    return hdrs, body


def admin_call(srv, method, target, body=b"", account=ACCT1, key=KEY1, host=None, send_target=None,
               send_body=None):
    """Signs `target` and `body`, sends `send_target` / `send_body` (a replay) when given."""
    import http.client
    hdrs, data = admin_signed(method, target, body, account, key, host, srv.port)
    if send_body is not None:
        data = send_body
        hdrs["Content-Length"] = str(len(data))
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        c.putrequest(method, send_target or target, skip_host=True, skip_accept_encoding=True)
        for k, v in hdrs.items():
            c.putheader(k, v)
        c.endheaders(data)
        r = c.getresponse()
        payload = r.read()
    finally:
        c.close()
    try:
        return r.status, json.loads(payload) if payload else None
    except ValueError:
        return r.status, payload


def table_call(srv, method, account, key, path, body=None, host=None):
    """A Table API request of `account` (path below the account)."""
    import http.client
    full = "/" + account + path
    data = json.dumps(body).encode() if body is not None else b""
    hdrs = {"Host": host or "127.0.0.1:%d" % srv.port, "x-ms-date": formatdate(usegmt=True),
            "x-ms-version": tsclient.API_VERSION, "Accept": tsclient.MINIMAL, "DataServiceVersion": "3.0"}
    if body is not None:
        hdrs["Content-Type"] = "application/json"
    hdrs["Authorization"] = tsclient.sign(method, full, hdrs, account=account, key=key)
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        c.request(method, full, body=data if method != "GET" else None, headers=hdrs)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def acct2_tables(srv):
    status, body = table_call(srv, "GET", ACCT2, KEY2, "/Tables")
    assert status == 200, body
    return sorted(t["TableName"] for t in json.loads(body)["value"])


def test_one_account_cannot_fault_or_slow_another(admin_srv):
    table_call(admin_srv, "POST", ACCT2, KEY2, "/Tables", {"TableName": "victim"})
    for rule in ({"match": {"account": ACCT2}, "action": "serverBusy"},
                 {"action": "serverBusy"},  # every account
                 {"match": {"account": ACCT2}, "action": "latencyBefore", "latencyMs": 5000},
                 [{"match": {"account": ACCT1}, "action": "serverBusy"},
                  {"match": {"account": ACCT2}, "action": "serverBusy"}],
                 {"rules": [{"match": {"account": ACCT1}, "action": "serverBusy"}], "seed": 1}):
        assert admin_call(admin_srv, "POST", "/_tablestone/faults", rule)[0] == 403, rule
    for realistic in ({"enabled": True, "account": ACCT2}, {"enabled": True},
                      {"enabled": True, "account": ACCT1, "latencyMedianMs": 5000}):
        assert admin_call(admin_srv, "POST", "/_tablestone/faults/realistic", realistic)[0] == 403, realistic
    t0 = time.monotonic()
    assert acct2_tables(admin_srv) == ["victim"]
    assert time.monotonic() - t0 < 1.0
    # Its own rules, yes; they touch only acct1.
    status, body = admin_call(admin_srv, "POST", "/_tablestone/faults",
                              {"id": "mine", "match": {"account": ACCT1}, "action": "serverBusy"})
    assert status == 201, body
    assert table_call(admin_srv, "GET", ACCT1, KEY1, "/Tables")[0] == 503
    assert acct2_tables(admin_srv) == ["victim"]
    assert admin_call(admin_srv, "DELETE", "/_tablestone/faults?id=mine")[0] == 200


def test_one_account_cannot_see_or_delete_anothers_rules(admin_srv):
    status, body = admin_call(admin_srv, "POST", "/_tablestone/faults",
                              {"id": "theirs", "action": "serverBusy",
                               "match": {"account": ACCT2, "table": "nosuch"}}, account=ACCT2, key=KEY2)
    assert status == 201, body
    try:
        assert admin_call(admin_srv, "DELETE", "/_tablestone/faults?id=theirs")[0] == 404
        assert admin_call(admin_srv, "DELETE", "/_tablestone/faults")[0] == 200
        status, body = admin_call(admin_srv, "GET", "/_tablestone/faults")
        assert status == 200 and body["rules"] == []
        status, body = admin_call(admin_srv, "GET", "/_tablestone/faults", account=ACCT2, key=KEY2)
        assert [r["id"] for r in body["rules"]] == ["theirs"]
    finally:
        assert admin_call(admin_srv, "DELETE", "/_tablestone/faults", account=ADMIN, key=ADMIN_KEY)[0] == 200


def test_one_account_cannot_reset_trace_or_snapshot(admin_srv):
    table_call(admin_srv, "POST", ACCT2, KEY2, "/Tables", {"TableName": "victim"})
    assert admin_call(admin_srv, "POST", "/_tablestone/reset")[0] == 403
    assert admin_call(admin_srv, "POST", "/_tablestone/reset?account=" + ACCT2)[0] == 403
    assert "victim" in acct2_tables(admin_srv)
    status, body = admin_call(admin_srv, "POST", "/_tablestone/trace",
                              {"enabled": True, "file": "mine.jsonl", "bodies": True})
    assert status == 403, body
    assert not os.path.exists(os.path.join(admin_srv.trace_dir, "mine.jsonl"))
    elsewhere = os.path.join(admin_srv.work, "elsewhere")
    assert admin_call(admin_srv, "POST", "/_tablestone/snapshot?to=" + urllib.parse.quote(elsewhere))[0] == 403
    assert admin_call(admin_srv, "POST", "/_tablestone/snapshot?to=mine")[0] == 403
    # Its own account: yes.
    table_call(admin_srv, "POST", ACCT1, KEY1, "/Tables", {"TableName": "mine"})
    status, body = admin_call(admin_srv, "POST", "/_tablestone/reset?account=" + ACCT1)
    assert status == 200 and body["accounts"] == [ACCT1], body
    assert "victim" in acct2_tables(admin_srv)


def test_snapshot_and_trace_files_stay_in_their_directories(admin_srv):
    elsewhere = os.path.join(admin_srv.work, "elsewhere")
    for to in (elsewhere, "../elsewhere", "/tmp/tablestone-hostile-snap", "a/b", ".hidden",
               os.path.join(admin_srv.data_dir, "inside")):
        status, body = admin_call(admin_srv, "POST", "/_tablestone/snapshot?to=" + urllib.parse.quote(to, safe=""),
                                  account=ADMIN, key=ADMIN_KEY)
        assert status == 400, (to, body)
    assert not os.path.exists(elsewhere) and not os.path.exists("/tmp/tablestone-hostile-snap")
    victim = os.path.join(admin_srv.work, "victim")
    with open(victim, "w") as f:
        f.write("keep\n")
    os.symlink(victim, os.path.join(admin_srv.trace_dir, "link.jsonl"))
    current = os.path.join(admin_srv.data_dir, "CURRENT")
    for file in (victim, "../victim", current, os.path.expanduser("~/.bashrc"), "link.jsonl", "a/b"):
        status, body = admin_call(admin_srv, "POST", "/_tablestone/trace", {"enabled": True, "file": file},
                                  account=ADMIN, key=ADMIN_KEY)
        assert status == 400, (file, body)
    with open(victim) as f:
        assert f.read() == "keep\n"
    # The admin's snapshot: a plain name, in --snapshotDir, with the data directory's mode.
    status, body = admin_call(admin_srv, "POST", "/_tablestone/snapshot?to=snap1", account=ADMIN, key=ADMIN_KEY)
    assert status == 201, body
    assert body["snapshot"] == os.path.join(admin_srv.work, "snapshots", "snap1")
    assert os.stat(body["snapshot"]).st_mode & 0o777 == os.stat(admin_srv.data_dir).st_mode & 0o777


def test_replays_with_another_query_or_body_fail(admin_srv):
    table_call(admin_srv, "POST", ACCT2, KEY2, "/Tables", {"TableName": "victim"})
    # Even the admin's reset of one account cannot be replayed as a reset of all.
    for replay in ("/_tablestone/reset", "/_tablestone/reset?account=" + ACCT2,
                   "/_tablestone/reset?account=%s&account=%s" % (ACCT1, ACCT2)):
        status, body = admin_call(admin_srv, "POST", "/_tablestone/reset?account=" + ACCT1, account=ADMIN,
                                  key=ADMIN_KEY, send_target=replay)
        assert status == 403, (replay, body)
    assert "victim" in acct2_tables(admin_srv)
    signed = json.dumps({"id": "own", "action": "serverBusy",
                         "match": {"account": ACCT1, "table": "nosuch"}}).encode()
    swapped = json.dumps({"id": "own", "action": "serverBusy", "match": {"account": ACCT2}}).encode()
    status, body = admin_call(admin_srv, "POST", "/_tablestone/faults", signed, send_body=swapped)
    assert status in (400, 403), body
    status, body = admin_call(admin_srv, "GET", "/_tablestone/faults", account=ADMIN, key=ADMIN_KEY)
    assert body["rules"] == []
    status, body = admin_call(admin_srv, "POST", "/_tablestone/trace", {"enabled": False}, account=ADMIN,
                              key=ADMIN_KEY, send_body=json.dumps({"enabled": True, "file": "x.jsonl"}).encode())
    assert status in (400, 403), body
    assert not os.path.exists(os.path.join(admin_srv.trace_dir, "x.jsonl"))


def test_rebinding_hosts_are_refused_on_ui_admin_and_details(admin_srv):
    import http.client
    for path in ("/_tablestone/ui/", "/_tablestone/ui/config.json", "/_tablestone/health?detail=1",
                 "/_tablestone/metrics"):
        for host, want in (("rebind.example:%d" % admin_srv.port, 403), ("localhost:%d" % admin_srv.port, 200)):
            c = http.client.HTTPConnection("127.0.0.1", admin_srv.port, timeout=10)
            c.putrequest("GET", path, skip_host=True)
            c.putheader("Host", host)
            c.endheaders()
            r = c.getresponse()
            body = r.read()
            c.close()
            assert r.status == want, (path, host, body[:200])
            if want == 403:
                assert ACCT1.encode() not in body and admin_srv.data_dir.encode() not in body
    status, body = admin_call(admin_srv, "POST", "/_tablestone/reset?account=" + ACCT1,
                              host="rebind.example:%d" % admin_srv.port)
    assert status == 403, body


def test_no_secret_reaches_the_logs_or_the_trace(admin_srv):
    secrets = ["U2VjcmV0U2lnbmF0dXJl", "c2VjcmV0LWF1dGg", "Y29va2llLXNlY3JldA"]
    # SAS signatures under every spelling of the name (refused: they sign nothing).
    for name in ("sig", "%73ig", "si%67", "SIG"):
        table_call(admin_srv, "GET", ACCT1, KEY1, "/Tables?sv=2019-02-02&%s=%s&se=2030" % (name, SECRET_SIG))
    # A batch whose parts carry an Authorization header, an Atom-style &amp;sig= and a sig= mid-line.
    body = ("--batch_x\r\nContent-Type: multipart/mixed; boundary=changeset_y\r\n\r\n--changeset_y\r\n"
            "Content-Type: application/http\r\n\r\nPOST http://127.0.0.1/acct1/t?sig=%s HTTP/1.1\r\n"
            "Authorization: SharedKey acct1:c2VjcmV0LWF1dGg=\r\nCookie: Y29va2llLXNlY3JldA\r\n\r\n"
            "{\"href\":\"t()?sv=1&amp;sig=%s&amp;se=1\"}\r\n--changeset_y--\r\n--batch_x--\r\n"
            % (SECRET_SIG, SECRET_SIG)).encode()
    import http.client
    full = "/%s/$batch" % ACCT1
    hdrs = {"Host": "127.0.0.1:%d" % admin_srv.port, "x-ms-date": formatdate(usegmt=True),
            "x-ms-version": tsclient.API_VERSION, "Content-Type": "multipart/mixed; boundary=batch_x",
            "DataServiceVersion": "3.0"}
    hdrs["Authorization"] = tsclient.sign("POST", full, hdrs, account=ACCT1, key=KEY1)
    hdrs["Proxy-Authorization"] = "Basic c2VjcmV0LWF1dGg="
    c = http.client.HTTPConnection("127.0.0.1", admin_srv.port, timeout=10)
    c.request("POST", full, body=body, headers=hdrs)
    c.getresponse().read()
    c.close()
    # A bad MAC: the 403 body echoes it.
    hdrs = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": tsclient.API_VERSION,
            "Authorization": "SharedKey %s:U2VjcmV0U2lnbmF0dXJlT2ZUaGVNYWM=" % ACCT1}
    c = http.client.HTTPConnection("127.0.0.1", admin_srv.port, timeout=10)
    c.request("GET", "/%s/Tables" % ACCT1, headers=hdrs)
    assert c.getresponse().read()
    c.close()
    time.sleep(0.3)  # the trace writer flushes every 10 ms
    with open(admin_srv.log_path, errors="replace") as f:
        log = f.read()
    with open(os.path.join(admin_srv.trace_dir, "start.jsonl"), errors="replace") as f:
        trace = f.read()
    assert "%73ig=REDACTED" in log and "sig=REDACTED" in trace
    for secret in secrets:
        assert secret not in log, secret
        assert secret not in trace, secret


# ---- transport limits before authentication (issue 30 items 4, 5, 12; issue 36 item 1) --------

def server_cpu_seconds(server):
    """User + system CPU seconds the server process has used so far."""
    with open("/proc/%d/stat" % server.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture(scope="module")
def admin_server():
    """A server with the admin routes on (the UI and metrics are on by default)."""
    work = tempfile.mkdtemp(prefix="tablestone-hostile-admin.")
    srv = tsclient.Server(tsclient.default_binary(), os.path.join(work, "data"),
                          extra_args=["--adminApi", "--readTimeoutMs", "5000"],
                          log_path=os.path.join(work, "server.log"))
    srv.start()
    yield srv
    code = srv.stop()
    assert code == 0, "exit code %r; log:\n%s" % (code, srv.log_tail())
    shutil.rmtree(work, ignore_errors=True)


NON_TABLE_TARGETS = [("GET", "/_tablestone/health"), ("POST", "/_tablestone/health"),
                     ("GET", "/_tablestone/metrics"), ("GET", "/_tablestone/ui/"),
                     ("POST", "/_tablestone/trace"), ("POST", "/_tablestone/faults"),
                     ("POST", "/_tablestone/snapshot?to=/tmp/x"), ("POST", "/_tablestone/reset")]


def test_bodies_on_tablestone_routes_cost_bounded_memory_before_authentication(admin_server):
    """Issue 30, item 4: 300 unauthenticated connections each sending 4 MiB to /_tablestone/health
    took the server from 20 to 1,230 MiB. Now a body still to come on health, metrics or the UI is
    refused on the headers (413) and dropped by the lingering close, and an admin route reads at
    most 64 KiB before HandleAdmin authenticates: 300 x 4 MiB over every such route grow the
    server by less than 64 MiB."""
    n, body_size, chunk = 300, 4 << 20, b"x" * 65536
    rss_before = admin_server.rss_kb()
    peak = rss_before
    socks = []
    try:
        for i in range(n):
            method, target = NON_TABLE_TARGETS[i % len(NON_TABLE_TARGETS)]
            s = socket.create_connection(("127.0.0.1", admin_server.port), timeout=10)
            send_all(s, ("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         "Content-Length: %d\r\n\r\n" % (method, target, body_size)).encode())
            s.setblocking(False)
            socks.append([s, body_size])
        deadline = time.monotonic() + 60
        while any(left > 0 for _, left in socks) and time.monotonic() < deadline:
            for entry in socks:
                s, left = entry
                if left <= 0:
                    continue
                try:
                    entry[1] -= s.send(chunk[:min(len(chunk), left)])
                except BlockingIOError:
                    pass
                except OSError:
                    entry[1] = 0  # closed by the server: the rest is not its memory any more
            peak = max(peak, admin_server.rss_kb())
        peak = max(peak, admin_server.rss_kb())
        statuses = []
        for s, _ in socks:
            s.setblocking(True)
            s.settimeout(5)
            statuses.append(status_of(read_one_response(s)))
    finally:
        for s, _ in socks:
            s.close()
    grow_mb = (peak - rss_before) / 1024
    print("300 x 4 MiB on /_tablestone/*: RSS peak +%.1f MiB, statuses %s"
          % (grow_mb, sorted(set(statuses))))
    assert grow_mb < 64, "RSS grew %.1f MiB" % grow_mb
    # Each got an answer it could read (no reset): 413 for the refused bodies, 403 for an admin
    # request that went on to fail authentication with its short body.
    assert all(st in (403, 413) for st in statuses), statuses


def test_no_100_continue_on_tablestone_routes_before_authentication(admin_server):
    for target in ("/_tablestone/trace", "/_tablestone/health"):
        s = socket.create_connection(("127.0.0.1", admin_server.port), timeout=10)
        try:
            send_all(s, ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n"
                         "Content-Length: 17\r\n\r\n" % target).encode())
            s.settimeout(0.5)
            try:
                first = s.recv(65536)
            except socket.timeout:
                first = b""
            assert not first.startswith(b"HTTP/1.1 100"), (target, first[:100])
            if target == "/_tablestone/health":
                assert status_of(first) == 413, first[:300]  # refused at once, body never read
                continue
            # The admin route is signed on its headers (the body's hash among them,
            # docs/admin-api.md): an unsigned request is refused before its body, uninvited.
            assert status_of(first) == 403, first[:300]
        finally:
            s.close()


def atom_entry(properties):
    return ('<?xml version="1.0" encoding="utf-8"?><entry xmlns="http://www.w3.org/2005/Atom" '
            'xmlns:d="http://schemas.microsoft.com/ado/2007/08/dataservices" '
            'xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">'
            '<content type="application/xml"><m:properties>%s</m:properties></content></entry>'
            % properties).encode()


def hostile_entity_bodies():
    n = 100_000
    json_props = {"PartitionKey": "big", "RowKey": "1"}
    json_props.update(("p%d" % i, "v") for i in range(n))
    orphans = {"PartitionKey": "big", "RowKey": "2"}
    orphans.update(("a%d@odata.type" % i, "Edm.String") for i in range(40_000))
    orphans.update(("n%d" % i, None) for i in range(40_000))
    atom = "<d:PartitionKey>big</d:PartitionKey><d:RowKey>3</d:RowKey>" + "".join(
        "<d:p%d>v</d:p%d>" % (i, i) for i in range(n))
    return [("json-100k", json.dumps(json_props).encode(), "application/json", {}),
            ("json-orphans", json.dumps(orphans).encode(), "application/json", {}),
            ("atom-100k", atom_entry(atom), "application/atom+xml",
             {"x-ms-version": "2013-08-15", "Accept": "application/atom+xml"})]


def send_hostile_entity(port, raw, out):
    """In a child process: sends one request and puts (status, seconds) on `out`."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    t0 = time.monotonic()
    try:
        send_all(s, raw)
        out.put((status_of(read_one_response(s)), time.monotonic() - t0))
    finally:
        s.close()


@pytest.mark.parametrize("case", hostile_entity_bodies(), ids=lambda c: c[0])
def test_entity_of_100k_properties_is_cheap_and_does_not_stall_others(server, case):
    """Issue 30, item 5: an Atom entry of 80k properties cost 16.7 s of CPU and a concurrent request
    waited 40.8 s; 40k orphan annotations + 40k nulls in JSON cost 7-9 s and were answered 201.
    Now each costs under 0.5 s of the server's CPU and a concurrent point GET waits under 50 ms."""
    name, body, content_type, headers = case
    if os.environ.get("ASAN_OPTIONS") or os.environ.get("TSAN_OPTIONS"):
        pytest.skip("CPU and latency under a sanitizer build measure the sanitizer")
    raw = signed_raw(server, "POST", "/" + TABLE, body, content_type=content_type, extra_headers=headers)
    # The better of two tries for the latency: one scheduler hiccup of a loaded 2-core machine is
    # not the server (the stall before the fix lasted seconds, in every try).
    for _ in range(2):
        slowest = measure_hostile_entity(server, name, body, raw)
        if slowest < 50:
            break
    assert slowest < 50, "a concurrent point GET waited %.1f ms" % slowest


def measure_hostile_entity(server, name, body, raw):
    """Sends `raw` from another process while point GETs run here; asserts its status and the
    server's CPU; returns the slowest GET's wait in ms (the second slowest of 20 or more)."""
    import multiprocessing
    c = tsclient.Client(server.port)
    try:
        assert c.get(TABLE, "p", "r").status == 200  # the connection is warm
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        cpu0 = server_cpu_seconds(server)
        sender = ctx.Process(target=send_hostile_entity, args=(server.port, raw, out), daemon=True)
        sender.start()
        waits = []
        while sender.is_alive() or not waits:
            t0 = time.perf_counter()
            assert c.get(TABLE, "p", "r").status == 200
            waits.append((time.perf_counter() - t0) * 1000)
        sender.join(30)
        status, took = out.get(timeout=30)
        cpu = server_cpu_seconds(server) - cpu0
    finally:
        c.close()
    waits.sort()
    print("%s (%d bytes): %d in %.3f s, server CPU %.3f s, %d concurrent GETs, max wait %.1f ms"
          % (name, len(body), status, took, cpu, len(waits), waits[-1]))
    assert status == 400, status  # TooManyProperties
    assert cpu < 0.5, "server CPU %.3f s" % cpu
    return waits[-2] if len(waits) >= 20 else waits[-1]


# ---- connection exhaustion (issue 30, item 12) ----------------------------------------------------

def idle_from(port, address, n):
    """n connections from `address` (any of 127.0.0.0/8) that send nothing."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((address, 0))
        s.settimeout(10)
        s.connect(("127.0.0.1", port))
        socks.append(s)
    return socks


def count_closed(socks, wait=0.0):
    time.sleep(wait)
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            closed += s.recv(1) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    return closed


@pytest.fixture
def exhaustion_server(request):
    """A small server: 200 connections in all, 50 per client address, 1 s to the first byte and to
    the end of the TLS handshake. request.param: True for HTTPS (a fresh self-signed certificate)."""
    tls = request.param
    work = tempfile.mkdtemp(prefix="tablestone-hostile-conn.")
    args = ["--maxConnections", "200", "--maxConnectionsPerAddress", "50", "--firstByteTimeoutMs", "1000",
            "--handshakeTimeoutMs", "1000"]
    if tls:
        import subprocess
        cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"],
                       check=True, capture_output=True)
        args += ["--cert", cert, "--key", key]
    srv = tsclient.Server(tsclient.default_binary(), os.path.join(work, "data"), extra_args=args,
                          log_path=os.path.join(work, "server.log"))
    srv.spawn()
    deadline = time.monotonic() + 60
    while not real_client_served(srv.port, tls):
        assert srv.running() and time.monotonic() < deadline, srv.log_tail()
        time.sleep(0.05)
    yield srv, tls
    code = srv.stop()
    assert code == 0, "exit code %r; log:\n%s" % (code, srv.log_tail())
    shutil.rmtree(work, ignore_errors=True)


def real_client_served(port, tls):
    """A health request from 127.0.0.1 (over TLS when `tls`) gets its 200."""
    import ssl
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        return False
    try:
        if tls:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            s = ctx.wrap_socket(s)
        s.sendall(b"GET /_tablestone/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return status_of(read_one_response(s)) == 200
    except OSError:
        return False
    finally:
        s.close()


@pytest.mark.parametrize("exhaustion_server", [False, True], ids=["plain", "tls"], indirect=True)
def test_idle_connections_from_one_address_do_not_lock_out_others(exhaustion_server):
    """Issue 30, item 12: 10,000 idle TLS connections that never handshake locked real clients out
    for 30 s, plain idle connections for 120 s. Now one address holds at most
    limits.maxConnectionsPerAddress of them, and a new connection that does not handshake or send
    its first byte within the deadline is closed."""
    srv, tls = exhaustion_server
    hog = idle_from(srv.port, "127.0.0.2", 250)  # more than the server's 200 in all
    try:
        refused = count_closed(hog, wait=0.5)
        assert refused >= 200, "%d of 250 closed at once" % refused  # 50 kept, the rest closed
        assert real_client_served(srv.port, tls), "a client at another address was locked out"
        t0 = time.monotonic()
        while count_closed(hog) < len(hog) and time.monotonic() - t0 < 10:
            time.sleep(0.2)
        took = time.monotonic() - t0
        assert count_closed(hog) == len(hog), "idle connections outlived the 1 s first-byte deadline"
        print("%s: 250 idle from one address, %d closed at once, the rest after %.1f s"
              % ("tls" if tls else "plain", refused, took))
        assert took < 5
    finally:
        for s in hog:
            s.close()
    # The address's slots are free again.
    assert real_client_served(srv.port, tls)


# ---- lingering close (issue 36, item 1) -----------------------------------------------------------

def test_client_that_sends_its_whole_oversized_body_reads_the_413(server):
    """Issue 36, item 1: a client that goes on sending a 5 MiB body after the server's early 413
    (as every SDK does) must read the 413, not meet EPIPE or a reset: the server reads and drops
    the rest of the body (bounded: HttpOptions linger_time and linger_max_bytes) before it closes."""
    body = b'{"PartitionKey":"l","RowKey":"1","v":"' + b"x" * (5 << 20) + b'"}'
    raw = signed_raw(server, "POST", "/" + TABLE, body, content_type="application/json")
    head, _, body = raw.partition(b"\r\n\r\n")
    s = connect(server, timeout=10)
    try:
        send_all(s, head + b"\r\n\r\n")
        for i in range(0, len(body), 65536):
            s.sendall(body[i:i + 65536])  # raises on EPIPE / reset: the failure this pins
            if i % (1 << 20) == 0:
                time.sleep(0.02)
        data = read_one_response(s)
    finally:
        s.close()
    assert_4xx(data, code="RequestBodyTooLarge", status=413)
