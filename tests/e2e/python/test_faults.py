"""Fault injection and realistic mode (docs/testing-with-faults.md) through the Python SDK.

Each test adds fault rules for its own table through the admin route, drives the SDK with a
tiny retry backoff (so retries take milliseconds), and reads back from the rule's counters how
many requests the server saw. Runs its own server: --adminApi, a fixed fault seed and a short
TableBeingDeleted window.
"""

import http.client
import json
import os
import shutil
import tempfile
import time
import uuid
from email.utils import formatdate

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceModifiedError
from azure.data.tables import TableServiceClient, UpdateMode

import harness
from conftest import sdk_error_code

# bool(): a string condition would be evaluated by pytest as Python source.
pytestmark = pytest.mark.skipif(bool(not os.environ.get("TABLESTONE_BIN") and
                                     os.environ.get("TABLESTONE_E2E_CONNECTION_STRING")),
                                reason="needs a managed tablestone (admin routes)")

BEING_DELETED_MS = 1500


@pytest.fixture(scope="module")
def server():
    binary = os.environ.get("TABLESTONE_BIN") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "build", "server", "app", "tablestone")
    tmp = tempfile.mkdtemp(prefix="tablestone-faults.")
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    s = harness.ManagedServer(os.path.abspath(binary), data, harness.free_port(),
                              extra_args=["--adminApi", "--faultSeed", "42",
                                          "--tableBeingDeletedMs", str(BEING_DELETED_MS)])
    s.start()
    yield s
    assert s.stop() == 0
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def svc(server):
    cs = ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=http://127.0.0.1:%d/%s;"
          % (harness.ACCOUNT, harness.ACCOUNT_KEY, server.port, harness.ACCOUNT))
    # Tiny backoffs: a retry costs milliseconds, not seconds.
    return TableServiceClient.from_connection_string(cs, retry_total=5, retry_backoff_factor=0.01,
                                                     retry_backoff_max=0.05)


def faults(server, method, body=None, query="", op="faults"):
    """A Shared Key signed request to /_tablestone/<op>; returns (status, JSON body)."""
    path = "/_tablestone/" + op + ("?" + query if query else "")
    data = json.dumps(body).encode() if body is not None else b""
    headers = {"x-ms-date": formatdate(usegmt=True)}
    if body is not None:
        headers["Content-Type"] = "application/json"
    headers["Authorization"] = harness.admin_authorization(method, path, headers, data, harness.ACCOUNT,
                                                           harness.ACCOUNT_KEY)
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    c.request(method, path, body=data, headers=headers)
    r = c.getresponse()
    payload = r.read()
    c.close()
    return r.status, (json.loads(payload) if payload else None)


def add_rule(server, rule):
    status, body = faults(server, "POST", rule)
    assert status == 201, body
    return body["ids"][0]


def rule_counts(server, rule_id):
    status, body = faults(server, "GET")
    assert status == 200
    for r in body["rules"]:
        if r["id"] == rule_id:
            return r["matched"], r["injected"]
    raise AssertionError("no rule " + rule_id)


def new_table(svc):
    name = "f" + uuid.uuid4().hex[:12]
    svc.create_table(name)
    return svc.get_table_client(name)


@pytest.fixture(autouse=True)
def clean_rules(server):
    yield
    faults(server, "DELETE")


def test_admin_route_refuses_bad_rules_and_unsigned_requests(server):
    assert faults(server, "POST", {"action": "explode"})[0] == 400
    assert faults(server, "POST", {"action": "serverBusy", "match": {"tabel": "x"}})[0] == 400
    assert faults(server, "DELETE", query="id=nosuch")[0] == 404
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    c.request("GET", "/_tablestone/faults")
    assert c.getresponse().status == 403
    c.close()
    rid = add_rule(server, {"id": "listed", "action": "latencyAfter", "latencyMs": [1, 2],
                            "match": {"operation": "GetEntity", "table": "nosuch"}})
    status, body = faults(server, "GET")
    assert status == 200 and [r["id"] for r in body["rules"]] == [rid]
    assert body["rules"][0]["latencyMs"] == [1, 2]
    assert faults(server, "DELETE", query="id=" + rid)[0] == 200
    assert faults(server, "GET")[1]["rules"] == []


def test_rules_name_known_operations_and_bounded_numbers(server):
    """issue 35: a typo in an operation name gave a rule that never fired; issue 30 item 7:
    latencyMs 1e300 was accepted (an out-of-range conversion)."""
    status, body = faults(server, "POST", {"action": "serverBusy", "match": {"operation": "InsertEntities"}})
    assert status == 400, body
    assert "InsertEntities" in body["message"] and "InsertEntity," in body["message"], body
    assert "EntityGroupTransaction" in body["message"], body
    status, body = faults(server, "POST", {"action": "latencyBefore", "latencyMs": 1e300})
    assert status == 400, body
    status, body = faults(server, "POST", {"action": "serverBusy", "window": {"startAfterMs": 1e300}})
    assert status == 400, body
    assert faults(server, "GET")[1]["rules"] == []


def raw_client(server):
    import types
    return harness.RawClient(types.SimpleNamespace(host="127.0.0.1", port=server.port, account=harness.ACCOUNT,
                                                   key=harness.ACCOUNT_KEY, base_path="/" + harness.ACCOUNT))


def insert_ops(table, pk, rows):
    return [("POST", "/" + table, {"PartitionKey": pk, "RowKey": r, "v": 1}, None) for r in rows]


def test_table_rule_fires_on_that_tables_batch(server, svc):
    """issue 31: a rule scoped by match.table never fired on $batch (its URL names no table)."""
    t = new_table(svc)
    other = new_table(svc)
    raw = raw_client(server)
    rid = add_rule(server, {"action": "serverBusy", "maxCount": 1,
                            "match": {"table": t.table_name.upper(), "operation": "EntityGroupTransaction"}})
    r, _ = raw.batch(insert_ops(t.table_name, "p", ["a", "b"]))
    assert r.status == 503 and r.error_code == "ServerBusy", r
    assert rule_counts(server, rid) == (1, 1)
    assert list(t.list_entities()) == []  # refused before it ran
    r, parts = raw.batch(insert_ops(t.table_name, "p", ["a", "b"]))
    assert r.status == 202 and [p.status for p in parts] == [201, 201], r
    # Another table's batch does not match; a batch's PartitionKey matches a prefix rule.
    r, _ = raw.batch(insert_ops(other.table_name, "p", ["a"]))
    assert r.status == 202, r
    assert rule_counts(server, rid) == (2, 1)
    pk_rule = add_rule(server, {"action": "serverBusy", "maxCount": 1,
                                "match": {"operation": "EntityGroupTransaction", "partitionKeyPrefix": "zz"}})
    assert raw.batch(insert_ops(other.table_name, "p", ["b"]))[0].status == 202
    assert raw.batch(insert_ops(other.table_name, "zz1", ["b"]))[0].status == 503
    assert rule_counts(server, pk_rule) == (1, 1)


def test_close_after_recipe_covers_batches(server, svc):
    """The closeAfter recipe of docs/testing-with-faults.md: the batch commits, the answer never comes."""
    t = new_table(svc)
    raw = raw_client(server)
    rid = add_rule(server, {"action": "closeAfter", "maxCount": 1, "match": {"table": t.table_name}})
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        raw.batch(insert_ops(t.table_name, "p", ["x", "y"]))
    assert rule_counts(server, rid) == (1, 1)
    assert sorted(e["RowKey"] for e in t.list_entities()) == ["x", "y"]


def test_sdk_retries_recover_from_server_busy(server, svc):
    t = new_table(svc)
    rid = add_rule(server, {"action": "serverBusy", "maxCount": 2,
                            "match": {"table": t.table_name, "operation": "InsertEntity"}})
    t.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    # Two 503s, then the retry that went through: three requests seen.
    assert rule_counts(server, rid) == (3, 2)
    assert t.get_entity("p", "r")["v"] == 1
    # The metrics name the rule.
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    c.request("GET", "/_tablestone/metrics")
    text = c.getresponse().read().decode()
    c.close()
    assert 'tablestone_faults_injected_total{rule="%s"} 2' % rid in text


def test_throttle_answers_server_busy_above_the_rate(server, svc):
    t = new_table(svc)
    rid = add_rule(server, {"action": "throttle", "match": {"table": t.table_name},
                            "throttle": {"per": "partition", "ratePerSecond": 50, "burst": 1}})
    for i in range(6):
        t.upsert_entity({"PartitionKey": "p", "RowKey": str(i)})
    matched, injected = rule_counts(server, rid)
    assert injected > 0 and matched == 6 + injected
    assert len(list(t.query_entities("PartitionKey eq 'p'"))) == 6


def test_timeout_after_commit_then_retry_gives_409_and_one_write(server, svc):
    t = new_table(svc)
    rid = add_rule(server, {"action": "timeoutAfter", "maxCount": 1,
                            "match": {"table": t.table_name, "operation": "InsertEntity"}})
    with pytest.raises(ResourceExistsError) as e:
        t.create_entity({"PartitionKey": "p", "RowKey": "once", "v": 1})
    assert sdk_error_code(e.value) == "EntityAlreadyExists"
    assert rule_counts(server, rid) == (2, 1)  # the insert that committed, and the retry
    assert [(x["RowKey"], x["v"]) for x in t.list_entities()] == [("once", 1)]


def test_timeout_after_commit_then_retry_gives_412_for_an_etag_update(server, svc):
    t = new_table(svc)
    t.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    e = t.get_entity("p", "r")
    rid = add_rule(server, {"action": "timeoutAfter", "maxCount": 1,
                            "match": {"table": t.table_name, "operation": "UpdateEntity"}})
    e["v"] = 2
    with pytest.raises(ResourceModifiedError) as err:
        t.update_entity(e, mode=UpdateMode.REPLACE, etag=e.metadata["etag"],
                        match_condition=MatchConditions.IfNotModified)
    assert sdk_error_code(err.value) == "UpdateConditionNotSatisfied"
    assert rule_counts(server, rid) == (2, 1)
    assert t.get_entity("p", "r")["v"] == 2  # the first attempt was applied


def test_connection_closed_or_reset_then_retried(server, svc):
    t = new_table(svc)
    t.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 7})
    closed = add_rule(server, {"action": "closeAfter", "maxCount": 1,
                               "match": {"table": t.table_name, "operation": "GetEntity"}})
    assert t.get_entity("p", "r")["v"] == 7
    assert rule_counts(server, closed) == (2, 1)
    reset = add_rule(server, {"action": "resetMidResponse", "maxCount": 1,
                              "match": {"table": t.table_name, "operation": "QueryEntities"}})
    assert [x["v"] for x in t.list_entities()] == [7]
    assert rule_counts(server, reset) == (2, 1)


def test_latency_before_and_after_by_header(server, svc):
    t = new_table(svc)
    t.create_entity({"PartitionKey": "p", "RowKey": "r"})
    add_rule(server, {"action": "latencyBefore", "latencyMs": 150,
                      "match": {"header": {"name": "x-test-step", "value": "slow-before"}}})
    add_rule(server, {"action": "latencyAfter", "latencyMs": [150, 160],
                      "match": {"header": {"name": "x-test-step", "value": "slow-after"}}})
    start = time.monotonic()
    t.get_entity("p", "r")
    fast = time.monotonic() - start
    for step in ("slow-before", "slow-after"):
        start = time.monotonic()
        t.get_entity("p", "r", headers={"x-test-step": step})
        assert time.monotonic() - start >= 0.15
    assert fast < 0.15


def test_realistic_paging_returns_every_row_once(server, svc):
    t = new_table(svc)
    expected = []
    for p in range(6):
        ops = [("upsert", {"PartitionKey": "p%d" % p, "RowKey": "r%03d" % r}) for r in range(25)]
        t.submit_transaction(ops)
        expected += [("p%d" % p, "r%03d" % r) for r in range(25)]
    status, _ = faults(server, "POST", {"enabled": True, "account": harness.ACCOUNT, "table": t.table_name},
                       op="faults/realistic")
    assert status == 200
    pages = []

    def hook(response):
        h = response.http_response.headers
        body = json.loads(response.http_response.text())
        pages.append((len(body["value"]), h.get("x-ms-continuation-NextPartitionKey"),
                      h.get("x-ms-continuation-NextRowKey")))

    got = [(e["PartitionKey"], e["RowKey"]) for e in t.list_entities(raw_response_hook=hook)]
    assert got == expected
    assert len(pages) >= 3
    assert any(n == 0 and pk for n, pk, _ in pages), pages       # an empty page with a token
    assert any(pk and not rk for _, pk, rk in pages), pages      # a PartitionKey-only token
    assert all(n < 1000 for n, _, _ in pages)
    # A filtered query pages the same way.
    got = [(e["PartitionKey"], e["RowKey"]) for e in t.query_entities("RowKey ge 'r020'")]
    assert got == [k for k in expected if k[1] >= "r020"]
    faults(server, "POST", {"enabled": False, "account": harness.ACCOUNT, "table": t.table_name},
           op="faults/realistic")


def test_realistic_query_tables_pages(server, svc):
    prefix = "q" + uuid.uuid4().hex[:8]
    names = sorted(prefix + "%02d" % i for i in range(15))
    for n in names:
        svc.create_table(n)
    faults(server, "POST", {"enabled": True, "account": harness.ACCOUNT}, op="faults/realistic")
    try:
        # Listings until one is cut into several pages (a cut may exceed 15 rows); each must
        # return every table once.
        for _ in range(10):
            pages = []
            listed = [x.name for x in svc.query_tables(
                "TableName ge @lo and TableName lt @hi", parameters={"lo": prefix, "hi": prefix + "z"},
                raw_response_hook=lambda r: pages.append(len(json.loads(r.http_response.text())["value"])))]
            assert listed == names
            if len(pages) > 1:
                break
    finally:
        faults(server, "POST", {"enabled": False, "account": harness.ACCOUNT}, op="faults/realistic")
    assert len(pages) > 1


def test_realistic_table_being_deleted(server, svc):
    name = "d" + uuid.uuid4().hex[:12]
    faults(server, "POST", {"enabled": True, "account": harness.ACCOUNT, "table": name}, op="faults/realistic")
    svc.create_table(name)
    svc.delete_table(name)
    with pytest.raises(HttpResponseError) as e:
        svc.create_table(name)
    assert e.value.status_code == 409
    assert sdk_error_code(e.value) == "TableBeingDeleted"
    time.sleep(BEING_DELETED_MS / 1000 + 0.2)
    svc.create_table(name)
    svc.delete_table(name)


def test_rules_from_a_faults_file_and_a_bad_file_refused(tmp_path):
    binary = os.path.abspath(os.environ.get("TABLESTONE_BIN") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "build", "server", "app", "tablestone"))
    rules = tmp_path / "faults.json"
    rules.write_text(json.dumps({"seed": 3, "rules": [
        {"id": "from-file", "action": "serverBusy", "maxCount": 1, "match": {"operation": "CreateTable"}}]}))
    data = tmp_path / "data"
    data.mkdir()
    s = harness.ManagedServer(binary, str(data), harness.free_port(), extra_args=["--faults", str(rules)])
    s.start()
    try:
        cs = ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=http://127.0.0.1:%d/%s;"
              % (harness.ACCOUNT, harness.ACCOUNT_KEY, s.port, harness.ACCOUNT))
        TableServiceClient.from_connection_string(cs, retry_backoff_factor=0.01).create_table("fromfile")
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
        c.request("GET", "/_tablestone/metrics")
        assert 'tablestone_faults_injected_total{rule="from-file"} 1' in c.getresponse().read().decode()
        c.close()
    finally:
        assert s.stop() == 0
    rules.write_text('{"rules": [{"action": "serverBusy", "probability": 7}]}')
    bad = harness.ManagedServer(binary, str(data), harness.free_port(), extra_args=["--faults", str(rules)])
    # docs/testing-with-faults.md: exit code 1 (it said 2).
    with pytest.raises(RuntimeError, match="exited early with code 1;"):
        bad.start(timeout=10)
    assert "probability must be a number in [0, 1]" in bad.log_tail()
    rules.write_text('{"rules": [{"action": "serverBusy", "match": {"operation": "Insert"}}]}')
    bad = harness.ManagedServer(binary, str(data), harness.free_port(), extra_args=["--faults", str(rules)])
    with pytest.raises(RuntimeError, match="exited early with code 1;"):
        bad.start(timeout=10)
    assert "unknown operation in match.operation" in bad.log_tail()
