"""--oauth basic over HTTPS: azure.data.tables with a TokenCredential returning a hand-made JWT
(no identity provider: tablestone checks audience, issuer and lifetime, never the signature). An
expired token or a wrong audience gets 401 InvalidAuthenticationInfo with the service's
WWW-Authenticate challenge."""

import base64
import json
import ssl
import time
import http.client

import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableServiceClient

from conftest import sdk_error_code, unique_name
from test_https import ACCOUNT, tls_server


def _b64url(obj):
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def make_jwt(aud="https://storage.azure.com", iss="https://sts.windows.net/tenant-1/", exp_in=3600, nbf_in=-60):
    now = int(time.time())
    return ".".join([_b64url({"alg": "RS256", "typ": "JWT"}),
                     _b64url({"aud": aud, "iss": iss, "tid": "tenant-1", "nbf": now + nbf_in, "exp": now + exp_in,
                              "oid": "00000000-0000-0000-0000-000000000001"}),
                     base64.urlsafe_b64encode(b"not-a-signature").rstrip(b"=").decode()])


class FakeCredential:
    """A TokenCredential returning a fixed JWT, as a test double for DefaultAzureCredential."""

    def __init__(self, token):
        self.token = token
        self.scopes = []

    def get_token(self, *scopes, **kwargs):
        self.scopes.extend(scopes)
        return AccessToken(self.token, int(time.time()) + 3600)


@pytest.fixture(scope="module")
def oauth_server(target):
    if not target.managed:
        pytest.skip("needs a tablestone process started by the harness")
    with tls_server(target.server.binary, extra_env={"TABLESTONE_OAUTH": "basic",
                                                     "TABLESTONE_LOG_LEVEL": "debug"}) as running:
        yield running


@pytest.fixture
def endpoint(oauth_server, monkeypatch):
    server, cert = oauth_server
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", cert)
    return "https://127.0.0.1:%d/%s" % (server.port, ACCOUNT)


def test_token_credential_with_a_valid_jwt(endpoint, oauth_server):
    credential = FakeCredential(make_jwt())
    service = TableServiceClient(endpoint, credential=credential)
    name = unique_name()
    table = service.create_table(name)
    try:
        table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
        assert [e["v"] for e in table.list_entities()] == [1]
    finally:
        service.delete_table(name)
    assert credential.scopes and credential.scopes[0].startswith("https://storage.azure.com")
    log = oauth_server[0].log_tail(200000)
    assert "signatures are NOT verified" in log


# Issue 36: the 401 names the failed check in the message, in the service's words for its
# AuthenticationErrorDetail ("Audience validation failed. Audience did not match.", as quoted from
# the service in Azure/AzureStor#119), and the server logs it at debug level.
@pytest.mark.parametrize("token,detail", [
    (make_jwt(exp_in=-3600, nbf_in=-7200), "Lifetime validation failed. The token is expired."),
    (make_jwt(nbf_in=3600), "Lifetime validation failed. The token is not yet valid."),
    (make_jwt(aud="https://vault.azure.net"), "Audience validation failed. Audience did not match."),
    (make_jwt(iss="https://example.com/tenant-1/"), "Issuer validation failed. Issuer did not match."),
    ("not.a.jwt", "Signature validation failed. The token is not a well-formed JWT."),
], ids=["expired", "not-yet-valid", "audience", "issuer", "not-a-jwt"])
def test_refused_tokens_get_401_with_the_challenge(endpoint, oauth_server, token, detail):
    service = TableServiceClient(endpoint, credential=FakeCredential(token), retry_total=0)
    with pytest.raises(HttpResponseError) as raised:
        list(service.list_tables())
    assert raised.value.status_code == 401
    assert sdk_error_code(raised.value) == "InvalidAuthenticationInfo"
    assert detail in str(raised.value), str(raised.value)
    assert detail in oauth_server[0].log_tail(200000)
    # The raw answer carries the service's challenge.
    server, cert = oauth_server
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=10,
                                       context=ssl.create_default_context(cafile=cert))
    conn.request("GET", "/%s/Tables" % ACCOUNT, headers={"Authorization": "Bearer " + token,
                                                         "x-ms-version": "2019-02-02",
                                                         "Accept": "application/json;odata=nometadata"})
    r = conn.getresponse()
    r.read()
    conn.close()
    assert r.status == 401
    challenge = r.getheader("WWW-Authenticate")
    assert challenge.startswith("Bearer authorization_uri=https://login.microsoftonline.com/")
    assert challenge.endswith("/oauth2/authorize resource_id=https://storage.azure.com")


def test_bearer_without_oauth_is_refused(target):
    # The shared test server runs without --oauth: a token is an unsupported scheme there.
    conn = http.client.HTTPConnection(target.host, target.port, timeout=10)
    conn.request("GET", target.base_path + "/Tables", headers={"Authorization": "Bearer " + make_jwt(),
                                                                 "x-ms-version": "2019-02-02"})
    r = conn.getresponse()
    r.read()
    conn.close()
    assert r.status == 403


@pytest.fixture(scope="module")
def loose_oauth_server(target):
    if not target.managed:
        pytest.skip("needs a tablestone process started by the harness")
    with tls_server(target.server.binary, extra_env={"TABLESTONE_OAUTH": "basic", "TABLESTONE_LOOSE": "true"}) \
            as running:
        yield running


SOVEREIGN = ["https://%s.table.core.chinacloudapi.cn" % ACCOUNT, "https://%s.table.core.usgovcloudapi.net/" % ACCOUNT,
             "https://%s.table.core.cloudapi.de" % ACCOUNT]


@pytest.mark.parametrize("aud", SOVEREIGN)
def test_sovereign_audiences_only_with_loose(oauth_server, loose_oauth_server, monkeypatch, aud):
    """Issue 36: --oauth basic with --loose accepts the account's table endpoint in the sovereign
    clouds, as Azurite does (VALID_TABLE_AUDIENCES in Azurite's src/table/utils/constants.ts); the
    default mode refuses them as the public service does."""
    token = make_jwt(aud=aud)
    for (server, cert), accepted in ((oauth_server, False), (loose_oauth_server, True)):
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", cert)
        service = TableServiceClient("https://127.0.0.1:%d/%s" % (server.port, ACCOUNT),
                                     credential=FakeCredential(token), retry_total=0)
        if accepted:
            list(service.list_tables())
        else:
            with pytest.raises(HttpResponseError) as raised:
                list(service.list_tables())
            assert raised.value.status_code == 401
            assert "Audience validation failed." in str(raised.value)
    log = loose_oauth_server[0].log_tail(200000)
    assert log.count("a bearer token whose audience is a sovereign cloud's table endpoint") == 1
