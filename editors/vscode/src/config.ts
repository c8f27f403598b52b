/**
 * The extension's settings (`infill.*` in package.json) as typed getters. Launch settings choose
 * how the server starts, or which running one to connect to; server settings go to `infill lsp` as `initializationOptions` and in
 * configuration changes, under the names of `completion/settings.py` and `lsp_server/settings.py`. An unset server setting
 * (null) is left out, so the server's own default applies.
 */
import type { WorkspaceConfiguration } from "vscode";

export const SECTION = "infill";

/** The part of `vscode.WorkspaceConfiguration` the getters use. */
export type SettingsReader = Pick<WorkspaceConfiguration, "get">;

export type Mode = "auto" | "single_line" | "multi_line";

export type Dtype = "auto" | "bf16" | "fp16" | "fp32";

/**
 * How to reach the server: an `infill` executable or a Python interpreter with the project to
 * start over stdio, or the `HOST:PORT` of a running TCP server and the file that holds its token.
 */
export interface LaunchSettings {
  serverPath: string;
  python: string;
  serverAddress: string;
  tokenFile: string;
}

/** What `infill lsp` reads from `initializationOptions` and `workspace/didChangeConfiguration`. */
export interface ServerSettings {
  workerAddress?: string;
  workerKeys?: string;
  deadlineMs?: number;
  maxTokens?: number;
  maxLines?: number;
  mode?: Mode;
  languages?: string[];
  statsLog?: string;
  device?: string;
  dtype?: Dtype;
  completionDrafts?: boolean;
  arena?: boolean;
  arenaBackends?: ArenaBackend[];
  arenaVotes?: string;
  arenaDeadlineMs?: number;
  backend?: BackendSetting;
}

/** An upstream model server (`upstream/config.py`); the key file comes from a machine setting only. */
export interface BackendSetting {
  kind?: "worker" | "openai" | "fim" | "llama.cpp" | "edit";
  url?: string;
  model?: string;
  template?: string;
  maxContextTokens?: number;
  deadlineMs?: number;
  allowInsecureHttp?: boolean;
  stream?: boolean;
  apiKeyFile?: string;
}

/**
 * One side of the arena (`lsp_server/arena.py`): no address means the server's own worker. A workspace may set
 * these, so its `backend` never carries a key file (`arenaBackends` drops one); the server gives a side the key of
 * `infill.backendApiKeyFile` only where it names `infill.backend`'s own origin.
 */
export interface ArenaBackend {
  name: string;
  address?: string;
  decoder?: Record<string, string | number | boolean>;
  backend?: BackendSetting;
}

/** The settings whose change needs a new server process. */
export const LAUNCH_KEYS = ["serverPath", "python", "serverAddress", "tokenFile"] as const;

/** Next-edit suggestions, on the client's side: whether to ask for them, and after how long a pause. */
export interface NextEditSettings {
  enabled: boolean;
  debounceMs: number;
}

export function isEnabled(config: SettingsReader): boolean {
  return config.get<boolean>("enabled") ?? true;
}

/** Whether a keystroke's completion request goes at once, before VS Code's own debounced one. */
export function earlyRequests(config: SettingsReader): boolean {
  return config.get<boolean>("earlyRequests") ?? true;
}

export function launchSettings(config: SettingsReader): LaunchSettings {
  return {
    serverPath: (config.get<string>("serverPath") ?? "").trim(),
    python: (config.get<string>("python") ?? "").trim(),
    serverAddress: (config.get<string>("serverAddress") ?? "").trim(),
    tokenFile: (config.get<string>("tokenFile") ?? "").trim(),
  };
}

export function serverSettings(config: SettingsReader): ServerSettings {
  const settings: ServerSettings = {};
  for (const key of ["workerAddress", "workerKeys", "device", "arenaVotes"] as const) {
    const value = (config.get<string | null>(key) ?? "").trim();
    if (value) {
      settings[key] = value;
    }
  }
  for (const key of ["deadlineMs", "maxTokens", "maxLines", "arenaDeadlineMs"] as const) {
    const value = config.get<number | null>(key);
    if (typeof value === "number") {
      settings[key] = value;
    }
  }
  const mode = config.get<Mode | null>("mode");
  if (mode) {
    settings.mode = mode;
  }
  const languages = config.get<string[] | null>("languages");
  if (Array.isArray(languages)) {
    settings.languages = languages;
  }
  const statsLog = config.get<string | null>("statsLog");
  if (typeof statsLog === "string") {
    settings.statsLog = statsLog;
  }
  if (config.get<boolean>("completionDrafts") === false) {
    settings.completionDrafts = false;
  }
  if (config.get<boolean>("arena") === true) {
    settings.arena = true;
  }
  const backends = arenaBackends(config);
  if (backends) {
    settings.arenaBackends = backends;
  }
  const dtype = config.get<Dtype | null>("dtype");
  if (dtype) {
    settings.dtype = dtype;
  }
  const backend = backendSetting(config);
  if (backend) {
    settings.backend = backend;
  }
  return settings;
}

/** `infill.backend` with the key file of `infill.backendApiKeyFile` (both machine-scoped). */
function backendSetting(config: SettingsReader): BackendSetting | undefined {
  const backend = config.get<BackendSetting | null>("backend");
  const keyFile = (config.get<string | null>("backendApiKeyFile") ?? "").trim();
  if (!backend || typeof backend !== "object") {
    return undefined;
  }
  const setting: BackendSetting = { ...backend };
  delete setting.apiKeyFile;
  if (keyFile) {
    setting.apiKeyFile = keyFile;
  }
  return setting;
}

/** `infill.arenaBackends`, which a workspace may set, without any key file its backends name. */
function arenaBackends(config: SettingsReader): ArenaBackend[] | undefined {
  const backends = config.get<ArenaBackend[] | null>("arenaBackends");
  if (!Array.isArray(backends)) {
    return undefined;
  }
  return backends.map((side) => {
    if (!side || typeof side !== "object" || !side.backend || typeof side.backend !== "object") {
      return side;
    }
    const backend: BackendSetting = { ...side.backend };
    delete backend.apiKeyFile;
    return { ...side, backend };
  });
}

export function nextEditSettings(config: SettingsReader): NextEditSettings {
  const debounceMs = config.get<number>("nextEdit.debounceMs");
  return {
    enabled: config.get<boolean>("nextEdit.enabled") ?? true,
    debounceMs: typeof debounceMs === "number" && debounceMs >= 0 ? debounceMs : 100,
  };
}
