"""More entity group transaction tests (spec 6): raw framing variants, headers of the sub-responses,
tables/partitions rules, SAS-authorised batches, a query in a batch, and SDK round trips.

test_batch.py (the e2e suite's own file) covers the SDK paths for every operation kind and rule;
this file adds what it does not."""

import datetime
import json
import time

import pytest
from azure.core import MatchConditions
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.data.tables import (TableClient, TableSasPermissions, TableTransactionError, UpdateMode,
                               generate_table_sas)

from conftest import sdk_error_code
from harness import MINIMAL, build_batch, parse_batch_response


def _rows(table, pk="p"):
    return sorted(e["RowKey"] for e in table.query_entities("PartitionKey eq @pk", parameters={"pk": pk}))


def _post_batch(raw, body, boundary):
    r = raw.request("POST", "/$batch", body=body, content_type="multipart/mixed; boundary=%s" % boundary,
                    accept="application/json")
    return r, (parse_batch_response(r) if r.status == 202 else [])


def _ops_kinds(t):
    """One of each verb form, all in partition p; entities 'upd', 'mrg', 'del' must exist."""
    return [
        ("POST", "/" + t, {"PartitionKey": "p", "RowKey": "ins"}, {"Prefer": "return-no-content"}),
        ("PUT", "/%s(PartitionKey='p',RowKey='upd')" % t, {"v": 2}, {"If-Match": "*"}),
        ("MERGE", "/%s(PartitionKey='p',RowKey='mrg')" % t, {"v": 2}, {"If-Match": "*"}),
        ("POST", "/%s(PartitionKey='p',RowKey='xm')" % t, {"v": 3}, {"X-HTTP-Method": "MERGE"}),
        ("PATCH", "/%s(PartitionKey='p',RowKey='pm')" % t, {"v": 4}, None),
        ("DELETE", "/%s(PartitionKey='p',RowKey='del')" % t, None, {"If-Match": "*"}),
    ]


def _seed(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "upd", "v": 1, "gone": 1})
    table.create_entity({"PartitionKey": "p", "RowKey": "mrg", "v": 1, "keep": "yes"})
    table.create_entity({"PartitionKey": "p", "RowKey": "del"})


def _check_kinds_applied(table):
    assert _rows(table) == ["ins", "mrg", "pm", "upd", "xm"]
    assert dict(table.get_entity("p", "upd")) == {"PartitionKey": "p", "RowKey": "upd", "v": 2}
    m = table.get_entity("p", "mrg")
    assert m["v"] == 2 and m["keep"] == "yes"
    assert table.get_entity("p", "xm")["v"] == 3
    assert table.get_entity("p", "pm")["v"] == 4


@pytest.mark.parametrize("crlf", ["\r\n", "\n"], ids=["crlf", "lf"])
@pytest.mark.parametrize("url_form", ["absolute", "account-relative", "batch-relative"])
def test_framing_line_endings_and_url_forms(raw, table, crlf, url_form):
    _seed(table)
    t = table.table_name
    if url_form == "absolute":
        base = "http://%s:%d%s" % (raw.target.host, raw.target.port, raw.target.base_path)
        ops = _ops_kinds(t)
    elif url_form == "account-relative":
        base = raw.target.base_path
        ops = _ops_kinds(t)
    else:  # "t(...)" relative to the /$batch URL
        base = ""
        ops = [(m, p.lstrip("/"), b, h) for (m, p, b, h) in _ops_kinds(t)]
    boundary, body = build_batch(base, ops, crlf=crlf, content_ids=True)
    r, parts = _post_batch(raw, body, boundary)
    assert r.status == 202, r
    assert [p.status for p in parts] == [204] * 6, parts
    _check_kinds_applied(table)


def test_lowercase_headers_and_no_http_version(raw, table):
    _seed(table)
    boundary, body = build_batch("", [(m, p.lstrip("/"), b, h) for (m, p, b, h) in _ops_kinds(table.table_name)])
    text = body.decode()
    text = "\r\n".join(line.lower() if line.startswith(("Content-Type:", "Content-Transfer-Encoding:", "Accept:",
                                                         "DataServiceVersion:", "If-Match: *", "Prefer:",
                                                         "X-HTTP-Method:"))
                       else line.replace(" HTTP/1.1", "") for line in text.split("\r\n"))
    text = text.replace("x-http-method: merge", "x-http-method: MERGE")
    r, parts = _post_batch(raw, text.encode(), boundary)
    assert r.status == 202, r
    assert [p.status for p in parts] == [204] * 6, parts
    _check_kinds_applied(table)


def test_success_part_headers_exact(raw, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "d"})
    t = table.table_name
    boundary, body = build_batch(
        "http://%s:%d%s" % (raw.target.host, raw.target.port, raw.target.base_path),
        [("POST", "/" + t, {"PartitionKey": "p", "RowKey": "nc"}, {"Prefer": "return-no-content"}),
         ("POST", "/" + t, {"PartitionKey": "p", "RowKey": "wc", "n": 1}, None),
         ("PUT", "/%s(PartitionKey='p',RowKey='u')" % t, {"n": 2}, None),
         ("DELETE", "/%s(PartitionKey='p',RowKey='d')" % t, None, {"If-Match": "*"})],
        content_ids=True)
    r, parts = _post_batch(raw, body, boundary)
    assert r.status == 202, r
    text = r.body.decode()
    assert text.startswith("--batchresponse_"), text[:80]
    assert text.endswith("--\r\n")
    assert text.count("\r\nETag: W/\"datetime'") == 3  # exact capitalisation; none for the delete
    assert [p.status for p in parts] == [204, 201, 204, 204]
    nc, wc, u, d = parts
    etag = nc.headers["etag"]
    assert wc.headers["etag"] == etag and u.headers["etag"] == etag  # one timestamp per batch
    assert nc.headers["preference-applied"] == "return-no-content"
    assert nc.headers["location"].endswith("/%s(PartitionKey='p',RowKey='nc')" % t)
    assert nc.headers["dataserviceid"] == nc.headers["location"]
    assert nc.body == ""
    assert wc.headers["content-type"].startswith("application/json;odata=minimalmetadata")
    assert wc.json()["odata.etag"] == etag and wc.json()["n"] == 1
    assert "etag" not in d.headers and d.body == ""
    assert u.headers["dataserviceversion"] == "1.0;"


def test_failure_part_format_exact(raw, table):
    t = table.table_name
    table.create_entity({"PartitionKey": "p", "RowKey": "r2"})
    ops = [("POST", "/" + t, {"PartitionKey": "p", "RowKey": "r%d" % i}, {"Prefer": "return-no-content"})
           for i in range(4)]
    boundary, body = build_batch("", [(m, p.lstrip("/"), b, h) for (m, p, b, h) in ops])
    r, parts = _post_batch(raw, body, boundary)
    assert r.status == 202
    assert len(parts) == 1
    p = parts[0]
    assert p.status == 409
    assert p.headers["content-type"] == "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
    err = p.json()["odata.error"]
    assert err["code"] == "EntityAlreadyExists"
    assert err["message"]["lang"] == "en-US"
    value = err["message"]["value"]
    assert value.startswith("2:The specified entity already exists.\nRequestId:")
    assert "\nTime:" in value
    assert _rows(table) == ["r2"]


def test_operations_on_two_tables_rejected(raw, service, table):
    other = service.create_table(table.table_name + "x")
    try:
        ops = [("POST", "/" + table.table_name, {"PartitionKey": "p", "RowKey": "a"}, None),
               ("POST", "/" + other.table_name, {"PartitionKey": "p", "RowKey": "b"}, None)]
        boundary, body = build_batch(raw.target.base_path, ops)
        r, parts = _post_batch(raw, body, boundary)
        assert r.status == 202, r
        assert len(parts) == 1 and parts[0].status == 400, parts
        assert parts[0].error_code == "InvalidInput"
        assert parts[0].error_message.startswith("1:")
        assert _rows(table) == [] and _rows(other) == []
    finally:
        service.delete_table(other.table_name)


def test_subrequest_authorization_headers_are_ignored(raw, table):
    ops = [("POST", "/" + table.table_name, {"PartitionKey": "p", "RowKey": "a"},
            {"Authorization": "SharedKey devstoreaccount1:bogus", "Prefer": "return-no-content"})]
    boundary, body = build_batch(raw.target.base_path, ops)
    r, parts = _post_batch(raw, body, boundary)
    assert r.status == 202 and [p.status for p in parts] == [204], (r, parts)


def test_malformed_multipart_is_a_plain_error(raw, table):
    r = raw.request("POST", "/$batch", body=b"this is not multipart", content_type="multipart/mixed; boundary=b1",
                    accept="application/json")
    assert r.status == 400, r
    assert r.header("content-type", "").startswith("application/json")
    assert r.error_code == "InvalidInput"
    r2 = raw.request("POST", "/$batch", body=b"{}", content_type="application/json", accept="application/json")
    assert r2.status == 400, r2


def test_two_changesets_rejected(raw, table):
    t = table.table_name
    b = "batch_two"
    lines = ["--" + b]
    for c, rk in (("cs_one", "a"), ("cs_two", "b")):
        lines += ["Content-Type: multipart/mixed; boundary=" + c, "", "--" + c, "Content-Type: application/http",
                  "Content-Transfer-Encoding: binary", "", "POST %s/%s HTTP/1.1" % (raw.target.base_path, t),
                  "Content-Type: application/json", "", json.dumps({"PartitionKey": "p", "RowKey": rk}),
                  "--%s--" % c, "--" + b if c == "cs_one" else "--%s--" % b]
    r = raw.request("POST", "/$batch", body="\r\n".join(lines + [""]).encode(),
                    content_type="multipart/mixed; boundary=" + b, accept="application/json")
    assert r.status == 400, r
    assert _rows(table) == []


def test_point_query_in_batch(raw, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "q", "v": 9})
    b = "batch_query"
    body = "\r\n".join([
        "--" + b, "Content-Type: application/http", "Content-Transfer-Encoding: binary", "",
        "GET http://%s:%d%s/%s(PartitionKey='p',RowKey='q') HTTP/1.1" % (
            raw.target.host, raw.target.port, raw.target.base_path, table.table_name),
        "Accept: " + MINIMAL, "", "", "--%s--" % b, ""])
    r = raw.request("POST", "/$batch", body=body.encode(), content_type="multipart/mixed; boundary=" + b,
                    accept="application/json")
    assert r.status == 202, r
    assert b"changesetresponse_" not in r.body
    parts = parse_batch_response(r)
    assert len(parts) == 1 and parts[0].status == 200, parts
    assert parts[0].json()["v"] == 9
    assert parts[0].headers["etag"] == table.get_entity("p", "q").metadata["etag"]


def test_insert_then_etag_round_trip_python(table):
    """Etags returned by a transaction work for a later conditional update (Python reads them)."""
    res = table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "a", "v": 1}),
                                    ("upsert", {"PartitionKey": "p", "RowKey": "b", "v": 1})])
    etag = res[0]["etag"]
    assert etag == table.get_entity("p", "a").metadata["etag"]
    table.submit_transaction([("update", {"PartitionKey": "p", "RowKey": "a", "v": 2},
                               {"mode": UpdateMode.REPLACE, "etag": etag,
                                "match_condition": MatchConditions.IfNotModified})])
    assert table.get_entity("p", "a")["v"] == 2
    with pytest.raises(TableTransactionError) as exc:
        table.submit_transaction([("delete", {"PartitionKey": "p", "RowKey": "a"},
                                   {"etag": etag, "match_condition": MatchConditions.IfNotModified})])
    assert exc.value.index == 0
    assert sdk_error_code(exc.value) == "UpdateConditionNotSatisfied"


def test_invalid_entity_inside_batch_reports_its_index(table):
    with pytest.raises(TableTransactionError) as exc:
        table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "ok"}),
                                  ("create", {"PartitionKey": "p", "RowKey": "big", "s": "x" * 40000})])
    assert exc.value.index == 1
    assert sdk_error_code(exc.value) == "PropertyValueTooLarge"
    assert _rows(table) == []


def test_purge_by_timestamp(table):
    """The purge pattern: query Timestamp le datetime'...', delete the matches in batches of 100."""
    table.submit_transaction([("upsert", {"PartitionKey": "old", "RowKey": "r%03d" % i}) for i in range(100)])
    table.submit_transaction([("upsert", {"PartitionKey": "old", "RowKey": "r%03d" % i}) for i in range(100, 150)])
    # Python keeps 6 of the 7 fractional digits: round the cutoff up by a microsecond.
    cutoff = max(e.metadata["timestamp"] for e in table.list_entities()) + datetime.timedelta(microseconds=1)
    time.sleep(0.01)
    table.upsert_entity({"PartitionKey": "new", "RowKey": "keep"})
    stamp = cutoff.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    victims = list(table.query_entities("Timestamp le datetime'%s'" % stamp, select=["PartitionKey", "RowKey"]))
    assert len(victims) == 150
    by_pk = {}
    for e in victims:
        by_pk.setdefault(e["PartitionKey"], []).append(e)
    for pk, entities in by_pk.items():
        for start in range(0, len(entities), 100):
            table.submit_transaction([("delete", e) for e in entities[start:start + 100]])
    assert [(e["PartitionKey"], e["RowKey"]) for e in table.list_entities()] == [("new", "keep")]


def _sas_client(target, table_name, **kw):
    sas = generate_table_sas(AzureNamedKeyCredential(target.account, target.key), table_name,
                             expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=1), **kw)
    return TableClient(endpoint=target.endpoint, table_name=table_name, credential=AzureSasCredential(sas))


def test_sas_batch_checks_each_operation(target, table):
    if not target.managed:
        pytest.skip("SAS per-operation checks differ on other emulators")
    table.create_entity({"PartitionKey": "p", "RowKey": "victim"})
    add_only = _sas_client(target, table.table_name, permission=TableSasPermissions(add=True))
    add_only.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "a"}),
                                 ("create", {"PartitionKey": "p", "RowKey": "b"})])
    with pytest.raises(TableTransactionError) as exc:
        add_only.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "c"}),
                                     ("delete", {"PartitionKey": "p", "RowKey": "victim"})])
    assert exc.value.status_code == 403
    assert exc.value.index == 1
    assert sdk_error_code(exc.value) == "AuthorizationPermissionMismatch"
    assert _rows(table) == ["a", "b", "victim"]

    ranged = _sas_client(target, table.table_name, permission=TableSasPermissions(add=True, update=True),
                         start_pk="a", end_pk="m")
    ranged.submit_transaction([("upsert", {"PartitionKey": "k", "RowKey": "x"})])
    with pytest.raises(TableTransactionError) as exc:
        ranged.submit_transaction([("upsert", {"PartitionKey": "z", "RowKey": "x"})])
    assert exc.value.status_code == 403 and exc.value.index == 0
    assert sdk_error_code(exc.value) == "AuthorizationFailure"
    assert _rows(table, "k") == ["x"] and _rows(table, "z") == []
