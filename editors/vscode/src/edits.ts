/**
 * The rules of next edits, without VS Code: an answer of `textDocument/copilotInlineEdit` checked
 * and turned into whole-line edits of one document version (edits for another document or
 * version, ranges that are not whole lines, and overlapping edits are dropped), which edit Tab
 * jumps to and where the cursor lands, which edit can show as ghost text on the cursor's line,
 * what the other edits' decorations show, and the other edits moved past one taken as ghost text.
 * Lines and characters are those of LSP and VS Code (UTF-16 code units).
 */
import type { InlineEdit, InlineEditCommand, InlineEditResult, VersionedDocument, WirePosition, WireRange } from "./protocol";

/** What the rules read of a document: its lines without their breaks. */
export interface Lines {
  readonly lineCount: number;
  lineAt(line: number): string;
}

/**
 * One proposed edit: the lines [startLine, endLine) replaced by `text`. An edit that runs to the
 * end of the document (`toEnd`) replaces its last line without the (missing) break after it.
 */
export interface LineEdit {
  startLine: number;
  endLine: number;
  toEnd: boolean;
  text: string;
  command: InlineEditCommand | undefined;
}

/** The edits of one answer, for one version of one document, nearest the cursor first. */
export interface Suggestion extends VersionedDocument {
  edits: LineEdit[];
}

function isPosition(value: unknown): value is WirePosition {
  const position = value as WirePosition | null;
  return typeof position === "object" && position !== null
    && Number.isInteger(position.line) && position.line >= 0
    && Number.isInteger(position.character) && position.character >= 0;
}

/** The lines an LSP range covers, if it covers whole lines of `lines`. */
export function wholeLines(range: WireRange, lines: Lines): Omit<LineEdit, "text" | "command"> | undefined {
  if (!isPosition(range?.start) || !isPosition(range?.end) || range.start.character !== 0) {
    return undefined;
  }
  const { start, end } = range;
  const last = lines.lineCount - 1;
  if (end.character === 0 && start.line <= end.line && end.line <= last) {
    return { startLine: start.line, endLine: end.line, toEnd: false };
  }
  if (end.line === last && start.line <= last && end.character === lines.lineAt(last).length) {
    return { startLine: start.line, endLine: last + 1, toEnd: true };
  }
  return undefined;
}

function lineEdit(edit: InlineEdit, document: VersionedDocument, lines: Lines): LineEdit | undefined {
  if (typeof edit?.text !== "string" || edit.textDocument?.uri !== document.uri
      || edit.textDocument.version !== document.version) {
    return undefined;
  }
  const span = wholeLines(edit.range, lines);
  return span && { ...span, text: edit.text, command: edit.command };
}

/**
 * The edits of `result` that apply to `document` as `lines` hold it, in the server's order (nearest
 * the cursor first); an edit overlapping one kept before it is dropped.
 */
export function suggestionFrom(result: InlineEditResult | null | undefined, document: VersionedDocument,
                               lines: Lines): Suggestion {
  const kept: LineEdit[] = [];
  for (const raw of Array.isArray(result?.edits) ? result!.edits : []) {
    const edit = lineEdit(raw, document, lines);
    if (edit && !kept.some((other) => overlaps(other, edit))) {
      kept.push(edit);
    }
  }
  return { uri: document.uri, version: document.version, edits: kept };
}

function overlaps(a: LineEdit, b: LineEdit): boolean {
  const touchesA = Math.max(a.endLine, a.startLine + 1);
  const touchesB = Math.max(b.endLine, b.startLine + 1);
  return a.startLine < touchesB && b.startLine < touchesA;
}

/** Whether `suggestion` was made for this version of this document. */
export function isCurrent(suggestion: Suggestion | undefined, document: VersionedDocument): boolean {
  return suggestion !== undefined && suggestion.uri === document.uri && suggestion.version === document.version;
}

/** How many lines `line` is from the lines an edit replaces (0: on one of them). */
export function distance(edit: LineEdit, line: number): number {
  const last = Math.max(edit.endLine - 1, edit.startLine);
  return line < edit.startLine ? edit.startLine - line : Math.max(0, line - last);
}

/** The edit Tab goes to from `line`: the nearest, the server's order breaking ties. */
export function nearest(edits: readonly LineEdit[], line: number): LineEdit | undefined {
  let best: LineEdit | undefined;
  for (const edit of edits) {
    if (!best || distance(edit, line) < distance(best, line)) {
      best = edit;
    }
  }
  return best;
}

/** The text an edit replaces: its lines, each with its break but the document's last. */
export function oldText(edit: LineEdit, lines: Lines): string {
  const replaced: string[] = [];
  for (let line = edit.startLine; line < edit.endLine; line += 1) {
    replaced.push(lines.lineAt(line));
  }
  return replaced.join("\n") + (edit.toEnd || replaced.length === 0 ? "" : "\n");
}

/** The length of the common start of `a` and `b`, and of their common end after it. */
export function commonEnds(a: string, b: string): { prefix: number; suffix: number } {
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) {
    prefix += 1;
  }
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix
         && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) {
    suffix += 1;
  }
  return { prefix, suffix };
}

/** Where the cursor lands when Tab jumps to an edit: the first character it changes. */
export function landing(edit: LineEdit, lines: Lines): WirePosition {
  const before = oldText(edit, lines);
  const { prefix } = commonEnds(before, edit.text);
  const kept = before.slice(0, Math.min(prefix, Math.max(0, before.length - (edit.toEnd ? 0 : 1))));
  const breaks = kept.split("\n");
  return { line: edit.startLine + breaks.length - 1, character: breaks[breaks.length - 1].length };
}

/** Whether `line` is one of the lines an edit replaces (Tab there accepts). */
export function isAt(edit: LineEdit, line: number): boolean {
  return distance(edit, line) === 0;
}

/**
 * An edit of the cursor's line alone that only inserts text at the cursor, as the inline item
 * VS Code shows as ghost text: the line's range and its new text. Other edits: undefined.
 */
export function ghostText(edit: LineEdit, lines: Lines, cursor: WirePosition)
  : { range: WireRange; insertText: string } | undefined {
  if (edit.startLine !== cursor.line || edit.endLine !== cursor.line + 1) {
    return undefined;
  }
  const line = lines.lineAt(cursor.line);
  const insertText = edit.toEnd ? edit.text : edit.text.replace(/\r?\n$/, "");
  const head = line.slice(0, cursor.character);
  const tail = line.slice(cursor.character);
  if (insertText === line || !insertText.startsWith(head) || !insertText.slice(head.length).endsWith(tail)) {
    return undefined;
  }
  return { range: { start: { line: cursor.line, character: 0 }, end: { line: cursor.line, character: line.length } },
           insertText };
}

/** What a decoration shows for an edit: the changed part of its old text, and its new text. */
export interface Marked {
  changed: WireRange;
  newText: string;
}

function positionIn(edit: LineEdit, text: string, offset: number): WirePosition {
  const breaks = text.slice(0, offset).split("\n");
  return { line: edit.startLine + breaks.length - 1, character: breaks[breaks.length - 1].length };
}

/**
 * The part of an edit's old text it changes (the common start and end left out) and its new text
 * as one line (line breaks shown as ⏎, an end break dropped).
 */
export function marked(edit: LineEdit, lines: Lines): Marked {
  const before = oldText(edit, lines);
  const { prefix, suffix } = commonEnds(before, edit.text);
  const end = positionIn(edit, before, before.length - suffix);
  const start = positionIn(edit, before, prefix);
  const body = edit.toEnd ? edit.text : edit.text.replace(/\r?\n$/, "");
  return { changed: { start, end }, newText: body.split(/\r?\n/).map((line) => line.trim()).join(" ⏎ ") };
}

/** How many lines the document gains when `edit` is made. */
export function lineDelta(edit: LineEdit): number {
  const body = edit.toEnd ? edit.text : edit.text.replace(/\n$/, "");
  const added = edit.text === "" ? 0 : body.split("\n").length;
  return added - (edit.endLine - edit.startLine);
}

/** The other edits of a suggestion after `taken` was made: those below it moved by its lines. */
export function rebased(edits: readonly LineEdit[], taken: LineEdit): LineEdit[] {
  const delta = lineDelta(taken);
  return edits.filter((edit) => edit !== taken).map((edit) => edit.startLine < taken.startLine ? edit
    : { ...edit, startLine: edit.startLine + delta, endLine: edit.endLine + delta });
}

/** The LSP range an edit replaces in `lines`. */
export function rangeOf(edit: LineEdit, lines: Lines): WireRange {
  const end = edit.toEnd
    ? { line: edit.endLine - 1, character: lines.lineAt(edit.endLine - 1).length }
    : { line: edit.endLine, character: 0 };
  return { start: { line: edit.startLine, character: 0 }, end };
}
