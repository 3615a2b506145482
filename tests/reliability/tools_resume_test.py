"""The data tools at their kill points (issue 31, items 4 and 5).

- `copy --ifExists fail` killed after creating a table on the target and before saving its
  checkpoint: the rerun must resume (it refused the table it had created itself on every rerun).
  The kill lands in that window deterministically: the target holds Create Table's answer back
  for a few seconds (a latencyAfter fault rule from --faults), the test sees the table appear on
  the target and kills the copy (kill -9) while it waits for that answer.
- `import` (insert mode) whose batch committed but whose answer was lost (the server closed the
  connection after the commit: a closeAfter fault rule, as a restart would): the retry finds the
  entities, and the message must name the retry, not blame the data.

Run: TABLESTONE_BIN=build-test/server/app/tablestone /usr/bin/python3 -m pytest -q tests/reliability/tools_resume_test.py
"""

import json
import os
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tsclient  # noqa: E402

BINARY = tsclient.default_binary()


def conn(srv):
    return ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=http://127.0.0.1:%d/%s;"
            % (tsclient.ACCOUNT, tsclient.ACCOUNT_KEY, srv.port, tsclient.ACCOUNT))


def start(tmp_path, name, rules=None):
    extra = []
    if rules is not None:
        path = tmp_path / (name + "-faults.json")
        path.write_text(json.dumps({"rules": rules}))
        extra = ["--faults", str(path)]
    srv = tsclient.Server(BINARY, str(tmp_path / name), extra_args=extra, log_path=str(tmp_path / (name + ".log")))
    srv.start()
    return srv


def export(srv, path):
    r = subprocess.run([BINARY, "export", "--from", conn(srv), "--out", str(path)], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return path.read_text()


def test_copy_if_exists_fail_resumes_after_a_kill_between_create_and_checkpoint(tmp_path):
    a = start(tmp_path, "source")
    b = start(tmp_path, "target", rules=[{"action": "latencyAfter", "latencyMs": 4000, "maxCount": 1,
                                          "match": {"operation": "CreateTable", "table": "first"}}])
    try:
        c = tsclient.Client(a.port)
        for table in ("first", "second"):
            assert c.create_table(table).status in (201, 204)
            for p in range(3):
                ops = [("POST", {"PartitionKey": "p%d" % p, "RowKey": "r%03d" % i, "v": i}, None) for i in range(50)]
                assert c.batch(table, ops)[0].status == 202
        c.close()
        checkpoint = tmp_path / "copy.checkpoint"
        args = [BINARY, "copy", "--from", conn(a), "--to", conn(b), "--ifExists", "fail", "--checkpoint",
                str(checkpoint), "--progress", "none"]
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        target = tsclient.Client(b.port)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and p.poll() is None:
            if target.request("GET", "/Tables('first')").status == 200:
                break
            time.sleep(0.01)
        target.close()
        # The table exists on the target; the copy waits for Create Table's answer (4 s): kill it there.
        assert p.poll() is None, "the copy ended before the kill point: %s" % p.stderr.read().decode()
        p.kill()
        p.wait()
        p.stderr.close()
        # The rerun resumes: the table it finds is its own.
        r = subprocess.run(args, capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr.decode()
        assert not checkpoint.exists()
        assert export(a, tmp_path / "a.jsonl") == export(b, tmp_path / "b.jsonl")
        # A table that is not the copy's own is still refused.
        r = subprocess.run(args, capture_output=True, timeout=120)
        assert r.returncode == 1 and b"exists on the target" in r.stderr, r.stderr.decode()
    finally:
        a.stop()
        b.stop()


def test_import_retry_that_finds_its_own_batch_names_the_retry(tmp_path):
    srv = start(tmp_path, "target", rules=[{"action": "closeAfter", "maxCount": 1,
                                            "match": {"operation": "EntityGroupTransaction"}}])
    try:
        lines = [{"@format": "tablestone-export", "@version": 1, "@table": "imported", "@source": "x"}]
        lines += [{"PartitionKey": "p", "RowKey": "r%03d" % i, "v": i} for i in range(20)]
        lines.append({"@end": "imported", "@entities": 20})
        src = tmp_path / "in.jsonl"
        src.write_text("".join(json.dumps(x) + "\n" for x in lines))
        r = subprocess.run([BINARY, "import", "--to", conn(srv), "--in", str(src)], capture_output=True, timeout=120)
        err = r.stderr.decode()
        assert r.returncode == 1, err
        assert "EntityAlreadyExists" in err, err
        # Before: "HTTP 409 EntityAlreadyExists: The specified entity already exists", as if the
        # file held the entity twice. Now the message says what happened and what to do.
        assert "retry of this batch" in err and "earlier attempt" in err and "--mode upsert" in err, err
        # The batch did commit, once.
        c = tsclient.Client(srv.port)
        assert len(c.query_all("imported")) == 20
        c.close()
    finally:
        srv.stop()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
