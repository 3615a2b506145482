"""The data tools, fault rules and realistic mode against a Cosmos-flavoured server (issue 38,
docs/cosmos-mode.md "The tools in Cosmos mode").

Each tool is run once end to end, as a user would, against the Cosmos flavour in both of its forms:
the --cosmosPort listener addressed with the Cosmos DB emulator's connection string (export, import,
copy), and a main listener started with --flavor cosmos (the admin routes: snapshot, --seed, fault
rules, realistic mode). Nothing here assumes key order from the Cosmos flavour: results are compared
as sets, and an export of a Cosmos table is compared after sorting its lines.
"""

import json
import os

import pytest
from azure.data.tables import TableServiceClient

import harness
import test_data_tools as dt
from test_cosmos_sample import EMULATOR_ACCOUNT, EMULATOR_KEY
from test_faults import faults

pytestmark = dt.pytestmark
workdir = dt.workdir  # the fixture: a temporary directory per test


def cosmos_conn(port):
    return ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=http://localhost:%d/;"
            % (EMULATOR_ACCOUNT, EMULATOR_KEY, port))


def localhost_conn(server):
    # The main listener as localhost: azure-data-tables takes its Cosmos DB path (not port 10002).
    return ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;"
            "TableEndpoint=http://localhost:%d/devstoreaccount1;" % (harness.ACCOUNT_KEY, server.port))


def export_file(table, entities, source="devstoreaccount1"):
    lines = [dt.line({"@format": "tablestone-export", "@version": 1, "@table": table, "@source": source})]
    lines += [dt.line(e) for e in entities]
    lines.append(dt.line({"@end": table, "@entities": len(entities)}))
    return "\n".join(lines) + "\n"


def body_lines(text):
    """The entity lines of an export, sorted (a Cosmos table lists its entities in no key order)."""
    return sorted(l for l in text.splitlines() if l.startswith('{"PartitionKey"'))


# Entities the Cosmos flavour accepts (RowKey at most 255 bytes, no reserved property name), sorted
# as the storage flavour lists them.
ENTITIES = [{"PartitionKey": "p'q 😀", "RowKey": "a%b+c&d=e 𝄞", "S": "tab\tnl\n", "N@odata.type": "Edm.Int64",
             "N": "9223372036854775807"}]
ENTITIES += [{"PartitionKey": "part%d" % (i % 3), "RowKey": "%05d" % i, "N@odata.type": "Edm.Int32", "N": i}
             for i in range(250)]
ENTITIES.sort(key=lambda e: (e["PartitionKey"].encode("utf-16-be"), e["RowKey"].encode("utf-16-be")))


@pytest.fixture
def two_flavours(workdir):
    """One server: storage on its main listener, Cosmos on --cosmosPort. Yields (server, cosmos port)."""
    started = []
    cosmos_port = harness.free_port()
    s = dt.admin_server(workdir, started, "--cosmosPort", str(cosmos_port))
    try:
        yield s, cosmos_port
    finally:
        for x in started:
            assert x.stop() == 0


def test_export_import_and_copy_through_the_emulator_connection_string(two_flavours, workdir):
    server, cosmos_port = two_flavours
    cosmos, storage = cosmos_conn(cosmos_port), dt.conn(server)
    ref = os.path.join(workdir, "ref.jsonl")
    dt.write(ref, export_file("tools", ENTITIES))

    dt.ok(dt.tool("import", "--to", cosmos, "--in", ref))
    out = os.path.join(workdir, "cosmos.jsonl")
    res = dt.ok(dt.tool("export", "--from", cosmos, "--out", out))
    assert "localhost" in res.stderr.decode()
    assert body_lines(dt.read(out)) == body_lines(dt.read(ref))

    # Cosmos -> storage with a checkpoint: the storage copy lists exactly the reference, in key order.
    checkpoint = os.path.join(workdir, "copy.ckpt")
    dt.ok(dt.tool("copy", "--from", cosmos, "--to", storage, "--mode", "upsert", "--checkpoint", checkpoint))
    dt.ok(dt.tool("export", "--from", storage, "--table", "tools", "--out", out))
    assert dt.read(out) == dt.read(ref)

    # Storage -> Cosmos into a second name, then both Cosmos tables hold the same entities.
    dt.write(ref, export_file("again", ENTITIES))
    dt.ok(dt.tool("import", "--to", storage, "--in", ref))
    dt.ok(dt.tool("copy", "--from", storage, "--to", cosmos, "--table", "again", "--mode", "replace"))
    svc = TableServiceClient.from_connection_string(cosmos)
    for name in ("tools", "again"):
        got = {(e["PartitionKey"], e["RowKey"]) for e in svc.get_table_client(name).list_entities()}
        assert got == {(e["PartitionKey"], e["RowKey"]) for e in ENTITIES}


def test_import_of_large_entities_stays_under_the_cosmos_batch_limit(two_flavours, workdir):
    """100 entities of about 20 KB in one partition: 2 MB of JSON, one $batch for a tool that cut
    batches at 2 MiB of JSON, which Cosmos DB refuses with 413 once the multipart framing is added."""
    server, cosmos_port = two_flavours
    entities = [{"PartitionKey": "big", "RowKey": "%03d" % i, "S": "x" * 20800} for i in range(100)]
    assert sum(len(dt.line(e)) for e in entities) < 2 << 20
    ref = os.path.join(workdir, "big.jsonl")
    dt.write(ref, export_file("large", entities))
    dt.ok(dt.tool("import", "--to", cosmos_conn(cosmos_port), "--in", ref))
    # copy cuts its batches by its own estimate of the JSON: from storage, where the batch fits.
    dt.write(ref, export_file("copied", entities))
    dt.ok(dt.tool("import", "--to", dt.conn(server), "--in", ref))
    dt.ok(dt.tool("copy", "--from", dt.conn(server), "--to", cosmos_conn(cosmos_port), "--table", "copied",
                  "--mode", "replace"))
    svc = TableServiceClient.from_connection_string(cosmos_conn(cosmos_port))
    for name in ("large", "copied"):
        assert len(list(svc.get_table_client(name).list_entities(select=["RowKey"]))) == 100


def test_seed_and_snapshot_of_a_cosmos_flavoured_server(workdir):
    started = []
    try:
        seed_dir = os.path.join(workdir, "seed")
        os.mkdir(seed_dir)
        dt.write(os.path.join(seed_dir, "1.jsonl"), export_file("Seeded", ENTITIES))
        a = dt.admin_server(workdir, started, "--flavor", "cosmos", "--adminApi", "--snapshotDir", workdir,
                            "--seed", seed_dir)
        svc = TableServiceClient.from_connection_string(localhost_conn(a))
        assert [t.name for t in svc.list_tables()] == ["Seeded"]
        # Case-sensitive names: the seeded table is not "seeded".
        assert [t.name for t in svc.query_tables("TableName eq 'seeded'")] == []
        got = {(e["PartitionKey"], e["RowKey"]) for e in svc.get_table_client("Seeded").list_entities()}
        assert got == {(e["PartitionKey"], e["RowKey"]) for e in ENTITIES}

        snap = os.path.join(workdir, "snap")
        dt.ok(dt.tool("snapshot", "--from", dt.conn(a), "--to", snap))
        svc.get_table_client("Seeded").create_entity({"PartitionKey": "after", "RowKey": "1"})
        a.stop()
        b = dt.admin_server(workdir, started, "--flavor", "cosmos", data=snap)
        out = os.path.join(workdir, "out.jsonl")
        dt.ok(dt.tool("export", "--from", dt.conn(b), "--out", out))
        assert body_lines(dt.read(out)) == body_lines(export_file("Seeded", ENTITIES))
    finally:
        for s in started:
            s.stop()


def test_fault_rules_and_realistic_mode_on_a_cosmos_flavoured_server(workdir):
    started = []
    try:
        a = dt.admin_server(workdir, started, "--flavor", "cosmos", "--adminApi", "--faultSeed", "3")
        svc = TableServiceClient.from_connection_string(localhost_conn(a), retry_backoff_factor=0.01)
        t = svc.create_table("faulty")

        # A serverBusy rule through the tool: the SDK retries, the rule counts the attempts.
        rule = json.dumps({"action": "serverBusy", "maxCount": 2, "match": {"table": "faulty",
                                                                             "operation": "InsertEntity"}})
        dt.ok(dt.tool("faults", "add", "--from", dt.conn(a), "--rule", rule))
        t.create_entity({"PartitionKey": "p", "RowKey": "busy"})
        listing = json.loads(dt.ok(dt.tool("faults", "list", "--from", dt.conn(a), "--json")).stdout)
        assert [(r["matched"], r["injected"]) for r in listing["rules"]] == [(3, 2)]
        dt.ok(dt.tool("faults", "clear", "--from", dt.conn(a)))

        # Realistic mode: short and empty pages; the SDK's paging still returns every entity once.
        expected = {("p", "busy")}
        for p in range(6):
            t.submit_transaction([("upsert", {"PartitionKey": "p%d" % p, "RowKey": "r%03d" % r}) for r in range(25)])
            expected |= {("p%d" % p, "r%03d" % r) for r in range(25)}
        status, _ = faults(a, "POST", {"enabled": True, "account": harness.ACCOUNT, "table": "faulty"},
                           op="faults/realistic")
        assert status == 200
        pages = []

        def hook(response):
            pages.append(len(json.loads(response.http_response.text())["value"]))

        # Listed until the seeded draws have given an empty page too (one page in five is empty).
        for _ in range(10):
            pages.clear()
            got = [(e["PartitionKey"], e["RowKey"]) for e in t.list_entities(raw_response_hook=hook)]
            assert sorted(got) == sorted(expected) and len(got) == len(expected)
            assert len(pages) >= 2 and all(n < len(expected) for n in pages), pages
            if 0 in pages:
                break
        assert 0 in pages, pages

        # Query Tables too, with realistic mode for the whole account.
        names = {"faulty"} | {"more%02d" % i for i in range(30)}
        for name in sorted(names - {"faulty"}):
            svc.create_table(name)
        assert faults(a, "POST", {"enabled": True, "account": harness.ACCOUNT}, op="faults/realistic")[0] == 200
        seen = []
        for _ in range(10):
            pages.clear()
            listed = [x.name for x in svc.list_tables(raw_response_hook=hook)]
            assert sorted(listed) == sorted(names), listed
            seen.append(list(pages))
            if 0 in pages:
                break
        assert any(len(p) >= 3 for p in seen) and 0 in pages, seen
    finally:
        for s in started:
            s.stop()
