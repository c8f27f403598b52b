/**
 * The arena in VS Code, as Copilot Arena shows it: when the server's `arena` setting is on, an
 * inline answer holds two items whose commands are `infill.arenaVote` (`lsp_server/arena.py`).
 * They are shown as one ghost text: the top answer, a separator line (`<indent>======`), the
 * line's prefix again and the bottom answer. Tab takes the top (VS Code inserts the whole ghost
 * text, then the item's command puts the top alone in its place), Shift-Tab the bottom, and typing
 * on takes neither; each outcome goes to the server as `infill.arenaVote` with `[battleId, pick]`.
 * Nothing here imports VS Code: the editor's edits and the vote come in as functions.
 */
import type { Lines } from "./edits";
import type { WirePosition, WireRange } from "./protocol";

export const VOTE_COMMAND = "infill.arenaVote";
export const TAKE_TOP_COMMAND = "infill.arena.takeTop";
export const TAKE_BOTTOM_COMMAND = "infill.arena.takeBottom";
export const VISIBLE_CONTEXT = "infill.arena.visible";
export const SEPARATOR = "======";

export type Pick = "top" | "bottom" | "neither";

export interface ArenaPair {
  battleId: string;
  top: string;
  bottom: string;
}

interface WireItem {
  insertText?: string | { value: string };
  command?: { command: string; arguments?: unknown[] };
}

function textOf(item: WireItem): string | undefined {
  const text = item.insertText;
  return typeof text === "string" ? text : text?.value;
}

/** The battle an inline answer holds, or undefined for a plain answer. */
export function arenaPair(items: readonly WireItem[]): ArenaPair | undefined {
  if (items.length !== 2) {
    return undefined;
  }
  const [top, bottom] = items;
  const [topArgs, bottomArgs] = [top.command?.arguments ?? [], bottom.command?.arguments ?? []];
  const votes = top.command?.command === VOTE_COMMAND && bottom.command?.command === VOTE_COMMAND;
  const battleId = topArgs[0];
  if (!votes || typeof battleId !== "string" || topArgs[1] !== "top" || bottomArgs[0] !== battleId
      || bottomArgs[1] !== "bottom") {
    return undefined;
  }
  const [topText, bottomText] = [textOf(top), textOf(bottom)];
  return topText === undefined || bottomText === undefined ? undefined
    : { battleId, top: topText, bottom: bottomText };
}

/** The one ghost text of a pair at a cursor whose line reads `linePrefix` before it. */
export function arenaGhostText(pair: ArenaPair, linePrefix: string): string {
  const indent = /^[ \t]*/.exec(linePrefix)?.[0] ?? "";
  const top = pair.top.replace(/\n$/, "");
  return `${top}\n${indent}${SEPARATOR}\n${linePrefix}${pair.bottom.replace(/\n$/, "")}`;
}

/** The position `text` ends at when inserted at `start`. */
export function endOf(start: WirePosition, text: string): WirePosition {
  const lines = text.split("\n");
  const last = lines[lines.length - 1];
  return lines.length === 1 ? { line: start.line, character: start.character + last.length }
    : { line: start.line + lines.length - 1, character: last.length };
}

/** What the arena asks of the editor and the server. */
export interface ArenaHost {
  vote(battleId: string, pick: Pick): void;
  /** Replace the text from `start` to `end` in the document `uri` with `text`. */
  replace(uri: string, start: WirePosition, end: WirePosition, text: string): Promise<void>;
  /** Hide the ghost text (for Shift-Tab, which VS Code does not take itself). */
  hide(): Promise<void>;
  setVisible(visible: boolean): void;
}

/**
 * The item that shows a pair. Its range is empty at the cursor: VS Code gives an item without one
 * the range from the start of the cursor's word to the line's end, and draws ghost text only for
 * an item whose text begins with what its range replaces, which the top answer does not.
 */
export interface ArenaItem {
  insertText: string;
  range: WireRange;
  command: { title: string; command: string; arguments: unknown[] };
}

interface Shown {
  uri: string;
  at: WirePosition;
  pair: ArenaPair;
  ghost: string;
}

export class Arena {
  private readonly shown = new Map<string, Shown>(); // document URI -> the battle on screen

  constructor(private readonly host: ArenaHost) {}

  /** The single item VS Code shows for a pair at `at`, inserted there; its command takes the top. */
  present(uri: string, at: WirePosition, linePrefix: string, pair: ArenaPair): ArenaItem {
    this.passOver(uri);
    const ghost = arenaGhostText(pair, linePrefix);
    this.shown.set(uri, { uri, at, pair, ghost });
    this.host.setVisible(true);
    return { insertText: ghost, range: { start: { ...at }, end: { ...at } },
             command: { title: "infill arena: take the top", command: TAKE_TOP_COMMAND, arguments: [uri] } };
  }

  /** Tab: VS Code inserted the whole ghost text; keep the top answer alone. */
  async takeTop(uri: string): Promise<void> {
    const shown = this.take(uri);
    if (shown) {
      await this.host.replace(uri, shown.at, endOf(shown.at, shown.ghost), shown.pair.top);
      this.host.vote(shown.pair.battleId, "top");
    }
  }

  /** Shift-Tab: hide the ghost text and insert the bottom answer. */
  async takeBottom(uri: string): Promise<void> {
    const shown = this.take(uri);
    if (shown) {
      await this.host.hide();
      await this.host.replace(uri, shown.at, shown.at, shown.pair.bottom);
      this.host.vote(shown.pair.battleId, "bottom");
    }
  }

  /** The user typed on (a new request came) or the document closed: neither was taken. */
  passOver(uri: string): void {
    const shown = this.take(uri);
    if (shown) {
      this.host.vote(shown.pair.battleId, "neither");
    }
  }

  /**
   * Whether `lines` (the document `uri` now) hold the whole ghost text of its pair at its place:
   * Tab took it and VS Code, which asks for a completion after that insertion, runs the item's
   * command (`takeTop`) next. A request then is no new battle and passes nothing over.
   */
  isBeingTaken(uri: string, lines: Lines): boolean {
    const shown = this.shown.get(uri);
    if (!shown) {
      return false;
    }
    const { at, ghost } = shown;
    const end = endOf(at, ghost);
    if (end.line >= lines.lineCount) {
      return false;
    }
    const held: string[] = [];
    for (let line = at.line; line <= end.line; line += 1) {
      const text = lines.lineAt(line);
      held.push(text.slice(line === at.line ? at.character : 0, line === end.line ? end.character : text.length));
    }
    return held.join("\n") === ghost;
  }

  isShowing(uri: string): boolean {
    return this.shown.has(uri);
  }

  private take(uri: string): Shown | undefined {
    const shown = this.shown.get(uri);
    if (shown) {
      this.shown.delete(uri);
      this.host.setVisible(this.shown.size > 0);
    }
    return shown;
  }
}
