"use strict";
// Edm types through @azure/data-tables at their edges (spec 3.6).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { useTarget, withTable } = require("../harness.js");

const target = useTarget();

test("Int32 bounds and Int64 beyond 2^53 as bigint", async () => {
  await withTable(target.t, async (client) => {
    await client.createEntity({
      partitionKey: "p", rowKey: "ints",
      max32: 2147483647, min32: -2147483648,
      big: 2n ** 53n + 1n, max64: 2n ** 63n - 1n, min64: -(2n ** 63n), small64: { value: "5", type: "Int64" },
    });
    const e = await client.getEntity("p", "ints");
    assert.equal(e.max32, 2147483647);
    assert.equal(e.min32, -2147483648);
    assert.equal(e.big, 2n ** 53n + 1n);
    assert.equal(e.max64, 2n ** 63n - 1n);
    assert.equal(e.min64, -(2n ** 63n));
    assert.equal(e.small64, 5n);
    const raw = await client.getEntity("p", "ints", { disableTypeConversion: true });
    assert.deepEqual(raw.max64, { value: "9223372036854775807", type: "Int64" });
    assert.deepEqual(raw.max32, { value: "2147483647", type: "Int32" });
  });
});

test("Double: fractions, extremes, NaN, Infinity, -Infinity, -0, whole doubles", async () => {
  await withTable(target.t, async (client) => {
    await client.createEntity({
      partitionKey: "p", rowKey: "dbl",
      frac: 1.5, neg: -2.25, big: 1.7976931348623157e308, tiny: 5e-324, e24: 1e24,
      nan: { value: "NaN", type: "Double" }, inf: { value: "Infinity", type: "Double" },
      ninf: { value: "-Infinity", type: "Double" }, negzero: { value: "-0", type: "Double" },
      whole: { value: "6", type: "Double" },
    });
    const e = await client.getEntity("p", "dbl");
    assert.equal(e.frac, 1.5);
    assert.equal(e.neg, -2.25);
    assert.equal(e.big, 1.7976931348623157e308);
    assert.equal(e.tiny, 5e-324);
    assert.equal(e.e24, 1e24);
    assert.ok(Number.isNaN(Number(e.nan)));
    assert.equal(Number(e.inf), Infinity);
    assert.equal(Number(e.ninf), -Infinity);
    assert.equal(Number(e.negzero), 0);
    assert.equal(Number(e.whole), 6);
    const raw = await client.getEntity("p", "dbl", { disableTypeConversion: true });
    assert.deepEqual(raw.nan, { value: "NaN", type: "Double" });
    assert.deepEqual(raw.frac, { value: "1.5", type: "Double" });
  });
});

test("DateTime: 1601-01-01, 9999-12-31T23:59:59.9999999Z, 100 ns precision, JS Date", async () => {
  await withTable(target.t, async (client) => {
    const d = new Date("2021-06-09T01:17:08.123Z");
    await client.createEntity({
      partitionKey: "p", rowKey: "dt",
      lo: new Date("1601-01-01T00:00:00Z"),
      hi: { value: "9999-12-31T23:59:59.9999999Z", type: "DateTime" },
      ticks: { value: "2020-01-02T03:04:05.1234567Z", type: "DateTime" },
      js: d,
    });
    const e = await client.getEntity("p", "dt");
    assert.equal(e.lo.getTime(), Date.UTC(1601, 0, 1));
    assert.equal(e.js.getTime(), d.getTime());
    const raw = await client.getEntity("p", "dt", { disableTypeConversion: true });
    assert.deepEqual(raw.hi, { value: "9999-12-31T23:59:59.9999999Z", type: "DateTime" });
    assert.deepEqual(raw.ticks, { value: "2020-01-02T03:04:05.1234567Z", type: "DateTime" });
    assert.equal(raw.lo.type, "DateTime");
    assert.match(raw.lo.value, /^1601-01-01T00:00:00(\.0+)?Z$/);
  });
});

test("Guid, Boolean, String 32768 chars, Binary empty and 64 KiB", async () => {
  await withTable(target.t, async (client) => {
    const big = new Uint8Array(65536).map((_, i) => i % 256);
    const s = "x".repeat(32768);
    await client.createEntity({
      partitionKey: "p", rowKey: "misc",
      g: { value: "c9da6455-213d-42c9-9a79-3e9149a57833", type: "Guid" },
      t: true, f: false, s, empty: "", uni: "ünï\u{1F600}",
      bin: big, binEmpty: new Uint8Array(0),
    });
    const e = await client.getEntity("p", "misc");
    assert.deepEqual(e.g, { value: "c9da6455-213d-42c9-9a79-3e9149a57833", type: "Guid" });
    assert.equal(e.t, true);
    assert.equal(e.f, false);
    assert.equal(e.s, s);
    assert.equal(e.empty, "");
    assert.equal(e.uni, "ünï\u{1F600}");
    assert.ok(Buffer.from(e.bin).equals(Buffer.from(big)));
    assert.equal(e.binEmpty.length, 0);
  });
});

test("explicit String/Int32/Boolean annotations are accepted", async () => {
  await withTable(target.t, async (client) => {
    await client.createEntity({
      partitionKey: "p", rowKey: "ann",
      s: { value: "str", type: "String" }, i: { value: 42, type: "Int32" }, b: { value: true, type: "Boolean" },
    });
    const e = await client.getEntity("p", "ann");
    assert.equal(e.s, "str");
    assert.equal(e.i, 42);
    assert.equal(e.b, true);
  });
});
