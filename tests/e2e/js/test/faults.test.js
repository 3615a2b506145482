"use strict";
// Fault injection and realistic mode (docs/testing-with-faults.md) through @azure/data-tables:
// the SDK's retry policy recovers from injected 503s; a timeout after a committed write, retried,
// gives the 409/412 the service's guidance warns about with the entity written once; paging
// returns every row once through empty pages and PartitionKey-only tokens; a re-created table
// name answers 409 TableBeingDeleted. Rules are added per test through the admin route; the
// rule's counters say how many requests the server saw. Needs a managed server (admin routes).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const http = require("node:http");
const { TableClient, TableServiceClient } = require("@azure/data-tables");
const { useTarget, uniqueTableName, rejectsWith, ACCOUNT, ACCOUNT_KEY, sleep } = require("../harness.js");

const BEING_DELETED_MS = 1500;
const managed = !process.env.TABLESTONE_E2E_CONNECTION_STRING;
// devstoreaccount1 signs the admin calls; it is named the admin account because in the localhost
// shape the server has a second account, and then no account is the admin by default (docs/admin-api.md).
const target = useTarget({
  extraArgs: ["--adminApi", "--adminAccount", ACCOUNT, "--faultSeed", "42", "--tableBeingDeletedMs",
    String(BEING_DELETED_MS)],
});
// Tiny retry delays: a retry costs milliseconds.
const OPTIONS = { allowInsecureConnection: true, retryOptions: { maxRetries: 5, retryDelayInMs: 5, maxRetryDelayInMs: 20 } };
const service = () => TableServiceClient.fromConnectionString(target.t.connectionString, OPTIONS);
const client = (name) => TableClient.fromConnectionString(target.t.connectionString, name, OPTIONS);

function faults(method, body, { query = "", op = "faults" } = {}) {
  const path = `/_tablestone/${op}`;
  const date = new Date().toUTCString();
  const data = body === undefined ? "" : JSON.stringify(body);
  const ctype = body === undefined ? "" : "application/json";
  // The admin signature covers the query and the body's SHA-256 (docs/admin-api.md, "Authentication").
  const hash = crypto.createHash("sha256").update(data).digest("base64");
  const params = [...new URLSearchParams(query)].map(([k, v]) => [k.toLowerCase(), v]).sort();
  let resource = `/${ACCOUNT}${path}`;
  params.forEach(([k, v], i) => { resource += i > 0 && params[i - 1][0] === k ? `,${v}` : `\n${k}:${v}`; });
  const toSign = [method, ctype, date, hash, resource].join("\n");
  const sig = crypto.createHmac("sha256", Buffer.from(ACCOUNT_KEY, "base64")).update(toSign).digest("base64");
  const headers = { "x-ms-date": date, "x-ms-content-sha256": hash, Authorization: `SharedKey ${ACCOUNT}:${sig}`,
    "Content-Length": Buffer.byteLength(data) };
  if (ctype) headers["Content-Type"] = ctype;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: target.t.port, method, path: path + (query ? `?${query}` : ""), headers },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode, body: text ? JSON.parse(text) : null }));
      });
    req.on("error", reject);
    req.end(data);
  });
}

async function addRule(rule) {
  const r = await faults("POST", rule);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.ids[0];
}

async function counts(id) {
  const r = await faults("GET");
  const rule = r.body.rules.find((x) => x.id === id);
  return [rule.matched, rule.injected];
}

async function newTable() {
  const name = uniqueTableName("f");
  await service().createTable(name);
  return client(name);
}

test("retry policy recovers from injected 503 ServerBusy", { skip: !managed }, async () => {
  const t = await newTable();
  const id = await addRule({ action: "serverBusy", maxCount: 2, match: { table: t.tableName, operation: "InsertEntity" } });
  await t.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
  assert.deepEqual(await counts(id), [3, 2]);
  assert.equal((await t.getEntity("p", "r")).v, 1);
  await faults("DELETE");
});

// issue 31: a rule scoped by match.table never fired on $batch, whose URL names no table.
test("a table-scoped rule fires on that table's transaction; the retry policy recovers", { skip: !managed }, async () => {
  const t = await newTable();
  const id = await addRule({ action: "serverBusy", maxCount: 2, match: { table: t.tableName } });
  await t.submitTransaction([
    ["create", { partitionKey: "p", rowKey: "a", v: 1 }],
    ["create", { partitionKey: "p", rowKey: "b", v: 2 }],
  ]);
  assert.deepEqual(await counts(id), [3, 2]);
  const rows = [];
  for await (const e of t.listEntities()) rows.push(e.rowKey);
  assert.deepEqual(rows.sort(), ["a", "b"]);
  await faults("DELETE");
});

test("timeout after a committed insert: the retry gets 409, one entity written", { skip: !managed }, async () => {
  const t = await newTable();
  const id = await addRule({ action: "timeoutAfter", maxCount: 1, match: { table: t.tableName, operation: "InsertEntity" } });
  await rejectsWith(t.createEntity({ partitionKey: "p", rowKey: "once", v: 1 }), 409, "EntityAlreadyExists");
  assert.deepEqual(await counts(id), [2, 1]);
  const rows = [];
  for await (const e of t.listEntities()) rows.push([e.rowKey, e.v]);
  assert.deepEqual(rows, [["once", 1]]);
  await faults("DELETE");
});

test("timeout after a committed etag update: the retry gets 412, the update applied", { skip: !managed }, async () => {
  const t = await newTable();
  await t.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
  const e = await t.getEntity("p", "r");
  const id = await addRule({ action: "timeoutAfter", maxCount: 1, match: { table: t.tableName, operation: "UpdateEntity" } });
  await rejectsWith(t.updateEntity({ partitionKey: "p", rowKey: "r", v: 2 }, "Replace", { etag: e.etag }), 412,
    "UpdateConditionNotSatisfied");
  assert.deepEqual(await counts(id), [2, 1]);
  assert.equal((await t.getEntity("p", "r")).v, 2);
  await faults("DELETE");
});

test("connection closed by host on a read is retried", { skip: !managed }, async () => {
  const t = await newTable();
  await t.createEntity({ partitionKey: "p", rowKey: "r", v: 7 });
  const id = await addRule({ action: "closeAfter", maxCount: 1, match: { table: t.tableName, operation: "GetEntity" } });
  assert.equal((await t.getEntity("p", "r")).v, 7);
  assert.deepEqual(await counts(id), [2, 1]);
  await faults("DELETE");
});

test("realistic paging: every row once through empty pages and PartitionKey-only tokens", { skip: !managed }, async () => {
  const t = await newTable();
  const expected = [];
  for (let p = 0; p < 6; p++) {
    const ops = [];
    for (let r = 0; r < 25; r++) {
      const rk = `r${String(r).padStart(3, "0")}`;
      ops.push(["upsert", { partitionKey: `p${p}`, rowKey: rk }]);
      expected.push(`p${p}/${rk}`);
    }
    await t.submitTransaction(ops);
  }
  const on = await faults("POST", { enabled: true, account: target.t.account, table: t.tableName }, { op: "faults/realistic" });
  assert.equal(on.status, 200);
  const got = [];
  let empty = 0;
  let pkOnly = 0;
  let pages = 0;
  for await (const page of t.listEntities().byPage()) {
    pages++;
    for (const e of page) got.push(`${e.partitionKey}/${e.rowKey}`);
    if (page.continuationToken) {
      const token = JSON.parse(Buffer.from(page.continuationToken, "base64").toString());
      if (page.length === 0) empty++;
      if (!token.nextRowKey) pkOnly++;
    }
  }
  await faults("POST", { enabled: false, account: target.t.account, table: t.tableName }, { op: "faults/realistic" });
  assert.deepEqual(got, expected);
  assert.ok(pages >= 3, `pages: ${pages}`);
  assert.ok(empty > 0, "an empty page with a token");
  assert.ok(pkOnly > 0, "a PartitionKey-only token");
});

test("realistic: a deleted table's name answers 409 TableBeingDeleted for the window", { skip: !managed }, async () => {
  const name = uniqueTableName("d");
  await faults("POST", { enabled: true, account: target.t.account, table: name }, { op: "faults/realistic" });
  await service().createTable(name);
  await service().deleteTable(name);
  await rejectsWith(service().createTable(name), 409, "TableBeingDeleted");
  await sleep(BEING_DELETED_MS + 200);
  await service().createTable(name);
  await service().deleteTable(name);
});
