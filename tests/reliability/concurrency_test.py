"""Concurrency: optimistic-concurrency counters lose no update at 64 clients, concurrent batches on
one partition serialize (and queries see a consistent snapshot of the partition), and a table
deleted while clients write to it ends cleanly (errors, no resurrection of old rows).

Run: TABLESTONE_BIN=build-rel/server/app/tablestone /usr/bin/python3 -m pytest -q tests/reliability/concurrency_test.py
"""

import os
import shutil
import sys
import tempfile
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tsclient  # noqa: E402


@pytest.fixture(scope="module")
def server():
    work = tempfile.mkdtemp(prefix="tablestone-conc.")
    srv = tsclient.Server(tsclient.default_binary(), os.path.join(work, "data"),
                          log_path=os.path.join(work, "server.log"))
    srv.start()
    yield srv
    code = srv.stop()
    assert code == 0, srv.log_tail()
    shutil.rmtree(work, ignore_errors=True)


def run_threads(n, target):
    errors = []

    def wrap(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append("thread %d: %r" % (i, e))

    threads = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not any(t.is_alive() for t in threads), "threads hung"
    assert not errors, errors[:5]


def test_etag_counter_at_64_clients_loses_no_update(server):
    clients, per_client = 64, 3
    c = tsclient.Client(server.port)
    assert c.create_table("counter").status == 204
    assert c.insert("counter", {"PartitionKey": "c", "RowKey": "c", "n": 0}).status == 204
    c.close()
    written = []
    lock = threading.Lock()
    stats = {"conflicts": 0}

    def work(i):
        cl = tsclient.Client(server.port, timeout=60)
        done = 0
        while done < per_client:
            r = cl.get("counter", "c", "c")
            assert r.status == 200, r
            n, etag = r.json()["n"], r.header("ETag")
            w = cl.request("PUT", tsclient.entity_path("counter", "c", "c"),
                           body={"PartitionKey": "c", "RowKey": "c", "n": n + 1},
                           headers={"If-Match": etag})
            if w.status == 204:
                assert w.header("ETag") != etag
                with lock:
                    written.append(n + 1)
                done += 1
            else:
                assert w.status == 412 and w.error_code == "UpdateConditionNotSatisfied", w
                with lock:
                    stats["conflicts"] += 1
        cl.close()

    t0 = time.monotonic()
    run_threads(clients, work)
    total = clients * per_client
    c = tsclient.Client(server.port)
    final = c.get("counter", "c", "c").json()["n"]
    c.close()
    print("counter: %d increments by %d clients, %d conflicts (412), %.1f s"
          % (total, clients, stats["conflicts"], time.monotonic() - t0))
    assert final == total
    assert sorted(written) == list(range(1, total + 1)), "two clients won with the same ETag"


def test_concurrent_batches_on_one_partition_serialize_and_queries_see_snapshots(server):
    writers, batches_each, rows = 6, 6, 100
    c = tsclient.Client(server.port)
    assert c.create_table("batches").status == 204
    c.close()
    stop = threading.Event()
    snapshots = {"reads": 0, "bad": []}

    def reader():
        cl = tsclient.Client(server.port)
        while not stop.is_set():
            got = cl.query_all("batches", "PartitionKey eq 'p'")
            snapshots["reads"] += 1
            markers = {e["m"] for e in got}
            if got and (len(got) != rows or len(markers) != 1):
                snapshots["bad"].append((len(got), sorted(markers)[:5]))
        cl.close()

    def work(i):
        cl = tsclient.Client(server.port, timeout=60)
        for b in range(batches_each):
            marker = "w%d-b%d" % (i, b)
            ops = [("PUT", {"PartitionKey": "p", "RowKey": "r%03d" % j, "m": marker}, None)
                   for j in range(rows)]
            r, parts = cl.batch("batches", ops)
            assert r.status == 202 and len(parts) == rows, r
            assert all(s == 204 for s, _ in parts), parts[:3]
            assert len({h.get("etag") for _, h in parts}) == 1
        cl.close()

    rt = threading.Thread(target=reader)
    rt.start()
    try:
        run_threads(writers, work)
    finally:
        stop.set()
        rt.join(60)
    c = tsclient.Client(server.port)
    got = c.query_all("batches", "PartitionKey eq 'p'")
    c.close()
    print("batches: %d x %d batches of %d, %d snapshot reads" % (writers, batches_each, rows, snapshots["reads"]))
    assert len(got) == rows
    assert len({e["m"] for e in got}) == 1, "rows from different batches interleaved"
    assert len({e["odata.etag"] for e in got}) == 1
    assert not snapshots["bad"], "a query saw a partition mid-batch: %s" % snapshots["bad"][:3]


@pytest.mark.parametrize("round_", range(3))
def test_table_deleted_while_clients_write(server, round_):
    table = "churn%d" % round_
    c = tsclient.Client(server.port)
    assert c.create_table(table).status == 204
    stop = threading.Event()
    log = []  # (row_key, t_send, t_ack, status, code)
    lock = threading.Lock()

    def work(i):
        cl = tsclient.Client(server.port)
        seq = 0
        while not stop.is_set():
            seq += 1
            rk = "t%d-%06d" % (i, seq)
            t_send = time.monotonic()
            r = cl.insert(table, {"PartitionKey": "p%d" % (seq % 3), "RowKey": rk, "v": seq})
            t_ack = time.monotonic()
            with lock:
                log.append((rk, t_send, t_ack, r.status, r.error_code))
        cl.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.7)
    t_del0 = time.monotonic()
    r = c.delete_table(table)
    t_del1 = time.monotonic()
    assert r.status == 204, r
    time.sleep(0.3)
    t_cr0 = time.monotonic()
    r = c.create_table(table)
    t_cr1 = time.monotonic()
    assert r.status == 204, r
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join(30)
    rows = {e["RowKey"] for e in c.query_all(table)}
    c.close()
    bad_status = [e for e in log if e[3] not in (201, 204) and not (e[3] == 404 and e[4] == "TableNotFound")]
    assert not bad_status, "unexpected responses: %s" % bad_status[:5]
    acked = {e[0]: e for e in log if e[3] in (201, 204)}
    # No resurrection: each row of the new table was acknowledged after the re-creation began.
    resurrected = [rk for rk in rows if rk not in acked or acked[rk][2] < t_cr0]
    assert not resurrected, "rows from the deleted table reappeared: %s" % resurrected[:5]
    # And every write sent after the re-creation finished is there.
    missing = [rk for rk, e in acked.items() if e[1] > t_cr1 and rk not in rows]
    assert not missing, "acknowledged writes missing from the new table: %s" % missing[:5]
    errors_404 = sum(1 for e in log if e[3] == 404)
    print("table churn: %d writes, %d acked, %d TableNotFound while deleted, %d rows in the new table "
          "(delete took %.3f s)" % (len(log), len(acked), errors_404, len(rows), t_del1 - t_del0))
    assert errors_404 > 0, "no write observed the deleted table"
