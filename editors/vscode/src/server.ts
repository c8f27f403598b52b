/**
 * Which process is the language server. In order: the `infill.serverPath` setting (an `infill`
 * executable), the `infill.python` setting (an interpreter with the project installed, run as
 * `python -m lsp_server`), the `.venv` of an open workspace folder that is the infill project,
 * then `infill` on PATH. The file system and the environment come in as a `Probe`, so the rules
 * are tested without either.
 */
import * as path from "path";
import type { LaunchSettings } from "./config";

export interface ServerCommand {
  command: string;
  args: string[];
}

export interface Probe {
  isExecutable(file: string): boolean;
  pathEnv: string | undefined;
  home: string;
  platform: NodeJS.Platform;
}

/** Raised when no server can be found; its message says which setting to change. */
export class ServerNotFound extends Error {}

function expandHome(file: string, home: string): string {
  return file === "~" || file.startsWith("~/") ? path.join(home, file.slice(1)) : file;
}

function venvExecutable(folder: string, platform: NodeJS.Platform): string {
  return platform === "win32"
    ? path.join(folder, ".venv", "Scripts", "infill.exe")
    : path.join(folder, ".venv", "bin", "infill");
}

/** The first `name` on the PATH, or undefined. */
export function findOnPath(name: string, probe: Probe): string | undefined {
  const separator = probe.platform === "win32" ? ";" : ":";
  const file = probe.platform === "win32" ? `${name}.exe` : name;
  for (const directory of (probe.pathEnv ?? "").split(separator)) {
    if (directory && probe.isExecutable(path.join(directory, file))) {
      return path.join(directory, file);
    }
  }
  return undefined;
}

export function resolveServerCommand(launch: Pick<LaunchSettings, "serverPath" | "python">,
                                     workspaceFolders: readonly string[], probe: Probe): ServerCommand {
  if (launch.serverPath) {
    return { command: expandHome(launch.serverPath, probe.home), args: ["lsp"] };
  }
  if (launch.python) {
    return { command: expandHome(launch.python, probe.home), args: ["-m", "lsp_server"] };
  }
  for (const folder of workspaceFolders) {
    const candidate = venvExecutable(folder, probe.platform);
    if (probe.isExecutable(candidate)) {
      return { command: candidate, args: ["lsp"] };
    }
  }
  const onPath = findOnPath("infill", probe);
  if (onPath) {
    return { command: onPath, args: ["lsp"] };
  }
  throw new ServerNotFound(
    "cannot find the infill language server: set \"infill.serverPath\" to the `infill` program "
    + "(e.g. /path/to/infill/.venv/bin/infill, made by `make setup`), or put `infill` on your PATH");
}
