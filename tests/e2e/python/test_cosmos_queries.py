"""Cosmos DB for Table mode: query order, paging and continuation tokens (docs/cosmos-mode.md).

Learn ("Frequently asked questions about Azure Cosmos DB for Table", where API for Table is not
identical with Table storage): query results are not sorted by PartitionKey and RowKey, and
TakeCount ($top) is not limited to 1,000. The Cosmos listener returns them in a seeded,
deterministic non-key order (--faultSeed; --cosmosShuffle off restores key order), and answers
continuation tokens in the service's shape ({"token":...} and NextRowKey "NA", as recorded in
azure-sdk-for-python's Cosmos test recordings).
"""

import json
import urllib.parse

import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableServiceClient

import harness
from conftest import sdk_error_code, unique_name

ROWS = 40


def _fill(table, pk="p", rows=ROWS):
    # One change set: Cosmos DB documents no 100-operation limit (test_cosmos_limits.py).
    table.submit_transaction([("create", {"PartitionKey": pk, "RowKey": "%03d" % i, "n": i})
                              for i in range(rows)])


def _row_keys(entities):
    return [e["RowKey"] for e in entities]


@pytest.fixture(scope="module")
def cosmos_service(cosmos):
    return TableServiceClient.from_connection_string(cosmos.connection_string)


@pytest.fixture(scope="module")
def filled(cosmos_service):
    name = unique_name("order")
    table = cosmos_service.create_table(name)
    _fill(table)
    return table


def test_the_sdk_takes_its_cosmos_path(cosmos):
    # The precondition of every test_cosmos_* file: the SDK believes it talks to Cosmos DB.
    from azure.data.tables._common_conversion import _is_cosmos_endpoint
    assert _is_cosmos_endpoint(urllib.parse.urlparse(cosmos.endpoint))


def test_results_are_not_in_key_order_but_stable(filled, service, table):
    keys = _row_keys(filled.list_entities())
    assert sorted(keys) == ["%03d" % i for i in range(ROWS)]
    assert keys != sorted(keys), "the Cosmos flavour answered in key order"
    assert _row_keys(filled.list_entities()) == keys  # same seed, same data: same order
    # The storage flavour answers the same rows in key order.
    _fill(table)
    assert _row_keys(table.list_entities()) == sorted(keys)


def test_paging_returns_every_entity_once_even_with_writes_between_pages(cosmos_service):
    table = cosmos_service.create_table(unique_name("paging"))
    _fill(table)
    pages = table.query_entities("PartitionKey eq 'p'", results_per_page=7).by_page()
    seen = []
    for i, page in enumerate(pages):
        got = _row_keys(page)
        assert len(got) <= 7
        seen += got
        if i == 1:
            # Written between pages: entities present throughout are still seen exactly once.
            table.create_entity({"PartitionKey": "p", "RowKey": "new", "n": -1})
            table.delete_entity("p", "039")
    expected = {"%03d" % i for i in range(39)}
    assert expected <= set(seen)
    assert len(seen) == len(set(seen)), "an entity came twice"
    assert "039" not in seen or seen.index("039") < 14  # deleted after page 2: seen only before


def test_continuation_headers_have_the_cosmos_shape(cosmos, filled):
    r = cosmos.raw.query(filled.table_name, {"$top": "5"})
    assert r.status == 200, r
    token = json.loads(r.header("x-ms-continuation-NextPartitionKey"))
    assert isinstance(token["token"], str)
    assert token["range"] == {"min": "", "max": "FF"}
    assert r.header("x-ms-continuation-NextRowKey") == "NA"
    # The token resumes: the second page holds the next five in the same order.
    r2 = cosmos.raw.query(filled.table_name, {"$top": "5", "NextPartitionKey": json.dumps(token),
                                              "NextRowKey": "NA"})
    assert r2.status == 200, r2
    whole = _row_keys(filled.list_entities())
    assert [e["RowKey"] for e in r.json()["value"] + r2.json()["value"]] == whole[:10]


@pytest.mark.parametrize("token,row_key", [
    ("1!8!cA--", "1!4!MDA-"),
    ('{"token":"not base64!"}', "NA"),
    ('{"token":"' + "A" * 9000 + '"}', "NA"),  # over 8 KiB: refused unread (the URL limit is 16 KiB)
    ('{"range":{"min":"","max":"FF"}}', "NA"),
    ('{"token":"UwAAAAAAAAAB"}', "NA"),  # a shuffled token cut short
], ids=["storage-token", "malformed", "oversized", "no-token", "truncated"])
def test_foreign_or_malformed_tokens_are_refused(cosmos, filled, token, row_key):
    r = cosmos.raw.query(filled.table_name, {"NextPartitionKey": token, "NextRowKey": row_key})
    assert r.status == 400, r
    assert r.error_code == "InvalidInput"


def test_query_tables_is_unsorted_and_pages_completely(cosmos, cosmos_service):
    prefix = unique_name("qt")
    names = ["%s%02d" % (prefix, i) for i in range(12)]
    for name in names:
        cosmos_service.create_table(name)
    listed = [t.name for t in cosmos_service.list_tables() if t.name.startswith(prefix)]
    assert sorted(listed) == names
    assert listed != names, "Query Tables answered in name order"
    paged = []
    for page in cosmos_service.list_tables(results_per_page=5).by_page():
        paged += [t.name for t in page if t.name.startswith(prefix)]
    assert paged == listed
    r = cosmos.raw.request("GET", "/Tables?$top=3")
    assert json.loads(r.header("x-ms-continuation-NextTableName"))["range"] == {"min": "", "max": "FF"}


def test_top_is_not_limited_to_1000(cosmos_service, service, table):
    big = cosmos_service.create_table(unique_name("top"))
    big.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "%04d" % i}) for i in range(1500)])
    first = next(big.list_entities(results_per_page=2000).by_page())
    assert len(list(first)) == 1500
    # Table storage refuses $top above 1,000.
    with pytest.raises(HttpResponseError) as err:
        list(next(table.list_entities(results_per_page=2000).by_page()))
    assert err.value.status_code == 400
    assert sdk_error_code(err.value) == "InvalidInput"


@pytest.fixture(scope="module")
def unshuffled(target):
    yield from harness.cosmos_server(target, "tablestone-e2e-cosmos-off.", ["--cosmosShuffle", "off"])


@pytest.fixture(scope="module")
def reseeded(target):
    yield from harness.cosmos_server(target, "tablestone-e2e-cosmos-seed.", ["--faultSeed", "7"])


def test_the_shuffle_turns_off_and_the_seed_decides_the_order(unshuffled, reseeded, filled):
    default_order = _row_keys(filled.list_entities())
    for endpoint, expect_sorted in ((unshuffled, True), (reseeded, False)):
        svc = TableServiceClient.from_connection_string(endpoint.connection_string)
        t = svc.create_table(filled.table_name)
        _fill(t)
        keys = _row_keys(t.list_entities())
        if expect_sorted:
            assert keys == sorted(keys)
            # Paged in key order, still with Cosmos-shaped tokens.
            r = endpoint.raw.query(t.table_name, {"$top": "5"})
            assert r.header("x-ms-continuation-NextRowKey") == "NA"
            paged = [k for page in t.list_entities(results_per_page=6).by_page() for k in _row_keys(page)]
            assert paged == keys
        else:
            assert sorted(keys) == sorted(default_order)
            assert keys != default_order and keys != sorted(keys)
