"""Two crash-harness scenarios about the disk (crash_harness.py --scenario diskfull|logsize).

diskfull: a small tmpfs fills up under 4 writers. Every write answered with an error must be either
durable or invisible: right after each error answer, the written key is read on another connection;
the server is then killed (kill -9) while the disk is still full, its data directory copied to a
larger disk and started there. Checked: 0 acknowledged writes lost, 0 of the error-answered writes
that were readable at once gone; the other table's reads and health answered throughout.

logsize: after one Create Table, ~200 MB of entity writes: the log files (*.log) in the data
directory must stay under 96 MiB (one Create Table used to pin the first log until RocksDB's default
limit of 4 x the memtable budget, 384 MiB), and a restart after kill -9 (which replays the log) must
be quick.

Both print one "DISK-SCENARIO-RESULT {json}" line; run() returns the process exit code.
"""

import base64
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

import tsclient

TABLE = "diskfull"
QUIET = "quiet"
SERVER_ERRORS = {"InternalError", "ServerBusy", "OperationTimedOut"}


def _run(*cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _mount_tmpfs(path, size_mb):
    r = _run("mount", "-t", "tmpfs", "-o", "size=%dm" % size_mb, "tmpfs", path)
    return r.returncode == 0, r.stdout.strip()


def _fill(path, leave_bytes):
    """A filler file that leaves about `leave_bytes` free on the file system of `path`."""
    st = os.statvfs(path)
    free = st.f_bavail * st.f_frsize
    size = max(0, free - leave_bytes)
    filler = os.path.join(path, "filler")
    with open(filler, "wb") as f:
        chunk = b"\0" * (1 << 20)
        while size > 0:
            n = min(size, len(chunk))
            f.write(chunk[:n])
            size -= n
    return filler


def _log_bytes(data):
    return sum(os.path.getsize(os.path.join(data, n)) for n in os.listdir(data) if n.endswith(".log"))


class _Writer(threading.Thread):
    """Inserts its own keys until it has seen `max_errors` error answers; after each error
    answer reads the key at once on a second connection."""

    def __init__(self, idx, port, max_errors, deadline, pad):
        super().__init__(daemon=True)
        self.idx, self.port, self.max_errors, self.deadline, self.pad = idx, port, max_errors, deadline, pad
        self.acked = {}         # rk -> value
        self.errored = []       # rks answered with an error
        self.readable = {}      # rk -> value, errored but read back at once
        self.bad = []           # answers that break the rules

    def run(self):
        c, reader = tsclient.Client(self.port), tsclient.Client(self.port)
        pk = "w%d" % self.idx
        i = 0
        try:
            while len(self.errored) < self.max_errors and time.monotonic() < self.deadline:
                rk = "r%07d" % i
                i += 1
                try:
                    r = c.insert(TABLE, {"PartitionKey": pk, "RowKey": rk, "i": i, "pad": self.pad})
                except OSError as e:
                    self.bad.append("insert %s: %r" % (rk, e))
                    continue
                if r.status == 204:
                    self.acked[rk] = i
                    continue
                if r.status < 500 or r.error_code not in SERVER_ERRORS:
                    self.bad.append("insert %s: %r" % (rk, r))
                self.errored.append(rk)
                g = reader.get(TABLE, pk, rk)
                if g.status == 200:
                    self.readable[rk] = g.json()["i"]
                elif g.status not in (404, 500, 503):
                    self.bad.append("read after error %s: %r" % (rk, g))
        finally:
            c.close()
            reader.close()


def run_disk_full(binary, work, size_mb=64, writers=4, max_errors=30, seconds=60.0):
    """Returns (ok, summary dict)."""
    disk = os.path.join(work, "disk")
    os.makedirs(disk, exist_ok=True)
    mounted, why = _mount_tmpfs(disk, size_mb)
    if not mounted:
        return None, {"skipped": "cannot mount a tmpfs here (%s)" % why}
    data = os.path.join(disk, "data")
    log = os.path.join(work, "diskfull-server.log")
    srv = tsclient.Server(binary, data, log_path=log)
    copy_srv = None
    problems = []
    summary = {"size_mb": size_mb, "writers": writers}
    try:
        srv.start()
        c = tsclient.Client(srv.port)
        assert c.create_table(TABLE).status in (201, 204)
        assert c.create_table(QUIET).status in (201, 204)
        assert c.insert(QUIET, {"PartitionKey": "q", "RowKey": "1", "v": 1}).status == 204
        # Leave room for a few seconds of writes: the scenario is about what happens at the edge.
        filler = _fill(disk, 12 << 20)
        pad = "z" * 6000
        deadline = time.monotonic() + seconds
        threads = [_Writer(i, srv.port, max_errors, deadline, pad) for i in range(writers)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        quiet_ok = quiet_fail = 0
        while any(t.is_alive() for t in threads):
            # Reads of a table with no failed write, and health, keep working on a full disk.
            r = c.get(QUIET, "q", "1")
            if r.status == 200:
                quiet_ok += 1
            else:
                quiet_fail += 1
                problems.append("read of the quiet table: %r" % r)
            if not tsclient.health(srv.port):
                problems.append("health failed on a full disk")
            time.sleep(0.05)
        for t in threads:
            t.join()
        summary["fill_seconds"] = round(time.monotonic() - t0, 2)
        c.close()
        srv.kill()  # kill -9 while the disk is still full
        acked = {(t.idx, rk): v for t in threads for rk, v in t.acked.items()}
        readable = {(t.idx, rk): v for t in threads for rk, v in t.readable.items()}
        errored = sum(len(t.errored) for t in threads)
        for t in threads:
            problems += t.bad
        if errored == 0:
            problems.append("no write failed: the disk never filled")
        # Restart from a copy on a larger disk, as an operator would.
        copy = os.path.join(work, "copy")
        shutil.copytree(data, copy)
        os.unlink(filler)
        copy_srv = tsclient.Server(binary, copy, log_path=log)
        copy_srv.start()
        c = tsclient.Client(copy_srv.port)
        rows = {}
        for e in c.query_all(TABLE):
            rows[(int(e["PartitionKey"][1:]), e["RowKey"])] = e["i"]
        lost = [k for k, v in acked.items() if rows.get(k) != v]
        gone = [k for k, v in readable.items() if rows.get(k) != v]
        quiet = c.get(QUIET, "q", "1").status
        c.close()
        if lost:
            problems.append("%d acknowledged writes lost, e.g. %s" % (len(lost), lost[:5]))
        if gone:
            problems.append("%d writes readable at once are gone after kill -9, e.g. %s" % (len(gone), gone[:5]))
        if quiet != 200:
            problems.append("the quiet table's row is gone: %d" % quiet)
        summary.update({"acked": len(acked), "error_answers": errored, "readable_at_once": len(readable),
                        "acked_lost": len(lost), "readable_gone": len(gone),
                        "error_answers_found_after_restart": sum(
                            1 for t in threads for rk in t.errored if (t.idx, rk) in rows),
                        "quiet_reads_ok": quiet_ok, "quiet_reads_failed": quiet_fail})
    except Exception as e:  # noqa: BLE001
        problems.append("scenario failed: %r" % e)
    finally:
        srv.kill()
        if copy_srv is not None:
            copy_srv.stop()
        _run("umount", "-l", disk)
    summary["problems"] = problems[:20]
    return not problems, summary


def run_log_size(binary, work, megabytes=200, limit_mib=96, restart_limit_s=0.5):
    """Returns (ok, summary dict)."""
    data = os.path.join(work, "logsize-data")
    srv = tsclient.Server(binary, data, log_path=os.path.join(work, "logsize-server.log"))
    problems = []
    summary = {}
    try:
        srv.start()
        c = tsclient.Client(srv.port)
        assert c.create_table("logsize").status in (201, 204)
        # Entities of ~900 KB (15 binary properties of 60,000 bytes): few requests for many bytes.
        chunk = base64.b64encode(os.urandom(60000)).decode()
        entity_bytes = 15 * 60000
        n = megabytes * 1000 * 1000 // entity_bytes
        peak = 0
        t0 = time.monotonic()
        for i in range(n):
            e = {"PartitionKey": "p%d" % (i % 8), "RowKey": "r%06d" % i}
            for j in range(15):
                e["b%d" % j] = chunk
                e["b%d@odata.type" % j] = "Edm.Binary"
            r = c.upsert("logsize", e)
            if r.status != 204:
                problems.append("write %d: %r" % (i, r))
                break
            if i % 16 == 0:
                peak = max(peak, _log_bytes(data))
        c.close()
        write_s = time.monotonic() - t0
        end = _log_bytes(data)
        peak = max(peak, end)
        srv.kill()
        restart = srv.start()
        c = tsclient.Client(srv.port)
        last = c.get("logsize", "p%d" % ((n - 1) % 8), "r%06d" % (n - 1))
        c.close()
        if last.status != 200:
            problems.append("the last acknowledged write is gone after kill -9: %r" % last)
        summary = {"written_mb": round(n * entity_bytes / 1e6, 1), "write_s": round(write_s, 1),
                   "log_mib_peak": round(peak / 2**20, 1), "log_mib_end": round(end / 2**20, 1),
                   "restart_after_kill9_s": round(restart, 3)}
        if peak >= limit_mib << 20:
            problems.append("log files reached %.1f MiB (limit %d MiB)" % (peak / 2**20, limit_mib))
        if restart >= restart_limit_s:
            problems.append("restart after kill -9 took %.2f s (limit %.2f s)" % (restart, restart_limit_s))
    except Exception as e:  # noqa: BLE001
        problems.append("scenario failed: %r" % e)
    finally:
        srv.stop()
    summary["problems"] = problems[:20]
    return not problems, summary


def run(args):
    binary = args.binary or tsclient.default_binary()
    work = args.workdir or tempfile.mkdtemp(prefix="tablestone-%s." % args.scenario)
    if args.scenario == "diskfull":
        ok, summary = run_disk_full(binary, work, max_errors=30 if args.ci else 100)
    else:
        # Under --ci the machine is shared with other stages: the restart bound is looser there;
        # the 0.5 s figure of docs/reliability.md is from a run by hand.
        # 120 MB under --ci (a few seconds): still past the 96 MiB bound that the log reached before.
        ok, summary = run_log_size(binary, work, megabytes=120 if args.ci else 200,
                                   restart_limit_s=2.0 if args.ci else 0.5)
    print("DISK-SCENARIO-RESULT " + json.dumps(dict(summary, scenario=args.scenario,
                                                     result="skipped" if ok is None else ok)), flush=True)
    if ok is None:
        print("%s: skipped: %s" % (args.scenario, summary["skipped"]))
        ok = True
    if ok and not args.keep and not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    elif not ok:
        print("data and server logs kept in %s" % work)
    return 0 if ok else 1
