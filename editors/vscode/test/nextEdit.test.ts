import assert from "node:assert/strict";
import { test } from "node:test";
import type { CancellationToken } from "vscode";
import { type Editor, hintLine, type Host, NextEdits, type TextChange, type View } from "../src/nextEdit";
import type { InlineEditCommand, InlineEditParams, InlineEditResult, WirePosition } from "../src/protocol";
import { applied, MockTokenSource, textLines } from "./mocks";

const URI = "file:///tally.py";
const BEFORE = "def tally(items):\n    total = 0\n    for item in items:\n        count += item\n    return count\n";
const AFTER = BEFORE.replace(/count/g, "total");

function command(index: number): InlineEditCommand {
  return { title: "t", command: "infill.acceptInlineEdit", arguments: [{ requestId: "r1", index }] };
}

function answerFor(version: number): InlineEditResult {
  const edit = (line: number, text: string, index: number) => ({
    text, textDocument: { uri: URI, version }, command: command(index),
    range: { start: { line, character: 0 }, end: { line: line + 1, character: 0 } },
  });
  return { edits: [edit(3, "        total += item\n", 0), edit(4, "    return total\n", 1)] };
}

/** A host over one document held as text, a clock whose timers run on `tick`, and a record of calls. */
class FakeHost implements Host {
  text = BEFORE;
  version = 2;
  cursor: WirePosition = { line: 1, character: 9 };
  enabled = true;
  uri = URI;
  requests: InlineEditParams[] = [];
  answers: ((result: InlineEditResult | null) => void)[] = [];
  sources: MockTokenSource[] = [];
  shown: InlineEditCommand[] = [];
  taken: InlineEditCommand[] = [];
  views: (View | undefined)[] = [];
  logs: string[] = [];
  applyOk = true;
  onApply: (() => void) | undefined;
  private timers: (() => void)[] = [];

  isEnabled() { return this.enabled; }
  debounceMs() { return 100; }
  activeEditor(): Editor {
    return { uri: this.uri, version: this.version, cursor: this.cursor, ...textLines(this.text) };
  }
  newTokenSource() { const source = new MockTokenSource(); this.sources.push(source); return source; }
  request(params: InlineEditParams, _token: CancellationToken) {
    this.requests.push(params);
    return new Promise<InlineEditResult | null>((resolve) => this.answers.push(resolve));
  }
  showed(c: InlineEditCommand) { this.shown.push(c); }
  accepted(c: InlineEditCommand) { this.taken.push(c); }
  async apply(_uri: string, changes: TextChange[]) {
    if (!this.applyOk) {
      return false;
    }
    this.text = applied(this.text, changes);
    this.version += 1;
    this.onApply?.();
    return true;
  }
  moveCursor(at: WirePosition) { this.cursor = at; }
  render(view: View | undefined) { this.views.push(view); }
  setTimer(callback: () => void) {
    this.timers.push(callback);
    const index = this.timers.length - 1;
    return { dispose: () => { this.timers[index] = () => undefined; } };
  }
  log(message: string) { this.logs.push(message); }
  tick() { const due = this.timers; this.timers = []; due.forEach((callback) => callback()); }
  get lastView() { return this.views[this.views.length - 1]; }
}

async function suggested(host: FakeHost, edits: NextEdits): Promise<void> {
  edits.changed(URI);
  host.tick();
  host.answers.shift()!(answerFor(host.version));
  await new Promise((resolve) => setImmediate(resolve));
}

test("a change asks after the pause, at the document's version and the cursor; the edits show", async () => {
  const host = new FakeHost();
  const edits = new NextEdits(host);
  edits.moved();
  assert.deepEqual(host.views, [], "moving the cursor without edits draws nothing");
  edits.changed(URI);
  assert.equal(host.requests.length, 0, "nothing is asked before the pause");
  host.tick();
  assert.deepEqual(host.requests, [{ textDocument: { uri: URI, version: 2 }, position: { line: 1, character: 9 } }]);
  host.answers.shift()!(answerFor(2));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(host.lastView?.suggestion.edits.map((e) => e.startLine), [3, 4]);
  assert.equal(host.lastView?.target?.startLine, 3);
  assert.deepEqual(host.shown, [command(0), command(1)]);
  assert.equal(host.text, BEFORE, "showing changes nothing");
  assert.deepEqual(host.cursor, { line: 1, character: 9 }, "the cursor stays without a key");
});

test("Tab jumps to the nearest edit, Tab again takes them all as one edit, and the server hears it", async () => {
  const host = new FakeHost();
  const edits = new NextEdits(host);
  await suggested(host, edits);
  let applies = 0;
  host.onApply = () => { applies += 1; edits.changed(URI); }; // our own edit's change event
  assert.equal(await edits.tab(), true);
  assert.deepEqual(host.cursor, { line: 3, character: 8 });
  assert.equal(host.text, BEFORE);
  assert.equal(await edits.tab(), true);
  assert.equal(host.text, AFTER);
  assert.equal(applies, 1);
  assert.deepEqual(host.taken, [command(0), command(1)]);
  assert.equal(host.lastView, undefined, "nothing left on screen");
  host.tick();
  assert.equal(host.requests.length, 1, "our own edit asks for nothing");
  assert.equal(await edits.tab(), false, "nothing left for Tab");
});

test("a change under the edits drops them, cancels the request in flight, and asks again", async () => {
  const host = new FakeHost();
  const edits = new NextEdits(host);
  await suggested(host, edits);
  host.version = 3;
  edits.changed(URI);
  assert.equal(host.lastView, undefined);
  host.tick();
  edits.changed(URI);  // a keystroke while the second request is in flight
  assert.ok(host.sources[1].cancelled);
  host.answers.shift()!(answerFor(3));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(host.lastView, undefined, "a cancelled answer is not shown");
  assert.equal(await edits.tab(), false);
  assert.equal(host.text, BEFORE);
});

test("an answer for a version the document left is not shown, and stale edits are never made", async () => {
  const host = new FakeHost();
  const edits = new NextEdits(host);
  edits.changed(URI);
  host.tick();
  host.version = 3; // changed while the server answered, before the change event came
  host.answers.shift()!(answerFor(2));
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(host.views.every((view) => view === undefined));

  host.version = 2;
  await suggested(host, edits);
  host.cursor = { line: 3, character: 0 };
  host.version = 4; // the document moved on and no event reached us yet
  assert.equal(await edits.tab(), false);
  assert.equal(host.text, BEFORE);
  assert.deepEqual(host.taken, []);
});

test("a workspace edit that VS Code refuses is not reported taken", async () => {
  const host = new FakeHost();
  const edits = new NextEdits(host);
  await suggested(host, edits);
  host.applyOk = false;
  host.cursor = { line: 4, character: 0 };
  assert.equal(await edits.tab(), false);
  assert.deepEqual(host.taken, []);
  assert.ok(host.logs.some((line) => line.includes("nothing was changed")));
});

test("Esc dismisses; another editor, closing the document or turning it off drop the edits", async () => {
  const host = new FakeHost();
  const edits = new NextEdits(host);
  await suggested(host, edits);
  assert.equal(edits.dismiss(), true);
  assert.equal(host.lastView, undefined);
  assert.equal(edits.dismiss(), false, "Esc with nothing shown is not ours");
  await suggested(host, edits);
  edits.closed("file:///other.py");
  assert.notEqual(host.lastView, undefined);
  edits.closed(URI);
  assert.equal(host.lastView, undefined);
  await suggested(host, edits);
  edits.reset();
  assert.equal(host.lastView, undefined);
  host.enabled = false;
  edits.changed(URI);
  host.tick();
  assert.equal(host.requests.length, 3, "off: nothing is asked");
});

test("an edit inserting at the cursor is ghost text; taking it makes the suggestion's other edits", async () => {
  const host = new FakeHost();
  host.text = "def add(a, b):\n    return a + b\n\n\nprint(add(1, 2))\nx = add(\n";
  host.cursor = { line: 5, character: 8 };
  const edits = new NextEdits(host);
  edits.changed(URI);
  host.tick();
  const edit = (line: number, text: string, index: number) => ({
    text, textDocument: { uri: URI, version: 2 }, command: command(index),
    range: { start: { line, character: 0 }, end: { line: line + 1, character: 0 } } });
  host.answers.shift()!({ edits: [edit(5, "x = add(3, 4)\n", 0), edit(0, "def add(a, b, c=0):\n", 1),
                                   edit(4, "print(add(1, 2, 0))\n", 2)] });
  await new Promise((resolve) => setImmediate(resolve));
  const ghost = edits.ghost(URI);
  assert.equal(ghost?.insertText, "x = add(3, 4)");
  assert.equal(host.lastView?.ghost?.edit.startLine, 5);
  assert.equal(edits.ghost("file:///other.py"), undefined);
  // VS Code makes the ghost text's edit (a change event), then runs the item's command
  host.text = host.text.replace("x = add(\n", "x = add(3, 4)\n");
  host.version = 3;
  edits.changed(URI);
  assert.equal(await edits.ghostAccepted({ uri: URI, version: 2, startLine: 5 }), true);
  assert.equal(host.text, "def add(a, b, c=0):\n    return a + b\n\n\nprint(add(1, 2, 0))\nx = add(3, 4)\n");
  assert.deepEqual(host.taken, [command(0), command(1), command(2)]);
  host.tick();
  assert.equal(host.requests.length, 1, "taking the edits asks for nothing");
});

test("ghost text taken after the document changed otherwise makes nothing else", async () => {
  const host = new FakeHost();
  const edits = new NextEdits(host);
  await suggested(host, edits);
  host.text = host.text.replace("return count", "return counts");
  host.version = 3;
  edits.changed(URI);
  assert.equal(await edits.ghostAccepted({ uri: URI, version: 2, startLine: 4 }), false);
  assert.equal(host.text, BEFORE.replace("return count", "return counts"));
  assert.deepEqual(host.taken, []);
});

test("the Tab hint names the target while it is off screen, and never once the cursor is on it", async () => {
  const host = new FakeHost();
  const edits = new NextEdits(host);
  await suggested(host, edits);
  const view = host.lastView!;
  assert.equal(view.target?.startLine, 3);
  const offScreen = () => false;
  assert.equal(hintLine(view, 1, offScreen), 3, "off screen, from the cursor's line: the hint names it");
  assert.equal(hintLine(view, 1, (line) => line === 3), undefined, "on screen: no hint");
  // Tab's jump puts the cursor on the target before the editor has scrolled there
  await edits.tab();
  edits.moved(); // VS Code's selection event for the jump
  const jumped = host.lastView!;
  assert.equal(jumped.target?.startLine, 3);
  assert.equal(hintLine(jumped, host.cursor.line, offScreen), undefined, "the hint stayed on the edit it named");
  assert.equal(hintLine(undefined, 1, offScreen), undefined);
  assert.equal(hintLine({ ...view, ghost: { edit: view.target!, range: { start: { line: 1, character: 0 },
    end: { line: 1, character: 0 } }, insertText: "x" } }, 1, offScreen), undefined, "ghost text says it itself");
});
