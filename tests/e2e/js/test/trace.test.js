"use strict";
// The request trace and the table/entity gauges through @azure/data-tables (docs/observability.md).
// The trace test runs its own tablestone with --trace FILE and checks each line's fields, the ids
// against x-ms-request-id, and that a SAS signature and the account key never reach the file; the
// gauge test takes deltas on the suite's server (files run one at a time, tests in order).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const http = require("node:http");
const os = require("node:os");
const path = require("node:path");
const { AzureNamedKeyCredential, AzureSASCredential, TableClient, generateTableSas } = require("@azure/data-tables");
const { ACCOUNT, ACCOUNT_KEY, ManagedServer, freePort, useTarget, uniqueTableName } = require("../harness.js");

const target = useTarget();
const opts = { allowInsecureConnection: true };

function scrape(port) {
  return new Promise((resolve, reject) => {
    http.get({ host: "127.0.0.1", port, path: "/_tablestone/metrics" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => {
        const value = (name) => {
          const line = body.split("\n").find((l) => l.startsWith(`${name}{account="${target.t.account}"} `));
          return line === undefined ? undefined : Number(line.split(" ")[1]);
        };
        resolve({ tables: value("tablestone_tables"), entities: value("tablestone_entities") });
      });
    }).on("error", reject);
  });
}

test("tablestone_tables and tablestone_entities move by exactly the SDK calls made", async (t) => {
  if (!target.t.managed) return t.skip("needs a tablestone process started by the harness");
  const before = await scrape(target.t.port);
  const name = uniqueTableName();
  const service = target.t.serviceClient();
  await service.createTable(name);
  const table = target.t.tableClient(name);
  await table.createEntity({ partitionKey: "p", rowKey: "1" });
  await table.upsertEntity({ partitionKey: "p", rowKey: "1", v: 2 }); // exists: no change
  await table.upsertEntity({ partitionKey: "p", rowKey: "2" });
  await table.submitTransaction([
    ["create", { partitionKey: "p", rowKey: "3" }],
    ["delete", { partitionKey: "p", rowKey: "1" }],
    ["upsert", { partitionKey: "p", rowKey: "4" }],
  ]);
  const during = await scrape(target.t.port);
  assert.deepEqual([during.tables - before.tables, during.entities - before.entities], [1, 3]);
  await service.deleteTable(name);
  assert.deepEqual(await scrape(target.t.port), before);
});

test("--trace writes one complete line per request and no secret", async (t) => {
  if (!target.t.managed) return t.skip("needs a tablestone process started by the harness");
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tablestone-e2e-js-trace."));
  const data = path.join(tmp, "data");
  fs.mkdirSync(data);
  const file = path.join(tmp, "trace.jsonl");
  const port = await freePort();
  const server = new ManagedServer(target.t.server.binary, data, port, path.join(tmp, "server.log"), ["--trace", file]);
  await server.start();
  const url = `http://127.0.0.1:${port}/${ACCOUNT}`;
  const key = new AzureNamedKeyCredential(ACCOUNT, ACCOUNT_KEY);
  const ids = [];
  const onResponse = (r) => ids.push(r.headers.get("x-ms-request-id"));
  let sig;
  try {
    const table = new TableClient(url, "jstrace", key, opts);
    await table.createTable({ onResponse });
    await table.createEntity({ partitionKey: "p", rowKey: "1", v: 1 }, { onResponse });
    const sas = generateTableSas("jstrace", key, { permissions: { query: true }, expiresOn: new Date(Date.now() + 3600e3) });
    sig = new URLSearchParams(sas).get("sig");
    const bySas = new TableClient(url, "jstrace", new AzureSASCredential(sas), opts);
    await bySas.getEntity("p", "1", { onResponse });
  } finally {
    assert.equal(await server.stop(), 0); // the trace is complete once the server has stopped
  }
  const text = fs.readFileSync(file, "utf8");
  fs.rmSync(tmp, { recursive: true, force: true });
  assert.ok(!text.includes(sig), "SAS signature in the trace");
  assert.ok(!text.includes(ACCOUNT_KEY), "account key in the trace");
  const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => l.requestId), ids);
  assert.deepEqual(lines.map((l) => [l.operation, l.status]), [["CreateTable", 201], ["InsertEntity", 204], ["GetEntity", 200]]);
  const fields = ["time", "requestId", "client", "method", "url", "account", "operation", "table", "partitionKey",
    "rowKey", "status", "errorCode", "totalUs", "parseUs", "authUs", "storageUs", "serialiseUs", "waitUs",
    "rowsScanned", "rowsReturned"];
  for (const l of lines) assert.deepEqual(Object.keys(l), fields);
  assert.match(lines[2].url, /sig=REDACTED/);
  assert.deepEqual([lines[1].partitionKey, lines[1].rowKey, lines[2].partitionKey, lines[2].rowKey], ["p", "1", "p", "1"]);
  assert.match(lines[0].time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});
