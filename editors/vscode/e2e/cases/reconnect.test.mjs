/**
 * The language server killed while the editor is open (SIGKILL, as a crash): the status bar says
 * the server is gone; when it is back on the same address, the extension reconnects by itself and
 * completes again.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { inWorkbench } from "../lib/case.mjs";
import { fakeWorker, freePort, LanguageServer, sleep } from "../lib/servers.mjs";

const SOURCE = "import os\n\n\ndef add(a, b):\n    return \n";

test("a killed server shows in the status bar, and the extension reconnects when it is back", async () => {
  await inWorkbench("reconnect", {
    files: { "add.py": SOURCE },
    settings: { "infill.mode": "single_line" },
    makeServer: async (folder, stops) => {
      const worker = await fakeWorker(folder, "worker");
      stops.push(worker.stop);
      return new LanguageServer(folder, await freePort(), worker.address);
    },
  }, async (workbench, server) => {
    await workbench.open("add.py", "import os");
    const connected = await workbench.status().getAttribute("aria-label");
    await workbench.shot("connected");

    await server.kill();
    const down = await workbench.statusSays((label) => /server: (stopped|failed)/.test(label),
                                            "that the server is gone");
    assert.match(await workbench.status().innerText(), /server stopped|no server/, "the item's text does not say it");
    await workbench.shot("server-gone");
    await sleep(3000); // a person notices, restarts the server some seconds later
    await server.start();
    await workbench.statusSays((label) => /server: running/.test(label), "the extension connected again");
    await workbench.shot("reconnected");
    assert.notEqual(down, connected);

    await workbench.page.keyboard.press("Control+End");
    await workbench.page.keyboard.press("ArrowUp");
    await workbench.page.keyboard.press("End");
    await workbench.type("a", 120);
    const ghost = await workbench.ghost("after the reconnection");
    assert.match(ghost, /^\d+:/, "the ghost text is not the fake worker's answer");
  });
});
