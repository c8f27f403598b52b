#!/usr/bin/env bash
# Installs this tree as a user would, with pipx, and uses it from an empty folder: builds the
# wheel (from a copy of the tree, so no build/ folder lands in the checkout), `pipx install`s it
# into a scratch PIPX_HOME with the same pins as `make setup` (constraints-cpu.txt), then in an
# empty folder runs `infill run` until its self-check has passed and its gateway listens, asks
# the gateway for one completion, completes a small file with `infill complete`, stops the run
# and checks that the empty folder holds nothing the commands wrote. Exit status 0: all of it
# worked. Needs pipx on PATH, else installs it into the scratch folder (which is removed at the
# end). Usage: scripts/check_install.sh   (PORT and GATEWAY_PORT pick the ports: 2199, 8199)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
PORT=${PORT:-2199}
GATEWAY_PORT=${GATEWAY_PORT:-8199}
SCRATCH=$(mktemp -d -t infill-install-XXXXXX)
RUN_PID=
finish() {
  if [ -n "$RUN_PID" ]; then kill -INT "$RUN_PID" 2>/dev/null || true; wait "$RUN_PID" 2>/dev/null || true; fi
  rm -rf "$SCRATCH"
}
trap finish EXIT

echo "== building the wheel"
mkdir -p "$SCRATCH/src" "$SCRATCH/wheel"
tar --exclude=./.git --exclude=./.venv --exclude=./work --exclude=./editors --exclude=./tests --exclude=./build \
    --exclude=node_modules --exclude=__pycache__ --exclude='*.egg-info' --exclude='./models/*-ar' -cf - . \
  | tar -C "$SCRATCH/src" -xf -
"$PY" -m pip wheel --no-deps -q "$SCRATCH/src" -w "$SCRATCH/wheel"
WHEEL=$(ls "$SCRATCH"/wheel/infill-*.whl)
"$PY" -m zipfile -l "$WHEEL" | awk 'NR > 1 {split($1, p, "/"); print p[1]}' | sort | uniq -c

echo "== pipx install"
PIPX=$(command -v pipx || true)
if [ -z "$PIPX" ]; then
  python3 -m venv "$SCRATCH/pipx-venv" && "$SCRATCH/pipx-venv/bin/pip" install -q pipx
  PIPX="$SCRATCH/pipx-venv/bin/pipx"
fi
PIPX_HOME="$SCRATCH/pipx" PIPX_BIN_DIR="$SCRATCH/bin" PIPX_MAN_DIR="$SCRATCH/man" \
  "$PIPX" install "$WHEEL" --pip-args "-c $PWD/constraints-cpu.txt"
INFILL="$SCRATCH/bin/infill"

echo "== infill run in an empty folder"
mkdir -p "$SCRATCH/empty" "$SCRATCH/home"
cd "$SCRATCH/empty"
set -m  # job control: without it a background command ignores SIGINT, which stops `infill run`
HOME="$SCRATCH/home" "$INFILL" run --port "$PORT" --gateway-port "$GATEWAY_PORT" > "$SCRATCH/run.log" 2>&1 &
RUN_PID=$!
set +m
for _ in $(seq 600); do
  grep -q "^language server on" "$SCRATCH/run.log" && break
  kill -0 "$RUN_PID" 2>/dev/null || { cat "$SCRATCH/run.log"; echo "FAILED: infill run exited"; exit 1; }
  sleep 0.5
done
cat "$SCRATCH/run.log"
grep -q "^language server on" "$SCRATCH/run.log" || { echo "FAILED: no self-check within 300 s"; exit 1; }

echo "== the gateway's /v1/completions"
curl -sf -m 60 "http://127.0.0.1:$GATEWAY_PORT/v1/completions" -H 'content-type: application/json' \
  -d '{"prompt": "def add(a, b):\n    return ", "suffix": "\n", "max_tokens": 16}'
echo
kill -INT "$RUN_PID"
wait "$RUN_PID" || true
RUN_PID=

echo "== infill complete"
printf 'import math\n\n\ndef circle_area(radius):\n    return math.pi * \n' > area.py
HOME="$SCRATCH/home" "$INFILL" complete area.py --line 4 --col 21 --deadline-ms 10000
LEFT=$(ls -A)
[ "$LEFT" = "area.py" ] || { echo "FAILED: the commands wrote into the empty folder: $LEFT"; exit 1; }
echo "OK: pipx install, infill run's self-check, the gateway and infill complete, from an empty folder"
