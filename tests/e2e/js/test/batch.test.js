"use strict";
// Transactions through @azure/data-tables submitTransaction (spec 6).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { TableTransaction } = require("@azure/data-tables");
const { useTarget, withTable, uniqueTableName } = require("../harness.js");

const target = useTarget();

async function rowKeys(client) {
  const out = [];
  for await (const e of client.listEntities()) out.push(e.rowKey);
  return out;
}

async function txFails(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail("transaction unexpectedly succeeded");
}

const rk = (i) => `r${String(i).padStart(3, "0")}`;

test("all action kinds in one transaction", async () => {
  await withTable(target.t, async (client) => {
    await client.createEntity({ partitionKey: "p", rowKey: "upd", a: 1 });
    await client.createEntity({ partitionKey: "p", rowKey: "mrg", a: 1, keep: "yes" });
    await client.createEntity({ partitionKey: "p", rowKey: "del" });
    const { etag } = await client.getEntity("p", "upd");
    const tx = new TableTransaction();
    tx.createEntity({ partitionKey: "p", rowKey: "new", n: 1 });
    tx.updateEntity({ partitionKey: "p", rowKey: "upd", a: 2 }, "Replace", { etag });
    tx.updateEntity({ partitionKey: "p", rowKey: "mrg", a: 2 }, "Merge");
    tx.upsertEntity({ partitionKey: "p", rowKey: "um", m: 1 }, "Merge");
    tx.upsertEntity({ partitionKey: "p", rowKey: "ur", r: 1 }, "Replace");
    tx.deleteEntity("p", "del");
    const res = await client.submitTransaction(tx.actions);
    assert.equal(res.status, 202);
    assert.equal(res.subResponses.length, 6);
    assert.ok(res.subResponses.every((s) => s.status === 204), JSON.stringify(res.subResponses));
    assert.ok(res.subResponses.slice(0, 5).every((s) => s.etag));
    assert.deepEqual(await rowKeys(client), ["mrg", "new", "um", "upd", "ur"]);
    const m = await client.getEntity("p", "mrg");
    assert.equal(m.a, 2);
    assert.equal(m.keep, "yes");
  });
});

test("100 actions accepted, 101 rejected with nothing stored", async () => {
  await withTable(target.t, async (client) => {
    const ok = Array.from({ length: 100 }, (_, i) => ["create", { partitionKey: "p", rowKey: rk(i) }]);
    const res = await client.submitTransaction(ok);
    assert.equal(res.subResponses.length, 100);
    const bad = Array.from({ length: 101 }, (_, i) => ["create", { partitionKey: "q", rowKey: rk(i) }]);
    await txFails(client.submitTransaction(bad));
    const q = [];
    for await (const e of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'q'" } })) q.push(e);
    assert.equal(q.length, 0);
  });
});

test("a failure at index 37 rolls everything back and names index 37", async () => {
  await withTable(target.t, async (client) => {
    await client.createEntity({ partitionKey: "p", rowKey: rk(37) });
    const actions = Array.from({ length: 60 }, (_, i) => ["create", { partitionKey: "p", rowKey: rk(i) }]);
    const err = await txFails(client.submitTransaction(actions));
    assert.equal(err.statusCode, 409);
    assert.equal(err.code, "EntityAlreadyExists");
    assert.match(err.message, /^37:/);
    assert.deepEqual(await rowKeys(client), [rk(37)]);
  });
});

test("different partitions are rejected (by the SDK, or by the service)", async () => {
  await withTable(target.t, async (client) => {
    const err = await txFails(client.submitTransaction([
      ["create", { partitionKey: "a", rowKey: "1" }], ["create", { partitionKey: "b", rowKey: "1" }]]));
    if (err.statusCode === undefined) {
      // @azure/data-tables 13 checks this client-side; the service check is tested with raw HTTP
      // in tests/e2e/python/test_batch.py.
      assert.match(err.message, /same partitionKey/);
    } else {
      assert.equal(err.statusCode, 400);
      assert.equal(err.code, "CommandsInBatchActOnDifferentPartitions");
      assert.match(err.message, /^1:/);
    }
    assert.deepEqual(await rowKeys(client), []);
  });
});

test("the same row twice is rejected", async () => {
  await withTable(target.t, async (client) => {
    const err = await txFails(client.submitTransaction([
      ["create", { partitionKey: "p", rowKey: "x" }], ["upsert", { partitionKey: "p", rowKey: "x", v: 2 }]]));
    assert.equal(err.statusCode, 400);
    assert.equal(err.code, "InvalidDuplicateRow");
    assert.deepEqual(await rowKeys(client), []);
  });
});

test("a stale etag inside a transaction gives 412 and rolls back", async () => {
  await withTable(target.t, async (client) => {
    const { etag } = await client.createEntity({ partitionKey: "p", rowKey: "s", v: 1 });
    await client.updateEntity({ partitionKey: "p", rowKey: "s", v: 2 });
    const err = await txFails(client.submitTransaction([
      ["create", { partitionKey: "p", rowKey: "n" }],
      ["update", { partitionKey: "p", rowKey: "s", v: 3 }, "Merge", { etag }]]));
    assert.equal(err.statusCode, 412);
    assert.equal(err.code, "UpdateConditionNotSatisfied");
    assert.match(err.message, /^1:/);
    assert.deepEqual(await rowKeys(client), ["s"]);
    assert.equal((await client.getEntity("p", "s")).v, 2);
  });
});

test("deleting a missing entity inside a transaction fails with 404 and rolls back", async () => {
  await withTable(target.t, async (client) => {
    await client.createEntity({ partitionKey: "p", rowKey: "keep" });
    const err = await txFails(client.submitTransaction([
      ["delete", { partitionKey: "p", rowKey: "keep" }], ["delete", { partitionKey: "p", rowKey: "missing" }]]));
    assert.equal(err.statusCode, 404);
    assert.equal(err.code, "ResourceNotFound");
    assert.match(err.message, /^1:/);
    assert.deepEqual(await rowKeys(client), ["keep"]);
  });
});

test("a transaction on a missing table fails with TableNotFound at index 0", async () => {
  const client = target.t.tableClient(uniqueTableName());
  const err = await txFails(client.submitTransaction([["create", { partitionKey: "p", rowKey: "r" }]]));
  assert.equal(err.statusCode, 404);
  assert.equal(err.code, "TableNotFound");
});

test("purge pattern: list a partition and delete it in chunks of 100", async () => {
  await withTable(target.t, async (client) => {
    for (let start = 0; start < 230; start += 100) {
      const n = Math.min(100, 230 - start);
      await client.submitTransaction(Array.from({ length: n }, (_, i) => ["upsert", { partitionKey: "purge", rowKey: rk(start + i) }]));
    }
    await client.createEntity({ partitionKey: "other", rowKey: "stay" });
    const victims = [];
    for await (const e of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'purge'", select: ["PartitionKey", "RowKey"] } })) {
      victims.push(e);
    }
    assert.equal(victims.length, 230);
    for (let i = 0; i < victims.length; i += 100) {
      await client.submitTransaction(victims.slice(i, i + 100).map((e) => ["delete", e]));
    }
    assert.deepEqual(await rowKeys(client), ["stay"]);
  });
});

// Issue 36, item 1: the transport refuses a body over its limit from the headers; the SDK goes on
// writing the transaction and, before the server's lingering close, met EPIPE (retried, then
// thrown as a socket error) instead of reading the 413.
test("a transaction over 4 MiB gets 413 RequestBodyTooLarge, not a socket error", async () => {
  await withTable(target.t, async (client) => {
    const big = "x".repeat(32000);
    const actions = Array.from({ length: 80 }, (_, i) => ["create", { partitionKey: "p", rowKey: rk(i), a: big, b: big }]);
    const err = await txFails(client.submitTransaction(actions));
    // A RestError with the service's status and message; a socket error has neither.
    assert.equal(err.name, "RestError", err.message);
    assert.equal(err.statusCode, 413, err.message);
    assert.match(err.message, /request body is too large/i);
    assert.deepEqual(await rowKeys(client), []);
  });
});
