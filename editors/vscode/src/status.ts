/**
 * The status bar item: whether completions are on, the server's state, the model, and the latency
 * of the last answer. Clicking it toggles completions. The text rules are pure functions.
 */
import type { StatusBarItem } from "vscode";

export const TOGGLE_COMMAND = "infill.toggle";

export type ServerState = "starting" | "running" | "stopped" | "failed";

export interface StatusState {
  enabled: boolean;
  server: ServerState;
  model?: string;
  lastLatencyMs?: number;
}

const ICONS: Record<ServerState, string> = {
  starting: "$(loading~spin)",
  running: "$(sparkle)",
  stopped: "$(debug-disconnect)",
  failed: "$(error)",
};

/** What the text says of a server that does not serve (the icon alone reads like "off"). */
const GONE: Partial<Record<ServerState, string>> = {
  stopped: ": server stopped",
  failed: ": no server",
};

export function statusText(state: StatusState): string {
  if (!state.enabled) {
    return "$(circle-slash) infill off";
  }
  const latency = state.server === "running" && state.lastLatencyMs !== undefined
    ? ` ${Math.round(state.lastLatencyMs)} ms` : "";
  return `${ICONS[state.server]} infill${GONE[state.server] ?? ""}${latency}`;
}

export function statusTooltip(state: StatusState): string {
  const lines = [
    `infill: completions ${state.enabled ? "on" : "off"} (click to turn ${state.enabled ? "off" : "on"})`,
    `server: ${state.server}`,
    `model: ${state.model ?? "not known yet"}`,
  ];
  if (state.lastLatencyMs !== undefined) {
    lines.push(`last answer: ${Math.round(state.lastLatencyMs)} ms`);
  }
  return lines.join("\n");
}

/** Keeps one status bar item in step with the state. */
export class StatusBar {
  private state: StatusState;

  constructor(private readonly item: StatusBarItem, enabled: boolean) {
    this.state = { enabled, server: "stopped" };
    item.command = TOGGLE_COMMAND;
    item.name = "infill";
    this.render();
    item.show();
  }

  get current(): Readonly<StatusState> {
    return this.state;
  }

  update(change: Partial<StatusState>): void {
    this.state = { ...this.state, ...change };
    this.render();
  }

  dispose(): void {
    this.item.dispose();
  }

  private render(): void {
    this.item.text = statusText(this.state);
    this.item.tooltip = statusTooltip(this.state);
  }
}
