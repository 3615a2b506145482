"""ETags and optimistic concurrency (spec 5, 3.7)."""

import random
import threading
import time
import urllib.parse

from azure.core import MatchConditions
from azure.core.exceptions import ResourceModifiedError
from azure.data.tables import TableClient, UpdateMode

from harness import NOMETA

CLIENTS = 16
CYCLES = 50


def test_concurrent_counter_with_conditional_merge(target, table):
    """16 clients x 50 read-increment-conditional-merge cycles, retrying on 412: the counter ends at
    800 and no value is handed out twice."""
    table.create_entity({"PartitionKey": "c", "RowKey": "counter", "value": 0})
    taken = [[] for _ in range(CLIENTS)]
    conflicts = [0] * CLIENTS
    errors = []

    def worker(i):
        client = TableClient.from_connection_string(target.connection_string, table.table_name)
        try:
            for _ in range(CYCLES):
                attempt = 0
                while True:
                    e = client.get_entity("c", "counter")
                    nxt = e["value"] + 1
                    try:
                        client.update_entity({"PartitionKey": "c", "RowKey": "counter", "value": nxt},
                                             mode=UpdateMode.MERGE, etag=e.metadata["etag"],
                                             match_condition=MatchConditions.IfNotModified)
                    except ResourceModifiedError:
                        conflicts[i] += 1
                        attempt += 1
                        # Randomised backoff, as a real client would do; keeps the run short.
                        time.sleep(random.random() * min(0.002 * 2 ** attempt, 0.128))
                        continue
                    taken[i].append(nxt)
                    break
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))
        finally:
            client.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors[:3]
    assert not any(t.is_alive() for t in threads)
    values = [v for per in taken for v in per]
    assert len(values) == CLIENTS * CYCLES
    assert len(set(values)) == len(values), "a counter value was handed out twice"
    assert sorted(values) == list(range(1, CLIENTS * CYCLES + 1))
    assert table.get_entity("c", "counter")["value"] == CLIENTS * CYCLES


def test_etag_header_matches_body_and_timestamp(raw, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "e", "v": 1})
    r = raw.get_entity(table.table_name, "p", "e")
    body = r.json()
    assert r.header("ETag") == body["odata.etag"]
    # The ETag is W/"datetime'<Timestamp with ':' percent-encoded>'"; Python rebuilds it from
    # Timestamp in nometadata, so the two must agree exactly (spec 2.0.2, 5).
    expected = "W/\"datetime'%s'\"" % urllib.parse.quote(body["Timestamp"], safe="")
    assert r.header("ETag") == expected
    r = raw.get_entity(table.table_name, "p", "e", accept=NOMETA)
    assert r.header("ETag") == "W/\"datetime'%s'\"" % urllib.parse.quote(r.json()["Timestamp"], safe="")


def test_etag_rebuilt_from_nometadata_timestamp_is_accepted(raw, table):
    # Python rebuilds the ETag from Timestamp when odata.etag is missing (nometadata); a conditional
    # update with that ETag must succeed.
    table.create_entity({"PartitionKey": "p", "RowKey": "nm", "v": 1})
    ts = raw.get_entity(table.table_name, "p", "nm", accept=NOMETA).json()["Timestamp"]
    etag = "W/\"datetime'%s'\"" % urllib.parse.quote(ts, safe="")
    table.update_entity({"PartitionKey": "p", "RowKey": "nm", "v": 2}, mode=UpdateMode.REPLACE,
                        etag=etag, match_condition=MatchConditions.IfNotModified)
    assert table.get_entity("p", "nm")["v"] == 2


def test_reads_do_not_change_etag_writes_do(table):
    m = table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    assert table.get_entity("p", "r").metadata["etag"] == m["etag"]
    list(table.list_entities())
    assert table.get_entity("p", "r").metadata["etag"] == m["etag"]
    m2 = table.update_entity({"PartitionKey": "p", "RowKey": "r", "v": 1}, mode=UpdateMode.MERGE)
    assert m2["etag"] != m["etag"]


def test_upserts_ignore_etags(table, raw):
    table.create_entity({"PartitionKey": "p", "RowKey": "u", "v": 1})
    for method in ("PUT", "PATCH", "MERGE"):
        r = raw.request(method, raw.entity_path(table.table_name, "p", "u"), body={"v": 2})
        assert r.status == 204, (method, r)


def test_if_match_with_current_etag_succeeds_for_every_verb(raw, table):
    m = table.create_entity({"PartitionKey": "p", "RowKey": "v", "v": 1})
    etag = m["etag"]
    for method in ("PUT", "PATCH", "MERGE"):
        r = raw.request(method, raw.entity_path(table.table_name, "p", "v"), body={"v": 3},
                        headers={"If-Match": etag})
        assert r.status == 204, (method, r)
        assert r.header("ETag") != etag
        etag = r.header("ETag")
    r = raw.request("DELETE", raw.entity_path(table.table_name, "p", "v"), headers={"If-Match": etag})
    assert r.status == 204, r
