"use strict";
// Harness for the legacy Node SDK suite (azure-storage 2.10.x, the callback-style TableService that
// many Node apps still use). Same target rules as tests/e2e/js/harness.js:
//   TABLESTONE_E2E_CONNECTION_STRING set -> use that endpoint; otherwise start TABLESTONE_BIN
//   (default <repo>/build/server/app/tablestone) on a free port with a temporary data directory and
//   stop it with SIGTERM after the file's last test (exit code must be 0).

const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { before, after } = require("node:test");
const assert = require("node:assert/strict");
const azure = require("azure-storage");
const {
  ACCOUNT, ACCOUNT_KEY, parseConnectionString, freePort, ManagedServer, serverBinary, rejection,
} = require("../js/server.js");

const NOMETA = "application/json;odata=nometadata";
const MINIMAL = "application/json;odata=minimalmetadata";
const FULL = "application/json;odata=fullmetadata";

class LegacyTarget {
  async init() {
    const cs = process.env.TABLESTONE_E2E_CONNECTION_STRING;
    if (cs) {
      Object.assign(this, parseConnectionString(cs));
    } else {
      this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tablestone-e2e-legacy."));
      fs.mkdirSync(path.join(this.tmp, "data"));
      const port = await freePort();
      this.server = new ManagedServer(serverBinary(), path.join(this.tmp, "data"), port, path.join(this.tmp, "server.log"));
      await this.server.start();
      // TABLESTONE_E2E_LOCALHOST=1: addressed as localhost, the shape of a port a container harness maps.
      const host = process.env.TABLESTONE_E2E_LOCALHOST === "1" ? "localhost" : "127.0.0.1";
      Object.assign(this, { account: ACCOUNT, key: ACCOUNT_KEY, endpoint: `http://${host}:${port}/${ACCOUNT}` });
    }
    // The SDK takes the path-style endpoint (IP host + account segment) from TableEndpoint as is.
    this.connectionString = `DefaultEndpointsProtocol=http;AccountName=${this.account};` +
      `AccountKey=${this.key};TableEndpoint=${this.endpoint};`;
    return this;
  }

  service() {
    return azure.createTableService(this.connectionString);
  }

  // A client with the read-only secondary endpoint too ({account}-secondary, path-style), as the
  // SDK takes it: a host object instead of a connection string.
  serviceWithSecondary() {
    return azure.createTableService(this.account, this.key,
      { primaryHost: this.endpoint, secondaryHost: `${this.endpoint}-secondary` });
  }

  // A second client that holds only a SAS token (no account key).
  sasService(token) {
    return azure.createTableServiceWithSas(this.endpoint, token);
  }

  async close() {
    let code = 0;
    if (this.server) code = await this.server.stop();
    if (this.tmp) fs.rmSync(this.tmp, { recursive: true, force: true });
    return code;
  }
}

// File-level hooks: start the target before the first test, stop it after the last. Returns a holder
// whose .t is the LegacyTarget once tests run.
function useTarget() {
  const holder = { t: null };
  before(async () => {
    holder.t = await new LegacyTarget().init();
  });
  after(async () => {
    if (!holder.t) return;
    const code = await holder.t.close();
    assert.equal(code, 0, `tablestone did not exit with 0 on SIGTERM (got ${code})`);
  });
  return holder;
}

// Calls a callback-style SDK method: call(svc, "insertEntity", table, entity) resolves to
// { result, response } and rejects with the SDK's error (statusCode, code, and the response).
function call(svc, method, ...args) {
  return new Promise((resolve, reject) => {
    svc[method](...args, (err, result, response) => {
      if (err) {
        err.response = response;
        reject(err);
      } else {
        resolve({ result, response });
      }
    });
  });
}

// Expects the call to fail the way the SDK reports a service error: a StorageError whose statusCode
// and code (the service's error code, read from the body) are the given ones.
async function rejectsWith(promise, statusCode, code) {
  const err = await rejection(promise, statusCode);
  if (code !== undefined) assert.equal(err.code, code, `code: ${err.message}`);
  return err;
}

let tableCounter = 0;
function uniqueTableName(prefix = "legacy") {
  return `${prefix}${crypto.randomBytes(4).toString("hex")}${tableCounter++}`;
}

// Runs fn(svc, name) with a fresh table that is deleted afterwards.
async function withTable(t, fn) {
  const svc = t.service();
  const name = uniqueTableName();
  await call(svc, "createTable", name);
  try {
    return await fn(svc, name);
  } finally {
    await call(svc, "deleteTable", name).catch(() => {});
  }
}

module.exports = {
  azure, NOMETA, MINIMAL, FULL, useTarget, call, rejectsWith, uniqueTableName, withTable,
  gen: azure.TableUtilities.entityGenerator,
};
