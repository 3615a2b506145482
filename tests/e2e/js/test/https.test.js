"use strict";
// HTTPS (--cert/--key) through @azure/data-tables with no allowInsecureConnection: a throwaway
// self-signed certificate made by openssl for this test, trusted by the SDK's node process through
// NODE_EXTRA_CA_CERTS (read only at node start-up, so the SDK calls run in a child process).
// Account key and table SAS; without the certificate trusted, the SDK refuses the connection.
const { test, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { spawnSync } = require("node:child_process");
const path = require("node:path");
const { ACCOUNT, ACCOUNT_KEY, uniqueTableName } = require("../harness.js");
const { startTlsServer } = require("../server.js");

const external = Boolean(process.env.TABLESTONE_E2E_CONNECTION_STRING);
let tls;
let server;
let cert;

before(async () => {
  if (external) return;
  tls = await startTlsServer("tablestone-js-https.");
  ({ server, cert } = tls);
});

after(async () => {
  if (tls) assert.equal(await tls.stop(), 0);
});

// Runs `body` (an async function's source using TableServiceClient etc.) in a child node process and
// returns what it printed as JSON.
function runSdk(body, extraCa) {
  const script = `
    const { AzureNamedKeyCredential, AzureSASCredential, TableClient, TableServiceClient, generateTableSas } =
      require("@azure/data-tables");
    const endpoint = ${JSON.stringify(`https://127.0.0.1:${server.port}/${ACCOUNT}`)};
    const cred = new AzureNamedKeyCredential(${JSON.stringify(ACCOUNT)}, ${JSON.stringify(ACCOUNT_KEY)});
    (async () => { ${body} })().then((r) => console.log(JSON.stringify({ ok: r })),
      (e) => console.log(JSON.stringify({ error: String(e && (e.code || e.message)) })));`;
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  if (extraCa) env.NODE_EXTRA_CA_CERTS = extraCa;
  const res = spawnSync(process.execPath, ["-e", script], { cwd: path.join(__dirname, ".."), env, encoding: "utf8",
    timeout: 60000 });
  const line = (res.stdout || "").trim().split("\n").pop();
  assert.ok(line, `no output; stderr: ${res.stderr}`);
  return JSON.parse(line);
}

test("account key over https with the certificate trusted via NODE_EXTRA_CA_CERTS", { skip: external }, () => {
  const name = uniqueTableName();
  const out = runSdk(`
    const service = new TableServiceClient(endpoint, cred);
    await service.createTable(${JSON.stringify(name)});
    const table = new TableClient(endpoint, ${JSON.stringify(name)}, cred);
    await table.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
    await table.submitTransaction([["upsert", { partitionKey: "p", rowKey: "s", v: 2 }]]);
    const rows = [];
    for await (const e of table.listEntities()) rows.push([e.rowKey, e.v]);
    await service.deleteTable(${JSON.stringify(name)});
    return rows;`, cert);
  assert.deepEqual(out, { ok: [["r", 1], ["s", 2]] });
});

test("table SAS over https", { skip: external }, () => {
  const name = uniqueTableName();
  const out = runSdk(`
    const service = new TableServiceClient(endpoint, cred);
    await service.createTable(${JSON.stringify(name)});
    const sas = generateTableSas(${JSON.stringify(name)}, cred, {
      permissions: { add: true, query: true }, expiresOn: new Date(Date.now() + 3600 * 1000), protocol: "https" });
    const client = new TableClient(endpoint, ${JSON.stringify(name)}, new AzureSASCredential(sas));
    await client.createEntity({ partitionKey: "p", rowKey: "sas" });
    const rows = [];
    for await (const e of client.listEntities()) rows.push(e.rowKey);
    await service.deleteTable(${JSON.stringify(name)});
    return rows;`, cert);
  assert.deepEqual(out, { ok: ["sas"] });
});

test("without the certificate trusted the SDK refuses the server", { skip: external }, () => {
  const out = runSdk(`
    const service = new TableServiceClient(endpoint, cred, { retryOptions: { maxRetries: 0 } });
    for await (const t of service.listTables()) { void t; }
    return "connected";`, null);
  assert.match(String(out.error), /SELF_SIGNED|CERT|certificate/i);
});
