/**
 * The protocol against the real server: `.venv/bin/infill lsp` over stdio, driven as the
 * extension's language client drives it (initialize with the extension's settings, open a Python
 * file, ask for an inline completion, report the suggestion). The model is small: the test checks
 * the answer's shape, not its text.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import {
  createProtocolConnection, DidOpenTextDocumentNotification, ExitNotification, InitializedNotification,
  InitializeRequest, InlineCompletionItem, InlineCompletionRequest, InlineCompletionTriggerKind,
  ProtocolConnection, ShutdownRequest, StreamMessageReader, StreamMessageWriter,
} from "vscode-languageserver-protocol/node";
import { ACCEPT_COMMAND, AcceptCompletion, DidShowCompletion, isAcceptArgument, WorkerReady } from "../src/protocol";

const REPO = path.resolve(__dirname, "..", "..", "..", "..");
const SERVER = path.join(REPO, ".venv", "bin", "infill");
const TIMEOUT_MS = 60_000;
const SOURCE = "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef read_lines(path):\n    with open(path) as handle:\n        return \n";

const BUNDLED_MODEL = path.join(REPO, "models", "infill-py-16m", "config.json");

let connection: ProtocolConnection;
let server: ChildProcessWithoutNullStreams;
let stderr = "";
const models: string[] = [];

before(async () => {
  assert.ok(fs.existsSync(SERVER), `${SERVER} is missing: run \`make setup\` first`);
  assert.ok(process.env.INFILL_MODEL || fs.existsSync(BUNDLED_MODEL), `the bundled model is missing: ${BUNDLED_MODEL}`);
  server = spawn(SERVER, ["lsp"], { cwd: REPO, stdio: ["pipe", "pipe", "pipe"] });
  server.stderr.on("data", (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000); });
  connection = createProtocolConnection(new StreamMessageReader(server.stdout), new StreamMessageWriter(server.stdin));
  connection.onNotification(WorkerReady, (params) => { models.push(params.model); });
  connection.listen();
});

after(async () => {
  const exited = new Promise((resolve) => server.once("exit", resolve));
  await connection.sendRequest(ShutdownRequest.type);
  await connection.sendNotification(ExitNotification.type);
  await exited;
  connection.dispose();
});

test("initialize: inline completions and the accept command are offered", { timeout: TIMEOUT_MS }, async () => {
  const result = await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid, rootUri: null, workspaceFolders: null,
    capabilities: { textDocument: { inlineCompletion: { dynamicRegistration: false } } },
    initializationOptions: { deadlineMs: 20_000, maxTokens: 8, statsLog: "" },
  });
  assert.ok(result.capabilities.inlineCompletionProvider, `no inlineCompletionProvider: ${stderr}`);
  // the inline completion's accept command, and the next-edit one (`infill.acceptInlineEdit`)
  assert.ok(result.capabilities.executeCommandProvider?.commands?.includes(ACCEPT_COMMAND), stderr);
  await connection.sendNotification(InitializedNotification.type, {});
});

test("an inline completion at the cursor carries its accept command", { timeout: TIMEOUT_MS }, async () => {
  const uri = `file://${path.join(os.tmpdir(), "infill-vscode-test.py")}`;
  await connection.sendNotification(DidOpenTextDocumentNotification.type,
                                    { textDocument: { uri, languageId: "python", version: 1, text: SOURCE } });
  const position = { line: 9, character: 15 };
  const answer = await connection.sendRequest(InlineCompletionRequest.type, {
    textDocument: { uri }, position, context: { triggerKind: InlineCompletionTriggerKind.Automatic },
  });
  const items: InlineCompletionItem[] = Array.isArray(answer) ? answer : answer?.items ?? [];
  assert.ok(items.length >= 1, `no inline completion items: ${stderr}`);
  for (const item of items) {
    assert.equal(typeof item.insertText, "string");
    assert.deepEqual(item.range, { start: position, end: position });
    assert.equal(item.command?.command, ACCEPT_COMMAND);
    assert.ok(isAcceptArgument(item.command?.arguments?.[0]), "the command names its request");
  }
  const argument = items[0].command!.arguments![0];
  await connection.sendNotification(DidShowCompletion, { requestId: argument.requestId, index: argument.index });
  await connection.sendNotification(AcceptCompletion, { ...argument, acceptedChars: 1 });
  assert.equal(models.length, 1, "infill/workerReady names the model before the first answer");
  assert.ok(models[0].length > 0);
});
