/**
 * The language client's life: start `infill lsp` (the command from `server.ts`, the settings from
 * `config.ts`) or connect to a running TCP server with its token (`tcp.ts`), keep the status bar
 * in step with it, follow configuration changes (a launch setting restarts the client, a server
 * setting goes to the server as `workspace/didChangeConfiguration`), and show the user why the
 * server could not be reached. A TCP server that goes away (killed, restarted) is connected to
 * again every `RECONNECT_MS` until it is back, without a message each time.
 */
import * as fs from "fs";
import * as os from "os";
import * as vscode from "vscode";
import {
  CloseAction, DidChangeConfigurationNotification, ErrorAction, type ErrorHandler, ExecuteCommandRequest,
  InlineCompletionRequest, LanguageClient, type ServerOptions, State,
} from "vscode-languageclient/node";
import {
  earlyRequests, isEnabled, LAUNCH_KEYS, launchSettings, type LaunchSettings, SECTION, serverSettings,
} from "./config";
import { Feedback } from "./feedback";
import { Arena, type ArenaHost, TAKE_BOTTOM_COMMAND, TAKE_TOP_COMMAND, VISIBLE_CONTEXT, VOTE_COMMAND } from "./arena";
import { type Answer, InlineRequests } from "./inline";
import { WorkerReady } from "./protocol";
import { resolveServerCommand, type Probe } from "./server";
import type { ServerState, StatusBar } from "./status";
import { parseAddress, TcpServer, tokenFileFor } from "./tcp";

export const RESTART_COMMAND = "infill.restart";
export const SHOW_LOG_COMMAND = "infill.showLog";
/** How long to wait before connecting again to a TCP server that went away. */
export const RECONNECT_MS = 2000;

/**
 * For a TCP server: a closed connection is not restarted by the client (the session connects
 * again itself, with a fresh token, once the server is back) and no error stops it.
 */
const TCP_ERRORS: ErrorHandler = {
  error: () => ({ action: ErrorAction.Continue, handled: true }),
  closed: () => ({ action: CloseAction.DoNotRestart, handled: true }),
};

const STATES: Record<State, ServerState> = {
  [State.Starting]: "starting",
  [State.Running]: "running",
  [State.Stopped]: "stopped",
  [State.StartFailed]: "failed",
};

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

const PROBE: Probe = { isExecutable, pathEnv: process.env.PATH, home: os.homedir(), platform: process.platform };

export class Session implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private reconnect: ReturnType<typeof setTimeout> | undefined;
  private stopping = false;
  private readonly listeners: vscode.Disposable[] = [];
  private readonly arena = new Arena(this.arenaHost());
  private readonly inline = new InlineRequests({
    isEnabled: () => this.status.current.enabled,
    newTokenSource: () => new vscode.CancellationTokenSource(),
    feedback: new Feedback((type, params) => void this.client?.sendNotification(type, params)),
    onLatency: (ms) => this.status.update({ lastLatencyMs: ms }),
    now: () => performance.now(),
    arena: this.arena,
    newItem: ({ insertText, range, command }) => new vscode.InlineCompletionItem(
      insertText, new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character),
      command),
    ask: (document, position, token) => this.askInline(document, position, token),
  });

  constructor(private readonly output: vscode.LogOutputChannel, private readonly status: StatusBar) {
    this.listeners.push(
      vscode.workspace.onDidChangeConfiguration((event) => this.configurationChanged(event)),
      vscode.workspace.onDidCloseTextDocument((document) => this.inline.closed(document.uri.toString())),
      vscode.window.onDidChangeTextEditorSelection((event) => this.cursorMoved(event)),
      vscode.commands.registerCommand(TAKE_TOP_COMMAND, (uri: string) => this.arena.takeTop(uri)),
      vscode.commands.registerCommand(TAKE_BOTTOM_COMMAND, () => {
        const uri = vscode.window.activeTextEditor?.document.uri.toString();
        return uri ? this.arena.takeBottom(uri) : undefined;
      }),
    );
  }

  /** The arena's edits in the editor and its votes to the server; a vote that fails is shown. */
  private arenaHost(): ArenaHost {
    return {
      vote: (battleId, pick) => {
        this.client?.sendRequest(ExecuteCommandRequest.type, { command: VOTE_COMMAND, arguments: [battleId, pick] })
          .catch((error: unknown) => {
            const message = error instanceof Error ? error.message : String(error);
            this.output.appendLine(`arena vote not recorded: ${message}`);
            void vscode.window.showErrorMessage(`infill: arena vote not recorded: ${message}`);
          });
      },
      replace: async (uri, start, end, text) => {
        const editor = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri);
        const range = new vscode.Range(start.line, start.character, end.line, end.character);
        await editor?.edit((builder) => builder.replace(range, text));
      },
      hide: async () => { await vscode.commands.executeCommand("editor.action.inlineSuggest.hide"); },
      setVisible: (visible) => { void vscode.commands.executeCommand("setContext", VISIBLE_CONTEXT, visible); },
    };
  }

  /** A single cursor of the active editor moved: after a keystroke, the inline request goes at once. */
  private cursorMoved(event: vscode.TextEditorSelectionChangeEvent): void {
    const [only] = event.selections;
    if (event.textEditor === vscode.window.activeTextEditor && event.selections.length === 1 && only.isEmpty
        && earlyRequests(vscode.workspace.getConfiguration(SECTION))) {
      this.inline.moved(event.textEditor.document, only.active);
    }
  }

  /** The inline completion request VS Code's automatic trigger sends, through the running client. */
  private async askInline(document: vscode.TextDocument, position: vscode.Position,
                          token: vscode.CancellationToken): Promise<Answer> {
    const client = this.running();
    if (!client) {
      return null;
    }
    const context = { triggerKind: vscode.InlineCompletionTriggerKind.Automatic, selectedCompletionInfo: undefined };
    const params = client.code2ProtocolConverter.asInlineCompletionParams(document, position, context);
    try {
      const result = await client.sendRequest(InlineCompletionRequest.type, params, token);
      if (token.isCancellationRequested) {
        return null;
      }
      return await client.protocol2CodeConverter.asInlineCompletionResult(result, token);
    } catch (error) {
      return client.handleFailedRequest(InlineCompletionRequest.type, token, error, null);
    }
  }

  /** Start or connect to the server; a failure is shown to the user and left in the status bar and the log. */
  async start(quiet = false): Promise<void> {
    this.stopping = false;
    const launch = launchSettings(vscode.workspace.getConfiguration(SECTION));
    let tcp: TcpServer | undefined;
    try {
      const folders = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
      tcp = launch.serverAddress ? this.tcpServer(launch) : undefined;
      const server: ServerOptions = tcp?.start ?? this.stdioServer(launch, folders);
      this.client = new LanguageClient("infill", "infill", server, {
        documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
        initializationOptions: () => {
          const settings = serverSettings(vscode.workspace.getConfiguration(SECTION));
          return tcp ? tcp.initializationOptions(settings) : settings;
        },
        outputChannel: this.output,
        errorHandler: tcp ? TCP_ERRORS : undefined,
        middleware: {
          provideInlineCompletionItems: this.inline.provideInlineCompletionItems,
          executeCommand: this.inline.executeCommand,
          didChange: (event, next) => {
            const sent = next(event);
            this.inline.changed(event.document.uri.toString(), event.document.version, sent);
            return sent;
          },
        },
      });
      const client = this.client;
      client.onDidChangeState((event) => {
        if (client === this.client) {
          this.status.update({ server: STATES[event.newState] });
          if (tcp && (event.newState === State.Stopped || event.newState === State.StartFailed)) {
            this.reconnectLater();
          }
        }
      });
      client.onNotification(WorkerReady, (params) => this.status.update({ model: params.model }));
      await client.start();
    } catch (error) {
      const explained = tcp ? tcp.explain(error) : error;
      if (quiet) {
        this.output.appendLine(`still no server: ${explained instanceof Error ? explained.message : String(explained)}`);
        this.status.update({ server: "failed" });
        this.reconnectLater();
      } else {
        this.failed(explained);
      }
    }
  }

  /** Connect again to the TCP server in `RECONNECT_MS`, unless the session is stopping. */
  private reconnectLater(): void {
    if (this.stopping || this.reconnect !== undefined) {
      return;
    }
    this.output.appendLine(`the server is gone: connecting again in ${RECONNECT_MS} ms`);
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      void this.restart(true);
    }, RECONNECT_MS);
  }

  /** The language client while it runs. */
  running(): LanguageClient | undefined {
    return this.client?.isRunning() ? this.client : undefined;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.reconnect);
    this.reconnect = undefined;
    const client = this.client;
    this.client = undefined;
    if (client?.needsStop()) {
      await client.stop();
    }
  }

  /** Stop and start again; `quiet`: a reconnection, whose failure is logged, not shown. */
  async restart(quiet = false): Promise<void> {
    await this.stop();
    this.status.update({ model: undefined, lastLatencyMs: undefined });
    await this.start(quiet);
  }

  /** Turn completions on or off (the `infill.enabled` setting, for every workspace). */
  async toggle(): Promise<void> {
    const config = vscode.workspace.getConfiguration(SECTION);
    await config.update("enabled", !isEnabled(config), vscode.ConfigurationTarget.Global);
  }

  dispose(): void {
    this.listeners.forEach((listener) => listener.dispose());
  }

  private async configurationChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!event.affectsConfiguration(SECTION)) {
      return;
    }
    const config = vscode.workspace.getConfiguration(SECTION);
    this.status.update({ enabled: isEnabled(config) });
    if (LAUNCH_KEYS.some((key) => event.affectsConfiguration(`${SECTION}.${key}`))) {
      await this.restart();
    } else if (this.client?.isRunning()) {
      await this.client.sendNotification(DidChangeConfigurationNotification.type,
                                         { settings: { [SECTION]: serverSettings(config) } });
    }
  }

  private stdioServer(launch: LaunchSettings, folders: string[]): ServerOptions {
    const server = resolveServerCommand(launch, folders, PROBE);
    this.output.appendLine(`starting ${server.command} ${server.args.join(" ")}`);
    return { ...server, options: { cwd: folders[0] } };
  }

  private tcpServer(launch: LaunchSettings): TcpServer {
    const address = parseAddress(launch.serverAddress);
    const tokenFile = tokenFileFor(launch.tokenFile, address.port, process.env, os.homedir());
    this.output.appendLine(`connecting to ${address.host}:${address.port} with the token in ${tokenFile}`);
    return new TcpServer(address, tokenFile);
  }

  private failed(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.output.appendLine(`could not reach the server: ${message}`);
    this.status.update({ server: "failed" });
    void vscode.window.showErrorMessage(`infill: ${message}`, "Show log", "Open settings").then((choice) => {
      if (choice === "Show log") {
        this.output.show();
      } else if (choice === "Open settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", SECTION);
      }
    });
  }
}
