"""AtomPub payloads for x-ms-version before 2015-12-11, over raw signed HTTP.

The bodies follow the request and response shapes of the REST reference pages of those versions
(Create Table, Insert Entity, Query Entities, entity group transactions): Atom entries with
<m:properties>, typed <d:> elements, m:null, untyped values as Edm.String, Edm.Boolean as 1/0 the
way the clients of that era write it. Requests of 2015-12-11 and later still get 415.
"""

import base64
import uuid
import xml.etree.ElementTree as ET

import conftest

OLD_VERSION = "2013-08-15"
ATOM = "http://www.w3.org/2005/Atom"
D = "http://schemas.microsoft.com/ado/2007/08/dataservices"
M = "http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"
NS = {"a": ATOM, "d": D, "m": M}

ENTRY = """<?xml version="1.0" encoding="utf-8" standalone="yes"?>
<entry xmlns:d="%s" xmlns:m="%s" xmlns="%s">
  <title /><updated>2013-09-18T23:46:19.3857256Z</updated><author><name /></author><id />
  <content type="application/xml">
    <m:properties>
%%s
    </m:properties>
  </content>
</entry>""" % (D, M, ATOM)


def _headers(**extra):
    h = {"x-ms-version": OLD_VERSION, "DataServiceVersion": "1.0;NetFx", "MaxDataServiceVersion": "2.0;NetFx"}
    h.update(extra)
    return h


def _atom(raw, method, path, body=None, headers=None, accept=None):
    """A request as a client of that era sends it: Atom body, no Accept unless given."""
    if body is not None:
        body = body.encode("utf-8")
    return raw.request(method, path, body=body, headers=_headers(**(headers or {})), accept=accept,
                       content_type="application/atom+xml" if body is not None else None)


def _props(entry):
    """{name: (m:type or None, text or None when m:null)} of one <entry>."""
    out = {}
    for el in entry.find("a:content/m:properties", NS):
        name = el.tag.split("}", 1)[1]
        null = el.get("{%s}null" % M) == "true"
        out[name] = (el.get("{%s}type" % M), None if null else (el.text or ""))
    return out


def _error_code(r):
    assert r.header("content-type", "").startswith("application/xml"), (r.headers, r.body)
    root = ET.fromstring(r.body)
    assert root.tag == "{%s}error" % M, r.body
    assert root.find("m:message", NS).get("{http://www.w3.org/XML/1998/namespace}lang") == "en-US"
    return root.find("m:code", NS).text


def _create_table(raw):
    name = conftest.unique_name("atom")
    r = _atom(raw, "POST", "/Tables", ENTRY % ("<d:TableName>%s</d:TableName>" % name))
    assert r.status == 201, r.body
    assert r.header("content-type").startswith("application/atom+xml"), r.headers
    entry = ET.fromstring(r.body)
    assert _props(entry)["TableName"] == (None, name)
    return name


def _insert(raw, table, pk, rk, extra=""):
    return _atom(raw, "POST", "/" + table,
                 ENTRY % ("<d:PartitionKey>%s</d:PartitionKey><d:RowKey>%s</d:RowKey>%s" % (pk, rk, extra)))


def test_create_query_and_delete_table(raw):
    name = _create_table(raw)
    try:
        r = _atom(raw, "GET", "/Tables")
        assert r.status == 200, r.body
        assert r.header("content-type").startswith("application/atom+xml;type=feed"), r.headers
        feed = ET.fromstring(r.body)
        names = [_props(e)["TableName"][1] for e in feed.findall("a:entry", NS)]
        assert name in names
        r = _atom(raw, "POST", "/Tables", ENTRY % ("<d:TableName>%s</d:TableName>" % name))
        assert r.status == 409 and _error_code(r) == "TableAlreadyExists"
    finally:
        r = _atom(raw, "DELETE", "/Tables('%s')" % name)
        assert r.status == 204, r.body


ALL_TYPES = """
<d:Address>Mountain View</d:Address>
<d:Age m:type="Edm.Int32">23</d:Age>
<d:AmountDue m:type="Edm.Double">200.23</d:AmountDue>
<d:Huge m:type="Edm.Double">1E+300</d:Huge>
<d:Infinite m:type="Edm.Double">INF</d:Infinite>
<d:BinaryData m:type="Edm.Binary">%s</d:BinaryData>
<d:NoBinary m:type="Edm.Binary" m:null="true" />
<d:CustomerCode m:type="Edm.Guid">c9da6455-213d-42c9-9a79-3e9149a57833</d:CustomerCode>
<d:CustomerSince m:type="Edm.DateTime">2008-07-10T00:00:00</d:CustomerSince>
<d:IsActive m:type="Edm.Boolean">1</d:IsActive>
<d:IsClosed m:type="Edm.Boolean">0</d:IsClosed>
<d:NumOfOrders m:type="Edm.Int64">255</d:NumOfOrders>
<d:Note xml:space="preserve">  a &lt;b&gt; &amp; c  </d:Note>
<d:Timestamp m:type="Edm.DateTime">0001-01-01T00:00:00</d:Timestamp>
""" % base64.b64encode(b"\x00\x01\xfe\xff").decode()


def test_insert_get_every_edm_type(raw):
    table = _create_table(raw)
    try:
        r = _insert(raw, table, "mypartitionkey", "myrowkey1", ALL_TYPES)
        assert r.status == 201, r.body
        echo = ET.fromstring(r.body)
        etag = r.header("etag")
        assert echo.get("{%s}etag" % M) == etag
        r = _atom(raw, "GET", "/%s(PartitionKey='mypartitionkey',RowKey='myrowkey1')" % table)
        assert r.status == 200, r.body
        assert r.header("content-type").startswith("application/atom+xml;type=entry"), r.headers
        assert r.header("etag") == etag
        entry = ET.fromstring(r.body)
        assert entry.get("{%s}etag" % M) == etag
        assert entry.find("a:id", NS).text.endswith("%s(PartitionKey='mypartitionkey',RowKey='myrowkey1')" % table)
        p = _props(entry)
        assert p["PartitionKey"] == (None, "mypartitionkey")
        assert p["Address"] == (None, "Mountain View")
        assert p["Age"] == ("Edm.Int32", "23")
        assert p["AmountDue"] == ("Edm.Double", "200.23")
        assert p["Huge"][0] == "Edm.Double" and float(p["Huge"][1]) == 1e300
        assert p["Infinite"] == ("Edm.Double", "INF")
        assert p["BinaryData"] == ("Edm.Binary", base64.b64encode(b"\x00\x01\xfe\xff").decode())
        assert "NoBinary" not in p
        assert p["CustomerCode"] == ("Edm.Guid", "c9da6455-213d-42c9-9a79-3e9149a57833")
        assert p["CustomerSince"] == ("Edm.DateTime", "2008-07-10T00:00:00.0000000Z")
        assert p["IsActive"] == ("Edm.Boolean", "true")
        assert p["IsClosed"] == ("Edm.Boolean", "false")
        assert p["NumOfOrders"] == ("Edm.Int64", "255")
        assert p["Note"] == (None, "  a <b> & c  ")
        assert p["Timestamp"][0] == "Edm.DateTime" and not p["Timestamp"][1].startswith("0001")
        # The same entity read as JSON by a modern client: the types are the stored ones.
        r = raw.get_entity(table, "mypartitionkey", "myrowkey1")
        assert r.status == 200, r.body
    finally:
        raw.delete_table(table)


def test_query_continuation_and_select(raw):
    table = _create_table(raw)
    try:
        for i in range(5):
            assert _insert(raw, table, "p", "r%d" % i, '<d:N m:type="Edm.Int32">%d</d:N>' % i).status == 201
        seen, query, pages = [], "?$top=2", 0
        while True:
            r = _atom(raw, "GET", "/%s()%s" % (table, query))
            assert r.status == 200, r.body
            pages += 1
            feed = ET.fromstring(r.body)
            seen += [_props(e)["RowKey"][1] for e in feed.findall("a:entry", NS)]
            npk, nrk = r.header("x-ms-continuation-nextpartitionkey"), r.header("x-ms-continuation-nextrowkey")
            if not npk:
                break
            query = "?$top=2&NextPartitionKey=%s&NextRowKey=%s" % (npk, nrk)
        assert seen == ["r%d" % i for i in range(5)] and pages == 3
        r = _atom(raw, "GET", "/%s()?$filter=N%%20ge%%203&$select=N,Missing" % table)
        feed = ET.fromstring(r.body)
        assert [_props(e) for e in feed.findall("a:entry", NS)] == [
            {"N": ("Edm.Int32", "3"), "Missing": (None, None)}, {"N": ("Edm.Int32", "4"), "Missing": (None, None)}]
    finally:
        raw.delete_table(table)


def test_errors_are_xml_with_the_service_codes(raw):
    table = _create_table(raw)
    try:
        r = _insert(raw, table, "p", "r")
        assert r.status == 201
        r = _insert(raw, table, "p", "r")
        assert r.status == 409 and _error_code(r) == "EntityAlreadyExists"
        r = _atom(raw, "GET", "/%s(PartitionKey='p',RowKey='nope')" % table)
        assert r.status == 404 and _error_code(r) == "ResourceNotFound"
        stale = 'W/"datetime\'2009-01-01T00%3A00%3A00.0000000Z\'"'
        r = _atom(raw, "PUT", "/%s(PartitionKey='p',RowKey='r')" % table,
                  ENTRY % "<d:V>1</d:V>", headers={"If-Match": stale})
        assert r.status == 412 and _error_code(r) == "UpdateConditionNotSatisfied"
        r = _atom(raw, "POST", "/" + table, "<entry><content>")
        assert r.status == 400 and _error_code(r) == "InvalidInput"
        r = _atom(raw, "POST", "/" + table, ENTRY % '<d:PartitionKey>p</d:PartitionKey><d:RowKey>x</d:RowKey>'
                                                     '<d:V m:type="Edm.Int32">nope</d:V>')
        assert r.status == 400 and _error_code(r) == "InvalidInput"
        # Merge and update with If-Match: * work on the Atom body.
        r = _atom(raw, "MERGE", "/%s(PartitionKey='p',RowKey='r')" % table,
                  ENTRY % '<d:W m:type="Edm.Int64">5</d:W>', headers={"If-Match": "*"})
        assert r.status == 204, r.body
        r = _atom(raw, "GET", "/%s(PartitionKey='p',RowKey='r')" % table)
        assert _props(ET.fromstring(r.body))["W"] == ("Edm.Int64", "5")
    finally:
        raw.delete_table(table)


def test_json_when_asked_and_atom_refused_for_modern_versions(raw):
    table = _create_table(raw)
    try:
        assert _insert(raw, table, "p", "r").status == 201
        r = _atom(raw, "GET", "/%s()" % table, accept="application/json;odata=nometadata")
        assert r.status == 200 and r.header("content-type").startswith("application/json"), r.headers
        r = raw.request("GET", "/%s()" % table, accept="application/atom+xml")  # 2019-02-02
        assert r.status == 415, r.body
        r = raw.request("POST", "/" + table, body=(ENTRY % "<d:PartitionKey>a</d:PartitionKey>").encode(),
                        content_type="application/atom+xml", headers={"x-ms-version": "2015-12-11"})
        assert r.status == 415, r.body
    finally:
        raw.delete_table(table)


def _batch_body(table, boundary, changeset, nl):
    """An entity group transaction as the AtomPub-era clients wrote it, with `nl` line ends."""
    base = "http://127.0.0.1:10002/devstoreaccount1/"
    lines = ["--" + boundary, "Content-Type: multipart/mixed; boundary=" + changeset, ""]
    for i in range(3):
        entry = ENTRY % ("<d:PartitionKey>bp</d:PartitionKey><d:RowKey>b%d</d:RowKey>"
                         "<d:Flag m:type=\"Edm.Boolean\">1</d:Flag>" % i)
        lines += ["--" + changeset, "Content-Type: application/http", "Content-Transfer-Encoding: binary", "",
                  "POST %s%s HTTP/1.1" % (base, table), "Content-ID: %d" % (i + 1),
                  "Content-Type: application/atom+xml;type=entry", "Content-Length: %d" % len(entry.encode()),
                  "", entry]
    lines += ["--" + changeset + "--", "--" + boundary + "--", ""]
    return nl.join(lines)


def test_batch_with_atom_parts_and_bare_lf(raw):
    table = _create_table(raw)
    try:
        boundary, changeset = "batch_" + uuid.uuid4().hex, "changeset_" + uuid.uuid4().hex
        body = _batch_body(table, boundary, changeset, "\n")
        r = raw.request("POST", "/$batch", body=body.encode(), headers=_headers(), accept=None,
                        content_type="multipart/mixed; boundary=" + boundary)
        assert r.status == 202, r.body
        text = r.body.decode()
        assert text.count("HTTP/1.1 201 Created") == 3, text
        assert text.count("application/atom+xml;type=entry") == 3, text
        r = _atom(raw, "GET", "/%s()" % table)
        rows = [_props(e) for e in ET.fromstring(r.body).findall("a:entry", NS)]
        assert [(p["RowKey"][1], p["Flag"]) for p in rows] == [("b%d" % i, ("Edm.Boolean", "true")) for i in range(3)]
        # A failing operation answers its XML error inside the 202 envelope.
        body = _batch_body(table, boundary, changeset, "\n")
        r = raw.request("POST", "/$batch", body=body.encode(), headers=_headers(), accept=None,
                        content_type="multipart/mixed; boundary=" + boundary)
        assert r.status == 202, r.body
        text = r.body.decode()
        assert "409 Conflict" in text and "<code>EntityAlreadyExists</code>" in text, text
    finally:
        raw.delete_table(table)


def test_batch_query_part_answers_atom(raw):
    table = _create_table(raw)
    try:
        assert _insert(raw, table, "q", "r1", '<d:N m:type="Edm.Int64">7</d:N>').status == 201
        boundary = "batch_" + uuid.uuid4().hex
        body = "\n".join([
            "--" + boundary, "Content-Type: application/http", "Content-Transfer-Encoding: binary", "",
            "GET http://127.0.0.1:10002/devstoreaccount1/%s(PartitionKey='q',RowKey='r1') HTTP/1.1" % table,
            "DataServiceVersion: 1.0;NetFx", "", "--" + boundary + "--", ""])
        r = raw.request("POST", "/$batch", body=body.encode(), headers=_headers(), accept=None,
                        content_type="multipart/mixed; boundary=" + boundary)
        assert r.status == 202, r.body
        text = r.body.decode()
        assert "HTTP/1.1 200 OK" in text and "application/atom+xml;type=entry" in text, text
        entry = ET.fromstring(text[text.index("<?xml"):text.index("</entry>") + len("</entry>")])
        assert _props(entry)["N"] == ("Edm.Int64", "7")
    finally:
        raw.delete_table(table)
