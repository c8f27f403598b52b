/**
 * The server's custom protocol, mirrored from `lsp_server/protocol.py`:
 * the token a TCP server asks for, the command that inline items carry and the notifications that
 * report what became of a completion, and next edits (`textDocument/copilotInlineEdit`). Nothing
 * here touches VS Code, so tests and the extension share it.
 */
import { NotificationType, RequestType } from "vscode-languageserver-protocol";

/**
 * A TCP server's `initializationOptions` carry, beside the settings, the token it wrote at launch
 * (the server closes the connection without it); over stdio there is none.
 */
export interface TokenOption {
  token: string;
}

/** The command of every inline item; its one argument is an `AcceptCommandArgument`. */
export const ACCEPT_COMMAND = "infill.acceptCompletion";

/** Names one candidate of one answer (`requestId` is the server's id for the request). */
export interface AcceptCommandArgument {
  requestId: string;
  index: number;
}

/** The params of the `infill/*Completion` notifications; `acceptedChars` only for acceptance. */
export interface CompletionEventParams extends AcceptCommandArgument {
  acceptedChars?: number;
}

export const DidShowCompletion = new NotificationType<CompletionEventParams>("infill/didShowCompletion");
export const AcceptCompletion = new NotificationType<CompletionEventParams>("infill/acceptCompletion");
export const RejectCompletion = new NotificationType<CompletionEventParams>("infill/rejectCompletion");

/** True for a well-formed `infill.acceptCompletion` argument. */
export function isAcceptArgument(value: unknown): value is AcceptCommandArgument {
  const argument = value as AcceptCommandArgument | null;
  return typeof argument === "object" && argument !== null
    && typeof argument.requestId === "string" && Number.isInteger(argument.index);
}

/** From the server once its worker answers: the model it serves and where. */
export interface WorkerReadyParams {
  model: string;
  address: string;
}

export const WorkerReady = new NotificationType<WorkerReadyParams>("infill/workerReady");

/**
 * Next edits, in the shape of Copilot's language server (`lsp_server/inline_edit.py`): after an
 * edit, `textDocument/copilotInlineEdit` proposes follow-up edits, nearest the cursor first, each
 * replacing whole lines; `textDocument/didShowInlineEdit` reports one shown, and running its
 * command (`infill.acceptInlineEdit`, through `workspace/executeCommand`) reports it taken.
 */
export const ACCEPT_INLINE_EDIT_COMMAND = "infill.acceptInlineEdit";

export interface WirePosition {
  line: number;
  character: number;
}

export interface WireRange {
  start: WirePosition;
  end: WirePosition;
}

export interface VersionedDocument {
  uri: string;
  version: number;
}

export interface InlineEditParams {
  textDocument: VersionedDocument;
  position: WirePosition;
}

export interface InlineEditCommand {
  title: string;
  command: string;
  arguments?: unknown[];
}

export interface InlineEdit {
  text: string;
  textDocument: VersionedDocument;
  range: WireRange;
  command?: InlineEditCommand;
}

export interface InlineEditResult {
  edits: InlineEdit[];
}

export interface DidShowInlineEditParams {
  item: { command: InlineEditCommand };
}

export const InlineEditRequest = new RequestType<InlineEditParams, InlineEditResult | null, void>(
  "textDocument/copilotInlineEdit");
export const DidShowInlineEdit = new NotificationType<DidShowInlineEditParams>("textDocument/didShowInlineEdit");
