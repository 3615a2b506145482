#!/usr/bin/env python3
"""Crash harness: no acknowledged write may be lost to a crash, a batch is all or nothing.

Each cycle: several client threads stream acknowledged writes (inserts, InsertOrReplace, conditional
merges with the last ETag, deletes and 100-operation $batch change sets) to a running tablestone;
at a random moment the server is stopped (SIGKILL for --mode kill9, SIGTERM for --mode sigterm);
it is restarted on the same data directory and the whole table is read back and checked against
a model of what was acknowledged:

- every key holds its last ACKNOWLEDGED properties and ETag (or is absent if its last acknowledged
  write was a delete);
- a write whose response never arrived ("in flight" when the server died) may or may not have been
  applied: for exactly those keys either the old or the new state is accepted, and the model takes
  whichever is found;
- every batch partition holds either all 100 rows of one batch with one shared ETag, or nothing new:
  never a mix of two batches (a partial batch);
- the server restarts every time (and for SIGTERM exits with code 0 and loses nothing: a response
  it sent is a write it kept).

Each client owns its keys (partition c<N> for single writes, b<N> for its batches), so the model is
exact without cross-client ordering. Prints per-cycle lines, a summary and a final JSON line;
exit code 0 only if every cycle passed.

Usage:
  crash_harness.py [--cycles N] [--mode kill9|sigterm] [--clients K] [--seconds S]
                   [--durability default|fsync] [--binary PATH] [--workdir DIR] [--seed N] [--ci]
  --ci = 5 cycles x 2 s with 4 clients (the CI stage runs it once per mode).
  crash_harness.py --scenario diskfull|logsize [--ci]: the disk scenarios of disk_scenarios.py
  (a full disk under 4 writers, then kill -9; the log's size after ~200 MB of writes and the
  restart after kill -9), each a few seconds; the CI stage runs both.
"""

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tsclient  # noqa: E402

TABLE = "crashtable"
KEYS_PER_CLIENT = 40
BATCH_SIZE = 100
SYSTEM = ("PartitionKey", "RowKey", "Timestamp")


def user_props(entity):
    return {k: v for k, v in entity.items() if k not in SYSTEM and not k.startswith("odata.")
            and "@odata." not in k}


class KeyState:
    """Last acknowledged state of one key plus the candidates of a write in flight."""
    __slots__ = ("props", "etag", "pending")

    def __init__(self):
        self.props = None  # None = absent
        self.etag = None
        self.pending = None  # (kind, props_or_None) of a write whose outcome is unknown


class ClientModel:
    def __init__(self, idx):
        self.idx = idx
        self.pk = "c%d" % idx
        self.bpk = "b%d" % idx
        self.keys = {"k%03d" % j: KeyState() for j in range(KEYS_PER_CLIENT)}
        self.batch_id = None     # last acknowledged batch id (None = never)
        self.batch_etag = None
        self.batch_pending = None  # batch id in flight
        self.seq = 0


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def add(self, name, n=1):
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + n


class Worker(threading.Thread):
    """Streams writes for one ClientModel until `stop` is set or the server goes away."""

    def __init__(self, model, port, stop, stopping, stats, rng, problems):
        super().__init__(daemon=True)
        self.m = model
        self.port = port
        self.stop = stop          # set: finish now
        self.stopping = stopping  # set: the server is being stopped (errors are expected)
        self.stats = stats
        self.rng = rng
        self.problems = problems

    def run(self):
        client = tsclient.Client(self.port, timeout=20)
        try:
            while not self.stop.is_set():
                if not self.one_op(client):
                    return
        finally:
            client.close()

    def problem(self, text):
        self.problems.append("client %d: %s" % (self.m.idx, text))

    def one_op(self, client):
        """Performs one write; returns False when the worker should end."""
        m, rng = self.m, self.rng
        m.seq += 1
        seq = m.seq
        if rng.random() < 0.04:
            return self.one_batch(client, seq)
        name = rng.choice(list(m.keys))
        st = m.keys[name]
        body = {"PartitionKey": m.pk, "RowKey": name}
        roll = rng.random()
        if st.props is None:
            kind = "insert" if roll < 0.6 else "upsert"
        else:
            kind = "merge" if roll < 0.35 else ("delete" if roll < 0.55 else "upsert")
        if kind in ("insert", "upsert"):
            new_props = {"v": seq, "w": m.pk, "pad": "x" * rng.randrange(0, 600)}
            body.update(new_props)
        elif kind == "merge":
            body["m"] = seq
            new_props = dict(st.props)
            new_props["m"] = seq
        else:
            new_props = None
        st.pending = (kind, new_props)
        try:
            if kind == "insert":
                r = client.insert(TABLE, body)
                ok = r.status in (201, 204)
            elif kind == "upsert":
                r = client.upsert(TABLE, body)
                ok = r.status == 204
            elif kind == "merge":
                r = client.merge(TABLE, body, etag=st.etag)  # conditional: tests the ETag too
                ok = r.status == 204
            else:
                r = client.delete(TABLE, m.pk, name, etag=st.etag)
                ok = r.status == 204
        except Exception:  # noqa: BLE001 - connection died: outcome unknown, keep st.pending
            self.stats.add("inflight_" + kind)
            return False
        if not ok:
            st.pending = None  # an error response: the write was not applied
            if self.stopping.is_set() and r.status >= 500:
                self.stats.add("refused_during_stop")
                return False
            self.problem("%s %s/%s -> %d %s" % (kind, m.pk, name, r.status, r.body[:200]))
            return False
        st.pending = None
        st.props = new_props
        st.etag = r.header("ETag") if new_props is not None else None
        if new_props is not None and not st.etag:
            self.problem("%s %s/%s: no ETag in the response" % (kind, m.pk, name))
        self.stats.add("acked_" + kind)
        return True

    def one_batch(self, client, seq):
        m = self.m
        bid = "batch-%d-%d" % (m.idx, seq)
        ops = [("PUT", {"PartitionKey": m.bpk, "RowKey": "r%03d" % j, "batch": bid, "j": j}, None)
               for j in range(BATCH_SIZE)]
        m.batch_pending = bid
        try:
            r, parts = client.batch(TABLE, ops)
        except Exception:  # noqa: BLE001
            self.stats.add("inflight_batch")
            return False
        m.batch_pending = None
        if r.status != 202 or len(parts) != BATCH_SIZE or any(s != 204 for s, _ in parts):
            if self.stopping.is_set() and r.status >= 500:
                self.stats.add("refused_during_stop")
                return False
            self.problem("batch %s -> %d (%d parts) %s" % (bid, r.status, len(parts), r.body[:300]))
            return False
        etags = {h.get("etag") for _, h in parts}
        if len(etags) != 1 or None in etags:
            self.problem("batch %s: sub-response ETags differ or are missing: %s" % (bid, etags))
        m.batch_id = bid
        m.batch_etag = etags.pop() if etags else None
        self.stats.add("acked_batch")
        self.stats.add("acked_batch_ops", BATCH_SIZE)
        return True


def verify(models, port, stats):
    """Reads the table back; returns a list of problems. Resolves in-flight writes in the model."""
    problems = []
    client = tsclient.Client(port, timeout=60)
    try:
        rows = client.query_all(TABLE)
    finally:
        client.close()
    by_pk = {}
    for e in rows:
        by_pk.setdefault(e["PartitionKey"], {})[e["RowKey"]] = e
    known = {m.pk for m in models} | {m.bpk for m in models}
    for pk in by_pk:
        if pk not in known:
            problems.append("unexpected partition %r" % pk)
    for m in models:
        found = by_pk.get(m.pk, {})
        for rk in found:
            if rk not in m.keys:
                problems.append("unexpected row %s/%s" % (m.pk, rk))
        for name, st in m.keys.items():
            e = found.get(name)
            got = user_props(e) if e is not None else None
            got_etag = e.get("odata.etag") if e is not None else None
            old_ok = (got == st.props) and (got is None or got_etag == st.etag)
            if st.pending is None:
                if not old_ok:
                    problems.append("LOST/CHANGED acknowledged %s/%s: expected %s etag %s, found %s etag %s"
                                    % (m.pk, name, _short(st.props), st.etag, _short(got), got_etag))
                continue
            kind, new_props = st.pending
            new_ok = got == new_props
            if old_ok:
                stats.add("inflight_not_applied")
            elif new_ok:
                stats.add("inflight_applied")
                st.props, st.etag = new_props, got_etag
            else:
                problems.append("in-flight %s on %s/%s: found %s, neither old %s nor new %s"
                                % (kind, m.pk, name, _short(got), _short(st.props), _short(new_props)))
            st.pending = None
        # Batch partition: all rows from one batch, or none.
        brows = by_pk.get(m.bpk, {})
        ids = {e.get("batch") for e in brows.values()}
        etags = {e.get("odata.etag") for e in brows.values()}
        if brows and (len(brows) != BATCH_SIZE or len(ids) != 1):
            problems.append("PARTIAL batch in %s: %d rows, batch ids %s" % (m.bpk, len(brows), sorted(map(str, ids))))
            continue
        got_id = ids.pop() if brows else None
        got_etag = etags.pop() if len(etags) == 1 else None
        if got_id == m.batch_id and (got_id is None or got_etag == m.batch_etag):
            if m.batch_pending is not None:
                stats.add("inflight_not_applied")
        elif m.batch_pending is not None and got_id == m.batch_pending:
            stats.add("inflight_applied")
            m.batch_id, m.batch_etag = got_id, got_etag
        else:
            problems.append("batch partition %s holds %s (etag %s); acknowledged %s (etag %s), in flight %s"
                            % (m.bpk, got_id, got_etag, m.batch_id, m.batch_etag, m.batch_pending))
        m.batch_pending = None
    stats.add("rows_verified", len(rows))
    return problems


def _short(props):
    if props is None:
        return "absent"
    return json.dumps({k: (v if k != "pad" else "<%d chars>" % len(v)) for k, v in sorted(props.items())})


def run(args):
    rng = random.Random(args.seed)
    binary = args.binary or tsclient.default_binary()
    work = args.workdir or tempfile.mkdtemp(prefix="tablestone-crash.")
    data = os.path.join(work, "data")
    os.makedirs(data, exist_ok=True)
    extra = ["--durability", args.durability]
    server = tsclient.Server(binary, data, extra_args=extra, log_path=os.path.join(work, "server.log"))
    stats = Stats()
    models = [ClientModel(i) for i in range(args.clients)]
    cycle_lines = []
    failed_cycles = 0
    start_failures = 0
    restart_secs = []
    stop_secs = []
    t_all = time.monotonic()
    print("crash harness: %d cycles, mode %s, %d clients, %.1f s, durability %s, binary %s, dir %s"
          % (args.cycles, args.mode, args.clients, args.seconds, args.durability, binary, work), flush=True)
    try:
        server.start()
        c = tsclient.Client(server.port)
        r = c.create_table(TABLE)
        c.close()
        if r.status not in (201, 204, 409):
            raise RuntimeError("create table: %r" % r)
        for cycle in range(1, args.cycles + 1):
            problems = []
            stop, stopping = threading.Event(), threading.Event()
            before = dict(stats.counts)
            workers = [Worker(m, server.port, stop, stopping, stats, random.Random(rng.random()), problems)
                       for m in models]
            for w in workers:
                w.start()
            run_for = rng.uniform(0.25, 1.0) * args.seconds
            time.sleep(run_for)
            stopping.set()
            t0 = time.monotonic()
            if args.mode == "kill9":
                server.kill()
            else:
                code = server.stop(timeout=60)
                if code != 0:
                    problems.append("SIGTERM exit code %r" % code)
            stop_secs.append(time.monotonic() - t0)
            stop.set()
            for w in workers:
                w.join(30)
                if w.is_alive():
                    problems.append("client %d did not finish" % w.m.idx)
            try:
                restart_secs.append(server.start())
            except RuntimeError as e:
                start_failures += 1
                problems.append("restart failed: %s" % e)
                cycle_lines.append("cycle %d: FAIL (server did not start)" % cycle)
                print(cycle_lines[-1], "\n  " + "\n  ".join(problems), flush=True)
                failed_cycles += 1
                break
            try:
                problems += verify(models, server.port, stats)
            except Exception as e:  # noqa: BLE001
                problems.append("verification failed: %r" % e)
            delta = {k: stats.counts.get(k, 0) - before.get(k, 0) for k in stats.counts}
            acked = sum(v for k, v in delta.items() if k.startswith("acked_") and k != "acked_batch_ops")
            inflight = sum(v for k, v in delta.items() if k.startswith("inflight_") and
                           k not in ("inflight_applied", "inflight_not_applied"))
            status = "ok" if not problems else "FAIL"
            line = ("cycle %d: %s after %.2fs: %d writes acked (%d batches), %d in flight "
                    "(%d applied, %d not), restart %.2fs"
                    % (cycle, status, run_for, acked, delta.get("acked_batch", 0), inflight,
                       delta.get("inflight_applied", 0), delta.get("inflight_not_applied", 0),
                       restart_secs[-1]))
            cycle_lines.append(line)
            print(line, flush=True)
            if problems:
                failed_cycles += 1
                for p in problems[:20]:
                    print("  " + p, flush=True)
                if len(problems) > 20:
                    print("  ... %d more" % (len(problems) - 20), flush=True)
    finally:
        code = server.stop()
        if code not in (0, None):
            print("final SIGTERM exit code %r" % code)
    elapsed = time.monotonic() - t_all
    cnt = stats.counts
    acked_ops = sum(v for k, v in cnt.items() if k.startswith("acked_") and k != "acked_batch")
    summary = {
        "mode": args.mode, "durability": args.durability, "cycles": len(cycle_lines),
        "failed_cycles": failed_cycles, "start_failures": start_failures,
        "acked_single_writes": sum(cnt.get("acked_" + k, 0) for k in ("insert", "upsert", "merge", "delete")),
        "acked_batches": cnt.get("acked_batch", 0), "acked_entity_ops_total": acked_ops,
        "inflight_at_stop": sum(v for k, v in cnt.items() if k.startswith("inflight_") and
                                k not in ("inflight_applied", "inflight_not_applied")),
        "inflight_applied": cnt.get("inflight_applied", 0),
        "inflight_not_applied": cnt.get("inflight_not_applied", 0),
        "refused_during_stop": cnt.get("refused_during_stop", 0),
        "rows_verified": cnt.get("rows_verified", 0),
        "restart_s_max": round(max(restart_secs), 3) if restart_secs else None,
        "restart_s_mean": round(sum(restart_secs) / len(restart_secs), 3) if restart_secs else None,
        "stop_s_max": round(max(stop_secs), 3) if stop_secs else None,
        "elapsed_s": round(elapsed, 1),
        "counts": dict(sorted(cnt.items())),
    }
    print("summary: %d/%d cycles passed; %d acknowledged entity writes (%d single + %d batches x %d); "
          "%d writes in flight at the stop (%d applied, %d not); %d start failures; restart max %.2fs"
          % (summary["cycles"] - failed_cycles, args.cycles, acked_ops, summary["acked_single_writes"],
             summary["acked_batches"], BATCH_SIZE, summary["inflight_at_stop"], summary["inflight_applied"],
             summary["inflight_not_applied"], start_failures, summary["restart_s_max"] or 0))
    print("CRASH-HARNESS-RESULT " + json.dumps(summary), flush=True)
    ok = failed_cycles == 0 and len(cycle_lines) == args.cycles
    if ok and not args.keep and not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    elif not ok:
        print("data dir and server log kept in %s" % work)
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cycles", type=int, default=50)
    p.add_argument("--mode", choices=("kill9", "sigterm"), default="kill9")
    p.add_argument("--clients", type=int, default=6)
    p.add_argument("--seconds", type=float, default=4.0, help="longest run before the stop (random in [S/4, S])")
    p.add_argument("--durability", choices=("default", "fsync"), default="default")
    p.add_argument("--binary", help="tablestone binary (default: TABLESTONE_BIN or a build dir)")
    p.add_argument("--workdir", help="directory for data and logs (kept)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    p.add_argument("--ci", action="store_true", help="short run: 5 cycles x 2 s, 4 clients")
    p.add_argument("--scenario", choices=("cycles", "diskfull", "logsize"), default="cycles",
                   help="cycles (default): the kill/restart cycles above; diskfull, logsize: disk_scenarios.py")
    args = p.parse_args()
    if args.scenario != "cycles":
        import disk_scenarios  # noqa: E402
        sys.exit(disk_scenarios.run(args))
    if args.seed is None:
        args.seed = random.randrange(1 << 30)
    if args.ci:
        args.cycles, args.seconds, args.clients = 5, 2.0, 4
    print("seed %d" % args.seed)
    sys.exit(run(args))


if __name__ == "__main__":
    main()
