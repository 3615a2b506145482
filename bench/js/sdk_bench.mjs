// Client-side benchmark with the Azure JS SDK (@azure/data-tables), as a
// user would see the server: Shared Key auth signed per request by the SDK,
// its serialization and its paging. For each operation and concurrency, C
// async workers loop for `--duration` seconds; latency is measured around
// each SDK call.
//
// Expects the data run.sh loads first: table `bench`, partition `pt` with
// `--n` entities r0000000.., and table `scan` with `--scan-n` entities
// (Num = 0..scan-n-1). Writes go to tables `sdkins` and `sdkbat` (created
// here), partitions unique per run. Delete removes the entities the insert
// phase of the same concurrency created, and stops early if it runs out.
//
//   node sdk_bench.mjs --url http://127.0.0.1:20002 [--duration 3]
//        [--concurrency 1,32] [--ops get,insert,upsert,merge,delete,page,scan,batch]
//        [--n 10000] [--scan-n 50000]
//
// Prints one JSON line per (op, concurrency):
//   {"op":"get","concurrency":1,"ops":N,"seconds":S,"ops_per_s":R,"p50_ms":..,"p99_ms":..,"errors":E}
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { ACCOUNT, KEY, nowMs, parseArgs, percentile, rowKey, sdkEntity } from "./lib.mjs";

const args = parseArgs(process.argv.slice(2), {
  url: "http://127.0.0.1:20002",
  duration: "3",
  concurrency: "1,32",
  ops: "get,insert,upsert,merge,delete,page,scan,batch",
  n: "10000",
  "scan-n": "50000",
});
const duration = Number(args.duration) * 1000;
const n = Number(args.n);
const scanN = Number(args["scan-n"]);
const cred = new AzureNamedKeyCredential(ACCOUNT, KEY);
const endpoint = `${args.url}/${ACCOUNT}`;
const client = (table) => new TableClient(endpoint, table, cred, { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } });
const bench = client("bench");
const scan = client("scan");
const ins = client("sdkins");
const bat = client("sdkbat");
const runId = `${Date.now().toString(36)}`;
const inserted = new Map(); // concurrency -> [[pk, rk], ...]

const ops = {
  get: () => bench.getEntity("pt", rowKey(Math.floor(Math.random() * n))),
  upsert: () => {
    const i = Math.floor(Math.random() * n);
    return bench.upsertEntity(sdkEntity("pt", rowKey(i), i + 1), "Replace");
  },
  merge: () => {
    const i = Math.floor(Math.random() * n);
    return bench.updateEntity(sdkEntity("pt", rowKey(i), i + 2), "Merge");
  },
  page: async () => {
    const it = bench.listEntities({ queryOptions: { filter: "PartitionKey eq 'pt'" } }).byPage({ maxPageSize: 1000 });
    const page = await it.next();
    if (page.value.length !== 1000) throw new Error(`page of ${page.value.length}`);
  },
  scan: async () => {
    let count = 0;
    for await (const _ of scan.listEntities({ queryOptions: { filter: `Num ge ${scanN - 10}` } })) count++;
    if (count !== 10) throw new Error(`scan found ${count}`);
  },
};

function makeInsert(c) {
  const keys = [];
  inserted.set(c, keys);
  let counter = 0;
  const pk = `sdk-${runId}-c${c}`;
  return async () => {
    const i = counter++;
    const rk = rowKey(i);
    await ins.createEntity(sdkEntity(pk, rk, i));
    keys.push([pk, rk]);
  };
}

function makeDelete(c) {
  const keys = inserted.get(c) || [];
  let next = 0;
  return async () => {
    if (next >= keys.length) return "exhausted";
    const [pk, rk] = keys[next++];
    await ins.deleteEntity(pk, rk);
  };
}

function makeBatch(c) {
  let counter = 0;
  const pk = `sdkb-${runId}-c${c}`;
  return async () => {
    const b = counter++;
    const actions = [];
    for (let j = 0; j < 100; j++) actions.push(["create", sdkEntity(pk, `${rowKey(b)}-${String(j).padStart(3, "0")}`, j)]);
    await bat.submitTransaction(actions);
  };
}

async function measure(op, c) {
  let fn = ops[op];
  if (op === "insert") fn = makeInsert(c);
  if (op === "delete") fn = makeDelete(c);
  if (op === "batch") fn = makeBatch(c);
  const lat = [];
  let errors = 0;
  let firstError = null;
  let stop = false;
  const t0 = nowMs();
  const end = t0 + duration;
  async function worker() {
    while (!stop && nowMs() < end) {
      const s = nowMs();
      try {
        if ((await fn()) === "exhausted") {
          stop = true;
          break;
        }
        lat.push(nowMs() - s);
      } catch (e) {
        errors++;
        firstError ??= e.message;
      }
    }
  }
  await Promise.all(Array.from({ length: c }, worker));
  const seconds = (nowMs() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const res = {
    op, concurrency: c, ops: lat.length, seconds: +seconds.toFixed(3),
    ops_per_s: +(lat.length / seconds).toFixed(1),
    p50_ms: +percentile(lat, 50).toFixed(3), p99_ms: +percentile(lat, 99).toFixed(3),
    mean_ms: +(lat.reduce((a, b) => a + b, 0) / Math.max(1, lat.length)).toFixed(3),
    errors,
  };
  if (op === "batch") res.entities_per_s = +(res.ops_per_s * 100).toFixed(0);
  if (op === "delete" && stop) res.note = "ran out of inserted keys before the duration ended";
  if (firstError) res.first_error = firstError.slice(0, 200);
  return res;
}

await ins.createTable();
await bat.createTable();
const concurrencies = String(args.concurrency).split(",").map(Number);
const opList = String(args.ops).split(",");
for (const c of concurrencies) {
  for (const op of opList) {
    if (op === "delete" && !inserted.has(c)) continue; // needs the insert phase
    console.log(JSON.stringify(await measure(op, c)));
  }
}
process.exit(0);
