/**
 * Next edits, on the scripted worker that renames (tests/fake_worker.py, `# fake-rename: OLD NEW`:
 * the bundled model is not trained for edits, so this proves the editor's side): a person renames
 * a variable at its definition; the other uses, off screen, are announced by the "Tab: next edit"
 * hint (a decoration's CSS `::after` text, which `workbench.lines()` reads); Esc drops them; typed
 * again, Tab jumps to the nearest, where its decoration shows; Tab again makes all of them as one
 * edit (one undo takes them all back).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { inWorkbench } from "../lib/case.mjs";
import { fakeWorker, freePort, LanguageServer } from "../lib/servers.mjs";

const FILLER = Array.from({ length: 48 }, (_, i) => `    a${i} = ${i}\n`).join("");
const HEAD = "# fake-rename: count total\nimport os\n\n\n"; // the marker stays out of the cursor's region
const SOURCE = HEAD + "def tally(items):\n    count = 0\n" + FILLER
  + "    for item in items:\n        count += item\n    return count\n";
const RENAMED = SOURCE.replace("    count = 0", "    total = 0");
// The scripted worker marks each line it renamed, so the case tells its answer from the server's drafts.
const WORKER_NOTE = "  # renamed by the worker";
const EXPECTED = RENAMED.split("\n")
  .map((line, i) => (i > 0 && line.includes("count") ? line.replace(/count/g, "total") + WORKER_NOTE : line)).join("\n");
const FIRST_USE = SOURCE.split("\n").findIndex((line) => line === "        count += item") + 1; // 1-based

/** The 1-based line of the cursor, from the status bar's "Ln N, Col M". */
async function cursorLine(workbench) {
  const label = await workbench.page.locator('[id="status.editor.selection"]').innerText();
  return Number(/Ln (\d+)/.exec(label)?.[1]);
}

test("a rename shows the next edits off screen; Esc drops them, Tab jumps, Tab again takes them all", async () => {
  await inWorkbench("next-edit", {
    files: { "tally.py": SOURCE },
    makeServer: async (folder, stops) => {
      const worker = await fakeWorker(folder, "renamer");
      stops.push(worker.stop);
      return new LanguageServer(folder, await freePort(), worker.address);
    },
  }, async (workbench) => {
    await workbench.open("tally.py", "fake-rename");
    await workbench.page.keyboard.press("Control+Home");
    for (let line = 0; line < 5; line += 1) {
      await workbench.page.keyboard.press("ArrowDown");
    }
    await workbench.page.keyboard.press("Home");
    await workbench.page.keyboard.press("Control+Shift+ArrowRight"); // selects `count`
    await workbench.type("total", 120);
    await workbench.shot("renamed");

    const hint = `Tab: next edit at line ${FIRST_USE}`;
    const hinted = async (what) => {
      await workbench.until(async () => (await workbench.lines()).includes(hint),
                            async () => `no "${hint}" hint ${what}; the lines read:\n${await workbench.lines()}`);
    };
    await hinted("after the rename");
    await workbench.shot("hint");

    await workbench.page.keyboard.press("Escape");
    await workbench.until(async () => !(await workbench.lines()).includes(hint), "Esc left the hint");
    await workbench.shot("dismissed");
    assert.equal(await cursorLine(workbench), 6, "Esc moved the cursor");
    assert.equal(await workbench.saved("tally.py"), RENAMED, "Esc changed the text");

    await workbench.page.keyboard.press("Backspace"); // the rename's last key again: the edits are asked anew
    await workbench.type("l", 120);
    await hinted("after the rename's last key again");
    await workbench.shot("hint-again");
    assert.equal(await cursorLine(workbench), 6, "the cursor moved before Tab");

    await workbench.page.keyboard.press("Tab");
    await workbench.until(async () => (await cursorLine(workbench)) === FIRST_USE, "Tab did not jump to the first use");
    await workbench.until(async () => (await workbench.lines()).includes("→"),
                          "no decoration of the new text at the edits");
    await workbench.shot("jumped");
    const shown = await workbench.lines();
    assert.ok(!shown.includes(hint), "the hint stayed after the jump");
    assert.equal(await workbench.saved("tally.py"), RENAMED, "the jump changed the text");

    await workbench.page.keyboard.press("Tab");
    await workbench.until(async () => !(await workbench.lines()).includes("→"), "the decorations stayed after Tab");
    await workbench.shot("taken");
    assert.equal(await workbench.saved("tally.py"), EXPECTED);

    await workbench.page.keyboard.press("Control+Z");
    assert.equal(await workbench.saved("tally.py"), RENAMED, "one undo did not take every edit back");
  });
});
