"use strict";
// Entity operations through @azure/data-tables (spec 2.6-2.12, 5, 11).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { odata } = require("@azure/data-tables");
const { useTarget, withTable, rejectsWith, uniqueTableName, entityPath, azuriteWrong } = require("../harness.js");

const target = useTarget();
const ETAG_RE = /^W\/"datetime'\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d(\.\d{1,7})?Z'"$/;

const strip = (e) => {
  const { etag, timestamp, "odata.metadata": _m, ...rest } = e;
  return rest;
};

test("createEntity (204 path) returns an etag; getEntity reads it back", async () => {
  await withTable(target.t, async (client) => {
    const res = await client.createEntity({ partitionKey: "p", rowKey: "r", name: "x", n: 5 });
    assert.match(res.etag, ETAG_RE);
    const e = await client.getEntity("p", "r");
    assert.equal(e.etag, res.etag);
    assert.equal(e.name, "x");
    assert.equal(e.n, 5);
    assert.ok(e.timestamp);
  });
});

test("updateEntity Replace with etag and with * ; Merge keeps other properties", async () => {
  await withTable(target.t, async (client) => {
    const { etag } = await client.createEntity({ partitionKey: "p", rowKey: "u", a: 1, b: "b" });
    const r1 = await client.updateEntity({ partitionKey: "p", rowKey: "u", a: 2 }, "Replace", { etag });
    assert.notEqual(r1.etag, etag);
    assert.deepEqual(strip(await client.getEntity("p", "u")), { partitionKey: "p", rowKey: "u", a: 2 });
    await client.updateEntity({ partitionKey: "p", rowKey: "u", c: 3 }, "Merge"); // If-Match: *
    assert.deepEqual(strip(await client.getEntity("p", "u")), { partitionKey: "p", rowKey: "u", a: 2, c: 3 });
    await client.updateEntity({ partitionKey: "p", rowKey: "u", z: true }, "Replace");
    assert.deepEqual(strip(await client.getEntity("p", "u")), { partitionKey: "p", rowKey: "u", z: true });
  });
});

test("updateEntity default mode is Merge", async () => {
  await withTable(target.t, async (client) => {
    await client.createEntity({ partitionKey: "p", rowKey: "m", a: 1 });
    await client.updateEntity({ partitionKey: "p", rowKey: "m", b: 2 });
    const e = await client.getEntity("p", "m");
    assert.equal(e.a, 1);
    assert.equal(e.b, 2);
  });
});

test("upsertEntity Merge (default) and Replace", async () => {
  await withTable(target.t, async (client) => {
    await client.upsertEntity({ partitionKey: "p", rowKey: "x", a: 1, b: 2 });
    await client.upsertEntity({ partitionKey: "p", rowKey: "x", b: 20, c: 30 });
    assert.deepEqual(strip(await client.getEntity("p", "x")), { partitionKey: "p", rowKey: "x", a: 1, b: 20, c: 30 });
    await client.upsertEntity({ partitionKey: "p", rowKey: "x", only: "me" }, "Replace");
    assert.deepEqual(strip(await client.getEntity("p", "x")), { partitionKey: "p", rowKey: "x", only: "me" });
    await client.upsertEntity({ partitionKey: "p", rowKey: "new" }, "Replace");
    assert.equal((await client.getEntity("p", "new")).rowKey, "new");
  });
});

test("deleteEntity with etag and with *; a missing entity is 404 ResourceNotFound", async () => {
  await withTable(target.t, async (client) => {
    const { etag } = await client.createEntity({ partitionKey: "p", rowKey: "d1" });
    await client.deleteEntity("p", "d1", { etag });
    await rejectsWith(client.getEntity("p", "d1"), 404, "ResourceNotFound");
    await client.createEntity({ partitionKey: "p", rowKey: "d2" });
    await client.deleteEntity("p", "d2");
    await rejectsWith(client.getEntity("p", "d2"), 404, "ResourceNotFound");
    // @azure/data-tables 13 swallows 404 only for deleteTable, not for deleteEntity.
    await rejectsWith(client.deleteEntity("p", "never"), 404, "ResourceNotFound");
  });
});

test("error codes: 404 ResourceNotFound, 409 EntityAlreadyExists, 412 UpdateConditionNotSatisfied", async () => {
  await withTable(target.t, async (client) => {
    await rejectsWith(client.getEntity("p", "missing"), 404, "ResourceNotFound");
    const { etag } = await client.createEntity({ partitionKey: "p", rowKey: "e", v: 1 });
    await rejectsWith(client.createEntity({ partitionKey: "p", rowKey: "e" }), 409, "EntityAlreadyExists");
    await client.updateEntity({ partitionKey: "p", rowKey: "e", v: 2 }, "Merge");
    await rejectsWith(client.updateEntity({ partitionKey: "p", rowKey: "e", v: 3 }, "Replace", { etag }),
      412, "UpdateConditionNotSatisfied");
    await rejectsWith(client.updateEntity({ partitionKey: "p", rowKey: "e", v: 3 }, "Merge", { etag }),
      412, "UpdateConditionNotSatisfied");
    await rejectsWith(client.deleteEntity("p", "e", { etag }), 412, "UpdateConditionNotSatisfied");
    await rejectsWith(client.updateEntity({ partitionKey: "p", rowKey: "nope" }, "Replace"), 404, "ResourceNotFound");
    await rejectsWith(client.updateEntity({ partitionKey: "p", rowKey: "nope" }, "Merge"), 404, "ResourceNotFound");
    assert.equal((await client.getEntity("p", "e")).v, 2);
  });
});

test("entity operations on a missing table: 404 TableNotFound", async () => {
  const client = target.t.tableClient(uniqueTableName());
  await rejectsWith(client.createEntity({ partitionKey: "p", rowKey: "r" }), 404, "TableNotFound");
  await rejectsWith(client.upsertEntity({ partitionKey: "p", rowKey: "r" }), 404, "TableNotFound");
  await rejectsWith(client.upsertEntity({ partitionKey: "p", rowKey: "r" }, "Replace"), 404, "TableNotFound");
  const iter = client.listEntities();
  await rejectsWith(iter.next(), 404, "TableNotFound");
});

const AWKWARD = ["it's", "''", "a b", "100%", "50%25", "(paren)", "a,b", "k=v", "PartitionKey='x'",
  "ümlaut-ß-中文", "emoji-\u{1F600}", "a+b", "semi;colon", "!*~.-_", ""];

test("awkward keys round trip through every operation", async () => {
  await withTable(target.t, async (client) => {
    for (const key of AWKWARD) {
      await client.createEntity({ partitionKey: key, rowKey: key, v: 1 });
      const e = await client.getEntity(key, key);
      assert.equal(e.partitionKey, key, JSON.stringify(key));
      assert.equal(e.rowKey, key);
      await client.updateEntity({ partitionKey: key, rowKey: key, v: 2 }, "Merge");
      await client.upsertEntity({ partitionKey: key, rowKey: key, w: 3 }, "Replace");
      assert.deepEqual(strip(await client.getEntity(key, key)), { partitionKey: key, rowKey: key, w: 3 });
      const found = [];
      for await (const x of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${key} and RowKey eq ${key}` } })) {
        found.push(x.rowKey);
      }
      assert.deepEqual(found, [key], JSON.stringify(key));
      await client.deleteEntity(key, key);
      await rejectsWith(client.getEntity(key, key), 404);
    }
  });
});

test("raw: JS-style key encoding leaves ' ( ) raw", async () => {
  await withTable(target.t, async (client, name) => {
    const key = "a'b (c)";
    await client.createEntity({ partitionKey: key, rowKey: key });
    const r = await target.t.raw("GET", entityPath(name, key, key));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json().RowKey, key);
  });
});

test("raw: insert without Prefer gives 201 with the entity", async () => {
  await withTable(target.t, async (client, name) => {
    const r = await target.t.raw("POST", `/${name}`, { body: { PartitionKey: "p", RowKey: "r", v: 1 } });
    assert.equal(r.status, 201, r.text);
    assert.match(r.headers.etag, ETAG_RE);
    assert.equal(r.json()["odata.etag"], r.headers.etag);
    assert.equal(r.json().v, 1);
  });
});

test("raw: Location header on insert", azuriteWrong("sends no Location on inserts (spec 2.7)"), async () => {
  await withTable(target.t, async (client, name) => {
    const r = await target.t.raw("POST", `/${name}`, {
      body: { PartitionKey: "p", RowKey: "r" }, headers: { Prefer: "return-no-content" },
    });
    assert.equal(r.status, 204);
    assert.ok(r.headers.location.endsWith(`${name}(PartitionKey='p',RowKey='r')`), r.headers.location);
  });
});
