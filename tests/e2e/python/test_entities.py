"""Entity operations: insert, get, update, merge, upserts, delete, errors, awkward keys (spec 2.6-2.12, 5)."""

import re
import urllib.parse

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import UpdateMode

from conftest import entity_props, sdk_error_code, unique_name
from harness import MINIMAL, NOMETA

ETAG_RE = re.compile(r"""^W/"datetime'\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d(\.\d{1,7})?Z'"$""")

AWKWARD_KEYS = [
    "it's", "''", "a b", "100%", "50%25", "(paren)", "a,b", "k=v", "PartitionKey='x'",
    "ümlaut-ß-中文", "emoji-\U0001F600", "tab\u00e9", "a+b", "semi;colon", "!*~.-_", "",
]


def test_insert_python_201_then_get(table):
    meta = table.create_entity({"PartitionKey": "p", "RowKey": "r", "name": "x", "n": 5})
    assert ETAG_RE.match(meta["etag"]), meta
    e = table.get_entity("p", "r")
    assert e["name"] == "x" and e["n"] == 5
    assert e.metadata["etag"] == meta["etag"]
    assert e.metadata["timestamp"] is not None


def test_insert_raw_201_body_and_headers(raw, table):
    r = raw.insert(table.table_name, {"PartitionKey": "p", "RowKey": "r1", "s": "v", "i": 3})
    assert r.status == 201, r
    etag = r.header("ETag")
    assert ETAG_RE.match(etag), etag
    body = r.json()
    assert body["odata.metadata"].endswith("$metadata#%s/@Element" % table.table_name)
    assert body["odata.etag"] == etag
    assert body["PartitionKey"] == "p" and body["RowKey"] == "r1"
    assert body["s"] == "v" and body["i"] == 3
    assert "Timestamp" in body


def test_insert_raw_prefer_no_content_204(raw, table):
    r = raw.insert(table.table_name, {"PartitionKey": "p", "RowKey": "r2"}, prefer="return-no-content")
    assert r.status == 204, r
    assert r.body == b""
    assert ETAG_RE.match(r.header("ETag", "")), r
    assert r.header("Preference-Applied") == "return-no-content"


@pytest.mark.azurite_wrong("sends neither Location nor DataServiceId on inserts (spec 2.7)")
def test_insert_raw_location_and_dataserviceid(raw, table):
    r = raw.insert(table.table_name, {"PartitionKey": "p", "RowKey": "r3"}, prefer="return-no-content")
    assert r.status == 204, r
    suffix = "%s(PartitionKey='p',RowKey='r3')" % table.table_name
    assert r.header("Location", "").endswith(suffix)
    assert r.header("DataServiceId", "").endswith(suffix)
    r = raw.insert(table.table_name, {"PartitionKey": "p", "RowKey": "a:b"})
    assert r.status == 201, r
    assert r.header("Location", "").endswith("%s(PartitionKey='p',RowKey='a%%3Ab')" % table.table_name)


def test_insert_existing_409(table, raw):
    table.create_entity({"PartitionKey": "p", "RowKey": "dup"})
    with pytest.raises(ResourceExistsError) as exc:
        table.create_entity({"PartitionKey": "p", "RowKey": "dup"})
    assert sdk_error_code(exc.value) == "EntityAlreadyExists"
    r = raw.insert(table.table_name, {"PartitionKey": "p", "RowKey": "dup"})
    assert r.status == 409 and r.error_code == "EntityAlreadyExists"
    assert r.header("x-ms-error-code") == "EntityAlreadyExists"


def test_insert_without_keys_400_properties_need_value(raw, table):
    r = raw.insert(table.table_name, {"RowKey": "r"})
    assert r.status == 400, r
    assert r.error_code == "PropertiesNeedValue"
    r = raw.insert(table.table_name, {"PartitionKey": "p"})
    assert r.status == 400, r
    assert r.error_code == "PropertiesNeedValue"


def test_get_missing_entity_404_resource_not_found(table, raw):
    with pytest.raises(ResourceNotFoundError) as exc:
        table.get_entity("p", "missing")
    assert sdk_error_code(exc.value) == "ResourceNotFound"
    r = raw.get_entity(table.table_name, "p", "missing")
    assert r.status == 404 and r.error_code == "ResourceNotFound"


def test_entity_ops_on_missing_table_404_table_not_found(service, raw):
    name = unique_name()
    client = service.get_table_client(name)
    with pytest.raises(ResourceNotFoundError) as exc:
        client.create_entity({"PartitionKey": "p", "RowKey": "r"})
    assert sdk_error_code(exc.value) == "TableNotFound"
    with pytest.raises(ResourceNotFoundError) as exc:
        client.upsert_entity({"PartitionKey": "p", "RowKey": "r"}, mode=UpdateMode.MERGE)
    assert sdk_error_code(exc.value) == "TableNotFound"
    with pytest.raises(ResourceNotFoundError) as exc:
        client.upsert_entity({"PartitionKey": "p", "RowKey": "r"}, mode=UpdateMode.REPLACE)
    assert sdk_error_code(exc.value) == "TableNotFound"
    with pytest.raises(ResourceNotFoundError) as exc:
        list(client.list_entities())
    assert sdk_error_code(exc.value) == "TableNotFound"
    r = raw.query(name)
    assert r.status == 404 and r.error_code == "TableNotFound"
    r = raw.insert(name, {"PartitionKey": "p", "RowKey": "r"})
    assert r.status == 404 and r.error_code == "TableNotFound"


def test_update_replace_with_etag_and_star(table):
    meta = table.create_entity({"PartitionKey": "p", "RowKey": "u", "a": 1, "b": "keep?"})
    meta2 = table.update_entity({"PartitionKey": "p", "RowKey": "u", "a": 2}, mode=UpdateMode.REPLACE,
                                etag=meta["etag"], match_condition=MatchConditions.IfNotModified)
    assert meta2["etag"] != meta["etag"]
    e = table.get_entity("p", "u")
    assert e["a"] == 2 and "b" not in e  # replace drops properties missing from the body
    table.update_entity({"PartitionKey": "p", "RowKey": "u", "c": True}, mode=UpdateMode.REPLACE)
    e = table.get_entity("p", "u")
    assert dict(e) == {"PartitionKey": "p", "RowKey": "u", "c": True}


def test_update_with_stale_etag_412(table, raw):
    meta = table.create_entity({"PartitionKey": "p", "RowKey": "s", "a": 1})
    table.update_entity({"PartitionKey": "p", "RowKey": "s", "a": 2})
    with pytest.raises(ResourceModifiedError) as exc:
        table.update_entity({"PartitionKey": "p", "RowKey": "s", "a": 3}, mode=UpdateMode.REPLACE,
                            etag=meta["etag"], match_condition=MatchConditions.IfNotModified)
    assert sdk_error_code(exc.value) == "UpdateConditionNotSatisfied"
    assert exc.value.status_code == 412
    with pytest.raises(ResourceModifiedError):
        table.update_entity({"PartitionKey": "p", "RowKey": "s", "a": 3}, mode=UpdateMode.MERGE,
                            etag=meta["etag"], match_condition=MatchConditions.IfNotModified)
    with pytest.raises(ResourceModifiedError):
        table.delete_entity("p", "s", etag=meta["etag"], match_condition=MatchConditions.IfNotModified)
    assert table.get_entity("p", "s")["a"] == 2
    path = raw.entity_path(table.table_name, "p", "s")
    r = raw.request("PUT", path, body={"a": 9}, headers={"If-Match": meta["etag"]})
    assert r.status == 412, r
    assert r.error_code == "UpdateConditionNotSatisfied"
    assert r.header("x-ms-error-code") == "UpdateConditionNotSatisfied"


def test_update_and_merge_missing_entity_404(table, raw):
    with pytest.raises(ResourceNotFoundError) as exc:
        table.update_entity({"PartitionKey": "p", "RowKey": "nope"}, mode=UpdateMode.REPLACE)
    assert sdk_error_code(exc.value) == "ResourceNotFound"
    with pytest.raises(ResourceNotFoundError) as exc:
        table.update_entity({"PartitionKey": "p", "RowKey": "nope"}, mode=UpdateMode.MERGE)
    assert sdk_error_code(exc.value) == "ResourceNotFound"
    for method in ("PUT", "PATCH", "MERGE"):
        r = raw.request(method, raw.entity_path(table.table_name, "p", "nope"), body={"x": 1},
                        headers={"If-Match": "*"})
        assert r.status == 404, (method, r)
        assert r.error_code == "ResourceNotFound", (method, r)


def test_merge_keeps_other_properties_and_ignores_null(table, raw):
    table.create_entity({"PartitionKey": "p", "RowKey": "m", "a": 1, "b": "two", "c": 3.5})
    table.update_entity({"PartitionKey": "p", "RowKey": "m", "a": 10, "d": "new"}, mode=UpdateMode.MERGE)
    e = table.get_entity("p", "m")
    assert (e["a"], e["b"], e["c"], e["d"]) == (10, "two", 3.5, "new")
    # A null in a merge body means "absent": the existing value stays.
    r = raw.request("PATCH", raw.entity_path(table.table_name, "p", "m"), body={"b": None},
                    headers={"If-Match": "*"})
    assert r.status == 204, r
    assert table.get_entity("p", "m")["b"] == "two"
    # A merge may change a property's type.
    table.update_entity({"PartitionKey": "p", "RowKey": "m", "a": "now a string"}, mode=UpdateMode.MERGE)
    assert table.get_entity("p", "m")["a"] == "now a string"


@pytest.mark.parametrize("method,extra", [
    ("PATCH", {}), ("MERGE", {}), ("POST", {"X-HTTP-Method": "MERGE"}),
])
def test_merge_verbs_raw(raw, table, method, extra):
    table.create_entity({"PartitionKey": "p", "RowKey": "v", "a": 1})
    headers = {"If-Match": "*"}
    headers.update(extra)
    r = raw.request(method, raw.entity_path(table.table_name, "p", "v"), body={"b": 2}, headers=headers)
    assert r.status == 204, r
    assert ETAG_RE.match(r.header("ETag", "")), r
    e = table.get_entity("p", "v")
    assert e["a"] == 1 and e["b"] == 2
    # Without If-Match the same verbs are Insert Or Merge.
    r = raw.request(method, raw.entity_path(table.table_name, "p", "v2"), body={"c": 3}, headers=extra)
    assert r.status == 204, r
    assert table.get_entity("p", "v2")["c"] == 3


def test_upsert_merge_and_replace(table):
    table.upsert_entity({"PartitionKey": "p", "RowKey": "up", "a": 1, "b": 2})  # insert (merge mode)
    table.upsert_entity({"PartitionKey": "p", "RowKey": "up", "b": 20, "c": 30}, mode=UpdateMode.MERGE)
    assert {k: v for k, v in table.get_entity("p", "up").items()} == {
        "PartitionKey": "p", "RowKey": "up", "a": 1, "b": 20, "c": 30}
    table.upsert_entity({"PartitionKey": "p", "RowKey": "up", "z": "only"}, mode=UpdateMode.REPLACE)
    assert dict(table.get_entity("p", "up")) == {"PartitionKey": "p", "RowKey": "up", "z": "only"}
    table.upsert_entity({"PartitionKey": "p", "RowKey": "up2", "n": 1}, mode=UpdateMode.REPLACE)
    assert table.get_entity("p", "up2")["n"] == 1


def test_upsert_replace_raw_put_without_if_match(raw, table):
    path = raw.entity_path(table.table_name, "p", "put")
    r = raw.request("PUT", path, body={"a": 1})
    assert r.status == 204, r
    first = r.header("ETag")
    assert ETAG_RE.match(first)
    r = raw.request("PUT", path, body={"b": 2})
    assert r.status == 204, r
    assert r.header("ETag") != first
    g = raw.get_entity(table.table_name, "p", "put", accept=NOMETA)
    body = g.json()
    assert body["b"] == 2 and "a" not in body
    assert g.header("ETag") == r.header("ETag")


def test_delete_with_etag_and_star(table):
    meta = table.create_entity({"PartitionKey": "p", "RowKey": "d1"})
    table.delete_entity("p", "d1", etag=meta["etag"], match_condition=MatchConditions.IfNotModified)
    with pytest.raises(ResourceNotFoundError):
        table.get_entity("p", "d1")
    table.create_entity({"PartitionKey": "p", "RowKey": "d2"})
    table.delete_entity("p", "d2")  # If-Match: *
    with pytest.raises(ResourceNotFoundError):
        table.get_entity("p", "d2")
    table.delete_entity("p", "never-existed")  # the SDK swallows 404


def test_delete_raw_status_codes(raw, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "d"})
    path = raw.entity_path(table.table_name, "p", "d")
    r = raw.request("DELETE", path)  # no If-Match: required for delete
    assert r.status == 400, r
    r = raw.request("DELETE", path, headers={"If-Match": "*"})
    assert r.status == 204, r
    assert r.body == b"" and r.header("ETag") is None
    r = raw.request("DELETE", path, headers={"If-Match": "*"})
    assert r.status == 404 and r.error_code == "ResourceNotFound", r


def test_reinsert_after_delete_gets_new_etag(table):
    m1 = table.create_entity({"PartitionKey": "p", "RowKey": "re"})
    table.delete_entity("p", "re")
    m2 = table.create_entity({"PartitionKey": "p", "RowKey": "re"})
    assert m1["etag"] != m2["etag"]


def test_get_entity_raw_shapes(raw, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "g", "s": "x", "i": 1})
    r = raw.get_entity(table.table_name, "p", "g")
    assert r.status == 200, r
    body = r.json()
    assert body["odata.metadata"].endswith("$metadata#%s/@Element" % table.table_name)
    assert body["odata.etag"] == r.header("ETag")
    assert (body["PartitionKey"], body["RowKey"], body["s"], body["i"]) == ("p", "g", "x", 1)
    r = raw.get_entity(table.table_name, "p", "g", accept=NOMETA)
    body = r.json()
    assert not any(k.startswith("odata.") for k in body), body
    assert set(body) == {"PartitionKey", "RowKey", "Timestamp", "s", "i"}


def test_timestamp_changes_on_every_write(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "ts", "n": 0})
    etags = {table.get_entity("p", "ts").metadata["etag"]}
    for i in range(1, 6):
        etags.add(table.upsert_entity({"PartitionKey": "p", "RowKey": "ts", "n": i})["etag"])
    assert len(etags) == 6  # every write gets a distinct ETag, even within the same clock tick


@pytest.mark.azurite_wrong("stores odata.* control properties sent in request bodies (spec 3.2)")
def test_odata_control_properties_in_body_are_not_stored(raw, table):
    r = raw.insert(table.table_name, {"PartitionKey": "p", "RowKey": "ctl", "odata.etag": "W/\"x\"",
                                      "odata.metadata": "whatever", "x": 1}, accept=NOMETA)
    assert r.status == 201, r
    body = raw.get_entity(table.table_name, "p", "ctl", accept=NOMETA).json()
    assert set(body) == {"PartitionKey", "RowKey", "Timestamp", "x"}


def test_client_timestamp_is_ignored(raw, table):
    r = raw.insert(table.table_name, {"PartitionKey": "p", "RowKey": "t", "Timestamp@odata.type": "Edm.DateTime",
                                      "Timestamp": "2001-01-01T00:00:00Z"})
    assert r.status == 201, r
    ts = raw.get_entity(table.table_name, "p", "t").json()["Timestamp"]
    assert not ts.startswith("2001-")


@pytest.mark.parametrize("key", AWKWARD_KEYS, ids=lambda k: urllib.parse.quote(k) or "empty")
def test_awkward_keys_round_trip_python(table, key):
    table.create_entity({"PartitionKey": key, "RowKey": key, "v": 1})
    e = entity_props(table.get_entity(key, key))
    assert e["PartitionKey"] == key and e["RowKey"] == key
    table.update_entity({"PartitionKey": key, "RowKey": key, "v": 2}, mode=UpdateMode.MERGE)
    table.upsert_entity({"PartitionKey": key, "RowKey": key, "w": 3}, mode=UpdateMode.REPLACE)
    assert entity_props(table.get_entity(key, key)) == {"PartitionKey": key, "RowKey": key, "w": 3}
    found = list(table.query_entities("PartitionKey eq @k and RowKey eq @k", parameters={"k": key}))
    assert [entity_props(x)["RowKey"] for x in found] == [key]
    table.delete_entity(key, key)
    with pytest.raises(ResourceNotFoundError):
        table.get_entity(key, key)


def test_awkward_keys_raw_percent_encoded_and_raw_quotes(raw, table):
    key = "a'b (c),d=e"
    assert raw.insert(table.table_name, {"PartitionKey": key, "RowKey": key}).status == 201
    # Python-style: every reserved character percent-encoded, quotes doubled then encoded.
    r = raw.get_entity(table.table_name, key, key)
    assert r.status == 200, r
    assert r.json()["RowKey"] == key
    # JS-style (encodeURIComponent): ' ( ) stay raw.
    enc = urllib.parse.quote(key.replace("'", "''"), safe="'()")
    path = "/%s(PartitionKey='%s',RowKey='%s')" % (table.table_name, enc, enc)
    r = raw.request("GET", path)
    assert r.status == 200, r
    assert r.json()["PartitionKey"] == key


def test_empty_keys_raw(raw, table):
    assert raw.insert(table.table_name, {"PartitionKey": "", "RowKey": ""}).status == 201
    r = raw.request("GET", "/%s(PartitionKey='',RowKey='')" % table.table_name)
    assert r.status == 200, r
    assert r.json()["PartitionKey"] == "" and r.json()["RowKey"] == ""


@pytest.mark.azurite_wrong("ignores If-None-Match on writes (spec 5)")
def test_if_none_match_on_write_rejected(raw, table):
    r = raw.request("PUT", raw.entity_path(table.table_name, "p", "inm"), body={"a": 1},
                    headers={"If-None-Match": "*"})
    assert r.status == 400, r


def test_minimal_metadata_entity_content_type(raw, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "ct"})
    r = raw.get_entity(table.table_name, "p", "ct", accept=MINIMAL)
    assert r.header("Content-Type", "").startswith("application/json;odata=minimalmetadata")


def test_error_body_shape(raw, table):
    r = raw.get_entity(table.table_name, "p", "none")
    assert r.status == 404
    err = r.json()["odata.error"]
    assert err["code"] == "ResourceNotFound"
    assert err["message"]["lang"] == "en-US"
    assert err["message"]["value"].startswith("The specified resource does not exist.")
    assert "\nRequestId:" in err["message"]["value"] and "\nTime:" in err["message"]["value"]


@pytest.mark.azurite_wrong("error Time has 3 fractional digits, the service writes 7 (spec 7.1)")
def test_error_time_has_seven_digits(raw, table):
    r = raw.get_entity(table.table_name, "p", "none")
    assert re.search(r"\nTime:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$", r.error_message), r.error_message
    assert r.error_message.split("\nRequestId:")[1].split("\n")[0] == r.header("x-ms-request-id")


def test_client_request_id_echoed(raw, table):
    rid = "my-client-request-id-123"
    r = raw.request("GET", "/%s()" % table.table_name, headers={"x-ms-client-request-id": rid})
    assert r.status == 200, r
    assert r.header("x-ms-client-request-id") == rid


@pytest.mark.azurite_wrong("does not echo x-ms-client-request-id on error responses (spec 10)")
def test_client_request_id_echoed_on_errors(raw, table):
    rid = "my-client-request-id-456"
    r = raw.request("GET", raw.entity_path(table.table_name, "p", "none"),
                    headers={"x-ms-client-request-id": rid})
    assert r.status == 404
    assert r.header("x-ms-client-request-id") == rid


def test_malformed_if_match_rejected(raw, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "bad"})
    r = raw.request("PUT", raw.entity_path(table.table_name, "p", "bad"), body={"a": 1},
                    headers={"If-Match": "not-an-etag"})
    # Malformed If-Match: 400 InvalidInput on the service; never a successful write.
    assert r.status in (400, 412), r
    assert "a" not in table.get_entity("p", "bad")
