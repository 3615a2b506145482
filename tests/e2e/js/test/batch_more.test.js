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

// Raw multipart in the JS SDK's own framing (lower-case part headers, three CRLFs after headers),
// so the server-side rules are exercised even where the SDK checks client-side.
function jsStyleBody(t, table, ops) {
  const b = "batch_jsraw";
  const c = "changeset_jsraw";
  const base = `http://${t.host}:${t.port}${t.basePath}`;
  let out = `--${b}\r\ncontent-type: multipart/mixed; boundary=${c}\r\n\r\n\r\n`;
  for (const op of ops) {
    out += `--${c}\r\ncontent-type: application/http\r\ncontent-transfer-encoding: binary\r\n\r\n`;
    out += `${op.method} ${base}${op.path} HTTP/1.1\r\n`;
    for (const [k, v] of Object.entries(op.headers || {})) out += `${k}: ${v}\r\n`;
    out += `\r\n\r\n${op.body ? JSON.stringify(op.body) : ""}\r\n`;
  }
  out += `--${c}--\r\n--${b}--\r\n`;
  return { boundary: b, body: out };
}

function parseParts(text) {
  const pieces = text.split("--changesetresponse_").slice(1, -1);
  return pieces.map((p) => {
    const status = Number(p.match(/HTTP\/1.1 ([0-9]*)/)[1]);
    const body = p.match(/\{(.*)\}/);
    return { status, error: body ? JSON.parse(body[0])["odata.error"] : undefined, etag: (p.match(/ETag: (.*)/) || [])[1] };
  });
}

test("raw JS-framed batch: partitions checked server-side; MERGE verb and X-HTTP-Method", async () => {
  await withTable(target.t, async (client, name) => {
    const t = target.t;
    const insert = (pk, rowKey) => ({
      method: "POST", path: `/${name}`, body: { PartitionKey: pk, RowKey: rowKey },
      headers: { "content-type": "application/json", prefer: "return-no-content" },
    });
    const mixed = jsStyleBody(t, name, [insert("a", "1"), insert("a", "2"), insert("b", "3")]);
    const r = await t.raw("POST", "/$batch", {
      body: Buffer.from(mixed.body), contentType: `multipart/mixed; boundary=${mixed.boundary}`, accept: "application/json",
    });
    assert.equal(r.status, 202, r.text);
    const [failed, ...rest] = parseParts(r.text);
    assert.equal(rest.length, 0);
    assert.equal(failed.status, 400);
    assert.equal(failed.error.code, "CommandsInBatchActOnDifferentPartitions");
    assert.match(failed.error.message.value, /^2:All commands in a batch must operate on same entity group\./);
    assert.deepEqual(await rowKeys(client), []);

    await client.createEntity({ partitionKey: "a", rowKey: "m", keep: 1 });
    const updates = [
      { method: "MERGE", path: `/${name}(PartitionKey='a',RowKey='m')`, body: { x: 1 },
        headers: { "content-type": "application/json", "if-match": "*" } },
      { method: "POST", path: `/${name}(PartitionKey='a',RowKey='n')`, body: { y: 2 },
        headers: { "content-type": "application/json", "x-http-method": "MERGE" } },
    ];
    // The same row (a,1) inserted then deleted: InvalidDuplicateRow at index 3, nothing applied.
    const dup = jsStyleBody(t, name, [insert("a", "1"), ...updates,
      { method: "DELETE", path: `/${name}(PartitionKey='a',RowKey='1')`, headers: { "if-match": "*" } }]);
    const r2 = await t.raw("POST", "/$batch", {
      body: Buffer.from(dup.body), contentType: `multipart/mixed; boundary=${dup.boundary}`, accept: "application/json",
    });
    assert.equal(r2.status, 202, r2.text);
    const parts = parseParts(r2.text);
    assert.equal(parts.length, 1);
    assert.equal(parts[0].error.code, "InvalidDuplicateRow");
    assert.match(parts[0].error.message.value, /^3:/);
    assert.deepEqual(await rowKeys(client), ["m"]);

    const good = jsStyleBody(t, name, [insert("a", "1"), ...updates]);
    const r3 = await t.raw("POST", "/$batch", {
      body: Buffer.from(good.body), contentType: `multipart/mixed; boundary=${good.boundary}`, accept: "application/json",
    });
    assert.equal(r3.status, 202, r3.text);
    const goodParts = parseParts(r3.text);
    assert.deepEqual(goodParts.map((p) => p.status), [204, 204, 204]);
    assert.ok(goodParts.every((p) => p.error === undefined && p.etag === goodParts[0].etag));
    assert.deepEqual(await rowKeys(client), ["1", "m", "n"]);
    const m = await client.getEntity("a", "m");
    assert.equal(m.keep, 1);
    assert.equal(m.x, 1);
    assert.equal((await client.getEntity("a", "n")).y, 2);
  });
});

test("the SDK refuses mixed partitions before sending", async () => {
  await withTable(target.t, async (client) => {
    const err = await txFails(client.submitTransaction([
      ["create", { partitionKey: "a", rowKey: "1" }], ["create", { partitionKey: "b", rowKey: "1" }]]));
    assert.equal(err.statusCode, undefined);
    assert.match(err.message, /same partitionKey/);
    assert.deepEqual(await rowKeys(client), []);
  });
});
