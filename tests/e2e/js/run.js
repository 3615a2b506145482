"use strict";
// Runs every test/*.test.js file one after the other (each in its own node process with the TAP
// reporter, so it works on node 18 and 20 alike), streams the output, and prints a final line
//   js-e2e: N passed, N failed, N skipped
// that scripts/test.sh reads. Exit code: 0 only if every file passed.
// Usage: node tests/e2e/js/run.js [--suite DIR] [file-name-filter...]
//   --suite DIR runs DIR/test/*.test.js instead (tests/e2e/legacy); the summary line is then
//   named after DIR ("legacy-e2e: ...").

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const args = process.argv.slice(2);
let suiteDir = __dirname;
if (args[0] === "--suite") {
  suiteDir = path.resolve(args[1]);
  args.splice(0, 2);
}
const label = suiteDir === __dirname ? "js-e2e" : `${path.basename(suiteDir)}-e2e`;
const dir = path.join(suiteDir, "test");
const filters = args;
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith(".test.js"))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

let passed = 0;
let failed = 0;
let skipped = 0;
let allOk = true;
const perFile = [];

for (const f of files) {
  const started = Date.now();
  const res = spawnSync(process.execPath, ["--test-reporter=tap", path.join(dir, f)], {
    cwd: suiteDir,
    encoding: "utf8",
    env: process.env,
    timeout: 600000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const out = (res.stdout || "") + (res.stderr || "");
  process.stdout.write(out);
  const num = (label) => {
    const m = out.match(new RegExp(`^# ${label} (\\d+)$`, "m"));
    return m ? Number(m[1]) : 0;
  };
  const p = num("pass");
  let fl = num("fail") + num("cancelled");
  const s = num("skipped") + num("todo");
  if (res.status !== 0 && fl === 0) fl = 1; // crashed or timed out before reporting
  if (res.status !== 0) allOk = false;
  passed += p;
  failed += fl;
  skipped += s;
  perFile.push(`${f.padEnd(24)} ${String(p).padStart(4)} passed ${String(fl).padStart(4)} failed ` +
    `${String(s).padStart(4)} skipped  ${((Date.now() - started) / 1000).toFixed(1)}s`);
}

console.log(`\n---- ${label} summary ----`);
for (const line of perFile) console.log(line);
console.log(`${label}: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(allOk && failed === 0 ? 0 : 1);
