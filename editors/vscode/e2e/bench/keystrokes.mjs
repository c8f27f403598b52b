/**
 * The VS Code twin of Neovim's keystroke benchmark (`python -m bench.editor_latency`):
 *
 *   npm run bench -- [--keys N] [--busy N] [--seed S] [--pause-rate R] [--pause-ms MS] [--deadline-ms MS] [--no-early]
 *
 * The real workbench (code-server with the built .vsix, in headless Chromium) types held-out
 * HumanEval bodies key by key against the language server on the bundled model, with the plan of
 * `python -m bench.vscode_keystrokes plan` (Neovim's: 80 to 120 ms between keys, pauses where a
 * typist stops, each ended by the ghost text). The page records, for every key, its keydown, the
 * ghost text on screen then (`before`), and the first frame after it that drew ghost text other than
 * that, or any ghost text once the keydown's had gone (epoch ms).
 * `python -m bench.vscode_keystrokes report` then gives every keystroke its outcome with the
 * server's log, and prints p50/p90/p99 from the key to the ghost text for the model's answers and
 * the typed-through ones apart, and the split of the model's time; its last line is one JSON
 * object. `--busy N` runs N `while True: pass` loops beside it; `--no-early` turns the extension's
 * early requests off (`infill.earlyRequests`: only VS Code's debounced requests). The record, the plan and the
 * server's log stay in `artifacts/keystrokes-bench/`.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { inWorkbench } from "../lib/case.mjs";
import { freePort, LanguageServer, PYTHON, REPO, sleep, until } from "../lib/servers.mjs";
import { ARTIFACTS } from "../lib/workbench.mjs";

const OUT = path.join(ARTIFACTS, "keystrokes-bench");
const WARM_TEXT = "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef read_lines(path):\n"
  + "    with open(path) as handle:\n        ";
const WARM_TRIES = 10; // the model's first answers on a busy CPU may miss their deadline
const WARM_WAIT_S = 20;
const PACE_MS = 20; // how often a pause looks for the ghost text
// Settings a typist's editor would have for this: no auto-indent (the plan types the indentation),
// no next edits (Neovim's plugin asks for none either).
const SETTINGS = { "editor.autoIndent": "none", "infill.nextEdit.enabled": false };

function options() {
  const { values } = parseArgs({ options: {
    keys: { type: "string", default: "400" }, busy: { type: "string", default: "0" },
    seed: { type: "string", default: "0" }, "pause-rate": { type: "string", default: "0.15" },
    "pause-ms": { type: "string", default: "4000" }, "deadline-ms": { type: "string" },
    "no-early": { type: "boolean", default: false } } });
  for (const name of ["keys", "busy", "seed", "pause-ms", "deadline-ms"]) {
    if (values[name] !== undefined && !/^\d+$/.test(values[name])) {
      throw new Error(`--${name} must be a whole number, got ${JSON.stringify(values[name])}`);
    }
  }
  return values;
}

function python(args) {
  const result = spawnSync(PYTHON, ["-m", ...args], { cwd: REPO, encoding: "utf8",
                                                      stdio: ["ignore", "pipe", "inherit"] });
  if (result.status !== 0) {
    throw new Error(`${PYTHON} -m ${args.join(" ")} exited ${result.status}`);
  }
  return result.stdout;
}

/** Start recording in the page: each keydown while `on`, and the first frame after it with new ghost text. */
async function startRecording(page) {
  await page.evaluate(() => {
    const now = () => performance.timeOrigin + performance.now();
    const ghost = () => {
      const editor = document.querySelector(".editor-instance .monaco-editor");
      const nodes = editor ? editor.querySelectorAll(".ghost-text-decoration, .suggest-preview-text .view-line, "
                                                     + ".ghost-text .view-line") : [];
      return nodes.length ? [...nodes].map((node) => node.textContent).join("\n") : null;
    };
    const record = { on: false, file: "", keys: [] };
    document.addEventListener("keydown", (event) => {
      if (record.on) {
        record.keys.push({ file: record.file, key: event.key, fed_ms: now(), shown_ms: null, before: ghost() });
      }
    }, true);
    new MutationObserver(() => {
      const key = record.keys[record.keys.length - 1];
      const text = key && key.shown_ms === null && !key.drawing ? ghost() : null;
      if (key && text === null) {
        key.cleared = true; // an answer may draw the very text that was shown at the keydown
      }
      if (text !== null && (text !== key.before || key.cleared)) {
        key.drawing = true;
        requestAnimationFrame(() => { key.shown_ms = now(); });
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
    window.infillRecord = record;
  });
}

async function recording(page, on, file = "") {
  await page.evaluate(([value, name]) => {
    window.infillRecord.on = value;
    window.infillRecord.file = name;
  }, [on, file]);
}

async function lastShown(page) {
  return page.evaluate(() => window.infillRecord.keys.at(-1)?.shown_ms ?? null);
}

async function press(page, key) {
  if (key === "\r") {
    await page.keyboard.press("Enter");
  } else {
    await page.keyboard.type(key);
  }
}

/** Type in a scratch file until the model answers, typing the last key again where it does not. */
async function warmUp(workbench) {
  await workbench.open("warm.py", "import os");
  await workbench.page.keyboard.press("Control+End");
  await workbench.type("return ", 120);
  for (let tries = 1; tries <= WARM_TRIES; tries += 1) {
    if (await until(() => workbench.ghostText(), "no ghost text", WARM_WAIT_S).catch(() => undefined)) {
      return;
    }
    await workbench.page.keyboard.press("Backspace");
    await workbench.type(" ", 120);
  }
  throw new Error(`no ghost text while warming up, after typing the last key ${WARM_TRIES} times`);
}

/** Type one planned file: open it, go to its end, feed its keys on the plan's schedule; whether it ended as planned. */
async function typeFile(workbench, file) {
  const page = workbench.page;
  const firstLine = file.prefill.split("\n").find((line) => line.trim()).trim().slice(0, 24);
  await workbench.open(file.path, firstLine);
  await page.keyboard.press("Control+End");
  await recording(page, true, file.path);
  for (const key of file.keys) {
    await press(page, key.key);
    const paused = Date.now();
    while (key.pause_ms && Date.now() - paused < key.pause_ms && (await lastShown(page)) === null) {
      await sleep(PACE_MS);
    }
    await sleep(key.gap_ms);
  }
  await recording(page, false);
  return (await workbench.saved(file.path)) === file.text;
}

async function run(args) {
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  const planFile = path.join(OUT, "plan.json");
  python(["bench.vscode_keystrokes", "plan", "--out", planFile, "--keys", args.keys, "--seed", args.seed,
          "--pause-rate", args["pause-rate"], "--pause-ms", args["pause-ms"]]);
  const plan = JSON.parse(fs.readFileSync(planFile, "utf8"));
  const files = Object.fromEntries([["warm.py", WARM_TEXT],
                                    ...plan.files.map((file) => [file.path, file.prefill])]);
  const deadline = args["deadline-ms"] ? { "infill.deadlineMs": Number(args["deadline-ms"]) } : {};
  const settings = { ...SETTINGS, ...deadline, "infill.earlyRequests": !args["no-early"] };
  const loops = Array.from({ length: Number(args.busy) },
                           () => spawn(PYTHON, ["-c", "while True: pass"], { stdio: "ignore" }));
  const record = { keys: [], files: [], seed: Number(args.seed), deadline_ms: deadline["infill.deadlineMs"] ?? null,
                   early_requests: !args["no-early"] };
  const makeServer = async (folder) => new LanguageServer(folder, await freePort());
  try {
    await inWorkbench("bench", { files, settings, makeServer }, async (workbench, server) => {
      const browser = await workbench.page.evaluate(() => navigator.userAgent.match(/Chrome\/\S+/)?.[0]);
      record.editor = `VS Code (code-server), headless ${browser}`;
      await warmUp(workbench);
      await startRecording(workbench.page);
      record.load_before = Number(os.loadavg()[0].toFixed(2));
      for (const file of plan.files) {
        record.files.push({ path: file.path, typed_as_planned: await typeFile(workbench, file) });
      }
      record.load_after = Number(os.loadavg()[0].toFixed(2));
      record.keys = (await workbench.page.evaluate(() => window.infillRecord.keys))
        .map(({ file, key, fed_ms, shown_ms, before }) => ({ file, key, fed_ms, shown_ms, before }));
      fs.copyFileSync(server.log, path.join(OUT, "lsp.log"));
    });
  } finally {
    for (const loop of loops) {
      loop.kill("SIGKILL");
    }
  }
  fs.writeFileSync(path.join(OUT, "record.json"), JSON.stringify(record));
  process.stdout.write(python(["bench.vscode_keystrokes", "report", "--record", path.join(OUT, "record.json"),
                               "--log", path.join(OUT, "lsp.log"), "--busy", args.busy, "--json"]));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  run(options()).catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  });
}
