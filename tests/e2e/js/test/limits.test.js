"use strict";
// Limits through @azure/data-tables, both sides of each (spec 3.3, 3.4). Raw-HTTP details are in
// the Python suite (tests/e2e/python/test_limits.py).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { useTarget, withTable, rejectsWith, azuriteWrong } = require("../harness.js");

const target = useTarget();

async function count(client) {
  let n = 0;
  for await (const _ of client.listEntities()) n++;
  return n;
}

test("255 properties including PartitionKey, RowKey and Timestamp", async () => {
  await withTable(target.t, async (client) => {
    const e = { partitionKey: "p", rowKey: "ok" };
    for (let i = 0; i < 252; i++) e[`p${i}`] = i;
    await client.createEntity(e);
    const got = await client.getEntity("p", "ok");
    assert.equal(got.p251, 251);
  });
});

test("253 custom properties are rejected",
  azuriteWrong("does not limit the number of properties (spec 3.4)"), async () => {
    await withTable(target.t, async (client) => {
      const e = { partitionKey: "p", rowKey: "bad" };
      for (let i = 0; i < 253; i++) e[`p${i}`] = i;
      await rejectsWith(client.createEntity(e), 400, "TooManyProperties");
      assert.equal(await count(client), 0);
    });
  });

test("string of 32768 chars accepted, 32769 rejected with PropertyValueTooLarge", async () => {
  await withTable(target.t, async (client) => {
    await client.createEntity({ partitionKey: "p", rowKey: "ok", s: "a".repeat(32768) });
    await rejectsWith(client.createEntity({ partitionKey: "p", rowKey: "bad", s: "a".repeat(32769) }),
      400, "PropertyValueTooLarge");
    await rejectsWith(client.upsertEntity({ partitionKey: "p", rowKey: "ok", s: "a".repeat(32769) }),
      400, "PropertyValueTooLarge");
    assert.equal((await client.getEntity("p", "ok")).s.length, 32768);
    assert.equal(await count(client), 1);
  });
});

test("binary of 65536 bytes accepted, 65537 rejected", async () => {
  await withTable(target.t, async (client) => {
    await client.createEntity({ partitionKey: "p", rowKey: "ok", b: new Uint8Array(65536) });
    await rejectsWith(client.createEntity({ partitionKey: "p", rowKey: "bad", b: new Uint8Array(65537) }),
      400, "PropertyValueTooLarge");
    assert.equal(await count(client), 1);
  });
});

test("keys of 512 chars accepted; 2048 rejected", async () => {
  await withTable(target.t, async (client) => {
    const k = "k".repeat(512);
    await client.createEntity({ partitionKey: k, rowKey: k });
    assert.equal((await client.getEntity(k, k)).rowKey, k);
    await rejectsWith(client.createEntity({ partitionKey: "p", rowKey: "k".repeat(2048) }), 400);
    assert.equal(await count(client), 1);
  });
});

test("2048-char key error code is PropertyValueTooLarge",
  azuriteWrong("answers InvalidInput for long keys (spec 3.3, 12)"), async () => {
    await withTable(target.t, async (client) => {
      await rejectsWith(client.createEntity({ partitionKey: "p", rowKey: "k".repeat(2048) }), 400,
        "PropertyValueTooLarge");
    });
  });

test("forbidden key characters in the body are rejected and nothing is stored", async () => {
  await withTable(target.t, async (client) => {
    for (const ch of ["/", "\\", "#", "?", "\u0001", "\u007f", "\u0085"]) {
      await rejectsWith(client.createEntity({ partitionKey: "p", rowKey: `a${ch}b` }), 400);
    }
    assert.equal(await count(client), 0);
  });
});
