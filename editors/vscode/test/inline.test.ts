import assert from "node:assert/strict";
import { test } from "node:test";
import type { CancellationToken, InlineCompletionContext, Position, TextDocument } from "vscode";
import { Feedback } from "../src/feedback";
import { firstSuggestion, InlineRequests } from "../src/inline";
import { ACCEPT_COMMAND, CompletionEventParams } from "../src/protocol";
import { MockTokenSource } from "./mocks";

const DOCUMENT = { uri: { toString: () => "file:///a.py" } } as unknown as TextDocument;
const POSITION = {} as Position;
const CONTEXT = {} as InlineCompletionContext;

function item(requestId: string, text: string, index = 0) {
  return { insertText: text, command: { title: "", command: ACCEPT_COMMAND, arguments: [{ requestId, index }] } };
}

function setup(enabled = true) {
  const sent: [string, CompletionEventParams][] = [];
  const sources: MockTokenSource[] = [];
  const latencies: number[] = [];
  let clock = 0;
  const requests = new InlineRequests({
    isEnabled: () => enabled,
    newTokenSource: () => { sources.push(new MockTokenSource()); return sources[sources.length - 1]; },
    feedback: new Feedback((type, params) => sent.push([type.method, params])),
    onLatency: (ms) => latencies.push(ms),
    now: () => clock,
    newItem: () => { throw new Error("no item of its own for a plain answer"); },
  });
  const tick = (ms: number) => { clock += ms; };
  return { requests, sent, sources, latencies, tick };
}

function editorToken(): MockTokenSource {
  return new MockTokenSource();
}

test("an answer is shown, timed, and accepted through its command as a notification", async () => {
  const { requests, sent, latencies, tick } = setup();
  const answer = [item("r1", "return a + b")];
  const result = await requests.provideInlineCompletionItems(DOCUMENT, POSITION, CONTEXT, editorToken().token,
    async () => { tick(120); return answer as never; });
  assert.equal(result, answer);
  assert.deepEqual(latencies, [120]);
  let forwarded = false;
  requests.executeCommand(ACCEPT_COMMAND, [{ requestId: "r1", index: 0 }], () => { forwarded = true; });
  assert.ok(!forwarded, "acceptance goes as a notification, not workspace/executeCommand");
  assert.deepEqual(sent, [
    ["infill/didShowCompletion", { requestId: "r1", index: 0 }],
    ["infill/acceptCompletion", { requestId: "r1", index: 0, acceptedChars: 12 }],
  ]);
});

test("a new request cancels the one in flight and rejects the suggestion shown", async () => {
  const { requests, sent, sources } = setup();
  await requests.provideInlineCompletionItems(DOCUMENT, POSITION, CONTEXT, editorToken().token,
    async () => [item("r1", "x = 1")] as never);
  let release!: () => void;
  const slow = requests.provideInlineCompletionItems(DOCUMENT, POSITION, CONTEXT, editorToken().token,
    (_d, _p, _c, token: CancellationToken) => new Promise((resolve) => {
      release = () => resolve(token.isCancellationRequested ? null : [item("r2", "late")] as never);
    }));
  const fast = requests.provideInlineCompletionItems(DOCUMENT, POSITION, CONTEXT, editorToken().token,
    async () => [item("r3", "y = 2")] as never);
  assert.ok(sources[1].cancelled, "the older request in flight is cancelled");
  release();
  assert.equal(await slow, null);
  assert.equal((await fast)?.constructor, Array);
  assert.deepEqual(sent.map(([method, params]) => `${method} ${params.requestId}`), [
    "infill/didShowCompletion r1", "infill/rejectCompletion r1", "infill/didShowCompletion r3",
  ]);
  assert.ok(sources.every((source) => source.disposed));
});

test("the editor's cancellation reaches the request", async () => {
  const { requests, sources, latencies } = setup();
  const editor = editorToken();
  const pending = requests.provideInlineCompletionItems(DOCUMENT, POSITION, CONTEXT, editor.token,
    async (_d, _p, _c, token: CancellationToken) => {
      editor.cancel();
      return (token.isCancellationRequested ? [item("r1", "dropped")] : []) as never;
    });
  assert.equal(await pending, null);
  assert.ok(sources[0].cancelled);
  assert.deepEqual(latencies, []);
});

test("while off, nothing is asked", async () => {
  const { requests, sources } = setup(false);
  const result = await requests.provideInlineCompletionItems(DOCUMENT, POSITION, CONTEXT, editorToken().token,
    async () => { throw new Error("asked the server while off"); });
  assert.equal(result, null);
  assert.equal(sources.length, 0);
});

test("closing the document rejects its suggestion; other commands pass through", async () => {
  const { requests, sent } = setup();
  await requests.provideInlineCompletionItems(DOCUMENT, POSITION, CONTEXT, editorToken().token,
    async () => ({ items: [item("r1", "z")] }) as never);
  requests.closed("file:///a.py");
  requests.closed("file:///a.py");
  assert.deepEqual(sent.map(([method]) => method), ["infill/didShowCompletion", "infill/rejectCompletion"]);
  assert.equal(requests.executeCommand("other.command", [1], (command, args) => `${command}:${args}`), "other.command:1");
});

test("accepting another candidate of the answer leaves its length to the server", () => {
  const sent: CompletionEventParams[] = [];
  const feedback = new Feedback((_type, params) => sent.push(params));
  feedback.showing("file:///a.py", { requestId: "r1", index: 0, chars: 5 });
  feedback.accepted({ requestId: "r1", index: 2 });
  assert.deepEqual(sent[1], { requestId: "r1", index: 2, acceptedChars: undefined });
});

test("only items that name their request make a suggestion", () => {
  assert.deepEqual(firstSuggestion([item("r9", "abc", 1)] as never), { requestId: "r9", index: 1, chars: 3 });
  assert.equal(firstSuggestion([{ insertText: "abc" }] as never), undefined);
  assert.equal(firstSuggestion(null), undefined);
  assert.deepEqual(firstSuggestion({ items: [{ ...item("r2", ""), insertText: { value: "snippet" } }] } as never),
                   { requestId: "r2", index: 0, chars: 7 });
});

// Early requests: the request VS Code will make is sent as soon as a change moved the cursor.

function documentAt(version: number): TextDocument {
  return { uri: DOCUMENT.uri, version } as unknown as TextDocument;
}

const AT = { line: 3, character: 7 } as Position;
const AUTOMATIC = { triggerKind: 1, selectedCompletionInfo: undefined } as InlineCompletionContext;

function earlySetup() {
  const base = setup();
  const asked: { position: Position; token: CancellationToken }[] = [];
  let answerEarly!: (answer: unknown) => void;
  const requests = new InlineRequests({
    isEnabled: () => true,
    newTokenSource: () => { base.sources.push(new MockTokenSource()); return base.sources[base.sources.length - 1]; },
    feedback: new Feedback(() => undefined),
    onLatency: (ms) => base.latencies.push(ms),
    now: () => 0,
    newItem: () => { throw new Error("no item of its own for a plain answer"); },
    ask: (_document, position, token) => {
      asked.push({ position, token });
      return new Promise((resolve) => { answerEarly = resolve as never; });
    },
  });
  return { ...base, requests, asked, answer: (value: unknown) => answerEarly(value) };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test("after a change, the request goes before VS Code asks, and VS Code's request takes its answer", async () => {
  const { requests, asked, answer, sources } = earlySetup();
  let notify!: () => void;
  requests.changed("file:///a.py", 2, new Promise<void>((resolve) => { notify = resolve; }));
  requests.moved(documentAt(2), AT);
  await settle();
  assert.equal(asked.length, 0, "not before the change's didChange notification is out");
  notify();
  await settle();
  assert.deepEqual(asked.map((a) => a.position), [AT]);
  const shown = requests.provideInlineCompletionItems(documentAt(2), AT, AUTOMATIC, editorToken().token,
    async () => { throw new Error("asked the server a second time"); });
  answer([item("r1", "early")]);
  assert.deepEqual(await shown, [item("r1", "early")]);
  assert.equal(sources.length, 1);
  assert.ok(sources[0].disposed && !sources[0].cancelled);
});

test("VS Code's request elsewhere, invoked, or with a suggest item, cancels the early one and asks itself", async () => {
  const elsewhere = { line: 3, character: 8 } as Position;
  const invoked = { triggerKind: 0, selectedCompletionInfo: undefined } as InlineCompletionContext;
  const widget = { triggerKind: 1, selectedCompletionInfo: { text: "x" } } as unknown as InlineCompletionContext;
  for (const [position, context, version] of [[elsewhere, AUTOMATIC, 2], [AT, invoked, 2], [AT, widget, 2],
                                              [AT, AUTOMATIC, 3]] as const) {
    const { requests, asked, sources } = earlySetup();
    requests.changed("file:///a.py", 2, Promise.resolve());
    requests.moved(documentAt(2), AT);
    await settle();
    let nexts = 0;
    const result = await requests.provideInlineCompletionItems(documentAt(version), position, context,
      editorToken().token, async () => { nexts += 1; return [item("r2", "own")] as never; });
    assert.deepEqual(result, [item("r2", "own")]);
    assert.equal(nexts, 1);
    assert.ok(asked[0].token.isCancellationRequested, "the early request is cancelled");
    assert.ok(sources.every((source) => source.disposed));
  }
});

test("a cursor that moved without a change, a second move, or a request VS Code already made asks nothing early",
     async () => {
  const { requests, asked, sources } = earlySetup();
  requests.moved(documentAt(1), AT);
  requests.changed("file:///a.py", 2, Promise.resolve());
  requests.moved(documentAt(1), AT); // an older version's cursor
  await settle();
  assert.equal(asked.length, 0);
  requests.moved(documentAt(2), AT);
  requests.moved(documentAt(2), { line: 3, character: 9 } as Position);
  await settle();
  assert.equal(asked.length, 1, "one early request per change");
  requests.changed("file:///a.py", 3, Promise.resolve());
  void requests.provideInlineCompletionItems(documentAt(3), AT, AUTOMATIC, editorToken().token,
    () => new Promise(() => undefined));
  requests.moved(documentAt(3), AT);
  await settle();
  assert.equal(asked.length, 1, "VS Code already asked at version 3");
  assert.ok(asked[0].token.isCancellationRequested && sources[0].disposed, "the untaken early one is let go");
});

test("a newer change or closing the document cancels an early request nobody took", async () => {
  const { requests, asked, sources } = earlySetup();
  requests.changed("file:///a.py", 2, Promise.resolve());
  requests.moved(documentAt(2), AT);
  requests.changed("file:///a.py", 3, Promise.resolve());
  requests.moved(documentAt(3), AT);
  await settle();
  assert.ok(sources[0].cancelled && sources[0].disposed);
  requests.closed("file:///a.py");
  assert.ok(sources[1].cancelled && sources[1].disposed);
  assert.equal(asked.filter((a) => !a.token.isCancellationRequested).length, 0);
});

test("while off, nothing is asked early", async () => {
  let asked = 0;
  const requests = new InlineRequests({
    isEnabled: () => false, newTokenSource: () => new MockTokenSource(), feedback: new Feedback(() => undefined),
    onLatency: () => undefined, now: () => 0, newItem: () => { throw new Error("unused"); },
    ask: async () => { asked += 1; return null; },
  });
  requests.changed("file:///a.py", 2, Promise.resolve());
  requests.moved(documentAt(2), AT);
  await settle();
  assert.equal(asked, 0);
});
