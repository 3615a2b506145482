"""--inMemoryPersistence (Azurite's flag; here RocksDB on a memory Env): the server works normally, writes
nothing to its data directory, and starts empty again after a restart."""
import os
import shutil
import tempfile

import pytest
from azure.data.tables import TableServiceClient

import harness


@pytest.fixture
def in_memory_server(target):
    if not target.managed:
        pytest.skip("needs a tablestone process started by the test")
    tmp = tempfile.mkdtemp(prefix="tablestone-e2e-mem.")
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    server = harness.ManagedServer(target.server.binary, data, harness.free_port(),
                                   extra_env={"TABLESTONE_IN_MEMORY": "true"})
    server.start()
    try:
        yield server, data
    finally:
        code = server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        assert code == 0


def _client(port):
    return TableServiceClient.from_connection_string(
        "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"
        "TableEndpoint=http://127.0.0.1:%d/%s;" % (harness.ACCOUNT, harness.ACCOUNT_KEY, port, harness.ACCOUNT))


def test_in_memory_mode_serves_and_forgets(in_memory_server):
    server, data = in_memory_server
    service = _client(server.port)
    table = service.create_table("inmemtable")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "n": 7})
    assert table.get_entity("p", "r")["n"] == 7
    assert [t.name for t in service.list_tables()] == ["inmemtable"]
    assert os.listdir(data) == []  # nothing reached the data directory

    assert server.stop() == 0
    server.start()
    assert list(_client(server.port).list_tables()) == []
