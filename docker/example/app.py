"""Example application for docker/docker-compose.yml: talks to tablestone through a connection string.

Reads the connection string from AZURE_TABLES_CONNECTION_STRING, creates a table, writes an entity,
reads it back and lists the tables. Exits non-zero if anything fails, so `docker compose up
--exit-code-from app` doubles as a smoke test of the image.
"""
import os
import sys
import uuid

from azure.data.tables import TableServiceClient


def main():
    conn = os.environ["AZURE_TABLES_CONNECTION_STRING"]
    service = TableServiceClient.from_connection_string(conn)
    table = service.create_table_if_not_exists("composeexample")
    row = str(uuid.uuid4())
    table.create_entity({"PartitionKey": "runs", "RowKey": row, "Message": "hello from compose"})
    got = table.get_entity("runs", row)
    assert got["Message"] == "hello from compose", got
    runs = sum(1 for _ in table.query_entities("PartitionKey eq 'runs'"))
    print(f"wrote and read back {row}; {runs} run(s) stored so far")
    print("tables:", sorted(t.name for t in service.list_tables()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
