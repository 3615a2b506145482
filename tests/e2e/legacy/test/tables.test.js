"use strict";
// Tables through the legacy SDK: create, exists, list (segmented, with prefix and continuation),
// delete, and the errors as the SDK reports them (StorageError with statusCode and the service code).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { azure, useTarget, call, rejectsWith, uniqueTableName } = require("../harness.js");

const h = useTarget();

test("create, exists, list with prefix, delete", async () => {
  const svc = h.t.service();
  const prefix = uniqueTableName("lt");
  const names = [`${prefix}a`, `${prefix}b`, `${prefix}c`];
  for (const n of names) {
    const { result } = await call(svc, "createTable", n);
    assert.equal(result.TableName, n);
    assert.equal(result.isSuccessful, true);
  }
  const { result: exists } = await call(svc, "doesTableExist", names[0]);
  assert.equal(exists.exists, true);
  const { result: listed } = await call(svc, "listTablesSegmentedWithPrefix", prefix, null);
  assert.deepEqual(listed.entries.sort(), names);
  assert.equal(listed.continuationToken, null);

  // One table per page: the SDK follows NextTableName through its continuation token.
  const seen = [];
  let token = null;
  do {
    const { result } = await call(svc, "listTablesSegmentedWithPrefix", prefix, token, { maxResults: 1 });
    seen.push(...result.entries);
    token = result.continuationToken;
    if (token) assert.ok(token.nextTableName, "continuation token carries nextTableName");
  } while (token);
  assert.deepEqual(seen, names);

  const { result: all } = await call(svc, "listTablesSegmented", null);
  for (const n of names) assert.ok(all.entries.includes(n));

  for (const n of names) await call(svc, "deleteTable", n);
  const { result: gone } = await call(svc, "doesTableExist", names[0]);
  assert.equal(gone.exists, false);
});

test("createTableIfNotExists and deleteTableIfExists report whether they acted", async () => {
  const svc = h.t.service();
  const name = uniqueTableName();
  assert.equal((await call(svc, "createTableIfNotExists", name)).result.created, true);
  assert.equal((await call(svc, "createTableIfNotExists", name)).result.created, false);
  assert.equal((await call(svc, "deleteTableIfExists", name)).result, true);
  assert.equal((await call(svc, "deleteTableIfExists", name)).result, false);
});

test("409 TableAlreadyExists and 404 ResourceNotFound as the SDK reports them", async () => {
  const svc = h.t.service();
  const name = uniqueTableName();
  await call(svc, "createTable", name);
  const err = await rejectsWith(call(svc, "createTable", name), 409, "TableAlreadyExists");
  assert.match(err.message, /table specified already exists/i);
  await call(svc, "deleteTable", name);
  await rejectsWith(call(svc, "deleteTable", name), 404, "ResourceNotFound");
  await rejectsWith(call(svc, "queryEntities", name, null, null), 404, "TableNotFound");
});

test("service properties and table ACLs round-trip", async () => {
  const svc = h.t.service();
  const name = uniqueTableName();
  await call(svc, "createTable", name);
  const start = new Date(Date.UTC(2024, 0, 1));
  const expiry = new Date(Date.UTC(2099, 0, 1));
  await call(svc, "setTableAcl", name, { reader: { Permissions: "r", Start: start, Expiry: expiry } });
  const { result } = await call(svc, "getTableAcl", name);
  assert.equal(result.signedIdentifiers.reader.Permissions, "r");
  assert.equal(result.signedIdentifiers.reader.Expiry.toISOString(), expiry.toISOString());
  const { result: props } = await call(svc, "getServiceProperties");
  assert.ok(props.Logging || props.HourMetrics, "service properties have logging/metrics sections");
  await call(svc, "deleteTable", name);
});

test("service stats from the secondary endpoint; the primary refuses them as the service does", async () => {
  const svc = h.t.serviceWithSecondary();
  const { SECONDARY_ONLY } = azure.StorageUtilities.LocationMode;
  const { result } = await call(svc, "getServiceStats", { locationMode: SECONDARY_ONLY });
  assert.equal(result.GeoReplication.Status, "live");
  assert.ok(result.GeoReplication.LastSyncTime instanceof Date);
  // Without a location mode the SDK asks the primary, which answers 400.
  await rejectsWith(call(svc, "getServiceStats"), 400, "InvalidQueryParameterValue");
  // Reads through the secondary see the primary's tables.
  const name = uniqueTableName();
  await call(svc, "createTable", name);
  const { result: listed } = await call(svc, "listTablesSegmentedWithPrefix", name, null,
    { locationMode: SECONDARY_ONLY });
  assert.deepEqual(listed.entries, [name]);
  await call(svc, "deleteTable", name);
});
