/**
 * The language client's middleware for inline completions: at most one request in flight per
 * document (a new one cancels the older, which the client sends as `$/cancelRequest`), nothing
 * asked while completions are off, the latency of each answer, and the suggestions handed to
 * `Feedback`. The item's `infill.acceptCompletion` command becomes an `infill/acceptCompletion`
 * notification rather than a `workspace/executeCommand` request. An arena pair (two items voting
 * through `infill.arenaVote`) is shown as one ghost text by `arena.ts`.
 */
import type { CancellationToken, InlineCompletionItem, InlineCompletionList } from "vscode";
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

export interface InlineOptions {
  isEnabled(): boolean;
  newTokenSource(): TokenSource;
  feedback: Feedback;
  onLatency(ms: number): void;
  now(): number;
  arena?: Arena; // shows the server's arena pairs (`arena.ts`)
  /** The `vscode.InlineCompletionItem` of an item made here (an arena pair's), its range included. */
  newItem(item: ArenaItem): InlineCompletionItem;
}

type Provide = NonNullable<Middleware["provideInlineCompletionItems"]>;
type Execute = NonNullable<Middleware["executeCommand"]>;
type Answer = InlineCompletionItem[] | InlineCompletionList | null | undefined;

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
  private readonly inFlight = new Map<string, TokenSource>(); // document URI -> newest request

  constructor(private readonly options: InlineOptions) {}

  readonly provideInlineCompletionItems: Provide = async (document, position, context, token, next) => {
    const uri = document.uri.toString();
    const lines = { lineCount: document.lineCount, lineAt: (line: number) => document.lineAt(line).text };
    if (this.options.arena?.isBeingTaken(uri, lines)) {
      return null; // the pair's ghost text was just taken with Tab: its command comes next
    }
    this.inFlight.get(uri)?.cancel();
    this.options.feedback.passOver(uri);
    this.options.arena?.passOver(uri);
    if (!this.options.isEnabled()) {
      return null;
    }
    const source = this.options.newTokenSource();
    this.inFlight.set(uri, source);
    const link = token.onCancellationRequested(() => source.cancel());
    const started = this.options.now();
    try {
      const answer = await next(document, position, context, source.token);
      if (source.token.isCancellationRequested) {
        return null;
      }
      this.options.onLatency(this.options.now() - started);
      const items = Array.isArray(answer) ? answer : answer?.items ?? [];
      const pair = arenaPair(items as never);
      if (pair && this.options.arena) {
        const linePrefix = document.lineAt(position.line).text.slice(0, position.character);
        const at = { line: position.line, character: position.character };
        return [this.options.newItem(this.options.arena.present(uri, at, linePrefix, pair))];
      }
      this.options.feedback.showing(uri, firstSuggestion(answer));
      return answer;
    } finally {
      link.dispose();
      if (this.inFlight.get(uri) === source) {
        this.inFlight.delete(uri);
      }
      source.dispose();
    }
  };

  readonly executeCommand: Execute = (command, args, next) => {
    if (command === ACCEPT_COMMAND && isAcceptArgument(args[0])) {
      this.options.feedback.accepted(args[0]);
      return undefined;
    }
    return next(command, args);
  };

  /** The document closed: cancel its request and pass over its suggestion. */
  closed(uri: string): void {
    this.inFlight.get(uri)?.cancel();
    this.options.feedback.passOver(uri);
    this.options.arena?.passOver(uri);
  }
}
