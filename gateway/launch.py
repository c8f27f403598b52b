"""A gateway process started by another command (`infill run`, `bench.load --gateway`): `python -m
gateway` over given workers, on a loopback port, returned once it listens with its URL. Its log
is read on in a thread (and dropped), so that a full pipe never blocks it."""
from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Sequence

from infill.paths import REPO_ROOT

LISTENING = re.compile(r"listening on (http://\S+)")


def start_gateway(addresses: Sequence[str], port: int = 0, flags: Sequence[str] = ()
                  ) -> tuple[subprocess.Popen, str]:
    """The gateway process over `addresses` on 127.0.0.1:`port` (0: a free one) and its URL."""
    process = subprocess.Popen([sys.executable, "-m", __package__, "--bind", f"127.0.0.1:{port}",
                                "--worker", ",".join(addresses), *flags], cwd=REPO_ROOT,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    tail = []
    for line in process.stderr:
        tail = [*tail[-20:], line]
        found = LISTENING.search(line)
        if found:
            threading.Thread(target=_drain, args=(process,), daemon=True).start()
            return process, found.group(1)
    process.wait()
    raise RuntimeError(f"the gateway exited with code {process.returncode} before listening:\n"
                       + "".join(tail))


def _drain(process: subprocess.Popen) -> None:
    for _ in process.stderr:
        pass


def stop_gateway(process: subprocess.Popen, timeout_s: float = 10.0) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
