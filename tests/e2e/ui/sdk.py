"""What the server stored, seen through the Python SDK (azure.data.tables).

The browser test (run.js) calls this to load data behind the page's back and
to check what the page wrote. Usage: sdk.py CONNECTION_STRING COMMAND [ARGS];
prints one JSON document.
  load TABLE N             create TABLE with N entities (25 partitions, N Int32 = i)
  tables                   table names
  get TABLE PK RK          the entity with each property's Edm type, or {"missing": true}
  set TABLE PK RK NAME V   merge a string property (a change the page does not know of)
  count TABLE FILTER       number of entities matching FILTER
"""
import json
import sys

from azure.core.exceptions import ResourceNotFoundError
from azure.data.tables import TableServiceClient, UpdateMode


def typed(entity):
    out = {}
    for name, value in entity.items():
        out[name] = {"type": type(value).__name__, "value": str(value)}
        edm = getattr(value, "edm_type", None)
        if edm is not None:
            out[name] = {"type": str(edm.value), "value": str(value.value)}
    return out


def main(argv):
    service = TableServiceClient.from_connection_string(argv[1])
    command, args = argv[2], argv[3:]
    if command == "load":
        table = service.create_table_if_not_exists(args[0])
        n = int(args[1])
        by_partition = {}
        for i in range(n):
            pk = "p%02d" % (i % 25)
            by_partition.setdefault(pk, []).append(("create", {"PartitionKey": pk, "RowKey": "r%05d" % i, "N": i}))
        for ops in by_partition.values():
            for start in range(0, len(ops), 100):
                table.submit_transaction(ops[start:start + 100])
        result = {"loaded": n}
    elif command == "wide":
        # N entities of 30 properties (strings and Int32), the first with a 2,000-character value.
        table = service.create_table_if_not_exists(args[0])
        n = int(args[1])
        ops = []
        for i in range(n):
            entity = {"PartitionKey": "partition-with-a-longish-name-that-is-cut", "RowKey": "r%03d" % i}
            for c in range(30):
                entity["Column%02d" % c] = ("value %d" % i) if c % 2 else i
            if i == 0:
                entity["Long"] = "x" * 2000
            ops.append(("create", entity))
        for start in range(0, len(ops), 100):
            table.submit_transaction(ops[start:start + 100])
        result = {"loaded": n}
    elif command == "drop":
        service.delete_table(args[0])
        result = {"dropped": args[0]}
    elif command == "tables":
        result = sorted(t.name for t in service.list_tables())
    elif command == "get":
        try:
            result = typed(service.get_table_client(args[0]).get_entity(args[1], args[2]))
        except ResourceNotFoundError:
            result = {"missing": True}
    elif command == "set":
        service.get_table_client(args[0]).update_entity(
            {"PartitionKey": args[1], "RowKey": args[2], args[3]: args[4]}, mode=UpdateMode.MERGE)
        result = {"ok": True}
    elif command == "count":
        result = sum(1 for _ in service.get_table_client(args[0]).query_entities(args[1]))
    else:
        raise SystemExit("unknown command " + command)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv)
