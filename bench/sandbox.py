"""Run untrusted Python (a task's program with a model's completion) in a separate, limited process.

Every program runs in a fresh `python -I` interpreter (isolated: no user site, no PYTHON* variables,
no script folder on `sys.path`) inside a new temporary folder that is its working directory and its
HOME, with a small environment that carries no proxy settings. The interpreter first runs a short
launcher, then the program with `runpy` as `__main__`, so the program's own line numbers and
`from __future__` imports are untouched. The launcher:

- caps the address space (`RLIMIT_AS`, soft and hard, so the program cannot raise it back), the
  size of any file it writes (`RLIMIT_FSIZE`), core dumps (`RLIMIT_CORE`) and its CPU time
  (`RLIMIT_CPU`, twice the time limit and a second: a program whose caller was killed before its
  timeout, which would have killed it, stops by itself instead of spinning on forever);
- disables networking: `socket.socket` (and `_socket.socket`, which it wraps) is replaced by a
  subclass whose constructor raises `OSError("network disabled in sandbox")`, so `connect`,
  `create_connection`, `urllib` and the like all fail.

The limits are set by the launcher, not by a `preexec_fn`: the benchmark starts programs from a
thread pool, and Python documents `preexec_fn` as unsafe in a process that has threads.

The process leads its own session; on timeout, and after every run, its whole process group is
killed, so children it forked cannot outlive it. stdin is closed; stdout and stderr go to files in
the temporary folder (bounded by `RLIMIT_FSIZE`) of which only the tails are read back. Nothing from
the program ever runs in the caller's process.
"""
from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TIME_LIMIT_S = 10.0
DEFAULT_MEMORY_BYTES = 1 << 30  # 1 GiB of address space: HumanEval programs need a few tens of MiB
MAX_FILE_BYTES = 16 << 20  # cap on any file the program writes, its stdout and stderr included
DEFAULT_OUTPUT_CHARS = 4000  # how much of the end of stdout and of stderr is kept
NETWORK_DISABLED = "network disabled in sandbox"
PROGRAM_NAME = "program.py"

_LAUNCHER = """\
import resource, runpy, socket, _socket, sys
resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))
resource.setrlimit(resource.RLIMIT_FSIZE, ({file_bytes}, {file_bytes}))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
resource.setrlimit(resource.RLIMIT_CPU, ({cpu_s}, {cpu_s}))
class _NoNetwork(socket.socket):
    def __init__(self, *args, **kwargs):
        raise OSError({message!r})
socket.socket = socket.SocketType = _socket.socket = _socket.SocketType = _NoNetwork
del _NoNetwork, resource, socket, _socket
sys.argv = [{program!r}]
runpy.run_path({program!r}, run_name="__main__")
"""


@dataclass(slots=True)
class SandboxResult:
    returncode: int  # negative: killed by that signal (a timeout reads -SIGKILL)
    timed_out: bool
    elapsed_s: float
    stdout: str  # the last `output_chars` characters
    stderr: str

    @property
    def passed(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def _environment(folder: str) -> dict[str, str]:
    """A minimal environment: no proxies, one thread for numeric libraries, HOME in the sandbox."""
    return {"PATH": "/usr/bin:/bin", "HOME": folder, "TMPDIR": folder, "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def _tail(path: Path, chars: int) -> str:
    with path.open("rb") as stream:
        stream.seek(max(0, path.stat().st_size - 4 * chars))
        return stream.read().decode(errors="replace")[-chars:]


def cpu_seconds(time_limit_s: float) -> int:
    """The CPU time a program may use: more than its wall-clock limit allows one thread."""
    return 2 * math.ceil(time_limit_s) + 1


def run_program(source: str, time_limit_s: float = DEFAULT_TIME_LIMIT_S,
                memory_bytes: int = DEFAULT_MEMORY_BYTES,
                output_chars: int = DEFAULT_OUTPUT_CHARS) -> SandboxResult:
    """Run `source` as a Python program in the sandbox; passing means exit code 0 within the time limit."""
    launcher = _LAUNCHER.format(memory=int(memory_bytes), file_bytes=MAX_FILE_BYTES, cpu_s=cpu_seconds(time_limit_s),
                                message=NETWORK_DISABLED, program=PROGRAM_NAME)
    with tempfile.TemporaryDirectory(prefix="infill-sandbox-") as folder:
        root = Path(folder)
        (root / PROGRAM_NAME).write_text(source, encoding="utf-8")
        with (root / "stdout.txt").open("wb") as out, (root / "stderr.txt").open("wb") as err:
            started = time.monotonic()
            proc = subprocess.Popen([sys.executable, "-I", "-c", launcher], cwd=folder,
                                    env=_environment(folder), stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, start_new_session=True)
            timed_out = False
            try:
                proc.wait(timeout=time_limit_s)
            except subprocess.TimeoutExpired:
                timed_out = True
            _kill_group(proc.pid)  # the program and anything it left running
            returncode = proc.wait()
            elapsed_s = time.monotonic() - started
        return SandboxResult(returncode, timed_out, elapsed_s, _tail(root / "stdout.txt", output_chars),
                             _tail(root / "stderr.txt", output_chars))
