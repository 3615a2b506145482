"use strict";
// Entities through the legacy SDK: every Edm type written with entityGenerator and read back under the
// three JSON metadata levels (payloadFormat), with the SDK's own type inference for nometadata
// (autoResolveProperties) and a propertyResolver; the six write operations; ETag conditions (412);
// 404/409 as the SDK reports them.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { azure, NOMETA, MINIMAL, FULL, useTarget, call, rejectsWith, withTable, gen } = require("../harness.js");

const h = useTarget();

const WHEN = new Date("2021-06-07T08:09:10.123Z");
const GUID = "c9da6455-213d-42c9-9a79-3e9149a57833";
const BYTES = Buffer.from([0, 1, 2, 250, 255]);

function typedEntity(pk, rk) {
  return {
    PartitionKey: gen.String(pk),
    RowKey: gen.String(rk),
    Str: gen.String("héllo 'quoted'"),
    I32: gen.Int32(-2147483648),
    I64: gen.Int64("9007199254740993"), // beyond 2^53: the SDK keeps Int64 values as strings
    Dbl: gen.Double(1.25),
    DblWhole: gen.Double(3), // written as "3" with Edm.Double: stays a double
    Nan: gen.Double(NaN),
    PosInf: gen.Double(Infinity),
    NegInf: gen.Double(-Infinity),
    Flag: gen.Boolean(false),
    When: gen.DateTime(WHEN),
    Id: gen.Guid(GUID),
    Bytes: gen.Binary(BYTES),
  };
}

// What the service sends back with type information (minimal and full metadata).
function assertTyped(e) {
  assert.deepEqual(e.Str, { _: "héllo 'quoted'" });
  assert.deepEqual(e.I32, { _: -2147483648 });
  assert.deepEqual(e.I64, { $: "Edm.Int64", _: "9007199254740993" });
  assert.deepEqual(e.Dbl, { _: 1.25 });
  assert.deepEqual(e.DblWhole, { $: "Edm.Double", _: 3 });
  assert.equal(e.Nan.$, "Edm.Double");
  assert.ok(Number.isNaN(e.Nan._));
  assert.deepEqual(e.PosInf, { $: "Edm.Double", _: Infinity });
  assert.deepEqual(e.NegInf, { $: "Edm.Double", _: -Infinity });
  assert.deepEqual(e.Flag, { _: false });
  assert.equal(e.When.$, "Edm.DateTime");
  assert.equal(e.When._.toISOString(), WHEN.toISOString());
  assert.deepEqual(e.Id, { $: "Edm.Guid", _: GUID });
  assert.equal(e.Bytes.$, "Edm.Binary");
  assert.ok(BYTES.equals(e.Bytes._));
  assert.equal(e.Timestamp.$, "Edm.DateTime");
  assert.ok(e.Timestamp._ instanceof Date && !Number.isNaN(e.Timestamp._.getTime()));
}

test("every Edm type round-trips under minimal and full metadata", async () => {
  await withTable(h.t, async (svc, table) => {
    const { result: inserted } = await call(svc, "insertEntity", table, typedEntity("p", "r"));
    assert.match(inserted[".metadata"].etag, /^W\/"datetime'.+'"$/);
    for (const fmt of [MINIMAL, FULL]) {
      const { result: e } = await call(svc, "retrieveEntity", table, "p", "r", { payloadFormat: fmt });
      assertTyped(e);
      assert.equal(e[".metadata"].etag, inserted[".metadata"].etag);
      if (fmt === FULL) {
        assert.match(e[".metadata"].id, /\(PartitionKey='p',RowKey='r'\)$/);
        assert.equal(e[".metadata"].editLink, `${table}(PartitionKey='p',RowKey='r')`);
        assert.match(e[".metadata"].type, new RegExp(`\\.${table}$`));
      }
    }
    // echoContent: the insert's answer is the entity itself (201 with the body).
    const { result: echoed, response } = await call(svc, "insertEntity", table, typedEntity("p", "echo"),
      { echoContent: true, payloadFormat: FULL });
    assert.equal(response.statusCode, 201);
    assertTyped(echoed);
  });
});

test("nometadata: raw JSON values, the SDK's inference and a property resolver", async () => {
  await withTable(h.t, async (svc, table) => {
    await call(svc, "insertEntity", table, typedEntity("p", "r"));
    // No types on the wire: JSON numbers, booleans and strings as they are.
    const { result: raw } = await call(svc, "retrieveEntity", table, "p", "r", { payloadFormat: NOMETA });
    assert.equal(raw.I64._, "9007199254740993");
    assert.equal(raw.I32._, -2147483648);
    assert.equal(raw.Dbl._, 1.25);
    assert.equal(raw.DblWhole._, 3);
    assert.equal(raw.Nan._, "NaN");
    assert.equal(raw.Flag._, false);
    assert.equal(typeof raw.When._, "string");
    assert.equal(new Date(raw.When._).toISOString(), WHEN.toISOString());
    assert.equal(raw.Bytes._, BYTES.toString("base64"));
    assert.ok(raw[".metadata"].etag, "the ETag comes from the response header");

    // autoResolveProperties: the SDK guesses what JSON can tell (booleans; strings stay strings).
    const { result: auto } = await call(svc, "retrieveEntity", table, "p", "r",
      { payloadFormat: NOMETA, autoResolveProperties: true });
    assert.deepEqual(auto.Flag, { $: "Edm.Boolean", _: false });
    assert.deepEqual(auto.Str, { $: "Edm.String", _: "héllo 'quoted'" });

    // A propertyResolver restores the types the caller knows.
    const types = { I64: "Edm.Int64", When: "Edm.DateTime", Id: "Edm.Guid", Bytes: "Edm.Binary", Nan: "Edm.Double",
      PosInf: "Edm.Double", NegInf: "Edm.Double", DblWhole: "Edm.Double" };
    const resolver = (pk, rk, name, value, type) => types[name] || type;
    const { result: resolved } = await call(svc, "retrieveEntity", table, "p", "r",
      { payloadFormat: NOMETA, propertyResolver: resolver });
    assert.deepEqual(resolved.I64, { $: "Edm.Int64", _: "9007199254740993" });
    assert.equal(resolved.When._.toISOString(), WHEN.toISOString());
    assert.ok(BYTES.equals(resolved.Bytes._));
    assert.ok(Number.isNaN(resolved.Nan._));
    assert.equal(resolved.NegInf._, -Infinity);

    // A nometadata query has no ETags in its body: the SDK makes one up from Timestamp (not
    // percent-encoded), and an update with it must match the entity's ETag, then be stale.
    const { result: page } = await call(svc, "queryEntities", table, null, null, { payloadFormat: NOMETA });
    const row = page.entries[0];
    assert.match(row[".metadata"].etag, /^W\/"datetime'\d{4}-\d\d-\d\dT\d\d:\d\d:/);
    const update = { PartitionKey: row.PartitionKey, RowKey: row.RowKey, V: gen.Int32(1), ".metadata": row[".metadata"] };
    await call(svc, "replaceEntity", table, update);
    await rejectsWith(call(svc, "replaceEntity", table, update), 412, "UpdateConditionNotSatisfied");
  });
});

test("insert, replace, merge, insertOrReplace, insertOrMerge, delete", async () => {
  await withTable(h.t, async (svc, table) => {
    const key = { PartitionKey: gen.String("p"), RowKey: gen.String("r") };
    await call(svc, "insertEntity", table, { ...key, A: gen.Int32(1), B: gen.String("b") });
    await call(svc, "replaceEntity", table, { ...key, A: gen.Int32(2) });
    let { result: e } = await call(svc, "retrieveEntity", table, "p", "r");
    assert.equal(e.A._, 2);
    assert.equal(e.B, undefined, "replace drops properties it does not name");

    await call(svc, "mergeEntity", table, { ...key, C: gen.Boolean(true) });
    ({ result: e } = await call(svc, "retrieveEntity", table, "p", "r"));
    assert.equal(e.A._, 2);
    assert.equal(e.C._, true);

    await call(svc, "insertOrReplaceEntity", table, { ...key, D: gen.Double(0.5) });
    ({ result: e } = await call(svc, "retrieveEntity", table, "p", "r"));
    assert.deepEqual(Object.keys(e).filter((k) => !["PartitionKey", "RowKey", "Timestamp", ".metadata"].includes(k)), ["D"]);

    await call(svc, "insertOrMergeEntity", table, { ...key, E: gen.Int64("5") });
    await call(svc, "insertOrMergeEntity", table, { PartitionKey: gen.String("p"), RowKey: gen.String("new"),
      F: gen.String("f") });
    ({ result: e } = await call(svc, "retrieveEntity", table, "p", "r"));
    assert.equal(e.D._, 0.5);
    assert.deepEqual(e.E, { $: "Edm.Int64", _: "5" });
    assert.equal((await call(svc, "retrieveEntity", table, "p", "new")).result.F._, "f");

    await call(svc, "deleteEntity", table, key);
    await rejectsWith(call(svc, "retrieveEntity", table, "p", "r"), 404, "ResourceNotFound");
  });
});

test("ETag conditions: stale ETags get 412, '*' and the current ETag succeed", async () => {
  await withTable(h.t, async (svc, table) => {
    const { result: first } = await call(svc, "insertEntity", table,
      { PartitionKey: gen.String("p"), RowKey: gen.String("r"), V: gen.Int32(1) });
    const stale = first[".metadata"].etag;
    const { result: second } = await call(svc, "replaceEntity", table,
      { PartitionKey: gen.String("p"), RowKey: gen.String("r"), V: gen.Int32(2), ".metadata": { etag: stale } });
    assert.notEqual(second[".metadata"].etag, stale);

    const staleEntity = { PartitionKey: gen.String("p"), RowKey: gen.String("r"), V: gen.Int32(3),
      ".metadata": { etag: stale } };
    await rejectsWith(call(svc, "replaceEntity", table, staleEntity), 412, "UpdateConditionNotSatisfied");
    await rejectsWith(call(svc, "mergeEntity", table, staleEntity), 412, "UpdateConditionNotSatisfied");
    await rejectsWith(call(svc, "deleteEntity", table, staleEntity), 412, "UpdateConditionNotSatisfied");

    const { result: e } = await call(svc, "retrieveEntity", table, "p", "r");
    assert.equal(e.V._, 2);
    assert.equal(e[".metadata"].etag, second[".metadata"].etag);
    await call(svc, "mergeEntity", table, { ...staleEntity, ".metadata": { etag: e[".metadata"].etag } });
    await call(svc, "deleteEntity", table, { ...staleEntity, ".metadata": { etag: "*" } });
    // Without an ETag the SDK sends If-Match: * for delete, so a missing entity is a 404.
    await rejectsWith(call(svc, "deleteEntity", table, staleEntity), 404, "ResourceNotFound");
  });
});

test("409 EntityAlreadyExists, 404 on replace/merge of a missing entity, integers beyond Int32", async () => {
  await withTable(h.t, async (svc, table) => {
    const e = { PartitionKey: gen.String("p"), RowKey: gen.String("r"), V: gen.Int32(1) };
    await call(svc, "insertEntity", table, e);
    const err = await rejectsWith(call(svc, "insertEntity", table, e), 409, "EntityAlreadyExists");
    assert.match(err.message, /already exists/i);
    const missing = { PartitionKey: gen.String("p"), RowKey: gen.String("missing"), V: gen.Int32(1) };
    await rejectsWith(call(svc, "replaceEntity", table, missing), 404, "ResourceNotFound");
    await rejectsWith(call(svc, "mergeEntity", table, missing), 404, "ResourceNotFound");
    // The SDK sends an Int32 number without a type annotation; beyond Int32 the service reads an
    // unannotated integer as Edm.Double. As a string it is annotated, and out of range it is refused.
    await call(svc, "insertEntity", table,
      { PartitionKey: gen.String("p"), RowKey: gen.String("big"), V: gen.Int32(2147483648) });
    const { result: big } = await call(svc, "retrieveEntity", table, "p", "big");
    assert.deepEqual(big.V, { $: "Edm.Double", _: 2147483648 });
    await rejectsWith(call(svc, "insertEntity", table,
      { PartitionKey: gen.String("p"), RowKey: gen.String("big2"), V: gen.Int32("2147483648") }), 400, "InvalidInput");
  });
});

test("keys with characters the SDK percent-encodes in the entity path", async () => {
  await withTable(h.t, async (svc, table) => {
    const pk = "p k'";
    const rks = ["a b", "it's", "ü€😀", "x+y=z&w", "per%cent", "semi;colon", "paren(1)", "at@x,y:z$"];
    for (const rk of rks) {
      await call(svc, "insertEntity", table, { PartitionKey: gen.String(pk), RowKey: gen.String(rk), V: gen.String(rk) });
      assert.equal((await call(svc, "retrieveEntity", table, pk, rk)).result.V._, rk);
      await call(svc, "mergeEntity", table, { PartitionKey: gen.String(pk), RowKey: gen.String(rk), W: gen.Int32(1) });
      const { result } = await call(svc, "queryEntities", table, new azure.TableQuery().where("RowKey eq ?", rk), null);
      assert.deepEqual(result.entries.map((e) => [e.V._, e.W._]), [[rk, 1]]);
    }
    // '?' (like '#', '/', '\' and control characters) is not allowed in a key.
    await rejectsWith(call(svc, "insertOrReplaceEntity", table,
      { PartitionKey: gen.String(pk), RowKey: gen.String("q?mark") }), 400, "OutOfRangeInput");
    for (const rk of rks) await call(svc, "deleteEntity", table, { PartitionKey: gen.String(pk), RowKey: gen.String(rk) });
  });
});
