/**
 * Stand-ins for the parts of VS Code the extension's logic touches. Settings answer as VS Code
 * does: the user's value, else the default that package.json contributes.
 */
import * as fs from "fs";
import * as path from "path";
import type { CancellationToken, StatusBarItem } from "vscode";
import type { SettingsReader } from "../src/config";
import type { TokenSource } from "../src/inline";

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
