"use strict";
// TableQuery through the legacy SDK: where/and/or with placeholders, the typed filter builders,
// select and top, and continuation tokens over more than one 1,000-entity page.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { azure, useTarget, call, withTable, gen } = require("../harness.js");

const { TableQuery } = azure;
const { QueryComparisons: Q, TableOperators: Op } = azure.TableUtilities;

const h = useTarget();

// Inserts through TableBatch: one batch per partition and 100 entities (the service's limits).
async function insertBatched(svc, table, entities) {
  const byPartition = new Map();
  for (const e of entities) {
    const pk = e.PartitionKey._;
    if (!byPartition.has(pk)) byPartition.set(pk, []);
    byPartition.get(pk).push(e);
  }
  for (const group of byPartition.values()) {
    for (let i = 0; i < group.length; i += 100) {
      const batch = new azure.TableBatch();
      for (const e of group.slice(i, i + 100)) batch.insertEntity(e);
      await call(svc, "executeBatch", table, batch);
    }
  }
}

const rowKeys = (result) => result.entries.map((e) => e.RowKey._).sort();

test("where/and/or with placeholders and the typed filter builders", async () => {
  await withTable(h.t, async (svc, table) => {
    const base = new Date("2020-01-01T00:00:00Z").getTime();
    const guids = ["00000000-0000-0000-0000-000000000000", "11111111-2222-3333-4444-555555555555"];
    const entities = [];
    for (let i = 0; i < 10; i++) {
      entities.push({
        PartitionKey: gen.String(i < 5 ? "a" : "b"),
        RowKey: gen.String(`r${i}`),
        N: gen.Int32(i),
        Big: gen.Int64(String(2 ** 40 + i)),
        D: gen.Double(i + 0.5),
        Even: gen.Boolean(i % 2 === 0),
        When: gen.DateTime(new Date(base + i * 86400000)),
        Id: gen.Guid(guids[i % 2]),
        Bytes: gen.Binary(Buffer.from([i])),
        Name: gen.String(`it's ${i}`),
      });
    }
    await insertBatched(svc, table, entities);
    const run = async (query) => rowKeys((await call(svc, "queryEntities", table, query, null)).result);

    assert.deepEqual(await run(new TableQuery().where("PartitionKey eq ?", "a").and("N ge ?int32?", 3)), ["r3", "r4"]);
    assert.deepEqual(await run(new TableQuery().where("N lt ?", 1).or("N gt ?", 8)), ["r0", "r9"]);
    assert.deepEqual(await run(new TableQuery().where("Big gt ?int64?", String(2 ** 40 + 7))), ["r8", "r9"]);
    assert.deepEqual(await run(new TableQuery().where("Name eq ?", "it's 4")), ["r4"]);
    assert.deepEqual(await run(new TableQuery().where(TableQuery.int64Filter("Big", Q.LESS_THAN, String(2 ** 40 + 1)))),
      ["r0"]);
    assert.deepEqual(await run(new TableQuery().where(TableQuery.doubleFilter("D", Q.GREATER_THAN_OR_EQUAL, 8.5))),
      ["r8", "r9"]);
    assert.deepEqual(await run(new TableQuery().where(TableQuery.combineFilters(
      TableQuery.booleanFilter("Even", Q.EQUAL, true), Op.AND, TableQuery.int32Filter("N", Q.LESS_THAN, 4)))),
    ["r0", "r2"]);
    assert.deepEqual(await run(new TableQuery().where(
      TableQuery.dateFilter("When", Q.GREATER_THAN, new Date(base + 7.5 * 86400000)))), ["r8", "r9"]);
    assert.deepEqual(await run(new TableQuery().where(TableQuery.guidFilter("Id", Q.EQUAL, guids[1]))
      .and("N le ?", 3)), ["r1", "r3"]);
    assert.deepEqual(await run(new TableQuery().where(TableQuery.binaryFilter("Bytes", Q.EQUAL, Buffer.from([6])))),
      ["r6"]);
    assert.deepEqual(await run(new TableQuery().where(TableQuery.stringFilter("RowKey", Q.NOT_EQUAL, "r0"))
      .and(TableQuery.stringFilter("PartitionKey", Q.EQUAL, "a"))), ["r1", "r2", "r3", "r4"]);

    // select: only the named properties (plus the keys the SDK asks for implicitly: none).
    const { result: sel } = await call(svc, "queryEntities", table,
      new TableQuery().select("N", "Name").where("RowKey eq ?", "r2"), null);
    assert.equal(sel.entries.length, 1);
    assert.deepEqual(Object.keys(sel.entries[0]).filter((k) => k !== ".metadata").sort(), ["N", "Name"]);
    assert.equal(sel.entries[0].N._, 2);

    // top: a short page with a continuation token to the rest.
    const { result: top } = await call(svc, "queryEntities", table, new TableQuery().top(3), null);
    assert.equal(top.entries.length, 3);
    assert.ok(top.continuationToken, "top(3) of 10 leaves a continuation token");
    const { result: rest } = await call(svc, "queryEntities", table, new TableQuery().top(100), top.continuationToken);
    assert.equal(rest.entries.length, 7);
    assert.equal(rest.continuationToken, null);
  });
});

test("continuation over 1,100 entities: pages of at most 1,000, every entity once", async () => {
  await withTable(h.t, async (svc, table) => {
    const entities = [];
    for (let i = 0; i < 1100; i++) {
      const pk = i < 550 ? "p0" : "p1"; // the token crosses a partition boundary too
      entities.push({ PartitionKey: gen.String(pk), RowKey: gen.String(String(i).padStart(5, "0")), I: gen.Int32(i) });
    }
    await insertBatched(svc, table, entities);
    const seen = [];
    const pages = [];
    let token = null;
    do {
      const { result } = await call(svc, "queryEntities", table, null, token);
      pages.push(result.entries.length);
      for (const e of result.entries) seen.push(e.I._);
      token = result.continuationToken;
      if (token) assert.ok(token.nextPartitionKey && token.nextRowKey, "token carries the next keys");
    } while (token);
    assert.ok(pages.length >= 2, `pages: ${pages}`);
    assert.ok(pages.every((n) => n <= 1000), `pages: ${pages}`);
    assert.deepEqual(seen, entities.map((_, i) => i));

    // A filtered query pages as well.
    const q = new TableQuery().where("I ge ?", 50);
    let count = 0;
    token = null;
    do {
      const { result } = await call(svc, "queryEntities", table, q, token);
      count += result.entries.length;
      token = result.continuationToken;
    } while (token);
    assert.equal(count, 1050);
  });
});
