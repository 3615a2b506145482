"""The access log with --logFormat json (issue 35): one JSON object per request whose members are the
request's facts (docs/observability.md, "Logging"), not a message string, and never a SAS signature."""

import datetime
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import ResourceNotFoundError
from azure.data.tables import TableClient, TableSasPermissions, TableServiceClient, generate_table_sas

import harness

FIELDS = ["time", "level", "logger", "peer", "method", "path", "status", "errorCode", "durationMs", "bytes",
          "account", "operation", "requestId"]


@pytest.fixture
def binary(target):
    if target.server is None:
        pytest.skip("needs the managed tablestone binary")
    return target.server.binary


def _run(binary, args, workdir):
    """Starts the server with `args`, its stdout in a file; returns (proc, port, path of stdout)."""
    port = harness.free_port()
    out_path = os.path.join(workdir, "stdout")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLESTONE_")}
    with open(out_path, "wb") as out:
        proc = subprocess.Popen([binary, "--tablePort", str(port), "-l", os.path.join(workdir, "data")] + args,
                                stdout=out, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 20
    while True:
        assert proc.poll() is None, proc.communicate()
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/_tablestone/health" % port, timeout=2):
                break
        except OSError:
            assert time.monotonic() < deadline, "not healthy"
            time.sleep(0.05)
    return proc, port, out_path


def _stop(proc):
    proc.terminate()
    proc.wait(20)


def test_json_access_log_has_every_field_and_no_signature(binary):
    workdir = tempfile.mkdtemp(prefix="tablestone-e2e-access.")
    try:
        proc, port, out_path = _run(binary, ["--logFormat", "json"], workdir)
        try:
            endpoint = "http://127.0.0.1:%d/%s" % (port, harness.ACCOUNT)
            key = AzureNamedKeyCredential(harness.ACCOUNT, harness.ACCOUNT_KEY)
            service = TableServiceClient(endpoint, credential=key)
            table = service.create_table("accesslog")
            table.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 1})
            with pytest.raises(ResourceNotFoundError) as missing:
                table.get_entity("p", "absent")
            missing_id = missing.value.response.headers["x-ms-request-id"]
            sas = generate_table_sas(key, "accesslog", permission=TableSasPermissions(read=True),
                                     expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=1))
            signature = dict(part.split("=", 1) for part in sas.split("&"))["sig"]
            by_sas = TableClient(endpoint, "accesslog", credential=AzureSasCredential(sas))
            assert [e["RowKey"] for e in by_sas.query_entities("PartitionKey eq 'p'")] == ["r"]
        finally:
            _stop(proc)
        text = open(out_path, encoding="utf-8").read()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    # No spelling of the signature anywhere in the log (raw or percent-encoded).
    assert signature not in text
    assert urllib.parse.quote(signature, safe="") not in text
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    access = [line for line in lines if line.get("logger") == "access"]
    assert len(access) >= 5, text
    for line in access:
        assert list(line) == FIELDS, line  # every member, in its order
        assert line["peer"] == "127.0.0.1" and line["level"] == "info"
        assert isinstance(line["status"], int) and isinstance(line["bytes"], int)
        assert isinstance(line["durationMs"], (int, float)) and line["durationMs"] >= 0
        assert "msg" not in line
    # The SDK's calls, each with the account, the operation and the answer's request id.
    table_api = [line for line in access if not line["path"].startswith("/_tablestone/")]
    operations = [line["operation"] for line in table_api]
    for op in ("CreateTable", "InsertEntity", "GetEntity", "QueryEntities"):
        assert op in operations, operations
    for line in table_api:
        assert line["account"] == harness.ACCOUNT, line
        assert len(line["requestId"]) == 36, line
    miss = [line for line in table_api if line["requestId"] == missing_id]
    assert len(miss) == 1, (missing_id, table_api)
    assert miss[0]["status"] == 404 and miss[0]["errorCode"] == "ResourceNotFound", miss[0]
    assert miss[0]["method"] == "GET" and miss[0]["path"].startswith("/%s/accesslog(" % harness.ACCOUNT), miss[0]
    ok = [line for line in table_api if line["operation"] == "InsertEntity"]
    assert ok[0]["status"] == 201 and ok[0]["errorCode"] is None, ok
    by_sas_line = [line for line in table_api if "sig=" in line["path"]]
    assert len(by_sas_line) == 1 and "sig=REDACTED" in by_sas_line[0]["path"], table_api
    # The health probe (a server route, not the Table API) has no account or operation.
    health = [line for line in access if line["path"] == "/_tablestone/health"]
    assert health and health[0]["account"] is None and health[0]["operation"] is None, health


def test_text_access_log_is_unchanged(binary):
    """The text format keeps its one-line shape: PEER "METHOD TARGET" STATUS BYTES MICROSus."""
    import re
    workdir = tempfile.mkdtemp(prefix="tablestone-e2e-access.")
    try:
        proc, port, out_path = _run(binary, [], workdir)
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/_tablestone/health" % port, timeout=5).read()
        finally:
            _stop(proc)
        text = open(out_path, encoding="utf-8").read()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    access = [line for line in text.splitlines() if "[access]" in line]
    assert access, text
    assert re.search(r'\[access\] info: 127\.0\.0\.1 "GET /_tablestone/health" 200 \d+ \d+us$', access[-1]), access
