"use strict";
// Table SAS made by the legacy SDK's generateSharedAccessSignature and used by a second client that
// holds only the token (createTableServiceWithSas): permissions, partition/row key ranges, a stored
// access policy named by the token, and an expired token.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { azure, useTarget, call, rejectsWith, withTable, gen } = require("../harness.js");

const h = useTarget();
const { SharedAccessPermissions: P } = azure.TableUtilities;

const HOUR = 3600 * 1000;
const ent = (pk, rk, props = {}) => ({ PartitionKey: gen.String(pk), RowKey: gen.String(rk), ...props });

async function fill(svc, table) {
  for (const pk of ["a", "b", "c", "d"]) {
    const batch = new azure.TableBatch();
    for (const rk of ["1", "2", "3"]) batch.insertEntity(ent(pk, rk, { V: gen.String(pk + rk) }));
    await call(svc, "executeBatch", table, batch);
  }
}

async function queryAll(svc, table) {
  const out = [];
  let token = null;
  do {
    const { result } = await call(svc, "queryEntities", table, new azure.TableQuery().top(2), token);
    out.push(...result.entries.map((e) => e.V._));
    token = result.continuationToken;
  } while (token);
  return out;
}

test("partition and row key ranges bound what the token can read and write", async () => {
  await withTable(h.t, async (svc, table) => {
    await fill(svc, table);
    const token = svc.generateSharedAccessSignature(table, { AccessPolicy: {
      Permissions: P.QUERY + P.ADD + P.UPDATE + P.DELETE,
      Expiry: new Date(Date.now() + HOUR),
      StartPk: "b", StartRk: "2", EndPk: "c", EndRk: "2",
    } });
    const fields = new URLSearchParams(token);
    assert.deepEqual(["tn", "sp", "spk", "srk", "epk", "erk"].map((k) => fields.get(k)), [table, "raud", "b", "2", "c", "2"]);
    const sas = h.t.sasService(token);
    // Paged with top(2): every page stays inside the range.
    assert.deepEqual(await queryAll(sas, table), ["b2", "b3", "c1", "c2"]);
    assert.equal((await call(sas, "retrieveEntity", table, "c", "1")).result.V._, "c1");

    await call(sas, "insertEntity", table, ent("b", "5", { V: gen.String("new") }));
    await call(sas, "mergeEntity", table, ent("c", "2", { W: gen.Int32(1) }));
    await call(sas, "deleteEntity", table, ent("b", "3"));
    for (const [op, e] of [["insertEntity", ent("a", "9")], ["replaceEntity", ent("b", "1")],
      ["mergeEntity", ent("c", "3")], ["deleteEntity", ent("d", "1")], ["insertOrMergeEntity", ent("z", "1")]]) {
      await rejectsWith(call(sas, op, table, e), 403, "AuthorizationFailure");
    }
    await rejectsWith(call(sas, "retrieveEntity", table, "a", "1"), 403, "AuthorizationFailure");

    // A batch inside the range goes through the token too.
    const batch = new azure.TableBatch();
    batch.insertEntity(ent("c", "0", { V: gen.String("c0") }));
    batch.insertOrReplaceEntity(ent("c", "1", { V: gen.String("c1x") }));
    await call(sas, "executeBatch", table, batch);

    const { result } = await call(svc, "queryEntities", table, null, null);
    assert.deepEqual(result.entries.map((e) => e.V._),
      ["a1", "a2", "a3", "b1", "b2", "new", "c0", "c1x", "c2", "c3", "d1", "d2", "d3"]);
  });
});

test("permissions: a read-only token reads and is refused writes", async () => {
  await withTable(h.t, async (svc, table) => {
    await fill(svc, table);
    const token = svc.generateSharedAccessSignature(table, { AccessPolicy: {
      Permissions: P.QUERY, Start: new Date(Date.now() - HOUR), Expiry: new Date(Date.now() + HOUR) } });
    const sas = h.t.sasService(token);
    assert.equal((await queryAll(sas, table)).length, 12);
    await rejectsWith(call(sas, "insertEntity", table, ent("a", "9")), 403, "AuthorizationPermissionMismatch");
    await rejectsWith(call(sas, "deleteEntity", table, ent("a", "1")), 403, "AuthorizationPermissionMismatch");
    await rejectsWith(call(sas, "insertOrReplaceEntity", table, ent("a", "1")), 403,
      "AuthorizationPermissionMismatch");
  });
});

test("a token naming a stored access policy, and an expired token", async () => {
  await withTable(h.t, async (svc, table) => {
    await fill(svc, table);
    await call(svc, "setTableAcl", table,
      { writer: { Permissions: "raud", Start: new Date(Date.now() - HOUR), Expiry: new Date(Date.now() + HOUR) } });
    const sas = h.t.sasService(svc.generateSharedAccessSignature(table, { Id: "writer" }));
    await call(sas, "insertEntity", table, ent("e", "1", { V: gen.String("e1") }));
    assert.equal((await call(svc, "retrieveEntity", table, "e", "1")).result.V._, "e1");

    const expired = h.t.sasService(svc.generateSharedAccessSignature(table, { AccessPolicy: {
      Permissions: P.QUERY, Start: new Date(Date.now() - 2 * HOUR), Expiry: new Date(Date.now() - HOUR) } }));
    await rejectsWith(call(expired, "retrieveEntity", table, "a", "1"), 403, "AuthenticationFailed");
  });
});
