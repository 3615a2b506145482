"use strict";
// GET /_tablestone/metrics through @azure/data-tables calls (docs/observability.md): the request
// counters move by exactly the calls made (deltas between two scrapes of the suite's server; files
// run one at a time and this file's tests in order), and every scrape passes a strict check of the
// Prometheus text format (the full parser is tests/e2e/python/test_metrics.py).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const http = require("node:http");
const { useTarget, uniqueTableName } = require("../harness.js");

const target = useTarget();

function get(port, path) {
  return new Promise((resolve, reject) => {
    http.get({ host: "127.0.0.1", port, path }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
    }).on("error", reject);
  });
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`);
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(,|$)/;

// Returns Map("name{labels}" -> value) after checking every line.
function parse(text) {
  assert.ok(text.endsWith("\n"));
  const types = new Map();
  const samples = new Map();
  for (const line of text.slice(0, -1).split("\n")) {
    let m = line.match(new RegExp(`^# HELP (${NAME}) .*$`));
    if (m) continue;
    m = line.match(new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`));
    if (m) {
      assert.ok(!types.has(m[1]), `second TYPE: ${line}`);
      types.set(m[1], m[2]);
      continue;
    }
    m = line.match(SAMPLE);
    assert.ok(m, `not a HELP, TYPE or sample line: ${line}`);
    let rest = m[2] || "";
    while (rest.length > 0) {
      const lm = rest.match(LABEL);
      assert.ok(lm, `bad labels: ${line}`);
      rest = rest.slice(lm[0].length);
    }
    assert.match(m[3], /^([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]Inf|NaN)$/, line);
    const family = m[1].replace(/_(bucket|sum|count)$/, "");
    assert.ok(types.has(m[1]) || types.get(family) === "histogram", `sample without TYPE: ${line}`);
    const key = m[2] ? `${m[1]}{${m[2]}}` : m[1];
    assert.ok(!samples.has(key), `repeated sample: ${line}`);
    samples.set(key, Number(m[3]));
  }
  return samples;
}

function requests(samples, op, cls) {
  return samples.get(`tablestone_requests_total{account="${target.t.account}",operation="${op}",status_class="${cls}"}`) || 0;
}

test("the request counters move by exactly the SDK calls made", async (t) => {
  if (!target.t.managed) return t.skip("needs a tablestone process started by the harness");
  const before = parse((await get(target.t.port, "/_tablestone/metrics")).body);
  const name = uniqueTableName();
  const service = target.t.serviceClient();
  await service.createTable(name);
  const table = target.t.tableClient(name);
  await table.createEntity({ partitionKey: "p", rowKey: "1", v: 1 });
  await table.createEntity({ partitionKey: "p", rowKey: "2", v: 2 });
  await table.getEntity("p", "1");
  await service.deleteTable(name);
  const scrape = await get(target.t.port, "/_tablestone/metrics");
  assert.equal(scrape.status, 200);
  assert.equal(scrape.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  const after = parse(scrape.body);
  const delta = (op, cls) => requests(after, op, cls) - requests(before, op, cls);
  assert.equal(delta("CreateTable", "2xx"), 1);
  assert.equal(delta("InsertEntity", "2xx"), 2);
  assert.equal(delta("GetEntity", "2xx"), 1);
  assert.equal(delta("DeleteTable", "2xx"), 1);
  let total = 0;
  for (const [k, v] of after) if (k.startsWith("tablestone_requests_total{")) total += v;
  for (const [k, v] of before) if (k.startsWith("tablestone_requests_total{")) total -= v;
  assert.equal(total, 5, "scrapes and health polls are not counted");
});

test("health?detail=1 reports the server's facts", async (t) => {
  if (!target.t.managed) return t.skip("needs a tablestone process started by the harness");
  const r = await get(target.t.port, "/_tablestone/health?detail=1");
  assert.equal(r.status, 200);
  const j = JSON.parse(r.body);
  assert.equal(j.status, "ok");
  assert.match(j.version, /^\d+\.\d+\.\d+/);
  assert.equal(j.durability, "default");
  assert.ok(j.accounts.some((a) => a.name === target.t.account), JSON.stringify(j.accounts));
  assert.equal(typeof j.accounts[0].tables, "number");
});
