"""--inMemoryPersistence (Azurite's flag; here RocksDB on a memory Env): the server works normally, writes
nothing to its data directory, and starts empty again after a restart."""
import os

import pytest
from azure.data.tables import TableServiceClient

import harness


@pytest.fixture
def in_memory_server(target):
    yield from harness.own_server(target, "tablestone-e2e-mem.", extra_env={"TABLESTONE_IN_MEMORY": "true"})


def _client(port):
    return TableServiceClient.from_connection_string(
        "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"
        "TableEndpoint=http://127.0.0.1:%d/%s;" % (harness.ACCOUNT, harness.ACCOUNT_KEY, port, harness.ACCOUNT))


def test_in_memory_mode_serves_and_forgets(in_memory_server):
    server = in_memory_server
    data = server.data_dir
    service = _client(server.port)
    table = service.create_table("inmemtable")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "n": 7})
    assert table.get_entity("p", "r")["n"] == 7
    assert [t.name for t in service.list_tables()] == ["inmemtable"]
    assert os.listdir(data) == []  # nothing reached the data directory

    assert server.stop() == 0
    server.start()
    assert list(_client(server.port).list_tables()) == []
