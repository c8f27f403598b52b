import assert from "node:assert/strict";
import { test } from "node:test";
import type { InlineCompletionContext, Position, TextDocument } from "vscode";
import {
  Arena, type ArenaItem, arenaGhostText, arenaPair, endOf, type Pick, TAKE_TOP_COMMAND, VOTE_COMMAND,
} from "../src/arena";
import { Feedback } from "../src/feedback";
import { InlineRequests } from "../src/inline";
import type { WirePosition } from "../src/protocol";
import { MockTokenSource, textLines } from "./mocks";

function voteItem(text: string, battleId: string, pick: string) {
  return { insertText: text, command: { title: "", command: VOTE_COMMAND, arguments: [battleId, pick] } };
}

const PAIR = [voteItem("a + b", "b1", "top"), voteItem("sum([a, b])", "b1", "bottom")];

function host() {
  const votes: [string, Pick][] = [];
  const edits: [string, WirePosition, WirePosition, string][] = [];
  const visible: boolean[] = [];
  let hidden = 0;
  const arena = new Arena({
    vote: (battleId, pick) => { votes.push([battleId, pick]); },
    replace: async (uri, start, end, text) => { edits.push([uri, start, end, text]); },
    hide: async () => { hidden += 1; },
    setVisible: (shown) => { visible.push(shown); },
  });
  return { arena, votes, edits, visible, hidden: () => hidden };
}

test("an answer of two vote items is an arena pair; anything else is not", () => {
  assert.deepEqual(arenaPair(PAIR), { battleId: "b1", top: "a + b", bottom: "sum([a, b])" });
  assert.equal(arenaPair([PAIR[0]]), undefined);
  assert.equal(arenaPair([PAIR[1], PAIR[0]]), undefined, "the order must be top, bottom");
  assert.equal(arenaPair([PAIR[0], voteItem("x", "other", "bottom")]), undefined);
  assert.equal(arenaPair([{ insertText: "x" }, { insertText: "y" }]), undefined);
});

test("both answers are one ghost text: the top, an indented separator, the line's prefix, the bottom", () => {
  const ghost = arenaGhostText({ battleId: "b1", top: "a + b\n", bottom: "sum([a, b])" }, "    return ");
  assert.equal(ghost, "a + b\n    ======\n    return sum([a, b])");
  assert.deepEqual(endOf({ line: 3, character: 11 }, ghost), { line: 5, character: 22 });
  assert.deepEqual(endOf({ line: 3, character: 11 }, "abc"), { line: 3, character: 14 });
});

test("Tab keeps the top answer alone in place of the ghost text and votes top", async () => {
  const { arena, votes, edits, visible } = host();
  const at = { line: 3, character: 11 };
  const item = arena.present("file:///a.py", at, "    return ", { battleId: "b1", top: "a + b", bottom: "sum([a, b])" });
  assert.equal(item.insertText, "a + b\n    ======\n    return sum([a, b])");
  assert.deepEqual(item.range, { start: at, end: at }, "the ghost text is inserted at the cursor, replacing nothing");
  assert.deepEqual(item.command.command, TAKE_TOP_COMMAND);
  await arena.takeTop("file:///a.py");
  assert.deepEqual(edits, [["file:///a.py", at, { line: 5, character: 22 }, "a + b"]]);
  assert.deepEqual(votes, [["b1", "top"]]);
  assert.deepEqual(visible, [true, false]);
  await arena.takeTop("file:///a.py");
  assert.equal(votes.length, 1, "a pair is voted on once");
});

test("Shift+Tab hides the ghost text, inserts the bottom answer and votes bottom", async () => {
  const { arena, votes, edits, hidden } = host();
  const at = { line: 0, character: 4 };
  arena.present("file:///a.py", at, "x = ", { battleId: "b2", top: "1", bottom: "2" });
  await arena.takeBottom("file:///a.py");
  assert.equal(hidden(), 1);
  assert.deepEqual(edits, [["file:///a.py", at, at, "2"]]);
  assert.deepEqual(votes, [["b2", "bottom"]]);
});

test("typing on (the next request) votes neither; a plain answer passes through", async () => {
  const { arena, votes } = host();
  const requests = new InlineRequests({
    isEnabled: () => true, newTokenSource: () => new MockTokenSource(), feedback: new Feedback(() => undefined),
    onLatency: () => undefined, now: () => 0, arena, newItem: (item) => item as never,
  });
  const document = { uri: { toString: () => "file:///a.py" }, lineCount: 1, lineAt: () => ({ text: "y = " }) } as unknown as TextDocument;
  const position = { line: 0, character: 4 } as Position;
  const shown = await requests.provideInlineCompletionItems(document, position, {} as InlineCompletionContext,
    new MockTokenSource().token, async () => PAIR as never);
  assert.equal((shown as { insertText: string }[])[0].insertText, "a + b\n======\ny = sum([a, b])");
  assert.ok(arena.isShowing("file:///a.py"));
  const plain = [{ insertText: "3" }];
  const next = await requests.provideInlineCompletionItems(document, position, {} as InlineCompletionContext,
    new MockTokenSource().token, async () => plain as never);
  assert.equal(next, plain);
  assert.deepEqual(votes, [["b1", "neither"]]);
});

test("the pair's item is made as VS Code's, with an empty range at the cursor even where a word ends there", async () => {
  const { arena } = host();
  const made: ArenaItem[] = [];
  const requests = new InlineRequests({
    isEnabled: () => true, newTokenSource: () => new MockTokenSource(), feedback: new Feedback(() => undefined),
    onLatency: () => undefined, now: () => 0, arena,
    newItem: (item) => { made.push(item); return { made: made.length } as never; },
  });
  // "    x|": without a range VS Code would replace the word `x` with the ghost text, and show none
  const document = { uri: { toString: () => "file:///a.py" }, lineCount: 7, lineAt: () => ({ text: "    x" }) } as unknown as TextDocument;
  const position = { line: 5, character: 5 } as Position;
  const shown = await requests.provideInlineCompletionItems(document, position, {} as InlineCompletionContext,
    new MockTokenSource().token, async () => PAIR as never);
  assert.deepEqual(shown, [{ made: 1 }], "the middleware answers VS Code's item, not the plain one");
  assert.equal(made.length, 1);
  assert.deepEqual(made[0].range, { start: { line: 5, character: 5 }, end: { line: 5, character: 5 } });
  assert.equal(made[0].insertText, "a + b\n    ======\n    xsum([a, b])");
  assert.deepEqual(made[0].command, { title: "infill arena: take the top", command: TAKE_TOP_COMMAND,
                                      arguments: ["file:///a.py"] });
});

test("the request VS Code makes once Tab inserted the whole pair is no battle: nothing asked, nothing passed over", async () => {
  const { arena, votes, edits } = host();
  const requests = new InlineRequests({
    isEnabled: () => true, newTokenSource: () => new MockTokenSource(), feedback: new Feedback(() => undefined),
    onLatency: () => undefined, now: () => 0, arena, newItem: (item) => item as never,
  });
  const documentOf = (text: string) => {
    const lines = textLines(text);
    return { uri: { toString: () => "file:///a.py" }, lineCount: lines.lineCount,
             lineAt: (line: number) => ({ text: lines.lineAt(line) }) } as unknown as TextDocument;
  };
  let asked = 0;
  const ask = async () => { asked += 1; return PAIR as never; };
  const before = "def f(a, b):\n    x\n";
  const at = { line: 1, character: 5 } as Position;
  const [shown] = await requests.provideInlineCompletionItems(documentOf(before), at, {} as InlineCompletionContext,
    new MockTokenSource().token, ask) as unknown as ArenaItem[];
  const taken = `def f(a, b):\n    x${shown.insertText}\n`;
  const end = { line: 3, character: 16 } as Position;
  const during = await requests.provideInlineCompletionItems(documentOf(taken), end, {} as InlineCompletionContext,
    new MockTokenSource().token, ask);
  assert.equal(during, null);
  assert.equal(asked, 1, "the server is not asked for the document with the whole pair in it");
  assert.deepEqual(votes, [], "the pair Tab took is not passed over");
  await arena.takeTop("file:///a.py");
  assert.deepEqual(edits, [["file:///a.py", { line: 1, character: 5 }, end, "a + b"]]);
  assert.deepEqual(votes, [["b1", "top"]]);
  await requests.provideInlineCompletionItems(documentOf("def f(a, b):\n    xa + b\n"), { line: 1, character: 10 } as Position,
    {} as InlineCompletionContext, new MockTokenSource().token, ask);
  assert.equal(asked, 2, "after the command, completions are asked again");
  assert.deepEqual(votes, [["b1", "top"]]);
});

test("only the whole ghost text at the pair's place, in its document, reads as the pair taken with Tab", () => {
  const { arena, votes } = host();
  arena.present("file:///a.py", { line: 0, character: 4 }, "y = ", { battleId: "b3", top: "1", bottom: "2" });
  assert.ok(!arena.isBeingTaken("file:///a.py", textLines("y = 1\n")));
  assert.ok(!arena.isBeingTaken("file:///other.py", textLines("y = 1\n======\ny = 2")));
  assert.ok(arena.isBeingTaken("file:///a.py", textLines("y = 1\n======\ny = 2\n")));
  assert.deepEqual(votes, []);
});
