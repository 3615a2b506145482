"use strict";
// Optimistic concurrency through @azure/data-tables (spec 5).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { useTarget, withTable, rejectsWith, sleep } = require("../harness.js");

const target = useTarget();
const CLIENTS = 16;
const CYCLES = 50;

test("16 clients x 50 read-increment-conditional-merge cycles end at 800, no value twice", async () => {
  await withTable(target.t, async (client, name) => {
    await client.createEntity({ partitionKey: "c", rowKey: "counter", value: 0 });
    const taken = [];
    let conflicts = 0;
    async function worker() {
      const c = target.t.tableClient(name);
      for (let i = 0; i < CYCLES; i++) {
        for (let attempt = 0; ; attempt++) {
          const e = await c.getEntity("c", "counter");
          const next = e.value + 1;
          try {
            await c.updateEntity({ partitionKey: "c", rowKey: "counter", value: next }, "Merge", { etag: e.etag });
          } catch (err) {
            if (err.statusCode === 412) {
              conflicts++;
              // Randomised backoff, as a real client would do; keeps the run short under contention.
              await sleep(Math.random() * Math.min(2 ** attempt, 64));
              continue;
            }
            throw err;
          }
          taken.push(next);
          break;
        }
      }
    }
    await Promise.all(Array.from({ length: CLIENTS }, worker));
    assert.equal(taken.length, CLIENTS * CYCLES);
    assert.equal(new Set(taken).size, taken.length, "a counter value was handed out twice");
    assert.deepEqual([...taken].sort((a, b) => a - b), Array.from({ length: CLIENTS * CYCLES }, (_, i) => i + 1));
    assert.equal((await client.getEntity("c", "counter")).value, CLIENTS * CYCLES);
    assert.ok(conflicts >= 0);
  });
});

test("every write changes the etag; reads do not; stale etags give 412", async () => {
  await withTable(target.t, async (client) => {
    const r1 = await client.createEntity({ partitionKey: "p", rowKey: "e", v: 1 });
    assert.equal((await client.getEntity("p", "e")).etag, r1.etag);
    const r2 = await client.upsertEntity({ partitionKey: "p", rowKey: "e", v: 1 });
    assert.notEqual(r2.etag, r1.etag);
    const r3 = await client.updateEntity({ partitionKey: "p", rowKey: "e", v: 2 }, "Replace", { etag: r2.etag });
    assert.notEqual(r3.etag, r2.etag);
    await rejectsWith(client.updateEntity({ partitionKey: "p", rowKey: "e", v: 3 }, "Replace", { etag: r2.etag }),
      412, "UpdateConditionNotSatisfied");
    await client.deleteEntity("p", "e", { etag: r3.etag });
  });
});
