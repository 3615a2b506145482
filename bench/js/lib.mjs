// Shared helpers of the Node benchmark tools (loader, drain, startup, SDK
// bench): the account SAS, the benchmark entity shape, raw keep-alive HTTP,
// the $batch body, percentiles and argument parsing. Standard library only.
import crypto from "node:crypto";
import http from "node:http";
import https from "node:https";

export const ACCOUNT = "devstoreaccount1";
export const KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

// Account SAS, x-ms-version 2019-02-02 (no encryption-scope line), the same
// token bench/make_sas.py prints: string-to-sign is
// account\nsp\nss\nsrt\nst\nse\nsip\nspr\nsv\n, HMAC-SHA256 under the decoded key.
export function accountSas(account = ACCOUNT, key = KEY) {
  const f = { sv: "2019-02-02", ss: "t", srt: "sco", sp: "rwdlacu", se: "2099-01-01T00:00:00Z", st: "2020-01-01T00:00:00Z" };
  const toSign = [account, f.sp, f.ss, f.srt, f.st, f.se, "", "", f.sv].join("\n") + "\n";
  const sig = crypto.createHmac("sha256", Buffer.from(key, "base64")).update(toSign, "utf8").digest("base64");
  return Object.entries({ ...f, sig }).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&");
}

export const rowKey = (i) => `r${String(i).padStart(7, "0")}`;

// The benchmark entity (about 300 bytes of JSON): the same shape as the wrk
// Lua scripts write (bench/wrk/common.lua).
export function entity(pk, rk, i) {
  return {
    PartitionKey: pk,
    RowKey: rk,
    Name: `name-${rk}-abcdefghijklmnopqrstuvwxyz0123456789`,
    Num: i,
    Big: String(i * 1000003),
    "Big@odata.type": "Edm.Int64",
    Score: i / 7,
    Active: i % 2 === 0,
    When: "2024-01-01T00:00:00.000Z",
    "When@odata.type": "Edm.DateTime",
  };
}

// The cold-scan entity (bench/cold/run.sh): 12 custom properties covering every
// Edm type. Rating = 1 + i % 5 and Age = 30 + i % 12, so `Rating eq 5 and
// Age eq 41` keeps the rows with i % 60 == 59 (833 of 50,000).
export function entity12(pk, rk, i) {
  const hex = (n) => (n >>> 0).toString(16).padStart(8, "0");
  return {
    PartitionKey: pk,
    RowKey: rk,
    Name: `name-${rk}-abcdefghijklmnopqrstuvwxyz`,
    City: ["Oslo", "Lima", "Pune", "Kobe", "Graz"][i % 5],
    Age: 30 + (i % 12),
    Rating: 1 + (i % 5),
    Big: String(i * 1000003),
    "Big@odata.type": "Edm.Int64",
    Ticks: String(638000000000000000n + BigInt(i)),
    "Ticks@odata.type": "Edm.Int64",
    Score: i / 7,
    Price: (i % 1000) + 0.25,
    Active: i % 2 === 0,
    When: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    "When@odata.type": "Edm.DateTime",
    Id: `${hex(i)}-0000-4000-8000-${hex(i * 2654435761)}0000`,
    "Id@odata.type": "Edm.Guid",
    Blob: Buffer.from(`blob-${i}`).toString("base64"),
    "Blob@odata.type": "Edm.Binary",
  };
}

// Same entity for the SDK, which types values itself.
export function sdkEntity(pk, rk, i) {
  return {
    partitionKey: pk,
    rowKey: rk,
    Name: `name-${rk}-abcdefghijklmnopqrstuvwxyz0123456789`,
    Num: i,
    Big: { value: String(i * 1000003), type: "Int64" },
    Score: i / 7,
    Active: i % 2 === 0,
    When: new Date("2024-01-01T00:00:00.000Z"),
  };
}

// A $batch body of one changeset of inserts (POST) into `table`.
export function batchBody(base, table, entities, tag = crypto.randomUUID()) {
  const b = `batch_${tag}`;
  const cs = `changeset_${tag}`;
  const parts = [`--${b}\r\nContent-Type: multipart/mixed; boundary=${cs}\r\n\r\n`];
  for (const e of entities) {
    parts.push(
      `--${cs}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n` +
        `POST ${base}/${ACCOUNT}/${table} HTTP/1.1\r\nContent-Type: application/json\r\n` +
        `Accept: application/json;odata=minimalmetadata\r\nPrefer: return-no-content\r\nDataServiceVersion: 3.0\r\n\r\n` +
        `${JSON.stringify(e)}\r\n`,
    );
  }
  parts.push(`--${cs}--\r\n--${b}--\r\n`);
  return { body: parts.join(""), contentType: `multipart/mixed; boundary=${b}` };
}

// Minimal keep-alive HTTP(S) client (https: for an https:// base URL; a self-signed server
// certificate is trusted through NODE_EXTRA_CA_CERTS). Resolves {status, headers, body}; body is a
// string, or the raw Buffer when `raw` is set (the query timings count
// entities in the bytes: decoding a 300 KB page to a string costs the client
// more than a fast server spends producing it). Rejects on socket errors or
// after `timeoutMs`.
export function makeClient(baseUrl, maxSockets, { raw = false } = {}) {
  const u = new URL(baseUrl);
  const transport = u.protocol === "https:" ? https : http;
  const agent = new transport.Agent({ keepAlive: true, maxSockets });
  return function request(method, path, { headers = {}, body } = {}, timeoutMs = 60000) {
    return new Promise((resolve, reject) => {
      const h = { "x-ms-version": "2019-02-02", DataServiceVersion: "3.0", ...headers };
      if (body !== undefined) h["Content-Length"] = Buffer.byteLength(body);
      const req = transport.request(
        { host: u.hostname, port: u.port, method, path, headers: h, agent, timeout: timeoutMs },
        (res) => {
          const chunks = [];
          res.on("data", (c) => chunks.push(c));
          res.on("end", () => {
            const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
            resolve({ status: res.statusCode, headers: res.headers, body: raw ? bytes : bytes.toString("utf8") });
          });
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`timeout after ${timeoutMs} ms: ${method} ${path.slice(0, 120)}`)));
      req.on("error", reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  };
}

export async function createTable(request, sas, table) {
  const r = await request("POST", `/${ACCOUNT}/Tables?${sas}`, {
    headers: { "Content-Type": "application/json", Accept: "application/json;odata=nometadata", Prefer: "return-no-content" },
    body: JSON.stringify({ TableName: table }),
  });
  if (r.status !== 201 && r.status !== 204 && r.status !== 409) {
    throw new Error(`create table ${table}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
  }
  return r.status;
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// "--name value" pairs and bare "--flag"s into an object; numbers stay strings.
export function parseArgs(argv, defaults) {
  const out = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("--")) throw new Error(`unexpected argument ${a}`);
    const name = a.slice(2);
    if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) out[name] = argv[++i];
    else out[name] = true;
  }
  return out;
}

export const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

// Counts entities in an OData JSON page (a string or a Buffer: indexOf works
// on both) without a full parse (client cost would otherwise dominate the
// fast servers' page times).
export function countEntities(body) {
  let n = 0;
  for (let i = body.indexOf('"RowKey":'); i !== -1; i = body.indexOf('"RowKey":', i + 9)) n++;
  return n;
}

export function continuation(headers) {
  const pk = headers["x-ms-continuation-nextpartitionkey"];
  const rk = headers["x-ms-continuation-nextrowkey"];
  if (pk === undefined && rk === undefined) return null;
  return { pk, rk };
}
