/**
 * Next edits against the real server: `.venv/bin/infill lsp` over stdio on a scripted worker
 * (`tests/fake_worker.py`, which answers each region of an edit job with its text renamed as the
 * file's first line says). The user renames a variable at its definition; the answer, read with
 * the extension's own rules (`suggestionFrom`, `rangeOf`), renames the other uses; showing and
 * taking the edits reach the server as the extension sends them.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import {
  createProtocolConnection, DidChangeTextDocumentNotification, DidOpenTextDocumentNotification, ExecuteCommandRequest,
  ExitNotification, InitializedNotification, InitializeRequest, ProtocolConnection, ShutdownRequest,
  StreamMessageReader, StreamMessageWriter,
} from "vscode-languageserver-protocol/node";
import { rangeOf, suggestionFrom } from "../src/edits";
import { ACCEPT_INLINE_EDIT_COMMAND, DidShowInlineEdit, InlineEditRequest } from "../src/protocol";
import { applied, textLines } from "./mocks";

const REPO = path.resolve(__dirname, "..", "..", "..", "..");
const SERVER = path.join(REPO, ".venv", "bin", "infill");
const PYTHON = path.join(REPO, ".venv", "bin", "python");
const TIMEOUT_MS = 60_000;
const SOURCE = "# fake-rename: count total\n\n\ndef tally(items):\n    count = 0\n    for item in items:\n"
  + "        count += item\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return count\n";
const RENAMED = SOURCE.replace("    count = 0", "    total = 0");
// The scripted worker marks each line it renamed, so the test tells its answer from the server's drafts.
const WORKER_NOTE = "  # renamed by the worker";
const EXPECTED = "# fake-rename: count total\n" + RENAMED.split("\n").slice(1)
  .map((line) => (line.includes("count") ? line.replace(/count/g, "total") + WORKER_NOTE : line)).join("\n");

const folder = fs.mkdtempSync(path.join(os.tmpdir(), "infill-edit-"));
const uri = `file://${path.join(folder, "tally.py")}`;
const log = path.join(folder, "lsp.log");
const stats = path.join(folder, "stats.jsonl");
const processes: ChildProcess[] = [];
let connection: ProtocolConnection;

function serverLog(): string {
  return fs.existsSync(log) ? fs.readFileSync(log, "utf8").slice(-3000) : "(no server log)";
}

before(async () => {
  assert.ok(fs.existsSync(SERVER), `${SERVER} is missing: run \`make setup\` first`);
  const worker = `ipc://${folder}/w.sock`;
  const fake = spawn(PYTHON, [path.join(REPO, "tests", "fake_worker.py"), worker], { stdio: ["ignore", "ignore", "pipe"] });
  processes.push(fake);
  await new Promise<void>((resolve, reject) => {
    let stderr = "";
    fake.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes("fake worker ready")) {
        resolve();
      }
    });
    fake.once("exit", (code) => reject(new Error(`the fake worker exited ${code}: ${stderr}`)));
  });
  const server = spawn(SERVER, ["lsp", "--worker", worker, "--log-file", log, "--stats-log", stats],
                       { cwd: REPO, stdio: ["pipe", "pipe", "ignore"] });
  processes.push(server);
  connection = createProtocolConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  connection.listen();
});

after(() => {
  processes.forEach((child) => child.kill());
  fs.rmSync(folder, { recursive: true, force: true });
});

test("a rename at the definition: the edits rename the other uses, and showing and taking them are heard",
     { timeout: TIMEOUT_MS }, async () => {
  const result = await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid, rootUri: null, workspaceFolders: null, capabilities: {},
    initializationOptions: { deadlineMs: 20_000 },
  });
  assert.ok(result.capabilities.executeCommandProvider?.commands?.includes(ACCEPT_INLINE_EDIT_COMMAND), serverLog());
  await connection.sendNotification(InitializedNotification.type, {});
  await connection.sendNotification(DidOpenTextDocumentNotification.type,
                                    { textDocument: { uri, languageId: "python", version: 1, text: SOURCE } });
  await connection.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 },
    contentChanges: [{ range: { start: { line: 4, character: 4 }, end: { line: 4, character: 9 } }, text: "total" }],
  });
  const position = { line: 4, character: 9 };
  const answer = await connection.sendRequest(InlineEditRequest, { textDocument: { uri, version: 2 }, position });
  const lines = textLines(RENAMED);
  const suggestion = suggestionFrom(answer, { uri, version: 2 }, lines);
  assert.equal(suggestion.edits.length, answer?.edits.length, `an edit the rules refused: ${JSON.stringify(answer)}`);
  assert.ok(suggestion.edits.length >= 2, `too few edits: ${JSON.stringify(answer)}\n${serverLog()}`);
  const changes = suggestion.edits.map((edit) => ({ range: rangeOf(edit, lines), text: edit.text }));
  assert.equal(applied(RENAMED, changes), EXPECTED);

  const stale = await connection.sendRequest(InlineEditRequest, { textDocument: { uri, version: 1 }, position });
  assert.deepEqual(stale, { edits: [] });

  const command = suggestion.edits[0].command!;
  assert.equal(command.command, ACCEPT_INLINE_EDIT_COMMAND);
  await connection.sendNotification(DidShowInlineEdit, { item: { command } });
  await connection.sendRequest(ExecuteCommandRequest.type, { command: command.command, arguments: command.arguments });
  await connection.sendRequest(ShutdownRequest.type);
  await connection.sendNotification(ExitNotification.type);
  const events = fs.readFileSync(stats, "utf8").trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(events.map((event) => [event.event, event.mode]), [["show", "next_edit"], ["accept", "next_edit"]]);
});
