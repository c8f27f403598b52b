/**
 * Stand-ins for the parts of VS Code the extension's logic touches. Settings answer as VS Code
 * does: the user's value, else the default that package.json contributes.
 */
import * as fs from "fs";
import * as path from "path";
import type { CancellationToken, StatusBarItem } from "vscode";
import type { SettingsReader } from "../src/config";
import type { Lines } from "../src/edits";
import type { TokenSource } from "../src/inline";
import type { WirePosition, WireRange } from "../src/protocol";

export const PACKAGE = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));

const DEFAULTS: Record<string, unknown> = Object.fromEntries(
  Object.entries(PACKAGE.contributes.configuration.properties as Record<string, { default: unknown }>)
    .map(([key, schema]) => [key.replace(/^infill\./, ""), schema.default]));

export function settings(user: Record<string, unknown> = {}): SettingsReader & { asked: Set<string> } {
  const asked = new Set<string>();
  const get = (key: string): unknown => {
    asked.add(key);
    return key in user ? user[key] : DEFAULTS[key];
  };
  return { get: get as SettingsReader["get"], asked };
}

export function statusBarItem(): StatusBarItem & { shown: boolean } {
  const item = { text: "", tooltip: "", command: undefined, name: undefined, shown: false,
                 show() { item.shown = true; }, hide() { item.shown = false; }, dispose() { item.shown = false; } };
  return item as unknown as StatusBarItem & { shown: boolean };
}

/** A cancellation token source, as `vscode.CancellationTokenSource` behaves. */
export class MockTokenSource implements TokenSource {
  private listeners: (() => void)[] = [];
  cancelled = false;
  disposed = false;
  readonly token: CancellationToken = {
    isCancellationRequested: false,
    onCancellationRequested: ((listener: () => void) => {
      this.listeners.push(listener);
      return { dispose: () => { this.listeners = this.listeners.filter((other) => other !== listener); } };
    }) as CancellationToken["onCancellationRequested"],
  };

  cancel(): void {
    if (!this.cancelled) {
      this.cancelled = true;
      (this.token as { isCancellationRequested: boolean }).isCancellationRequested = true;
      this.listeners.forEach((listener) => listener());
    }
  }

  dispose(): void {
    this.disposed = true;
  }
}

/** A document's lines as VS Code counts them (a text ending in a break has an empty last line). */
export function textLines(text: string): Lines & { text: string } {
  const lines = text.split("\n");
  return { text, lineCount: lines.length, lineAt: (line: number) => lines[line] };
}

function offsetOf(text: string, at: WirePosition): number {
  const lines = text.split("\n");
  return lines.slice(0, at.line).reduce((sum, line) => sum + line.length + 1, 0) + at.character;
}

/** `text` with `changes` made at once, as one VS Code workspace edit makes them (ranges in the old text). */
export function applied(text: string, changes: { range: WireRange; text: string }[]): string {
  const sorted = [...changes].sort((a, b) => offsetOf(text, b.range.start) - offsetOf(text, a.range.start));
  return sorted.reduce((result, change) => result.slice(0, offsetOf(text, change.range.start)) + change.text
                                           + result.slice(offsetOf(text, change.range.end)), text);
}
