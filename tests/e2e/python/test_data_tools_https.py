"""export / import / copy over HTTPS (issue 35, "HTTPS for the tools"): tablestone started with
--cert/--key and a throwaway self-signed certificate that the tools trust only through --caFile;
an untrusted or misnamed certificate fails at once with a reason, and there is no insecure mode.
Azurite with --cert too (installed by scripts/install-deps.sh in tests/e2e/azurite)."""

import os
import subprocess
import time

import pytest

import harness
from test_data_tools import (BINARY, azurite_binary, conn, failure, ok, read, reference_file, servers, tool,  # noqa: F401
                             needs_azurite, workdir, write)

pytestmark = pytest.mark.skipif(
    not BINARY or not os.access(BINARY, os.X_OK), reason="needs TABLESTONE_BIN (the tablestone binary)")


def make_cert(directory, name="cert", san="IP:127.0.0.1,DNS:localhost"):
    cert, key = os.path.join(directory, name + ".pem"), os.path.join(directory, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=tablestone-test", "-addext", "subjectAltName=" + san],
                   check=True, capture_output=True)
    return cert, key


@pytest.fixture
def tls(servers):
    """start(cert, key) -> a tablestone serving HTTPS with that certificate."""
    return lambda cert, key: servers({"TABLESTONE_CERT": cert, "TABLESTONE_KEY": key})


def https_conn(server, host="127.0.0.1"):
    return ("DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;AccountKey=%s;"
            "TableEndpoint=https://%s:%d/devstoreaccount1;" % (harness.ACCOUNT_KEY, host, server.port))


def test_export_import_copy_over_https(tls, servers, workdir):
    cert, key = make_cert(workdir)
    a = tls(cert, key)
    b = servers()
    ref = os.path.join(workdir, "ref.jsonl")
    write(ref, reference_file("secure"))
    err = ok(tool("import", "--to", https_conn(a), "--caFile", cert, "--in", ref)).stderr.decode()
    assert "into https://127.0.0.1:%d/devstoreaccount1" % a.port in err, err
    out = os.path.join(workdir, "out.jsonl")
    ok(tool("export", "--from", https_conn(a, "localhost"), "--caFile", cert, "--out", out))
    assert read(out) == read(ref)  # byte for byte, every Edm type at its extremes
    # copy both ways between HTTPS and HTTP.
    ok(tool("copy", "--from", https_conn(a), "--to", conn(b), "--caFile", cert, "--progress", "none"))
    ok(tool("export", "--from", conn(b), "--out", out))
    assert read(out) == read(ref)
    other = os.path.join(workdir, "other.jsonl")
    write(other, reference_file("back"))
    ok(tool("import", "--to", conn(b), "--in", other))
    ok(tool("copy", "--from", conn(b), "--to", https_conn(a), "--table", "back", "--caFile", cert,
            "--progress", "none", "--parallel", "4"))
    ok(tool("export", "--from", https_conn(a), "--table", "back", "--caFile", cert, "--out", out))
    assert read(out) == read(other)


def test_untrusted_or_misnamed_certificates_fail_at_once(tls, workdir):
    cert, key = make_cert(workdir)
    a = tls(cert, key)
    out = os.path.join(workdir, "out.jsonl")
    # Not trusted: no --caFile (the system's store does not hold a throwaway certificate). No retries.
    started = time.monotonic()
    err = failure(tool("export", "--from", https_conn(a), "--out", out))
    assert "not trusted" in err and "--caFile" in err, err
    assert time.monotonic() - started < 3, "an untrusted certificate is not retried"
    # Trusted, but issued for another name.
    wrong_cert, wrong_key = make_cert(workdir, "wrong", san="DNS:example.invalid")
    w = tls(wrong_cert, wrong_key)
    err = failure(tool("export", "--from", https_conn(w), "--caFile", wrong_cert, "--out", out))
    assert "not trusted" in err and "mismatch" in err, err
    # A --caFile that holds no certificate.
    junk = os.path.join(workdir, "junk.pem")
    write(junk, "not a certificate\n")
    err = failure(tool("export", "--from", https_conn(a), "--caFile", junk, "--out", out))
    assert "--caFile" in err and "junk.pem" in err, err
    # The portal's form (no DefaultEndpointsProtocol) is https, as in the SDKs: it reaches TLS.
    portal = "AccountName=devstoreaccount1;AccountKey=%s;TableEndpoint=https://127.0.0.1:%d/devstoreaccount1" % (
        harness.ACCOUNT_KEY, a.port)
    empty = os.path.join(workdir, "empty.jsonl")
    write(empty, '{"@format":"tablestone-export","@version":1,"@table":"portal","@source":"a"}\n'
                 '{"@end":"portal","@entities":0}\n')
    ok(tool("import", "--to", portal, "--caFile", cert, "--in", empty))
    # http:// to the HTTPS port is refused by the server, and the tool says so in one line.
    plain = https_conn(a).replace("https://", "http://").replace("DefaultEndpointsProtocol=https", "DefaultEndpointsProtocol=http")
    failure(tool("export", "--from", plain, "--out", out, "--retries", "0"))
    assert not os.path.exists(out)


@needs_azurite
def test_copy_between_tablestone_and_azurite_over_https(tls, workdir):
    cert, key = make_cert(workdir)
    a = tls(cert, key)
    port = harness.free_port()
    az = subprocess.Popen([azurite_binary(), "--tableHost", "127.0.0.1", "--tablePort", str(port),
                           "--inMemoryPersistence", "--silent", "--disableTelemetry", "--cert", cert, "--key", key],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        azc = ("DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;AccountKey=%s;"
               "TableEndpoint=https://127.0.0.1:%d/devstoreaccount1;" % (harness.ACCOUNT_KEY, port))
        deadline = time.monotonic() + 30
        while b"cannot connect" in tool("export", "--from", azc, "--caFile", cert, "--out", "-",
                                        "--retries", "0").stderr:
            assert time.monotonic() < deadline, "Azurite did not start"
            time.sleep(0.2)
        ref = os.path.join(workdir, "ref.jsonl")
        write(ref, reference_file("types"))
        ok(tool("import", "--to", https_conn(a), "--caFile", cert, "--in", ref))
        ok(tool("copy", "--from", https_conn(a), "--to", azc, "--caFile", cert, "--progress", "none"))
        out = os.path.join(workdir, "az.jsonl")
        ok(tool("export", "--from", azc, "--caFile", cert, "--out", out))
        assert read(out) == read(ref)
        ok(tool("copy", "--from", azc, "--to", https_conn(a), "--table", "types", "--ifExists", "replace",
                "--caFile", cert, "--progress", "none"))
        ok(tool("export", "--from", https_conn(a), "--caFile", cert, "--out", out))
        assert read(out) == read(ref)
    finally:
        os.killpg(az.pid, 15)
        az.wait(timeout=30)


def test_health_and_admin_commands_over_https(tls, servers, workdir):
    """`tablestone health` (the image's HEALTHCHECK probe) and the admin commands reach an HTTPS server
    through --caFile, --serverCert pins a certificate whatever its names, and nothing connects
    unverified."""
    plain = servers()
    r = ok(tool("health", "--url", "http://127.0.0.1:%d" % plain.port))
    assert r.stdout.decode().startswith("healthy: http://127.0.0.1:%d answered in " % plain.port), r.stdout
    # The image's default command line (Azurite's, a wildcard address): reached on loopback.
    r = ok(tool("health", "--", "azurite", "-l", "/data", "--blobHost", "0.0.0.0", "--queueHost", "0.0.0.0",
                "--tableHost", "0.0.0.0", "--tablePort", str(plain.port)))
    assert ("healthy: http://127.0.0.1:%d" % plain.port) in r.stdout.decode(), r.stdout
    cert, key = make_cert(workdir)
    a = tls(cert, key)
    url = "https://127.0.0.1:%d" % a.port
    assert "not trusted" in failure(tool("health", "--url", url))  # the system's store only
    ok(tool("health", "--url", url, "--caFile", cert))
    ok(tool("health", "--url", "https://localhost:%d" % a.port, "--caFile", cert))
    # The server's flags after --, as the image's probe passes PID 1's: https and its own certificate.
    r = ok(tool("health", "--", "--tablePort", str(a.port), "--cert", cert, "--key", key))
    assert ("healthy: " + url) in r.stdout.decode(), r.stdout
    # Pinned: a certificate for another name is trusted when it is exactly the server's ...
    elsewhere_cert, elsewhere_key = make_cert(workdir, "elsewhere", san="DNS:elsewhere.example")
    e = tls(elsewhere_cert, elsewhere_key)
    e_url = "https://127.0.0.1:%d" % e.port
    ok(tool("health", "--url", e_url, "--serverCert", elsewhere_cert))
    assert "mismatch" in failure(tool("health", "--url", e_url, "--caFile", elsewhere_cert))
    # ... and any other certificate is refused, even one the trust store would accept.
    assert "not the one in --serverCert" in failure(tool("health", "--url", url, "--serverCert", elsewhere_cert))
    junk = os.path.join(workdir, "junk.pem")
    write(junk, "not a certificate\n")
    assert "holds no PEM certificate" in failure(tool("health", "--url", url, "--serverCert", junk))
    # A file that never ends, or a large one, is refused before OpenSSL reads it.
    big = os.path.join(workdir, "big.pem")
    with open(big, "wb") as f:
        f.truncate(2 << 20)
    for option in ("--serverCert", "--caFile"):
        for path in ("/dev/zero", big):
            assert "not a regular file of at most 1 MiB" in failure(tool("health", "--url", url, option, path))
    # Bad input: one line, before anything is sent.
    assert "not an http:// or https:// URL" in failure(tool("health", "--url", "ftp://127.0.0.1:1"))
    r = tool("health", "--url", url, "--", "--tablePort", "1")
    assert r.returncode == 2 and "not both" in r.stderr.decode(), r.stderr
    assert "do not load" in failure(tool("health", "--", "--tablePort", "notaport"))
    started = time.monotonic()
    assert "unhealthy" in failure(tool("health", "--url", "http://127.0.0.1:%d" % harness.free_port()))
    assert time.monotonic() - started < 3

    # The admin commands take --caFile like the data commands (no insecure mode either).
    admin = servers({"TABLESTONE_CERT": cert, "TABLESTONE_KEY": key, "TABLESTONE_ADMIN_API": "true"})
    cs = https_conn(admin)
    assert "not trusted" in failure(tool("faults", "list", "--from", cs))
    r = ok(tool("faults", "add", "--from", cs, "--caFile", cert, "--operation", "CreateTable", "--status", "503",
                "--count", "1"))
    assert "added 1 fault rule" in r.stderr.decode(), r.stderr
    listed = ok(tool("faults", "list", "--from", cs, "--caFile", cert)).stdout.decode()
    assert "serverBusy" in listed and "operation=CreateTable" in listed and "matched 0, injected 0" in listed, listed
    ok(tool("faults", "clear", "--from", cs, "--caFile", cert))
    r = ok(tool("reset", "--from", cs, "--caFile", cert, "--yes"))
    assert "reset deleted 0 tables of devstoreaccount1 on https://127.0.0.1:%d" % admin.port in r.stderr.decode()
