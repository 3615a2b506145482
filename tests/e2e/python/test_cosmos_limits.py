"""Cosmos DB for Table mode: the entity and batch limits that differ from Table storage
(docs/cosmos-mode.md). Learn ("Frequently asked questions about Azure Cosmos DB for Table"): RowKey
at most 255 bytes, batches at most 2 MB, the property names id, rid, etag and ResourceId reserved;
a batch of 101 operations was accepted in azure-sdk-for-python's Cosmos recordings. Each test also
asserts what the storage flavour answers, so the difference is pinned from both sides.
"""

import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableServiceClient
from azure.data.tables._error import RequestTooLargeError

from conftest import sdk_error_code, unique_name


@pytest.fixture(scope="module")
def cosmos_service(cosmos):
    return TableServiceClient.from_connection_string(cosmos.connection_string)


@pytest.fixture
def ctable(cosmos_service):
    return cosmos_service.create_table(unique_name("lim"))


def test_row_key_is_limited_to_255_utf8_bytes(ctable, table):
    ctable.create_entity({"PartitionKey": "p", "RowKey": "r" * 255})
    ctable.create_entity({"PartitionKey": "p", "RowKey": "\u00e9" * 127})  # 254 bytes
    for too_long in ("r" * 256, "\u00e9" * 128):  # 256 bytes: 256 or 128 characters
        with pytest.raises(HttpResponseError) as err:
            ctable.create_entity({"PartitionKey": "p", "RowKey": too_long})
        assert err.value.status_code == 400
        assert sdk_error_code(err.value) == "KeyValueTooLarge"
    # Table storage takes RowKeys up to 1 KiB.
    table.create_entity({"PartitionKey": "p", "RowKey": "r" * 256})


def test_a_batch_over_2_mib_is_too_large(ctable, table):
    # Two entities of ~1.1 MB of properties each would exceed the entity limit; 40 of 60 KB do not.
    big = "x" * 30000  # 60 KB as UTF-16, ~30 KB on the wire
    ops = [("upsert", {"PartitionKey": "p", "RowKey": "%03d" % i, "a": big, "b": big}) for i in range(40)]
    with pytest.raises(RequestTooLargeError) as err:
        ctable.submit_transaction(ops)
    assert err.value.status_code == 413
    assert list(ctable.list_entities()) == []
    # Table storage takes batches up to 4 MiB.
    table.submit_transaction(ops)


def test_a_change_set_may_hold_more_than_100_operations(ctable, table):
    ops = [("create", {"PartitionKey": "p", "RowKey": "%03d" % i}) for i in range(101)]
    ctable.submit_transaction(ops)
    assert len(list(ctable.list_entities())) == 101
    with pytest.raises(Exception):  # Table storage: 100 at most
        table.submit_transaction(ops)


@pytest.mark.parametrize("name", ["id", "ID", "rid", "etag", "ETag", "ResourceId"])
def test_reserved_property_names_are_refused(ctable, table, name):
    with pytest.raises(HttpResponseError) as err:
        ctable.create_entity({"PartitionKey": "p", "RowKey": "r", name: "v"})
    assert err.value.status_code == 400
    assert sdk_error_code(err.value) == "PropertyNameInvalid"
    # Inside a batch too.
    with pytest.raises(Exception) as batch_err:
        ctable.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "a"}),
                                   ("upsert", {"PartitionKey": "p", "RowKey": "b", name: "v"})])
    assert "PropertyNameInvalid" in str(batch_err.value)
    assert list(ctable.list_entities()) == []
    # Table storage has no reserved names.
    table.create_entity({"PartitionKey": "p", "RowKey": "r", name: "v"})
