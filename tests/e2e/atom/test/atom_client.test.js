"use strict";
// An AtomPub client of the seed era against tablestone: azure-storage-legacy 0.11.2, the table
// client of the Node azure SDK 0.x. It sends x-ms-version 2011-08-18, Atom entries (Edm.Boolean as
// 1/0, Edm.DateTime from JS dates, typed values as { $: { type }, _: value }), no Accept header,
// and entity group transactions as multipart bodies with bare LF line ends; it reads Atom feeds,
// entries, continuation headers and XML error bodies. Its wire format is used as published: the
// only settings made here are the endpoint and path-style addressing, which the client turns on by
// itself only for 127.0.0.1:10002.
//
// The server comes from the JS suite's harness (tests/e2e/js/harness.js: TABLESTONE_BIN, or
// TABLESTONE_E2E_CONNECTION_STRING for another endpoint).

const { test } = require("node:test");
const assert = require("node:assert/strict");
const azure = require("azure-storage-legacy");
const { useTarget, uniqueTableName } = require("../../js/harness.js");

const target = useTarget();

function tableService() {
  const { account, key, endpoint } = target.t;
  const host = new URL(endpoint).origin;
  const service = azure.createTableService(account, key, host, new azure.SharedKeyTable(account, key, true));
  service.usePathStyleUri = true;
  return service;
}

// The client's callbacks as promises: resolves with the callback's arguments after `error`.
function call(service, method, ...args) {
  return new Promise((resolve, reject) => {
    service[method](...args, (error, ...results) => (error ? reject(error) : resolve(results)));
  });
}

async function rejects(promise, statusCode, code) {
  await assert.rejects(promise, (error) => {
    assert.equal(error.statusCode, statusCode, `status of ${error.code}: ${error.message}`);
    assert.equal(error.code, code);
    return true;
  });
}

async function withTable(fn) {
  const service = tableService();
  const name = uniqueTableName("atom");
  await call(service, "createTable", name);
  try {
    return await fn(service, name);
  } finally {
    await call(service, "deleteTable", name).catch(() => {});
  }
}

test("tables: create, list, get, duplicate and delete", async () => {
  const service = tableService();
  const name = uniqueTableName("atom");
  const [created] = await call(service, "createTable", name);
  assert.equal(created.TableName, name);
  const [tables] = await call(service, "queryTables");
  assert.ok(tables.some((t) => t.TableName === name), JSON.stringify(tables));
  const [got] = await call(service, "getTable", name);
  assert.equal(got.TableName, name);
  await rejects(call(service, "createTable", name), 409, "TableAlreadyExists");
  await call(service, "deleteTable", name);
  await rejects(call(service, "getTable", name), 404, "ResourceNotFound");
  await rejects(call(service, "deleteTable", name), 404, "ResourceNotFound");
});

test("every Edm type round-trips", async () => {
  await withTable(async (service, table) => {
    const since = new Date(Date.UTC(2011, 6, 10, 8, 30, 15, 123));
    const entity = {
      PartitionKey: "types",
      RowKey: "all",
      Text: "caf\u00e9 <&> \"quoted\" 'single'",
      Padded: "  spaces kept  ",
      Count: 23,
      Negative: -2147483648,
      Big: 1234567890123,  // beyond Int32: the client types it Edm.Int64
      TypedInt64: { $: { type: "Edm.Int64" }, _: "-9007199254740991" },
      Ratio: 200.23,
      WholeDouble: { $: { type: "Edm.Double" }, _: 10 },
      Active: true,      // written as 1
      Closed: false,     // written as 0
      Since: since,
      Code: { $: { type: "Edm.Guid" }, _: "c9da6455-213d-42c9-9a79-3e9149a57833" },
      Blob: { $: { type: "Edm.Binary" }, _: "binary payload" },
    };
    const [inserted] = await call(service, "insertEntity", table, entity);
    assert.equal(inserted.Count, 23);
    assert.match(inserted._.etag, /^W\/"datetime'/);
    const [got] = await call(service, "queryEntity", table, "types", "all");
    assert.equal(got._.etag, inserted._.etag);
    assert.equal(got.Text, entity.Text);
    assert.equal(got.Padded, entity.Padded);
    assert.equal(got.Count, 23);
    assert.equal(got.Negative, -2147483648);
    assert.equal(got.Big, 1234567890123);
    assert.equal(got.TypedInt64, -9007199254740991);
    assert.equal(got.Ratio, 200.23);
    assert.equal(got.WholeDouble, 10);
    assert.equal(got.Active, true);
    assert.equal(got.Closed, false);
    assert.equal(got.Since.getTime(), since.getTime());
    assert.equal(got.Code, "c9da6455-213d-42c9-9a79-3e9149a57833");
    assert.equal(got.Blob, "binary payload");
    assert.ok(got.Timestamp instanceof Date && got.Timestamp.getFullYear() >= 2024);

    // The types the server stored, as its filter sees them: Int64, Double, Boolean, DateTime, Guid.
    const query = azure.TableQuery.select().from(table)
      .where("Big eq 1234567890123L and WholeDouble eq 10.0 and Active eq true and Closed eq false")
      .and("Since eq datetime'" + since.toISOString() + "'")
      .and("Code eq guid'c9da6455-213d-42c9-9a79-3e9149a57833'");
    const [found] = await call(service, "queryEntities", query);
    assert.equal(found.length, 1);
  });
});

test("merge, replace, upserts and delete", async () => {
  await withTable(async (service, table) => {
    await call(service, "insertEntity", table, { PartitionKey: "p", RowKey: "r", A: 1, B: "b" });
    await call(service, "mergeEntity", table, { PartitionKey: "p", RowKey: "r", C: true });
    let [got] = await call(service, "queryEntity", table, "p", "r");
    assert.deepEqual([got.A, got.B, got.C], [1, "b", true]);
    await call(service, "updateEntity", table, { PartitionKey: "p", RowKey: "r", D: 4.5 });
    [got] = await call(service, "queryEntity", table, "p", "r");
    assert.deepEqual([got.A, got.D], [undefined, 4.5]);
    await call(service, "insertOrReplaceEntity", table, { PartitionKey: "p", RowKey: "s", E: "e" });
    await call(service, "insertOrMergeEntity", table, { PartitionKey: "p", RowKey: "s", F: "f" });
    [got] = await call(service, "queryEntity", table, "p", "s");
    assert.deepEqual([got.E, got.F], ["e", "f"]);
    await call(service, "deleteEntity", table, { PartitionKey: "p", RowKey: "s" });
    await rejects(call(service, "queryEntity", table, "p", "s"), 404, "ResourceNotFound");
  });
});

test("404, 409 and 412 as the client sees them", async () => {
  await withTable(async (service, table) => {
    const [inserted] = await call(service, "insertEntity", table, { PartitionKey: "p", RowKey: "r", V: 1 });
    await rejects(call(service, "queryEntity", table, "p", "missing"), 404, "ResourceNotFound");
    await rejects(call(service, "insertEntity", table, { PartitionKey: "p", RowKey: "r", V: 2 }), 409,
      "EntityAlreadyExists");
    // A write with the current ETag succeeds; the same (now stale) ETag then fails.
    const current = { PartitionKey: "p", RowKey: "r", V: 3, _: { etag: inserted._.etag } };
    await call(service, "updateEntity", table, current, { checkEtag: true });
    await rejects(call(service, "updateEntity", table, current, { checkEtag: true }), 412,
      "UpdateConditionNotSatisfied");
    await rejects(call(service, "deleteEntity", table, current, { checkEtag: true }), 412,
      "UpdateConditionNotSatisfied");
    await rejects(call(service, "insertEntity", "nosuchtable", { PartitionKey: "p", RowKey: "r" }), 404,
      "TableNotFound");
  });
});

test("a batch, and a failing one", async () => {
  await withTable(async (service, table) => {
    service.beginBatch();
    for (let i = 0; i < 5; i++) {
      service.insertEntity(table, { PartitionKey: "batch", RowKey: `r${i}`, N: i, Flag: i % 2 === 0 });
    }
    // This client hands back the first operation's response only (it tests `isSuccessful` on the
    // wrong object), so the rows are checked by a query.
    const [, first] = await call(service, "commitBatch");
    assert.equal(first.statusCode, 201);
    assert.match(first.headers.ETag || first.headers.etag, /^W\/"datetime'/);
    const [rows] = await call(service, "queryEntities", azure.TableQuery.select().from(table));
    assert.deepEqual(rows.map((e) => [e.RowKey, e.N, e.Flag]),
      [0, 1, 2, 3, 4].map((i) => [`r${i}`, i, i % 2 === 0]));

    service.beginBatch();
    service.insertEntity(table, { PartitionKey: "batch", RowKey: "new" });
    service.insertEntity(table, { PartitionKey: "batch", RowKey: "r3" });  // exists: the batch fails whole
    await assert.rejects(call(service, "commitBatch"), (error) => {
      assert.equal(error.code, "EntityAlreadyExists");
      return true;
    });
    await rejects(call(service, "queryEntity", table, "batch", "new"), 404, "ResourceNotFound");
  });
});

test("continuation over 2,500 entities", async () => {
  await withTable(async (service, table) => {
    for (let b = 0; b < 25; b++) {
      service.beginBatch();
      for (let i = 0; i < 100; i++) {
        const n = b * 100 + i;
        service.insertEntity(table, { PartitionKey: `p${Math.floor(n / 1000)}`, RowKey: String(n).padStart(5, "0"), N: n });
      }
      await call(service, "commitBatch");
    }
    const seen = [];
    let pages = 0;
    let [entities, continuation] = await call(service, "queryEntities", azure.TableQuery.select().from(table));
    for (;;) {
      pages++;
      for (const e of entities) seen.push(e.N);
      if (!continuation || !continuation.hasNextPage()) break;
      [entities, continuation] = await new Promise((resolve, reject) =>
        continuation.getNextPage((error, e, c) => (error ? reject(error) : resolve([e, c]))));
    }
    assert.equal(pages, 3);  // 1,000 entities a page
    assert.equal(seen.length, 2500);
    assert.deepEqual(seen, Array.from({ length: 2500 }, (_, i) => i));
  });
});
