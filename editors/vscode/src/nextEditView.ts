/**
 * Next edits on VS Code's side: the `Host` of `nextEdit.ts` over the active editor and the
 * language client, the decorations (the old text marked, the new text after it, a gutter sign, a
 * "Tab" hint on the cursor's line when the target is off screen), the ghost text of an edit on the
 * cursor's line (an inline completion provider), the `infill.nextEdit.visible` context key that
 * the Tab and Esc keybindings wait for, and the events that drive the state machine.
 */
import * as vscode from "vscode";
import { ExecuteCommandRequest, type LanguageClient } from "vscode-languageclient/node";
import { nextEditSettings, SECTION } from "./config";
import { marked } from "./edits";
import {
  DISMISS_COMMAND, type Editor, GHOST_ACCEPTED_COMMAND, type GhostAccepted, hintLine, type Host, NextEdits, TAB_COMMAND,
  type TextChange, type View, VISIBLE_CONTEXT,
} from "./nextEdit";
import { DidShowInlineEdit, InlineEditRequest, type WirePosition, type WireRange } from "./protocol";

function position(at: WirePosition): vscode.Position {
  return new vscode.Position(at.line, at.character);
}

function range(span: WireRange): vscode.Range {
  return new vscode.Range(position(span.start), position(span.end));
}

function editorOf(editor: vscode.TextEditor): Editor {
  const { document, selection } = editor;
  return {
    uri: document.uri.toString(),
    version: document.version,
    cursor: { line: selection.active.line, character: selection.active.character },
    lineCount: document.lineCount,
    lineAt: (line) => document.lineAt(line).text,
  };
}

class Decorations implements vscode.Disposable {
  private readonly old: vscode.TextEditorDecorationType;
  private readonly added = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor("editorGhostText.foreground"), margin: "0 0 0 1em" },
  });
  private readonly hint = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor("editorGhostText.foreground"), margin: "0 0 0 2em" },
  });

  constructor(gutterIcon: vscode.Uri) {
    this.old = vscode.window.createTextEditorDecorationType({
      backgroundColor: new vscode.ThemeColor("diffEditor.removedTextBackground"),
      gutterIconPath: gutterIcon,
      overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.modifiedForeground"),
      overviewRulerLane: vscode.OverviewRulerLane.Right,
    });
  }

  draw(editor: vscode.TextEditor, view: View | undefined): void {
    const old: vscode.DecorationOptions[] = [];
    const added: vscode.DecorationOptions[] = [];
    const lines = editorOf(editor);
    for (const edit of view?.suggestion.edits ?? []) {
      if (edit === view?.ghost?.edit) {
        continue;
      }
      const shown = marked(edit, lines);
      const changed = range(shown.changed);
      old.push({ range: changed });
      added.push({ range: new vscode.Range(changed.end, changed.end),
                   renderOptions: { after: { contentText: `→ ${shown.newText || "(delete)"}` } } });
    }
    editor.setDecorations(this.old, old);
    editor.setDecorations(this.added, added);
    editor.setDecorations(this.hint, this.hints(editor, view));
  }

  dispose(): void {
    [this.old, this.added, this.hint].forEach((type) => type.dispose());
  }

  private hints(editor: vscode.TextEditor, view: View | undefined): vscode.DecorationOptions[] {
    const line = hintLine(view, editor.selection.active.line,
                          (at) => editor.visibleRanges.some((visible) => visible.contains(new vscode.Position(at, 0))));
    if (line === undefined) {
      return [];
    }
    const end = editor.document.lineAt(editor.selection.active.line).range.end;
    return [{ range: new vscode.Range(end, end),
              renderOptions: { after: { contentText: `Tab: next edit at line ${line + 1}` } } }];
  }
}

/** Next edits in VS Code, for the language client that `client()` gives while it runs. */
export class NextEditView implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly decorations: Decorations;
  readonly edits: NextEdits;
  private ghostShown = false;

  constructor(private readonly client: () => LanguageClient | undefined, gutterIcon: vscode.Uri,
              private readonly output: vscode.LogOutputChannel) {
    this.decorations = new Decorations(gutterIcon);
    this.edits = new NextEdits(this.host());
    this.disposables.push(
      this.decorations,
      vscode.commands.registerCommand(TAB_COMMAND, () => this.edits.tab()),
      vscode.commands.registerCommand(DISMISS_COMMAND, () => this.edits.dismiss()),
      vscode.commands.registerCommand(GHOST_ACCEPTED_COMMAND,
                                      (argument: GhostAccepted) => this.edits.ghostAccepted(argument)),
      vscode.languages.registerInlineCompletionItemProvider(
        { pattern: "**" }, { provideInlineCompletionItems: (document) => this.ghostItems(document) }),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.contentChanges.length > 0) {
          this.edits.changed(event.document.uri.toString());
        }
      }),
      vscode.window.onDidChangeTextEditorSelection((event) => {
        if (event.textEditor === vscode.window.activeTextEditor) {
          this.edits.moved();
        }
      }),
      vscode.window.onDidChangeTextEditorVisibleRanges((event) => {
        if (event.textEditor === vscode.window.activeTextEditor) {
          this.edits.moved(); // the hint shows only while the target is off screen
        }
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.edits.reset()),
      vscode.workspace.onDidCloseTextDocument((document) => this.edits.closed(document.uri.toString())),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`${SECTION}.nextEdit`) && !this.settings().enabled) {
          this.edits.reset();
        }
      }),
      this.edits,
    );
  }

  dispose(): void {
    this.disposables.forEach((disposable) => disposable.dispose());
  }

  private settings() {
    return nextEditSettings(vscode.workspace.getConfiguration(SECTION));
  }

  private ghostItems(document: vscode.TextDocument): vscode.InlineCompletionItem[] {
    const ghost = this.edits.ghost(document.uri.toString());
    if (!ghost) {
      return [];
    }
    const argument: GhostAccepted = { uri: document.uri.toString(), version: document.version,
                                      startLine: ghost.edit.startLine };
    const item = new vscode.InlineCompletionItem(ghost.insertText, range(ghost.range));
    item.command = { title: "infill: take the next edit", command: GHOST_ACCEPTED_COMMAND, arguments: [argument] };
    return [item];
  }

  private render(view: View | undefined): void {
    const editor = vscode.window.activeTextEditor;
    if (editor) {
      this.decorations.draw(editor, view);
    }
    void vscode.commands.executeCommand("setContext", VISIBLE_CONTEXT, view !== undefined);
    const ghost = view?.ghost !== undefined;
    if (ghost && !this.ghostShown) {
      void vscode.commands.executeCommand("editor.action.inlineSuggest.trigger");
    }
    this.ghostShown = ghost;
  }

  private host(): Host {
    return {
      isEnabled: () => this.settings().enabled && this.client() !== undefined,
      debounceMs: () => this.settings().debounceMs,
      activeEditor: () => {
        const editor = vscode.window.activeTextEditor;
        return editor && editorOf(editor);
      },
      newTokenSource: () => new vscode.CancellationTokenSource(),
      request: async (params, token) => {
        const client = this.client();
        return client ? client.sendRequest(InlineEditRequest, params, token) : null;
      },
      showed: (command) => void this.client()?.sendNotification(DidShowInlineEdit, { item: { command } }),
      accepted: (command) => void this.client()
        ?.sendRequest(ExecuteCommandRequest.type, { command: command.command, arguments: command.arguments })
        .catch((error: unknown) => this.output.warn(`next edit: reporting it taken failed: ${String(error)}`)),
      apply: (uri, changes) => vscode.workspace.applyEdit(workspaceEdit(uri, changes)),
      moveCursor: (at) => {
        const editor = vscode.window.activeTextEditor;
        if (editor) {
          editor.selection = new vscode.Selection(position(at), position(at));
          editor.revealRange(editor.selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
        }
      },
      render: (view) => this.render(view),
      setTimer: (callback, ms) => {
        const timer = setTimeout(callback, ms);
        return { dispose: () => clearTimeout(timer) };
      },
      log: (message) => this.output.info(message),
    };
  }
}

function workspaceEdit(uri: string, changes: TextChange[]): vscode.WorkspaceEdit {
  const edit = new vscode.WorkspaceEdit();
  const target = vscode.Uri.parse(uri);
  for (const change of changes) {
    edit.replace(target, range(change.range), change.text);
  }
  return edit;
}
