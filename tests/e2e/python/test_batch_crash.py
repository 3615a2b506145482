"""Batch atomicity across a crash (spec 6.2: "either every operation is visible or none, to readers and
after a crash").

Starts its own tablestone on a temporary data directory, streams 100-operation transactions from
several threads, kills the server with SIGKILL in the middle of the stream, restarts it on the same
directory and checks that every transaction is whole or absent, and that every acknowledged one is
there. Bounded to a few seconds per round. Skipped against an external endpoint.

The general crash harness lives in tests/reliability/; this one is focused on $batch.
"""

import http.client
import os
import random
import shutil
import tempfile
import threading
import time
import types

import pytest
from azure.data.tables import TableClient

import harness

ROUNDS = 2
WRITERS = 3          # threads inserting fresh partitions
PAYLOAD = "x" * 400  # makes each batch ~50 KB, so the kill often lands mid-request


def _binary():
    if os.environ.get("TABLESTONE_E2E_CONNECTION_STRING"):
        pytest.skip("needs a tablestone process it can kill")
    binary = os.environ.get("TABLESTONE_BIN") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "build", "server", "app", "tablestone")
    binary = os.path.abspath(binary)
    if not os.access(binary, os.X_OK):
        pytest.skip("tablestone binary not found at %s" % binary)
    return binary


def _raw(port):
    t = types.SimpleNamespace(host="127.0.0.1", port=port, base_path="/" + harness.ACCOUNT,
                              account=harness.ACCOUNT, key=harness.ACCOUNT_KEY)
    return harness.RawClient(t)


def _table_client(port, table):
    cs = ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=http://127.0.0.1:%d/%s;"
          % (harness.ACCOUNT, harness.ACCOUNT_KEY, port, harness.ACCOUNT))
    return TableClient.from_connection_string(cs, table)


class Stream:
    """Writers that run until the first transport error (the kill)."""

    def __init__(self, raw, table, round_no):
        self.raw = raw
        self.table = table
        self.round_no = round_no
        self.acked = []          # partition keys whose batch got a full 202 success
        self.shared_acked = -1   # last generation of the 'shared' partition that was acknowledged
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.unexpected = []

    def _submit(self, ops):
        r, parts = self.raw.batch(ops)
        if r.status != 202 or not parts or any(p.status >= 300 for p in parts):
            self.unexpected.append((r.status, parts[:1]))
            return False
        return True

    def insert_writer(self, wid):
        n = 0
        while not self.stop.is_set():
            pk = "r%d-w%d-%05d" % (self.round_no, wid, n)
            ops = [("POST", "/" + self.table, {"PartitionKey": pk, "RowKey": "%03d" % i, "s": PAYLOAD},
                    {"Prefer": "return-no-content"}) for i in range(100)]
            try:
                ok = self._submit(ops)
            except (OSError, http.client.HTTPException):
                return  # the server went away
            if ok:
                with self.lock:
                    self.acked.append(pk)
            n += 1

    def shared_writer(self):
        gen = (self.round_no + 1) * 100000
        while not self.stop.is_set():
            ops = [("PUT", "/%s(PartitionKey='shared',RowKey='%03d')" % (self.table, i), {"gen": gen, "s": PAYLOAD},
                    None) for i in range(100)]
            try:
                ok = self._submit(ops)
            except (OSError, http.client.HTTPException):
                return
            if ok:
                self.shared_acked = gen
            gen += 1


def _check(client, all_acked, shared_acked):
    """Returns the number of inserted partitions present; asserts each is whole."""
    rows = {}    # partition -> set of RowKeys
    stamps = {}  # partition -> set of Timestamps
    gens = set()
    for e in client.list_entities(select=["PartitionKey", "RowKey", "gen"]):
        pk = e["PartitionKey"]
        rows.setdefault(pk, set()).add(e["RowKey"])
        stamps.setdefault(pk, set()).add(e.metadata["timestamp"])
        if pk == "shared":
            gens.add(e["gen"])
    shared_rows = len(rows.pop("shared", ()))
    shared_stamps = stamps.pop("shared", set())
    torn = {pk: len(v) for pk, v in rows.items() if len(v) != 100}
    assert not torn, "partially applied transactions: %r" % torn
    mixed = {pk: len(v) for pk, v in stamps.items() if len(v) != 1}
    assert not mixed, "transactions with more than one timestamp: %r" % mixed
    missing = [pk for pk in all_acked if pk not in rows]
    assert not missing, "acknowledged transactions lost: %r" % missing[:5]
    if shared_acked >= 0:
        assert shared_rows == 100, "the shared partition is torn: %d rows" % shared_rows
        assert len(gens) == 1, "the shared partition mixes generations: %r" % sorted(gens)
        assert gens.pop() >= shared_acked, "an acknowledged rewrite of the shared partition was lost"
        assert len(shared_stamps) == 1
    return len(rows)


def test_batches_whole_or_absent_after_kill_9():
    binary = _binary()
    tmp = tempfile.mkdtemp(prefix="tablestone-batch-crash.")
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    server = harness.ManagedServer(binary, data, harness.free_port())
    table = "crashtbl"
    try:
        server.start()
        raw = _raw(server.port)
        assert raw.create_table(table).status == 201
        all_acked = []
        shared_acked = -1
        rng = random.Random()
        for round_no in range(ROUNDS):
            stream = Stream(raw, table, round_no)
            threads = [threading.Thread(target=stream.insert_writer, args=(w,), daemon=True)
                       for w in range(WRITERS)]
            threads.append(threading.Thread(target=stream.shared_writer, daemon=True))
            for t in threads:
                t.start()
            time.sleep(rng.uniform(0.8, 1.6))
            server.proc.kill()  # SIGKILL mid-stream
            server.proc.wait()
            stream.stop.set()
            for t in threads:
                t.join(30)
            server.kill()  # bookkeeping only: the process is already gone
            assert not stream.unexpected, stream.unexpected[:3]
            assert stream.acked, "no transaction completed before the kill; the test proves nothing"
            all_acked += stream.acked
            shared_acked = max(shared_acked, stream.shared_acked)

            server.start()
            raw = _raw(server.port)
            present = _check(_table_client(server.port, table), all_acked, shared_acked)
            assert present >= len(all_acked)
    finally:
        server.kill()
        shutil.rmtree(tmp, ignore_errors=True)
