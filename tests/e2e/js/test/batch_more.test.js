"use strict";
// More transactions through @azure/data-tables submitTransaction (spec 6); batch.test.js covers the
// basics (all kinds, 100/101, index 37, partitions, duplicates, stale etag, missing entity/table, purge).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const {
  AzureNamedKeyCredential, AzureSASCredential, TableClient, TableTransaction, generateTableSas, odata,
} = require("@azure/data-tables");
const { useTarget, withTable } = require("../harness.js");

const target = useTarget();

async function txFails(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail("transaction unexpectedly succeeded");
}

async function rowKeys(client, pk) {
  const out = [];
  const queryOptions = pk === undefined ? {} : { filter: odata`PartitionKey eq ${pk}` };
  for await (const e of client.listEntities({ queryOptions })) out.push(e.rowKey);
  return out;
}

const rk = (i) => `r${String(i).padStart(3, "0")}`;

test("sub-responses carry each row key and one shared etag", async () => {
  await withTable(target.t, async (client) => {
    const keys = ["plain", "it's", "a b", "50%", "ä€😀", "x(1)"];
    const tx = new TableTransaction();
    for (const k of keys) tx.createEntity({ partitionKey: "p'q", rowKey: k, v: 1 });
    const res = await client.submitTransaction(tx.actions);
    assert.equal(res.status, 202);
    assert.equal(res.subResponses.length, keys.length);
    const etags = new Set(res.subResponses.map((s) => s.etag));
    assert.equal(etags.size, 1, JSON.stringify(res.subResponses));
    assert.ok([...etags][0].startsWith("W/\"datetime'"));
    for (const k of keys) {
      const entity = await client.getEntity("p'q", k);
      assert.equal(entity.etag, [...etags][0]);
    }
    assert.equal(res.getResponseForEntity("plain").status, 204);
    assert.deepEqual((await rowKeys(client)).sort(), [...keys].sort());
  });
});

test("a stale etag at index 37 of 100 updates fails the whole transaction", async () => {
  await withTable(target.t, async (client) => {
    const seed = Array.from({ length: 100 }, (_, i) => ["create", { partitionKey: "p", rowKey: rk(i), v: 0 }]);
    await client.submitTransaction(seed);
    const { etag } = await client.getEntity("p", rk(37));
    await client.updateEntity({ partitionKey: "p", rowKey: rk(37), v: 99 }, "Merge");
    const actions = Array.from({ length: 100 }, (_, i) =>
      ["update", { partitionKey: "p", rowKey: rk(i), v: 1 }, "Replace", i === 37 ? { etag } : undefined]);
    const err = await txFails(client.submitTransaction(actions));
    assert.equal(err.statusCode, 412);
    assert.match(err.message, /^37:/);
    for await (const e of client.listEntities()) assert.equal(e.v, e.rowKey === rk(37) ? 99 : 0, e.rowKey);
  });
});

test("101 actions: 400 InvalidInput naming index 99, nothing stored", async () => {
  await withTable(target.t, async (client) => {
    const actions = Array.from({ length: 101 }, (_, i) => ["upsert", { partitionKey: "p", rowKey: rk(i) }]);
    const err = await txFails(client.submitTransaction(actions));
    assert.equal(err.statusCode, 400);
    assert.match(err.message, /^99:/);
    assert.deepEqual(await rowKeys(client), []);
  });
});

test("merge and replace semantics inside a transaction", async () => {
  await withTable(target.t, async (client) => {
    await client.createEntity({ partitionKey: "p", rowKey: "m", a: 1, keep: "yes" });
    await client.createEntity({ partitionKey: "p", rowKey: "r", a: 1, gone: "yes" });
    await client.submitTransaction([
      ["update", { partitionKey: "p", rowKey: "m", a: 2 }, "Merge"],
      ["update", { partitionKey: "p", rowKey: "r", a: 2 }, "Replace"],
      ["upsert", { partitionKey: "p", rowKey: "n", big: { value: "12345678901234", type: "Int64" } }, "Merge"],
    ]);
    const m = await client.getEntity("p", "m");
    assert.equal(m.a, 2);
    assert.equal(m.keep, "yes");
    const r = await client.getEntity("p", "r");
    assert.equal(r.a, 2);
    assert.equal(r.gone, undefined);
    const n = await client.getEntity("p", "n", { disableTypeConversion: true });
    assert.deepEqual(n.big, { value: "12345678901234", type: "Int64" });
  });
});

test("a property that is too large fails at its index", async () => {
  await withTable(target.t, async (client) => {
    const err = await txFails(client.submitTransaction([
      ["create", { partitionKey: "p", rowKey: "ok" }],
      ["create", { partitionKey: "p", rowKey: "ok2" }],
      ["create", { partitionKey: "p", rowKey: "big", s: "x".repeat(40000) }],
    ]));
    assert.equal(err.statusCode, 400);
    assert.match(err.message, /^2:/);
    assert.deepEqual(await rowKeys(client), []);
  });
});

test("SAS-authorised transactions are checked per operation", async (t) => {
  if (!target.t.managed) return t.skip("SAS per-operation checks differ on other emulators");
  await withTable(target.t, async (client, name) => {
    await client.createEntity({ partitionKey: "p", rowKey: "victim" });
    const cred = new AzureNamedKeyCredential(target.t.account, target.t.key);
    const sas = generateTableSas(name, cred, {
      permissions: { add: true },
      expiresOn: new Date(Date.now() + 3600 * 1000),
    });
    const sasClient = new TableClient(`${target.t.endpoint}`, name, new AzureSASCredential(sas),
      { allowInsecureConnection: true });
    await sasClient.submitTransaction([["create", { partitionKey: "p", rowKey: "a" }]]);
    const err = await txFails(sasClient.submitTransaction([
      ["create", { partitionKey: "p", rowKey: "b" }], ["delete", { partitionKey: "p", rowKey: "victim" }]]));
    assert.equal(err.statusCode, 403);
    assert.match(err.message, /^1:/);
    assert.deepEqual((await rowKeys(client)).sort(), ["a", "victim"]);
  });
});
