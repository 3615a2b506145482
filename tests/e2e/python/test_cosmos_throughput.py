"""Cosmos DB for Table mode: the request-unit budget (--cosmosRuPerSecond, off by default;
docs/cosmos-mode.md). A request to a table over its budget is answered 429 with
x-ms-retry-after-ms (Learn: "HTTP Status Codes for Azure Cosmos DB"), which azure-core's retry
policy waits for before it retries.
"""

import time

import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableServiceClient, UpdateMode

import harness
from conftest import sdk_error_code, unique_name

RU_PER_SECOND = 20  # four 1 KiB writes a second (5 RU each)


@pytest.fixture(scope="module")
def budgeted(target):
    yield from harness.cosmos_server(target, "tablestone-e2e-cosmos-ru.", ["--cosmosRuPerSecond", str(RU_PER_SECOND)])


def test_the_sdk_waits_out_429_and_succeeds(budgeted):
    # Replacing upserts (PUT): azure-core retries a 429 of an idempotent method after
    # x-ms-retry-after-ms. An insert, or a merge (POST on the SDK's Cosmos path), it does not retry
    # without a Retry-After header, which the service does not send either (docs/cosmos-mode.md).
    svc = TableServiceClient.from_connection_string(budgeted.connection_string)
    table = svc.create_table(unique_name("ru"))
    start = time.monotonic()
    for i in range(8):  # 40 RU: the burst (20) and one more second's worth
        table.upsert_entity({"PartitionKey": "p", "RowKey": str(i)}, mode=UpdateMode.REPLACE)
    assert len(list(table.list_entities())) == 8
    assert time.monotonic() - start >= 0.5  # the SDK did wait


def test_429_names_the_wait(budgeted):
    table = unique_name("ru")
    raw = budgeted.raw
    assert raw.create_table(table).status == 201
    statuses = []
    for i in range(10):
        r = raw.insert(table, {"PartitionKey": "p", "RowKey": str(i)})
        statuses.append(r.status)
        if r.status == 429:
            break
    # The burst is 20 RU: four writes of 5, a fifth while the balance is not below zero.
    assert statuses[:5] == [201] * 5 and statuses[-1] == 429, statuses
    assert r.error_code == "TooManyRequests"
    wait = int(r.header("x-ms-retry-after-ms"))
    assert 1 <= wait <= 2000
    # Another table has a budget of its own.
    other = unique_name("ru")
    assert raw.create_table(other).status in (201, 429)


def test_without_retries_the_sdk_surfaces_the_429(budgeted):
    svc = TableServiceClient.from_connection_string(budgeted.connection_string, retry_total=0)
    table = svc.get_table_client(unique_name("ru"))
    budgeted.raw.create_table(table.table_name)
    with pytest.raises(HttpResponseError) as err:
        for i in range(20):
            table.create_entity({"PartitionKey": "p", "RowKey": str(i)})
    assert err.value.status_code == 429
    assert sdk_error_code(err.value) == "TooManyRequests"
    assert err.value.response.headers.get("x-ms-retry-after-ms")
