"use strict";
// Black-box harness for the JS end-to-end suite (node:test + @azure/data-tables).
//
// Target rules (same as the Python harness):
//   TABLESTONE_E2E_CONNECTION_STRING set -> use that endpoint (e.g. Azurite); restart() is unavailable.
//   otherwise start TABLESTONE_BIN (default <repo>/build/server/app/tablestone) as
//     tablestone --tableHost 127.0.0.1 --tablePort <free port> -l <temp dir> -s
//   wait for GET /_tablestone/health -> 200, and stop it with SIGTERM at the end (exit code must be 0).
//   TABLESTONE_E2E_TARGET=azurite -> tests marked with azuriteWrong() are skipped.
//   The server itself is started by server.js (shared with tests/e2e/legacy).

const crypto = require("node:crypto");
const fs = require("node:fs");
const http = require("node:http");
const os = require("node:os");
const path = require("node:path");
const { before, after } = require("node:test");
const assert = require("node:assert/strict");
const { TableClient, TableServiceClient } = require("@azure/data-tables");
const { ACCOUNT, ACCOUNT_KEY, parseConnectionString, freePort, sleep, ManagedServer, serverBinary, rejection } =
  require("./server.js");

const MINIMAL = "application/json;odata=minimalmetadata";
const NOMETA = "application/json;odata=nometadata";
const FULL = "application/json;odata=fullmetadata";
const TARGET_KIND = (process.env.TABLESTONE_E2E_TARGET || "tablestone").trim().toLowerCase();
// TABLESTONE_E2E_LOCALHOST=1: the managed server is addressed as http://localhost:<port>/<account>,
// the shape of every port a container harness maps, with an account other than devstoreaccount1
// (a second one, added through AZURITE_ACCOUNTS): @azure/data-tables then takes its Cosmos DB path
// (isCosmosEndpoint: localhost, and a path that is not /devstoreaccount1), which sends PATCH as POST
// with X-HTTP-Method: MERGE, also inside batches. scripts/test.sh runs the suite once that way.
const LOCAL_SHAPE = process.env.TABLESTONE_E2E_LOCALHOST === "1";
const LOCAL_SHAPE_ACCOUNT = "localshape1";
if (LOCAL_SHAPE && !process.env.TABLESTONE_E2E_CONNECTION_STRING) {
  // Inherited by every server this process starts (the SDK reads only the first name, which is not
  // part of "localhost", so its Cosmos detection is unchanged).
  process.env.AZURITE_ACCOUNTS = `${ACCOUNT}:${ACCOUNT_KEY};${LOCAL_SHAPE_ACCOUNT}:${ACCOUNT_KEY}`;
}

class Target {
  // extraArgs: more flags for a managed server (e.g. --adminApi).
  async init({ extraArgs = [] } = {}) {
    this.kind = TARGET_KIND;
    const cs = process.env.TABLESTONE_E2E_CONNECTION_STRING;
    if (cs) {
      Object.assign(this, parseConnectionString(cs));
      this.managed = false;
    } else {
      const binary = serverBinary();
      try {
        fs.accessSync(binary, fs.constants.X_OK);
      } catch {
        throw new Error(`tablestone binary not found at ${binary} (set TABLESTONE_BIN or TABLESTONE_E2E_CONNECTION_STRING)`);
      }
      this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tablestone-e2e-js."));
      const data = path.join(this.tmp, "data");
      fs.mkdirSync(data);
      const port = await freePort();
      this.server = new ManagedServer(binary, data, port, path.join(this.tmp, "server.log"), extraArgs);
      await this.server.start();
      this.account = LOCAL_SHAPE ? LOCAL_SHAPE_ACCOUNT : ACCOUNT;
      this.key = ACCOUNT_KEY;
      this.endpoint = `http://${LOCAL_SHAPE ? "localhost" : "127.0.0.1"}:${port}/${this.account}`;
      this.managed = true;
    }
    const u = new URL(this.endpoint);
    this.host = u.hostname;
    this.port = Number(u.port || 80);
    this.basePath = u.pathname.replace(/\/+$/, "");
    this.connectionString =
      `DefaultEndpointsProtocol=http;AccountName=${this.account};AccountKey=${this.key};` +
      `TableEndpoint=${this.endpoint};`;
    return this;
  }

  get isAzurite() {
    return this.kind === "azurite";
  }

  serviceClient() {
    return TableServiceClient.fromConnectionString(this.connectionString, { allowInsecureConnection: true });
  }

  tableClient(name) {
    return TableClient.fromConnectionString(this.connectionString, name, { allowInsecureConnection: true });
  }

  // SIGTERM (exit code must be 0), then start again on the same data dir.
  async restart() {
    assert.ok(this.managed, "restart needs a managed server");
    const code = await this.server.stop();
    assert.equal(code, 0, `tablestone exit code on SIGTERM: ${code}; log:\n${this.server.logTail()}`);
    await this.server.start();
  }

  async close() {
    let code = 0;
    if (this.server) code = await this.server.stop();
    if (this.tmp) fs.rmSync(this.tmp, { recursive: true, force: true });
    return code;
  }

  // ---- raw HTTP signed with SharedKey (Table flavour) ------------------------------------------
  sign(method, fullPath, headers) {
    const lower = {};
    for (const [k, v] of Object.entries(headers)) lower[k.toLowerCase()] = v;
    const u = new URL(fullPath, "http://x");
    let resource = `/${this.account}${u.pathname}`;
    const comp = u.searchParams.get("comp");
    if (comp !== null) resource += `?comp=${comp}`;
    const toSign = [method, lower["content-md5"] || "", lower["content-type"] || "",
      lower["x-ms-date"] || lower.date || "", resource].join("\n");
    const sig = crypto.createHmac("sha256", Buffer.from(this.key, "base64")).update(toSign, "utf8").digest("base64");
    return `SharedKey ${this.account}:${sig}`;
  }

  // path is relative to the account root ("/Tables"), sent as given (percent-encode it yourself).
  raw(method, rel, { body, headers = {}, accept = MINIMAL, contentType, sign = true } = {}) {
    const fullPath = this.basePath + rel;
    let payload = null;
    if (body !== undefined && body !== null) {
      payload = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === "string" ? body : JSON.stringify(body));
      if (!contentType) contentType = "application/json";
    }
    const hdrs = {
      "x-ms-date": new Date().toUTCString(),
      "x-ms-version": "2019-02-02",
      DataServiceVersion: "3.0",
      MaxDataServiceVersion: "3.0;NetFx",
    };
    if (accept) hdrs.Accept = accept;
    if (contentType) hdrs["Content-Type"] = contentType;
    Object.assign(hdrs, headers);
    if (payload) hdrs["Content-Length"] = String(payload.length);
    else if (["POST", "PUT", "PATCH", "MERGE"].includes(method)) hdrs["Content-Length"] = "0";
    if (sign) hdrs.Authorization = this.sign(method, fullPath, hdrs);
    return new Promise((resolve, reject) => {
      const req = http.request({ host: this.host, port: this.port, method, path: fullPath, headers: hdrs }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({
            status: res.statusCode,
            headers: res.headers, // lower-cased names
            text,
            json: () => JSON.parse(text),
            errorCode: () => {
              try {
                return JSON.parse(text)["odata.error"].code;
              } catch {
                return undefined;
              }
            },
          });
        });
      });
      req.on("error", reject);
      if (payload) req.write(payload);
      req.end();
    });
  }
}

let tableCounter = 0;
function uniqueTableName(prefix = "js") {
  return `${prefix}${crypto.randomBytes(5).toString("hex")}${tableCounter++}`;
}

// Registers file-level hooks that start the target before the first test and stop it after the
// last one. Returns a holder whose .t is the Target once the tests run. Optional setup(t) /
// teardown(t) run right after the start / before the stop (one hook each, so the order is fixed).
function useTarget({ setup, teardown, extraArgs } = {}) {
  const holder = { t: null };
  before(async () => {
    holder.t = await new Target().init({ extraArgs });
    if (setup) await setup(holder.t);
  });
  after(async () => {
    if (!holder.t) return;
    if (teardown) await teardown(holder.t).catch(() => {});
    const code = await holder.t.close();
    if (holder.t.managed) assert.equal(code, 0, `tablestone did not exit with 0 on SIGTERM (got ${code})`);
  });
  return holder;
}

// Test options that skip a test only when targeting Azurite, for behaviour Azurite gets wrong.
function azuriteWrong(reason) {
  return { skip: TARGET_KIND === "azurite" ? `Azurite deviation: ${reason}` : false };
}

// Runs fn with a fresh table; deletes the table afterwards.
async function withTable(t, fn) {
  const name = uniqueTableName();
  const service = t.serviceClient();
  await service.createTable(name);
  try {
    return await fn(t.tableClient(name), name);
  } finally {
    await service.deleteTable(name).catch(() => {});
  }
}

// Expects promise to reject with a RestError of the given status (and code, when given).
async function rejectsWith(promise, statusCode, code) {
  const err = await rejection(promise, statusCode);
  if (code !== undefined) {
    // @azure/data-tables 13 leaves err.code unset; the codes are in err.details: errorCode from the
    // x-ms-error-code header, odataError.code from the JSON body. Both must name the error.
    const d = err.details || {};
    assert.equal(d.odataError && d.odataError.code, code, `body code: ${err.message}`);
    assert.equal(d.errorCode, code, `x-ms-error-code: ${err.message}`);
  }
  return err;
}

function entityPath(table, pk, rk) {
  const enc = (k) => encodeURIComponent(k.replace(/'/g, "''"));
  return `/${table}(PartitionKey='${enc(pk)}',RowKey='${enc(rk)}')`;
}

module.exports = {
  ACCOUNT, ACCOUNT_KEY, MINIMAL, NOMETA, FULL, TARGET_KIND,
  Target, ManagedServer, freePort, useTarget, azuriteWrong, uniqueTableName, withTable, rejectsWith, entityPath, sleep,
};
