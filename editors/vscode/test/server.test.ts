import assert from "node:assert/strict";
import { test } from "node:test";
import { findOnPath, resolveServerCommand, ServerNotFound, type Probe } from "../src/server";

function probe(executables: string[], pathEnv = "/usr/local/bin:/usr/bin"): Probe {
  return { isExecutable: (file) => executables.includes(file), pathEnv, home: "/home/u", platform: "linux" };
}

const NO_SETTINGS = { serverPath: "", python: "" };

test("the serverPath setting wins, with ~ expanded", () => {
  const command = resolveServerCommand({ serverPath: "~/infill/.venv/bin/infill", python: "/usr/bin/python3" },
                                       ["/repo"], probe(["/repo/.venv/bin/infill"]));
  assert.deepEqual(command, { command: "/home/u/infill/.venv/bin/infill", args: ["lsp"] });
});

test("the python setting runs the server module", () => {
  assert.deepEqual(resolveServerCommand({ serverPath: "", python: "/opt/py/bin/python" }, [], probe([])),
                   { command: "/opt/py/bin/python", args: ["-m", "lsp_server"] });
});

test("the project's .venv in a workspace folder comes before PATH", () => {
  const command = resolveServerCommand(NO_SETTINGS, ["/elsewhere", "/repo"],
                                       probe(["/repo/.venv/bin/infill", "/usr/bin/infill"]));
  assert.deepEqual(command, { command: "/repo/.venv/bin/infill", args: ["lsp"] });
});

test("infill on PATH, the first directory that has it", () => {
  const command = resolveServerCommand(NO_SETTINGS, ["/repo"], probe(["/usr/bin/infill"]));
  assert.deepEqual(command, { command: "/usr/bin/infill", args: ["lsp"] });
  assert.equal(findOnPath("infill", probe([], "")), undefined);
});

test("Windows looks for infill.exe under .venv\\Scripts and on PATH", () => {
  const windows: Probe = { isExecutable: (file) => file.endsWith("infill.exe"), pathEnv: "C:/bin",
                           home: "C:/Users/u", platform: "win32" };
  assert.match(resolveServerCommand(NO_SETTINGS, ["C:/repo"], windows).command, /\.venv.Scripts.infill\.exe$/);
  assert.match(resolveServerCommand(NO_SETTINGS, [], windows).command, /infill\.exe$/);
});

test("nothing found: an error that names the setting to change", () => {
  assert.throws(() => resolveServerCommand(NO_SETTINGS, ["/repo"], probe([])),
                (error: Error) => error instanceof ServerNotFound && error.message.includes("infill.serverPath"));
});
