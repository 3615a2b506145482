"""Query Entities: filters of every literal type, $select, $top, paging and continuation (spec 2.5, 4)."""

import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import HttpResponseError, ServiceResponseError
from azure.data.tables import EdmType, EntityProperty

from conftest import sdk_error_code, unique_name
from harness import NOMETA

UTC = timezone.utc
BIG_PK = "big"
BIG_ROWS = 2500
SMALL_PARTS = 12
SMALL_ROWS = 100
TOKEN_RE = re.compile(r"^[A-Za-z0-9!*_\-]+$")  # URL-safe, no '=', '+', '/', '&', '#', spaces


def _load(client, entities):
    """Loads entities with batches of 100 (one partition each); if transactions are not available,
    falls back to parallel upserts."""
    by_pk = {}
    for e in entities:
        by_pk.setdefault(e["PartitionKey"], []).append(e)
    chunks = [rows[i:i + 100] for rows in by_pk.values() for i in range(0, len(rows), 100)]

    def retry(fn, arg):
        # Upserts are idempotent; retry a dropped keep-alive connection (seen with Azurite).
        for attempt in range(3):
            try:
                return fn(arg)
            except ServiceResponseError:
                if attempt == 2:
                    raise

    def send_chunk(chunk):
        return client.submit_transaction([("upsert", e) for e in chunk])

    try:
        retry(send_chunk, chunks[0])
    except HttpResponseError:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda e: retry(client.upsert_entity, e), entities))
        return
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda c: retry(send_chunk, c), chunks[1:]))


@pytest.fixture(scope="module")
def big_table(service):
    name = unique_name("big")
    client = service.create_table(name)
    ents = [{"PartitionKey": BIG_PK, "RowKey": "r%05d" % i, "i": i} for i in range(BIG_ROWS)]
    ents += [{"PartitionKey": "p%02d" % p, "RowKey": "r%03d" % r, "i": r}
             for p in range(SMALL_PARTS) for r in range(SMALL_ROWS)]
    _load(client, ents)
    yield client
    service.delete_table(name)


GUID = uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833")
WHEN = datetime(2021, 6, 9, 1, 17, 8, tzinfo=UTC)


@pytest.fixture(scope="module")
def typed_table(service):
    name = unique_name("typed")
    client = service.create_table(name)
    rows = [
        {"RowKey": "a", "s": "apple", "i": 1, "l": EntityProperty(10_000_000_000, EdmType.INT64), "d": 1.5,
         "b": True, "t": WHEN, "g": GUID, "bin": b"\x01\x02"},
        {"RowKey": "b", "s": "banana", "i": 2, "l": EntityProperty(20_000_000_000, EdmType.INT64), "d": 2.5,
         "b": False, "t": WHEN + timedelta(days=1), "g": uuid.uuid4(), "bin": b"\x03"},
        {"RowKey": "c", "s": "O'Brien", "i": 3, "d": 3.0, "b": True},
        {"RowKey": "d", "other": "no common props"},
    ]
    for r in rows:
        client.create_entity({"PartitionKey": "t", **r})
    yield client
    service.delete_table(name)


def _rks(entities):
    return [e["RowKey"] for e in entities]


@pytest.mark.parametrize("flt,params,expected", [
    ("s eq @v", {"v": "apple"}, ["a"]),
    ("s eq @v", {"v": "O'Brien"}, ["c"]),
    ("s ge 'b' and s lt 'c'", None, ["b"]),
    ("i gt 1", None, ["b", "c"]),
    ("i le 2 and i ne 1", None, ["b"]),
    ("l eq 10000000000L", None, ["a"]),
    ("l gt @v", {"v": 15_000_000_000}, ["b"]),  # the SDK writes 15000000000L
    ("d lt 2.0", None, ["a"]),
    ("d eq 3.0", None, ["c"]),
    ("b eq true", None, ["a", "c"]),
    ("b eq false", None, ["b"]),
    ("t eq @v", {"v": WHEN}, ["a"]),
    ("t gt datetime'2021-06-09T12:00:00Z'", None, ["b"]),
    ("g eq @v", {"v": GUID}, ["a"]),
    ("bin eq X'0102'", None, ["a"]),
    ("bin eq @v", {"v": b"\x03"}, ["b"]),
    ("i eq 1 or i eq 3", None, ["a", "c"]),
    ("not (i eq 1)", None, ["b", "c", "d"]),  # missing property: comparison false, not -> true
    ("i ne 1", None, ["b", "c"]),             # missing property: ne is false too
    ("(i eq 1 or i eq 2) and b eq true", None, ["a"]),
    ("PartitionKey eq 't' and RowKey ge 'b' and RowKey lt 'd'", None, ["b", "c"]),
    ("b", None, ["a", "c"]),                  # bare boolean property
])
def test_filters_by_literal_type(typed_table, flt, params, expected):
    got = typed_table.query_entities(flt, parameters=params) if params else typed_table.query_entities(flt)
    assert _rks(got) == expected


@pytest.mark.azurite_wrong("compares values without type checking (spec 4.3, 12)")
@pytest.mark.parametrize("flt,expected", [
    ("i eq 1L", []),              # Int64 literal vs Int32 property: mismatch -> eq false
    ("l eq 10000000000.0", []),   # Double literal vs Int64 property: mismatch
    ("d eq 3", ["c"]),            # Int32 literal widens to Double
    ("s lt 5", ["a", "b", "c"]),  # mismatch: lt -> true for entities that have the property
    ("s gt 5", []),
])
def test_filter_type_mismatch_rules(typed_table, flt, expected):
    assert _rks(typed_table.query_entities(flt)) == expected


AZ_LAX = pytest.mark.azurite_wrong("its filter parser accepts this (spec 4.1, 12)")


@pytest.mark.parametrize("flt", ["i eq", pytest.param("i eq 'x", marks=AZ_LAX), "startswith(s,'a')",
                                 pytest.param("i eq 1 AND i eq 2x", marks=AZ_LAX)])
def test_bad_filters_400(raw, typed_table, flt):
    r = raw.query(typed_table.table_name, {"$filter": flt})
    assert r.status in (400, 501), r


def test_unsuffixed_integer_beyond_int32_is_invalid_input(typed_table):
    """Issue 36: an integer literal without 'L' is Edm.Int32; the service answers one outside the
    Int32 range with 400 InvalidInput (microsoft/AzureStorageExplorer#1382,
    Azure/azure-sdk-for-node#1083) instead of comparing it as an Int64."""
    for flt in ("l eq 10000000000", "l gt 2147483648", "i lt -2147483649", "v eq 5454161346626"):
        with pytest.raises(HttpResponseError) as exc:
            list(typed_table.query_entities(flt))
        assert exc.value.status_code == 400, flt
        assert sdk_error_code(exc.value) == "InvalidInput", flt
    assert _rks(typed_table.query_entities("l eq 10000000000L")) == ["a"]
    assert _rks(typed_table.query_entities("i gt -2147483648 and i lt 2147483647")) == ["a", "b", "c"]


@pytest.mark.azurite_wrong("omits a selected property the entity lacks instead of returning null "
                           "(spec 2.5.2)")
def test_select_raw_missing_property_is_null(raw, typed_table):
    r = raw.query(typed_table.table_name, {"$filter": "RowKey eq 'd'", "$select": "s,other"})
    assert r.status == 200, r
    (e,) = r.json()["value"]
    assert e["s"] is None and e["other"] == "no common props"
    assert "PartitionKey" not in e and "RowKey" not in e and "i" not in e
    assert "odata.etag" in e


def test_select_python(typed_table):
    (e,) = list(typed_table.query_entities("RowKey eq 'a'", select=["s", "i"]))
    assert e["s"] == "apple" and e["i"] == 1
    assert "d" not in e and "b" not in e


def test_select_with_a_filter_on_a_property_not_selected(big_table):
    # Issue 20: rows are decoded with the selected properties only, whether
    # read from storage (first passes) or from the scan cache (later ones).
    want = ["r%05d" % i for i in range(2400, BIG_ROWS)]
    for _ in range(4):
        got = list(big_table.query_entities("i ge 2400", select=["RowKey"]))
        assert [e["RowKey"] for e in got] == want
        assert all("i" not in e and "PartitionKey" not in e for e in got)
        time.sleep(0.05)  # lets the cache build that the second pass admits finish


def test_empty_result(raw, typed_table):
    r = raw.query(typed_table.table_name, {"$filter": "s eq 'nothing'"})
    assert r.status == 200, r
    assert r.json()["value"] == []
    assert r.header("x-ms-continuation-NextPartitionKey") is None


def test_top_and_continuation_headers_raw(raw, big_table):
    t = big_table.table_name
    r = raw.query(t, {"$filter": "PartitionKey eq 'p03'", "$top": "30"}, accept=NOMETA)
    assert r.status == 200, r
    assert [e["RowKey"] for e in r.json()["value"]] == ["r%03d" % i for i in range(30)]
    npk = r.header("x-ms-continuation-NextPartitionKey")
    nrk = r.header("x-ms-continuation-NextRowKey")
    assert npk and nrk
    seen = 30
    pages = 1
    while npk:
        params = {"$filter": "PartitionKey eq 'p03'", "$top": "30", "NextPartitionKey": npk}
        if nrk:
            params["NextRowKey"] = nrk
        r = raw.query(t, params, accept=NOMETA)
        assert r.status == 200, r
        vals = r.json()["value"]
        assert [e["RowKey"] for e in vals] == ["r%03d" % i for i in range(seen, seen + len(vals))]
        seen += len(vals)
        pages += 1
        npk = r.header("x-ms-continuation-NextPartitionKey")
        nrk = r.header("x-ms-continuation-NextRowKey")
        assert pages < 20
    assert seen == SMALL_ROWS


def test_capitalised_boolean_literal_is_a_property_name(raw, typed_table):
    """Issue 36, decided: literals are lower case (OData v3, Learn querying-tables-and-entities), so
    `b eq True` compares property b with a property named True: 501 NotImplemented, as every
    property-vs-property comparison (docs/compatibility.md, "Issue 36")."""
    r = raw.query(typed_table.table_name, {"$filter": "b eq True"})
    assert (r.status, r.header("x-ms-error-code")) == (501, "NotImplemented"), r
    r = raw.query(typed_table.table_name, {"$filter": "b eq true"}, accept=NOMETA)
    assert r.status == 200 and [e["RowKey"] for e in r.json()["value"]] == ["a", "c"]


def test_empty_continuation_parameter_is_invalid_input(raw, big_table):
    """Issue 36: the service refuses an empty NextRowKey= or NextPartitionKey= with 400 InvalidInput
    (microsoft/AzureStorageExplorer#5434, Azure/azure-sdk-for-js#20913). No SDK sends one any more,
    so this is raw HTTP."""
    t = big_table.table_name
    r = raw.query(t, {"$top": "5"}, accept=NOMETA)
    npk = r.header("x-ms-continuation-NextPartitionKey")
    assert npk
    for params in ({"NextPartitionKey": npk, "NextRowKey": ""}, {"NextRowKey": ""},
                   {"NextPartitionKey": ""}, {"NextPartitionKey": "", "NextRowKey": ""}):
        r = raw.query(t, dict(params, **{"$top": "5"}), accept=NOMETA)
        assert (r.status, r.header("x-ms-error-code")) == (400, "InvalidInput"), params
    r = raw.query(t, {"$top": "5", "NextPartitionKey": npk}, accept=NOMETA)
    assert r.status == 200, r


@pytest.mark.azurite_wrong("continuation tokens are plain base64 and may contain '=', '+' or '/' "
                           "(spec 2.5.3, 12)")
def test_continuation_tokens_are_url_safe(raw, big_table):
    t = big_table.table_name
    for top in ("1", "7", "33"):
        r = raw.query(t, {"$top": top}, accept=NOMETA)
        for h in ("x-ms-continuation-NextPartitionKey", "x-ms-continuation-NextRowKey"):
            v = r.header(h)
            assert v and TOKEN_RE.match(v), (h, v)


def test_top_bounds(raw, big_table):
    t = big_table.table_name
    r = raw.query(t, {"$top": "1000"}, accept=NOMETA)
    assert r.status == 200 and len(r.json()["value"]) == 1000


@pytest.mark.azurite_wrong("accepts $top above 1000 (spec 2.5.1)")
def test_top_above_1000_rejected(raw, big_table):
    r = raw.query(big_table.table_name, {"$top": "1001"}, accept=NOMETA)
    assert r.status == 400, r


def test_page_through_one_big_partition(big_table):
    pages = [list(p) for p in big_table.query_entities("PartitionKey eq @pk", parameters={"pk": BIG_PK},
                                                        results_per_page=1000).by_page()]
    assert all(len(p) <= 1000 for p in pages)
    rows = [e["RowKey"] for p in pages for e in p]
    assert rows == ["r%05d" % i for i in range(BIG_ROWS)]
    assert len(pages) >= 3


def test_page_across_partitions_small_pages(big_table):
    flt = "PartitionKey ge 'p' and PartitionKey lt 'q'"
    pages = [list(p) for p in big_table.query_entities(flt, results_per_page=77).by_page()]
    assert all(len(p) <= 77 for p in pages)
    keys = [(e["PartitionKey"], e["RowKey"]) for p in pages for e in p]
    assert keys == [("p%02d" % p, "r%03d" % r) for p in range(SMALL_PARTS) for r in range(SMALL_ROWS)]


def test_list_all_entities_default_pages(big_table):
    n = sum(1 for _ in big_table.list_entities(select=["RowKey"]))
    assert n == BIG_ROWS + SMALL_PARTS * SMALL_ROWS


def test_prefix_range_on_rowkey(big_table):
    got = list(big_table.query_entities("PartitionKey eq 'big' and RowKey ge 'r012' and RowKey lt 'r013'"))
    assert _rks(got) == ["r%05d" % i for i in range(1200, 1300)]


def test_filter_on_property_across_pages(big_table):
    got = list(big_table.query_entities("i ge 2490", results_per_page=5))
    assert sorted(e["i"] for e in got) == list(range(2490, 2500))


def test_inverted_ticks_newest_first(table):
    max_ticks = 3155378975999999999
    base = datetime(2024, 1, 1, tzinfo=UTC)
    for m in range(20):
        ticks = int((base + timedelta(minutes=m) - datetime(1, 1, 1, tzinfo=UTC)).total_seconds()) * 10**7
        table.create_entity({"PartitionKey": "log", "RowKey": "%019d" % (max_ticks - ticks), "minute": m})
    first_page = next(table.query_entities("PartitionKey eq 'log'", results_per_page=3).by_page())
    assert [e["minute"] for e in first_page] == [19, 18, 17]


def test_inserts_behind_and_ahead_of_continuation(raw, table):
    for i in range(30):
        table.create_entity({"PartitionKey": "c", "RowKey": "r%02d" % i})
    r = raw.query(table.table_name, {"$top": "10"}, accept=NOMETA)
    assert [e["RowKey"] for e in r.json()["value"]] == ["r%02d" % i for i in range(10)]
    npk = r.header("x-ms-continuation-NextPartitionKey")
    nrk = r.header("x-ms-continuation-NextRowKey")
    table.create_entity({"PartitionKey": "c", "RowKey": "r05x"})  # behind the token: not seen
    table.create_entity({"PartitionKey": "c", "RowKey": "r25x"})  # ahead of the token: seen
    table.delete_entity("c", "r20")                              # deleted ahead: not seen
    rest = []
    while npk:
        params = {"$top": "10", "NextPartitionKey": npk}
        if nrk:
            params["NextRowKey"] = nrk
        r = raw.query(table.table_name, params, accept=NOMETA)
        rest += [e["RowKey"] for e in r.json()["value"]]
        npk = r.header("x-ms-continuation-NextPartitionKey")
        nrk = r.header("x-ms-continuation-NextRowKey")
    expected = ["r%02d" % i for i in range(10, 30) if i != 20]
    expected.insert(expected.index("r25") + 1, "r25x")
    assert rest == expected


def test_ordinal_key_order(table):
    for rk in ["b", "a", "B", "10", "2", "1", "é", "_", "~"]:
        table.create_entity({"PartitionKey": "o", "RowKey": rk})
    got = [e["RowKey"] for e in table.list_entities()]
    assert got == sorted(["b", "a", "B", "10", "2", "1", "é", "_", "~"])


def test_timestamp_filter(table):
    table.create_entity({"PartitionKey": "ts", "RowKey": "x"})
    past = datetime.now(UTC) - timedelta(days=1)
    got = list(table.query_entities("Timestamp ge @t", parameters={"t": past}))
    assert _rks(got) == ["x"]
    got = list(table.query_entities("Timestamp lt @t", parameters={"t": past}))
    assert got == []
