// Bulk loader for the benchmark tables: inserts `--count` entities with
// `$batch` requests of 100 creates (one changeset, one partition each) over
// `--concurrency` keep-alive connections, authenticated with the account SAS.
//
// Entity i (start <= i < start+count) gets PartitionKey
// `<pk-prefix><floor(i / partition-size), 6 digits>` (or exactly `--pk` when
// given) and RowKey `r<i, 7 digits>`; properties as in lib.mjs entity(), or
// entity12() with `--shape edm12` (12 properties of every Edm type).
//
//   node loader.mjs --url http://127.0.0.1:20002 --table big --count 1000000 \
//        [--start 0] [--partition-size 10000] [--pk-prefix p] [--pk fixed] \
//        [--concurrency 16] [--batch 100] [--shape default|edm12] [--quiet]
//
// Prints one JSON line: {"loaded":N,"seconds":S,"entities_per_s":R,...}.
// Exits non-zero if any batch fails after 3 attempts.
import { ACCOUNT, accountSas, batchBody, createTable, entity, entity12, makeClient, nowMs, parseArgs, rowKey } from "./lib.mjs";

const args = parseArgs(process.argv.slice(2), {
  url: "http://127.0.0.1:20002",
  table: "big",
  count: "100000",
  start: "0",
  "partition-size": "10000",
  "pk-prefix": "p",
  concurrency: "16",
  batch: "100",
  shape: "default",
});
const makeEntity = args.shape === "edm12" ? entity12 : entity;
const count = Number(args.count);
const start = Number(args.start);
const psize = Number(args["partition-size"]);
const batchSize = Number(args.batch);
const concurrency = Number(args.concurrency);
const sas = accountSas();
const request = makeClient(args.url, concurrency);
const pkOf = (i) => (args.pk ? String(args.pk) : `${args["pk-prefix"]}${String(Math.floor(i / psize)).padStart(6, "0")}`);

// Batches never cross a partition boundary.
const batches = [];
for (let i = start; i < start + count; ) {
  const pk = pkOf(i);
  let j = i;
  while (j < start + count && j - i < batchSize && pkOf(j) === pk) j++;
  batches.push([i, j]);
  i = j;
}

// Servers without $batch (501 NotImplemented) get single Insert Entity
// requests instead; the output says so ("mode":"single").
let mode = "batch";

async function sendOne(e) {
  const r = await request("POST", `/${ACCOUNT}/${args.table}?${sas}`, {
    headers: { "Content-Type": "application/json", Accept: "application/json;odata=nometadata", Prefer: "return-no-content" },
    body: JSON.stringify(e),
  });
  if (r.status !== 201 && r.status !== 204) throw new Error(`insert ${e.PartitionKey}/${e.RowKey}: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
}

async function sendBatch([from, to]) {
  const ents = [];
  for (let i = from; i < to; i++) ents.push(makeEntity(pkOf(i), rowKey(i), i));
  if (mode === "single") {
    for (const e of ents) await sendOne(e);
    return;
  }
  const { body, contentType } = batchBody(args.url, args.table, ents);
  let lastErr;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const r = await request("POST", `/${ACCOUNT}/$batch?${sas}`, {
        headers: { "Content-Type": contentType, Accept: "application/json;odata=minimalmetadata" },
        body,
      }, 120000);
      // A 202 with a failed changeset carries the failing sub-response.
      const inner = /HTTP\/1\.1 (\d{3})/.exec(r.body);
      if (r.status === 202 && inner && inner[1][0] === "2") return;
      if (r.status === 501) {
        if (mode !== "single") process.stderr.write("loader: $batch answered 501 NotImplemented; falling back to single inserts\n");
        mode = "single";
        for (const e of ents) await sendOne(e);
        return;
      }
      lastErr = new Error(`batch ${from}-${to}: HTTP ${r.status} / inner ${inner && inner[1]}: ${r.body.slice(0, 400)}`);
      // An already-existing entity (retry after a lost response) is not retryable.
      if (r.status < 500 && r.status !== 202) break;
      if (r.status === 202 && inner && inner[1] !== "500" && inner[1] !== "503") break;
    } catch (e) {
      lastErr = e;
    }
    await new Promise((res) => setTimeout(res, 200 * (attempt + 1)));
  }
  throw lastErr;
}

const t0 = nowMs();
await createTable(request, sas, args.table);
let next = 0;
let loaded = 0;
let lastReport = t0;
async function worker() {
  while (next < batches.length) {
    const b = batches[next++];
    await sendBatch(b);
    loaded += b[1] - b[0];
    if (!args.quiet && nowMs() - lastReport > 5000) {
      lastReport = nowMs();
      process.stderr.write(`loader: ${loaded}/${count} (${Math.round(loaded / ((lastReport - t0) / 1000))}/s)\n`);
    }
  }
}
try {
  await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
} catch (e) {
  console.error(`loader: ${e.message}`);
  process.exit(1);
}
const seconds = (nowMs() - t0) / 1000;
console.log(JSON.stringify({ loaded, seconds: +seconds.toFixed(3), entities_per_s: Math.round(loaded / seconds), table: args.table, concurrency, batch: batchSize, mode }));
process.exit(0);
