"use strict";
// tablestone's image started by Azurite's own harness, @testcontainers/azurite 11.7.1 (the newest
// that runs on Node 20), with nothing changed but the image name, then driven by the Azure SDKs
// through the connection string the harness hands out (issue 33, docs/migrating-from-azurite.md).
//
// The harness starts the image with entrypoint `azurite` and Azurite's flags and waits for Azurite's
// three "... service is successfully listening" lines; the container runs under whatever engine
// DOCKER_HOST names (docker/test-image.sh points it at Podman's Docker-compatible API).
//
// Environment: TABLESTONE_TC_IMAGE (the image to start, required), TABLESTONE_TC_CERT and
// TABLESTONE_TC_KEY (a PEM certificate for 127.0.0.1 and its key, for the HTTPS + OAuth test).
// Run: node --test tests/e2e/containers/ (from docker/test-image.sh).

const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const { AzuriteContainer } = require("@testcontainers/azurite");
const { TableClient, TableServiceClient, odata } = require("@azure/data-tables");
const { BlobServiceClient } = require("@azure/storage-blob");
const { QueueServiceClient } = require("@azure/storage-queue");

const IMAGE = process.env.TABLESTONE_TC_IMAGE;
const OPTIONS = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
const NO_RETRY = { retryOptions: { maxTries: 1 } };

let counter = 0;
const uniqueName = (prefix) => `${prefix}${Date.now().toString(36)}${counter++}`;

// Stops the container and returns how long the stop took (SIGTERM to exit), in ms.
async function stopTimed(container) {
  const t0 = Date.now();
  await container.stop({ timeout: 10 });
  return Date.now() - t0;
}

async function logsOf(container) {
  const stream = await container.logs();
  return new Promise((resolve) => {
    let text = "";
    stream.on("data", (chunk) => (text += chunk.toString()));
    stream.on("end", () => resolve(text));
    setTimeout(() => resolve(text), 2000);
  });
}

// Tables, typed entities, a query with continuation and a batch through `tableService`/`tableOf`.
async function tableWorkload(tableService, tableOf) {
  const name = uniqueName("tc");
  await tableService.createTable(name);
  const names = [];
  for await (const t of tableService.listTables({ queryOptions: { filter: odata`TableName eq ${name}` } })) {
    names.push(t.name);
  }
  assert.deepEqual(names, [name]);
  const table = tableOf(name);

  const when = new Date("2024-05-06T07:08:09.123Z");
  await table.createEntity({
    partitionKey: "p'1", rowKey: "r ü 1", text: "drop-in", count: 42,
    big: { value: "1099511627776", type: "Int64" }, ratio: 0.25, flag: true, when,
    id: { value: "01234567-89ab-cdef-0123-456789abcdef", type: "Guid" }, bytes: new Uint8Array([0, 1, 254]),
  });
  const got = await table.getEntity("p'1", "r ü 1", { disableTypeConversion: true });
  assert.equal(got.text.value, "drop-in");
  assert.equal(got.count.value, "42");
  assert.deepEqual(got.big, { value: "1099511627776", type: "Int64" });
  assert.deepEqual(got.id, { value: "01234567-89ab-cdef-0123-456789abcdef", type: "Guid" });
  assert.equal(got.when.type, "DateTime");
  assert.equal(new Date(got.when.value).getTime(), when.getTime());
  assert.equal(got.bytes.type, "Binary");
  // Merge (the SDKs tunnel it as POST + X-HTTP-Method: MERGE on Cosmos-shaped endpoints).
  await table.updateEntity({ partitionKey: "p'1", rowKey: "r ü 1", extra: "merged" }, "Merge");
  const merged = await table.getEntity("p'1", "r ü 1");
  assert.equal(merged.extra, "merged");
  assert.equal(merged.text, "drop-in");

  // A batch: 25 inserts in one changeset, then a mixed one.
  const inserts = [];
  for (let i = 0; i < 25; i++) inserts.push(["create", { partitionKey: "bulk", rowKey: String(i).padStart(3, "0"), n: i }]);
  const batch = await table.submitTransaction(inserts);
  assert.equal(batch.status, 202);
  assert.equal(batch.subResponses.length, 25);
  await table.submitTransaction([
    ["update", { partitionKey: "bulk", rowKey: "000", n: 100 }, "Merge"],
    ["upsert", { partitionKey: "bulk", rowKey: "100", n: 200 }, "Replace"],
    ["delete", { partitionKey: "bulk", rowKey: "024" }],
  ]);

  // A query with continuation: pages of 10 over 25 rows.
  const pages = [];
  const iterator = table.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"bulk"}` } }).byPage({ maxPageSize: 10 });
  for await (const page of iterator) {
    pages.push(page.map((e) => e.n));
    if (pages.length < 3) assert.ok(page.continuationToken, "a continuation token after a full page");
  }
  assert.deepEqual(pages.map((p) => p.length), [10, 10, 5]);
  assert.equal(pages.flat()[0], 100);
  assert.equal(pages.flat().at(-1), 200);
  await tableService.deleteTable(name);
}

// The Blob and Queue ports: empty lists for readiness checks, a clear refusal for the rest.
async function blobAndQueue(connectionString) {
  const blobs = BlobServiceClient.fromConnectionString(connectionString, NO_RETRY);
  // Aspire's health check: one page of at most one container.
  const page = (await blobs.listContainers().byPage({ maxPageSize: 1 }).next()).value;
  assert.deepEqual(page.containerItems ?? [], []);
  const queues = QueueServiceClient.fromConnectionString(connectionString, NO_RETRY);
  const queuePage = (await queues.listQueues().byPage({ maxPageSize: 1 }).next()).value;
  assert.deepEqual(queuePage.queueItems ?? [], []);
  await assert.rejects(blobs.createContainer(uniqueName("c")), (error) => {
    assert.equal(error.statusCode, 501);
    assert.equal(error.code, "NotImplemented");
    assert.match(error.message, /Azure Table service only/);
    assert.match(error.message, /mcr\.microsoft\.com\/azure-storage\/azurite/);
    return true;
  });
  await assert.rejects(queues.createQueue(uniqueName("q")), (error) => error.statusCode === 501);
}

test("the default harness: Azurite's readiness lines, a Table workload, Blob/Queue refusals, a fast stop", async () => {
  const container = await new AzuriteContainer(IMAGE).start();
  let stopped = false;
  try {
    const cs = container.getConnectionString();
    await tableWorkload(TableServiceClient.fromConnectionString(cs, OPTIONS),
      (name) => TableClient.fromConnectionString(cs, name, OPTIONS));
    await blobAndQueue(cs);
    const logs = await logsOf(container);
    for (const service of ["Blob", "Queue", "Table"]) {
      assert.match(logs, new RegExp(`^Azurite ${service} service is successfully listening at http://0\\.0\\.0\\.0:1000[0-2]$`, "m"));
    }
    // Testcontainers-Rust waits for this exact line.
    assert.match(logs, /^Azurite Table service is successfully listening at http:\/\/0\.0\.0\.0:10002$/m);
    assert.match(logs, /^This is tablestone .*Table service only/m);
    const ms = await stopTimed(container);
    stopped = true;
    console.log(`# stop (SIGTERM to exit) took ${ms} ms`);
    assert.ok(ms < 3000, `stop took ${ms} ms`);
  } finally {
    if (!stopped) await container.stop();
  }
});

test("withInMemoryPersistence(): the workload runs and nothing is written under /data", async () => {
  const container = await new AzuriteContainer(IMAGE).withInMemoryPersistence().withExtentMemoryLimitInMegaBytes(64).start();
  try {
    const cs = container.getConnectionString();
    await tableWorkload(TableServiceClient.fromConnectionString(cs, OPTIONS),
      (name) => TableClient.fromConnectionString(cs, name, OPTIONS));
    const listing = await container.exec(["sh", "-c", "ls -A /data | wc -l"]);
    assert.equal(listing.exitCode, 0);
    assert.equal(listing.output.trim(), "0", `files in /data: ${listing.output}`);
  } finally {
    await container.stop();
  }
});

test("a second account through AZURITE_ACCOUNTS (withAccountName/withAccountKey)", async () => {
  const key = Buffer.from("tablestone-second-account-key-0123456789").toString("base64");
  const container = await new AzuriteContainer(IMAGE).withAccountName("tcsecond").withAccountKey(key).start();
  try {
    const cs = container.getConnectionString();
    assert.match(cs, /AccountName=tcsecond;/);
    await tableWorkload(TableServiceClient.fromConnectionString(cs, OPTIONS),
      (name) => TableClient.fromConnectionString(cs, name, OPTIONS));
    // As in Azurite, the custom account replaces the default one.
    const devCs = cs.replace(/AccountName=tcsecond/, "AccountName=devstoreaccount1")
      .replace(/AccountKey=[^;]+/, "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
      .replaceAll("/tcsecond", "/devstoreaccount1");
    await assert.rejects(TableServiceClient.fromConnectionString(devCs, OPTIONS).createTable(uniqueName("dev")),
      (error) => error.statusCode === 403);
  } finally {
    await container.stop();
  }
});

// Version 12.x of the module (Node 22) adds withSsl(cert, key) and withOAuth(); 11.7.1 has neither.
// This reproduces what 12.x does: the PEM files copied to /azurite-cert.pem (0644) and
// /azurite-key.pem (0600) and "--cert /azurite-cert.pem --key /azurite-key.pem --oauth basic" added
// to the command line. The engine writes the copied files as root, so the key is a root-owned 0600
// file: the image's entrypoint hands the server (uid 10002) a readable copy of it (docker/entrypoint.sh),
// with no user setting here, as with Azurite's root image.
class AzuriteContainerWithSslAndOAuth extends AzuriteContainer {
  constructor(image, cert, key) {
    super(image);
    this.withCopyContentToContainer([
      { content: cert, target: "/azurite-cert.pem", mode: 0o644 },
      { content: key, target: "/azurite-key.pem", mode: 0o600 },
    ]);
  }

  withCommand(command) {
    return super.withCommand([...command, "--cert", "/azurite-cert.pem", "--key", "/azurite-key.pem", "--oauth", "basic"]);
  }
}

const b64url = (obj) => Buffer.from(JSON.stringify(obj)).toString("base64url");
function makeJwt() {
  const now = Math.floor(Date.now() / 1000);
  return [b64url({ alg: "RS256", typ: "JWT" }),
    b64url({ aud: "https://storage.azure.com", iss: "https://sts.windows.net/tenant-1/", tid: "tenant-1",
      nbf: now - 60, exp: now + 3600, oid: "00000000-0000-0000-0000-000000000001" }),
    Buffer.from("not-a-signature").toString("base64url")].join(".");
}

test("HTTPS + --oauth basic, as withSsl() + withOAuth() start it: a token credential's workload", {
  skip: !process.env.TABLESTONE_TC_CERT && "TABLESTONE_TC_CERT/TABLESTONE_TC_KEY not set",
}, async () => {
  const cert = fs.readFileSync(process.env.TABLESTONE_TC_CERT, "utf8");
  const key = fs.readFileSync(process.env.TABLESTONE_TC_KEY, "utf8");
  const container = await new AzuriteContainerWithSslAndOAuth(IMAGE, cert, key).start();
  try {
    const logs = await logsOf(container);
    assert.match(logs, /^Azurite Table service is successfully listening at https:\/\/0\.0\.0\.0:10002$/m);
    const endpoint = `https://${container.getHost()}:${container.getTablePort()}/devstoreaccount1`;
    const credential = { getToken: async () => ({ token: makeJwt(), expiresOnTimestamp: Date.now() + 3600e3 }) };
    const options = { tlsOptions: { ca: cert }, retryOptions: { maxRetries: 0 } };
    await tableWorkload(new TableServiceClient(endpoint, credential, options),
      (name) => new TableClient(endpoint, name, credential, options));
    // The shared key still works alongside the token (Azurite's --oauth basic keeps both).
    const cs = `DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;AccountKey=${container.getAccountKey()};` +
      `TableEndpoint=${endpoint};`;
    await TableServiceClient.fromConnectionString(cs, options).createTable(uniqueName("key"));
    // The Blob port speaks HTTPS too, with the same certificate.
    const blobs = new BlobServiceClient(`https://${container.getHost()}:${container.getBlobPort()}/devstoreaccount1`,
      undefined, { ...NO_RETRY, tlsOptions: { ca: cert } });
    const page = (await blobs.listContainers().byPage({ maxPageSize: 1 }).next()).value;
    assert.deepEqual(page.containerItems ?? [], []);
  } finally {
    await container.stop();
  }
});
