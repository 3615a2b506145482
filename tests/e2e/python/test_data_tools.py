"""`tablestone export` / `tablestone import` (issue 16) through the real binary.

Each test starts its own servers on free ports (the session target may be an external endpoint),
drives the data tools as a user would, and checks the results with azure.data.tables. The
hand-written export file below is the format's reference example (docs/export-format.md): the
tools must read it and write it back byte for byte.
"""

import base64
import datetime
import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid

import pytest
from azure.data.tables import EdmType, EntityProperty, TableServiceClient

import harness

BINARY = os.environ.get("TABLESTONE_BIN")
pytestmark = pytest.mark.skipif(
    not BINARY or not os.access(BINARY, os.X_OK), reason="needs TABLESTONE_BIN (the tablestone binary)")


def line(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# Keys with quotes, percent, plus, ampersand, non-BMP characters (surrogate pairs in UTF-16),
# values with control characters, NUL, escapes; every Edm type at its extremes.
AWKWARD_PK = "p'q\"😀 é 中"
REFERENCE_ENTITIES = [
    {"PartitionKey": "", "RowKey": "", "S": "empty keys"},
    {"PartitionKey": AWKWARD_PK, "RowKey": "a%b+c&d=e 𝄞",
     "Text": "tab\tnl\ncr\rquote\"bs\\nul\u0000ctl\u0001 😀",
     "Big@odata.type": "Edm.Int64", "Big": "9223372036854775807",
     "Small@odata.type": "Edm.Int64", "Small": "-9223372036854775808",
     "I32@odata.type": "Edm.Int32", "I32": -2147483648,
     "When@odata.type": "Edm.DateTime", "When": "9999-12-31T23:59:59.9999999Z",
     "Early@odata.type": "Edm.DateTime", "Early": "1601-01-01T00:00:00.0000001Z",
     "Whole@odata.type": "Edm.Double", "Whole": 6.0,
     "Frac@odata.type": "Edm.Double", "Frac": 0.1,
     "Nan@odata.type": "Edm.Double", "Nan": "NaN",
     "Inf@odata.type": "Edm.Double", "Inf": "Infinity",
     "NegInf@odata.type": "Edm.Double", "NegInf": "-Infinity",
     "Id@odata.type": "Edm.Guid", "Id": "0f8fad5b-d9cb-469f-a165-70867728950e",
     "Bytes@odata.type": "Edm.Binary", "Bytes": base64.b64encode(bytes(range(256))).decode(),
     "Empty@odata.type": "Edm.Binary", "Empty": "",
     "Yes@odata.type": "Edm.Boolean", "Yes": True,
     "Ünïcødé": "ok"},
]
for i in range(250):  # several batches and partitions
    REFERENCE_ENTITIES.append({"PartitionKey": "part%d" % (i % 3), "RowKey": "%05d" % i,
                               "N@odata.type": "Edm.Int32", "N": i})
REFERENCE_ENTITIES.sort(key=lambda e: (e["PartitionKey"].encode("utf-16-be"), e["RowKey"].encode("utf-16-be")))


def reference_file(table, source="devstoreaccount1"):
    lines = [line({"@format": "tablestone-export", "@version": 1, "@table": table, "@source": source})]
    lines += [line(e) for e in REFERENCE_ENTITIES]
    lines.append(line({"@end": table, "@entities": len(REFERENCE_ENTITIES)}))
    return "\n".join(lines) + "\n"


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="tablestone-datatools.")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def servers(workdir):
    started = []

    def start(extra_env=None):
        data = os.path.join(workdir, "data%d" % len(started))
        os.mkdir(data)
        s = harness.ManagedServer(os.path.abspath(BINARY), data, harness.free_port(), extra_env=extra_env)
        s.start()
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def conn(server):
    return ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;"
            "TableEndpoint=http://127.0.0.1:%d/devstoreaccount1;" % (harness.ACCOUNT_KEY, server.port))


def tool(*args, stdin=None):
    return subprocess.run([BINARY, *args], capture_output=True, timeout=120, input=stdin)


def ok(result):
    assert result.returncode == 0, result.stderr.decode()
    return result


def failure(result):
    """A failed command: exit 1 and exactly one line on stderr, which is returned."""
    err = result.stderr.decode()
    assert result.returncode == 1, (result.returncode, err)
    assert err.count("\n") == 1 and err.endswith("\n"), err
    return err


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_reference_file_round_trips_byte_for_byte(servers, workdir):
    a, b = servers(), servers()
    src = os.path.join(workdir, "ref.jsonl")
    write(src, reference_file("types"))
    ok(tool("import", "--to", conn(a), "--in", src))

    # The SDK sees every value with its exact type.
    t = TableServiceClient.from_connection_string(conn(a)).get_table_client("types")
    e = t.get_entity(AWKWARD_PK, "a%b+c&d=e 𝄞")
    assert e["Big"].value == 2**63 - 1 and e["Big"].edm_type == EdmType.INT64
    assert e["Small"].value == -2**63
    assert e["I32"] == -2147483648
    assert e["Text"] == "tab\tnl\ncr\rquote\"bs\\nul\u0000ctl\u0001 😀"
    assert e["When"].tables_service_value == "9999-12-31T23:59:59.9999999Z"
    assert e["Whole"] == 6.0 and isinstance(e["Whole"], float)
    assert e["Nan"] != e["Nan"] and e["Inf"] == float("inf") and e["NegInf"] == float("-inf")
    assert str(e["Id"]) == "0f8fad5b-d9cb-469f-a165-70867728950e"
    assert e["Bytes"] == bytes(range(256))
    assert e["Yes"] is True and e["Ünïcødé"] == "ok"
    assert len(list(t.list_entities())) == len(REFERENCE_ENTITIES)

    out_a = os.path.join(workdir, "a.jsonl")
    ok(tool("export", "--from", conn(a), "--out", out_a))
    assert read(out_a) == read(src)

    # export -> import into an empty server -> export: identical files.
    ok(tool("import", "--to", conn(b), "--in", out_a))
    out_b = os.path.join(workdir, "b.jsonl")
    ok(tool("export", "--from", conn(b), "--table", "types", "--out", out_b))
    assert read(out_b) == read(out_a)


def test_sdk_written_entities_survive_export_and_import(servers, workdir):
    a, b = servers(), servers()
    svc = TableServiceClient.from_connection_string(conn(a))
    names = ["alpha", "Beta"]
    written = {}
    for name in names:
        t = svc.create_table(name)
        for i in range(120):
            ent = {"PartitionKey": "p%d" % (i % 2), "RowKey": str(uuid.uuid4()), "i": i,
                   "l": EntityProperty(i * 2**40, EdmType.INT64), "d": float(i), "s": "x" * i,
                   "when": datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
                   + datetime.timedelta(seconds=i), "g": uuid.UUID(int=i), "b": bytes([i % 256]) * 3,
                   "ok": i % 2 == 0}
            t.create_entity(ent)
            written[(name, ent["PartitionKey"], ent["RowKey"])] = ent
    f = os.path.join(workdir, "all.jsonl.gz")
    res = ok(tool("export", "--from", conn(a), "--out", f))
    assert "exported 240 entities of 2 tables" in res.stderr.decode()
    with gzip.open(f, "rt", encoding="utf-8") as g:
        assert g.readline().startswith('{"@format":"tablestone-export","@version":1,')
    ok(tool("import", "--to", conn(b), "--in", f, "--mode", "upsert"))
    svc_b = TableServiceClient.from_connection_string(conn(b))
    assert sorted(t.name for t in svc_b.list_tables()) == sorted(names)
    seen = 0
    for name in names:
        for e in svc_b.get_table_client(name).list_entities():
            w = written[(name, e["PartitionKey"], e["RowKey"])]
            assert e["i"] == w["i"] and e["l"].value == w["l"].value and e["l"].edm_type == EdmType.INT64
            assert e["d"] == w["d"] and isinstance(e["d"], float)
            assert e["s"] == w["s"] and e["when"] == w["when"] and e["g"] == w["g"]
            assert e["b"] == w["b"] and e["ok"] == w["ok"]
            seen += 1
    assert seen == 240


def test_offline_directory_export_import_and_lock(servers, workdir):
    a = servers()
    src = os.path.join(workdir, "ref.jsonl.zst")
    plain = os.path.join(workdir, "ref.jsonl")
    write(plain, reference_file("offline"))
    # Into a fresh offline directory, compressed on the way.
    offline = os.path.join(workdir, "offline-data")
    ok(tool("import", "--toLocation", offline, "--in", plain))
    ok(tool("export", "--fromLocation", offline, "--out", src))
    with open(src, "rb") as f:
        assert f.read(4) == b"\x28\xb5\x2f\xfd"  # zstd magic
    ok(tool("import", "--to", conn(a), "--in", src))
    out = os.path.join(workdir, "back.jsonl")
    ok(tool("export", "--from", conn(a), "--out", out))
    assert read(out) == read(plain)

    # A running server's directory is locked: a clear error, not a hang or a corrupt read.
    err = failure(tool("export", "--fromLocation", a.data_dir, "--out", os.path.join(workdir, "x.jsonl")))
    assert "in use by a running server" in err
    assert not os.path.exists(os.path.join(workdir, "x.jsonl"))

    # Stopped, the same directory exports offline to the same file.
    a.stop()
    out2 = os.path.join(workdir, "stopped.jsonl")
    ok(tool("export", "--fromLocation", a.data_dir, "--out", out2))
    assert read(out2) == read(plain)


def test_existing_tables_and_modes(servers, workdir):
    a = servers()
    f = os.path.join(workdir, "ref.jsonl")
    write(f, reference_file("modes"))
    ok(tool("import", "--to", conn(a), "--in", f))
    err = failure(tool("import", "--to", conn(a), "--in", f))
    assert "table 'modes' exists on the target" in err
    err = failure(tool("import", "--to", conn(a), "--in", f, "--ifExists", "append"))
    assert "EntityAlreadyExists" in err and "incomplete" in err
    ok(tool("import", "--to", conn(a), "--in", f, "--ifExists", "append", "--mode", "replace"))
    t = TableServiceClient.from_connection_string(conn(a)).get_table_client("modes")
    t.create_entity({"PartitionKey": "extra", "RowKey": "1"})
    ok(tool("import", "--to", conn(a), "--in", f, "--ifExists", "replace"))
    assert len(list(t.list_entities())) == len(REFERENCE_ENTITIES)  # "extra" went with the old table


def test_bad_input_fails_with_one_line(servers, workdir):
    a = servers()
    good = os.path.join(workdir, "good.jsonl")
    write(good, reference_file("bad"))
    lines = read(good).splitlines(keepends=True)

    cases = {
        "truncated": ("".join(lines[:-1]), "truncated"),
        "cut mid-line": ("".join(lines)[:-30], "line %d" % len(lines)),
        "newer version": (read(good).replace('"@version":1', '"@version":2', 1), "newer"),
        "not json": (lines[0] + "{nope\n" + "".join(lines[1:]), "line 2"),
        "bad type": (lines[0] + line({"PartitionKey": "a", "RowKey": "b", "x@odata.type": "Edm.Int32",
                                      "x": "7"}) + "\n", "line 2: property 'x' (Edm.Int32)"),
        "wrong count": ("".join(lines[:-1]) + line({"@end": "bad", "@entities": 1}) + "\n", "counts 1"),
        "not an export": ("hello\n", "line 1"),
    }
    for name, (text, expect) in cases.items():
        p = os.path.join(workdir, "case.jsonl")
        write(p, text)
        err = failure(tool("import", "--toLocation", os.path.join(workdir, "d-" + name.replace(" ", "")),
                           "--in", p))
        assert expect in err, (name, err)
    with open(os.path.join(workdir, "corrupt.gz"), "wb") as f:
        f.write(gzip.compress(read(good).encode())[:-40])
    err = failure(tool("import", "--toLocation", os.path.join(workdir, "dz"), "--in",
                       os.path.join(workdir, "corrupt.gz")))
    assert "gzip" in err

    out = os.path.join(workdir, "out.jsonl")
    err = failure(tool("export", "--from", conn(a), "--table", "missing", "--out", out))
    assert "table 'missing' does not exist" in err
    wrong_key = conn(a).replace(harness.ACCOUNT_KEY, base64.b64encode(b"k" * 64).decode())
    err = failure(tool("export", "--from", wrong_key, "--out", out))
    assert "403" in err and "AuthenticationFailed" in err
    dead = harness.free_port()
    err = failure(tool("export", "--from", conn(a).replace(str(a.port), str(dead)), "--out", out, "--retries", "1"))
    assert "cannot connect" in err
    assert not os.path.exists(out) and not os.path.exists(out + ".partial")
    err = failure(tool("import", "--to", conn(a), "--in", os.path.join(workdir, "nothing-here")))
    assert "cannot open" in err
    # --dryRun reads and checks the whole file and writes nothing: a file that fails at its last
    # line leaves no empty table behind, and a good one is only counted.
    bad = os.path.join(workdir, "bad-at-the-end.jsonl")
    write(bad, "".join(lines[:-1]) + line({"@end": "bad", "@entities": 1}) + "\n")
    svc = TableServiceClient.from_connection_string(conn(a))
    assert "counts 1" in failure(tool("import", "--to", conn(a), "--in", bad, "--dryRun"))
    assert [t.name for t in svc.list_tables()] == []
    res = ok(tool("import", "--to", conn(a), "--in", good, "--dryRun"))
    assert "checked %d entities of 1 table in %s for http://127.0.0.1:%d/devstoreaccount1; nothing was written" % (
        len(REFERENCE_ENTITIES), good, a.port) in res.stderr.decode(), res.stderr.decode()
    assert [t.name for t in svc.list_tables()] == []
    # A bad command line is exit 2 with usage help.
    r = tool("export", "--out", out)
    assert r.returncode == 2 and "say where to read: --from CONNECTION_STRING or --fromLocation DIR" in r.stderr.decode()
    r = tool("export", "x", "--frm", conn(a))
    assert r.returncode == 2, r.stderr.decode()
    assert "unexpected argument 'x'" in r.stderr.decode()
    r = tool("export", "--frm", conn(a), "--out", out)
    assert r.returncode == 2 and "unknown option '--frm' (did you mean --from?)" in r.stderr.decode(), r.stderr.decode()
    assert harness.ACCOUNT_KEY not in r.stderr.decode()
    assert "Run 'tablestone export --help'" in r.stderr.decode()
    assert tool("export", "--out", out).returncode == 2
    assert tool("import", "--to", conn(a), "--in", good, "--mode", "sideways").returncode == 2


def test_stdout_and_stdin(servers, workdir):
    a, b = servers(), servers()
    ref = reference_file("pipes")
    ok(tool("import", "--to", conn(a), "--in", "-", stdin=ref.encode()))
    res = ok(tool("export", "--from", conn(a), "--out", "-"))
    assert res.stdout.decode() == ref


def big_file(path, tables=(("big", 100000), ("small", 7))):
    """An export file of `tables`, entities spread over 100 partitions, sorted as a source lists them."""
    with open(path, "w", encoding="utf-8") as f:
        for table, n in tables:
            f.write(line({"@format": "tablestone-export", "@version": 1, "@table": table,
                          "@source": "devstoreaccount1"}) + "\n")
            rows = sorted(("p%03d" % (i % 100), "r%07d" % i, i) for i in range(n))
            for pk, rk, i in rows:
                f.write(line({"PartitionKey": pk, "RowKey": rk, "v@odata.type": "Edm.Int64", "v": str(i),
                              "s": "x" * (i % 64)}) + "\n")
            f.write(line({"@end": table, "@entities": n}) + "\n")


def start_on(workdir, data, started):
    s = harness.ManagedServer(os.path.abspath(BINARY), data, harness.free_port())
    s.start()
    started.append(s)
    return s


def test_copy_killed_and_resumed_ends_with_exactly_the_source(servers, workdir):
    import random
    ref = os.path.join(workdir, "big.jsonl")
    big_file(ref)
    src_dir = os.path.join(workdir, "src")
    ok(tool("import", "--toLocation", src_dir, "--in", ref))  # offline: quick
    started = []
    try:
        a = start_on(workdir, src_dir, started)
        b = servers()
        cp = os.path.join(workdir, "copy.checkpoint")
        args = ["copy", "--from", conn(a), "--to", conn(b), "--checkpoint", cp, "--progress", "lines",
                "--progressIntervalMs", "200", "--checkpointIntervalMs", "50"]

        def copied_so_far():
            try:
                with open(cp) as f:
                    return json.load(f)["entities"]
            except (OSError, ValueError):
                return -1

        # Kill -9 at a random point after some progress (twice), then resume until it completes.
        kills = 0
        for attempt in range(10):
            before = copied_so_far()
            p = subprocess.Popen([BINARY, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if kills < 2:
                import time
                deadline = time.monotonic() + 60
                while p.poll() is None and copied_so_far() <= max(before, 0) and time.monotonic() < deadline:
                    time.sleep(0.005)
                time.sleep(random.uniform(0, 0.1))
                if p.poll() is None:
                    p.kill()
                    p.wait()
                    kills += 1
                    assert os.path.exists(cp)
                    continue
            p.wait(timeout=120)
            err = p.stderr.read().decode()
            assert p.returncode == 0, err
            assert "copied" in err
            break
        assert kills >= 1, "the copy finished before it could be killed; the test proves nothing"
        assert not os.path.exists(cp)  # removed once complete
        out_a, out_b = os.path.join(workdir, "a.jsonl"), os.path.join(workdir, "b.jsonl")
        ok(tool("export", "--from", conn(a), "--out", out_a))
        ok(tool("export", "--from", conn(b), "--out", out_b))
        assert read(out_a) == read(out_b) == read(ref)
    finally:
        for s in started:
            s.stop()


def test_copy_interrupt_reference_and_offline_ends(servers, workdir):
    a, b = servers(), servers()
    ref = os.path.join(workdir, "ref.jsonl")
    write(ref, reference_file("types"))
    ok(tool("import", "--to", conn(a), "--in", ref))
    # endpoint -> endpoint, then endpoint -> data directory -> endpoint: the same file each time.
    res = ok(tool("copy", "--from", conn(a), "--to", conn(b), "--progress", "lines", "--count", "yes"))
    err = res.stderr.decode()
    assert "copied %d entities of 1 table " % len(REFERENCE_ENTITIES) in err
    # --count: the source is counted first, and the progress shows a percentage and an ETA.
    assert "copy: counting the source's entities" in err, err
    assert re.search(r"%d entities, [0-9]+ entities/s, .* elapsed, 100%%, ETA " % len(REFERENCE_ENTITIES), err), err
    out = os.path.join(workdir, "out.jsonl")
    ok(tool("export", "--from", conn(b), "--out", out))
    assert read(out) == read(ref)
    offline = os.path.join(workdir, "offline")
    ok(tool("copy", "--from", conn(b), "--toLocation", offline, "--table", "types"))
    c = servers()
    ok(tool("copy", "--fromLocation", offline, "--to", conn(c)))
    ok(tool("export", "--from", conn(c), "--out", out))
    assert read(out) == read(ref)

    # SIGINT: finishes the batches in flight, saves the checkpoint, exits 130; the rerun completes.
    big = os.path.join(workdir, "big.jsonl")
    big_file(big, (("big", 60000),))
    ok(tool("import", "--to", conn(a), "--in", big))
    cp = os.path.join(workdir, "cp")
    p = subprocess.Popen([BINARY, "copy", "--from", conn(a), "--to", conn(c), "--table", "big", "--checkpoint", cp,
                          "--progress", "none"], stderr=subprocess.PIPE)
    import time
    time.sleep(0.7)
    p.send_signal(2)
    p.wait(timeout=60)
    err = p.stderr.read().decode()
    if p.returncode == 130:
        assert "interrupted; resume with the same command" in err and os.path.exists(cp)
        with open(cp) as f:
            saved = json.load(f)
        assert saved["current"]["table"] == "big" and saved["entities"] > 0
        res = ok(tool("copy", "--from", conn(a), "--to", conn(c), "--table", "big", "--checkpoint", cp,
                      "--progress", "lines", "--progressIntervalMs", "100"))
        # The progress counts the earlier run too; the summary gives both figures and they agree.
        done = re.search(r"copied ([0-9]+) entities .*; resumed after ([0-9]+) entities, 60000 in all",
                         res.stderr.decode())
        assert done and int(done.group(1)) + int(done.group(2)) == 60000, res.stderr.decode()
        assert int(done.group(2)) >= saved["entities"]
    else:
        assert p.returncode == 0, err  # finished before the signal: nothing to resume
    ok(tool("export", "--from", conn(c), "--table", "big", "--out", out))
    assert read(out) == read(big)


def _interrupted(args, after=0.7, sig=2):
    """Runs a tool command, sends SIGINT (or `sig`) after `after` s; returns (exit code, stderr)."""
    import time
    p = subprocess.Popen([BINARY, *args], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    time.sleep(after)
    p.send_signal(sig)
    p.wait(timeout=60)
    return p.returncode, p.stderr.read().decode()


def test_import_and_export_interrupted_say_what_is_left(servers, workdir):
    a = servers()
    big = os.path.join(workdir, "big.jsonl")
    big_file(big, (("first", 3), ("big", 100000), ("last", 5)))
    code, err = _interrupted(["import", "--to", conn(a), "--in", big])
    assert code == 130, (code, err)
    assert err.count("\n") == 1, err
    assert re.search(r"interrupted after [0-9]+ entities; 1 table is complete on the target, table 'big' is "
                     r"incomplete \([0-9]+ entities written\)", err), err
    assert "--ifExists replace" in err and "--ifExists append --mode upsert" in err, err
    # SIGTERM (a container stopped, a CI job cancelled) is answered the same way.
    code, err = _interrupted(["import", "--to", conn(a), "--in", big, "--ifExists", "replace"], sig=15)
    assert code == 130 and "interrupted after" in err and "--ifExists replace" in err, (code, err)
    # The advice works: the rerun ends with exactly the file's contents.
    ok(tool("import", "--to", conn(a), "--in", big, "--ifExists", "replace"))
    out = os.path.join(workdir, "out.jsonl")
    ok(tool("export", "--from", conn(a), "--out", out))
    assert sorted(read(out).splitlines()) == sorted(read(big).splitlines())

    # Export: the partial file goes, and the message says so.
    code, err = _interrupted(["export", "--from", conn(a), "--out", out + ".2"], after=0.3)
    if code == 0:
        pytest.skip("the export finished before the signal")
    assert code == 130, (code, err)
    assert "interrupted: nothing was written (the partial file was removed)" in err, err
    assert not os.path.exists(out + ".2") and not os.path.exists(out + ".2.partial")


def test_copy_failures_are_one_line(servers, workdir):
    a = servers()
    ref = os.path.join(workdir, "ref.jsonl")
    write(ref, reference_file("tone"))
    ok(tool("import", "--to", conn(a), "--in", ref))
    # Another server: the same account of the same server is refused before any request.
    wrong = conn(servers()).replace(harness.ACCOUNT_KEY, base64.b64encode(b"w" * 64).decode())
    err = failure(tool("copy", "--from", conn(a), "--to", wrong))
    assert "AuthenticationFailed" in err
    err = failure(tool("copy", "--from", conn(a), "--to", conn(a).replace(str(a.port), str(harness.free_port())),
                       "--table", "tone", "--retries", "1"))
    assert "cannot connect" in err
    err = failure(tool("copy", "--from", conn(a), "--toLocation", os.path.join(workdir, "x"), "--table", "nope"))
    assert "table 'nope' does not exist" in err
    err = failure(tool("copy", "--from", conn(a), "--toLocation", a.data_dir))
    assert "in use by a running server" in err
    assert tool("copy", "--from", conn(a)).returncode == 2


class FlakyProxy:
    """Forwards to a server, but answers every 3rd request 503 ServerBusy, every 5th 500
    OperationTimedOut, and drops every 7th connection without an answer; never the same request
    (method, path and body) more than twice, so that a client with a few retries always gets
    through: with several requests in flight sharing the counter, one request's retries could
    otherwise keep drawing faulty numbers (a CI run under load saw 9 in a row)."""

    def __init__(self, port):
        import http.client
        import http.server
        import itertools
        import threading
        counter = itertools.count(1)
        self.faults = 0
        faults_by_request = {}
        lock = threading.Lock()

        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def handle_one(self):
                n = next(counter)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                key = (self.command, self.path, body)
                with lock:
                    if faults_by_request.get(key, 0) >= 2:
                        n = 1  # forwarded
                    elif n % 3 == 0 or n % 5 == 0 or n % 7 == 0:
                        faults_by_request[key] = faults_by_request.get(key, 0) + 1
                if n % 7 == 0:
                    proxy.faults += 1
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if n % 3 == 0 or n % 5 == 0:
                    proxy.faults += 1
                    code, err = (503, "ServerBusy") if n % 3 == 0 else (500, "OperationTimedOut")
                    data = json.dumps({"odata.error": {"code": err, "message": {"value": "injected"}}}).encode()
                    self.send_response(code)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                c.request(self.command, self.path, body=body, headers=dict(self.headers))
                r = c.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                c.close()

            do_GET = do_POST = do_PUT = do_DELETE = do_MERGE = do_PATCH = handle_one

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_copy_retries_busy_timeouts_and_dropped_connections(servers, workdir):
    a, b = servers(), servers()
    big = os.path.join(workdir, "big.jsonl")
    big_file(big, (("flaky", 3000), ("other", 50)))
    ok(tool("import", "--to", conn(a), "--in", big))
    pa, pb = FlakyProxy(a.port), FlakyProxy(b.port)
    try:
        src = conn(a).replace(str(a.port), str(pa.port))
        dst = conn(b).replace(str(b.port), str(pb.port))
        ok(tool("copy", "--from", src, "--to", dst, "--progress", "none", "--retries", "8", "--retryDelayMs", "5"))
        assert pa.faults > 0 and pb.faults > 0
        out = os.path.join(workdir, "out.jsonl")
        ok(tool("export", "--from", dst, "--out", out, "--retries", "8", "--retryDelayMs", "5"))
        assert read(out) == read(big)
    finally:
        pa.close()
        pb.close()


def admin_request(server, op, query="", key=None, account="devstoreaccount1", method="POST"):
    """A Shared Key signed admin request; returns (status, parsed JSON body or None)."""
    import http.client
    from email.utils import formatdate
    path = "/_tablestone/" + op + ("?" + query if query else "")
    headers = {"x-ms-date": formatdate(usegmt=True), "Content-Length": "0"}
    headers["Authorization"] = harness.admin_authorization(method, path, headers, b"", account,
                                                           key or harness.ACCOUNT_KEY)
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    c.request(method, path, headers=headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    try:
        return r.status, json.loads(data)
    except ValueError:
        return r.status, None


def admin_server(workdir, started, *extra, data=None):
    if data is None:
        data = os.path.join(workdir, "admin-data-%d" % len(started))
        os.mkdir(data)
    s = harness.ManagedServer(os.path.abspath(BINARY), data, harness.free_port())
    s.start_args = extra
    # ManagedServer.start has fixed arguments: wrap the binary to add ours.
    wrapper = os.path.join(workdir, "wrap-%d.sh" % len(started))
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec %s \"$@\" %s\n" % (os.path.abspath(BINARY), " ".join("'%s'" % a for a in extra)))
    os.chmod(wrapper, 0o755)
    s.binary = wrapper
    s.start()
    started.append(s)
    return s


def test_snapshot_offline_and_admin_route_then_restore(servers, workdir):
    started = []
    try:
        ref = os.path.join(workdir, "ref.jsonl")
        write(ref, reference_file("snap"))
        a = admin_server(workdir, started, "--adminApi", "--snapshotDir", workdir)
        ok(tool("import", "--to", conn(a), "--in", ref))

        # Admin route: refused without a valid signature, then a snapshot while running.
        snap = os.path.join(workdir, "snap1")
        assert admin_request(a, "snapshot", "to=" + snap, key=base64.b64encode(b"x" * 64).decode())[0] == 403
        assert admin_request(a, "snapshot", "to=" + snap, method="GET")[0] == 405
        assert not os.path.exists(snap)
        res = ok(tool("snapshot", "--from", conn(a), "--to", snap, "--json"))
        assert json.loads(res.stdout)["snapshot"] == snap
        assert "snapshot of http://127.0.0.1:%d/devstoreaccount1 written to %s" % (a.port, snap) in res.stderr.decode()
        err = failure(tool("snapshot", "--from", conn(a), "--to", snap))
        assert "exists already" in err
        # Writes after the snapshot are not in it.
        TableServiceClient.from_connection_string(conn(a)).get_table_client("snap").create_entity(
            {"PartitionKey": "after", "RowKey": "1"})

        # Offline: refused while the server runs, works once it stopped.
        snap2 = os.path.join(workdir, "snap2")
        assert "in use by a running server" in failure(tool("snapshot", "--location", a.data_dir, "--to", snap2))
        a.stop()
        res = ok(tool("snapshot", "--location", a.data_dir, "--to", snap2))
        assert "snapshot of" in res.stderr.decode()

        # Restore = start a server on the snapshot.
        out = os.path.join(workdir, "out.jsonl")
        ok(tool("export", "--fromLocation", snap, "--out", out))
        assert read(out) == read(ref)
        ok(tool("export", "--fromLocation", snap2, "--out", out))
        assert read(out) != read(ref) and '"PartitionKey":"after"' in read(out)
        b = start_on(workdir, snap, started)
        ok(tool("export", "--from", conn(b), "--out", out))
        assert read(out) == read(ref)

        # Without --adminApi the routes do not exist.
        err = failure(tool("snapshot", "--from", conn(b), "--to", os.path.join(workdir, "snap3")))
        assert "--adminApi" in err
    finally:
        for s in started:
            s.stop()


def test_reset_and_seed(workdir):
    started = []
    try:
        seed_dir = os.path.join(workdir, "seed")
        os.mkdir(seed_dir)
        write(os.path.join(seed_dir, "1-ref.jsonl"), reference_file("seeded"))
        big_file(os.path.join(seed_dir, "2-big.jsonl"), (("seedbig", 5000),))
        a = admin_server(workdir, started, "--adminApi", "--seed", seed_dir)
        svc = TableServiceClient.from_connection_string(conn(a))
        assert sorted(t.name for t in svc.list_tables()) == ["seedbig", "seeded"]
        assert len(list(svc.get_table_client("seedbig").list_entities())) == 5000
        svc.get_table_client("seeded").create_entity({"PartitionKey": "extra", "RowKey": "1"})
        svc.create_table("mine")

        # A restart seeds again: the seeded tables are back to the files' contents, others stay.
        a.stop()
        a.start()
        out = os.path.join(workdir, "out.jsonl")
        ok(tool("export", "--from", conn(a), "--table", "seeded", "--out", out))
        assert read(out) == reference_file("seeded")
        assert "mine" in [t.name for t in svc.list_tables()]

        # Reset: every table of the account, in one request.
        assert admin_request(a, "reset", "account=nosuch")[0] == 404
        assert admin_request(a, "reset", key=base64.b64encode(b"y" * 64).decode())[0] == 403
        res = ok(tool("reset", "--from", conn(a), "--json"))
        body = json.loads(res.stdout)
        assert body["tablesDeleted"] == 3 and body["accounts"] == ["devstoreaccount1"]
        assert "reset deleted 3 tables of devstoreaccount1 on http://" in res.stderr.decode()
        # Without --json, stdout stays empty like every other command's; the summary is on stderr.
        res = ok(tool("reset", "--from", conn(a)))
        assert res.stdout == b"" and "reset deleted 0 tables of devstoreaccount1" in res.stderr.decode()
        assert list(svc.list_tables()) == []
        svc.create_table("again")
        status, body = admin_request(a, "reset")
        assert status == 200 and body["tablesDeleted"] == 1

        # A bad seed file stops the startup with the reason, before the port opens.
        bad = os.path.join(workdir, "bad.jsonl")
        write(bad, reference_file("bad")[:-30])
        data = os.path.join(workdir, "bad-data")
        os.mkdir(data)
        p = subprocess.run([BINARY, "--tablePort", str(harness.free_port()), "-l", data, "--seed", bad],
                           capture_output=True, timeout=60)
        assert p.returncode == 1
        assert "--seed" in (p.stdout + p.stderr).decode()
    finally:
        for s in started:
            s.stop()


def azurite_binary():
    """Azurite's table server (a test-only tool): $TABLESTONE_AZURITE_TABLE, the copy
    scripts/install-deps.sh installs in tests/e2e/azurite, or bench/install-bench-deps.sh's.
    Its tests are skipped without it, except under CI=true, where they fail."""
    env = os.environ.get("TABLESTONE_AZURITE_TABLE")
    candidates = [env] if env else []
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "..", "azurite", "node_modules", ".bin", "azurite-table"))
    candidates.append(os.path.join(here, "..", "..", "..", "bench", ".cache", "azurite", "node_modules", ".bin",
                                   "azurite-table"))
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    return None


# Skipped without Azurite, except under CI=true, where a missing Azurite fails the test.
needs_azurite = pytest.mark.skipif(azurite_binary() is None and os.environ.get("CI") != "true",
                                   reason="Azurite not installed (scripts/install-deps.sh: tests/e2e/azurite)")


@needs_azurite
def test_copy_between_tablestone_and_azurite_both_ways(servers, workdir):
    import time
    port = harness.free_port()
    az = subprocess.Popen([azurite_binary(), "--tableHost", "127.0.0.1", "--tablePort", str(port),
                           "--inMemoryPersistence", "--silent", "--disableTelemetry"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        azc = ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;"
               "TableEndpoint=http://127.0.0.1:%d/devstoreaccount1;" % (harness.ACCOUNT_KEY, port))
        deadline = time.monotonic() + 30
        while tool("export", "--from", azc, "--out", "-", "--retries", "0").stderr.find(b"cannot connect") >= 0:
            assert time.monotonic() < deadline, "Azurite did not start"
            time.sleep(0.2)
        a, b = servers(), servers()
        ref = os.path.join(workdir, "ref.jsonl")
        write(ref, reference_file("types"))
        many = os.path.join(workdir, "many.jsonl")
        big_file(many, (("many", 5000),))
        ok(tool("import", "--to", conn(a), "--in", ref))
        ok(tool("import", "--to", conn(a), "--in", many))
        # tablestone -> Azurite -> tablestone: every value and key survives both ways.
        ok(tool("copy", "--from", conn(a), "--to", azc, "--progress", "none"))
        ok(tool("copy", "--from", azc, "--to", conn(b), "--progress", "none"))
        for table, path in (("types", ref), ("many", many)):
            out_az, out_b = os.path.join(workdir, "az.jsonl"), os.path.join(workdir, "b.jsonl")
            ok(tool("export", "--from", azc, "--table", table, "--out", out_az))
            ok(tool("export", "--from", conn(b), "--table", table, "--out", out_b))
            assert read(out_az) == read(path), table
            assert read(out_b) == read(path), table
    finally:
        os.killpg(az.pid, 15)
        az.wait(timeout=30)
