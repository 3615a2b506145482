"""Entity group transactions ($batch): all operation kinds, limits, atomicity, error index (spec 6)."""

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableTransactionError, UpdateMode

from conftest import sdk_error_code, unique_name
from harness import NOMETA


def _rows(table, pk="p"):
    return sorted(e["RowKey"] for e in table.query_entities("PartitionKey eq @pk", parameters={"pk": pk}))


def test_all_operation_kinds_python(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "upd", "a": 1})
    table.create_entity({"PartitionKey": "p", "RowKey": "mrg", "a": 1, "keep": "yes"})
    table.create_entity({"PartitionKey": "p", "RowKey": "del"})
    table.create_entity({"PartitionKey": "p", "RowKey": "ur", "old": 1})
    etag = table.get_entity("p", "upd").metadata["etag"]
    ops = [
        ("create", {"PartitionKey": "p", "RowKey": "new", "n": 1}),
        ("update", {"PartitionKey": "p", "RowKey": "upd", "a": 2},
         {"mode": UpdateMode.REPLACE, "etag": etag, "match_condition": MatchConditions.IfNotModified}),
        ("update", {"PartitionKey": "p", "RowKey": "mrg", "a": 2}, {"mode": UpdateMode.MERGE}),
        ("upsert", {"PartitionKey": "p", "RowKey": "um", "m": 1}, {"mode": UpdateMode.MERGE}),
        ("upsert", {"PartitionKey": "p", "RowKey": "ur", "r": 1}, {"mode": UpdateMode.REPLACE}),
        ("delete", {"PartitionKey": "p", "RowKey": "del"}),
    ]
    result = table.submit_transaction(ops)
    assert len(result) == 6
    for meta in result[:5]:
        assert meta.get("etag"), result
    assert _rows(table) == ["mrg", "new", "um", "upd", "ur"]
    assert table.get_entity("p", "upd")["a"] == 2
    m = table.get_entity("p", "mrg")
    assert m["a"] == 2 and m["keep"] == "yes"
    assert dict(table.get_entity("p", "ur")) == {"PartitionKey": "p", "RowKey": "ur", "r": 1}


@pytest.mark.azurite_wrong("gives each entity of a transaction its own Timestamp (spec 3.7)")
def test_one_timestamp_per_transaction(table):
    result = table.submit_transaction([("upsert", {"PartitionKey": "p", "RowKey": "t%d" % i})
                                       for i in range(4)])
    assert len({m["etag"] for m in result}) == 1
    stamps = {e.metadata["timestamp"] for e in table.list_entities()}
    assert len(stamps) == 1


def test_100_operations_accepted(table):
    ops = [("create", {"PartitionKey": "p", "RowKey": "r%03d" % i, "i": i}) for i in range(100)]
    assert len(table.submit_transaction(ops)) == 100
    assert len(_rows(table)) == 100


@pytest.mark.azurite_wrong("writes a malformed sub-response (a stray boundary line before the status "
                           "line) for >100 operations (spec 6.2)")
def test_101_operations_rejected_and_nothing_stored(table, raw):
    ops = [("create", {"PartitionKey": "p", "RowKey": "r%03d" % i}) for i in range(101)]
    with pytest.raises((HttpResponseError, ValueError)):
        table.submit_transaction(ops)
    assert _rows(table) == []
    r, parts = raw.batch([("POST", "/" + table.table_name, {"PartitionKey": "p", "RowKey": "x%03d" % i},
                           {"Prefer": "return-no-content"}) for i in range(101)])
    if r.status == 202:
        assert len(parts) == 1 and parts[0].status == 400, parts
        assert parts[0].error_code == "InvalidInput", parts
    else:
        assert r.status == 400, r
    assert _rows(table) == []


def test_failing_operation_at_index_37_rolls_back_everything(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r037"})
    ops = [("create", {"PartitionKey": "p", "RowKey": "r%03d" % i}) for i in range(60)]
    with pytest.raises(TableTransactionError) as exc:
        table.submit_transaction(ops)
    assert exc.value.index == 37
    assert sdk_error_code(exc.value) == "EntityAlreadyExists"
    assert _rows(table) == ["r037"]  # rows 0..36 were rolled back


def test_failure_part_format_raw(raw, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "b"})
    ops = [("POST", "/" + table.table_name, {"PartitionKey": "p", "RowKey": rk}, {"Prefer": "return-no-content"})
           for rk in ("a", "b", "c")]
    r, parts = raw.batch(ops)
    assert r.status == 202, r
    assert r.header("Content-Type", "").startswith("multipart/mixed; boundary=batchresponse_")
    assert r.body.startswith(b"--batchresponse_")
    assert len(parts) == 1, parts  # only the failing operation answers
    p = parts[0]
    assert p.status == 409, p
    assert p.error_code == "EntityAlreadyExists"
    assert p.error_message.startswith("1:")
    assert _rows(table) == ["b"]


def test_success_parts_raw(raw, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "d"})
    t = table.table_name
    ops = [
        ("POST", "/" + t, {"PartitionKey": "p", "RowKey": "i1"}, {"Prefer": "return-no-content"}),
        ("PUT", "/%s(PartitionKey='p',RowKey='u1')" % t, {"x": 1}, None),
        ("MERGE", "/%s(PartitionKey='p',RowKey='m1')" % t, {"x": 1}, None),
        ("PATCH", "/%s(PartitionKey='p',RowKey='m2')" % t, {"x": 1}, None),
        ("DELETE", "/%s(PartitionKey='p',RowKey='d')" % t, None, {"If-Match": "*"}),
    ]
    r, parts = raw.batch(ops)
    assert r.status == 202, r
    assert [p.status for p in parts] == [204, 204, 204, 204, 204], parts
    for p in parts[:4]:
        assert p.headers.get("etag", "").startswith("W/\"datetime'"), p
    assert "etag" not in parts[4].headers
    assert _rows(table) == ["i1", "m1", "m2", "u1"]


@pytest.mark.azurite_wrong("answers 201 without the entity body inside a batch (spec 6.3)")
def test_insert_without_prefer_in_batch_returns_201_with_body(raw, table):
    r, parts = raw.batch([("POST", "/" + table.table_name, {"PartitionKey": "p", "RowKey": "b201", "v": 5},
                           None)])
    assert r.status == 202, r
    assert len(parts) == 1 and parts[0].status == 201, parts
    assert parts[0].json()["v"] == 5


def test_js_style_body_extra_crlfs_and_lowercase_headers(raw, table):
    t = table.table_name
    base = "http://%s:%d%s" % (raw.target.host, raw.target.port, raw.target.base_path)
    b, c = "batch_jsstyle1", "changeset_jsstyle1"
    lines = ["--" + b, "content-type: multipart/mixed; boundary=" + c, "", "", ""]
    for rk in ("j1", "j2"):
        lines += ["--" + c, "content-type: application/http", "content-transfer-encoding: binary", "",
                  "POST %s/%s HTTP/1.1" % (base, t), "content-type: application/json",
                  "accept: application/json", "prefer: return-no-content", "dataserviceversion: 3.0", "", "",
                  '{"PartitionKey":"p","RowKey":"%s"}' % rk]
    lines += ["--" + c, "content-type: application/http", "content-transfer-encoding: binary", "",
              "DELETE %s/%s(PartitionKey='p',RowKey='gone') HTTP/1.1" % (base, t), "if-match: *",
              "accept: application/json", "", "", ""]
    lines += ["--%s--" % c, "--%s--" % b, ""]
    table.create_entity({"PartitionKey": "p", "RowKey": "gone"})
    r = raw.request("POST", "/$batch", body="\r\n".join(lines).encode(),
                    content_type="multipart/mixed; boundary=" + b, accept="application/json")
    assert r.status == 202, r
    assert _rows(table) == ["j1", "j2"]


@pytest.mark.azurite_wrong("does not check that all operations share a PartitionKey (spec 6.2, 12)")
def test_different_partitions_rejected(raw, table):
    t = table.table_name
    ops = [("POST", "/" + t, {"PartitionKey": pk, "RowKey": "r"}, {"Prefer": "return-no-content"})
           for pk in ("a", "b")]
    r, parts = raw.batch(ops)
    assert r.status == 202, r
    assert len(parts) == 1 and parts[0].status == 400, parts
    assert parts[0].error_code == "CommandsInBatchActOnDifferentPartitions"
    assert parts[0].error_message.startswith("1:")
    assert list(table.list_entities()) == []


def test_different_partitions_rejected_python_client_side(table):
    with pytest.raises((ValueError, HttpResponseError)):
        table.submit_transaction([("create", {"PartitionKey": "a", "RowKey": "r"}),
                                  ("create", {"PartitionKey": "b", "RowKey": "r"})])
    assert list(table.list_entities()) == []


def test_duplicate_row_rejected(table):
    with pytest.raises(TableTransactionError) as exc:
        table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "x"}),
                                  ("upsert", {"PartitionKey": "p", "RowKey": "y"}),
                                  ("upsert", {"PartitionKey": "p", "RowKey": "x", "v": 2})])
    assert sdk_error_code(exc.value) == "InvalidDuplicateRow"
    assert _rows(table) == []


def test_duplicate_row_index_is_second_occurrence(table):
    # Azurite derives the index from Content-ID (spec 6.4); Python sends Content-IDs 1..n, so the
    # answer is the same as the service's position-based index here.
    with pytest.raises(TableTransactionError) as exc:
        table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "x"}),
                                  ("upsert", {"PartitionKey": "p", "RowKey": "y"}),
                                  ("upsert", {"PartitionKey": "p", "RowKey": "x", "v": 2})])
    assert exc.value.index == 2


def test_stale_etag_inside_batch(table):
    m = table.create_entity({"PartitionKey": "p", "RowKey": "s", "v": 1})
    table.update_entity({"PartitionKey": "p", "RowKey": "s", "v": 2})
    with pytest.raises(TableTransactionError) as exc:
        table.submit_transaction([
            ("create", {"PartitionKey": "p", "RowKey": "n"}),
            ("update", {"PartitionKey": "p", "RowKey": "s", "v": 3},
             {"mode": UpdateMode.MERGE, "etag": m["etag"], "match_condition": MatchConditions.IfNotModified}),
        ])
    assert exc.value.index == 1
    assert sdk_error_code(exc.value) == "UpdateConditionNotSatisfied"
    assert exc.value.status_code in (202, 412)
    assert _rows(table) == ["s"]
    assert table.get_entity("p", "s")["v"] == 2


def test_delete_of_missing_entity_inside_batch(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "keep"})
    with pytest.raises(TableTransactionError) as exc:
        table.submit_transaction([("delete", {"PartitionKey": "p", "RowKey": "keep"}),
                                  ("delete", {"PartitionKey": "p", "RowKey": "missing"})])
    assert exc.value.index == 1
    assert sdk_error_code(exc.value) == "ResourceNotFound"
    assert _rows(table) == ["keep"]


def test_update_of_missing_entity_inside_batch(table):
    with pytest.raises(TableTransactionError) as exc:
        table.submit_transaction([("update", {"PartitionKey": "p", "RowKey": "missing", "v": 1},
                                   {"mode": UpdateMode.REPLACE})])
    assert exc.value.index == 0
    assert sdk_error_code(exc.value) == "ResourceNotFound"


def test_batch_on_missing_table(service):
    client = service.get_table_client(unique_name())
    with pytest.raises(HttpResponseError) as exc:
        client.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "r"})])
    assert sdk_error_code(exc.value) == "TableNotFound"
    assert getattr(exc.value, "index", 0) == 0


def test_purge_pattern(table):
    for start in range(0, 250, 100):
        table.submit_transaction([("upsert", {"PartitionKey": "purge", "RowKey": "r%04d" % i})
                                  for i in range(start, min(start + 100, 250))])
    table.create_entity({"PartitionKey": "other", "RowKey": "stay"})
    entities = list(table.query_entities("PartitionKey eq 'purge'", select=["PartitionKey", "RowKey"]))
    assert len(entities) == 250
    for start in range(0, len(entities), 100):
        table.submit_transaction([("delete", e) for e in entities[start:start + 100]])
    assert list(table.query_entities("PartitionKey eq 'purge'")) == []
    assert [e["RowKey"] for e in table.list_entities()] == ["stay"]


def test_batch_body_over_4mib_413(raw, table):
    big = "x" * 30000
    ops = [("POST", "/" + table.table_name, {"PartitionKey": "p", "RowKey": "r%03d" % i,
                                             **{"s%d" % j: big for j in range(2)}}, None)
           for i in range(75)]  # about 4.5 MB
    r, _ = raw.batch(ops)
    assert r.status == 413, r
    assert _rows(table) == []


def test_sdk_transaction_over_4mib_reads_the_413(table):
    """Issue 36, item 1: the transport refuses the body from its headers; the SDK, still writing
    it, must read the 413 (an HttpResponseError), not a connection error from a reset."""
    big = "x" * 32000
    ops = [("create", {"PartitionKey": "p", "RowKey": "r%03d" % i, "a": big, "b": big}) for i in range(80)]
    with pytest.raises(HttpResponseError) as raised:  # a reset would be ServiceRequestError
        table.submit_transaction(ops)
    assert raised.value.status_code == 413, raised.value
    assert sdk_error_code(raised.value) == "RequestBodyTooLarge", raised.value
    assert _rows(table) == []


def test_entities_readable_with_nometadata_after_batch(raw, table):
    table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "a", "x": 1.5})])
    body = raw.get_entity(table.table_name, "p", "a", accept=NOMETA).json()
    assert body["x"] == 1.5
