/**
 * The language client's middleware for inline completions: at most one request in flight per
 * document (a new one cancels the older, which the client sends as `$/cancelRequest`), nothing
 * asked while completions are off, the latency of each answer, and the suggestions handed to
 * `Feedback`. The item's `infill.acceptCompletion` command becomes an `infill/acceptCompletion`
 * notification rather than a `workspace/executeCommand` request. An arena pair (two items voting
 * through `infill.arenaVote`) is shown as one ghost text by `arena.ts`.
 *
 * Early requests: VS Code waits 50 ms after a keystroke before it asks (a fixed debounce an
 * extension cannot set), so when a change of the document moves the active editor's cursor, the
 * request VS Code will make is sent at once, right after the change's `didChange` notification;
 * VS Code's request at that version and position, automatic and with no suggest-widget item,
 * then takes its answer instead of asking again.
 */
import type { CancellationToken, InlineCompletionContext, InlineCompletionItem, InlineCompletionList, Position,
  TextDocument } from "vscode";
import type { Middleware } from "vscode-languageclient";
import { type Arena, type ArenaItem, arenaPair } from "./arena";
import type { Feedback, Suggestion } from "./feedback";
import { ACCEPT_COMMAND, isAcceptArgument } from "./protocol";

/** The part of `vscode.CancellationTokenSource` used here. */
export interface TokenSource {
  readonly token: CancellationToken;
  cancel(): void;
  dispose(): void;
}

export type Answer = InlineCompletionItem[] | InlineCompletionList | null | undefined;

export interface InlineOptions {
  isEnabled(): boolean;
  newTokenSource(): TokenSource;
  feedback: Feedback;
  onLatency(ms: number): void;
  now(): number;
  arena?: Arena; // shows the server's arena pairs (`arena.ts`)
  /** The `vscode.InlineCompletionItem` of an item made here (an arena pair's), its range included. */
  newItem(item: ArenaItem): InlineCompletionItem;
  /** Sends the request VS Code would send at `position`, automatically triggered (no early requests without it). */
  ask?(document: TextDocument, position: Position, token: CancellationToken): Promise<Answer>;
}

type Provide = NonNullable<Middleware["provideInlineCompletionItems"]>;
type Execute = NonNullable<Middleware["executeCommand"]>;

const AUTOMATIC = 1; // vscode.InlineCompletionTriggerKind.Automatic

/** A request in flight; `early` holds where it was asked until VS Code's own request takes it. */
interface Request {
  source: TokenSource;
  version: number;
  started: number;
  answer: Promise<Answer>;
  early?: { line: number; character: number };
}

/** The suggestion VS Code shows for an answer: its first item, if it names its request. */
export function firstSuggestion(answer: Answer): Suggestion | undefined {
  const items = Array.isArray(answer) ? answer : answer?.items ?? [];
  const item = items[0];
  const argument = item?.command?.arguments?.[0];
  if (!item || !isAcceptArgument(argument)) {
    return undefined;
  }
  const text = typeof item.insertText === "string" ? item.insertText : item.insertText.value;
  return { requestId: argument.requestId, index: argument.index, chars: text.length };
}

export class InlineRequests {
  private readonly inFlight = new Map<string, Request>(); // document URI -> newest request
  private readonly changes = new Map<string, { version: number; sent: Promise<void> }>(); // URI -> last change

  constructor(private readonly options: InlineOptions) {}

  readonly provideInlineCompletionItems: Provide = async (document, position, context, token, next) => {
    const uri = document.uri.toString();
    const lines = { lineCount: document.lineCount, lineAt: (line: number) => document.lineAt(line).text };
    if (this.options.arena?.isBeingTaken(uri, lines)) {
      return null; // the pair's ghost text was just taken with Tab: its command comes next
    }
    const early = this.takeEarly(uri, document.version, position, context);
    if (!early) {
      this.supersede(uri);
    }
    this.options.feedback.passOver(uri);
    this.options.arena?.passOver(uri);
    if (!this.options.isEnabled()) {
      this.supersede(uri);
      return null;
    }
    const source = early?.source ?? this.options.newTokenSource();
    const link = token.onCancellationRequested(() => source.cancel());
    const request = early ?? this.start(uri, document.version, source,
                                        (asked) => Promise.resolve(next(document, position, context, asked)));
    try {
      const answer = await request.answer;
      if (request.source.token.isCancellationRequested) {
        return null;
      }
      this.options.onLatency(this.options.now() - request.started);
      return this.shown(uri, document, position, answer);
    } finally {
      link.dispose();
      if (this.inFlight.get(uri) === request) {
        this.inFlight.delete(uri);
      }
      request.source.dispose();
    }
  };

  readonly executeCommand: Execute = (command, args, next) => {
    if (command === ACCEPT_COMMAND && isAcceptArgument(args[0])) {
      this.options.feedback.accepted(args[0]);
      return undefined;
    }
    return next(command, args);
  };

  /** The client is sending a change of `uri` that made it `version`; `sent` settles once the notification is out. */
  changed(uri: string, version: number, sent: Promise<unknown>): void {
    this.changes.set(uri, { version, sent: sent.then(() => undefined) });
  }

  /** The active editor's cursor is now at `position`: right after a change of its document, ask early. */
  moved(document: TextDocument, position: Position): void {
    const uri = document.uri.toString();
    const change = this.changes.get(uri);
    const ask = this.options.ask;
    if (!ask || change?.version !== document.version || !this.options.isEnabled()
        || this.inFlight.get(uri)?.version === document.version) {
      return; // not a change's cursor, or VS Code already asked at this version
    }
    this.changes.delete(uri);
    this.supersede(uri);
    const request = this.start(uri, document.version, this.options.newTokenSource(), (asked) => change.sent.then(
      () => ask(document, position, asked)).catch(() => null)); // the client reports its own failures
    request.early = { line: position.line, character: position.character };
  }

  /** The document closed: cancel its request and pass over its suggestion. */
  closed(uri: string): void {
    this.supersede(uri);
    this.changes.delete(uri);
    this.options.feedback.passOver(uri);
    this.options.arena?.passOver(uri);
  }

  private start(uri: string, version: number, source: TokenSource,
                ask: (token: CancellationToken) => Promise<Answer>): Request {
    const request: Request = { source, version, started: this.options.now(), answer: ask(source.token) };
    this.inFlight.set(uri, request);
    return request;
  }

  /** The early request VS Code's request at this version and position can take, taken. */
  private takeEarly(uri: string, version: number, position: Position, context: InlineCompletionContext):
      Request | undefined {
    const request = this.inFlight.get(uri);
    const at = request?.early;
    if (!request || !at || request.version !== version || at.line !== position.line
        || at.character !== position.character || context.triggerKind !== AUTOMATIC
        || context.selectedCompletionInfo !== undefined) {
      return undefined;
    }
    request.early = undefined;
    return request;
  }

  /** Cancel the document's request in flight; an early one nobody took is disposed here. */
  private supersede(uri: string): void {
    const request = this.inFlight.get(uri);
    if (!request) {
      return;
    }
    this.inFlight.delete(uri);
    request.source.cancel();
    if (request.early) {
      request.source.dispose();
    }
  }

  /** The answer as VS Code shows it: an arena pair as one item of its own, else as it came. */
  private shown(uri: string, document: TextDocument, position: Position, answer: Answer): Answer {
    const items = Array.isArray(answer) ? answer : answer?.items ?? [];
    const pair = arenaPair(items as never);
    if (pair && this.options.arena) {
      const linePrefix = document.lineAt(position.line).text.slice(0, position.character);
      const at = { line: position.line, character: position.character };
      return [this.options.newItem(this.options.arena.present(uri, at, linePrefix, pair))];
    }
    this.options.feedback.showing(uri, firstSuggestion(answer));
    return answer;
  }
}
