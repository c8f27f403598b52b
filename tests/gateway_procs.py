"""Gateway processes for the gateway's tests: `python -m gateway` on a free loopback port, its
address read from the line it writes once listening, stopped with SIGTERM afterwards."""
from __future__ import annotations

import collections
import re
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

from infill.paths import REPO_ROOT

LISTENING = re.compile(r"listening on (http://\S+)")


class Gateway:
    def __init__(self, args: Sequence[str], startup_s: float = 120.0) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "gateway", "--bind", "127.0.0.1:0", *args],
                                        cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.log: collections.deque[str] = collections.deque(maxlen=200)
        self.url = self._wait_for_address(startup_s)
        threading.Thread(target=self._drain, daemon=True).start()  # a full pipe would block its log

    def _drain(self) -> None:
        for line in self.process.stderr:
            self.log.append(line)

    def _wait_for_address(self, startup_s: float) -> str:
        deadline, seen = time.monotonic() + startup_s, []
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                break
            seen.append(line)
            found = LISTENING.search(line)
            if found:
                return found.group(1)
        self.stop()
        raise RuntimeError("the gateway did not start:\n" + "".join(seen[-30:]))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
