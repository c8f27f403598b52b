import assert from "node:assert/strict";
import { test } from "node:test";
import { StatusBar, statusText, statusTooltip, TOGGLE_COMMAND } from "../src/status";
import { PACKAGE, statusBarItem } from "./mocks";

test("the text shows on/off, the server state and the last latency", () => {
  assert.equal(statusText({ enabled: false, server: "running", lastLatencyMs: 80 }), "$(circle-slash) infill off");
  assert.equal(statusText({ enabled: true, server: "starting" }), "$(loading~spin) infill");
  assert.equal(statusText({ enabled: true, server: "running", lastLatencyMs: 141.6 }), "$(sparkle) infill 142 ms");
  assert.equal(statusText({ enabled: true, server: "failed", lastLatencyMs: 80 }), "$(error) infill: no server");
  assert.equal(statusText({ enabled: true, server: "stopped" }), "$(debug-disconnect) infill: server stopped");
});

test("the tooltip names the model and the latency", () => {
  const tooltip = statusTooltip({ enabled: true, server: "running", model: "infill-py-16m", lastLatencyMs: 95 });
  assert.match(tooltip, /model: infill-py-16m/);
  assert.match(tooltip, /last answer: 95 ms/);
  assert.match(statusTooltip({ enabled: true, server: "starting" }), /model: not known yet/);
});

test("the item toggles on click, is shown, and follows updates", () => {
  const item = statusBarItem();
  const bar = new StatusBar(item, true);
  assert.equal(item.command, TOGGLE_COMMAND);
  assert.ok(PACKAGE.contributes.commands.some((command: { command: string }) => command.command === TOGGLE_COMMAND));
  assert.ok(item.shown);
  bar.update({ server: "running", lastLatencyMs: 200 });
  assert.equal(item.text, "$(sparkle) infill 200 ms");
  bar.update({ enabled: false });
  assert.equal(item.text, "$(circle-slash) infill off");
  assert.equal(bar.current.lastLatencyMs, 200);
  bar.dispose();
  assert.ok(!item.shown);
});
