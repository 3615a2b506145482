"use strict";
// Starting and stopping a tablestone binary for the Node end-to-end suites (tests/e2e/js and
// tests/e2e/legacy), and the helpers both share. No SDK dependency, so each suite can use it with its
// own node_modules.
//   TABLESTONE_E2E_PIDDIR -> a file <pid>.pid is kept there while a server runs (scripts/test.sh
//   uses it to stop leftovers).

const { execFileSync, spawn } = require("node:child_process");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const http = require("node:http");
const https = require("node:https");
const net = require("node:net");
const os = require("node:os");
const path = require("node:path");

const ACCOUNT = "devstoreaccount1";
const ACCOUNT_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

function parseConnectionString(cs) {
  const parts = {};
  for (const item of cs.split(";")) {
    const i = item.indexOf("=");
    if (i > 0) parts[item.slice(0, i).trim().toLowerCase()] = item.slice(i + 1).trim();
  }
  if ((parts.usedevelopmentstorage || "").toLowerCase() === "true") {
    return { account: ACCOUNT, key: ACCOUNT_KEY, endpoint: `http://127.0.0.1:10002/${ACCOUNT}` };
  }
  if (!parts.tableendpoint) throw new Error(`connection string has no TableEndpoint: ${cs}`);
  return {
    account: parts.accountname || ACCOUNT,
    key: parts.accountkey || ACCOUNT_KEY,
    endpoint: parts.tableendpoint.replace(/\/+$/, ""),
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// tls: probe over https, trusting any certificate (the probe only waits for the server).
function healthOk(port, tls = false) {
  return new Promise((resolve) => {
    const get = tls ? https.get : http.get;
    const options = { host: "127.0.0.1", port, path: "/_tablestone/health", timeout: 2000 };
    if (tls) options.rejectUnauthorized = false;
    const req = get(options, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => {
      req.destroy();
      resolve(false);
    });
  });
}

class ManagedServer {
  // extraArgs: more tablestone flags (e.g. ["--trace", file]); with --cert among them the server speaks HTTPS.
  constructor(binary, dataDir, port, logPath, extraArgs = []) {
    Object.assign(this, { binary, dataDir, port, logPath, extraArgs, proc: null, exit: null, pidFile: null });
  }

  async start(timeoutMs = 30000) {
    const log = fs.openSync(this.logPath, "a");
    const args = ["--tableHost", "127.0.0.1", "--tablePort", String(this.port), "-l", this.dataDir, "-s",
      ...this.extraArgs];
    const proc = spawn(this.binary, args, { stdio: ["ignore", log, log] });
    fs.closeSync(log);
    this.proc = proc;
    this.exit = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
    if (process.env.TABLESTONE_E2E_PIDDIR) {
      this.pidFile = path.join(process.env.TABLESTONE_E2E_PIDDIR, `js-${proc.pid}.pid`);
      fs.writeFileSync(this.pidFile, String(proc.pid));
    }
    let exited = false;
    this.exit.then(() => (exited = true));
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (exited) throw new Error(`tablestone exited early; log:\n${this.logTail()}`);
      if (await healthOk(this.port, this.extraArgs.includes("--cert"))) return;
      await sleep(50);
    }
    this.proc.kill("SIGKILL");
    throw new Error(`tablestone not healthy after ${timeoutMs} ms; log:\n${this.logTail()}`);
  }

  // SIGTERM and wait; resolves to the exit code (null when it had to be killed).
  async stop(timeoutMs = 20000) {
    if (!this.proc) return 0;
    const proc = this.proc;
    this.proc = null;
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    let timer;
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const res = await Promise.race([this.exit, timeout]);
    clearTimeout(timer);
    if (this.pidFile) fs.rmSync(this.pidFile, { force: true });
    if (res === "timeout") {
      proc.kill("SIGKILL");
      await this.exit;
      return null;
    }
    return res.code;
  }

  logTail(n = 4000) {
    try {
      return fs.readFileSync(this.logPath, "utf8").slice(-n);
    } catch {
      return "(no log)";
    }
  }
}

// Makes a throwaway self-signed certificate for 127.0.0.1/localhost in dir (openssl); returns the PEM
// paths { cert, key } to pass as --cert/--key and to trust on the client side.
function makeCertificate(dir) {
  const cert = path.join(dir, "cert.pem");
  const key = path.join(dir, "key.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
  { stdio: "ignore" });
  return { cert, key };
}

// The binary the suites start: TABLESTONE_BIN, or the default build of the repository.
function serverBinary() {
  return path.resolve(process.env.TABLESTONE_BIN ||
    path.join(__dirname, "..", "..", "..", "build", "server", "app", "tablestone"));
}

// Starts the binary serving HTTPS (--cert/--key with a fresh certificate; extraArgs are more flags) on
// a free port in a temporary directory. Returns { server, cert, stop }: cert is the PEM file to trust,
// stop() sends SIGTERM, removes the directory and resolves to the exit code.
async function startTlsServer(prefix, extraArgs = []) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const { cert, key } = makeCertificate(tmp);
  fs.mkdirSync(path.join(tmp, "data"));
  const server = new ManagedServer(serverBinary(), path.join(tmp, "data"), await freePort(),
    path.join(tmp, "server.log"), ["--cert", cert, "--key", key, ...extraArgs]);
  await server.start();
  const stop = async () => {
    const code = await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
    return code;
  };
  return { server, cert, stop };
}

// Awaits promise, expecting it to reject with an error whose statusCode is the given one (how both
// SDKs report a service error); returns the error for the SDK-specific checks.
async function rejection(promise, statusCode) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected a ${statusCode} error, got success`);
  assert.equal(err.statusCode, statusCode, `status: ${err.statusCode} ${err.message}`);
  return err;
}

module.exports = {
  ACCOUNT, ACCOUNT_KEY, parseConnectionString, freePort, sleep, healthOk, ManagedServer, makeCertificate, serverBinary,
  startTlsServer, rejection,
};
