"""Cosmos DB for Table mode: table-name syntax, JSON only, SAS limits, table-creation throttling
and the error messages' text (docs/cosmos-mode.md; the choices in docs/compatibility.md,
"Cosmos DB for Table mode: choices").

Learn, "Frequently asked questions about Azure Cosmos DB for Table" (its 2020 version): the service
speaks JSON only, a SAS cannot be used for management operations such as creating tables, stored
access policies are managed differently, and a rapid rate of table creation is throttled (keep it
under 5 a minute). azure-data-tables holds Cosmos DB's table-name rule (1-254 characters, not
/ \\ # ?, no trailing space) and the codes and messages it maps to that rule. The recorded Cosmos
errors in azure-sdk-for-net's session records end their message with "RequestID:<id>" and no Time.
"""

import datetime

import pytest
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.data.tables import (
    AccountSasPermissions,
    ResourceTypes,
    TableClient,
    TableServiceClient,
    TableTransactionError,
    generate_account_sas,
    generate_table_sas,
)

import harness
from conftest import sdk_error_code, unique_name

ATOM = "application/atom+xml,application/xml"


@pytest.fixture(scope="module")
def cosmos_service(cosmos):
    return TableServiceClient.from_connection_string(cosmos.connection_string)


@pytest.mark.parametrize("prefix", ["ab", "my-table", "x.y", "9"])
def test_cosmos_table_names_are_not_storage_names(cosmos_service, service, prefix):
    # "ab" is too short for storage, "-" and "." are not letters or digits, "9" starts with a digit.
    name = prefix if prefix == "ab" else prefix + unique_name("n")
    if prefix == "ab":
        try:
            cosmos_service.delete_table(name)
        except ResourceNotFoundError:
            pass
    table = cosmos_service.create_table(name)
    table.create_entity({"PartitionKey": "p", "RowKey": "1", "v": 1})
    table.submit_transaction([("upsert", {"PartitionKey": "p", "RowKey": "2", "v": 2})])
    assert table.get_entity("p", "1")["v"] == 1
    assert sorted(e["RowKey"] for e in table.query_entities("v ge 1")) == ["1", "2"]
    assert name in [t.name for t in cosmos_service.query_tables("TableName eq '%s'" % name)]
    table.delete_entity("p", "1")
    cosmos_service.delete_table(name)
    # The storage flavour refuses the same name; the SDK turns the refusal into its ValueError.
    with pytest.raises(ValueError):
        service.create_table(name)


@pytest.mark.parametrize("name", ["bad#name", "bad?name", "bad\\name", "trailing "])
def test_names_cosmos_refuses_raise_the_sdks_cosmos_name_error(cosmos_service, cosmos, name):
    with pytest.raises(ValueError) as err:
        cosmos_service.create_table(name)
    assert "Cosmos table names" in str(err.value)
    # Addressed in a URL (an entity operation): the same rule, the same error.
    client = TableClient.from_connection_string(cosmos.connection_string, name)
    with pytest.raises(ValueError):
        client.create_entity({"PartitionKey": "p", "RowKey": "r"})


def test_name_length_limits(cosmos_service, cosmos):
    longest = "t" * 253 + unique_name("")[-1]
    cosmos_service.create_table(longest)
    cosmos_service.delete_table(longest)
    r = cosmos.raw.create_table("t" * 255)
    assert (r.status, r.error_code) == (400, "BadRequest"), r
    assert r.error_message.startswith("The input name is invalid.")
    with pytest.raises(ValueError):
        cosmos_service.create_table("t" * 255)
    # Entity operations on an overlong name find no table.
    with pytest.raises(ResourceNotFoundError):
        TableClient.from_connection_string(cosmos.connection_string, "t" * 300).get_entity("p", "r")


def test_atom_is_refused_json_is_served(cosmos, raw):
    name = unique_name("atom")
    assert cosmos.raw.create_table(name).status == 201
    old = {"x-ms-version": "2013-08-15"}
    r = cosmos.raw.request("GET", "/%s()" % name, headers=old, accept=ATOM)
    assert (r.status, r.error_code) == (415, "AtomFormatNotSupported"), r
    assert r.header("content-type").startswith("application/json")
    sent = cosmos.raw.request("POST", "/" + name, headers=old, accept=harness.MINIMAL,
                              body=b"<entry xmlns='http://www.w3.org/2005/Atom'/>",
                              content_type="application/atom+xml")
    assert (sent.status, sent.error_code) == (415, "AtomFormatNotSupported"), sent
    assert cosmos.raw.request("GET", "/%s()" % name, headers=old, accept=harness.MINIMAL).status == 200
    # The storage flavour answers Atom at that version.
    assert raw.create_table(name).status == 201
    atom = raw.request("GET", "/%s()" % name, headers=old, accept=ATOM)
    assert atom.status == 200 and atom.header("content-type").startswith("application/atom+xml"), atom


def _account_sas(account, key):
    return generate_account_sas(
        AzureNamedKeyCredential(account, key),
        resource_types=ResourceTypes(service=True, container=True, object=True),
        permission=AccountSasPermissions(read=True, write=True, delete=True, list=True, add=True,
                                         create=True, update=True),
        expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=1))


def test_a_sas_cannot_create_or_delete_tables(cosmos, cosmos_service, target, service):
    name = unique_name("sas")
    cosmos_service.create_table(name)
    sas = _account_sas(cosmos.account, cosmos.key)
    by_sas = TableServiceClient(cosmos.endpoint, credential=AzureSasCredential(sas))
    for call in (lambda: by_sas.create_table(unique_name("sas")), lambda: by_sas.delete_table(name)):
        with pytest.raises(HttpResponseError) as err:
            call()
        assert err.value.status_code == 403
        assert sdk_error_code(err.value) == "AuthorizationPermissionMismatch"
    # The same token writes and reads entities.
    table = by_sas.get_table_client(name)
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    assert [e["RowKey"] for e in table.list_entities()] == ["r"]
    # On the storage flavour the same kind of token creates and deletes tables.
    storage_sas = _account_sas(harness.ACCOUNT, harness.ACCOUNT_KEY)
    storage_by_sas = TableServiceClient(service.url, credential=AzureSasCredential(storage_sas))
    created = unique_name("sas")
    storage_by_sas.create_table(created)
    storage_by_sas.delete_table(created)


def test_a_stored_access_policy_never_resolves(cosmos, cosmos_service):
    name = unique_name("si")
    cosmos_service.create_table(name)
    sas = generate_table_sas(AzureNamedKeyCredential(cosmos.account, cosmos.key), name, policy_id="readers")
    client = TableClient(cosmos.endpoint, name, credential=AzureSasCredential(sas))
    with pytest.raises(HttpResponseError) as err:
        list(client.list_entities())
    assert err.value.status_code == 403
    assert sdk_error_code(err.value) == "AuthenticationFailed"


def test_errors_end_with_the_request_id_line(cosmos, cosmos_service, raw):
    table = cosmos_service.create_table(unique_name("msg"))
    r = cosmos.raw.get_entity(table.table_name, "p", "none")
    assert r.status == 404
    assert r.error_message == "The specified resource does not exist.\nRequestID:%s\n" % r.header("x-ms-request-id")
    with pytest.raises(ResourceNotFoundError) as err:
        table.get_entity("p", "none")
    assert "RequestID:" in str(err.value) and "Time:" not in str(err.value)
    # A change set's failure keeps its operation's index.
    table.create_entity({"PartitionKey": "p", "RowKey": "2"})
    with pytest.raises(TableTransactionError) as failed:
        table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "1"}),
                                  ("create", {"PartitionKey": "p", "RowKey": "2"})])
    assert "1:The specified entity already exists.\n\nRequestID:" in str(failed.value), str(failed.value)
    # The storage flavour's message carries RequestId and Time lines.
    storage = raw.get_entity("nosuchtable", "p", "r")
    assert "\nRequestId:" in storage.error_message and "\nTime:" in storage.error_message


@pytest.fixture(scope="module")
def creation_limited(target):
    yield from harness.cosmos_server(target, "tablestone-e2e-cosmos-creates.",
                                     ["--cosmosRuPerSecond", "100000", "--cosmosTableCreatesPerMinute", "2"])


def test_rapid_table_creation_is_throttled_with_a_budget(creation_limited, cosmos_service):
    svc = TableServiceClient.from_connection_string(creation_limited.connection_string, retry_total=0)
    for _ in range(2):
        svc.create_table(unique_name("rate"))
    with pytest.raises(HttpResponseError) as err:
        svc.create_table(unique_name("rate"))
    assert err.value.status_code == 429
    assert sdk_error_code(err.value) == "TooManyRequests"
    assert 50_000 < int(err.value.response.headers["x-ms-retry-after-ms"]) <= 60_000
    # Without a budget (the cosmos fixture's server) nothing limits creation.
    for _ in range(6):
        cosmos_service.create_table(unique_name("rate"))
