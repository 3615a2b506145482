"use strict";
// Table operations through @azure/data-tables (spec 2.1-2.4, 3.1, 11.3-11.4).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { odata } = require("@azure/data-tables");
const { useTarget, azuriteWrong, uniqueTableName, NOMETA } = require("../harness.js");

const target = useTarget();

async function listNames(service, filter) {
  const names = [];
  for await (const t of service.listTables(filter ? { queryOptions: { filter } } : {})) names.push(t.name);
  return names;
}

test("createTable (201 path) then listTables finds it", async () => {
  const service = target.t.serviceClient();
  const name = uniqueTableName();
  await service.createTable(name);
  try {
    assert.deepEqual(await listNames(service, odata`TableName eq ${name}`), [name]);
  } finally {
    await service.deleteTable(name);
  }
});

test("createTable on an existing table does not throw (409 TableAlreadyExists in the body)", async () => {
  const service = target.t.serviceClient();
  const name = uniqueTableName();
  await service.createTable(name);
  try {
    await service.createTable(name); // swallowed only when the body code is TableAlreadyExists
    await target.t.tableClient(name).createTable();
    const r = await target.t.raw("POST", "/Tables", { body: { TableName: name }, contentType: NOMETA });
    assert.equal(r.status, 409);
    assert.equal(r.errorCode(), "TableAlreadyExists");
  } finally {
    await service.deleteTable(name);
  }
});

test("a name differing only in case conflicts", async () => {
  const service = target.t.serviceClient();
  const name = uniqueTableName("Mixed");
  await service.createTable(name);
  try {
    const r = await target.t.raw("POST", "/Tables", { body: { TableName: name.toLowerCase() } });
    assert.equal(r.status, 409, r.text);
    assert.equal(r.errorCode(), "TableAlreadyExists");
    const names = await listNames(service, odata`TableName eq ${name}`);
    assert.deepEqual(names, [name]); // creation case kept
  } finally {
    await service.deleteTable(name);
  }
});

test("createTable with Prefer: return-no-content gives 204", async () => {
  const name = uniqueTableName();
  const r = await target.t.raw("POST", "/Tables", {
    body: { TableName: name }, headers: { Prefer: "return-no-content" },
  });
  try {
    assert.equal(r.status, 204, r.text);
    assert.equal(r.text, "");
    assert.equal(r.headers["preference-applied"], "return-no-content");
  } finally {
    await target.t.serviceClient().deleteTable(name);
  }
});

test("listTables with a prefix range and small pages follows continuation tokens", async () => {
  const service = target.t.serviceClient();
  const prefix = uniqueTableName("pg");
  const names = Array.from({ length: 7 }, (_, i) => `${prefix}x${i}`).sort();
  for (const n of names) await service.createTable(n);
  try {
    const hi = prefix + "y";
    const pages = [];
    const iter = service.listTables({ queryOptions: { filter: odata`TableName ge ${prefix} and TableName lt ${hi}` } });
    for await (const page of iter.byPage({ maxPageSize: 2 })) pages.push(page.map((t) => t.name));
    assert.ok(pages.length >= 4, `pages: ${JSON.stringify(pages)}`);
    assert.ok(pages.every((p) => p.length <= 2));
    assert.deepEqual(pages.flat(), names);
  } finally {
    for (const n of names) await service.deleteTable(n);
  }
});

test("deleteTable removes it; deleting a missing table does not throw", async () => {
  const service = target.t.serviceClient();
  const name = uniqueTableName();
  await service.createTable(name);
  await service.deleteTable(name);
  assert.deepEqual(await listNames(service, odata`TableName eq ${name}`), []);
  await service.deleteTable(name); // SDK swallows 404
  await target.t.tableClient(name).deleteTable();
  const r = await target.t.raw("DELETE", `/Tables('${name}')`);
  assert.equal(r.status, 404);
  assert.equal(r.errorCode(), "ResourceNotFound");
});

test("invalid table names are rejected with 400", async () => {
  const service = target.t.serviceClient();
  for (const bad of ["1abc", "ab", "a-b-c", "tables", "x".repeat(64)]) {
    await assert.rejects(service.createTable(bad), (e) => e.statusCode === 400, bad);
  }
});

test("invalid table names carry InvalidResourceName / OutOfRangeInput",
  azuriteWrong("table-name errors carry an empty error code (spec 2.2, 12)"), async () => {
    const cases = [["1abc", "InvalidResourceName"], ["tables", "InvalidResourceName"], ["ab", "OutOfRangeInput"]];
    for (const [bad, code] of cases) {
      const r = await target.t.raw("POST", "/Tables", { body: { TableName: bad } });
      assert.equal(r.status, 400, bad);
      assert.equal(r.headers["x-ms-error-code"], code, bad);
    }
  });

test("re-create right after delete", async () => {
  const service = target.t.serviceClient();
  const name = uniqueTableName();
  await service.createTable(name);
  await target.t.tableClient(name).createEntity({ partitionKey: "p", rowKey: "old" });
  await service.deleteTable(name);
  await service.createTable(name);
  try {
    const client = target.t.tableClient(name);
    const rows = [];
    for await (const e of client.listEntities()) rows.push(e.rowKey);
    assert.deepEqual(rows, []);
  } finally {
    await service.deleteTable(name);
  }
});

test("tables survive a restart (SIGTERM then start on the same data dir)", async (t) => {
  if (!target.t.managed) return t.skip("needs a tablestone process started by the harness");
  const service = target.t.serviceClient();
  const names = [uniqueTableName("keep"), uniqueTableName("keep")];
  for (const n of names) {
    await service.createTable(n);
    await target.t.tableClient(n).createEntity({ partitionKey: "p", rowKey: "r", v: 42 });
  }
  await target.t.restart();
  for (const n of names) {
    assert.deepEqual(await listNames(service, odata`TableName eq ${n}`), [n]);
    const e = await target.t.tableClient(n).getEntity("p", "r");
    assert.equal(e.v, 42);
    await service.deleteTable(n);
  }
});
