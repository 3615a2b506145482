// Startup time and RSS of a server: spawns the command after "--", polls
// `--probe` (a path on `--url`) every `--interval-ms` until the first 200,
// reports the time from spawn to that answer, then waits `--idle-ms` and
// reads VmRSS of the spawned process (and its children) from /proc. Finally
// stops it with --stop-signal (default SIGTERM; Azurite needs SIGINT), SIGKILL
// after 10 s, unless --keep is given, in which
// case it prints the pid and leaves it running.
//
//   node startup.mjs --url http://127.0.0.1:20002 --probe /_tablestone/health \
//        [--timeout-ms 60000] [--idle-ms 2000] [--log file] -- taskset -c 0 tablestone ...
//
// Prints one JSON line: {"startup_ms":..,"rss_idle_mb":..,"pid":..}.
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { nowMs } from "./lib.mjs";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep < 0) throw new Error("usage: startup.mjs [options] -- command args...");
const opts = { url: "http://127.0.0.1:20002", probe: "/", "timeout-ms": "60000", "idle-ms": "2000", "interval-ms": "2", "stop-signal": "SIGTERM" };
for (let i = 0; i < sep; i++) {
  const name = argv[i].replace(/^--/, "");
  if (i + 1 < sep && !argv[i + 1].startsWith("--")) opts[name] = argv[++i];
  else opts[name] = true;
}
const cmd = argv.slice(sep + 1);
const u = new URL(opts.url);

function probeOnce() {
  return new Promise((resolve) => {
    const req = http.get({ host: u.hostname, port: u.port, path: opts.probe, agent: false, timeout: 1000, headers: { Accept: "application/json;odata=nometadata", "x-ms-version": "2019-02-02" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
  });
}

// RSS in MiB of pid and all its descendants (Azurite runs as one node
// process; taskset execs in place; a wrapper shell would add a child).
export function rssMb(pid) {
  let kb = 0;
  const visit = (p) => {
    try {
      const status = fs.readFileSync(`/proc/${p}/status`, "utf8");
      const m = /VmRSS:\s+(\d+) kB/.exec(status);
      if (m) kb += Number(m[1]);
      const children = fs.readFileSync(`/proc/${p}/task/${p}/children`, "utf8").trim();
      if (children) for (const c of children.split(/\s+/)) visit(c);
    } catch {
      /* process gone */
    }
  };
  visit(pid);
  return +(kb / 1024).toFixed(1);
}

const logFd = opts.log ? fs.openSync(opts.log, "a") : "ignore";
const t0 = nowMs();
const child = spawn(cmd[0], cmd.slice(1), { stdio: ["ignore", logFd, logFd], detached: false });
let exited = null;
child.on("exit", (code, signal) => (exited = { code, signal }));

const deadline = t0 + Number(opts["timeout-ms"]);
let startupMs = null;
while (nowMs() < deadline && !exited) {
  if ((await probeOnce()) === 200) {
    startupMs = nowMs() - t0;
    break;
  }
  await new Promise((r) => setTimeout(r, Number(opts["interval-ms"])));
}
if (startupMs === null) {
  try { child.kill("SIGKILL"); } catch {}
  console.log(JSON.stringify({ error: exited ? `exited early: ${JSON.stringify(exited)}` : "no 200 before timeout", cmd: cmd.join(" ") }));
  process.exit(1);
}
await new Promise((r) => setTimeout(r, Number(opts["idle-ms"])));
const rss = rssMb(child.pid);
const out = { startup_ms: +startupMs.toFixed(1), rss_idle_mb: rss, pid: child.pid };
if (opts.keep) {
  child.unref();
  console.log(JSON.stringify(out));
  process.exit(0);
}
child.kill(opts["stop-signal"]);
const t1 = nowMs();
while (!exited && nowMs() - t1 < 10000) await new Promise((r) => setTimeout(r, 10));
if (!exited) child.kill("SIGKILL");
out.stop_ms = +(nowMs() - t1).toFixed(1);
console.log(JSON.stringify(out));
process.exit(0);
