"""Black-box harness for the Python end-to-end suite.

Either targets an existing endpoint (env TABLESTONE_E2E_CONNECTION_STRING, e.g. Azurite) or starts
the tablestone binary from env TABLESTONE_BIN on a free loopback port with a temporary data dir:

    <bin> --tableHost 127.0.0.1 --tablePort <port> -l <datadir> -s

waits for GET /_tablestone/health -> 200, and stops it with SIGTERM (expecting exit code 0).
Also holds a raw HTTP client that signs requests with SharedKey (Table flavour) so tests can send
arbitrary, even malformed, requests and inspect exact status codes, headers and bodies.
"""

import base64
import hashlib
import hmac
import http.client
import ssl
import json
import os
import re
import uuid
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
from email.utils import formatdate

ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
               "K1SZFPTOtr/KBHBeksoGMGw==")
API_VERSION = "2019-02-02"

MINIMAL = "application/json;odata=minimalmetadata"
NOMETA = "application/json;odata=nometadata"
FULL = "application/json;odata=fullmetadata"

TARGET_KIND = os.environ.get("TABLESTONE_E2E_TARGET", "tablestone").strip().lower() or "tablestone"

# TABLESTONE_E2E_LOCALHOST=1: the managed server is addressed as http://localhost:<port>, the shape
# of every port a container harness maps. azure-data-tables then takes its Cosmos DB path
# (_is_cosmos_endpoint: localhost on a port other than 10002): PATCH goes out as POST with
# X-HTTP-Method: MERGE. scripts/test.sh runs the suite once that way.
LOCAL_HOST_NAME = "localhost" if os.environ.get("TABLESTONE_E2E_LOCALHOST") == "1" else "127.0.0.1"


def parse_connection_string(cs):
    """Returns (account, key, table_endpoint) for a connection string."""
    parts = {}
    for item in cs.split(";"):
        if "=" in item:
            k, v = item.split("=", 1)
            parts[k.strip().lower()] = v.strip()
    if parts.get("usedevelopmentstorage", "").lower() == "true":
        return ACCOUNT, ACCOUNT_KEY, "http://127.0.0.1:10002/" + ACCOUNT
    account = parts.get("accountname", ACCOUNT)
    key = parts.get("accountkey", ACCOUNT_KEY)
    endpoint = parts.get("tableendpoint")
    if not endpoint:
        raise ValueError("connection string has no TableEndpoint: " + cs)
    return account, key, endpoint.rstrip("/")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ManagedServer:
    """One tablestone process owned by the test session."""

    def __init__(self, binary, data_dir, port, extra_env=None, extra_args=None):
        self.binary = binary
        self.data_dir = data_dir
        self.port = port
        # Extra environment variables for the server process (e.g. AZURITE_ACCOUNTS).
        self.extra_env = dict(extra_env or {})
        # Extra command-line flags (e.g. ["--adminApi"]).
        self.extra_args = list(extra_args or [])
        self.proc = None
        self.log_path = os.path.join(os.path.dirname(data_dir), "server-%d.log" % port)
        self._pidfile = None

    def start(self, timeout=30.0):
        args = [self.binary, "--tableHost", "127.0.0.1", "--tablePort", str(self.port),
                "-l", self.data_dir, "-s"] + self.extra_args
        # CI traces every managed server of the suite, one file per port (two processes
        # appending to one file could interleave lines); check_trace.py reads them after.
        trace_dir = os.environ.get("TABLESTONE_E2E_TRACE_DIR")
        if trace_dir and "--trace" not in self.extra_args:
            args += ["--trace", os.path.join(trace_dir, "trace-%d.jsonl" % self.port)]
        log = open(self.log_path, "ab")
        env = None
        if self.extra_env:
            env = dict(os.environ)
            env.update(self.extra_env)
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env)
        log.close()
        piddir = os.environ.get("TABLESTONE_E2E_PIDDIR")
        if piddir:
            self._pidfile = os.path.join(piddir, "py-%d.pid" % self.proc.pid)
            with open(self._pidfile, "w") as f:
                f.write(str(self.proc.pid))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("tablestone exited early with code %s; log:\n%s"
                                   % (self.proc.returncode, self.log_tail()))
            try:
                if self.extra_env.get("TABLESTONE_CERT"):  # HTTPS: the health probe trusts any certificate
                    conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=2,
                                                       context=ssl._create_unverified_context())
                else:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/_tablestone/health")
                status = conn.getresponse().status
                conn.close()
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.kill()
        raise RuntimeError("tablestone did not become healthy within %.0fs; log:\n%s"
                           % (timeout, self.log_tail()))

    def stop(self, timeout=20.0):
        """SIGTERM and wait; returns the exit code (None if it had to be killed)."""
        if self.proc is None:
            return 0
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                self._drop_pidfile()
                return None
        self._drop_pidfile()
        return proc.returncode

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        self._drop_pidfile()

    def _drop_pidfile(self):
        if self._pidfile and os.path.exists(self._pidfile):
            os.unlink(self._pidfile)
        self._pidfile = None

    def log_tail(self, n=4000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return "(no log)"


def own_server(target, prefix, extra_args=None, extra_env=None):
    """Generator for a pytest fixture: a tablestone of the test's own (same binary as the session's,
    fresh data directory, optional extra flags and environment); yields the ManagedServer, then stops
    it and asserts exit code 0. Skips on an external target."""
    import pytest
    if not target.managed:
        pytest.skip("needs a tablestone process started by the harness")
    tmp = tempfile.mkdtemp(prefix=prefix)
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    server = ManagedServer(target.server.binary, data, free_port(), extra_env=extra_env, extra_args=extra_args)
    server.start()
    try:
        yield server
    finally:
        code = server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    assert code == 0


class Target:
    """Where the tests send requests: a managed tablestone process or an external endpoint."""

    def __init__(self):
        self.kind = TARGET_KIND
        self.server = None
        self._tmp = None
        cs = os.environ.get("TABLESTONE_E2E_CONNECTION_STRING")
        if cs:
            self.account, self.key, self.endpoint = parse_connection_string(cs)
            self.managed = False
        else:
            binary = os.environ.get("TABLESTONE_BIN")
            if not binary:
                here = os.path.dirname(os.path.abspath(__file__))
                binary = os.path.join(here, "..", "..", "..", "build", "server", "app", "tablestone")
            binary = os.path.abspath(binary)
            if not os.access(binary, os.X_OK):
                raise RuntimeError("tablestone binary not found at %s (set TABLESTONE_BIN or "
                                   "TABLESTONE_E2E_CONNECTION_STRING)" % binary)
            self._tmp = tempfile.mkdtemp(prefix="tablestone-e2e-py.")
            data = os.path.join(self._tmp, "data")
            os.mkdir(data)
            self.server = ManagedServer(binary, data, free_port())
            self.server.start()
            self.account, self.key = ACCOUNT, ACCOUNT_KEY
            self.endpoint = "http://%s:%d/%s" % (LOCAL_HOST_NAME, self.server.port, ACCOUNT)
            self.managed = True
        parsed = urllib.parse.urlsplit(self.endpoint)
        self.host = parsed.hostname
        self.port = parsed.port or 80
        self.base_path = parsed.path.rstrip("/")  # "/devstoreaccount1" in path-style
        self.connection_string = (
            "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;"
            % (self.account, self.key, self.endpoint))

    @property
    def is_azurite(self):
        return self.kind == "azurite"

    def restart(self):
        """Stops the server with SIGTERM (asserting exit code 0) and starts it on the same data dir."""
        assert self.managed, "restart needs a managed server"
        code = self.server.stop()
        assert code == 0, "tablestone exit code on SIGTERM was %r; log:\n%s" % (
            code, self.server.log_tail())
        self.server.start()

    def close(self):
        code = 0
        if self.server is not None:
            code = self.server.stop()
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
        return code


class RawResponse:
    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers  # dict with lower-cased names
        self.body = body

    def header(self, name, default=None):
        return self.headers.get(name.lower(), default)

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    @property
    def error_code(self):
        """The error code from the JSON body (odata.error.code), or None."""
        try:
            return self.json()["odata.error"]["code"]
        except Exception:  # noqa: BLE001 - not a JSON error body
            return None

    @property
    def error_message(self):
        try:
            return self.json()["odata.error"]["message"]["value"]
        except Exception:  # noqa: BLE001
            return None

    def __repr__(self):
        return "<RawResponse %d %r %s>" % (self.status, self.headers, self.body[:500])


def admin_authorization(method, path, headers, body, account, key):
    """The admin routes' Shared Key (docs/admin-api.md, "Authentication"): the query and the
    body's SHA-256 are signed. Sets x-ms-content-sha256 in `headers`; returns the Authorization value."""
    split = urllib.parse.urlsplit(path)
    digest = base64.b64encode(hashlib.sha256(body or b"").digest()).decode()
    headers["x-ms-content-sha256"] = digest
    lower = {k.lower(): v for k, v in headers.items()}
    params = sorted((k.lower(), v) for k, v in urllib.parse.parse_qsl(split.query, keep_blank_values=True))
    resource = "/" + account + split.path
    last = None
    for name, value in params:
        resource += ("," if name == last else "\n" + name + ":") + value
        last = name
    to_sign = "\n".join([method, lower.get("content-type", ""), lower.get("x-ms-date", lower.get("date", "")),
                         digest, resource])
    sig = base64.b64encode(hmac.new(base64.b64decode(key), to_sign.encode("utf-8"), hashlib.sha256).digest())
    return "SharedKey %s:%s" % (account, sig.decode())


class RawClient:
    """Sends arbitrary HTTP requests to the target, signed with SharedKey (Table flavour):

        VERB\\nContent-MD5\\nContent-Type\\nx-ms-date\\n/<account><path>[?comp=<v>]
    """

    def __init__(self, target):
        self.target = target

    def url_path(self, path):
        """Resource path (e.g. "/Tables") -> request path including the account segment."""
        return self.target.base_path + path

    def sign(self, method, path, headers, body=b""):
        if urllib.parse.urlsplit(path).path.startswith("/_tablestone/"):
            return admin_authorization(method, path, headers, body, self.target.account, self.target.key)
        key = base64.b64decode(self.target.key)
        split = urllib.parse.urlsplit(path)
        resource = "/" + self.target.account + split.path
        query = urllib.parse.parse_qs(split.query, keep_blank_values=True)
        if "comp" in query:
            resource += "?comp=" + query["comp"][0]
        lower = {k.lower(): v for k, v in headers.items()}
        to_sign = "\n".join([
            method,
            lower.get("content-md5", ""),
            lower.get("content-type", ""),
            lower.get("x-ms-date", lower.get("date", "")),
            resource,
        ])
        sig = base64.b64encode(hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).digest())
        return "SharedKey %s:%s" % (self.target.account, sig.decode())

    def request(self, method, path, body=None, headers=None, sign=True, accept=MINIMAL,
                content_type=None, raw_path=False):
        """path is relative to the account root ("/Tables", "/t1(PartitionKey='a',RowKey='b')")
        unless raw_path is set. It is sent as given: percent-encode it yourself."""
        full = path if raw_path else self.url_path(path)
        hdrs = {
            "x-ms-date": formatdate(usegmt=True),
            "x-ms-version": API_VERSION,
            "DataServiceVersion": "3.0",
            "MaxDataServiceVersion": "3.0;NetFx",
        }
        if accept is not None:
            hdrs["Accept"] = accept
        if body is not None and not isinstance(body, (bytes, bytearray)):
            if not isinstance(body, str):
                body = json.dumps(body)
            body = body.encode("utf-8")
            if content_type is None:
                content_type = "application/json"
        if content_type is not None:
            hdrs["Content-Type"] = content_type
        if headers:
            hdrs.update(headers)
        hdrs = {k: v for k, v in hdrs.items() if v is not None}
        if sign:
            hdrs["Authorization"] = self.sign(method, full, hdrs, body or b"")
        conn = http.client.HTTPConnection(self.target.host, self.target.port, timeout=60)
        try:
            conn.putrequest(method, full, skip_accept_encoding=True)
            for k, v in hdrs.items():
                conn.putheader(k, v)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            elif method in ("POST", "PUT", "PATCH", "MERGE"):
                conn.putheader("Content-Length", "0")
            try:
                conn.endheaders(body)
            except (BrokenPipeError, ConnectionResetError):
                # The server may answer early (e.g. 413) and close before the whole body is sent;
                # its response is still waiting in the socket buffer.
                pass
            resp = conn.getresponse()
            data = resp.read()
            headers_out = {}
            for k, v in resp.getheaders():
                headers_out[k.lower()] = v
            return RawResponse(resp.status, resp.reason, headers_out, data)
        finally:
            conn.close()

    # Convenience wrappers -----------------------------------------------------------------------
    def create_table(self, name, prefer=None, accept=MINIMAL):
        return self.request("POST", "/Tables", body={"TableName": name}, accept=accept,
                            content_type=NOMETA, headers={"Prefer": prefer} if prefer else None)

    def delete_table(self, name, accept=MINIMAL):
        return self.request("DELETE", "/Tables('%s')" % name, accept=accept)

    def insert(self, table, entity, prefer=None, accept=MINIMAL):
        return self.request("POST", "/" + table, body=entity, accept=accept,
                            content_type="application/json",
                            headers={"Prefer": prefer} if prefer else None)

    def entity_path(self, table, pk, rk):
        def enc(k):
            return urllib.parse.quote(k.replace("'", "''"), safe="")
        return "/%s(PartitionKey='%s',RowKey='%s')" % (table, enc(pk), enc(rk))

    def get_entity(self, table, pk, rk, accept=MINIMAL, query=""):
        return self.request("GET", self.entity_path(table, pk, rk) + query, accept=accept)

    def batch(self, ops, **kw):
        """Posts a changeset built from ops (see build_batch) to /$batch.
        Returns (RawResponse, [BatchPart]); the part list is empty unless the status is 202."""
        base = "http://%s:%d%s" % (self.target.host, self.target.port, self.target.base_path)
        boundary, body = build_batch(base, ops, **kw)
        r = self.request("POST", "/$batch", body=body, accept="application/json",
                         content_type="multipart/mixed; boundary=%s" % boundary)
        parts = parse_batch_response(r) if r.status == 202 else []
        return r, parts

    def query(self, table, params=None, accept=MINIMAL):
        qs = ("?" + urllib.parse.urlencode(params, quote_via=urllib.parse.quote)) if params else ""
        return self.request("GET", "/%s()%s" % (table, qs), accept=accept)


class BatchPart:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-cased names
        self.body = body

    def json(self):
        return json.loads(self.body)

    @property
    def error_code(self):
        try:
            return self.json()["odata.error"]["code"]
        except Exception:  # noqa: BLE001
            return None

    @property
    def error_message(self):
        try:
            return self.json()["odata.error"]["message"]["value"]
        except Exception:  # noqa: BLE001
            return None

    def __repr__(self):
        return "<BatchPart %d %r %s>" % (self.status, self.headers, self.body[:300])


def _split_http_message(text):
    """'HTTP/1.1 204 No Content\\r\\nA: b\\r\\n\\r\\nbody' -> (status, headers, body)."""
    text = text.lstrip("\r\n")
    head, _, body = text.partition("\r\n\r\n")
    lines = head.split("\r\n")
    m = re.match(r"HTTP/1\.1 (\d{3})", lines[0])
    if not m:
        raise AssertionError("not an HTTP status line: %r" % lines[0])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return int(m.group(1)), headers, body.strip("\r\n")


def parse_batch_response(resp):
    """Splits a $batch response into its sub-responses (changeset parts, or a lone query part)."""
    ct = resp.header("Content-Type", "")
    m = re.search(r'boundary="?([^";\s]+)', ct)
    assert m, "batch response without boundary: %r" % ct
    outer = m.group(1)
    text = resp.body.decode("utf-8")
    inner = re.search(r'boundary="?(changesetresponse_[^";\s]+)', text)
    boundary = inner.group(1) if inner else outer
    chunks = text.split("--" + boundary)
    parts = []
    for chunk in chunks[1:]:
        if chunk.startswith("--"):
            break  # closing delimiter
        mime, _, http_msg = chunk.lstrip("\r\n").partition("\r\n\r\n")
        if "HTTP/1.1" not in http_msg and "HTTP/1.1" in mime:
            http_msg = mime
        parts.append(BatchPart(*_split_http_message(http_msg)))
    return parts


def build_batch(base_url, ops, batch_boundary=None, changeset_boundary=None, crlf="\r\n",
                content_ids=False):
    """ops: list of (method, resource_path, body_or_None, headers_dict_or_None).
    resource_path is relative to the account ("/t1(PartitionKey='a',RowKey='b')")."""
    b = batch_boundary or "batch_%s" % uuid.uuid4()
    c = changeset_boundary or "changeset_%s" % uuid.uuid4()
    out = ["--%s" % b, "Content-Type: multipart/mixed; boundary=%s" % c, ""]
    for i, (method, path, body, headers) in enumerate(ops):
        out += ["--%s" % c, "Content-Type: application/http", "Content-Transfer-Encoding: binary"]
        if content_ids:
            out.append("Content-ID: %d" % (i + 1))
        out += ["", "%s %s%s HTTP/1.1" % (method, base_url, path)]
        hdrs = {"Accept": MINIMAL, "DataServiceVersion": "3.0"}
        if body is not None:
            hdrs["Content-Type"] = "application/json"
        hdrs.update(headers or {})
        out += ["%s: %s" % kv for kv in hdrs.items()]
        out.append("")
        out.append(json.dumps(body) if body is not None else "")
    out += ["--%s--" % c, "--%s--" % b, ""]
    return b, crlf.join(out).encode("utf-8")


# The Azure Cosmos DB emulator's Table account (Learn: "Develop locally using the Azure Cosmos DB
# emulator"), which tablestone's Cosmos listener serves by default (docs/cosmos-mode.md).
COSMOS_ACCOUNT = "localhost"
COSMOS_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


class CosmosEndpoint:
    """The Cosmos listener (--cosmosPort) of a managed server, addressed as the emulator's Table
    endpoint: http://localhost:<port>/ with no account segment. azure-data-tables takes its Cosmos
    path for it (_is_cosmos_endpoint: host localhost, port other than 10002). Quacks like a Target
    for RawClient (host, port, base_path, account, key)."""

    def __init__(self, server, port):
        self.server = server
        self.port = port
        self.host = "localhost"
        self.base_path = ""
        self.account, self.key = COSMOS_ACCOUNT, COSMOS_KEY
        self.endpoint = "http://localhost:%d/" % port
        self.connection_string = (
            "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;"
            % (self.account, self.key, self.endpoint))
        self.raw = RawClient(self)


def cosmos_server(target, prefix, extra_args=None):
    """Generator for a pytest fixture: own_server with a Cosmos listener on a free port; yields
    the CosmosEndpoint (its .server is the ManagedServer, whose main port serves the storage flavour)."""
    port = free_port()
    args = ["--cosmosPort", str(port)] + list(extra_args or [])
    for server in own_server(target, prefix, extra_args=args):
        yield CosmosEndpoint(server, port)
