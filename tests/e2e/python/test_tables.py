"""Table operations: Create/Delete/Query Tables, Get Table, names, persistence (spec 2.1-2.4, 3.1)."""

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError

from conftest import sdk_error_code, unique_name
from harness import FULL, MINIMAL, NOMETA


def _names(service, **kw):
    return {t.name for t in service.list_tables(**kw)}


def test_create_table_sdk_then_listed(service, table_name):
    client = service.create_table(table_name)
    assert client.table_name == table_name
    assert table_name in _names(service, results_per_page=1000)


def test_create_table_raw_returns_201_with_body(raw, table_name):
    r = raw.create_table(table_name)
    assert r.status == 201, r
    assert r.header("Content-Type", "").startswith("application/json;odata=minimalmetadata"), r
    body = r.json()
    assert body["TableName"] == table_name
    assert body["odata.metadata"].endswith("$metadata#Tables/@Element")
    assert r.header("x-ms-request-id")
    assert r.header("x-ms-version")


def test_create_table_prefer_return_no_content_gives_204(raw, table_name):
    r = raw.create_table(table_name, prefer="return-no-content")
    assert r.status == 204, r
    assert r.body == b""
    assert r.header("Preference-Applied") == "return-no-content"


def test_create_table_prefer_return_content_gives_201(raw, table_name):
    r = raw.create_table(table_name, prefer="return-content")
    assert r.status == 201, r
    assert r.json()["TableName"] == table_name
    assert r.header("Preference-Applied") == "return-content"


@pytest.mark.azurite_wrong("sends Preference-Applied even without Prefer, echoes Accept as "
                           "Content-Type and sends no Location (spec 2.0.2, 2.0.4, 2.2)")
def test_create_table_exact_headers_like_real_service(raw, table_name):
    r = raw.create_table(table_name)
    assert r.status == 201
    assert r.header("Location", "").endswith("Tables('%s')" % table_name)
    assert r.header("Preference-Applied") is None
    assert r.header("Content-Type") == (
        "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")


def test_create_table_nometadata_and_fullmetadata_bodies(raw):
    n1, n2 = unique_name(), unique_name()
    try:
        r = raw.create_table(n1, accept=NOMETA)
        assert r.status == 201, r
        assert r.json() == {"TableName": n1}
        r = raw.create_table(n2, accept=FULL)
        assert r.status == 201, r
        body = r.json()
        assert body["TableName"] == n2
        assert body["odata.type"] == "%s.Tables" % raw.target.account
        assert body["odata.id"].endswith("Tables('%s')" % n2)
        assert body["odata.editLink"] == "Tables('%s')" % n2
        assert body["odata.metadata"].endswith("$metadata#Tables/@Element")
    finally:
        raw.delete_table(n1)
        raw.delete_table(n2)


def test_duplicate_create_conflicts_sdk(service, table):
    with pytest.raises(ResourceExistsError) as exc:
        service.create_table(table.table_name)
    assert sdk_error_code(exc.value) == "TableAlreadyExists"


def test_duplicate_create_conflicts_raw(raw, table):
    r = raw.create_table(table.table_name)
    assert r.status == 409, r
    assert r.header("x-ms-error-code") == "TableAlreadyExists"
    # JS createTable swallows the 409 only when the *body* carries the code (spec 2.2).
    assert r.error_code == "TableAlreadyExists"
    assert r.error_message.startswith("The table specified already exists.")


def test_create_table_if_not_exists_on_existing(service, table):
    client = service.create_table_if_not_exists(table.table_name)
    assert client.table_name == table.table_name


def test_create_with_different_case_conflicts(raw, service):
    name = unique_name("Case")
    try:
        assert raw.create_table(name).status == 201
        r = raw.create_table(name.lower())
        assert r.status == 409, r
        assert r.error_code == "TableAlreadyExists"
        r = raw.create_table(name.upper())
        assert r.status == 409, r
        # The creation case is kept.
        assert name in _names(service)
        assert name.lower() not in _names(service)
    finally:
        raw.delete_table(name)


def test_list_tables_filter_eq(service, table):
    found = list(service.query_tables("TableName eq @n", parameters={"n": table.table_name}))
    assert [t.name for t in found] == [table.table_name]


def test_list_tables_prefix_range_and_small_pages(service, raw):
    prefix = unique_name("pfx")
    names = sorted("%s%02d" % (prefix, i) for i in range(7))
    for n in names:
        assert raw.create_table(n, prefer="return-no-content").status == 204
    try:
        # Prefix query the way SDK samples do it: ge prefix and lt prefix-with-last-char-bumped.
        hi = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        pages = [list(p) for p in service.query_tables(
            "TableName ge @lo and TableName lt @hi", parameters={"lo": prefix, "hi": hi},
            results_per_page=2).by_page()]
        got = [t.name for page in pages for t in page]
        assert got == names  # ascending name order, nothing else, nothing twice
        assert all(len(p) <= 2 for p in pages)
        assert len(pages) >= 4
    finally:
        for n in names:
            raw.delete_table(n)


def test_list_tables_raw_continuation_header(raw):
    prefix = unique_name("cont")
    names = ["%s%d" % (prefix, i) for i in range(3)]
    for n in names:
        assert raw.create_table(n, prefer="return-no-content").status == 204
    try:
        flt = "TableName ge '%s' and TableName lt '%s~'" % (prefix, prefix)
        r = raw.request("GET", "/Tables?$top=2&$filter=" + _q(flt))
        assert r.status == 200, r
        assert [t["TableName"] for t in r.json()["value"]] == names[:2]
        token = r.header("x-ms-continuation-NextTableName")
        assert token
        r2 = raw.request("GET", "/Tables?$top=2&$filter=%s&NextTableName=%s" % (_q(flt), _q(token)))
        assert r2.status == 200, r2
        assert [t["TableName"] for t in r2.json()["value"]] == names[2:]
        assert r2.header("x-ms-continuation-NextTableName") is None
    finally:
        for n in names:
            raw.delete_table(n)


def _q(s):
    import urllib.parse
    return urllib.parse.quote(s, safe="")


def test_list_tables_nometadata_shape(raw, table):
    flt = _q("TableName eq '%s'" % table.table_name)
    r = raw.request("GET", "/Tables?$filter=" + flt, accept=NOMETA)
    assert r.status == 200, r
    assert r.json() == {"value": [{"TableName": table.table_name}]}
    r = raw.request("GET", "/Tables?$filter=" + flt, accept=MINIMAL)
    body = r.json()
    assert body["odata.metadata"].endswith("$metadata#Tables")
    assert body["value"] == [{"TableName": table.table_name}]


@pytest.mark.azurite_wrong("treats GET /Tables('t') as Query Entities on t (spec 2.4, 12)")
def test_get_single_table_raw(raw, table):
    r = raw.request("GET", "/Tables('%s')" % table.table_name)
    assert r.status == 200, r
    body = r.json()
    assert body["TableName"] == table.table_name
    assert body["odata.metadata"].endswith("$metadata#Tables/@Element")
    missing = raw.request("GET", "/Tables('%s')" % unique_name())
    assert missing.status == 404, missing


def test_delete_table_sdk(service, raw):
    name = unique_name()
    service.create_table(name)
    service.delete_table(name)
    assert name not in _names(service)


def test_delete_table_raw_204(raw):
    name = unique_name()
    assert raw.create_table(name).status == 201
    r = raw.delete_table(name)
    assert r.status == 204, r
    assert r.body == b""


def test_delete_missing_table_sdk_is_quiet(service):
    service.delete_table(unique_name())  # SDKs swallow the 404


def test_delete_missing_table_raw_404(raw):
    r = raw.delete_table(unique_name())
    assert r.status == 404, r
    assert r.header("x-ms-error-code") == "ResourceNotFound"
    assert r.error_code == "ResourceNotFound"


def test_delete_table_removes_its_entities(service, raw):
    name = unique_name()
    client = service.create_table(name)
    client.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    service.delete_table(name)
    r = raw.query(name)
    assert r.status == 404, r
    assert r.error_code == "TableNotFound"
    client = service.create_table(name)
    try:
        assert list(client.list_entities()) == []
    finally:
        service.delete_table(name)


@pytest.mark.parametrize("bad", ["1abc", "a-bc", "ab_c", "abc def", "tables", "Tables", "TABLES"])
def test_invalid_table_name_status(raw, bad):
    r = raw.create_table(bad)
    assert r.status == 400, r


@pytest.mark.parametrize("bad", ["ab", "a" * 64])
def test_table_name_length_out_of_range_status(raw, bad):
    r = raw.create_table(bad)
    assert r.status == 400, r


@pytest.mark.azurite_wrong("table-name errors carry an empty error code (spec 2.2, 12)")
@pytest.mark.parametrize("bad,code", [
    ("1abc", "InvalidResourceName"), ("a-bc", "InvalidResourceName"),
    ("tables", "InvalidResourceName"), ("ab", "OutOfRangeInput"), ("a" * 64, "OutOfRangeInput"),
])
def test_invalid_table_name_error_codes(raw, bad, code):
    r = raw.create_table(bad)
    assert r.status == 400, r
    assert r.header("x-ms-error-code") == code
    assert r.error_code == code


@pytest.mark.parametrize("length", [3, 63])
def test_table_name_length_edges_accepted(raw, length):
    import random
    import string
    if length == 3:
        good = "z" + "".join(random.choice(string.ascii_letters + string.digits) for _ in range(2))
    else:
        good = (unique_name("Long") * 8)[:63]
    raw.delete_table(good)  # a 3-character name may be left over from an interrupted run
    r = raw.create_table(good)
    try:
        assert r.status == 201, r
        assert r.json()["TableName"] == good
    finally:
        raw.delete_table(good)


def test_invalid_table_name_via_sdk_is_rejected(service):
    # azure-data-tables validates names client-side in newer releases (ValueError); older ones
    # send the request and get a 400 back. Either way the name must not be created.
    with pytest.raises((ValueError, HttpResponseError)):
        service.create_table("1bad-name")
    assert "1bad-name" not in _names(service)


def test_recreate_right_after_delete(service):
    name = unique_name()
    client = service.create_table(name)
    client.upsert_entity({"PartitionKey": "p", "RowKey": "old"})
    service.delete_table(name)
    client = service.create_table(name)
    try:
        client.upsert_entity({"PartitionKey": "p", "RowKey": "new"})
        assert [e["RowKey"] for e in client.list_entities()] == ["new"]
    finally:
        service.delete_table(name)


def test_tables_survive_restart(service, raw, restart):
    names = sorted(unique_name("persist") for _ in range(3))
    for n in names:
        service.create_table(n).create_entity({"PartitionKey": "p", "RowKey": n, "n": 7})
    try:
        restart()
        present = _names(service)
        for n in names:
            assert n in present
            e = service.get_table_client(n).get_entity("p", n)
            assert e["n"] == 7
        # The table namespace still works after a restart: duplicates conflict, new tables work.
        assert raw.create_table(names[0]).status == 409
        extra = unique_name()
        assert raw.create_table(extra).status == 201
        raw.delete_table(extra)
    finally:
        for n in names:
            service.delete_table(n)
