"""Cosmos DB for Table mode: what the service does not have and how it answers errors
(docs/cosmos-mode.md). Learn ("Frequently asked questions about Azure Cosmos DB for Table"): no
CORS, no service properties or stats, no table ACLs (stored access policies), table names
case-sensitive. Recorded exchanges (azure-sdk-for-python and azure-sdk-for-net Cosmos recordings)
show 501 NotImplemented in JSON for the unsupported operations, and error codes only in the body.
"""

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableServiceClient, UpdateMode

import harness
from conftest import sdk_error_code, unique_name


@pytest.fixture(scope="module")
def cosmos_service(cosmos):
    return TableServiceClient.from_connection_string(cosmos.connection_string)


def test_the_emulator_connection_string_works_end_to_end(cosmos_service):
    # The connection string of the Cosmos DB emulator's docs, pointed at this port.
    table = cosmos_service.create_table(unique_name("emu"))
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "n": 1})
    table.update_entity({"PartitionKey": "p", "RowKey": "r", "m": 2}, mode=UpdateMode.MERGE)
    table.submit_transaction([("update", {"PartitionKey": "p", "RowKey": "r", "k": 3}, {"mode": "merge"})])
    got = table.get_entity("p", "r")
    assert (got["n"], got["m"], got["k"]) == (1, 2, 3)
    assert [e["RowKey"] for e in table.query_entities("n eq 1")] == ["r"]
    table.delete_entity("p", "r")
    cosmos_service.delete_table(table.table_name)


@pytest.mark.parametrize("call", [
    lambda svc, t: svc.get_service_properties(),
    lambda svc, t: svc.set_service_properties(analytics_logging=None, cors=[]),
    lambda svc, t: t.get_table_access_policy(),
    lambda svc, t: t.set_table_access_policy({}),
], ids=["get_service_properties", "set_service_properties", "get_table_access_policy", "set_table_access_policy"])
def test_unsupported_operations_answer_501(cosmos_service, call):
    t = cosmos_service.create_table(unique_name("nope"))
    with pytest.raises(HttpResponseError) as err:
        call(cosmos_service, t)
    assert err.value.status_code == 501
    assert sdk_error_code(err.value) == "NotImplemented"


@pytest.mark.parametrize("path", ["/?restype=service&comp=properties", "/?restype=service&comp=stats"])
def test_501_is_json_without_an_error_code_header(cosmos, path):
    # Get Service Stats too (the SDK would call it on the account's -secondary host, which the
    # emulator-style localhost endpoint does not have).
    r = cosmos.raw.request("GET", path, accept="application/xml")
    assert r.status == 501, r
    assert r.header("content-type").startswith("application/json")
    assert r.error_code == "NotImplemented"
    assert r.header("x-ms-error-code") is None


def test_no_cors(cosmos):
    pre = cosmos.raw.request("OPTIONS", "/Tables", sign=False, headers={
        "Origin": "http://example.com", "Access-Control-Request-Method": "GET"})
    assert pre.status == 501, pre
    r = cosmos.raw.request("GET", "/Tables", headers={"Origin": "http://example.com"})
    assert r.status == 200
    assert not [h for h in r.headers if h.startswith("access-control-")]


def test_errors_carry_their_code_in_the_body_only(cosmos, cosmos_service, raw):
    t = cosmos_service.create_table(unique_name("err"))
    r = cosmos.raw.get_entity(t.table_name, "nope", "nope")
    assert r.status == 404
    assert r.header("x-ms-error-code") is None
    assert r.error_code == "ResourceNotFound"
    with pytest.raises(ResourceNotFoundError) as err:
        t.get_entity("nope", "nope")
    assert sdk_error_code(err.value) == "ResourceNotFound"
    # The storage flavour names it in the header too.
    assert raw.get_entity("nosuchtable", "a", "b").header("x-ms-error-code") == "TableNotFound"


def test_table_names_are_case_sensitive(cosmos_service, service):
    name = unique_name("Case")
    upper = cosmos_service.create_table(name)
    lower = cosmos_service.create_table(name.lower())  # another table
    upper.create_entity({"PartitionKey": "p", "RowKey": "r"})
    with pytest.raises(ResourceNotFoundError):
        lower.get_entity("p", "r")
    listed = {t.name for t in cosmos_service.list_tables()}
    assert {name, name.lower()} <= listed
    cosmos_service.delete_table(name.lower())
    assert upper.get_entity("p", "r")["RowKey"] == "r"
    # Table storage: one table, whatever the case.
    service.create_table(name)
    try:
        with pytest.raises(ResourceExistsError):
            service.create_table(name.lower())
    finally:
        service.delete_table(name)


def test_each_listener_knows_only_its_own_accounts(cosmos):
    # The storage account's key does not open the Cosmos listener, nor the emulator's the main one.
    storage_signed = harness.RawClient(type("T", (), {
        "host": "localhost", "port": cosmos.port, "base_path": "", "account": harness.ACCOUNT,
        "key": harness.ACCOUNT_KEY})())
    assert storage_signed.request("GET", "/Tables").status == 403
    main = cosmos.server
    cosmos_signed_on_main = harness.RawClient(type("T", (), {
        "host": "127.0.0.1", "port": main.port, "base_path": "/" + harness.COSMOS_ACCOUNT,
        "account": harness.COSMOS_ACCOUNT, "key": harness.COSMOS_KEY})())
    assert cosmos_signed_on_main.request("GET", "/Tables").status in (400, 403, 404)
    # No data browser and no admin routes on the Cosmos listener.
    assert cosmos.raw.request("GET", "/_tablestone/ui/", sign=False, raw_path=True).status != 200
    assert cosmos.raw.request("POST", "/_tablestone/reset", sign=False, raw_path=True).status != 200
