/**
 * Next edits in the active editor, as a state machine over a small `Host` (VS Code's side lives in
 * `nextEditView.ts`, so this is tested with stand-ins): after the user changes a document and
 * pauses (`debounceMs`), ask the server for edits at the document's current version (a newer
 * change cancels the request in flight); keep the answer while the document stays at that version
 * and the editor stays in front; Tab jumps to the nearest edit, Tab again (on it) takes every edit
 * of the suggestion as one workspace edit, and only while the document is still at the version
 * the edits were for; Esc drops them. An edit that only inserts at the cursor on its line is
 * offered as ghost text; taking it takes the suggestion's other edits too. The cursor moves only
 * on Tab; the document changes only by an edit the user takes.
 */
import type { CancellationToken } from "vscode";
import {
  ghostText, isAt, isCurrent, landing, type LineEdit, type Lines, nearest, oldText, rangeOf, rebased,
  type Suggestion, suggestionFrom,
} from "./edits";
import type { TokenSource } from "./inline";
import type { InlineEditCommand, InlineEditParams, InlineEditResult, WirePosition, WireRange } from "./protocol";

/** The commands of the Tab and Esc keybindings (package.json), and the context key they wait for. */
export const TAB_COMMAND = "infill.nextEdit.jumpOrAccept";
export const DISMISS_COMMAND = "infill.nextEdit.dismiss";
export const VISIBLE_CONTEXT = "infill.nextEdit.visible";
/** The command of the ghost text item of an edit on the cursor's line (not in the palette). */
export const GHOST_ACCEPTED_COMMAND = "infill.nextEdit.ghostAccepted";

/** The active editor as the rules see it. */
export interface Editor extends Lines {
  readonly uri: string;
  readonly version: number;
  readonly cursor: WirePosition;
}

export interface TextChange {
  range: WireRange;
  text: string;
}

/** The ghost text of an edit on the cursor's line, and the edit. */
export interface Ghost {
  edit: LineEdit;
  range: WireRange;
  insertText: string;
}

/** What is on screen: the suggestion, the edit shown as ghost text if any, and Tab's target. */
export interface View {
  suggestion: Suggestion;
  ghost: Ghost | undefined;
  target: LineEdit | undefined;
}

/**
 * The line (0-based) that the "Tab: next edit at line N" hint names, or undefined for no hint: none
 * while an edit shows as ghost text, while the target is on screen (`onScreen`), or while the
 * cursor is on the target already (Tab takes the edits there; it is also where a jump lands before
 * the editor has scrolled to it).
 */
export function hintLine(view: View | undefined, cursorLine: number, onScreen: (line: number) => boolean)
  : number | undefined {
  const target = view?.target;
  if (!target || view.ghost || isAt(target, cursorLine) || onScreen(target.startLine)) {
    return undefined;
  }
  return target.startLine;
}

export interface Host {
  isEnabled(): boolean;
  debounceMs(): number;
  activeEditor(): Editor | undefined;
  newTokenSource(): TokenSource;
  request(params: InlineEditParams, token: CancellationToken): Promise<InlineEditResult | null | undefined>;
  /** `textDocument/didShowInlineEdit` for an edit's command. */
  showed(command: InlineEditCommand): void;
  /** Run an edit's command (`workspace/executeCommand`): the server logs it taken. */
  accepted(command: InlineEditCommand): void;
  /** Make `changes` in `uri` as one workspace edit; false when it was not made. */
  apply(uri: string, changes: TextChange[]): Thenable<boolean>;
  moveCursor(position: WirePosition): void;
  render(view: View | undefined): void;
  setTimer(callback: () => void, ms: number): { dispose(): void };
  log(message: string): void;
}

/** The argument of the ghost text item's command: which suggestion's edit VS Code just made. */
export interface GhostAccepted {
  uri: string;
  version: number;
  startLine: number;
}

export class NextEdits {
  private suggestion: Suggestion | undefined;
  private taken: Suggestion | undefined; // the last one dropped by a change: its ghost text may have made it
  private inFlight: TokenSource | undefined;
  private timer: { dispose(): void } | undefined;
  private applying: string | undefined; // the document our own workspace edit is changing

  constructor(private readonly host: Host) {}

  /** The user (or anyone but us) changed `uri`: its edits are stale; ask again after a pause. */
  changed(uri: string): void {
    if (this.suggestion?.uri === uri) {
      this.taken = this.suggestion;
      this.clear();
    }
    this.cancel();
    if (this.applying === uri || !this.host.isEnabled()) {
      return;
    }
    this.timer = this.host.setTimer(() => void this.ask(uri), this.host.debounceMs());
  }

  /** The cursor moved or the editor scrolled: the ghost text, Tab's target and its hint follow. */
  moved(): void {
    if (this.suggestion) {
      this.render();
    }
  }

  /** Another editor came to the front, or the feature was turned off: nothing stays. */
  reset(): void {
    this.cancel();
    this.clear();
  }

  closed(uri: string): void {
    if (this.suggestion?.uri === uri) {
      this.reset();
    }
  }

  /** Esc: drop the suggestion; false when there was none. */
  dismiss(): boolean {
    const had = this.suggestion !== undefined;
    this.reset();
    return had;
  }

  /** Tab: jump to the nearest edit, or on one, take them all; false when there is nothing to do. */
  async tab(): Promise<boolean> {
    const editor = this.host.activeEditor();
    const suggestion = this.suggestion;
    if (!editor || !suggestion || !isCurrent(suggestion, editor)) {
      this.reset();
      return false;
    }
    if (suggestion.edits.some((edit) => isAt(edit, editor.cursor.line))) {
      return this.acceptAll(editor, suggestion.edits);
    }
    const target = nearest(suggestion.edits, editor.cursor.line);
    if (target) {
      this.host.moveCursor(landing(target, editor));
    }
    return target !== undefined;
  }

  /** The ghost text for the cursor of `uri`, if the suggestion has one there. */
  ghost(uri: string): Ghost | undefined {
    const editor = this.host.activeEditor();
    if (!editor || editor.uri !== uri || !isCurrent(this.suggestion, editor)) {
      return undefined;
    }
    for (const edit of this.suggestion!.edits) {
      const shown = ghostText(edit, editor, editor.cursor);
      if (shown) {
        return { edit, ...shown };
      }
    }
    return undefined;
  }

  /** VS Code made the ghost text's edit (its item's command): report it and make the others. */
  async ghostAccepted(argument: GhostAccepted): Promise<boolean> {
    const editor = this.host.activeEditor();
    const suggestion = [this.suggestion, this.taken].find((s) => s && s.uri === argument.uri
                                                                  && s.version === argument.version);
    const edit = suggestion?.edits.find((e) => e.startLine === argument.startLine);
    if (!editor || !suggestion || !edit || editor.uri !== suggestion.uri || editor.version !== suggestion.version + 1
        || !madeAt(edit, editor)) {
      this.host.log("next edit: the document changed beyond the ghost text; its other edits are dropped");
      return false;
    }
    this.cancel();
    this.clear();
    this.taken = undefined;
    report(this.host, [edit]);
    return this.acceptAll(editor, rebased(suggestion.edits, edit));
  }

  dispose(): void {
    this.reset();
  }

  private async acceptAll(editor: Editor, edits: LineEdit[]): Promise<boolean> {
    const version = editor.version;
    const changes = edits.map((edit) => ({ range: rangeOf(edit, editor), text: edit.text }));
    this.reset();
    if (changes.length === 0) {
      return true;
    }
    this.applying = editor.uri;
    let made = false;
    try {
      made = this.host.activeEditor()?.version === version && await this.host.apply(editor.uri, changes);
    } finally {
      this.applying = undefined;
    }
    if (made) {
      report(this.host, edits);
    } else {
      this.host.log(`next edit: ${editor.uri} changed before its edits were made; nothing was changed`);
    }
    return made;
  }

  private async ask(uri: string): Promise<void> {
    this.timer = undefined;
    const editor = this.host.activeEditor();
    if (!editor || editor.uri !== uri || !this.host.isEnabled()) {
      return;
    }
    const document = { uri, version: editor.version };
    const source = this.host.newTokenSource();
    this.inFlight = source;
    try {
      const result = await this.host.request({ textDocument: document, position: editor.cursor }, source.token);
      const now = this.host.activeEditor();
      if (!source.token.isCancellationRequested && now && now.uri === uri && now.version === document.version) {
        this.show(suggestionFrom(result, document, now));
      }
    } catch (error) {
      if (!source.token.isCancellationRequested) {
        this.host.log(`next edit: the request failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    } finally {
      if (this.inFlight === source) {
        this.inFlight = undefined;
      }
      source.dispose();
    }
  }

  private show(suggestion: Suggestion): void {
    if (suggestion.edits.length === 0) {
      return;
    }
    this.suggestion = suggestion;
    this.taken = undefined;
    this.render();
    for (const edit of suggestion.edits) {
      if (edit.command) {
        this.host.showed(edit.command);
      }
    }
  }

  private render(): void {
    const editor = this.host.activeEditor();
    const suggestion = this.suggestion;
    if (!editor || !suggestion || !isCurrent(suggestion, editor)) {
      this.host.render(undefined);
      return;
    }
    const target = nearest(suggestion.edits, editor.cursor.line);
    this.host.render({ suggestion, ghost: this.ghost(editor.uri), target });
  }

  private clear(): void {
    if (this.suggestion) {
      this.suggestion = undefined;
      this.host.render(undefined);
    }
  }

  private cancel(): void {
    this.timer?.dispose();
    this.timer = undefined;
    this.inFlight?.cancel();
    this.inFlight = undefined;
  }
}

/** Whether the lines at `edit`'s start now hold its text (VS Code made it). */
function madeAt(edit: LineEdit, lines: Lines): boolean {
  const added = edit.text.replace(/\n$/, "").split("\n").length;
  const endLine = edit.startLine + added;
  if (endLine > lines.lineCount) {
    return false;
  }
  const toEnd = endLine === lines.lineCount && !edit.text.endsWith("\n");
  return oldText({ ...edit, endLine, toEnd }, lines) === edit.text;
}

function report(host: Host, edits: readonly LineEdit[]): void {
  for (const edit of edits) {
    if (edit.command) {
      host.accepted(edit.command);
    }
  }
}
