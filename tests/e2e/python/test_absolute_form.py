"""Absolute-form request targets (RFC 9112, section 3.2.2), as clients of the AtomPub era send them.

A target naming this endpoint (the authority the client also put in Host) is served like its
origin form, signed over the path as usual; one naming another authority stays 400 InvalidUri.
"""

import json
import re
import socket

import conftest


def _absolute(raw, path, authority=None):
    authority = authority or "%s:%d" % (raw.target.host, raw.target.port)
    return "http://%s%s" % (authority, raw.url_path(path))


def test_absolute_form_create_insert_and_query(raw):
    name = conftest.unique_name()
    r = raw.request("POST", _absolute(raw, "/Tables"), body={"TableName": name}, raw_path=True)
    assert r.status == 201, r.body
    try:
        r = raw.request("POST", _absolute(raw, "/" + name), body={"PartitionKey": "p", "RowKey": "r", "v": 7},
                        raw_path=True, headers={"Prefer": "return-no-content"})
        assert r.status == 204, r.body
        r = raw.request("GET", _absolute(raw, "/%s()?$filter=v%%20eq%%207" % name), raw_path=True)
        assert r.status == 200, r.body
        values = json.loads(r.body)["value"]
        assert [(e["PartitionKey"], e["RowKey"], e["v"]) for e in values] == [("p", "r", 7)]
    finally:
        raw.delete_table(name)


def _send_raw(raw, head):
    """Sends a request head as bytes (http.client would derive Host from an absolute URL)."""
    with socket.create_connection((raw.target.host, raw.target.port), timeout=10) as sock:
        sock.sendall(head.encode("ascii"))
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head_end = data.index(b"\r\n\r\n")
        length = int(re.search(rb"(?im)^content-length:\s*(\d+)", data[:head_end]).group(1))
        body = data[head_end + 4:]
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        return int(data.split(b" ", 2)[1]), body


def test_absolute_form_naming_another_host_is_invalid_uri(raw):
    authority = "%s:%d" % (raw.target.host, raw.target.port)
    for target in ("http://example.com:%d%s" % (raw.target.port, raw.url_path("/Tables")),
                   "http://%s:1%s" % (raw.target.host, raw.url_path("/Tables"))):
        status, body = _send_raw(raw, "GET %s HTTP/1.1\r\nHost: %s\r\nx-ms-version: 2019-02-02\r\n"
                                      "Accept: application/json;odata=minimalmetadata\r\n\r\n" % (target, authority))
        assert status == 400, body
        assert json.loads(body)["odata.error"]["code"] == "InvalidUri"
