"""The data tools against hostile or mistaken input (issue 35 items 3 and 4, issue 30 item 10): a copy
onto itself, DevelopmentStorageProxyUri, the endpoint named in each summary, keys kept off the command
line, table names the API refuses, and escape sequences that must not reach the terminal."""

import os
import subprocess
import time

import pytest
from azure.data.tables import TableServiceClient

import harness
from test_data_tools import BINARY, REFERENCE_ENTITIES, conn, failure, line, ok, reference_file, servers, tool, workdir, write  # noqa: F401

pytestmark = pytest.mark.skipif(
    not BINARY or not os.access(BINARY, os.X_OK), reason="needs TABLESTONE_BIN (the tablestone binary)")


def section(table, entities):
    lines = [line({"@format": "tablestone-export", "@version": 1, "@table": table, "@source": "devstoreaccount1"})]
    lines += [line(e) for e in entities]
    lines.append(line({"@end": table, "@entities": len(entities)}))
    return "\n".join(lines) + "\n"


def test_copy_onto_itself_is_refused_however_spelled(servers, workdir):
    a = servers()
    ref = os.path.join(workdir, "ref.jsonl")
    write(ref, reference_file("keep"))
    ok(tool("import", "--to", conn(a), "--in", ref))
    spellings = [
        conn(a),
        conn(a).replace("127.0.0.1", "localhost"),
        "http://127.0.0.1:%d/devstoreaccount1?sv=x&sig=y" % a.port,  # a SAS URL of the same account
        "AccountName=DevStoreAccount1;AccountKey=%s;TableEndpoint=http://[::ffff:127.0.0.1]:%d/devstoreaccount1"
        % (harness.ACCOUNT_KEY, a.port),
    ]
    for other in spellings:
        r = tool("copy", "--from", conn(a), "--to", other, "--table", "keep", "--ifExists", "replace",
                 "--progress", "none")
        err = r.stderr.decode()
        assert r.returncode == 2, (other, r.returncode, err)
        assert "same account of the same server" in err and "http://127.0.0.1:%d/devstoreaccount1" % a.port in err
    # Nothing was touched.
    client = TableServiceClient.from_connection_string(conn(a)).get_table_client("keep")
    assert sum(1 for _ in client.list_entities()) == len(REFERENCE_ENTITIES)
    # Another account on the same server, or another server, is a copy.
    b = servers()
    ok(tool("copy", "--from", conn(a), "--to", conn(b), "--table", "keep", "--progress", "none"))
    d1, d2 = os.path.join(workdir, "d1"), os.path.join(workdir, "d2")
    ok(tool("import", "--toLocation", d1, "--in", ref))
    r = tool("copy", "--fromLocation", d1, "--toLocation", d1 + "/../d1", "--progress", "none")
    assert r.returncode == 2 and "same account" in r.stderr.decode(), r.stderr.decode()
    ok(tool("copy", "--fromLocation", d1, "--toLocation", d2, "--progress", "none"))


def test_summaries_name_the_endpoint(servers, workdir):
    a, b = servers(), servers()
    ref = os.path.join(workdir, "ref.jsonl")
    write(ref, reference_file("named"))
    url_a = "http://127.0.0.1:%d/devstoreaccount1" % a.port
    url_b = "http://127.0.0.1:%d/devstoreaccount1" % b.port
    err = ok(tool("import", "--to", conn(a), "--in", ref)).stderr.decode()
    n = len(REFERENCE_ENTITIES)
    assert "imported %d entities of 1 table into %s in " % (n, url_a) in err, err
    out = os.path.join(workdir, "out.jsonl")
    err = ok(tool("export", "--from", conn(a), "--out", out)).stderr.decode()
    assert "exported %d entities of 1 table from %s to %s in " % (n, url_a, out) in err, err
    err = ok(tool("copy", "--from", conn(a), "--to", conn(b), "--progress", "none")).stderr.decode()
    assert "copied %d entities of 1 table from %s to %s in " % (n, url_a, url_b) in err, err


def test_an_unknown_account_or_wrong_key_points_at_the_connection_string(servers, workdir):
    # The server cannot be asked which accounts it has before signing, so the 403 it answers says
    # which part of the connection string to check; the service's own message names only the
    # Authorization header.
    a = servers()
    out = os.path.join(workdir, "out.jsonl")
    for name, key in (("nosuchaccount", harness.ACCOUNT_KEY), ("devstoreaccount1", "QUFBQQ==")):
        source = "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=http://127.0.0.1:%d/%s" % (
            name, key, a.port, name)
        err = failure(tool("export", "--from", source, "--out", out))
        assert "403 AuthenticationFailed" in err and "AccountName" in err and "AccountKey" in err, err


def test_development_storage_proxy_uri_is_honoured(workdir):
    # The SDKs keep port 10002 and take the proxy's scheme and host: 127.0.0.2 here, where nothing
    # listens. Before, the tools used 127.0.0.1:10002 whatever the proxy said.
    r = tool("export", "--from", "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://127.0.0.2",
             "--out", os.path.join(workdir, "x.jsonl"), "--retries", "0")
    err = failure(r)
    assert "127.0.0.2:10002" in err, err


def test_connection_strings_from_environment_and_file(servers, workdir):
    a = servers()
    ref = os.path.join(workdir, "ref.jsonl")
    write(ref, reference_file("secret"))
    conn_file = os.path.join(workdir, "conn.txt")
    write(conn_file, conn(a) + "\n")
    os.chmod(conn_file, 0o600)
    ok(tool("import", "--to", "file:" + conn_file, "--in", ref))
    env = dict(os.environ, TABLESTONE_TEST_SOURCE=conn(a))
    out = os.path.join(workdir, "out.jsonl")
    p = subprocess.Popen([BINARY, "export", "--from", "env:TABLESTONE_TEST_SOURCE", "--out", out],
                         env=env, stderr=subprocess.PIPE)
    try:
        with open("/proc/%d/cmdline" % p.pid, "rb") as f:
            assert harness.ACCOUNT_KEY.encode() not in f.read()
    except FileNotFoundError:
        pass  # already finished
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert open(out, encoding="utf-8").read() == reference_file("secret")
    err = failure(tool("export", "--from", "env:TABLESTONE_NOT_SET_ANYWHERE", "--out", out))
    assert "TABLESTONE_NOT_SET_ANYWHERE" in err
    # A malformed connection string never echoes the key, whatever is wrong with it.
    for bad in ("AccountName=a;AccountKey " + harness.ACCOUNT_KEY, harness.ACCOUNT_KEY,
                "TableEndpoint=http://127.0.0.1:1/a;" + harness.ACCOUNT_KEY[:40]):
        err = failure(tool("export", "--from", bad, "--out", out))
        for i in range(0, len(harness.ACCOUNT_KEY) - 8):
            assert harness.ACCOUNT_KEY[i:i + 8] not in err, err


def test_offline_import_refuses_names_the_api_refuses(workdir):
    target = os.path.join(workdir, "data")
    for name in ("../../etc/passwd", "a" * 5000, "bad\u0000name", "Tab\r\nle", "ab", "1abc", "tables"):
        path = os.path.join(workdir, "bad.jsonl")
        write(path, section(name, [{"PartitionKey": "p", "RowKey": "r"}]))
        err = failure(tool("import", "--toLocation", target, "--in", path))
        assert "not one the Table API accepts" in err, err
        assert len(err) < 400, err
    out = os.path.join(workdir, "out.jsonl")
    err = failure(tool("export", "--fromLocation", target, "--out", out))
    assert "no tables" in err, err


def test_offline_import_refuses_entities_the_api_refuses(workdir):
    # import --toLocation writes through no API, so it applies the API's entity rules itself;
    # before, it stored a 40,000-character string and a '/' in a key.
    target = os.path.join(workdir, "data")
    bad_entities = [
        ({"PartitionKey": "p", "RowKey": "r", "Text": "x" * 40000}, "PropertyValueTooLarge"),
        ({"PartitionKey": "a/b", "RowKey": "r"}, "OutOfRangeInput"),
        ({"PartitionKey": "p", "RowKey": "k" * 2000}, "PropertyValueTooLarge"),
        (dict({"PartitionKey": "p", "RowKey": "r"}, **{"P%d" % i: i for i in range(260)}), "TooManyProperties"),
    ]
    for entity, code in bad_entities:
        path = os.path.join(workdir, "bad.jsonl")
        write(path, section("checked", [{"PartitionKey": "p", "RowKey": "fine"}, entity]))
        err = failure(tool("import", "--toLocation", target, "--in", path, "--ifExists", "replace"))
        assert "the Table API refuses this entity: " + code in err, err
        assert len(err) < 600, err
    # A valid file still goes in.
    path = os.path.join(workdir, "good.jsonl")
    write(path, section("checked", [{"PartitionKey": "p", "RowKey": "fine", "Text": "x" * 32000}]))
    ok(tool("import", "--toLocation", target, "--in", path, "--ifExists", "replace"))


def test_escape_sequences_never_reach_the_terminal(servers, workdir):
    a = servers()
    hostile = "Evil\x1b[2J\x1b]0;owned\x07\u009b31m\nforged: imported 1 entities"
    path = os.path.join(workdir, "esc.jsonl")
    write(path, section(hostile, [{"PartitionKey": "p", "RowKey": "r"}]))
    for target in (["--to", conn(a)], ["--toLocation", os.path.join(workdir, "data")]):
        err = failure(tool("import", *target, "--in", path))
        assert "\x1b" not in err and "\x07" not in err and "\u009b" not in err, repr(err)
        assert "\\x1B[2J" in err, repr(err)
    # No table was made on the server from the name's pieces (a path or a query).
    assert [t.name for t in TableServiceClient.from_connection_string(conn(a)).list_tables()] == []


def test_a_huge_line_in_a_small_gzip_is_refused_quickly(workdir):
    import gzip
    path = os.path.join(workdir, "bomb.jsonl.gz")
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write((line({"@format": "tablestone-export", "@version": 1, "@table": "Tee", "@source": "a"}) + "\n")
                .encode())
        chunk = b"x" * (1 << 20)
        for _ in range(64):  # 64 MiB without a newline, ~65 KB compressed
            f.write(chunk)
    assert os.path.getsize(path) < 1 << 20
    started = time.monotonic()
    err = failure(tool("import", "--toLocation", os.path.join(workdir, "data"), "--in", path))
    assert "longer than" in err, err
    assert time.monotonic() - started < 10


def test_nothing_listening_or_unknown_host_fails_fast(workdir):
    # Before, six attempts with back-off: about 8 s of silence.
    out = os.path.join(workdir, "out.jsonl")
    dead = harness.free_port()
    # (An unknown host fails fast too, but whether a resolver answers NXDOMAIN or "try again"
    # depends on the machine's DNS, so only the refused port is pinned here.)
    for endpoint, why in (("http://127.0.0.1:%d/devstoreaccount1" % dead, "is the server running"),):
        started = time.monotonic()
        err = failure(tool("export", "--from", "AccountKey=%s;TableEndpoint=%s" % (harness.ACCOUNT_KEY, endpoint),
                           "--out", out))
        assert why in err, err
        assert time.monotonic() - started < 3, err


def test_seed_directory_loads_export_files_and_skips_the_rest(workdir):
    import gzip
    seed = os.path.join(workdir, "seed")
    os.mkdir(seed)
    write(os.path.join(seed, "README.md"), "# fixtures\nnot an export file\n")
    write(os.path.join(seed, "1.jsonl"), section("Plain", [{"PartitionKey": "p", "RowKey": "1"}]))
    with gzip.open(os.path.join(seed, "2.jsonl.gz"), "wt", encoding="utf-8") as f:
        f.write(section("Packed", [{"PartitionKey": "p", "RowKey": "2"}]))
    empty = os.path.join(workdir, "empty-seed")
    os.mkdir(empty)
    for directory, tables in ((seed, ["Packed", "Plain"]), (empty, [])):
        data = os.path.join(workdir, "data-" + os.path.basename(directory))
        os.mkdir(data)
        s = harness.ManagedServer(os.path.abspath(BINARY), data, harness.free_port(),
                                  extra_args=["--seed", directory])
        s.start()  # before: a README aborted the start, and an empty directory was refused
        try:
            assert sorted(t.name for t in TableServiceClient.from_connection_string(conn(s)).list_tables()) == tables
        finally:
            assert s.stop() == 0
        if tables:
            with open(s.log_path, encoding="utf-8", errors="replace") as f:
                assert "README.md" in f.read()


def test_reset_asks_on_a_terminal(workdir):
    import pty
    from test_data_tools import admin_server
    started = []
    try:
        a = admin_server(workdir, started, "--adminApi")
        svc = TableServiceClient.from_connection_string(conn(a))
        svc.create_table("Keep")

        def reset_on_tty(answer, *extra):
            master, slave = pty.openpty()
            p = subprocess.Popen([BINARY, "reset", "--from", conn(a), *extra], stdin=slave,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            os.close(slave)
            os.write(master, answer)
            out, err = p.communicate(timeout=60)
            os.close(master)
            return p.returncode, err.decode()

        code, err = reset_on_tty(b"n\n")
        assert code == 1 and "Type 'yes'" in err and "http://127.0.0.1:%d" % a.port in err, err
        assert "nothing was deleted" in err
        assert [t.name for t in svc.list_tables()] == ["Keep"]
        code, err = reset_on_tty(b"", "--yes")
        assert code == 0 and "Type 'yes'" not in err, err
        assert list(svc.list_tables()) == []
        svc.create_table("Again")
        code, err = reset_on_tty(b"yes\n")
        assert code == 0, err
        assert list(svc.list_tables()) == []
    finally:
        for s in started:
            s.stop()


def test_export_and_import_show_progress_on_a_terminal(servers, workdir):
    import pty
    a = servers()
    ref = os.path.join(workdir, "ref.jsonl")
    write(ref, reference_file("shown"))

    def on_tty(*args):
        master, slave = pty.openpty()
        p = subprocess.Popen([BINARY, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        assert p.wait(timeout=60) == 0
        return b"".join(chunks).decode()

    err = on_tty("import", "--to", conn(a), "--in", ref)
    assert "\r\x1b[Kimport: " in err and " entities/s" in err, repr(err)
    assert "imported %d entities" % len(REFERENCE_ENTITIES) in err, repr(err)
    err = on_tty("export", "--from", conn(a), "--out", os.path.join(workdir, "out.jsonl"))
    assert "\r\x1b[Kexport: %d entities" % len(REFERENCE_ENTITIES) in err, repr(err)
    # Not a terminal: the summary line only.
    err = ok(tool("export", "--from", conn(a), "--out", os.path.join(workdir, "out2.jsonl"))).stderr.decode()
    assert "\r" not in err and err.count("\n") == 1, repr(err)


def test_faults_and_trace_subcommands_sign_for_the_user(workdir):
    """`tablestone faults add|list|clear` and `tablestone trace on|off|status` (issue 35): signed with the
    connection string's key, one summary line on stderr; hostile input (a bad key, an oversized or
    malformed rule file, a directory, an unknown operation name, an unreachable server) fails in one
    line with exit 1 and sends nothing it should not."""
    import json
    from azure.core.exceptions import HttpResponseError
    from test_data_tools import admin_server
    started = []
    try:
        a = admin_server(workdir, started, "--adminApi", "--traceDir", os.path.join(workdir, "traces"))
        cs = conn(a)
        where = "http://127.0.0.1:%d/devstoreaccount1" % a.port
        rule = '{"action":"serverBusy","maxCount":1,"match":{"table":"faulty","operation":"CreateTable"}}'
        r = ok(tool("faults", "add", "--from", cs, "--rule", rule))
        assert "added 1 fault rule (" in r.stderr.decode() and where in r.stderr.decode(), r.stderr.decode()
        assert r.stdout == b""
        listed = ok(tool("faults", "list", "--from", cs, "--json"))
        body = json.loads(listed.stdout)
        assert len(body["rules"]) == 1 and body["rules"][0]["injected"] == 0
        assert "1 fault rule on " + where in listed.stderr.decode()
        # Without --json: one readable line per rule, then realistic mode.
        readable = ok(tool("faults", "list", "--from", cs)).stdout.decode().splitlines()
        rid = body["rules"][0]["id"]
        assert readable[0] == "%s  serverBusy  operation=CreateTable table=faulty  maxCount=1  matched 0, injected 0" % rid, readable
        assert readable[1].startswith("realistic mode off"), readable
        # The rule fires for an SDK client (its own retries see the 503 first).
        svc = TableServiceClient.from_connection_string(cs, retry_total=0)
        with pytest.raises(HttpResponseError):
            svc.create_table("faulty")
        assert json.loads(ok(tool("faults", "list", "--from", cs, "--json")).stdout)["rules"][0]["injected"] == 1
        rules = os.path.join(workdir, "rules.json")
        write(rules, json.dumps({"seed": 3, "rules": [json.loads(rule), json.loads(rule)]}))
        r = ok(tool("faults", "add", "--from", cs, "--file", rules))
        assert "added 2 fault rules" in r.stderr.decode()
        rule_id = json.loads(ok(tool("faults", "list", "--from", cs, "--json")).stdout)["rules"][0]["id"]
        assert "removed fault rule %s" % rule_id in ok(tool("faults", "clear", "--from", cs, "--id", rule_id)).stderr.decode()
        assert "cleared every fault rule" in ok(tool("faults", "clear", "--from", cs)).stderr.decode()
        assert json.loads(ok(tool("faults", "list", "--from", cs, "--json")).stdout)["rules"] == []

        # Hostile or mistaken input: one line, exit 1, nothing added.
        typo = failure(tool("faults", "add", "--from", cs, "--rule", rule.replace("CreateTable", "CreateTabel")))
        assert "CreateTabel" in typo and "InsertEntity" in typo, typo  # the list of names
        bad_key = cs.replace(harness.ACCOUNT_KEY, "b3RoZXIta2V5LW5vdC10aGUtcHVibGlzaGVkLW9uZQ==")
        assert "403" in failure(tool("faults", "add", "--from", bad_key, "--rule", rule))
        assert "403" in failure(tool("trace", "on", "--from", bad_key, "--file", "x.jsonl"))
        big = os.path.join(workdir, "big.json")
        with open(big, "w") as f:
            f.write("[" + ",".join([rule] * 20000) + "]")  # ~1.8 MB
        assert "larger than 1 MiB" in failure(tool("faults", "add", "--from", cs, "--file", big))
        write(rules, "{not json")
        assert "is not a JSON rule" in failure(tool("faults", "add", "--from", cs, "--file", rules))
        assert "not a regular file" in failure(tool("faults", "add", "--from", cs, "--file", workdir))
        assert "cannot read" in failure(tool("faults", "add", "--from", cs, "--file", big + ".missing"))
        assert json.loads(ok(tool("faults", "list", "--from", cs, "--json")).stdout)["rules"] == []
        r = tool("faults", "add", "--from", cs)
        assert r.returncode == 2 and "--rule JSON, --rule @PATH or --file PATH, or one rule in flags" in r.stderr.decode()
        r = tool("faults", "add", "--from", cs, "--rule", rule, "--status", "503")
        assert r.returncode == 2 and "excludes" in r.stderr.decode(), r.stderr.decode()
        r = tool("faults", "add", "--from", cs, "--status", "500")  # OperationTimedOut or InternalError?
        assert r.returncode == 2 and "--errorCode" in r.stderr.decode(), r.stderr.decode()
        r = tool("faults", "add", "--from", cs, "--status", "404")
        assert r.returncode == 2 and "503 ServerBusy" in r.stderr.decode(), r.stderr.decode()
        r = tool("faults", "ad", "--from", cs)
        assert r.returncode == 2 and "no command 'ad' (the commands are add, list, clear)" in r.stderr.decode()
        assert harness.ACCOUNT_KEY not in r.stderr.decode()  # a usage error never echoes the key
        r = tool("faults", "list", cs)
        assert r.returncode == 2 and "(a connection string, not shown)" in r.stderr.decode(), r.stderr.decode()
        assert harness.ACCOUNT_KEY not in r.stderr.decode()
        started_at = time.monotonic()
        down = cs.replace(str(a.port), str(harness.free_port()))
        assert "is the server running" in failure(tool("faults", "list", "--from", down))
        assert time.monotonic() - started_at < 10
        # Checked before sending, with the server's own parser: refused with no server to ask.
        for bad in (rule.replace("CreateTable", "CreateTabel"), '{"action":"serverBusy","maxCuont":1}',
                    '{"action":"latencyBefore","latencyMs":1e300}'):
            local = failure(tool("faults", "add", "--from", down, "--rule", bad))
            assert "refused before sending" in local and "is the server running" not in local, local
        assert "InsertEntity" in failure(tool("faults", "add", "--from", down, "--operation", "Insert"))

        # The flags form: a rule scoped to the connection string's account, added and firing.
        r = ok(tool("faults", "add", "--from", cs, "--operation", "CreateTable", "--table", "flagged",
                    "--status", "503", "--count", "1", "--id", "by-flags"))
        assert "added 1 fault rule (by-flags)" in r.stderr.decode(), r.stderr.decode()
        rule_json = json.loads(ok(tool("faults", "list", "--from", cs, "--json")).stdout)["rules"][0]
        assert rule_json["action"] == "serverBusy" and rule_json["maxCount"] == 1, rule_json
        assert rule_json["match"] == {"account": "devstoreaccount1", "table": "flagged", "operation": ["CreateTable"]}
        with pytest.raises(HttpResponseError) as busy:
            svc.create_table("flagged")
        assert busy.value.status_code == 503
        svc.create_table("flagged")  # maxCount 1: the next one passes
        # --rule @PATH reads the file as --file does (same checks).
        write(rules, json.dumps([{"action": "timeoutBefore", "maxCount": 1, "match": {"table": "t2"}}]))
        assert "added 1 fault rule" in ok(tool("faults", "add", "--from", cs, "--rule", "@" + rules)).stderr.decode()
        assert "larger than 1 MiB" in failure(tool("faults", "add", "--from", cs, "--rule", "@" + big))
        assert "not a regular file" in failure(tool("faults", "add", "--from", cs, "--rule", "@" + workdir))
        ok(tool("faults", "clear", "--from", cs))

        # trace on / status / off, confined to --traceDir.
        r = ok(tool("trace", "on", "--from", cs, "--file", "run1.jsonl"))
        assert "tracing requests on %s into %s" % (where, os.path.join(workdir, "traces", "run1.jsonl")) in r.stderr.decode(), r.stderr.decode()
        list(svc.list_tables())
        assert "tracing requests" in ok(tool("trace", "status", "--from", cs)).stderr.decode()
        r = ok(tool("trace", "off", "--from", cs))
        assert "not tracing on " + where in r.stderr.decode(), r.stderr.decode()
        with open(os.path.join(workdir, "traces", "run1.jsonl")) as f:
            assert any('"QueryTables"' in l or "Tables" in l for l in f)
        escape = failure(tool("trace", "on", "--from", cs, "--file", "../outside.jsonl"))
        assert "400" in escape and not os.path.exists(os.path.join(workdir, "outside.jsonl"))
    finally:
        for s in started:
            s.stop()


def test_faults_and_trace_with_an_account_key_that_is_not_the_admin(servers, workdir):
    """On a server with two accounts and no admin (docs/admin-api.md, "Who may do what"), an account's
    key adds rules for its own traffic only: the flags form scopes the rule to the signer, a JSON
    rule for every account is refused by the server (403), and the trace stays admin-only."""
    import json
    other_key = "b3RoZXItYWNjb3VudC1rZXktZm9yLXRoZS10ZXN0cw=="
    s = servers({"TABLESTONE_ADMIN_API": "true",
                 "AZURITE_ACCOUNTS": "devstoreaccount1:%s;other:%s" % (harness.ACCOUNT_KEY, other_key)})
    other = ("DefaultEndpointsProtocol=http;AccountName=other;AccountKey=%s;"
             "TableEndpoint=http://127.0.0.1:%d/other;" % (other_key, s.port))
    r = ok(tool("faults", "add", "--from", other, "--operation", "QueryTables", "--status", "503"))
    assert "added 1 fault rule" in r.stderr.decode()
    assert "403" in failure(tool("faults", "add", "--from", other, "--rule", '{"action":"serverBusy"}'))
    assert "403" in failure(tool("faults", "add", "--from", other, "--rule",
                                 '{"action":"serverBusy","match":{"account":"devstoreaccount1"}}'))
    assert "403" in failure(tool("trace", "on", "--from", other, "--file", "x.jsonl"))
    assert "403" in failure(tool("trace", "status", "--from", other))
    listed = json.loads(ok(tool("faults", "list", "--from", other, "--json")).stdout)
    assert [rl["match"]["account"] for rl in listed["rules"]] == ["other"], listed
    # The other account sees none of them and cannot remove them.
    dev = conn(s)
    assert json.loads(ok(tool("faults", "list", "--from", dev, "--json")).stdout)["rules"] == []
    assert "404" in failure(tool("faults", "clear", "--from", dev, "--id", listed["rules"][0]["id"]))
    # A key that is no account's at all.
    stranger = other.replace(other_key, "c3RyYW5nZXIta2V5LW9mLW5vLWFjY291bnQtYXQtYWxs")
    assert "403" in failure(tool("faults", "list", "--from", stranger))
