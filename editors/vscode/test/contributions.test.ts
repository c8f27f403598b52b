/** package.json's contributions against the code and the extension's README. */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { TAKE_BOTTOM_COMMAND, VISIBLE_CONTEXT as ARENA_VISIBLE } from "../src/arena";
import { DISMISS_COMMAND, TAB_COMMAND, VISIBLE_CONTEXT } from "../src/nextEdit";
import { PACKAGE } from "./mocks";

const README = fs.readFileSync(path.join(__dirname, "..", "..", "README.md"), "utf8");

interface Keybinding { command: string; key: string; when: string }

const keybindings: Keybinding[] = PACKAGE.contributes.keybindings;
const commands: { command: string; title: string }[] = PACKAGE.contributes.commands;

test("Tab and Esc run the next-edit commands only while next edits are shown", () => {
  const byKey = Object.fromEntries(keybindings.map((binding) => [binding.key, binding]));
  assert.equal(byKey.tab.command, TAB_COMMAND);
  assert.equal(byKey.escape.command, DISMISS_COMMAND);
  for (const binding of keybindings.filter((b) => b.command === TAB_COMMAND || b.command === DISMISS_COMMAND)) {
    const terms = binding.when.split("&&").map((term) => term.trim());
    for (const needed of ["editorTextFocus", VISIBLE_CONTEXT, "!inlineSuggestionVisible", "!suggestWidgetVisible"]) {
      assert.ok(terms.includes(needed), `${binding.key}: ${needed} missing from ${binding.when}`);
    }
  }
  assert.ok(byKey.tab.when.includes("!inSnippetMode"), "Tab still moves between a snippet's fields");
});

test("Shift+Tab takes the arena's bottom answer only while an arena pair is shown", () => {
  const [binding] = keybindings.filter((b) => b.command === TAKE_BOTTOM_COMMAND);
  assert.equal(binding.key, "shift+tab");
  const terms = binding.when.split("&&").map((term) => term.trim());
  for (const needed of ["editorTextFocus", "inlineSuggestionVisible", ARENA_VISIBLE]) {
    assert.ok(terms.includes(needed), `${needed} missing from ${binding.when}`);
  }
});

test("every keybinding's command is contributed, and the palette shows next-edit commands only when useful", () => {
  for (const binding of keybindings) {
    assert.ok(commands.some((command) => command.command === binding.command), binding.command);
  }
  for (const entry of PACKAGE.contributes.menus.commandPalette) {
    assert.equal(entry.when, VISIBLE_CONTEXT);
  }
});

test("the README names every setting and every command", () => {
  for (const key of Object.keys(PACKAGE.contributes.configuration.properties)) {
    assert.ok(README.includes(`\`${key}\``), `the README does not name ${key}`);
  }
  for (const { title } of commands) {
    assert.ok(README.includes(`**infill: ${title}**`), `the README does not name the command "${title}"`);
  }
});
