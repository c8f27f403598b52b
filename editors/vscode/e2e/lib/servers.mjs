/**
 * The processes the extension talks to: the project's language server listening on TCP
 * (`python -m lsp_server --tcp PORT --token-file FILE`), on the bundled model or on the scripted
 * fake workers of the Python tests (`tests/fake_worker.py`). Each writes its log to a file under
 * the case's folder; nothing goes to stdout.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
export const PYTHON = process.env.INFILL_PYTHON || path.join(REPO, ".venv", "bin", "python");
const HANG_S = 120; // only against a hang: the bundled model's worker loads in seconds

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A TCP port nobody listens on now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Whether a socket of this machine listens on `port`, read from /proc: a probe connection would be
 * taken by the server, which serves one editor at a time, for its editor.
 */
export function listening(port) {
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const rows = fs.existsSync(table) ? fs.readFileSync(table, "utf8").split("\n").slice(1) : [];
    for (const row of rows) {
      const fields = row.trim().split(/\s+/);
      if (fields[3] === "0A" && parseInt(fields[1]?.split(":").pop() ?? "", 16) === port) {
        return true;
      }
    }
  }
  return false;
}

/** Poll `check` until it holds; throw `what` (a function giving the message) after `seconds`. */
export async function until(check, what, seconds = HANG_S) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await check();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(typeof what === "function" ? await what() : what);
    }
    await sleep(100);
  }
}

function started(argv, log, env = {}) {
  const out = fs.openSync(log, "a");
  const child = spawn(argv[0], argv.slice(1), { cwd: REPO, stdio: ["ignore", out, out],
                                                env: { ...process.env, ...env } });
  fs.closeSync(out);
  return child;
}

async function stopped(child, signal = "SIGTERM") {
  if (child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  const exit = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  const late = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exit;
  clearTimeout(late);
}

/** A fake worker (tests/fake_worker.py) on `ipc://` in `folder`: it answers `PID:prefix`, or renames. */
export async function fakeWorker(folder, name) {
  const address = `ipc://${path.join(folder, `${name}.sock`)}`;
  const child = started([PYTHON, path.join(REPO, "tests", "fake_worker.py"), address],
                        path.join(folder, `${name}.log`));
  await until(() => fs.existsSync(path.join(folder, `${name}.sock`)) || child.exitCode !== null,
              `fake worker ${name} did not bind ${address}`);
  if (child.exitCode !== null) {
    throw new Error(`fake worker ${name} exited: ${fs.readFileSync(path.join(folder, `${name}.log`), "utf8")}`);
  }
  return { address, stop: () => stopped(child) };
}

/**
 * The language server on TCP `port` with its token in `tokenFile`; `worker` is a fake worker's
 * address, or undefined for the bundled model. `start()` again after `kill()` brings it back on
 * the same port and token file (with a new token, as a restarted server has).
 */
export class LanguageServer {
  constructor(folder, port, worker) {
    this.port = port;
    this.address = `127.0.0.1:${port}`;
    this.tokenFile = path.join(folder, "lsp.token");
    this.log = path.join(folder, "lsp.log");
    this.statsLog = path.join(folder, "stats.jsonl");
    this.worker = worker;
    this.settings = {}; // the user settings this server needs of the extension
    this.child = undefined;
  }

  async start() {
    fs.rmSync(this.tokenFile, { force: true });
    const argv = [PYTHON, "-m", "lsp_server", "--tcp", String(this.port), "--token-file", this.tokenFile,
                  "--log-file", this.log, "--stats-log", this.statsLog];
    if (this.worker) {
      argv.push("--worker", this.worker);
    }
    const child = started(argv, `${this.log}.stderr`);
    this.child = child;
    await until(() => (fs.existsSync(this.tokenFile) && listening(this.port)) || child.exitCode !== null,
                () => `the language server did not listen on ${this.port}: ${this.tail()}`);
    if (child.exitCode !== null) {
      throw new Error(`the language server exited (${child.exitCode}): ${this.tail()}`);
    }
  }

  /** SIGKILL, as a crash: no goodbye on the connection. */
  async kill() {
    if (this.child) {
      await stopped(this.child, "SIGKILL");
    }
  }

  async stop() {
    if (this.child) {
      await stopped(this.child);
    }
  }

  tail() {
    return [this.log, `${this.log}.stderr`].filter((file) => fs.existsSync(file))
      .map((file) => fs.readFileSync(file, "utf8").slice(-2000)).join("\n");
  }
}
