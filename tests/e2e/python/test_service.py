"""Service-level operations: Get/Set Table Service Properties, Get/Set Table ACL, CORS preflight and
CORS headers on actual requests, Get Table Service Stats and the read-only secondary endpoint
(spec 9.1-9.4, 1.1). Driven with azure.data.tables and raw signed HTTP."""

import datetime

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.data.tables import (TableAccessPolicy, TableAnalyticsLogging, TableClient, TableCorsRule,
                               TableMetrics, TableRetentionPolicy, TableSasPermissions,
                               TableServiceClient)

from conftest import sdk_error_code

PROPS = "/?restype=service&comp=properties"
STATS = "/?restype=service&comp=stats"

DEFAULT_PROPERTIES_XML = (
    '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>'
    "<Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write>"
    "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>"
    "<HourMetrics><Version>1.0</Version><Enabled>false</Enabled>"
    "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>"
    "<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled>"
    "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>"
    "<Cors /></StorageServiceProperties>")


def _reset_properties(service):
    service.set_service_properties(
        analytics_logging=TableAnalyticsLogging(),
        hour_metrics=TableMetrics(),
        minute_metrics=TableMetrics(),
        cors=[])


@pytest.fixture
def clean_properties(service):
    """Service properties are account-wide: restore the defaults around the test."""
    _reset_properties(service)
    yield service
    _reset_properties(service)


def _xml_code(resp):
    return resp.header("x-ms-error-code")


# ---- Service properties (9.1) ------------------------------------------------------------------

def test_default_service_properties(clean_properties, raw):
    props = clean_properties.get_service_properties()
    logging = props["analytics_logging"]
    assert logging.version == "1.0"
    assert (logging.delete, logging.read, logging.write) == (False, False, False)
    assert logging.retention_policy.enabled is False
    for key in ("hour_metrics", "minute_metrics"):
        assert props[key].version == "1.0"
        assert props[key].enabled is False
        assert props[key].retention_policy.enabled is False
    assert props["cors"] == []

    r = raw.request("GET", PROPS, accept=None)
    assert r.status == 200
    assert r.header("Content-Type") == "application/xml"
    assert r.body.decode() == DEFAULT_PROPERTIES_XML


def test_set_service_properties_round_trip_and_partial_update(clean_properties):
    service = clean_properties
    service.set_service_properties(
        analytics_logging=TableAnalyticsLogging(
            read=True, write=True, retention_policy=TableRetentionPolicy(enabled=True, days=5)),
        hour_metrics=TableMetrics(enabled=True, include_apis=True,
                                  retention_policy=TableRetentionPolicy(enabled=True, days=3)),
        cors=[TableCorsRule(["http://a.example", "http://b.example"], ["GET", "PUT"],
                            allowed_headers=["x-ms-meta-*", "content-type"],
                            exposed_headers=["x-ms-meta-*"], max_age_in_seconds=500)])
    props = service.get_service_properties()
    assert props["analytics_logging"].read is True
    assert props["analytics_logging"].write is True
    assert props["analytics_logging"].delete is False
    assert props["analytics_logging"].retention_policy.days == 5
    assert props["hour_metrics"].enabled is True
    assert props["hour_metrics"].include_apis is True
    assert props["hour_metrics"].retention_policy.days == 3
    assert props["minute_metrics"].enabled is False
    [rule] = props["cors"]
    assert rule.allowed_origins == ["http://a.example", "http://b.example"]
    assert rule.allowed_methods == ["GET", "PUT"]
    assert rule.allowed_headers == ["x-ms-meta-*", "content-type"]
    assert rule.max_age_in_seconds == 500

    # Python sends only the sections it is given; the others keep their values.
    service.set_service_properties(minute_metrics=TableMetrics(enabled=True, include_apis=False))
    props = service.get_service_properties()
    assert props["minute_metrics"].enabled is True
    assert props["minute_metrics"].include_apis is False
    assert props["hour_metrics"].retention_policy.days == 3
    assert len(props["cors"]) == 1

    service.set_service_properties(cors=[])
    assert service.get_service_properties()["cors"] == []
    assert service.get_service_properties()["analytics_logging"].read is True


def test_set_service_properties_raw_status_and_errors(clean_properties, raw):
    body = ("<?xml version='1.0' encoding='utf-8'?><StorageServiceProperties><Cors><CorsRule>"
            "<AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods>"
            "<MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>")
    r = raw.request("PUT", PROPS, body=body, content_type="application/xml", accept=None)
    assert r.status == 202, r
    assert r.body == b""
    assert r.header("Content-Length") == "0"

    six = "".join("<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods>"
                  "<MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule>" for _ in range(6))
    r = raw.request("PUT", PROPS, body="<StorageServiceProperties><Cors>%s</Cors>"
                    "</StorageServiceProperties>" % six, content_type="application/xml")
    assert (r.status, _xml_code(r)) == (400, "InvalidXmlDocument")
    r = raw.request("PUT", PROPS, body="<StorageServiceProperties><Cors><CorsRule>"
                    "<AllowedOrigins>*</AllowedOrigins><AllowedMethods>FETCH</AllowedMethods>"
                    "<MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>",
                    content_type="application/xml")
    assert (r.status, _xml_code(r)) == (400, "InvalidXmlNodeValue")
    r = raw.request("PUT", PROPS, body="not xml", content_type="application/xml")
    assert (r.status, _xml_code(r)) == (400, "InvalidXmlDocument")
    assert r.header("Content-Type") == "application/xml"

    with pytest.raises(HttpResponseError):
        clean_properties.set_service_properties(
            hour_metrics=TableMetrics(enabled=True, retention_policy=TableRetentionPolicy(
                enabled=True, days=366)))


def test_service_properties_persist_across_restart(clean_properties, restart):
    clean_properties.set_service_properties(
        cors=[TableCorsRule(["http://persist.example"], ["GET"], max_age_in_seconds=9)])
    restart()
    [rule] = clean_properties.get_service_properties()["cors"]
    assert rule.allowed_origins == ["http://persist.example"]


# ---- Table ACL (9.2) ---------------------------------------------------------------------------

def test_access_policy_round_trip(table, raw):
    assert table.get_table_access_policy() == {}
    start = datetime.datetime(2021, 7, 8, 9, 10, 9, tzinfo=datetime.timezone.utc)
    expiry = datetime.datetime(2031, 7, 8, 9, 10, 9, tzinfo=datetime.timezone.utc)
    table.set_table_access_policy({
        "readonly": TableAccessPolicy(permission=TableSasPermissions(read=True), start=start,
                                      expiry=expiry),
        "all": TableAccessPolicy(permission="raud", expiry=expiry),
        "empty": None,
    })
    acl = table.get_table_access_policy()
    assert set(acl) == {"readonly", "all", "empty"}
    assert acl["readonly"].permission == "r"
    assert acl["readonly"].start == start
    assert acl["readonly"].expiry == expiry
    assert acl["all"].permission == "raud"
    assert acl["empty"] is None

    r = raw.request("GET", "/%s?comp=acl" % table.table_name, accept=None)
    assert r.status == 200
    assert r.header("Content-Type") == "application/xml"
    text = r.body.decode()
    assert "<SignedIdentifier><Id>empty</Id></SignedIdentifier>" in text
    assert "<Start>2021-07-08T09:10:09.0000000Z</Start>" in text  # 7 fraction digits

    table.set_table_access_policy({})
    assert table.get_table_access_policy() == {}


def test_access_policy_limits_and_missing_table(table, raw, service):
    too_many = {"p%d" % i: TableAccessPolicy(permission="r") for i in range(6)}
    with pytest.raises(ValueError):
        table.set_table_access_policy(too_many)  # the SDK refuses it client-side
    body = "<SignedIdentifiers>%s</SignedIdentifiers>" % "".join(
        "<SignedIdentifier><Id>p%d</Id></SignedIdentifier>" % i for i in range(6))
    r = raw.request("PUT", "/%s?comp=acl" % table.table_name, body=body,
                    content_type="application/xml")
    assert (r.status, _xml_code(r)) == (400, "InvalidXmlDocument")
    r = raw.request("PUT", "/%s?comp=acl" % table.table_name,
                    body="<SignedIdentifiers><SignedIdentifier><Id>%s</Id></SignedIdentifier>"
                         "</SignedIdentifiers>" % ("x" * 65),
                    content_type="application/xml")
    assert (r.status, _xml_code(r)) == (400, "InvalidXmlDocument")

    # Issue 36: the ACL endpoint answers a missing table with ResourceNotFound ("The specified
    # resource does not exist."), for Get and Set alike.
    missing = service.get_table_client("nosuchtable%s" % table.table_name[-6:])
    with pytest.raises(ResourceNotFoundError) as exc:
        missing.get_table_access_policy()
    assert sdk_error_code(exc.value) == "ResourceNotFound"
    assert "The specified resource does not exist." in str(exc.value)
    with pytest.raises(ResourceNotFoundError) as exc:
        missing.set_table_access_policy({"id": TableAccessPolicy(permission="r")})
    assert sdk_error_code(exc.value) == "ResourceNotFound"


# ---- CORS (9.3) --------------------------------------------------------------------------------

def _cors_rules(service):
    service.set_service_properties(cors=[
        TableCorsRule(["http://app.example"], ["GET", "POST", "PUT"],
                      allowed_headers=["x-ms-meta-*", "content-type", "x-ms-version"],
                      exposed_headers=["x-ms-meta-*"], max_age_in_seconds=300),
        TableCorsRule(["*"], ["GET"], max_age_in_seconds=7),
    ])


def test_preflight(clean_properties, raw):
    pre = {"Origin": "http://app.example", "Access-Control-Request-Method": "PUT"}
    r = raw.request("OPTIONS", "/Tables", headers=pre, sign=False)
    assert (r.status, _xml_code(r)) == (403, "CorsPreflightFailure")

    _cors_rules(clean_properties)
    r = raw.request("OPTIONS", "/Tables", headers=dict(
        pre, **{"Access-Control-Request-Headers": "content-type,x-ms-meta-a"}), sign=False)
    assert r.status == 200, r
    assert r.header("Access-Control-Allow-Origin") == "http://app.example"
    assert r.header("Access-Control-Allow-Methods") == "PUT"
    assert r.header("Access-Control-Allow-Headers") == "content-type,x-ms-meta-a"
    assert r.header("Access-Control-Max-Age") == "300"
    assert r.header("Access-Control-Allow-Credentials") == "true"
    assert r.header("x-ms-request-id")

    r = raw.request("OPTIONS", "/anytable(PartitionKey='a',RowKey='b')", sign=False,
                    headers={"Origin": "http://elsewhere.example",
                             "Access-Control-Request-Method": "GET"})
    assert r.status == 200
    assert r.header("Access-Control-Allow-Origin") == "*"
    assert r.header("Access-Control-Allow-Credentials") is None

    for headers in ({"Origin": "http://elsewhere.example", "Access-Control-Request-Method": "PUT"},
                    dict(pre, **{"Access-Control-Request-Headers": "x-not-allowed"})):
        r = raw.request("OPTIONS", "/Tables", headers=headers, sign=False)
        assert (r.status, _xml_code(r)) == (403, "CorsPreflightFailure"), headers
    for headers in ({"Origin": "http://app.example"}, {"Access-Control-Request-Method": "GET"}):
        r = raw.request("OPTIONS", "/Tables", headers=headers, sign=False)
        assert (r.status, _xml_code(r)) == (400, "InvalidHeaderValue"), headers


def test_cors_headers_on_actual_requests(clean_properties, raw, table):
    r = raw.request("GET", "/Tables", headers={"Origin": "http://app.example"})
    assert r.status == 200
    assert r.header("Access-Control-Allow-Origin") is None

    _cors_rules(clean_properties)
    r = raw.request("GET", "/%s()" % table.table_name, headers={"Origin": "http://app.example"})
    assert r.status == 200
    assert r.header("Access-Control-Allow-Origin") == "http://app.example"
    assert r.header("Access-Control-Allow-Credentials") == "true"
    assert r.header("Vary") == "Origin"
    exposed = r.header("Access-Control-Expose-Headers").split(",")
    assert exposed[0] == "x-ms-meta-*"
    for name in ("x-ms-request-id", "x-ms-version", "Date", "Content-Type"):
        assert any(e.lower() == name.lower() for e in exposed), (name, exposed)

    # Failed requests carry the headers too (the browser must be able to read the error).
    r = raw.request("GET", "/Tables", headers={"Origin": "http://app.example"}, sign=False)
    assert r.status == 403
    assert r.header("Access-Control-Allow-Origin") == "http://app.example"

    r = raw.request("DELETE", "/Tables('nosuchtable')", headers={"Origin": "http://app.example"})
    assert r.header("Access-Control-Allow-Origin") is None
    assert r.header("Vary") == "Origin"
    r = raw.request("GET", "/Tables", headers={"Origin": "http://any.example"})
    assert r.header("Access-Control-Allow-Origin") == "*"
    assert r.header("Access-Control-Allow-Credentials") is None


def test_cors_origins_are_any_string_and_match_case_sensitively(clean_properties, raw):
    """Issue 36: the service stores origins such as "www.xyz.com" and comma lists of them
    (recorded: azure-sdk-for-python test_table_service_properties test_set_cors), up to 64 origins
    of 256 characters, and matches them exactly and case-sensitively against Origin."""
    many = ["o%d.example" % i for i in range(63)] + ["x" * 256]
    clean_properties.set_service_properties(cors=[
        TableCorsRule(["www.xyz.com"], ["GET"]),
        TableCorsRule(["www.xyz.com", "www.ab.com", "www.bc.com"], ["GET", "PUT"], max_age_in_seconds=500),
        TableCorsRule(["http://Case.example"], ["DELETE"]),
        TableCorsRule(many, ["HEAD"]),
    ])
    rules = clean_properties.get_service_properties()["cors"]
    assert [r.allowed_origins for r in rules] == [
        ["www.xyz.com"], ["www.xyz.com", "www.ab.com", "www.bc.com"], ["http://Case.example"], many]

    def preflight(origin, method):
        return raw.request("OPTIONS", "/Tables", sign=False,
                           headers={"Origin": origin, "Access-Control-Request-Method": method})

    r = preflight("www.bc.com", "PUT")
    assert (r.status, r.header("Access-Control-Allow-Origin")) == (200, "www.bc.com")
    assert preflight("http://Case.example", "DELETE").status == 200
    for origin in ("http://case.example", "HTTP://Case.example", "WWW.BC.COM"):
        r = preflight(origin, "DELETE" if "ase" in origin else "PUT")
        assert (r.status, _xml_code(r)) == (403, "CorsPreflightFailure"), origin

    with pytest.raises(HttpResponseError) as exc:
        clean_properties.set_service_properties(cors=[TableCorsRule(many + ["one.more"], ["GET"])])
    assert sdk_error_code(exc.value) == "InvalidXmlNodeValue"
    with pytest.raises(HttpResponseError) as exc:
        clean_properties.set_service_properties(cors=[TableCorsRule(["y" * 257], ["GET"])])
    assert sdk_error_code(exc.value) == "InvalidXmlNodeValue"


# ---- Service stats and the secondary endpoint (9.4, 1.1) --------------------------------------

def test_get_service_stats_sdk(service):
    stats = service.get_service_stats()
    geo = stats["geo_replication"]
    assert geo["status"] == "live"
    assert geo["last_sync_time"] is not None


def test_service_stats_on_primary_is_refused(raw):
    r = raw.request("GET", STATS, accept=None)
    assert (r.status, _xml_code(r)) == (400, "InvalidQueryParameterValue")


def _secondary_path(target, rel):
    return "/%s-secondary%s" % (target.account, rel)


@pytest.mark.azurite_wrong("Azurite serves writes on the secondary endpoint")
def test_secondary_serves_reads_and_refuses_writes(target, raw, table):
    if target.base_path != "/" + target.account:
        pytest.skip("path-style endpoint needed")
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 1})
    name = table.table_name
    r = raw.request("GET", _secondary_path(target, "/%s(PartitionKey='p',RowKey='r')" % name),
                    raw_path=True)
    assert r.status == 200, r
    assert r.json()["V"] == 1
    r = raw.request("GET", _secondary_path(target, STATS), raw_path=True, accept=None)
    assert r.status == 200
    assert "<Status>live</Status>" in r.body.decode()

    writes = [
        ("POST", "/" + name, {"PartitionKey": "p", "RowKey": "new"}, None),
        ("PUT", "/%s(PartitionKey='p',RowKey='r')" % name, {"V": 2}, None),
        ("DELETE", "/%s(PartitionKey='p',RowKey='r')" % name, None, {"If-Match": "*"}),
        ("POST", "/Tables", {"TableName": "fromsecondary"}, None),
        ("DELETE", "/Tables('%s')" % name, None, None),
        ("PUT", "/%s?comp=acl" % name, "<SignedIdentifiers/>", None),
        ("PUT", PROPS, "<StorageServiceProperties/>", None),
    ]
    for method, rel, body, headers in writes:
        r = raw.request(method, _secondary_path(target, rel), body=body, headers=headers,
                        raw_path=True)
        assert r.status == 403, (method, rel, r)
        assert r.header("x-ms-error-code") == "AuthorizationFailure"
    assert table.get_entity("p", "r")["V"] == 1


def test_python_secondary_location_mode_reads(target, table):
    """Python rewrites the host to '<host>/<acct>-secondary' and keeps the primary path
    ('/<acct>-secondary/<acct>/<table>()'); reads on the secondary still work."""
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 7})
    client = TableClient.from_connection_string(target.connection_string, table.table_name,
                                                location_mode="secondary")
    assert [e["V"] for e in client.query_entities("PartitionKey eq 'p'")] == [7]
    assert client.get_entity("p", "r")["V"] == 7
    service = TableServiceClient.from_connection_string(target.connection_string,
                                                        location_mode="secondary")
    assert table.table_name in [t.name for t in service.list_tables()]


@pytest.mark.parametrize("rule", [
    TableCorsRule(["*"], ["GET"], exposed_headers=["x-a\r\nSet-Cookie: injected=1"]),
    TableCorsRule(["*"], ["GET"], allowed_headers=["x-ms-meta-*", "bad header"]),
    TableCorsRule(["http://a.example\r\nSet-Cookie: injected=1"], ["GET"]),
    TableCorsRule(["not an origin"], ["GET"]),
])
def test_cors_rule_that_is_not_header_names_and_origins_is_refused(service, clean_properties, rule):
    """Issue 22, finding 2: CORS entries end up in response headers, so anything but a header name
    (or a prefix like x-ms-meta-*) and an origin is 400 InvalidXmlNodeValue, and nothing is stored."""
    with pytest.raises(HttpResponseError) as exc:
        service.set_service_properties(cors=[rule])
    assert exc.value.status_code == 400
    assert sdk_error_code(exc.value) == "InvalidXmlNodeValue"
    assert service.get_service_properties()["cors"] == []
