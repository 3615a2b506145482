"""--loose: Azurite's leniencies that the service refuses (docs/migrating-from-azurite.md), each
accepted by a server started with --loose, refused by the default (strict) one, and logged once."""

import base64
import datetime
import hashlib
import hmac
import http.client
import os
import shutil
import tempfile
import types
import urllib.parse

import pytest
from azure.core.credentials import AzureSasCredential
from azure.data.tables import (TableAccessPolicy, TableClient, TableSasPermissions, TableServiceClient,
                               UpdateMode)

import harness
from conftest import sdk_error_code, unique_name

ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def _iso(delta):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=delta)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _sign(text):
    return base64.b64encode(hmac.new(base64.b64decode(KEY), text.encode(), hashlib.sha256).digest()).decode()


def _table_sas(tn, sp="", se="", si=""):
    to_sign = "\n".join([sp, "", se, "/table/%s/%s" % (ACCOUNT, tn.lower()), si, "", "", "2019-02-02",
                         "", "", "", ""])
    fields = [("sv", "2019-02-02"), ("tn", tn), ("sp", sp), ("se", se), ("si", si), ("sig", _sign(to_sign))]
    return urllib.parse.urlencode([(k, v) for k, v in fields if v], quote_via=urllib.parse.quote)


def _start(binary, loose):
    tmp = tempfile.mkdtemp(prefix="tablestone-e2e-loose.")
    os.mkdir(os.path.join(tmp, "data"))
    server = harness.ManagedServer(binary, os.path.join(tmp, "data"), harness.free_port(),
                                   extra_env={"TABLESTONE_LOOSE": "true" if loose else "false"})
    server.start()
    return server, tmp


@pytest.fixture(scope="module")
def servers(target):
    if not target.managed:
        pytest.skip("needs tablestone processes started by the harness")
    loose, loose_tmp = _start(target.server.binary, True)
    strict, strict_tmp = _start(target.server.binary, False)
    try:
        yield {"loose": loose, "strict": strict}
    finally:
        codes = [loose.stop(), strict.stop()]
        shutil.rmtree(loose_tmp, ignore_errors=True)
        shutil.rmtree(strict_tmp, ignore_errors=True)
        assert codes == [0, 0]


def _endpoint(server):
    return "http://127.0.0.1:%d/%s" % (server.port, ACCOUNT)


def _table(server):
    conn = "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;" % (
        ACCOUNT, KEY, _endpoint(server))
    service = TableServiceClient.from_connection_string(conn)
    return service.create_table(unique_name())


def _dateless_query_tables(server):
    """Query Tables signed with SharedKey over an empty date, with neither Date nor x-ms-date sent."""
    to_sign = "\n".join(["GET", "", "", "", "/%s/%s/Tables" % (ACCOUNT, ACCOUNT)])  # path-style
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.putrequest("GET", "/%s/Tables" % ACCOUNT, skip_accept_encoding=True)
        for k, v in (("x-ms-version", "2019-02-02"), ("Accept", "application/json;odata=nometadata"),
                     ("Authorization", "SharedKey %s:%s" % (ACCOUNT, _sign(to_sign)))):
            conn.putheader(k, v)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.getheader("x-ms-error-code")
    finally:
        conn.close()


def test_request_without_any_date(servers):
    assert _dateless_query_tables(servers["strict"]) == (403, "AuthenticationFailed")
    assert _dateless_query_tables(servers["loose"])[0] == 200
    assert _dateless_query_tables(servers["loose"])[0] == 200
    log = servers["loose"].log_tail(200000)
    assert log.count("--loose: accepted a SharedKey request with neither Date nor x-ms-date") == 1


def _policy_sas_insert(server):
    table = _table(server)
    table.set_table_access_policy({"writers": TableAccessPolicy(
        permission=TableSasPermissions(add=True, read=True), expiry=datetime.datetime.utcnow() +
        datetime.timedelta(hours=1))})
    # The token repeats the policy's permission field.
    sas = _table_sas(table.table_name, sp="a", si="writers")
    client = TableClient(_endpoint(server), table.table_name, credential=AzureSasCredential(sas))
    try:
        client.create_entity({"PartitionKey": "p", "RowKey": "r"})
        return 204, table.get_entity("p", "r")["RowKey"]
    except Exception as e:  # noqa: BLE001
        return getattr(e, "status_code", None), sdk_error_code(e)


def test_service_sas_repeating_its_policy(servers):
    status, code = _policy_sas_insert(servers["strict"])
    assert (status, code) == (403, "AuthenticationFailed")
    assert _policy_sas_insert(servers["loose"]) == (204, "r")
    assert servers["loose"].log_tail(200000).count("a service SAS repeating a field") == 1


def _upsert_with_u_only(server):
    table = _table(server)
    sas = _table_sas(table.table_name, sp="ru", se=_iso(3600))
    client = TableClient(_endpoint(server), table.table_name, credential=AzureSasCredential(sas))
    try:
        client.upsert_entity({"PartitionKey": "p", "RowKey": "u", "v": 1}, mode=UpdateMode.MERGE)
        client.upsert_entity({"PartitionKey": "p", "RowKey": "u", "w": 2}, mode=UpdateMode.REPLACE)
        return 204, sorted(k for k in table.get_entity("p", "u").keys())
    except Exception as e:  # noqa: BLE001
        return getattr(e, "status_code", None), sdk_error_code(e)


def test_upsert_through_sas_with_u_but_not_a(servers):
    status, code = _upsert_with_u_only(servers["strict"])
    assert status == 403 and code == "AuthorizationPermissionMismatch"
    assert _upsert_with_u_only(servers["loose"]) == (204, ["PartitionKey", "RowKey", "w"])
    assert servers["loose"].log_tail(200000).count("an upsert through a SAS granting 'u' without 'a'") == 1


def _raw(server):
    """A RawClient (SharedKey-signed raw HTTP) for one of this module's servers."""
    return harness.RawClient(types.SimpleNamespace(host="127.0.0.1", port=server.port, base_path="/" + ACCOUNT,
                                                   account=ACCOUNT, key=KEY))


def _sas_with_a_failing_authorization(server):
    """Query Tables with a valid account SAS and an Authorization header signed with a wrong key."""
    table = _table(server)
    sas = _table_sas(table.table_name, sp="r", se=_iso(3600))
    raw = _raw(server)
    wrong = "SharedKey %s:%s" % (ACCOUNT, base64.b64encode(b"\0" * 32).decode())
    r = raw.request("GET", "/%s()?%s" % (table.table_name, sas), sign=False, headers={"Authorization": wrong})
    return r.status, r.header("x-ms-error-code")


def test_sas_beside_a_failing_authorization_header(servers):
    """Issue 36: Azurite tries each credential in turn, so a valid SAS authorizes a request whose
    Authorization header fails; the service (and the default mode) lets the header decide."""
    assert _sas_with_a_failing_authorization(servers["strict"]) == (403, "AuthenticationFailed")
    assert _sas_with_a_failing_authorization(servers["loose"])[0] == 200
    assert _sas_with_a_failing_authorization(servers["loose"])[0] == 200
    # A SAS that fails too leaves the header's error.
    raw = _raw(servers["loose"])
    wrong = "SharedKey %s:%s" % (ACCOUNT, base64.b64encode(b"\0" * 32).decode())
    r = raw.request("GET", "/Tables?sv=2019-02-02&ss=t&srt=sco&sp=r&se=%s&sig=bad" % _iso(3600), sign=False,
                    headers={"Authorization": wrong})
    assert (r.status, r.header("x-ms-error-code")) == (403, "AuthenticationFailed")
    log = servers["loose"].log_tail(200000)
    assert log.count("whose Authorization header failed, on the strength of its valid SAS") == 1


def _batch_with_content_type(server, content_type):
    table = _table(server)
    raw = _raw(server)
    _, body = harness.build_batch("http://127.0.0.1:%d/%s" % (server.port, ACCOUNT), [
        ("POST", "/" + table.table_name, {"PartitionKey": "p", "RowKey": "r%d" % i}, None) for i in range(3)])
    r = raw.request("POST", "/$batch", body=body, content_type=content_type, accept=None)
    return r.status, r.header("x-ms-error-code"), sorted(e["RowKey"] for e in table.list_entities())


def test_batch_with_a_non_multipart_content_type(servers):
    """Issue 36: Azurite reads a well-formed multipart $batch body whatever its Content-Type;
    the service (and the default mode) answers 400 InvalidInput."""
    assert _batch_with_content_type(servers["strict"], "application/json") == (400, "InvalidInput", [])
    for content_type in ("application/json", "text/plain"):
        status, _, rows = _batch_with_content_type(servers["loose"], content_type)
        assert (status, rows) == (202, ["r0", "r1", "r2"]), content_type
    # A body that is not a multipart batch stays an error.
    r = _raw(servers["loose"]).request("POST", "/$batch", body=b"--batch_x\r\nnot a part\r\n",
                                       content_type="application/json", accept=None)
    assert (r.status, r.header("x-ms-error-code")) == (400, "InvalidInput")
    log = servers["loose"].log_tail(200000)
    assert log.count("a $batch whose Content-Type is not multipart/mixed") == 1
