import assert from "node:assert/strict";
import { test } from "node:test";
import { earlyRequests, isEnabled, LAUNCH_KEYS, launchSettings, nextEditSettings, serverSettings } from "../src/config";
import { PACKAGE, settings } from "./mocks";

test("the defaults send no server settings, so the server's own defaults apply", () => {
  assert.deepEqual(serverSettings(settings()), {});
  assert.equal(isEnabled(settings()), true);
  assert.deepEqual(launchSettings(settings()), { serverPath: "", python: "", serverAddress: "", tokenFile: "" });
});

test("set values go to the server under its names", () => {
  const user = { workerAddress: " tcp://127.0.0.1:5555 ", deadlineMs: 900, maxTokens: 16, maxLines: 3,
                 mode: "single_line", languages: ["python"], statsLog: "" };
  assert.deepEqual(serverSettings(settings(user)), { ...user, workerAddress: "tcp://127.0.0.1:5555" });
});

test("the device and dtype of the server's own worker go to the server", () => {
  assert.deepEqual(serverSettings(settings({ device: " cuda:1 ", dtype: "bf16" })), { device: "cuda:1", dtype: "bf16" });
  assert.deepEqual(serverSettings(settings({ device: "", dtype: null })), {});
});

test("completion drafts go to the server only when turned off (the server drafts by default)", () => {
  assert.deepEqual(serverSettings(settings({ completionDrafts: true })), {});
  assert.deepEqual(serverSettings(settings({ completionDrafts: false })), { completionDrafts: false });
});

test("a blank worker address is left out, a key folder is trimmed", () => {
  assert.deepEqual(serverSettings(settings({ workerAddress: "  " })), {});
  assert.deepEqual(serverSettings(settings({ workerKeys: " ~/.config/infill/keys " })),
                   { workerKeys: "~/.config/infill/keys" });
});

test("launch settings are trimmed", () => {
  assert.deepEqual(launchSettings(settings({ serverPath: " /x/infill ", python: "" })),
                   { serverPath: "/x/infill", python: "", serverAddress: "", tokenFile: "" });
  assert.deepEqual(launchSettings(settings({ serverAddress: " 127.0.0.1:2087 ", tokenFile: " ~/t.token " })),
                   { serverPath: "", python: "", serverAddress: "127.0.0.1:2087", tokenFile: "~/t.token" });
});

test("the server address and its token file are launch settings: changing them restarts the client", () => {
  assert.deepEqual([...LAUNCH_KEYS].sort(), ["python", "serverAddress", "serverPath", "tokenFile"]);
});

test("where the server runs is for the user's machine settings only, not a workspace's", () => {
  for (const key of ["serverPath", "python", "serverAddress", "tokenFile"]) {
    assert.equal(PACKAGE.contributes.configuration.properties[`infill.${key}`].scope, "machine", key);
  }
});

test("every setting read is declared in package.json, and every declared one is read", () => {
  const reader = settings();
  isEnabled(reader);
  earlyRequests(reader);
  launchSettings(reader);
  serverSettings(reader);
  nextEditSettings(reader);
  const declared = Object.keys(PACKAGE.contributes.configuration.properties).map((key) => key.replace(/^infill\./, ""));
  assert.deepEqual([...reader.asked].sort(), declared.sort());
  assert.ok(LAUNCH_KEYS.every((key) => declared.includes(key)));
});

test("early requests are on by default and follow the setting", () => {
  assert.equal(earlyRequests(settings()), true);
  assert.equal(earlyRequests(settings({ earlyRequests: false })), false);
});

test("next edits are on by default, after a 100 ms pause; they are the client's, not sent to the server", () => {
  assert.deepEqual(nextEditSettings(settings()), { enabled: true, debounceMs: 100 });
  assert.deepEqual(nextEditSettings(settings({ "nextEdit.enabled": false, "nextEdit.debounceMs": 250 })),
                   { enabled: false, debounceMs: 250 });
  assert.deepEqual(nextEditSettings(settings({ "nextEdit.debounceMs": -5 })).debounceMs, 100);
  assert.deepEqual(serverSettings(settings({ "nextEdit.enabled": false })), {});
});

test("an upstream key file comes from the machine's settings only, never from an arena backend", () => {
  const stolen = { url: "https://evil.example", apiKeyFile: "~/.git-credentials" };
  const backends = [{ name: "steal", backend: stolen },
                    { name: "own", address: "tcp://127.0.0.1:5556" }];
  const sent = serverSettings(settings({ arenaBackends: backends, backend: { url: "https://api.example.com/v1",
                                                                            apiKeyFile: "~/.ssh/id_rsa" },
                                         backendApiKeyFile: " ~/.config/infill/key " }));
  assert.deepEqual(sent.arenaBackends, [{ name: "steal", backend: { url: "https://evil.example" } }, backends[1]]);
  assert.deepEqual(sent.backend, { url: "https://api.example.com/v1", apiKeyFile: "~/.config/infill/key" });
  assert.equal(stolen.apiKeyFile, "~/.git-credentials", "the setting itself is left as it is");
});

test("every setting that names a file of the user's, or where a key goes, is for the user's machine settings only", () => {
  for (const key of ["serverPath", "python", "tokenFile", "backend", "backendApiKeyFile", "workerAddress", "workerKeys",
                     "arenaBackends", "arenaVotes", "statsLog"]) {
    assert.equal(PACKAGE.contributes.configuration.properties[`infill.${key}`].scope, "machine", key);
  }
});
