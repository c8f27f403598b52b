import assert from "node:assert/strict";
import { test } from "node:test";
import {
  commonEnds, distance, ghostText, isCurrent, landing, type LineEdit, lineDelta, marked, nearest, oldText, rangeOf,
  rebased, suggestionFrom, wholeLines,
} from "../src/edits";
import type { InlineEdit } from "../src/protocol";
import { applied, textLines } from "./mocks";

const URI = "file:///tally.py";
const SOURCE = "def tally(items):\n    total = 0\n    for item in items:\n        count += item\n    return count";
const RENAMED = SOURCE.replace(/count/g, "total");

function wire(start: number, end: number, text: string, version = 2, endCharacter = 0): InlineEdit {
  return { text, textDocument: { uri: URI, version },
           range: { start: { line: start, character: 0 }, end: { line: end, character: endCharacter } },
           command: { title: "t", command: "infill.acceptInlineEdit", arguments: [{ requestId: "r1", index: start }] } };
}

function edit(startLine: number, endLine: number, text: string, toEnd = false): LineEdit {
  return { startLine, endLine, toEnd, text, command: undefined };
}

const lines = textLines(SOURCE);
const answer = { edits: [wire(3, 4, "        total += item\n"), wire(4, 4, "    return total", 2, 16)] };

test("an answer becomes whole-line edits of its version; making them gives the renamed text", () => {
  const suggestion = suggestionFrom(answer, { uri: URI, version: 2 }, lines);
  assert.deepEqual(suggestion.edits.map((e) => [e.startLine, e.endLine, e.toEnd]), [[3, 4, false], [4, 5, true]]);
  assert.equal(applied(SOURCE, suggestion.edits.map((e) => ({ range: rangeOf(e, lines), text: e.text }))), RENAMED);
  assert.deepEqual(suggestion.edits.map((e) => rangeOf(e, lines)), answer.edits.map((e) => e.range));
});

test("edits for another version or document, or not of whole lines, or overlapping, are dropped", () => {
  const bad = [wire(1, 2, "x\n", 1), { ...wire(1, 2, "x\n"), textDocument: { uri: "file:///other.py", version: 2 } },
               { ...wire(1, 2, "x\n"), range: { start: { line: 1, character: 2 }, end: { line: 2, character: 0 } } },
               wire(2, 9, "x\n"), wire(4, 4, "x", 2, 3), { ...wire(1, 2, "x\n"), text: 5 as unknown as string }];
  assert.deepEqual(suggestionFrom({ edits: bad }, { uri: URI, version: 2 }, lines).edits, []);
  const overlapping = { edits: [wire(2, 4, "a\n"), wire(3, 4, "b\n"), wire(1, 2, "c\n")] };
  assert.deepEqual(suggestionFrom(overlapping, { uri: URI, version: 2 }, lines).edits.map((e) => e.text), ["a\n", "c\n"]);
  for (const nothing of [null, undefined, {} as never, { edits: "no" } as never]) {
    assert.deepEqual(suggestionFrom(nothing, { uri: URI, version: 2 }, lines).edits, []);
  }
});

test("a range is whole lines when it starts a line and ends one, or ends the document", () => {
  const at = (sl: number, sc: number, el: number, ec: number) =>
    wholeLines({ start: { line: sl, character: sc }, end: { line: el, character: ec } }, lines);
  assert.deepEqual(at(0, 0, 2, 0), { startLine: 0, endLine: 2, toEnd: false });
  assert.deepEqual(at(2, 0, 2, 0), { startLine: 2, endLine: 2, toEnd: false }); // an insertion before line 2
  assert.deepEqual(at(3, 0, 4, 16), { startLine: 3, endLine: 5, toEnd: true });
  assert.equal(at(3, 0, 4, 15), undefined);
  assert.equal(at(3, 0, 2, 0), undefined);
  assert.equal(at(0, 0, 5, 0), undefined);
});

test("a suggestion is current only for its document at its version", () => {
  const suggestion = suggestionFrom(answer, { uri: URI, version: 2 }, lines);
  assert.ok(isCurrent(suggestion, { uri: URI, version: 2 }));
  assert.ok(!isCurrent(suggestion, { uri: URI, version: 3 }));
  assert.ok(!isCurrent(suggestion, { uri: "file:///other.py", version: 2 }));
  assert.ok(!isCurrent(undefined, { uri: URI, version: 2 }));
});

test("Tab goes to the nearest edit, the server's order breaking ties", () => {
  const edits = [edit(10, 12, "a\n"), edit(2, 3, "b\n"), edit(6, 7, "c\n")];
  assert.deepEqual([distance(edits[0], 9), distance(edits[0], 11), distance(edits[0], 14)], [1, 0, 3]);
  assert.equal(nearest(edits, 7), edits[2]);
  assert.equal(nearest(edits, 4), edits[1]);
  assert.equal(nearest([edit(6, 7, "x\n"), edit(2, 3, "y\n")], 4)?.text, "x\n"); // both 2 away: the first
  assert.equal(nearest([], 4), undefined);
});

test("the cursor lands on the first character an edit changes", () => {
  assert.deepEqual(landing(edit(3, 4, "        total += item\n"), lines), { line: 3, character: 8 });
  assert.deepEqual(landing(edit(4, 5, "    return total", true), lines), { line: 4, character: 11 });
  assert.deepEqual(landing(edit(1, 3, "    total = 0\n    for thing in items:\n"), lines), { line: 2, character: 8 });
  assert.deepEqual(landing(edit(1, 2, "    total = 0\n    x = 1\n"), lines), { line: 1, character: 13 }); // a line added
});

test("the old text of an edit, and the common ends of two texts", () => {
  assert.equal(oldText(edit(1, 3, ""), lines), "    total = 0\n    for item in items:\n");
  assert.equal(oldText(edit(4, 5, "", true), lines), "    return count");
  assert.equal(oldText(edit(2, 2, "x\n"), lines), "");
  assert.deepEqual(commonEnds("count += 1", "total += 1"), { prefix: 0, suffix: 5 });
  assert.deepEqual(commonEnds("aa", "aaa"), { prefix: 2, suffix: 0 });
});

test("only an edit of the cursor's line that inserts at the cursor is ghost text", () => {
  const doc = textLines("x = foo(\ny = 2\n");
  const insert = edit(0, 1, "x = foo(a, b)\n");
  assert.deepEqual(ghostText(insert, doc, { line: 0, character: 8 }),
                   { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 8 } }, insertText: "x = foo(a, b)" });
  assert.equal(ghostText(insert, doc, { line: 0, character: 3 }), undefined, "it inserts after the cursor, not at it");
  assert.equal(ghostText(insert, doc, { line: 1, character: 0 }), undefined, "another line");
  assert.equal(ghostText(edit(0, 1, "x = bar(\n"), doc, { line: 0, character: 8 }), undefined, "it changes text");
  assert.equal(ghostText(edit(0, 2, "x = foo(a,\ny = 2\n"), doc, { line: 0, character: 8 }), undefined, "two lines");
  const midLine = ghostText(edit(1, 2, "y = 2 + z\n"), doc, { line: 1, character: 5 });
  assert.equal(midLine?.insertText, "y = 2 + z");
});

test("a decoration marks the changed part of the old text and shows the new text on one line", () => {
  assert.deepEqual(marked(edit(3, 4, "        total += item\n"), lines),
                   { changed: { start: { line: 3, character: 8 }, end: { line: 3, character: 13 } },
                     newText: "total += item" });
  assert.deepEqual(marked(edit(1, 3, "    total = 0\n    for thing in items:\n"), lines).changed,
                   { start: { line: 2, character: 8 }, end: { line: 2, character: 12 } });
  assert.equal(marked(edit(1, 2, "    a = 1\n    b = 2\n"), lines).newText, "a = 1 ⏎ b = 2");
});

test("taking one edit moves the edits below it by the lines it adds", () => {
  const taken = edit(1, 2, "    total = 0\n    extra = 1\n");
  assert.equal(lineDelta(taken), 1);
  assert.equal(lineDelta(edit(1, 3, "")), -2);
  assert.equal(lineDelta(edit(4, 5, "a\nb", true)), 1);
  const others = [edit(0, 1, "a\n"), taken, edit(3, 4, "b\n"), edit(4, 5, "c", true)];
  assert.deepEqual(rebased(others, taken).map((e) => [e.startLine, e.endLine]), [[0, 1], [4, 5], [5, 6]]);
});
