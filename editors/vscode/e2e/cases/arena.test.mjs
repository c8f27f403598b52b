/**
 * The arena: with `infill.arena` on and two fake workers (each answers with its own pid, so the
 * pair differs), one ghost text shows both answers (top, an indented `======` line, the line's
 * beginning and the bottom); Shift+Tab takes the bottom one, Tab (in a second file) the top one,
 * and each vote is in the SQLite store. VS Code may show a follow-up pair right after either key; saving
 * or opening the next file dismisses it, which stores a `neither`: the case counts the sides taken.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { test } from "node:test";
import { inWorkbench } from "../lib/case.mjs";
import { fakeWorker, freePort, LanguageServer, PYTHON } from "../lib/servers.mjs";

const SOURCE = "def add(a, b):\n    return a + b\n\n\ndef area(r):\n    \n";
const LINE = "    x"; // the last line once typed on

function picks(votes) {
  const read = spawnSync(PYTHON, ["-c", "import json, sqlite3, sys\n"
    + "rows = sqlite3.connect(sys.argv[1]).execute('SELECT pick FROM votes ORDER BY id').fetchall()\n"
    + "print(json.dumps([row[0] for row in rows]))", votes], { encoding: "utf8" });
  return read.status === 0 ? JSON.parse(read.stdout) : [];
}

/** The sides taken, in order; every other vote must be a dismissed follow-up pair (`neither`). */
function taken(votes) {
  const all = picks(votes);
  assert.ok(all.every((pick) => ["top", "bottom", "neither"].includes(pick)), `unknown votes: ${JSON.stringify(all)}`);
  return all.filter((pick) => pick !== "neither");
}

/** Open `name`, type on the last line and wait for the pair's ghost text: its top and bottom answers. */
async function pairIn(workbench, name) {
  await workbench.open(name, "def add");
  await workbench.page.keyboard.press("Control+End");
  await workbench.page.keyboard.press("ArrowUp");
  await workbench.page.keyboard.press("End");
  await workbench.type("x", 120);
  const ghost = await workbench.ghost(`no arena pair after typing in ${name}`);
  await workbench.until(async () => ((await workbench.ghostText()) ?? "").split("\n").length === 3,
                        async () => `the ghost text is not top, separator, bottom: ${JSON.stringify(await workbench.ghostText())}`);
  await workbench.shot(`${name}-pair`);
  const pair = await workbench.ghostText();
  const [top, separator, bottomLine] = pair.split("\n");
  assert.ok(ghost.length > 0 && top.length > 0);
  assert.equal(separator, "    ======");
  assert.ok(bottomLine.startsWith(LINE), `the bottom line ${JSON.stringify(bottomLine)} does not repeat the line`);
  const bottom = bottomLine.slice(LINE.length);
  assert.notEqual(bottom, top, "both sides gave the same answer");
  return { top, bottom, pair };
}

test("the arena shows both answers; Shift+Tab takes the bottom, Tab the top, and each vote is stored", async () => {
  let votes;
  await inWorkbench("arena", {
    files: { "area.py": SOURCE, "volume.py": SOURCE },
    makeServer: async (folder, stops) => {
      const a = await fakeWorker(folder, "a");
      const b = await fakeWorker(folder, "b");
      stops.push(a.stop, b.stop);
      votes = path.join(folder, "arena.sqlite3");
      const server = new LanguageServer(folder, await freePort(), a.address);
      server.settings = { "infill.arena": true, "infill.arenaVotes": votes, "infill.mode": "single_line",
                          "infill.arenaDeadlineMs": 20000,
                          "infill.arenaBackends": [{ name: "a" }, { name: "b", address: b.address }] };
      return server;
    },
  }, async (workbench) => {
    const { bottom } = await pairIn(workbench, "area.py");
    await workbench.page.keyboard.press("Shift+Tab");
    await workbench.until(async () => (await workbench.ghostText()) === undefined, "the pair stayed after Shift+Tab");
    // the vote goes once the bottom is in (the ghost text is hidden before)
    await workbench.until(() => picks(votes).includes("bottom"), () => `no vote for the bottom in ${votes}: ${JSON.stringify(picks(votes))}`);
    await workbench.shot("bottom-taken");
    assert.equal(await workbench.saved("area.py"), SOURCE.replace("def area(r):\n    \n", `def area(r):\n${LINE}${bottom}\n`));
    assert.deepEqual(taken(votes), ["bottom"]);

    const { top, pair } = await pairIn(workbench, "volume.py");
    await workbench.page.keyboard.press("Tab");
    // VS Code asks again once the top is in; the next suggestion, a new pair, may show at once
    await workbench.until(async () => (await workbench.ghostText()) !== pair, "the pair stayed after Tab");
    // the vote goes once the top alone is in place of the pair
    await workbench.until(() => picks(votes).includes("top"), () => `no vote for the top in ${votes}: ${JSON.stringify(picks(votes))}`);
    await workbench.shot("top-taken");
    assert.equal(await workbench.saved("volume.py"), SOURCE.replace("def area(r):\n    \n", `def area(r):\n${LINE}${top}\n`),
                 "Tab did not leave the top answer alone in place of the pair");
    assert.deepEqual(taken(votes), ["bottom", "top"]);
  });
});
