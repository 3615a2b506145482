"""Authentication and authorisation (spec 8): SharedKey / SharedKeyLite, the date rules, anonymous
requests, account and table SAS built by azure.data.tables and by hand (every missing permission,
key ranges on reads, writes and batches, time window, IP, protocol), stored access policies, and
account isolation with several accounts from AZURITE_ACCOUNTS."""

import base64
import datetime
import hashlib
import hmac
import os
import tempfile
import shutil
import urllib.parse
import uuid
from email.utils import formatdate

import pytest
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from azure.data.tables import (AccountSasPermissions, ResourceTypes, TableAccessPolicy, TableClient,
                               TableServiceClient, TableSasPermissions, UpdateMode,
                               generate_account_sas, generate_table_sas)

import harness
from conftest import sdk_error_code, unique_name

SAS_VERSION = "2019-02-02"


def iso(delta_seconds):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=delta_seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _sign(key_b64, text):
    key = base64.b64decode(key_b64)
    return base64.b64encode(hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()).decode()


def table_sas(account, key, tn, sp="raud", se=None, st="", spk="", srk="", epk="", erk="", si="",
              sip="", spr="", sig=None):
    """A service (table) SAS query string, signed as the REST docs describe (spec 8.3)."""
    se = iso(3600) if se is None else se
    to_sign = "\n".join([sp, st, se, "/table/%s/%s" % (account, tn.lower()), si, sip, spr,
                         SAS_VERSION, spk, srk, epk, erk])
    fields = [("sv", SAS_VERSION), ("tn", tn), ("sp", sp), ("st", st), ("se", se), ("spk", spk),
              ("srk", srk), ("epk", epk), ("erk", erk), ("si", si), ("sip", sip), ("spr", spr),
              ("sig", sig if sig is not None else _sign(key, to_sign))]
    return urllib.parse.urlencode([(k, v) for k, v in fields if v], quote_via=urllib.parse.quote)


def account_sas(account, key, sp="rwdlacu", ss="t", srt="sco", se=None, st="", sip="", spr=""):
    se = iso(3600) if se is None else se
    to_sign = "\n".join([account, sp, ss, srt, st, se, sip, spr, SAS_VERSION]) + "\n"
    fields = [("sv", SAS_VERSION), ("ss", ss), ("srt", srt), ("sp", sp), ("st", st), ("se", se),
              ("sip", sip), ("spr", spr), ("sig", _sign(key, to_sign))]
    return urllib.parse.urlencode([(k, v) for k, v in fields if v], quote_via=urllib.parse.quote)


def with_query(rel, query):
    return rel + ("&" if "?" in rel else "?") + query


def code_of(resp):
    return resp.header("x-ms-error-code")


@pytest.fixture
def filled(table):
    """A table with PartitionKeys a..d and RowKeys 1..3."""
    for pk in "abcd":
        for rk in "123":
            table.create_entity({"PartitionKey": pk, "RowKey": rk, "V": pk + rk})
    return table


def _named_credential(target):
    return AzureNamedKeyCredential(target.account, target.key)


# ---- Shared Key ---------------------------------------------------------------------------------

def test_named_key_credential(target):
    service = TableServiceClient(target.endpoint, credential=_named_credential(target))
    name = unique_name()
    service.create_table(name)
    try:
        assert name in [t.name for t in service.list_tables()]
    finally:
        service.delete_table(name)

    bad = TableServiceClient(target.endpoint, credential=AzureNamedKeyCredential(
        target.account, base64.b64encode(b"x" * 64).decode()))
    with pytest.raises(ClientAuthenticationError) as exc:
        list(bad.list_tables())
    assert sdk_error_code(exc.value) == "AuthenticationFailed"


def _lite_request(raw, rel, date_header="x-ms-date", date=None, key=None, path_for_signature=None):
    target = raw.target
    full = raw.url_path(rel)
    date = date or formatdate(usegmt=True)
    split = urllib.parse.urlsplit(path_for_signature or full)
    resource = "/" + target.account + split.path
    comp = urllib.parse.parse_qs(split.query).get("comp")
    if comp:
        resource += "?comp=" + comp[0]
    sig = _sign(key or target.key, date + "\n" + resource)
    headers = {"x-ms-date": None, date_header: date,
               "Authorization": "SharedKeyLite %s:%s" % (target.account, sig)}
    return raw.request("GET", rel, headers=headers, sign=False)


def test_shared_key_lite(raw, table):
    assert _lite_request(raw, "/Tables").status == 200
    assert _lite_request(raw, "/%s()" % table.table_name).status == 200
    assert _lite_request(raw, "/?restype=service&comp=properties").status == 200
    assert _lite_request(raw, "/Tables", date_header="Date").status == 200  # Java signs Date
    r = _lite_request(raw, "/Tables", key=base64.b64encode(b"k" * 64).decode())
    assert (r.status, r.error_code) == (403, "AuthenticationFailed")
    # The resource must include ?comp=: signing without it fails.
    r = _lite_request(raw, "/?restype=service&comp=properties",
                      path_for_signature=raw.url_path("/"))
    assert r.status == 403


def test_shared_key_date_rules(raw):
    now = datetime.datetime.now(datetime.timezone.utc).timestamp()
    assert raw.request("GET", "/Tables", headers={
        "x-ms-date": formatdate(now - 10 * 60, usegmt=True)}).status == 200
    for skew in (-16 * 60, 16 * 60):
        r = raw.request("GET", "/Tables", headers={"x-ms-date": formatdate(now + skew, usegmt=True)})
        assert (r.status, r.error_code) == (403, "AuthenticationFailed"), skew
    r = raw.request("GET", "/Tables", headers={"x-ms-date": None})
    assert (r.status, r.error_code) == (403, "AuthenticationFailed")
    # Date alone is accepted; x-ms-date wins over Date when both are sent.
    assert raw.request("GET", "/Tables", headers={
        "x-ms-date": None, "Date": formatdate(now, usegmt=True)}).status == 200
    r = raw.request("GET", "/Tables", headers={"Date": formatdate(now - 3600, usegmt=True)})
    assert r.status == 200


def test_shared_key_failures(raw):
    r = raw.request("GET", "/Tables", sign=False)
    assert (r.status, r.error_code) == (403, "AuthenticationFailed")
    good = raw.sign("GET", raw.url_path("/Tables"), {"x-ms-date": formatdate(usegmt=True)})
    tampered = good[:-5] + ("A" if good[-5] != "A" else "B") + good[-4:]
    for auth in (tampered, "SharedKey otheraccount:" + good.split(":", 1)[1], "Bearer abc"):
        r = raw.request("GET", "/Tables", headers={"Authorization": auth}, sign=False)
        assert (r.status, r.error_code) == (403, "AuthenticationFailed"), auth
    r = raw.request("GET", "/Tables", headers={"Authorization": "SharedKey nocolon"}, sign=False)
    assert r.status == 400
    assert r.error_code == "InvalidAuthenticationInfo"
    # Signing a different verb or content type breaks the SharedKey signature.
    hdrs = {"x-ms-date": formatdate(usegmt=True)}
    r = raw.request("GET", "/Tables", headers=dict(hdrs, Authorization=raw.sign(
        "POST", raw.url_path("/Tables"), hdrs)), sign=False)
    assert r.status == 403


# ---- SAS through the SDK ------------------------------------------------------------------------

def test_generate_table_sas_read_only(target, filled):
    sas = generate_table_sas(_named_credential(target), filled.table_name,
                             permission=TableSasPermissions(read=True),
                             expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=1))
    client = TableClient(target.endpoint, filled.table_name, credential=AzureSasCredential(sas))
    assert len(list(client.list_entities())) == 12
    assert client.get_entity("a", "1")["V"] == "a1"
    with pytest.raises(HttpResponseError) as exc:
        client.create_entity({"PartitionKey": "z", "RowKey": "z"})
    assert exc.value.status_code == 403
    assert sdk_error_code(exc.value) == "AuthorizationPermissionMismatch"
    with pytest.raises(HttpResponseError) as exc:
        client.delete_entity("a", "1")
    assert sdk_error_code(exc.value) == "AuthorizationPermissionMismatch"
    # A table SAS cannot reach table-level operations.
    service = TableServiceClient(target.endpoint, credential=AzureSasCredential(sas))
    with pytest.raises(HttpResponseError) as exc:
        list(service.list_tables())
    assert sdk_error_code(exc.value) == "AuthorizationFailure"


def test_generate_table_sas_key_range(target, filled):
    sas = generate_table_sas(_named_credential(target), filled.table_name,
                             permission=TableSasPermissions(read=True, add=True, update=True,
                                                            delete=True),
                             expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=1),
                             start_pk="b", start_rk="2", end_pk="c", end_rk="2")
    client = TableClient(target.endpoint, filled.table_name, credential=AzureSasCredential(sas))
    got = [(e["PartitionKey"], e["RowKey"]) for e in client.list_entities()]
    assert got == [("b", "2"), ("b", "3"), ("c", "1"), ("c", "2")]
    filtered = [e["V"] for e in client.query_entities("RowKey eq '2'")]
    assert filtered == ["b2", "c2"]
    client.upsert_entity({"PartitionKey": "b", "RowKey": "9", "V": "in"}, mode=UpdateMode.MERGE)
    for entity in ({"PartitionKey": "a", "RowKey": "9"}, {"PartitionKey": "c", "RowKey": "3"},
                   {"PartitionKey": "b", "RowKey": "1"}):
        with pytest.raises(HttpResponseError) as exc:
            client.create_entity(entity)
        assert exc.value.status_code == 403, entity
        assert sdk_error_code(exc.value) == "AuthorizationFailure"
    with pytest.raises(HttpResponseError):
        client.update_entity({"PartitionKey": "d", "RowKey": "1", "V": "x"})
    with pytest.raises(HttpResponseError):
        client.get_entity("a", "1")
    # Python's delete_entity swallows only 404s, so a 403 surfaces.
    with pytest.raises(HttpResponseError):
        client.delete_entity("d", "3")
    # Batches: one operation outside the range fails the whole changeset.
    with pytest.raises(Exception):
        client.submit_transaction([("create", {"PartitionKey": "c", "RowKey": "1a"}),
                                   ("create", {"PartitionKey": "c", "RowKey": "5"})])
    owner = TableClient.from_connection_string(target.connection_string, filled.table_name)
    assert [e["RowKey"] for e in owner.query_entities("PartitionKey eq 'c'")] == ["1", "2", "3"]
    client.submit_transaction([("create", {"PartitionKey": "c", "RowKey": "1a"}),
                               ("upsert", {"PartitionKey": "c", "RowKey": "1b"})])
    assert owner.get_entity("c", "1b")["RowKey"] == "1b"
    assert owner.get_entity("d", "1")["V"] == "d1"


def test_table_sas_with_stored_policy(target, filled):
    filled.set_table_access_policy({
        "readers": TableAccessPolicy(permission=TableSasPermissions(read=True),
                                     expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=1)),
    })
    sas = generate_table_sas(_named_credential(target), filled.table_name, policy_id="readers")
    client = TableClient(target.endpoint, filled.table_name, credential=AzureSasCredential(sas))
    assert len(list(client.list_entities())) == 12
    with pytest.raises(HttpResponseError) as exc:
        client.create_entity({"PartitionKey": "z", "RowKey": "z"})
    assert sdk_error_code(exc.value) == "AuthorizationPermissionMismatch"
    # Revoking the policy revokes every token that names it.
    filled.set_table_access_policy({})
    with pytest.raises(HttpResponseError) as exc:
        list(client.list_entities())
    assert exc.value.status_code == 403
    assert sdk_error_code(exc.value) == "AuthenticationFailed"


def test_generate_account_sas(target, filled):
    sas = generate_account_sas(
        _named_credential(target), resource_types=ResourceTypes(service=True, object=True),
        permission=AccountSasPermissions(read=True, list=True),
        expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=1))
    service = TableServiceClient(target.endpoint, credential=AzureSasCredential(sas))
    assert filled.table_name in [t.name for t in service.list_tables()]
    assert service.get_service_properties()["analytics_logging"].version == "1.0"
    client = service.get_table_client(filled.table_name)
    assert len(list(client.list_entities())) == 12
    with pytest.raises(HttpResponseError) as exc:
        client.create_entity({"PartitionKey": "z", "RowKey": "z"})
    assert sdk_error_code(exc.value) == "AuthorizationPermissionMismatch"
    with pytest.raises(HttpResponseError) as exc:
        service.create_table(unique_name())
    assert sdk_error_code(exc.value) == "AuthorizationPermissionMismatch"

    writer_sas = generate_account_sas(
        _named_credential(target), resource_types=ResourceTypes(service=True, object=True),
        permission=AccountSasPermissions(read=True, write=True, delete=True, list=True, add=True,
                                         create=True, update=True),
        expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=1))
    writer = TableServiceClient(target.endpoint, credential=AzureSasCredential(writer_sas))
    name = unique_name()
    writer.create_table(name)
    try:
        tc = writer.get_table_client(name)
        tc.create_entity({"PartitionKey": "p", "RowKey": "r"})
        tc.upsert_entity({"PartitionKey": "p", "RowKey": "r", "X": 1})
        tc.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "s"})])
        tc.delete_entity("p", "r")
        assert [e["RowKey"] for e in tc.list_entities()] == ["s"]
        # ACLs are Shared Key only.
        with pytest.raises(HttpResponseError) as exc:
            tc.get_table_access_policy()
        assert sdk_error_code(exc.value) == "AuthorizationFailure"
    finally:
        writer.delete_table(name)


# ---- SAS by hand: every missing permission and out-of-range case ---------------------------------

ENTITY = "/%s(PartitionKey='b',RowKey='2')"

# (name, method, path template, body, headers, letters needed)
SERVICE_SAS_OPS = [
    ("query", "GET", "/%s()", None, None, "r"),
    ("get", "GET", ENTITY, None, None, "r"),
    ("insert", "POST", "/%s", {"PartitionKey": "b", "RowKey": "new"}, None, "a"),
    ("update", "PUT", ENTITY, {"V": "u"}, {"If-Match": "*"}, "u"),
    ("merge", "MERGE", ENTITY, {"V": "m"}, {"If-Match": "*"}, "u"),
    ("upsert-replace", "PUT", ENTITY, {"V": "x"}, None, "au"),
    ("upsert-merge", "PATCH", ENTITY, {"V": "y"}, None, "au"),
    ("delete", "DELETE", ENTITY, None, {"If-Match": "*"}, "d"),
]


@pytest.mark.parametrize("op", SERVICE_SAS_OPS, ids=[o[0] for o in SERVICE_SAS_OPS])
def test_service_sas_missing_permission(raw, filled, op):
    name, method, path, body, headers, needed = op
    tn = filled.table_name
    for letter in needed:
        sp = "".join(c for c in "raud" if c != letter)
        r = raw.request(method, with_query(path % tn, table_sas(raw.target.account, raw.target.key,
                                                                 tn, sp=sp)),
                        body=body, headers=headers, sign=False)
        assert r.status == 403, (name, sp, r)
        assert code_of(r) == "AuthorizationPermissionMismatch", (name, sp, r)
    r = raw.request(method, with_query(path % tn, table_sas(raw.target.account, raw.target.key, tn,
                                                             sp=needed)),
                    body=body, headers=headers, sign=False)
    assert r.status in (200, 201, 204), (name, r)


def test_service_sas_refusals(raw, filled, service):
    account, key, tn = raw.target.account, raw.target.key, filled.table_name

    def get(query, rel="/%s()" % tn):
        return raw.request("GET", with_query(rel, query), sign=False)

    assert get(table_sas(account, key, tn, sp="r")).status == 200
    assert get(table_sas(account, key, tn.upper(), sp="r")).status == 200  # tn is case-insensitive
    cases = [
        ("expired", table_sas(account, key, tn, sp="r", se=iso(-60)), "AuthenticationFailed"),
        ("not yet valid", table_sas(account, key, tn, sp="r", st=iso(600)), "AuthenticationFailed"),
        ("bad signature", table_sas(account, key, tn, sp="r", sig=_sign(key, "forged")),
         "AuthenticationFailed"),
        ("other key", table_sas(account, base64.b64encode(b"q" * 64).decode(), tn, sp="r"),
         "AuthenticationFailed"),
        ("https only", table_sas(account, key, tn, sp="r", spr="https"),
         "AuthorizationProtocolMismatch"),
        ("ip", table_sas(account, key, tn, sp="r", sip="10.1.2.3"), "AuthorizationSourceIPMismatch"),
        ("ip range", table_sas(account, key, tn, sp="r", sip="10.0.0.0-10.255.255.255"),
         "AuthorizationSourceIPMismatch"),
        ("unknown policy", table_sas(account, key, tn, si="nosuchpolicy"), "AuthenticationFailed"),
        ("srk without spk", table_sas(account, key, tn, sp="r", srk="1"), "AuthenticationFailed"),
    ]
    for label, query, code in cases:
        r = get(query)
        assert (r.status, code_of(r)) == (403, code), (label, r)
    assert get(table_sas(account, key, tn, sp="r", sip="127.0.0.1")).status == 200
    assert get(table_sas(account, key, tn, sp="r", sip="127.0.0.0-127.0.0.255")).status == 200
    assert get(table_sas(account, key, tn, sp="r", spr="https,http")).status == 200

    # Another table, and table-level/service-level operations, are out of a table SAS's reach.
    other = service.create_table(unique_name())
    try:
        r = get(table_sas(account, key, tn, sp="raud"), rel="/%s()" % other.table_name)
        assert (r.status, code_of(r)) == (403, "AuthorizationFailure")
    finally:
        service.delete_table(other.table_name)
    sas = table_sas(account, key, tn, sp="raud")
    for method, rel, body in (("GET", "/Tables", None), ("POST", "/Tables", {"TableName": "x" + tn}),
                              ("DELETE", "/Tables('%s')" % tn, None),
                              ("GET", "/%s?comp=acl" % tn, None),
                              ("GET", "/?restype=service&comp=properties", None)):
        r = raw.request(method, with_query(rel, sas), body=body, sign=False)
        assert (r.status, code_of(r)) == (403, "AuthorizationFailure"), (method, rel, r)
    assert filled.get_entity("a", "1")["V"] == "a1"


def test_service_sas_key_ranges_raw(raw, filled):
    account, key, tn = raw.target.account, raw.target.key, filled.table_name
    # spk only -> PK >= b; epk only -> PK <= c; spk+srk / epk+erk bound the row keys too.
    for kwargs, expected in (
            ({"spk": "b"}, ["b1", "b2", "b3", "c1", "c2", "c3", "d1", "d2", "d3"]),
            ({"epk": "b"}, ["a1", "a2", "a3", "b1", "b2", "b3"]),
            ({"spk": "a", "srk": "3", "epk": "b", "erk": "1"}, ["a3", "b1"]),
            ({"spk": "c", "epk": "c"}, ["c1", "c2", "c3"])):
        sas = table_sas(account, key, tn, sp="raud", **kwargs)
        r = raw.request("GET", with_query("/%s()" % tn, sas), sign=False)
        assert r.status == 200, r
        assert [e["V"] for e in r.json()["value"]] == expected, kwargs
        # Paging keeps the range.
        r = raw.request("GET", with_query("/%s()?$top=1" % tn, sas), sign=False)
        assert [e["V"] for e in r.json()["value"]] == expected[:1]

    sas = table_sas(account, key, tn, sp="raud", spk="b", srk="2", epk="c", erk="2")
    outside = [("POST", "/%s" % tn, {"PartitionKey": "a", "RowKey": "1x"}, None),
               ("PUT", "/%s(PartitionKey='b',RowKey='1')" % tn, {"V": 0}, {"If-Match": "*"}),
               ("PATCH", "/%s(PartitionKey='c',RowKey='3')" % tn, {"V": 0}, None),
               ("PUT", "/%s(PartitionKey='d',RowKey='1')" % tn, {"V": 0}, None),
               ("DELETE", "/%s(PartitionKey='a',RowKey='1')" % tn, None, {"If-Match": "*"}),
               ("GET", "/%s(PartitionKey='c',RowKey='3')" % tn, None, None)]
    for method, rel, body, headers in outside:
        r = raw.request(method, with_query(rel, sas), body=body, headers=headers, sign=False)
        assert (r.status, code_of(r)) == (403, "AuthorizationFailure"), (method, rel, r)
    assert filled.get_entity("b", "1")["V"] == "b1"
    assert filled.get_entity("a", "1")["V"] == "a1"

    # A batch with a sub-operation outside the range writes nothing.
    base = "http://%s:%d%s" % (raw.target.host, raw.target.port, raw.target.base_path)
    boundary, body = harness.build_batch(base, [
        ("POST", "/" + tn, {"PartitionKey": "c", "RowKey": "1a"}, None),
        ("PUT", "/%s(PartitionKey='c',RowKey='9')" % tn, {"V": "x"}, None),
    ])
    r = raw.request("POST", with_query("/$batch", sas), body=body, sign=False,
                    content_type="multipart/mixed; boundary=%s" % boundary, accept="application/json")
    if r.status == 202:
        parts = harness.parse_batch_response(r)
        assert len(parts) == 1 and parts[0].status == 403, parts
        assert parts[0].error_code == "AuthorizationFailure"
        assert parts[0].error_message.startswith("1:")
    else:
        assert (r.status, code_of(r)) == (403, "AuthorizationFailure"), r
    r = raw.request("GET", "/%s(PartitionKey='c',RowKey='1a')" % tn)
    assert r.status == 404


ACCOUNT_SAS_CASES = [
    # (label, method, path template, body, headers, srt, sp, expected code)
    # Query Tables takes l (REST docs) or r (what some SDK samples grant); see batch-auth notes.
    ("list tables needs l or r", "GET", "/Tables", None, None, "sco", "wdacu",
     "AuthorizationPermissionMismatch"),
    ("create table needs c/w/a", "POST", "/Tables", {"TableName": "NEWNAME"}, None, "sco", "rdlu",
     "AuthorizationPermissionMismatch"),
    ("delete table needs d", "DELETE", "/Tables('%s')", None, None, "sco", "rwlacu",
     "AuthorizationPermissionMismatch"),
    ("query needs r", "GET", "/%s()", None, None, "sco", "wdlacu", "AuthorizationPermissionMismatch"),
    ("query needs o", "GET", "/%s()", None, None, "sc", "rwdlacu", "AuthorizationResourceTypeMismatch"),
    ("insert needs a", "POST", "/%s", {"PartitionKey": "z", "RowKey": "z"}, None, "sco", "rwdlcu",
     "AuthorizationPermissionMismatch"),
    ("update needs u", "PUT", ENTITY, {"V": 1}, {"If-Match": "*"}, "sco", "rwdlac",
     "AuthorizationPermissionMismatch"),
    ("upsert needs a", "PATCH", ENTITY, {"V": 1}, None, "sco", "rwdlcu", "AuthorizationPermissionMismatch"),
    ("delete needs d", "DELETE", ENTITY, None, {"If-Match": "*"}, "sco", "rwlacu",
     "AuthorizationPermissionMismatch"),
    ("properties need s", "GET", "/?restype=service&comp=properties", None, None, "co", "rwdlacu",
     "AuthorizationResourceTypeMismatch"),
    ("set properties needs w", "PUT", "/?restype=service&comp=properties", "<StorageServiceProperties/>",
     None, "sco", "rdlacu", "AuthorizationPermissionMismatch"),
    ("acl is shared key only", "GET", "/%s?comp=acl", None, None, "sco", "rwdlacu", "AuthorizationFailure"),
]


@pytest.mark.parametrize("case", ACCOUNT_SAS_CASES, ids=[c[0] for c in ACCOUNT_SAS_CASES])
def test_account_sas_missing_permission(raw, filled, case):
    label, method, path, body, headers, srt, sp, code = case
    rel = path % filled.table_name if "%s" in path else path
    sas = account_sas(raw.target.account, raw.target.key, sp=sp, srt=srt)
    r = raw.request(method, with_query(rel, sas), body=body, headers=headers, sign=False,
                    content_type="application/xml" if isinstance(body, str) else None)
    assert (r.status, code_of(r)) == (403, code), (label, r)


def test_account_sas_refusals(raw, filled):
    account, key, tn = raw.target.account, raw.target.key, filled.table_name
    rel = "/%s()" % tn
    assert raw.request("GET", with_query(rel, account_sas(account, key)), sign=False).status == 200
    for label, sas, code in (
            ("blob service only", account_sas(account, key, ss="b"), "AuthorizationServiceMismatch"),
            ("expired", account_sas(account, key, se=iso(-5)), "AuthenticationFailed"),
            ("not yet valid", account_sas(account, key, st=iso(900)), "AuthenticationFailed"),
            ("https only", account_sas(account, key, spr="https"), "AuthorizationProtocolMismatch"),
            ("ip", account_sas(account, key, sip="192.0.2.1"), "AuthorizationSourceIPMismatch")):
        r = raw.request("GET", with_query(rel, sas), sign=False)
        assert (r.status, code_of(r)) == (403, code), (label, r)
    tampered = account_sas(account, key).replace("sp=rwdlacu", "sp=rwdlacup")
    r = raw.request("GET", with_query(rel, tampered), sign=False)
    assert (r.status, code_of(r)) == (403, "AuthenticationFailed")


# ---- Several accounts (AZURITE_ACCOUNTS) ---------------------------------------------------------

class _Endpoint:
    """Enough of harness.Target for harness.RawClient."""

    def __init__(self, port, account, key):
        self.account, self.key = account, key
        self.host, self.port = "127.0.0.1", port
        self.base_path = "/" + account
        self.endpoint = "http://127.0.0.1:%d/%s" % (port, account)
        self.connection_string = (
            "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;"
            % (account, key, self.endpoint))


KEY1 = base64.b64encode(b"1" * 32).decode()
KEY1B = base64.b64encode(b"b" * 32).decode()
KEY2 = base64.b64encode(b"2" * 32).decode()


@pytest.fixture(scope="module")
def accounts(target):
    if not target.managed:
        pytest.skip("needs a tablestone process started with AZURITE_ACCOUNTS")
    tmp = tempfile.mkdtemp(prefix="tablestone-e2e-accounts.")
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    server = harness.ManagedServer(target.server.binary, data, harness.free_port(), extra_env={
        "AZURITE_ACCOUNTS": "acct1:%s:%s;acct2:%s" % (KEY1, KEY1B, KEY2)})
    server.start()
    try:
        yield {"acct1": _Endpoint(server.port, "acct1", KEY1),
               "acct1b": _Endpoint(server.port, "acct1", KEY1B),
               "acct2": _Endpoint(server.port, "acct2", KEY2)}
    finally:
        code = server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        assert code == 0


def test_accounts_are_isolated(accounts):
    a1, a1b, a2 = accounts["acct1"], accounts["acct1b"], accounts["acct2"]
    s1 = TableServiceClient.from_connection_string(a1.connection_string)
    s1b = TableServiceClient.from_connection_string(a1b.connection_string)
    s2 = TableServiceClient.from_connection_string(a2.connection_string)
    name = "shared" + uuid.uuid4().hex[:8]
    s1.create_table(name).create_entity({"PartitionKey": "p", "RowKey": "r", "Owner": "acct1"})
    s2.create_table(name).create_entity({"PartitionKey": "p", "RowKey": "r", "Owner": "acct2"})
    assert s1.get_table_client(name).get_entity("p", "r")["Owner"] == "acct1"
    assert s1b.get_table_client(name).get_entity("p", "r")["Owner"] == "acct1"  # second key
    assert s2.get_table_client(name).get_entity("p", "r")["Owner"] == "acct2"
    only1 = "only" + uuid.uuid4().hex[:8]
    s1.create_table(only1)
    assert only1 in [t.name for t in s1.list_tables()]
    assert only1 not in [t.name for t in s2.list_tables()]

    # devstoreaccount1 was replaced by the list.
    dev = TableServiceClient.from_connection_string(
        "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=http://127.0.0.1:%d/%s;"
        % (harness.ACCOUNT, harness.ACCOUNT_KEY, a1.port, harness.ACCOUNT))
    with pytest.raises(HttpResponseError):
        list(dev.list_tables())

    # Service properties are per account.
    from azure.data.tables import TableCorsRule
    s1.set_service_properties(cors=[TableCorsRule(["http://one.example"], ["GET"])])
    assert len(s1.get_service_properties()["cors"]) == 1
    assert s2.get_service_properties()["cors"] == []


def test_credentials_never_cross_accounts(accounts):
    a1, a2 = accounts["acct1"], accounts["acct2"]
    s2 = TableServiceClient.from_connection_string(a2.connection_string)
    name = "secret" + uuid.uuid4().hex[:8]
    s2.create_table(name).create_entity({"PartitionKey": "p", "RowKey": "r", "Secret": 42})
    raw1 = harness.RawClient(a1)

    # acct1's key on acct2's path, naming either account in the header.
    r = raw1.request("GET", "/acct2/%s()" % name, raw_path=True)
    assert (r.status, r.error_code) == (403, "AuthenticationFailed")
    spoof = _Endpoint(a1.port, "acct2", KEY1)
    r = harness.RawClient(spoof).request("GET", "/acct2/%s()" % name, raw_path=True)
    assert r.status == 403

    # SAS tokens of acct1 on acct2's table.
    for sas in (account_sas("acct1", KEY1), table_sas("acct1", KEY1, name)):
        r = raw1.request("GET", "/acct2/%s()?%s" % (name, sas), raw_path=True, sign=False)
        assert r.status == 403, r
    sas1 = generate_table_sas(AzureNamedKeyCredential("acct1", KEY1), name,
                              permission=TableSasPermissions(read=True),
                              expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=1))
    c = TableClient(a2.endpoint, name, credential=AzureSasCredential(sas1))
    with pytest.raises(HttpResponseError) as exc:
        list(c.list_entities())
    assert exc.value.status_code == 403
    # The same token shape signed by acct2 works, proving the table is reachable at all.
    r = raw1.request("GET", "/acct2/%s()?%s" % (name, table_sas("acct2", KEY2, name)),
                     raw_path=True, sign=False)
    assert r.status == 200 and r.json()["value"][0]["Secret"] == 42


@pytest.mark.parametrize("path", [
    "/acct1/../acct2/%s()",
    "/acct1/%%2E%%2E/acct2/%s()",
    "/acct1%%2F..%%2Facct2/%s()",
    "//acct2/%s()",
    "/acct1//acct2/%s()",
    "/acct1/acct2%%2F%s()",
    "/acct1/./../acct2/%s()",
])
def test_path_tricks_stay_in_the_signing_account(accounts, path):
    a1, a2 = accounts["acct1"], accounts["acct2"]
    s2 = TableServiceClient.from_connection_string(a2.connection_string)
    name = "trick" + uuid.uuid4().hex[:8]
    s2.create_table(name).create_entity({"PartitionKey": "p", "RowKey": "r", "Secret": 1})
    try:
        r = harness.RawClient(a1).request("GET", path % name, raw_path=True)
        assert r.status in (400, 403, 404), r
        assert b"Secret" not in r.body
    finally:
        s2.delete_table(name)


def _get_with_host(endpoint, path, host):
    """GET signed by `endpoint`'s account over `path`, with an explicit Host header."""
    import http.client
    raw = harness.RawClient(endpoint)
    hdrs = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": harness.API_VERSION,
            "Accept": harness.MINIMAL, "Host": host}
    hdrs["Authorization"] = raw.sign("GET", path, hdrs)
    conn = http.client.HTTPConnection(endpoint.host, endpoint.port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        for k, v in hdrs.items():
            conn.putheader(k, v)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_host_and_path_disagreement(accounts):
    a1, a2 = accounts["acct1"], accounts["acct2"]
    s2 = TableServiceClient.from_connection_string(a2.connection_string)
    name = "hostpath" + uuid.uuid4().hex[:8]
    s2.create_table(name).create_entity({"PartitionKey": "p", "RowKey": "r", "Secret": 1})
    try:
        for host, path in (("acct1.table.localhost.test", "/acct2/%s()" % name),
                           ("acct2.table.localhost.test", "/%s()" % name),
                           ("acct1.table.localhost.test", "/%s()" % name)):
            status, body = _get_with_host(a1, path, host)
            assert status in (400, 403, 404), (host, path, status, body)
            assert b"Secret" not in body
        # The legitimate host-style request of acct2 works.
        status, body = _get_with_host(a2, "/%s()" % name, "acct2.table.localhost.test")
        assert status == 200, body
        assert b"Secret" in body
    finally:
        s2.delete_table(name)


def _decode_continuation(token):
    """The service's continuation token text ("1!<len>!<base64 with -*_>") -> the key."""
    if not token:
        return ""
    b64 = token.split("!", 2)[2]
    return base64.b64decode(b64.replace("-", "=").replace("*", "+").replace("_", "/")).decode()


def test_key_range_sas_continuations_stay_inside_the_range(target, filled):
    """Issue 22, finding 4: the continuation of the last page inside a range SAS named the first
    row after the range (c/3 here); now every page's continuation is a key inside the range, and
    the last page has none."""
    sas = generate_table_sas(_named_credential(target), filled.table_name,
                             permission=TableSasPermissions(read=True),
                             expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=1),
                             start_pk="b", start_rk="2", end_pk="c", end_rk="2")
    client = TableClient(target.endpoint, filled.table_name, credential=AzureSasCredential(sas))
    inside = [("b", "2"), ("b", "3"), ("c", "1"), ("c", "2")]
    for per_page in (1, 2, 3, 4):
        pages = client.list_entities(results_per_page=per_page).by_page()
        got = []
        for page in pages:
            got += [(e["PartitionKey"], e["RowKey"]) for e in page]
            token = pages.continuation_token
            if token:
                key = (_decode_continuation(token.get("PartitionKey")), _decode_continuation(token.get("RowKey")))
                assert key in inside, (per_page, key)
        assert got == inside, per_page
