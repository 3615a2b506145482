"""Small, dependency-free client pieces for the reliability tests.

- Server: starts a tablestone binary on a free loopback port with a given data dir, waits for
  GET /_tablestone/health, stops it with SIGTERM or SIGKILL, and reports its exit code and log.
- Client: one keep-alive HTTP connection that signs every request with SharedKey (Table flavour:
  VERB\\nContent-MD5\\nContent-Type\\nx-ms-date\\n/<account><path>[?comp=..]), with helpers for the
  entity operations, paged queries and $batch change sets.

Only the Python standard library is used, so the tests run under any python3 >= 3.8.
"""

import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.parse
import uuid
from email.utils import formatdate

ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
               "K1SZFPTOtr/KBHBeksoGMGw==")
API_VERSION = "2019-02-02"
MINIMAL = "application/json;odata=minimalmetadata"

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def default_binary():
    """TABLESTONE_BIN, else the first built binary found in the usual build dirs."""
    env = os.environ.get("TABLESTONE_BIN")
    if env:
        return os.path.abspath(env)
    for d in ("build-rel", "build", "build-test", "build-asan"):
        p = os.path.join(ROOT, d, "server", "app", "tablestone")
        if os.access(p, os.X_OK):
            return p
    raise RuntimeError("no tablestone binary: set TABLESTONE_BIN")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One tablestone process on a data dir. start() may be called again after a stop/kill."""

    def __init__(self, binary, data_dir, extra_args=(), log_path=None):
        self.binary = binary
        self.data_dir = data_dir
        self.extra_args = list(extra_args)
        self.log_path = log_path or (data_dir.rstrip("/") + ".log")
        self.proc = None
        self.port = None
        self._pidfile = None

    def args(self, port):
        return [self.binary, "--tableHost", "127.0.0.1", "--tablePort", str(port),
                "-l", self.data_dir, "-s"] + self.extra_args

    def spawn(self, port=None):
        """Starts the process without waiting for health; returns the Popen."""
        self.port = port or free_port()
        log = open(self.log_path, "ab")
        log.write(("\n=== start %s\n" % " ".join(self.args(self.port))).encode())
        log.flush()
        self.proc = subprocess.Popen(self.args(self.port), stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        log.close()
        piddir = os.environ.get("TABLESTONE_E2E_PIDDIR")
        if piddir and os.path.isdir(piddir):
            self._pidfile = os.path.join(piddir, "rel-%d.pid" % self.proc.pid)
            with open(self._pidfile, "w") as f:
                f.write(str(self.proc.pid))
        return self.proc

    def start(self, timeout=60.0):
        """Starts and waits until healthy; returns the seconds it took. Raises on failure."""
        t0 = time.monotonic()
        self.spawn()
        deadline = t0 + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self._forget()
                raise RuntimeError("tablestone exited early with code %s; log tail:\n%s"
                                   % (code, self.log_tail()))
            if health(self.port):
                return time.monotonic() - t0
            time.sleep(0.05)
        self.kill()
        raise RuntimeError("tablestone not healthy within %.0fs; log tail:\n%s"
                           % (timeout, self.log_tail()))

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=30.0):
        """SIGTERM and wait; returns the exit code, or None if it had to be killed."""
        if self.proc is None:
            return 0
        proc = self.proc
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                self._forget()
                return None
        self._forget()
        return proc.returncode

    def kill(self):
        """SIGKILL (kill -9) and reap."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self._forget()

    def _forget(self):
        self.proc = None
        if self._pidfile and os.path.exists(self._pidfile):
            os.unlink(self._pidfile)
        self._pidfile = None

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def log_tail(self, n=3000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return "(no log)"


def health(port, timeout=2.0):
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request("GET", "/_tablestone/health")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except (OSError, http.client.HTTPException):
        return False


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-cased names
        self.body = body

    def header(self, name, default=None):
        return self.headers.get(name.lower(), default)

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    @property
    def error_code(self):
        try:
            return self.json()["odata.error"]["code"]
        except Exception:  # noqa: BLE001 - not a JSON error body
            m = re.search(rb"<Code>([^<]*)</Code>", self.body or b"")
            return m.group(1).decode() if m else None

    def __repr__(self):
        return "<Response %d %s>" % (self.status, self.body[:300])


def sign(method, path, headers, account=ACCOUNT, key=ACCOUNT_KEY):
    split = urllib.parse.urlsplit(path)
    resource = "/" + account + split.path
    query = urllib.parse.parse_qs(split.query, keep_blank_values=True)
    if "comp" in query:
        resource += "?comp=" + query["comp"][0]
    lower = {k.lower(): v for k, v in headers.items()}
    to_sign = "\n".join([method, lower.get("content-md5", ""), lower.get("content-type", ""),
                         lower.get("x-ms-date", lower.get("date", "")), resource])
    sig = base64.b64encode(hmac.new(base64.b64decode(key), to_sign.encode("utf-8"),
                                    hashlib.sha256).digest()).decode()
    return "SharedKey %s:%s" % (account, sig)


def quote_key(k):
    return urllib.parse.quote(k.replace("'", "''"), safe="")


def entity_path(table, pk, rk):
    return "/%s(PartitionKey='%s',RowKey='%s')" % (table, quote_key(pk), quote_key(rk))


class Client:
    """A keep-alive connection to one server. Not thread-safe: one Client per thread.

    Network errors propagate (OSError / http.client.HTTPException); the connection is dropped so
    the next request opens a new one."""

    def __init__(self, port, host="127.0.0.1", timeout=30.0):
        self.host = host
        self.port = port
        self.timeout = timeout
        self.conn = None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method, path, body=None, headers=None, content_type=None, accept=MINIMAL,
                signed=True):
        """path is relative to the account root ("/Tables") and sent as given."""
        full = "/" + ACCOUNT + path
        hdrs = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": API_VERSION,
                "DataServiceVersion": "3.0", "MaxDataServiceVersion": "3.0;NetFx"}
        if accept:
            hdrs["Accept"] = accept
        if body is not None and not isinstance(body, (bytes, bytearray)):
            body = (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")
            content_type = content_type or "application/json"
        if content_type:
            hdrs["Content-Type"] = content_type
        hdrs.update(headers or {})
        if signed:
            hdrs["Authorization"] = sign(method, full, hdrs)
        if body is None and method in ("POST", "PUT", "MERGE", "PATCH"):
            body = b""
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            self.conn.request(method, full, body=body, headers=hdrs)
            resp = self.conn.getresponse()
            data = resp.read()
        except BaseException:
            self.close()
            raise
        out = Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
        if resp.will_close:
            self.close()
        return out

    # ---- tables ----
    def create_table(self, name):
        return self.request("POST", "/Tables", body={"TableName": name},
                            headers={"Prefer": "return-no-content"})

    def delete_table(self, name):
        return self.request("DELETE", "/Tables('%s')" % name)

    # ---- entities ----
    def insert(self, table, entity):
        return self.request("POST", "/" + table, body=entity, headers={"Prefer": "return-no-content"})

    def upsert(self, table, entity):
        """InsertOrReplace: PUT without If-Match."""
        return self.request("PUT", entity_path(table, entity["PartitionKey"], entity["RowKey"]),
                            body=entity)

    def merge(self, table, entity, etag="*"):
        return self.request("MERGE", entity_path(table, entity["PartitionKey"], entity["RowKey"]),
                            body=entity, headers={"If-Match": etag})

    def delete(self, table, pk, rk, etag="*"):
        return self.request("DELETE", entity_path(table, pk, rk), headers={"If-Match": etag})

    def get(self, table, pk, rk):
        return self.request("GET", entity_path(table, pk, rk))

    def query_all(self, table, filter_text=None, top=None):
        """Every entity matching the filter, following continuation tokens. Raises on non-200."""
        out = []
        params = {}
        if filter_text:
            params["$filter"] = filter_text
        if top:
            params["$top"] = str(top)
        while True:
            qs = urllib.parse.urlencode(params, quote_via=urllib.parse.quote)
            r = self.request("GET", "/%s()%s" % (table, ("?" + qs) if qs else ""))
            if r.status != 200:
                raise RuntimeError("query %s failed: %r" % (table, r))
            out.extend(r.json()["value"])
            npk = r.header("x-ms-continuation-NextPartitionKey")
            nrk = r.header("x-ms-continuation-NextRowKey")
            if not npk:
                return out
            params["NextPartitionKey"] = npk
            if nrk:
                params["NextRowKey"] = nrk
            else:
                params.pop("NextRowKey", None)

    # ---- $batch ----
    def batch(self, table, ops):
        """ops: list of (method, entity, if_match_or_None) on one partition.
        Returns (Response, [(status, headers) per sub-response]) (empty list unless 202)."""
        b = "batch_%s" % uuid.uuid4()
        c = "changeset_%s" % uuid.uuid4()
        base = "http://127.0.0.1:%d/%s" % (self.port, ACCOUNT)
        out = ["--" + b, "Content-Type: multipart/mixed; boundary=" + c, ""]
        for i, (method, entity, if_match) in enumerate(ops):
            out += ["--" + c, "Content-Type: application/http", "Content-Transfer-Encoding: binary",
                    "Content-ID: %d" % (i + 1), ""]
            if method == "POST":
                url = base + "/" + table
            else:
                url = base + entity_path(table, entity["PartitionKey"], entity["RowKey"])
            out.append("%s %s HTTP/1.1" % (method, url))
            out += ["Accept: " + MINIMAL, "DataServiceVersion: 3.0", "Content-Type: application/json"]
            if if_match:
                out.append("If-Match: " + if_match)
            out += ["", json.dumps(entity) if method != "DELETE" else ""]
        out += ["--%s--" % c, "--%s--" % b, ""]
        body = "\r\n".join(out).encode("utf-8")
        r = self.request("POST", "/$batch", body=body, accept="application/json",
                         content_type="multipart/mixed; boundary=" + b)
        return r, (parse_batch_parts(r) if r.status == 202 else [])


def parse_batch_parts(resp):
    """[(status, {header: value})] of every sub-response in a $batch response body."""
    text = resp.body.decode("utf-8", "replace")
    parts = []
    for m in re.finditer(r"HTTP/1\.1 (\d{3})[^\r\n]*\r?\n((?:[^\r\n]+\r?\n)*)", text):
        headers = {}
        for line in m.group(2).splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        parts.append((int(m.group(1)), headers))
    return parts
