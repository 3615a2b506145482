"""GET /_tablestone/metrics and /_tablestone/health?detail=1 (docs/observability.md).

The exact-counter test runs its own tablestone (the session server's counters include every other
test), performs a known sequence of SDK calls, and asserts the counters; every scrape is checked by
a strict parser of the Prometheus text format (promtool is not installed here).
"""

import http.client
import json
import math
import re
import time

import pytest
from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableServiceClient, TableTransactionError

import harness

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_HELP = re.compile(r"^# HELP (%s) (.*)$" % _NAME)
_TYPE = re.compile(r"^# TYPE (%s) (counter|gauge|histogram|summary|untyped)$" % _NAME)
_SAMPLE = re.compile(r"^(%s)(?:\{(.*)\})? (\S+)$" % _NAME)
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(,|$)')


def parse_exposition(text):
    """Parses the text format strictly; returns {(name, frozenset(labels.items())): value}.

    Raises AssertionError on: a line that is not HELP/TYPE/sample; a malformed name, label or
    value; HELP/TYPE repeated, TYPE after its samples, a sample without TYPE; a family's samples
    not contiguous; a repeated sample; a negative counter or one not named *_total; histogram
    buckets not cumulative, not ending at le="+Inf", or +Inf != _count, or _sum missing."""
    assert text.endswith("\n"), "exposition must end with a newline"
    types, helps, done, samples = {}, set(), set(), {}
    current = None

    def family_of(name):
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and types.get(name[:-len(suffix)]) == "histogram":
                return name[:-len(suffix)]
        return name

    for line in text[:-1].split("\n"):
        m = _HELP.match(line)
        if m:
            assert m.group(1) not in helps, "second HELP: " + line
            helps.add(m.group(1))
            continue
        m = _TYPE.match(line)
        if m:
            assert m.group(1) not in types, "second TYPE: " + line
            assert m.group(1) not in done, "TYPE after samples: " + line
            types[m.group(1)] = m.group(2)
            continue
        m = _SAMPLE.match(line)
        assert m, "not a HELP, TYPE or sample line: %r" % line
        name, label_text, value_text = m.group(1), m.group(2) or "", m.group(3)
        labels = {}
        pos = 0
        while pos < len(label_text):
            lm = _LABEL.match(label_text, pos)
            assert lm, "bad label text: " + line
            assert lm.group(1) not in labels, "repeated label: " + line
            labels[lm.group(1)] = lm.group(2)
            pos = lm.end()
        assert value_text in ("+Inf", "-Inf", "NaN") or re.match(
            r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$", value_text), "bad value: " + line
        value = float(value_text)
        family = family_of(name)
        assert family in types, "sample without TYPE: " + line
        if family != current:
            assert family not in done, "family not contiguous: " + line
            if current is not None:
                done.add(current)
            current = family
        key = (name, frozenset(labels.items()))
        assert key not in samples, "repeated sample: " + line
        samples[key] = value
        if types[family] == "counter":
            assert value >= 0 and name.endswith("_total"), line
    # Histograms.
    groups = {}
    for (name, labels), value in samples.items():
        family = family_of(name)
        if types[family] != "histogram":
            continue
        rest = frozenset((k, v) for k, v in labels if k != "le")
        g = groups.setdefault((family, rest), {"buckets": [], "count": None, "sum": None})
        if name == family + "_bucket":
            le = dict(labels)["le"]
            g["buckets"].append((math.inf if le == "+Inf" else float(le), value))
        elif name == family + "_count":
            g["count"] = value
        elif name == family + "_sum":
            g["sum"] = value
    for key, g in groups.items():
        buckets = g["buckets"]  # in exposition order
        assert buckets and buckets[-1][0] == math.inf, "no +Inf bucket: %r" % (key,)
        for (b1, v1), (b2, v2) in zip(buckets, buckets[1:]):
            assert b2 > b1 and v2 >= v1, "buckets not cumulative: %r" % (key,)
        assert g["count"] == buckets[-1][1], "+Inf != _count: %r" % (key,)
        assert g["sum"] is not None, "no _sum: %r" % (key,)
    return samples


def get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read().decode("utf-8")
    finally:
        conn.close()


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


@pytest.fixture
def own_server(target):
    """A tablestone of this test's own, so its counters hold only this test's requests."""
    yield from harness.own_server(target, "tablestone-e2e-metrics.")


def test_metrics_count_a_known_sequence_of_sdk_calls(own_server):
    port = own_server.port
    cs = ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=http://127.0.0.1:%d/%s;"
          % (harness.ACCOUNT, harness.ACCOUNT_KEY, port, harness.ACCOUNT))
    service = TableServiceClient.from_connection_string(cs)
    table = service.create_table("metricsseq")                                       # CreateTable 2xx
    for i in range(3):
        table.create_entity({"PartitionKey": "p", "RowKey": str(i), "V": i})       # InsertEntity 2xx x3
    table.get_entity("p", "1")                                                       # GetEntity 2xx
    with pytest.raises(ResourceNotFoundError):
        table.get_entity("p", "missing")                                             # GetEntity 4xx
    rows = list(table.query_entities("V eq 2"))                                      # QueryEntities 2xx
    assert len(rows) == 1
    table.submit_transaction([("create", {"PartitionKey": "q", "RowKey": "a"}),
                              ("upsert", {"PartitionKey": "q", "RowKey": "b"})])    # batch of 2
    service.delete_table("metricsseq")                                               # DeleteTable 2xx

    status, headers, body = get(port, "/_tablestone/metrics")
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    samples = parse_exposition(body)

    def requests(op, cls):
        return value(samples, "tablestone_requests_total", account=harness.ACCOUNT, operation=op,
                     status_class=cls)

    assert requests("CreateTable", "2xx") == 1
    assert requests("InsertEntity", "2xx") == 3
    assert requests("GetEntity", "2xx") == 1
    assert requests("GetEntity", "4xx") == 1
    assert requests("QueryEntities", "2xx") == 1
    assert requests("EntityGroupTransaction", "2xx") == 1
    assert requests("DeleteTable", "2xx") == 1
    total = sum(v for (n, _), v in samples.items() if n == "tablestone_requests_total")
    assert total == 9, "health polls and scrapes must not be counted"
    assert value(samples, "tablestone_request_duration_seconds_count", operation="InsertEntity") == 3
    assert value(samples, "tablestone_request_duration_seconds_count", operation="GetEntity") == 2
    assert value(samples, "tablestone_batch_operations_count") == 1
    assert value(samples, "tablestone_batch_operations_sum") == 2
    assert value(samples, "tablestone_batch_operations_bucket", le="1") == 0
    assert value(samples, "tablestone_batch_operations_bucket", le="2") == 1
    assert value(samples, "tablestone_query_pages_total", account=harness.ACCOUNT) == 1
    assert value(samples, "tablestone_query_rows_scanned_total", account=harness.ACCOUNT) == 3
    assert value(samples, "tablestone_query_rows_returned_total", account=harness.ACCOUNT) == 1
    assert value(samples, "tablestone_http_connections_total") >= 2  # the SDK's and this scrape's
    assert value(samples, "tablestone_http_connections_active") >= 1
    assert value(samples, "tablestone_http_request_bytes_total") > 0
    assert value(samples, "tablestone_http_response_bytes_total") > 0
    assert value(samples, "tablestone_process_resident_memory_bytes") > 0
    assert value(samples, "tablestone_process_open_fds") > 0
    assert value(samples, "tablestone_uptime_seconds") > 0
    # Storage figures: present; the point reads above went through the entity cache.
    for name in ("tablestone_storage_memtable_bytes", "tablestone_storage_sst_bytes",
                 "tablestone_storage_pending_compaction_bytes", "tablestone_storage_stalled_column_families",
                 "tablestone_storage_scan_cache_hits_total", "tablestone_storage_scan_cache_misses_total",
                 "tablestone_storage_wal_syncs_total"):
        assert value(samples, name) is not None, name
    assert value(samples, "tablestone_storage_memtable_bytes") > 0
    assert (value(samples, "tablestone_storage_entity_cache_hits_total")
            + value(samples, "tablestone_storage_entity_cache_misses_total")) >= 2

    # A second scrape sees the same request counters: scrapes are not counted.
    again = parse_exposition(get(port, "/_tablestone/metrics")[2])
    assert sum(v for (n, _), v in again.items() if n == "tablestone_requests_total") == 9


def test_health_detail_and_plain_probe(own_server):
    status, _, body = get(own_server.port, "/_tablestone/health")
    assert status == 200 and json.loads(body) == {"status": "ok"}
    status, _, body = get(own_server.port, "/_tablestone/health?detail=1")
    assert status == 200
    detail = json.loads(body)
    assert detail["status"] == "ok"
    assert re.match(r"^\d+\.\d+\.\d+", detail["version"])
    assert detail["dataDirectory"] == own_server.data_dir
    assert detail["inMemory"] is False
    assert detail["durability"] == "default"
    assert detail["uptimeSeconds"] >= 0
    assert detail["accounts"] == [{"name": harness.ACCOUNT, "tables": 0}]


def test_session_server_exposition_is_valid(target):
    """The shared server, after whatever ran before: the whole exposition still parses."""
    if not target.managed:
        pytest.skip("needs a tablestone process started by the harness")
    status, _, body = get(target.port, "/_tablestone/metrics")
    assert status == 200
    parse_exposition(body)


def test_table_and_entity_gauges_follow_sdk_calls_and_a_restart(own_server):
    """tablestone_tables / tablestone_entities: kept by every committed write (upserts count only
    new entities, failed writes nothing, a batch its net change, a table delete its entities), and
    recounted once after a restart."""
    port = own_server.port
    cs = ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=http://127.0.0.1:%d/%s;"
          % (harness.ACCOUNT, harness.ACCOUNT_KEY, port, harness.ACCOUNT))
    service = TableServiceClient.from_connection_string(cs)
    one = service.create_table("gaugeone")
    two = service.create_table("gaugetwo")
    for i in range(3):
        one.create_entity({"PartitionKey": "p", "RowKey": str(i)})                # +3
    one.upsert_entity({"PartitionKey": "p", "RowKey": "1", "V": 1})               # exists: +0
    one.upsert_entity({"PartitionKey": "p", "RowKey": "9", "V": 1})               # new: +1
    with pytest.raises(ResourceExistsError):
        one.create_entity({"PartitionKey": "p", "RowKey": "0"})                   # fails: +0
    one.submit_transaction([("create", {"PartitionKey": "q", "RowKey": "a"}),
                            ("upsert", {"PartitionKey": "q", "RowKey": "b"}),
                            ("create", {"PartitionKey": "q", "RowKey": "c"})])   # +3
    one.submit_transaction([("delete", {"PartitionKey": "q", "RowKey": "c"}),
                            ("upsert", {"PartitionKey": "q", "RowKey": "a"})])   # -1
    with pytest.raises(TableTransactionError):
        one.submit_transaction([("create", {"PartitionKey": "q", "RowKey": "new"}),
                                ("create", {"PartitionKey": "q", "RowKey": "a"})])  # fails whole: +0
    one.delete_entity("p", "2")                                                    # -1
    two.create_entity({"PartitionKey": "x", "RowKey": "1"})
    two.create_entity({"PartitionKey": "x", "RowKey": "2"})                        # two: 2

    def gauges():
        samples = parse_exposition(get(port, "/_tablestone/metrics")[2])
        return (value(samples, "tablestone_tables", account=harness.ACCOUNT),
                value(samples, "tablestone_entities", account=harness.ACCOUNT),
                value(samples, "tablestone_entity_counts_complete"))

    assert gauges() == (2, 5 + 2, 1)   # one: p/0 p/1 p/9 q/a q/b; two: x/1 x/2
    service.delete_table("gaugeone")
    assert gauges() == (1, 2, 1)

    # After a restart the entities are counted once, off the startup path.
    assert own_server.stop() == 0
    own_server.start()
    deadline = time.monotonic() + 10
    while gauges()[2] != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gauges() == (1, 2, 1)
    two = TableServiceClient.from_connection_string(cs).get_table_client("gaugetwo")
    two.delete_entity("x", "1")
    assert gauges() == (1, 1, 1)


def test_build_info_and_standard_process_metrics(own_server):
    """tablestone_build_info and the process collector's standard names (issue 35), so stock dashboards
    work; promtool checks the exposition when it is installed."""
    import os
    import shutil
    import subprocess
    status, _, body = get(own_server.port, "/_tablestone/metrics")
    assert status == 200
    samples = parse_exposition(body)
    version = subprocess.run([own_server.binary, "--version"], capture_output=True, text=True).stdout.split()[1]
    build = [labels for (name, labels) in samples if name == "tablestone_build_info"]
    assert len(build) == 1, build
    build = dict(build[0])
    assert set(build) == {"version", "commit", "flavor"}, build
    assert build["version"] == version and build["flavor"] == "storage", build
    # The short hash of the commit built ("-modified" when the tree differed), or "unknown" outside
    # git; the one `tablestone --version` names.
    assert re.fullmatch(r"[0-9a-f]{12}(-modified)?|unknown", build["commit"]), build
    if build["commit"] != "unknown":
        assert build["commit"] in subprocess.run([own_server.binary, "--version"], capture_output=True,
                                                 text=True).stdout
    assert value(samples, "tablestone_build_info", **build) == 1
    assert 0 < value(samples, "process_cpu_seconds_total") < 600
    assert value(samples, "process_resident_memory_bytes") > 1 << 20
    assert value(samples, "process_virtual_memory_bytes") >= value(samples, "process_resident_memory_bytes")
    fds = len(os.listdir("/proc/%d/fd" % own_server.proc.pid))
    assert abs(value(samples, "process_open_fds") - fds) <= 8  # the server opens and closes files meanwhile
    assert value(samples, "process_max_fds") >= value(samples, "process_open_fds")
    start = value(samples, "process_start_time_seconds")
    assert time.time() - 300 < start <= time.time(), start  # started by this test, seconds ago
    if shutil.which("promtool"):
        check = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
