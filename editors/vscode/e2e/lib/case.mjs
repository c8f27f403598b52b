/**
 * One case's set-up and tear-down: a fresh folder, the workspace's files, the processes the case
 * asks for, the workbench with the extension pointed at the case's language server; on failure the
 * screenshots, the server's log and the workbench's log stay under `artifacts/<case>/`.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Workbench } from "./workbench.mjs";

/**
 * Run `body(workbench)` in a fresh workbench whose workspace holds `files` ({name: text}) and whose
 * extension connects to `server` (a `LanguageServer`, made by `makeServer(folder)` and started here).
 */
export async function inWorkbench(name, { files, settings = {}, makeServer }, body) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), `infill-e2e-${name}-`));
  const stops = [];
  let workbench;
  let passed = false;
  try {
    const server = await makeServer(folder, stops);
    await server.start();
    stops.push(() => server.stop());
    workbench = new Workbench(name, folder, {
      "infill.serverAddress": server.address, "infill.tokenFile": server.tokenFile, ...server.settings, ...settings });
    for (const [file, text] of Object.entries(files)) {
      fs.writeFileSync(path.join(workbench.workspace, file), text);
    }
    await workbench.start();
    await workbench.statusSays((label) => /server: running/.test(label) && !/model: not known/.test(label),
                               "the extension connected and its model ready");
    await body(workbench, server);
    passed = true;
  } catch (error) {
    await workbench?.shot("failed");
    throw error;
  } finally {
    await workbench?.close(passed);
    for (const stop of stops.reverse()) {
      await stop().catch(() => undefined);
    }
    if (!passed && workbench) {
      for (const log of ["lsp.log", "lsp.log.stderr"]) {
        const file = path.join(folder, log);
        if (fs.existsSync(file)) {
          fs.copyFileSync(file, path.join(workbench.artifacts, log));
        }
      }
    }
    fs.rmSync(folder, { recursive: true, force: true });
  }
}
