"""scripts/start.sh, the start-up failures and docker/healthcheck.sh, run against the binary under test
(issue 35 rough edges). start.sh runs TABLESTONE_BIN instead of building; the health probe runs with
only the environment the image would give it (its PID 1 is not the server here, so it reads
TABLESTONE_PORT/TABLESTONE_CERT)."""

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

import pytest

import harness
from test_data_tools_https import make_cert
from test_https import tls_server

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
START = os.path.join(ROOT, "scripts", "start.sh")
HEALTH = os.path.join(ROOT, "docker", "healthcheck.sh")


@pytest.fixture
def binary(target):
    if target.server is None:
        pytest.skip("needs the managed tablestone binary")
    return target.server.binary


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="tablestone-e2e-start.")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLESTONE_")}
    env.update(extra)
    return env


def _wait_healthy(port, proc, timeout=20, host="127.0.0.1"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            with urllib.request.urlopen("http://%s:%d/_tablestone/health" % (host, port), timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("not healthy on %d" % port)


def test_start_help_prints_without_building(binary, tmp):
    started = time.monotonic()
    missing = subprocess.run(["bash", START, "--help"], env=_env(TABLESTONE_BIN=os.path.join(tmp, "none")),
                             capture_output=True, text=True, timeout=20)
    assert missing.returncode == 0, missing.stderr
    assert "once it is built" in missing.stdout
    assert time.monotonic() - started < 10  # no install-deps, no build
    built = subprocess.run(["bash", START, "--help"], env=_env(TABLESTONE_BIN=binary),
                           capture_output=True, text=True, timeout=20)
    assert built.returncode == 0, built.stderr
    assert "--tablePort" in built.stdout


def test_start_keeps_the_config_files_settings_and_reads_tablestone_data(binary, tmp):
    port = harness.free_port()
    data = os.path.join(tmp, "from-file")
    config = os.path.join(tmp, "tablestone.json")
    # Another loopback address than the default 127.0.0.1, and paths relative to the directory
    # start.sh is run from (not the repository's).
    with open(config, "w") as f:
        f.write('{"listen": {"host": "127.0.0.2", "port": %d}, "storage": {"location": "from-file"}}' % port)
    log = os.path.join(tmp, "log")
    with open(log, "wb") as out:
        proc = subprocess.Popen(["bash", START, "--config", "tablestone.json", "-s"], stdout=out,
                                stderr=subprocess.STDOUT, env=_env(TABLESTONE_BIN=binary), cwd=tmp)
    try:
        _wait_healthy(port, proc, host="127.0.0.2")  # the file's host and port, not 127.0.0.1:10002
        assert os.path.exists(os.path.join(data, "LOCK"))  # the file's location, not ./data
    finally:
        proc.terminate()
        proc.wait(20)
    assert "listening on http://127.0.0.2:%d" % port in open(log).read()
    assert not os.path.exists(os.path.join(ROOT, "from-file"))
    # TABLESTONE_DATA (README's name) is the data directory and draws no "not a tablestone setting".
    data2 = os.path.join(tmp, "from-env")
    port2 = harness.free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen(["bash", START, "--tablePort", str(port2), "-s"], stdout=out,
                                stderr=subprocess.STDOUT, env=_env(TABLESTONE_BIN=binary, TABLESTONE_DATA=data2))
    try:
        _wait_healthy(port2, proc)
        assert os.path.exists(os.path.join(data2, "LOCK"))
    finally:
        proc.terminate()
        proc.wait(20)
    text = open(log).read()
    assert "TABLESTONE_DATA" not in text, text


def _run_failing(binary, args, env=None):
    r = subprocess.run([binary] + args, capture_output=True, text=True, timeout=30, env=env or _env())
    return r


def test_a_port_in_use_is_reported_on_stderr(binary, tmp):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        r = _run_failing(binary, ["--tablePort", str(port), "-l", os.path.join(tmp, "d")])
    assert r.returncode == 1
    assert "cannot listen on 127.0.0.1:%d" % port in r.stderr, (r.stdout, r.stderr)
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert "cannot listen" not in r.stdout
    # The JSON log format keeps its shape on stderr.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        r = _run_failing(binary, ["--tablePort", str(port), "-l", os.path.join(tmp, "d"), "--logFormat", "json"])
    assert r.returncode == 1
    assert '"level":"error"' in r.stderr and "cannot listen" in r.stderr, r.stderr


def test_a_locked_data_directory_is_reported_on_stderr(binary, tmp):
    data = os.path.join(tmp, "d")
    server = harness.ManagedServer(binary, data, harness.free_port())
    server.start()
    try:
        r = _run_failing(binary, ["--tablePort", str(harness.free_port()), "-l", data])
    finally:
        server.stop()
    assert r.returncode == 1
    assert "in use by another tablestone process" in r.stderr, (r.stdout, r.stderr)
    assert "--location" in r.stderr and "IO error" not in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert "in use" not in r.stdout


def test_a_bad_certificate_is_reported_on_stderr(binary, tmp):
    junk = os.path.join(tmp, "junk.pem")
    with open(junk, "w") as f:
        f.write("not a certificate\n")
    for cert, expected in ((junk, "cannot load --cert %s" % junk),
                           (os.path.join(tmp, "missing.pem"), "No such file or directory")):
        r = _run_failing(binary, ["--tablePort", str(harness.free_port()), "-l", os.path.join(tmp, "d"),
                                  "--cert", cert, "--key", junk])
        assert r.returncode == 1, (r.stdout, r.stderr)
        assert expected in r.stderr and "error" in r.stderr, r.stderr
        assert len(r.stderr.splitlines()) == 1, r.stderr
        assert "--cert" not in r.stdout, r.stdout


def test_an_unwritable_data_directory_is_not_called_in_use(binary, tmp):
    data = os.path.join(tmp, "d")
    os.mkdir(data, 0o755)  # owned by this user; the server runs as another one when we are root
    args = [binary, "--tablePort", str(harness.free_port()), "-l", data]
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("root without setpriv cannot run the server as another user")
        args = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"] + args
    else:
        os.chmod(data, 0o555)
    r = subprocess.run(args, capture_output=True, text=True, timeout=30, env=_env())
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "in use by another" not in r.stderr, r.stderr
    assert "Permission denied" in r.stderr and "may not write there" in r.stderr, r.stderr


def _probe(binary, port, **env):
    """docker/healthcheck.sh as the image runs it: `tablestone` on the PATH, the container's environment."""
    path = os.path.dirname(os.path.abspath(binary)) + os.pathsep + os.environ.get("PATH", "")
    return subprocess.run(["bash", HEALTH], capture_output=True, text=True, timeout=20,
                          env=_env(PATH=path, TABLESTONE_PORT=str(port), **env))


def test_healthcheck_follows_the_listener(binary, tmp):
    """docker/healthcheck.sh (`tablestone health -- PID 1's flags`) finds the listener as the server does:
    plain HTTP, HTTPS from TABLESTONE_CERT (PEM or .pfx) or from a config file only, and trusts the
    server's own certificate whatever names it carries, never an unverified connection."""
    server = harness.ManagedServer(binary, os.path.join(tmp, "plain"), harness.free_port())
    server.start()
    try:
        r = _probe(binary, server.port)
        assert r.returncode == 0 and "healthy: http://127.0.0.1:%d" % server.port in r.stdout, (r.stdout, r.stderr)
    finally:
        server.stop()
    r = _probe(binary, server.port)  # stopped
    assert r.returncode == 1 and "unhealthy" in r.stderr and "is the server running" in r.stderr, (r.stdout, r.stderr)
    cert_dir = os.path.join(tmp, "certs")
    os.mkdir(cert_dir)
    cert, key = make_cert(cert_dir, "elsewhere", san="DNS:elsewhere.example")  # not the probe's address
    with tls_server(binary) as (tls, tls_cert):
        # Started with --cert (TABLESTONE_CERT/TABLESTONE_KEY): the probe speaks TLS from the start.
        key_file = os.path.join(os.path.dirname(tls_cert), "key.pem")
        r = _probe(binary, tls.port, TABLESTONE_CERT=tls_cert, TABLESTONE_KEY=key_file)
        assert r.returncode == 0 and "healthy: https://127.0.0.1:%d" % tls.port in r.stdout, (r.stdout, r.stderr)
        # The certificate named only in the config file (the image's TABLESTONE_CONFIG).
        config = os.path.join(tmp, "tls.json")
        with open(config, "w") as f:
            json.dump({"listen": {"cert": tls_cert, "key": key_file}}, f)
        r = _probe(binary, tls.port, TABLESTONE_CONFIG=config)
        assert r.returncode == 0 and "https://" in r.stdout, (r.stdout, r.stderr)
        # Without the certificate the probe speaks HTTP and says what it got; it does not guess TLS.
        r = _probe(binary, tls.port)
        assert r.returncode == 1 and "HTTP 400 (an HTTPS listener" in r.stderr, (r.stdout, r.stderr)
        # Another certificate than the server's: refused.
        r = _probe(binary, tls.port, TABLESTONE_CERT=cert, TABLESTONE_KEY=key)
        assert r.returncode == 1 and "not the one in --serverCert" in r.stderr, (r.stdout, r.stderr)
    with tls_server(binary, use_pfx=True) as (tls, tls_cert):
        pfx = os.path.join(os.path.dirname(tls_cert), "cert.pfx")
        r = _probe(binary, tls.port, TABLESTONE_CERT=pfx, TABLESTONE_PWD="test-only")
        assert r.returncode == 0 and "https://" in r.stdout, (r.stdout, r.stderr)
    # A certificate for another name: the image's probe trusts it (it is the server's own); a client
    # given it as a CA still checks the name.
    data = os.path.join(tmp, "elsewhere")
    os.mkdir(data)
    other = harness.ManagedServer(binary, data, harness.free_port(),
                                  extra_env={"TABLESTONE_CERT": cert, "TABLESTONE_KEY": key})
    other.start()
    try:
        r = _probe(binary, other.port, TABLESTONE_CERT=cert, TABLESTONE_KEY=key)
        assert r.returncode == 0 and "https://" in r.stdout, (r.stdout, r.stderr)
        url = "https://127.0.0.1:%d" % other.port
        r = subprocess.run([binary, "health", "--url", url, "--caFile", cert], capture_output=True, text=True,
                           timeout=20, env=_env())
        assert r.returncode == 1 and "not trusted" in r.stderr, (r.stdout, r.stderr)
    finally:
        other.stop()


def test_help_and_version_spellings(binary):
    def run(*args):
        return subprocess.run([binary] + list(args), capture_output=True, text=True, timeout=20, env=_env())
    version = run("--version")
    for spelled in ("-v", "version"):
        r = run(spelled)
        assert r.returncode == 0 and r.stdout == version.stdout, (spelled, r.stdout, r.stderr)
    # The git commit when the build knew it (cmake/git_commit.cmake): a build of a git checkout does.
    shown = re.fullmatch(r"tablestone \S+( \(commit ([0-9a-f]{12})(-modified)?\))?\n", version.stdout)
    assert shown, version.stdout
    checkout = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True)
    if checkout.returncode == 0 and os.path.realpath(binary).startswith(os.path.realpath(ROOT) + os.sep):
        assert shown.group(2), "a build of a git checkout names its commit: " + version.stdout
    top = run("help")
    assert top.returncode == 0 and "--tablePort" in top.stdout and "Listening and HTTPS:" in top.stdout
    assert max(len(line) for line in top.stdout.splitlines()) <= 100
    export = run("help", "export")
    assert export.returncode == 0 and "--fromLocation" in export.stdout, export.stderr
    everything = run("--help-all")
    assert everything.returncode == 0, everything.stderr
    for part in ("--tablePort", "--fromLocation", "--toLocation", "--checkpoint", "--yes", "--serverCert",
                 "--errorCode"):
        assert part in everything.stdout, part
    # Every command's help too: at most 100 columns, without CLI11's "Excludes:" lists.
    wide = [line for line in everything.stdout.splitlines() if len(line) > 100]
    assert not wide and "Excludes:" not in everything.stdout, wide
    nested = run("help", "faults", "add")
    assert nested.returncode == 0 and "--errorCode" in nested.stdout, (nested.stdout, nested.stderr)
    wrong = run("help", "faults", "ad")
    assert wrong.returncode == 2 and "no command 'ad' (the commands are add, list, clear)" in wrong.stderr, wrong.stderr
    unknown = run("help", "exprot")
    assert unknown.returncode == 2 and "no command 'exprot'" in unknown.stderr


def test_table_host_takes_names_that_resolve(binary, tmp):
    """--tableHost takes a host name as Azurite does (resolved at startup, its first IPv4 address
    bound) and refuses one that does not resolve, in one line on stderr with exit code 2."""
    out, err, port = _start_until_healthy(binary, ["--tableHost", "localhost", "-l", os.path.join(tmp, "a")])
    assert "listening on http://127.0.0.1:%d" % port in out, out
    name = socket.gethostname()
    try:
        address = socket.getaddrinfo(name, None, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    except OSError:
        address = None
    if address is not None and address.startswith("127."):  # loopback only here
        out, err, port = _start_until_healthy(binary, ["--tableHost", name, "-l", os.path.join(tmp, "b")],
                                              host=address)
        assert "listening on http://%s:%d" % (address, port) in out, out
    r = _run_failing(binary, ["--tableHost", "no-such-host.invalid", "-l", os.path.join(tmp, "c")])
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "--tableHost 'no-such-host.invalid' is neither an IP address nor a host name" in r.stderr, r.stderr
    assert r.stdout == ""


def _start_until_healthy(binary, args, env=None, host="127.0.0.1"):
    """Runs the server with stdout and stderr apart until it answers the health probe; stops it and
    returns (stdout, stderr)."""
    port = harness.free_port()
    proc = subprocess.Popen([binary, "--tablePort", str(port)] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env or _env())
    try:
        _wait_healthy(port, proc, host=host)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    return out, err, port


def test_an_azurite_workspace_is_named_on_stderr(binary, tmp):
    data = os.path.join(tmp, "azurite")
    os.mkdir(data)
    with open(os.path.join(data, "__azurite_db_table__.json"), "w") as f:
        f.write('{"filename":"__azurite_db_table__.json","collections":[]}')
    out, err, _ = _start_until_healthy(binary, ["-l", data])
    # On stderr, one line, naming what the directory is and the command that brings the data over.
    lines = [line for line in err.splitlines() if "Azurite" in line]
    assert len(lines) == 1, (out, err)
    assert "Azurite workspace" in lines[0] and "tablestone copy" in lines[0], lines[0]
    assert "migrating-from-azurite.md" in lines[0], lines[0]
    assert "Azurite workspace" not in out, out
    # Once the directory holds a table of ours (the data was copied over), nothing is said.
    port = harness.free_port()
    server = harness.ManagedServer(binary, data, port)
    server.start()
    try:
        _table_client(port).create_table("Copied")
    finally:
        server.stop()
    out, err, _ = _start_until_healthy(binary, ["-l", data])
    assert "Azurite" not in err and "Azurite" not in out, (out, err)
    # A directory without Azurite's file says nothing either.
    out, err, _ = _start_until_healthy(binary, ["-l", os.path.join(tmp, "plain")])
    assert "Azurite" not in err and "Azurite" not in out, (out, err)


def _table_client(port):
    from azure.data.tables import TableServiceClient
    return TableServiceClient.from_connection_string(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;TableEndpoint=http://127.0.0.1:%d/devstoreaccount1;"
        % (harness.ACCOUNT_KEY, port))


def test_browser_at_the_root(binary, tmp):
    """GET / from a browser is sent to the data browser; SDK-shaped requests to / keep their answer."""
    import http.client
    server = harness.ManagedServer(binary, os.path.join(tmp, "root"), harness.free_port())
    server.start()

    def get(headers):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        try:
            conn.request("GET", "/", headers=headers)
            r = conn.getresponse()
            return r.status, r.getheader("Location"), r.read()
        finally:
            conn.close()
    try:
        browser = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
        status, location, _ = get(browser)
        assert (status, location) == (302, "/_tablestone/ui/")
        plain = get({"Accept": "application/json;odata=minimalmetadata"})
        assert plain[0] == 400 and plain[1] is None
        # Anything an SDK would send (a version header, a signature) is the Table API's as before.
        assert get(dict(browser, **{"x-ms-version": "2019-02-02"}))[0] == plain[0]
        assert get(dict(browser, Authorization="SharedKeyLite devstoreaccount1:x"))[0] != 302
    finally:
        server.stop()
    noui = harness.ManagedServer(binary, os.path.join(tmp, "noui"), harness.free_port(), extra_args=["--noUi"])
    noui.start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", noui.port, timeout=10)
        conn.request("GET", "/", headers={"Accept": "text/html"})
        assert conn.getresponse().status != 302
        conn.close()
    finally:
        noui.stop()
