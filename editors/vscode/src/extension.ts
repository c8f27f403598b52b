/**
 * The extension's entry points: activation makes the log, the status bar, the session and the
 * next-edit view, registers the commands, and starts the server; deactivation stops it.
 */
import * as vscode from "vscode";
import { isEnabled, SECTION } from "./config";
import { NextEditView } from "./nextEditView";
import { RESTART_COMMAND, Session, SHOW_LOG_COMMAND } from "./session";
import { StatusBar, TOGGLE_COMMAND } from "./status";

let session: Session | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("infill", { log: true });
  const item = vscode.window.createStatusBarItem("infill.status", vscode.StatusBarAlignment.Right, 100);
  const status = new StatusBar(item, isEnabled(vscode.workspace.getConfiguration(SECTION)));
  session = new Session(output, status);
  context.subscriptions.push(
    output,
    status,
    session,
    new NextEditView(() => session?.running(), vscode.Uri.file(context.asAbsolutePath("media/next-edit.svg")), output),
    vscode.commands.registerCommand(TOGGLE_COMMAND, () => session?.toggle()),
    vscode.commands.registerCommand(RESTART_COMMAND, () => session?.restart()),
    vscode.commands.registerCommand(SHOW_LOG_COMMAND, () => output.show()),
  );
  await session.start();
}

export async function deactivate(): Promise<void> {
  await session?.stop();
  session = undefined;
}
