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
    with tls_server(target.server.binary, extra_env={"TABLESTONE_OAUTH": "basic"}) as running:
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


@pytest.mark.parametrize("token", [make_jwt(exp_in=-3600, nbf_in=-7200), make_jwt(aud="https://vault.azure.net"),
                                   make_jwt(iss="https://example.com/tenant-1/"), "not.a.jwt"])
def test_refused_tokens_get_401_with_the_challenge(endpoint, oauth_server, token):
    service = TableServiceClient(endpoint, credential=FakeCredential(token), retry_total=0)
    with pytest.raises(HttpResponseError) as raised:
        list(service.list_tables())
    assert raised.value.status_code == 401
    assert sdk_error_code(raised.value) == "InvalidAuthenticationInfo"
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
