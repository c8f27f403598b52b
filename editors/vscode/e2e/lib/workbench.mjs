/**
 * A real VS Code workbench for one case: code-server (this folder's pinned copy, run by its pinned
 * Node 24) on a throwaway user-data and extensions folder with the freshly built `.vsix`
 * installed, settings that point the extension at the case's language server, and headless
 * Chromium (Debian's, through playwright-core) on it. Each step's screenshot is kept; the case's
 * folder under `artifacts/` is removed when the case passes.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { freePort, REPO, sleep, until } from "./servers.mjs";

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const NODE = path.join(HERE, "node_modules", "node", "bin", "node");
export const CODE_SERVER = path.join(HERE, "node_modules", "code-server", "out", "node", "entry.js");
export const VSIX = path.join(REPO, "editors", "vscode", "infill.vsix");
export const CHROMIUM = process.env.INFILL_CHROMIUM || "/usr/bin/chromium";
export const ARTIFACTS = path.join(HERE, "artifacts");
const WAIT_S = 90; // for the workbench and the extension to come up, only against a hang
const OPEN_TRIES = 3; // Enter presses on Quick Open's result before a file counts as not opening

/** Settings of a person's editor that would stand between the keys and what a case checks. */
const QUIET = {
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "chat.disableAIFeatures": true,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "telemetry.telemetryLevel": "off",
  "editor.quickSuggestions": { other: false, comments: false, strings: false },
  "editor.suggestOnTriggerCharacters": false,
  "editor.wordBasedSuggestions": "off",
  "editor.autoClosingBrackets": "never",
  "editor.autoClosingQuotes": "never",
  "editor.minimap.enabled": false,
  "files.autoSave": "off",
};

function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
}

/** Install the `.vsix` into `extensions` (once per case; a fresh folder each time). */
function installExtension(userData, extensions, log) {
  const result = spawnSync(NODE, [CODE_SERVER, "--user-data-dir", userData, "--extensions-dir", extensions,
                                  "--install-extension", VSIX], { encoding: "utf8" });
  fs.appendFileSync(log, `${result.stdout}\n${result.stderr}\n`);
  if (result.status !== 0) {
    throw new Error(`code-server --install-extension ${VSIX} failed: ${result.stderr}`);
  }
}

export class Workbench {
  /** @param name the case's name (its artifacts folder); @param settings the `infill.*` and other user settings */
  constructor(name, folder, settings) {
    this.name = name;
    this.folder = folder;
    this.workspace = path.join(folder, "workspace");
    this.userData = path.join(folder, "user-data");
    this.extensions = path.join(folder, "extensions");
    this.log = path.join(folder, "code-server.log");
    this.artifacts = path.join(ARTIFACTS, name);
    this.settings = { ...QUIET, ...settings };
    this.steps = 0;
    fs.rmSync(this.artifacts, { recursive: true, force: true });
    fs.mkdirSync(this.artifacts, { recursive: true });
    fs.mkdirSync(this.workspace, { recursive: true });
  }

  async start() {
    writeJson(path.join(this.userData, "User", "settings.json"), this.settings);
    writeJson(path.join(this.userData, "Machine", "settings.json"), this.settings);
    installExtension(this.userData, this.extensions, this.log);
    this.port = await freePort();
    const out = fs.openSync(this.log, "a");
    this.server = spawn(NODE, [CODE_SERVER, "--auth", "none", "--bind-addr", `127.0.0.1:${this.port}`,
                               "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
                               "--user-data-dir", this.userData, "--extensions-dir", this.extensions,
                               this.workspace], { stdio: ["ignore", out, out] });
    fs.closeSync(out);
    await until(async () => {
      try {
        return (await fetch(`http://127.0.0.1:${this.port}/healthz`)).ok;
      } catch {
        return this.server.exitCode !== null;
      }
    }, `code-server did not answer on ${this.port}`, WAIT_S);
    this.browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
                                           args: ["--no-sandbox", "--disable-gpu"] });
    this.page = await this.browser.newPage({ viewport: { width: 1280, height: 800 } });
    await this.page.goto(`http://127.0.0.1:${this.port}/?folder=${encodeURIComponent(this.workspace)}`);
    await this.page.locator(".monaco-workbench").waitFor({ timeout: WAIT_S * 1000 });
  }

  /** A screenshot of this step, kept under `artifacts/<case>/` unless the case passes. */
  async shot(step) {
    this.steps += 1;
    const file = path.join(this.artifacts, `${String(this.steps).padStart(2, "0")}-${step}.png`);
    await this.page?.screenshot({ path: file }).catch(() => undefined);
  }

  /** The extension's status bar item (its id is the extension's, then the item's). */
  status() {
    return this.page.locator('.statusbar-item[id$="infill.status"]');
  }

  /** Wait until the status bar item's label (its text, then its tooltip) satisfies `check`. */
  async statusSays(check, what) {
    let label = "";
    await until(async () => {
      label = (await this.status().getAttribute("aria-label").catch(() => "")) ?? "";
      return check(label);
    }, () => `the status bar never showed ${what}: it says ${JSON.stringify(label)}`, WAIT_S);
    return label;
  }

  /**
   * Open `name` (a file of the workspace) by Quick Open, as a person does, and wait for its text.
   * Enter waits for the file among the results; where it still opened nothing (the list was
   * redrawn under it), it is pressed again while Quick Open is up.
   */
  async open(name, firstLine) {
    await this.page.keyboard.press("Control+P");
    const input = this.page.locator(".quick-input-widget input");
    await input.waitFor();
    await input.pressSequentially(name, { delay: 40 });
    await this.page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor();
    const lines = this.page.locator(".editor-instance .monaco-editor .view-lines", { hasText: firstLine }).first();
    for (let tries = 1; ; tries += 1) {
      await this.page.keyboard.press("Enter");
      const opened = await lines.waitFor({ timeout: 10_000 }).then(() => true, () => false);
      if (opened) {
        break;
      }
      if (tries === OPEN_TRIES || !(await input.isVisible())) {
        await lines.waitFor(); // the last wait: fails with the locator's own message
        break;
      }
    }
    await lines.click();
  }

  /** Run a command of the palette by its title, as a person does. */
  async command(title) {
    await this.page.keyboard.press("Control+Shift+P");
    const input = this.page.locator(".quick-input-widget input");
    await input.waitFor();
    await input.pressSequentially(title, { delay: 30 });
    await this.page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
    await this.page.keyboard.press("Enter");
  }

  /** Type `text` key by key with a pause between keys, as a person types. */
  async type(text, pauseMs = 80) {
    for (const key of text) {
      if (key === "\n") {
        await this.page.keyboard.press("Enter");
      } else {
        await this.page.keyboard.type(key);
      }
      await sleep(pauseMs);
    }
  }

  /** Save the active editor and read the file back: the document's text. */
  async saved(name) {
    await this.page.keyboard.press("Control+S");
    await until(async () => (await this.page.locator(".tab.active.dirty").count()) === 0,
                `${name} was not saved`, 20);
    return fs.readFileSync(path.join(this.workspace, name), "utf8");
  }

  /** Wait until `check()` holds (against a hang only). */
  async until(check, what) {
    return until(check, what, WAIT_S);
  }

  /**
   * The ghost text shown now, its lines joined, or undefined when none is shown: its first line's
   * part is decorations in the cursor's line, the lines after it are a view zone's lines (in a
   * `.suggest-preview-text` in this VS Code, a `.ghost-text` in older ones).
   */
  async ghostText() {
    return this.page.evaluate(() => {
      const editor = document.querySelector(".editor-instance .monaco-editor") ?? document;
      const first = [...editor.querySelectorAll(".ghost-text-decoration")].map((node) => node.textContent).join("");
      const more = [...editor.querySelectorAll(".view-zones .suggest-preview-text .view-line, .ghost-text .view-line")]
        .map((node) => node.textContent);
      if (!first && more.length === 0) {
        return undefined;
      }
      return [first, ...more].join("\n").replace(/\u00a0/g, " ");
    });
  }

  /** Wait for a ghost text, and give it. */
  async ghost(what = "a ghost text") {
    return until(() => this.ghostText(), `no ghost text showed: ${what}`, WAIT_S);
  }

  /**
   * Start timing in the page: from each keydown to the first change of the DOM after it that
   * leaves a ghost text in the editor (`latencyMs()` reads it; undefined before one shows).
   */
  async startTiming() {
    await this.page.evaluate(() => {
      const timing = { keyAt: 0, shownAt: 0, shownBefore: false };
      const showing = () => document.querySelector(".editor-instance .ghost-text-decoration, .editor-instance .ghost-text") !== null;
      document.addEventListener("keydown", () => {
        timing.keyAt = performance.now();
        timing.shownAt = 0;
        timing.shownBefore = showing();
      }, true);
      new MutationObserver(() => {
        if (timing.keyAt && !timing.shownAt && showing()) {
          timing.shownAt = performance.now();
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
      window.infillTiming = timing;
    });
  }

  /** Milliseconds from the last keydown to the ghost text, and whether one showed already at that key. */
  async latencyMs() {
    return this.page.evaluate(() => {
      const timing = window.infillTiming;
      return timing.shownAt ? { ms: timing.shownAt - timing.keyAt, shownBefore: timing.shownBefore } : undefined;
    });
  }

  /**
   * The visible lines' text, top to bottom, with what decorations add: the extension's `before` and
   * `after` text (`renderOptions.contentText`) is no text of the DOM but the CSS `content` of a
   * `::before` or `::after` of an empty span, read here as the page computes it, at its place.
   */
  async lines() {
    return this.page.evaluate(() => {
      /** The text of a computed `content` ("none", "normal", or quoted strings with CSS escapes). */
      const generated = (element, pseudo) => {
        const content = getComputedStyle(element, pseudo).content;
        let text = "";
        for (const [, double, single] of content.matchAll(/"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'/gs)) {
          text += (double ?? single).replace(/\\([0-9a-fA-F]{1,6}) ?|\\(.)/gs,
            (_, hex, other) => (hex ? String.fromCodePoint(parseInt(hex, 16)) : other));
        }
        return text;
      };
      const textOf = (node) => {
        if (node.nodeType === Node.TEXT_NODE) {
          return node.textContent;
        }
        if (node.nodeType !== Node.ELEMENT_NODE) {
          return "";
        }
        return generated(node, "::before") + [...node.childNodes].map(textOf).join("") + generated(node, "::after");
      };
      const view = document.querySelector(".editor-instance .monaco-editor .view-lines");
      const lines = [...(view?.querySelectorAll(".view-line") ?? [])]
        .map((line) => ({ top: line.getBoundingClientRect().top, text: textOf(line) }))
        .sort((a, b) => a.top - b.top);
      return lines.map((line) => line.text).join("\n").replace(/\u00a0/g, " ");
    });
  }

  async close(passed) {
    await this.browser?.close().catch(() => undefined);
    if (this.server && this.server.exitCode === null) {
      const exit = new Promise((resolve) => this.server.once("exit", resolve));
      this.server.kill("SIGTERM");
      await exit;
    }
    if (passed) {
      fs.rmSync(this.artifacts, { recursive: true, force: true });
    } else {
      fs.copyFileSync(this.log, path.join(this.artifacts, "code-server.log"));
    }
  }
}
