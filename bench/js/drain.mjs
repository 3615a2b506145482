// Query timing with raw HTTP (no SDK), following continuation tokens the way
// every SDK does (x-ms-continuation-NextPartitionKey/NextRowKey sent back as
// NextPartitionKey/NextRowKey with the same $filter/$top).
//
// Modes:
//   --mode drain  : read every page of `--filter` (URL-decoded OData text, may
//                   be empty) on `--table`, `--repeat` times; reports the
//                   median time of a full drain, entities, pages, entities/s.
//   --mode deep   : walk the whole table in pages of `--top` (default 1000)
//                   collecting the continuation tokens, then fetch the first
//                   page, the page at 50% and the page at 90% of the table
//                   `--repeat` times each; reports median ms per page and the
//                   ratio deep/first.
//
//   node drain.mjs --url http://127.0.0.1:20002 --table bench --mode drain \
//        --filter "PartitionKey eq 'pt'" [--repeat 5] [--warmup 0] [--warmup-ms 0] [--top 1000]
//
// Warm-up (drain mode): `--warmup` unmeasured drains, continued until
// `--warmup-ms` have passed. Node's HTTP client runs unoptimized for its first
// few hundred requests and then costs ~0.2 ms less per request: a count of
// drains alone warms a 5 ms query far less than a 0.2 ms one.
//
// Prints one JSON line.
import { ACCOUNT, accountSas, continuation, countEntities, makeClient, median, nowMs, parseArgs } from "./lib.mjs";

const args = parseArgs(process.argv.slice(2), { url: "http://127.0.0.1:20002", table: "bench", mode: "drain", filter: "", repeat: "5", top: "", warmup: "0", "warmup-ms": "0" });
const sas = accountSas();
const request = makeClient(args.url, 1, { raw: true });
const repeat = Number(args.repeat);

function pagePath(token) {
  const q = [];
  if (args.filter) q.push(`$filter=${encodeURIComponent(args.filter)}`);
  if (args.top) q.push(`$top=${args.top}`);
  if (token && token.pk !== undefined) q.push(`NextPartitionKey=${encodeURIComponent(token.pk)}`);
  if (token && token.rk !== undefined) q.push(`NextRowKey=${encodeURIComponent(token.rk)}`);
  q.push(sas);
  return `/${ACCOUNT}/${args.table}()?${q.join("&")}`;
}

async function fetchPage(token) {
  const r = await request("GET", pagePath(token), { headers: { Accept: "application/json;odata=nometadata" } }, 300000);
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.body.toString("utf8").slice(0, 300)}`);
  return { entities: countEntities(r.body), next: continuation(r.headers) };
}

async function drainOnce(onPage) {
  let token = null;
  let entities = 0;
  let pages = 0;
  const t0 = nowMs();
  do {
    if (onPage) onPage(pages, token);
    const p = await fetchPage(token);
    entities += p.entities;
    pages++;
    token = p.next;
  } while (token);
  return { ms: nowMs() - t0, entities, pages };
}

let out;
if (args.mode === "drain") {
  // Unmeasured drains first: the first requests of a fresh Node process cost
  // up to ~9 ms of its own (JIT, connection), more than a fast server's query.
  const warmStart = nowMs();
  let warmups = 0;
  while (warmups < Number(args.warmup) || nowMs() - warmStart < Number(args["warmup-ms"])) {
    await drainOnce();
    warmups++;
  }
  const runs = [];
  for (let i = 0; i < repeat; i++) runs.push(await drainOnce());
  const ms = median(runs.map((r) => r.ms));
  out = {
    mode: "drain", table: args.table, filter: args.filter, repeat, warmups,
    median_ms: +ms.toFixed(2), min_ms: +Math.min(...runs.map((r) => r.ms)).toFixed(2),
    entities: runs[0].entities, pages: runs[0].pages,
  };
} else if (args.mode === "deep") {
  if (!args.top) args.top = "1000";
  const tokens = [];
  const walk = await drainOnce((i, token) => tokens.push(token));
  const pick = (f) => Math.min(tokens.length - 1, Math.floor(tokens.length * f));
  const positions = { first: 0, mid: pick(0.5), deep: pick(0.9) };
  const result = {};
  for (const [name, idx] of Object.entries(positions)) {
    const times = [];
    let entities = 0;
    for (let i = 0; i < repeat; i++) {
      const t0 = nowMs();
      const p = await fetchPage(tokens[idx]);
      times.push(nowMs() - t0);
      entities = p.entities;
    }
    result[name] = { page: idx, median_ms: +median(times).toFixed(3), entities };
  }
  out = {
    mode: "deep", table: args.table, top: Number(args.top), repeat,
    walk_ms: +walk.ms.toFixed(1), walk_entities: walk.entities, pages: walk.pages, ...result,
    deep_over_first: +(result.deep.median_ms / result.first.median_ms).toFixed(2),
  };
} else {
  throw new Error(`unknown --mode ${args.mode}`);
}
console.log(JSON.stringify(out));
process.exit(0);
