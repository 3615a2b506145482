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

    def start():
        data = os.path.join(workdir, "data%d" % len(started))
        os.mkdir(data)
        s = harness.ManagedServer(os.path.abspath(BINARY), data, harness.free_port())
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
    err = failure(tool("export", "--from", conn(a).replace(str(a.port), str(dead)), "--out", out))
    assert "cannot connect" in err
    assert not os.path.exists(out) and not os.path.exists(out + ".partial")
    err = failure(tool("import", "--to", conn(a), "--in", os.path.join(workdir, "nothing-here")))
    assert "cannot open" in err
    # A bad command line is exit 2 with usage help.
    assert tool("export", "--out", out).returncode == 2
    assert tool("import", "--to", conn(a), "--in", good, "--mode", "sideways").returncode == 2


def test_stdout_and_stdin(servers, workdir):
    a, b = servers(), servers()
    ref = reference_file("pipes")
    ok(tool("import", "--to", conn(a), "--in", "-", stdin=ref.encode()))
    res = ok(tool("export", "--from", conn(a), "--out", "-"))
    assert res.stdout.decode() == ref
