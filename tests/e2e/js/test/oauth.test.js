"use strict";
// --oauth basic over HTTPS through @azure/data-tables: a TokenCredential returning a hand-made JWT
// (tablestone checks audience, issuer and lifetime, never the signature: there is no identity
// provider). Expired, wrong-audience, wrong-issuer and malformed tokens get 401
// InvalidAuthenticationInfo with the service's WWW-Authenticate challenge. The throwaway certificate
// is trusted through the SDK's tlsOptions (the pipeline's TLS settings), so this runs in-process.
const { test, before, after } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const https = require("node:https");
const { TableClient, TableServiceClient } = require("@azure/data-tables");
const { ACCOUNT, uniqueTableName } = require("../harness.js");
const { startTlsServer } = require("../server.js");

const external = Boolean(process.env.TABLESTONE_E2E_CONNECTION_STRING);
let tls;
let server;
let ca;
let endpoint;

before(async () => {
  if (external) return;
  tls = await startTlsServer("tablestone-js-oauth.", ["--oauth", "basic"]);
  server = tls.server;
  ca = fs.readFileSync(tls.cert);
  endpoint = `https://127.0.0.1:${server.port}/${ACCOUNT}`;
});

after(async () => {
  if (tls) assert.equal(await tls.stop(), 0);
});

const b64url = (obj) => Buffer.from(JSON.stringify(obj)).toString("base64url");

function makeJwt({ aud = "https://storage.azure.com", iss = "https://sts.windows.net/tenant-1/", expIn = 3600,
  nbfIn = -60 } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return [b64url({ alg: "RS256", typ: "JWT" }),
    b64url({ aud, iss, tid: "tenant-1", nbf: now + nbfIn, exp: now + expIn, oid: "00000000-0000-0000-0000-000000000001" }),
    Buffer.from("not-a-signature").toString("base64url")].join(".");
}

// A TokenCredential (the shape DefaultAzureCredential has) returning a fixed token; records each call.
class FakeCredential {
  constructor(token) {
    this.token = token;
    this.calls = [];
  }

  async getToken(scopes, options = {}) {
    this.calls.push({ scopes: [].concat(scopes), tenantId: options.tenantId });
    return { token: this.token, expiresOnTimestamp: Date.now() + 3600 * 1000 };
  }
}

const clientOptions = () => ({ tlsOptions: { ca }, retryOptions: { maxRetries: 0 } });

test("a token credential with a valid JWT gets full data-plane access", { skip: external }, async () => {
  const credential = new FakeCredential(makeJwt());
  const service = new TableServiceClient(endpoint, credential, clientOptions());
  const name = uniqueTableName();
  await service.createTable(name);
  const table = new TableClient(endpoint, name, credential, clientOptions());
  await table.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
  await table.submitTransaction([["upsert", { partitionKey: "p", rowKey: "s", v: 2 }]]);
  const rows = [];
  for await (const e of table.listEntities()) rows.push([e.rowKey, e.v]);
  assert.deepEqual(rows, [["r", 1], ["s", 2]]);
  await service.deleteTable(name);
  assert.ok(credential.calls.length > 0);
  assert.deepEqual(credential.calls[0].scopes, ["https://storage.azure.com/.default"]);
  assert.match(server.logTail(200000), /signatures are NOT verified/);
});

// The raw 401: status, code and the service's challenge.
function rawGet(token) {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: "127.0.0.1", port: server.port, path: `/${ACCOUNT}/Tables`, ca,
      headers: { Authorization: `Bearer ${token}`, "x-ms-version": "2019-02-02",
        Accept: "application/json;odata=nometadata" } }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers,
        body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
  });
}

const refused = {
  expired: makeJwt({ expIn: -3600, nbfIn: -7200 }),
  "wrong audience": makeJwt({ aud: "https://vault.azure.net" }),
  "wrong issuer": makeJwt({ iss: "https://example.com/tenant-1/" }),
  malformed: "not.a.jwt",
};

for (const [label, token] of Object.entries(refused)) {
  test(`${label} token: 401 InvalidAuthenticationInfo with the WWW-Authenticate challenge`, { skip: external },
    async () => {
      const credential = new FakeCredential(token);
      const service = new TableServiceClient(endpoint, credential, clientOptions());
      let err;
      try {
        for await (const t of service.listTables()) void t;
      } catch (e) {
        err = e;
      }
      assert.ok(err, "listing tables with a refused token succeeded");
      assert.equal(err.statusCode, 401, String(err));
      assert.equal(err.details && err.details.errorCode, "InvalidAuthenticationInfo");

      const r = await rawGet(token);
      assert.equal(r.status, 401);
      assert.equal(JSON.parse(r.body)["odata.error"].code, "InvalidAuthenticationInfo");
      assert.match(r.headers["www-authenticate"],
        /^Bearer authorization_uri=https:\/\/login\.microsoftonline\.com\/[^ ]+\/oauth2\/authorize resource_id=https:\/\/storage\.azure\.com$/);
    });
}
