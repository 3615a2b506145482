"use strict";
// Authentication, SAS and service-level operations through @azure/data-tables (spec 8, 9):
// AzureNamedKeyCredential (SharedKeyLite), AzureSASCredential with generateTableSas /
// generateAccountSas, getAccessPolicy / setAccessPolicy, setProperties / getProperties,
// getStatistics on the secondary endpoint, CORS preflight.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  generateAccountSas,
  generateTableSas,
} = require("@azure/data-tables");
const { useTarget, uniqueTableName, azuriteWrong } = require("../harness.js");

const target = useTarget();
const opts = { allowInsecureConnection: true };
const hourFromNow = () => new Date(Date.now() + 3600 * 1000);

function namedKey(t) {
  return new AzureNamedKeyCredential(t.account, t.key);
}

// Runs fn with a fresh table holding PartitionKeys a..d x RowKeys 1..3.
async function withFilledTable(fn) {
  const t = target.t;
  const name = uniqueTableName();
  const service = t.serviceClient();
  await service.createTable(name);
  const owner = t.tableClient(name);
  try {
    for (const pk of "abcd") {
      for (const rk of "123") await owner.createEntity({ partitionKey: pk, rowKey: rk, v: pk + rk });
    }
    return await fn(name, owner);
  } finally {
    await service.deleteTable(name).catch(() => {});
  }
}

async function collect(iter) {
  const out = [];
  for await (const x of iter) out.push(x);
  return out;
}

// @azure/data-tables 13 leaves err.code unset: the service code is in err.details.errorCode (the
// x-ms-error-code header) and, for JSON error bodies, err.details.odataError.code.
async function expectRestError(promise, status, code) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.statusCode, status, `status of ${err.message}`);
    if (code) {
      const d = err.details || {};
      assert.equal(d.errorCode, code, `x-ms-error-code: ${err.message}`);
      if (d.odataError) assert.equal(d.odataError.code, code, `body code: ${err.message}`);
    }
    return true;
  });
}

const defaultProperties = {
  logging: { version: "1.0", delete: false, read: false, write: false, retentionPolicy: { enabled: false } },
  hourMetrics: { version: "1.0", enabled: false, retentionPolicy: { enabled: false } },
  minuteMetrics: { version: "1.0", enabled: false, retentionPolicy: { enabled: false } },
  cors: [],
};

test("AzureNamedKeyCredential (SharedKeyLite): right key works, wrong key is AuthenticationFailed", async () => {
  const t = target.t;
  const good = new TableServiceClient(t.endpoint, namedKey(t), opts);
  await collect(good.listTables());
  const bad = new TableServiceClient(
    t.endpoint,
    new AzureNamedKeyCredential(t.account, Buffer.alloc(64, 7).toString("base64")),
    opts,
  );
  await expectRestError(collect(bad.listTables()), 403, "AuthenticationFailed");
});

test("generateTableSas read-only token: reads work, writes are AuthorizationPermissionMismatch", async () => {
  await withFilledTable(async (name) => {
    const t = target.t;
    const sas = generateTableSas(name, namedKey(t), { permissions: { query: true }, expiresOn: hourFromNow() });
    const client = new TableClient(t.endpoint, name, new AzureSASCredential(sas), opts);
    assert.equal((await collect(client.listEntities())).length, 12);
    assert.equal((await client.getEntity("a", "1")).v, "a1");
    await expectRestError(client.createEntity({ partitionKey: "z", rowKey: "z" }), 403, "AuthorizationPermissionMismatch");
    await expectRestError(client.updateEntity({ partitionKey: "a", rowKey: "1", v: 0 }), 403, "AuthorizationPermissionMismatch");
    // Table SAS cannot list tables.
    const service = new TableServiceClient(t.endpoint, new AzureSASCredential(sas), opts);
    await expectRestError(collect(service.listTables()), 403, "AuthorizationFailure");
  });
});

test("generateTableSas key range limits queries, writes and transactions", azuriteWrong("Azurite ignores SAS key ranges"), async () => {
  await withFilledTable(async (name, owner) => {
    const t = target.t;
    const sas = generateTableSas(name, namedKey(t), {
      permissions: { query: true, add: true, update: true, delete: true },
      expiresOn: hourFromNow(),
      startPartitionKey: "b",
      startRowKey: "2",
      endPartitionKey: "c",
      endRowKey: "2",
    });
    const client = new TableClient(t.endpoint, name, new AzureSASCredential(sas), opts);
    const got = (await collect(client.listEntities())).map((e) => e.partitionKey + e.rowKey);
    assert.deepEqual(got, ["b2", "b3", "c1", "c2"]);
    await client.upsertEntity({ partitionKey: "c", rowKey: "0", v: "in" });
    await expectRestError(client.createEntity({ partitionKey: "a", rowKey: "9" }), 403, "AuthorizationFailure");
    await expectRestError(client.deleteEntity("d", "1"), 403, "AuthorizationFailure");
    await expectRestError(client.getEntity("b", "1"), 403, "AuthorizationFailure");
    // Transaction with one operation outside the range: nothing is written.
    await assert.rejects(
      client.submitTransaction([
        ["create", { partitionKey: "c", rowKey: "1a" }],
        ["create", { partitionKey: "c", rowKey: "7" }],
      ]),
    );
    await expectRestError(owner.getEntity("c", "1a"), 404);
    await client.submitTransaction([["create", { partitionKey: "c", rowKey: "1a" }]]);
    assert.equal((await owner.getEntity("c", "1a")).rowKey, "1a");
  });
});

test("setAccessPolicy / getAccessPolicy round trip and a SAS bound to a stored policy", async () => {
  await withFilledTable(async (name, owner) => {
    const t = target.t;
    assert.deepEqual([...(await owner.getAccessPolicy())], []);
    const start = new Date("2021-07-08T09:10:09Z");
    const expiry = hourFromNow();
    expiry.setMilliseconds(0);
    await owner.setAccessPolicy([
      { id: "readers", accessPolicy: { permission: "r", start, expiry } },
      { id: "writers", accessPolicy: { permission: "raud", expiry } },
      { id: "bare" },
    ]);
    const acl = await owner.getAccessPolicy();
    assert.deepEqual(
      acl.map((s) => s.id),
      ["readers", "writers", "bare"],
    );
    assert.equal(acl[0].accessPolicy.permission, "r");
    assert.equal(acl[0].accessPolicy.start.toISOString(), start.toISOString());
    assert.equal(acl[0].accessPolicy.expiry.toISOString(), expiry.toISOString());
    // No AccessPolicy element on the wire; the SDK hands back an empty object for it.
    const bare = acl[2].accessPolicy || {};
    assert.equal(bare.permission, undefined);
    assert.equal(bare.start, undefined);
    assert.equal(bare.expiry, undefined);

    const sas = generateTableSas(name, namedKey(t), { identifier: "readers" });
    const client = new TableClient(t.endpoint, name, new AzureSASCredential(sas), opts);
    assert.equal((await collect(client.listEntities())).length, 12);
    await expectRestError(client.createEntity({ partitionKey: "z", rowKey: "z" }), 403, "AuthorizationPermissionMismatch");

    // Six identifiers are refused; removing the policy revokes the token.
    const six = Array.from({ length: 6 }, (_, i) => ({ id: `p${i}`, accessPolicy: { permission: "r" } }));
    await expectRestError(owner.setAccessPolicy(six), 400, "InvalidXmlDocument");
    await owner.setAccessPolicy([]);
    assert.deepEqual([...(await owner.getAccessPolicy())], []);
    await expectRestError(collect(client.listEntities()), 403, "AuthenticationFailed");
  });
});

test("generateAccountSas: permissions per operation, ACL refused", async () => {
  const t = target.t;
  const readSas = generateAccountSas(namedKey(t), {
    expiresOn: hourFromNow(),
    permissions: { query: true, list: true },
    resourceTypes: "sco",
    services: { table: true },
  });
  const reader = new TableServiceClient(t.endpoint, new AzureSASCredential(readSas), opts);
  await collect(reader.listTables());
  await expectRestError(reader.createTable(uniqueTableName()), 403, "AuthorizationPermissionMismatch");

  const allSas = generateAccountSas(namedKey(t), {
    expiresOn: hourFromNow(),
    permissions: { query: true, write: true, delete: true, list: true, add: true, update: true },
    resourceTypes: "sco",
    services: { table: true },
  });
  const writer = new TableServiceClient(t.endpoint, new AzureSASCredential(allSas), opts);
  const name = uniqueTableName();
  await writer.createTable(name);
  try {
    const tc = new TableClient(t.endpoint, name, new AzureSASCredential(allSas), opts);
    await tc.createEntity({ partitionKey: "p", rowKey: "r" });
    await tc.upsertEntity({ partitionKey: "p", rowKey: "r", x: 1 }, "Merge");
    await tc.submitTransaction([["create", { partitionKey: "p", rowKey: "s" }]]);
    await tc.deleteEntity("p", "r");
    assert.deepEqual(
      (await collect(tc.listEntities())).map((e) => e.rowKey),
      ["s"],
    );
    await expectRestError(tc.getAccessPolicy(), 403, "AuthorizationFailure");
    const readerTable = new TableClient(t.endpoint, name, new AzureSASCredential(readSas), opts);
    await expectRestError(readerTable.createEntity({ partitionKey: "p", rowKey: "x" }), 403, "AuthorizationPermissionMismatch");

    const blobOnly = generateAccountSas(namedKey(t), {
      expiresOn: hourFromNow(),
      permissions: { query: true, list: true },
      resourceTypes: "sco",
      services: { blob: true },
    });
    const wrongService = new TableClient(t.endpoint, name, new AzureSASCredential(blobOnly), opts);
    await expectRestError(collect(wrongService.listEntities()), 403, "AuthorizationServiceMismatch");
  } finally {
    await writer.deleteTable(name);
  }
});

test("setProperties / getProperties: defaults, CORS rules, partial update", async () => {
  const t = target.t;
  const service = t.serviceClient();
  await service.setProperties(defaultProperties);
  try {
    const initial = await service.getProperties();
    assert.equal(initial.logging.version, "1.0");
    assert.equal(initial.logging.read, false);
    assert.equal(initial.hourMetrics.enabled, false);
    assert.deepEqual(initial.cors, []);

    await service.setProperties({
      hourMetrics: { version: "1.0", enabled: true, includeAPIs: true, retentionPolicy: { enabled: true, days: 4 } },
      cors: [
        {
          allowedOrigins: "http://app.example",
          allowedMethods: "GET,PUT",
          allowedHeaders: "x-ms-meta-*,content-type",
          exposedHeaders: "x-ms-meta-*",
          maxAgeInSeconds: 60,
        },
      ],
    });
    const after = await service.getProperties();
    assert.equal(after.hourMetrics.enabled, true);
    assert.equal(after.hourMetrics.includeAPIs, true);
    assert.equal(after.hourMetrics.retentionPolicy.days, 4);
    assert.equal(after.logging.read, false); // untouched section kept
    assert.equal(after.cors.length, 1);
    assert.equal(after.cors[0].allowedOrigins, "http://app.example");
    assert.equal(after.cors[0].maxAgeInSeconds, 60);

    // The stored rule answers a preflight (anonymous) and decorates actual requests.
    const pre = await t.raw("OPTIONS", "/Tables", {
      sign: false,
      headers: { Origin: "http://app.example", "Access-Control-Request-Method": "PUT" },
    });
    assert.equal(pre.status, 200);
    assert.equal(pre.headers["access-control-allow-origin"], "http://app.example");
    assert.equal(pre.headers["access-control-max-age"], "60");
    const denied = await t.raw("OPTIONS", "/Tables", {
      sign: false,
      headers: { Origin: "http://evil.example", "Access-Control-Request-Method": "PUT" },
    });
    assert.equal(denied.status, 403);
    assert.equal(denied.headers["x-ms-error-code"], "CorsPreflightFailure");
    const actual = await t.raw("GET", "/Tables", { headers: { Origin: "http://app.example" } });
    assert.equal(actual.status, 200);
    assert.equal(actual.headers["access-control-allow-origin"], "http://app.example");
    assert.match(actual.headers["access-control-expose-headers"], /x-ms-request-id/);
  } finally {
    await service.setProperties(defaultProperties);
  }
  assert.deepEqual((await service.getProperties()).cors, []);
});

test("getStatistics on the path-style secondary endpoint; writes there are refused", azuriteWrong("Azurite serves writes on the secondary"), async () => {
  const t = target.t;
  if (t.basePath !== `/${t.account}`) return; // path-style only
  // The JS SDK derives the secondary by suffixing the first host label, which only leaves a
  // single-label host ("localhost") alone; so address the secondary path directly.
  const secondary = `http://localhost:${t.port}/${t.account}-secondary`;
  const service = new TableServiceClient(secondary, namedKey(t), opts);
  const stats = await service.getStatistics();
  assert.equal(stats.geoReplication.status, "live");
  assert.ok(stats.geoReplication.lastSyncTime instanceof Date);
  await collect(service.listTables());
  await expectRestError(service.createTable(uniqueTableName()), 403, "AuthorizationFailure");
  // Stats on the primary: 400 InvalidQueryParameterValue.
  await expectRestError(t.serviceClient().getStatistics(), 400, "InvalidQueryParameterValue");
});
