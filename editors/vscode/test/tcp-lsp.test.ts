/**
 * The TCP path against the real server: `.venv/bin/infill lsp --tcp PORT` on a fake worker
 * (`tests/fake_worker.py`, which answers at once), reached as the extension reaches it (`TcpServer`
 * reads the token file the server wrote and connects; `initialize` carries the token). A wrong
 * token gets the connection closed.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import {
  createProtocolConnection, DidOpenTextDocumentNotification, ExitNotification, InitializedNotification,
  InitializeRequest, type InitializeParams, InlineCompletionItem, InlineCompletionRequest,
  InlineCompletionTriggerKind, ProtocolConnection, ShutdownRequest, StreamMessageReader, StreamMessageWriter,
} from "vscode-languageserver-protocol/node";
import { ACCEPT_COMMAND } from "../src/protocol";
import { type Address, TcpServer } from "../src/tcp";

const REPO = path.resolve(__dirname, "..", "..", "..", "..");
const SERVER = path.join(REPO, ".venv", "bin", "infill");
const PYTHON = path.join(REPO, ".venv", "bin", "python");
const TIMEOUT_MS = 60_000;
const SOURCE = "import o\n\n\ndef add(a, b):\n    return a + b\n";

const folder = fs.mkdtempSync(path.join(os.tmpdir(), "infill-tcp-"));
const tokenFile = path.join(folder, "lsp.token");
const log = path.join(folder, "lsp.log");
const processes: ChildProcess[] = [];
let address: Address;

function initializeParams(initializationOptions: object): InitializeParams {
  return { processId: process.pid, rootUri: null, workspaceFolders: null, initializationOptions,
           capabilities: { textDocument: { inlineCompletion: { dynamicRegistration: false } } } };
}

function serverLog(): string {
  return fs.existsSync(log) ? fs.readFileSync(log, "utf8").slice(-3000) : "(no server log)";
}

/** Resolves once `child` writes `marker` to stderr; rejects if it exits first. */
function startedWhen(child: ChildProcess, marker: string): Promise<void> {
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(marker)) {
        resolve();
      }
    });
    child.once("exit", (code) => reject(new Error(`${child.spawnargs.join(" ")} exited ${code}: ${stderr}`)));
  });
}

function freePort(): Promise<number> {
  const probe = net.createServer();
  return new Promise((resolve) => probe.listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as net.AddressInfo;
    probe.close(() => resolve(port));
  }));
}

/** A protocol connection through the extension's `TcpServer`, once the server listens. */
async function connectWithToken(): Promise<{ connection: ProtocolConnection; tcp: TcpServer; socket: net.Socket }> {
  const tcp = new TcpServer(address, tokenFile);
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {  // a refused connection never reaches the server, so retrying takes no client's place
    try {
      const stream = await tcp.start();
      const socket = stream.reader as net.Socket;
      const connection = createProtocolConnection(new StreamMessageReader(socket), new StreamMessageWriter(socket));
      connection.listen();
      return { connection, tcp, socket };
    } catch (error) {
      assert.ok(Date.now() < deadline, `the server never listened: ${error}\n${serverLog()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

before(async () => {
  assert.ok(fs.existsSync(SERVER), `${SERVER} is missing: run \`make setup\` first`);
  const worker = `ipc://${folder}/w.sock`;
  const fake = spawn(PYTHON, [path.join(REPO, "tests", "fake_worker.py"), worker], { stdio: ["ignore", "ignore", "pipe"] });
  processes.push(fake);
  await startedWhen(fake, "fake worker ready");
  address = { host: "127.0.0.1", port: await freePort() };
  processes.push(spawn(SERVER, ["lsp", "--tcp", String(address.port), "--worker", worker, "--token-file", tokenFile,
                                "--log-file", log], { cwd: REPO, stdio: "ignore" }));
});

after(() => {
  processes.forEach((child) => child.kill());
  fs.rmSync(folder, { recursive: true, force: true });
});

test("a wrong token: the server closes the connection", { timeout: TIMEOUT_MS }, async () => {
  const { connection, tcp, socket } = await connectWithToken();
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const wrong = { ...tcp.initializationOptions({}), token: "0".repeat(64) };
  const answer = connection.sendRequest(InitializeRequest.type, initializeParams(wrong))
    .then(() => "answered", () => "refused");
  await closed;
  connection.dispose();  // what is still pending is refused now
  assert.equal(await answer, "refused");
});

test("with the token from its file: initialize, then an inline completion", { timeout: TIMEOUT_MS }, async () => {
  const { connection, tcp, socket } = await connectWithToken();
  const result = await connection.sendRequest(InitializeRequest.type, initializeParams(
    tcp.initializationOptions({ deadlineMs: 20_000, maxTokens: 8, statsLog: "" })));
  assert.ok(result.capabilities.inlineCompletionProvider, `no inlineCompletionProvider: ${serverLog()}`);
  await connection.sendNotification(InitializedNotification.type, {});
  const uri = `file://${path.join(folder, "example.py")}`;
  await connection.sendNotification(DidOpenTextDocumentNotification.type,
                                    { textDocument: { uri, languageId: "python", version: 1, text: SOURCE } });
  const position = { line: 0, character: 8 };
  const answer = await connection.sendRequest(InlineCompletionRequest.type, {
    textDocument: { uri }, position, context: { triggerKind: InlineCompletionTriggerKind.Invoked },
  });
  const items: InlineCompletionItem[] = Array.isArray(answer) ? answer : answer?.items ?? [];
  assert.ok(items.length >= 1, `no inline completion items: ${serverLog()}`);
  assert.equal(items[0].command?.command, ACCEPT_COMMAND);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await connection.sendRequest(ShutdownRequest.type);
  await connection.sendNotification(ExitNotification.type);
  await closed;
  connection.dispose();
});
