"""The request trace (--trace, --traceBodies, POST/GET /_tablestone/trace; docs/observability.md).

Runs its own tablestone with --adminApi --trace FILE --traceBodies, drives it with the SDK
(Shared Key and a table SAS, so an Authorization header and a sig= value pass through), then
switches the trace at run time and checks every line with check_trace.check_line: every field,
headers and bodies present, Authorization and sig= redacted, no key anywhere.
"""

import datetime
import json
import os
import shutil
import tempfile
import types

import pytest
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.data.tables import TableClient, TableSasPermissions, TableServiceClient, generate_table_sas

import check_trace
import harness


@pytest.fixture
def traced(target):
    tmp = tempfile.mkdtemp(prefix="tablestone-e2e-trace.")
    trace = os.path.join(tmp, "trace.jsonl")
    for server in harness.own_server(target, "tablestone-e2e-trace.",
                                     ["--adminApi", "--trace", trace, "--traceBodies", "--traceDir", tmp]):
        endpoint = types.SimpleNamespace(host="127.0.0.1", port=server.port, account=harness.ACCOUNT,
                                         key=harness.ACCOUNT_KEY, base_path="/" + harness.ACCOUNT)
        yield types.SimpleNamespace(server=server, trace=trace, tmp=tmp, raw=harness.RawClient(endpoint),
                                    url="http://127.0.0.1:%d/%s" % (server.port, harness.ACCOUNT))
    shutil.rmtree(tmp, ignore_errors=True)


def switch(raw, sign=True, **body):
    """POST /_tablestone/trace (or GET when body is empty); returns (status, json)."""
    if body:
        resp = raw.request("POST", "/_tablestone/trace", body=body, raw_path=True, sign=sign)
    else:
        resp = raw.request("GET", "/_tablestone/trace", raw_path=True, sign=sign)
    return resp.status, resp.json()


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def test_trace_bodies_are_redacted_and_the_admin_switch_works(traced):
    credential = AzureNamedKeyCredential(harness.ACCOUNT, harness.ACCOUNT_KEY)
    service = TableServiceClient(endpoint=traced.url, credential=credential)
    table = service.create_table("traced")
    table.create_entity({"PartitionKey": "p", "RowKey": "1", "Text": "hello"})
    table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "2"})])
    assert len(list(table.query_entities("Text eq 'hello'"))) == 1
    sas = generate_table_sas(credential, "traced", permission=TableSasPermissions(read=True, add=True),
                             expiry=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1))
    sig = [p.split("=", 1)[1] for p in sas.split("&") if p.startswith("sig=")][0]
    by_sas = TableClient(endpoint=traced.url, table_name="traced", credential=AzureSasCredential(sas))
    assert by_sas.get_entity("p", "1")["Text"] == "hello"
    by_sas.create_entity({"PartitionKey": "p", "RowKey": "3"})
    insert = traced.raw.insert("traced", {"PartitionKey": "p", "RowKey": "4"})
    assert insert.status == 201

    # The run-time switch: state, off (drains and closes the file), then on into another file.
    status, state = switch(traced.raw)
    assert status == 200 and state["written"] >= 0
    assert (state["enabled"], state["file"], state["bodies"], state["dropped"]) == (True, traced.trace, True, 0)
    status, state = switch(traced.raw, enabled=False)
    assert status == 200 and state["enabled"] is False and state["file"] is None
    lines = read_lines(traced.trace)
    table.get_entity("p", "1")                       # not traced
    assert read_lines(traced.trace) == lines
    assert switch(traced.raw, sign=False, enabled=True, file="/tmp/x")[0] == 403
    # Only plain names in --traceDir (docs/admin-api.md, "Files").
    for outside in ("/tmp/x", "../x", os.path.join(traced.tmp, "sub", "x"), ".profile"):
        assert switch(traced.raw, enabled=True, file=outside)[0] == 400, outside
    second = os.path.join(traced.tmp, "second.jsonl")
    status, state = switch(traced.raw, enabled=True, file=second)
    assert status == 200 and state == {"enabled": True, "file": second, "bodies": False,
                                       "written": state["written"], "dropped": 0}
    table.get_entity("p", "2")
    switch(traced.raw, enabled=False)
    assert switch(traced.raw, enabled=True)[0] == 400  # no file to reopen

    # First file: every line complete, with headers and bodies, and no secret.
    for line in lines:
        assert check_trace.check_line(line, bodies=True) == [], line
    assert sig not in "".join(lines)
    parsed = [json.loads(line) for line in lines]
    by_op = {}
    for p in parsed:
        by_op.setdefault(p["operation"], []).append(p)
    assert sorted(by_op) == ["CreateTable", "EntityGroupTransaction", "GetEntity", "InsertEntity",
                             "QueryEntities"]
    raw_insert = [p for p in parsed if p["requestId"] == insert.header("x-ms-request-id")]
    assert len(raw_insert) == 1
    assert raw_insert[0]["requestHeaders"]["Authorization"] == "REDACTED"
    assert json.loads(raw_insert[0]["requestBody"]) == {"PartitionKey": "p", "RowKey": "4"}
    assert (raw_insert[0]["partitionKey"], raw_insert[0]["rowKey"], raw_insert[0]["status"]) == ("p", "4", 201)
    assert raw_insert[0]["responseHeaders"]["x-ms-request-id"] == insert.header("x-ms-request-id")
    sas_get = by_op["GetEntity"][0]
    assert "sig=REDACTED" in sas_get["url"] and (sas_get["partitionKey"], sas_get["rowKey"]) == ("p", "1")
    assert "Authorization" not in sas_get["requestHeaders"]
    query = by_op["QueryEntities"][0]
    assert (query["rowsScanned"], query["rowsReturned"]) == (2, 1)
    assert all(p["client"] == "127.0.0.1" and p["account"] == harness.ACCOUNT for p in parsed)

    # Second file: only the request made while it was on, without bodies.
    second_lines = read_lines(second)
    assert len(second_lines) == 1
    assert check_trace.check_line(second_lines[0], bodies=False) == []
    line = json.loads(second_lines[0])
    assert (line["operation"], line["partitionKey"], line["rowKey"]) == ("GetEntity", "p", "2")


def test_trace_records_refusals_with_nulls(traced):
    """A request refused before routing or authentication still gets its line."""
    bad = traced.raw.request("GET", "/Tables", sign=False)           # no Authorization
    assert bad.status == 403
    switch(traced.raw, enabled=False)
    lines = [json.loads(line) for line in read_lines(traced.trace)]
    refused = [p for p in lines if p["requestId"] == bad.header("x-ms-request-id")]
    assert len(refused) == 1
    assert refused[0]["status"] == 403 and refused[0]["errorCode"] == "AuthenticationFailed"
    assert refused[0]["operation"] == "QueryTables" and refused[0]["table"] is None
    assert refused[0]["storageUs"] == 0 and refused[0]["rowsScanned"] is None
