"use strict";
// TableBatch through the legacy SDK: every write operation in one change set, a batch that reads one
// entity, and a failing batch (atomic: nothing applied, the failing operation's error reported).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { azure, useTarget, call, rejectsWith, withTable, gen } = require("../harness.js");

const h = useTarget();

const ent = (rk, props = {}) => ({ PartitionKey: gen.String("p"), RowKey: gen.String(rk), ...props });

test("one change set with every write operation", async () => {
  await withTable(h.t, async (svc, table) => {
    for (const rk of ["replace", "merge", "delete"]) await call(svc, "insertEntity", table, ent(rk, { A: gen.Int32(1) }));
    const batch = new azure.TableBatch();
    batch.insertEntity(ent("insert", { Big: gen.Int64("-9223372036854775808"), When: gen.DateTime(new Date(0)) }));
    batch.replaceEntity(ent("replace", { B: gen.String("b") }));
    batch.mergeEntity(ent("merge", { C: gen.Double(2.5) }));
    batch.insertOrReplaceEntity(ent("ior", { D: gen.Boolean(true) }));
    batch.insertOrMergeEntity(ent("iom", { E: gen.Guid("11111111-2222-3333-4444-555555555555") }));
    batch.deleteEntity(ent("delete"));
    const { result, response } = await call(svc, "executeBatch", table, batch);
    assert.equal(response.statusCode, 202);
    assert.equal(result.length, 6);
    for (const r of result) {
      assert.equal(r.error, null, JSON.stringify(r));
      // The SDK asks for return-no-content on inserts in a batch.
      assert.equal(r.response.statusCode, 204);
    }
    assert.ok(result[1].entity[".metadata"].etag, "each sub-response carries the new ETag");

    const { result: all } = await call(svc, "queryEntities", table, null, null);
    const byKey = Object.fromEntries(all.entries.map((e) => [e.RowKey._, e]));
    assert.deepEqual(Object.keys(byKey).sort(), ["insert", "iom", "ior", "merge", "replace"]);
    assert.deepEqual(byKey.insert.Big, { $: "Edm.Int64", _: "-9223372036854775808" });
    assert.equal(byKey.insert.When._.getTime(), 0);
    assert.equal(byKey.replace.A, undefined);
    assert.equal(byKey.replace.B._, "b");
    assert.equal(byKey.merge.A._, 1);
    assert.equal(byKey.merge.C._, 2.5);
    assert.equal(byKey.ior.D._, true);
    assert.deepEqual(byKey.iom.E, { $: "Edm.Guid", _: "11111111-2222-3333-4444-555555555555" });
  });
});

test("a batch with one retrieve", async () => {
  await withTable(h.t, async (svc, table) => {
    await call(svc, "insertEntity", table, ent("r", { Bytes: gen.Binary(Buffer.from("xyz")) }));
    const batch = new azure.TableBatch();
    batch.retrieveEntity("p", "r");
    const { result } = await call(svc, "executeBatch", table, batch);
    assert.equal(result.length, 1);
    assert.equal(result[0].response.statusCode, 200);
    assert.equal(result[0].entity.Bytes._.toString(), "xyz");
  });
});

test("a failing operation rolls back the whole batch and is reported", async () => {
  await withTable(h.t, async (svc, table) => {
    await call(svc, "insertEntity", table, ent("exists", { A: gen.Int32(1) }));
    const batch = new azure.TableBatch();
    batch.insertEntity(ent("new1"));
    batch.insertEntity(ent("exists"));
    batch.insertEntity(ent("new2"));
    // The SDK turns the change set's single error response into a StorageError; the service's
    // message starts with the failing operation's index ("1:").
    const err = await rejectsWith(call(svc, "executeBatch", table, batch), 409, "EntityAlreadyExists");
    assert.match(err.message, /^1:The specified entity already exists/);
    const { result: all } = await call(svc, "queryEntities", table, null, null);
    assert.deepEqual(all.entries.map((e) => e.RowKey._), ["exists"], "nothing of the batch was applied");
  });
});
