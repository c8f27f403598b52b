/**
 * Inline completions on the bundled model, typed as a person types: the ghost text shows, Tab
 * takes it, Esc dismisses it, and typing on through it keeps the rest. Prints the time from the
 * last keystroke to the ghost text in the DOM for each file typed, and their median, to stderr.
 * Where no ghost text shows within 10 s (the worker missed its deadline on a busy CPU), the last
 * key is typed again once, as a person would; the figure then counts from that key.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { inWorkbench } from "../lib/case.mjs";
import { freePort, LanguageServer, until } from "../lib/servers.mjs";

const BASE = "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef read_lines(path):\n"
  + "    with open(path) as handle:\n        \n";
const TYPED = "return ";
const AT = BASE.length - 1; // the end of the last line, where the typing goes
const NAMES = ["accept.py", "dismiss.py", "through.py", "fourth.py", "fifth.py"];
const WARM_TRIES = 6; // the model's first answers on a busy CPU may miss their deadline

function withTyped(text) {
  return BASE.slice(0, AT) + TYPED + text + BASE.slice(AT);
}

/** Open `name`, put the cursor at the end of its last line and type; the ghost text that shows. */
async function typeInto(workbench, name, samples) {
  await workbench.open(name, "import os");
  await workbench.page.keyboard.press("Control+End");
  await workbench.page.keyboard.press("ArrowUp");
  await workbench.page.keyboard.press("End");
  await workbench.type(TYPED, 120);
  let ghost = await until(() => workbench.ghostText(), "no ghost text yet", 10).catch(() => undefined);
  const retyped = ghost === undefined; // a deadline missed on a busy CPU: type the last key again, once
  if (retyped) {
    await workbench.page.keyboard.press("Backspace");
    await workbench.type(" ", 120);
    ghost = await workbench.ghost(`after typing ${JSON.stringify(TYPED)} in ${name}, and its last key again`);
  }
  const latency = await workbench.latencyMs();
  if (latency) {
    samples.push({ name, retyped, ...latency });
  }
  await workbench.shot(`${name}-ghost`);
  return ghost;
}

/**
 * Warm the model up as a person would: type in a scratch file, and where no suggestion comes,
 * type the last key again, until one does.
 */
async function warmUp(workbench) {
  await workbench.open("warm.py", "import os");
  await workbench.page.keyboard.press("Control+End");
  await workbench.page.keyboard.press("ArrowUp");
  await workbench.page.keyboard.press("End");
  await workbench.type(TYPED, 120);
  for (let tries = 1; ; tries += 1) {
    const ghost = await until(() => workbench.ghostText(), "no ghost text yet", 10).catch(() => undefined);
    if (ghost !== undefined || tries === WARM_TRIES) {
      assert.ok(ghost !== undefined, `no ghost text after typing the last key ${WARM_TRIES} times`);
      return;
    }
    await workbench.page.keyboard.press("Backspace");
    await workbench.type(" ", 120);
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

test("typing shows ghost text; Tab takes it, Esc dismisses it, typing through keeps it", async () => {
  const files = Object.fromEntries(["warm.py", ...NAMES].map((name) => [name, BASE]));
  const samples = [];
  await inWorkbench("typing", { files, settings: { "infill.deadlineMs": 5000, "infill.nextEdit.enabled": false }, makeServer: async (folder) => new LanguageServer(folder, await freePort()) },
                    async (workbench) => {
    await warmUp(workbench);
    await workbench.startTiming();

    const taken = await typeInto(workbench, "accept.py", samples);
    await workbench.page.keyboard.press("Tab");
    await workbench.shot("accept-tab");
    assert.equal(await workbench.saved("accept.py"), withTyped(taken));

    const dismissed = await typeInto(workbench, "dismiss.py", samples);
    assert.ok(dismissed.length > 0);
    await workbench.page.keyboard.press("Escape");
    await workbench.until(async () => (await workbench.ghostText()) === undefined, "Esc left the ghost text");
    await workbench.shot("dismiss-esc");
    assert.equal(await workbench.saved("dismiss.py"), withTyped(""));

    const shown = await typeInto(workbench, "through.py", samples);
    assert.ok(shown.length >= 2, `the model wrote ${JSON.stringify(shown)}: too short to type through`);
    await workbench.type(shown[0]);
    await workbench.until(async () => (await workbench.ghostText()) === shown.slice(1),
                          () => `typing ${JSON.stringify(shown[0])} did not keep the rest of ${JSON.stringify(shown)}`);
    await workbench.shot("through-typed");
    await workbench.page.keyboard.press("Tab");
    assert.equal(await workbench.saved("through.py"), withTyped(shown));

    for (const name of NAMES.slice(3)) {
      await typeInto(workbench, name, samples);
    }
  });
  const fresh = samples.filter((sample) => !sample.shownBefore).map((sample) => sample.ms);
  process.stderr.write(`keystroke to ghost text (ms): ${samples.map((s) => `${s.name} ${s.ms.toFixed(0)}`
    + (s.shownBefore ? " (typed through)" : "") + (s.retyped ? " (last key typed again)" : "")).join(", ")}; p50 ${fresh.length ? median(fresh).toFixed(0) : "n/a"}\n`);
  assert.ok(samples.length === NAMES.length, "every file typed gave a latency");
});
