/**
 * What became of the suggestions shown, reported to the server with the `infill/*Completion`
 * notifications. VS Code shows an answer's first item; it is accepted when VS Code runs the item's
 * `infill.acceptCompletion` command, and rejected when the next request for the same document
 * starts (the user typed on or moved) or the document closes before that.
 */
import type { NotificationType } from "vscode-languageserver-protocol";
import {
  AcceptCommandArgument, AcceptCompletion, CompletionEventParams, DidShowCompletion, RejectCompletion,
} from "./protocol";

export type Send = (type: NotificationType<CompletionEventParams>, params: CompletionEventParams) => void;

/** A suggestion on screen: its request, its candidate and its length in characters. */
export interface Suggestion extends AcceptCommandArgument {
  chars: number;
}

export class Feedback {
  private readonly shown = new Map<string, Suggestion>(); // document URI -> its suggestion

  constructor(private readonly send: Send) {}

  /** `suggestion` (if any) is now shown in the document `uri`. */
  showing(uri: string, suggestion: Suggestion | undefined): void {
    this.passOver(uri);
    if (suggestion) {
      this.shown.set(uri, suggestion);
      this.send(DidShowCompletion, { requestId: suggestion.requestId, index: suggestion.index });
    }
  }

  /** The suggestion in `uri`, if one is shown, was not taken. */
  passOver(uri: string): void {
    const suggestion = this.shown.get(uri);
    if (suggestion) {
      this.shown.delete(uri);
      this.send(RejectCompletion, { requestId: suggestion.requestId, index: suggestion.index });
    }
  }

  /** The user took the candidate that `argument` names (an accept command's argument). */
  accepted(argument: AcceptCommandArgument): void {
    let chars: number | undefined;
    for (const [uri, suggestion] of this.shown) {
      if (suggestion.requestId === argument.requestId) {
        this.shown.delete(uri);
        chars = suggestion.index === argument.index ? suggestion.chars : undefined;
      }
    }
    this.send(AcceptCompletion, { requestId: argument.requestId, index: argument.index, acceptedChars: chars });
  }
}
