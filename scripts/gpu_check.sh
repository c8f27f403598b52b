#!/usr/bin/env bash
# The prepared GPU check: the `gpu` tests and `python -m bench.gpu --json`, in under 8 minutes,
# installing nothing. Outputs go to $OUT (the device tool's output folder; default work/gpu-check):
# imports.txt, env.txt, pytest.txt, bench.txt, bench.json, summary.txt.
#
#   scripts/gpu_check.sh --vendor           # here, before: pytest's pure-Python files -> work/gpu-pylib.zip
#   scripts/gpu_check.sh                    # on the GPU machine (carry work/gpu-pylib.zip if it lacks pytest)
#   GPU_CHECK_TINY=1 scripts/gpu_check.sh   # on the CPU: bench.gpu --tiny; the gpu tests skip themselves
#
# The GPU machine has torch, numba, numba-cuda, msgpack, tokenizers and safetensors but no network,
# no pyzmq/pygls/tree-sitter, and maybe no pytest: the imports are checked first and what is missing
# is said. The bundled model (models/infill-py-16m) must travel; the AR twin is not used (see README).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-work/gpu-check}
python=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
pylib=work/gpu-pylib.zip

if [ "${1:-}" = "--vendor" ]; then
  mkdir -p work
  "$python" - "$pylib" <<'PY'
import pathlib, sys, zipfile, importlib.util
names = ["pytest", "_pytest", "pluggy", "iniconfig", "pygments", "packaging"]
site = pathlib.Path(importlib.util.find_spec("pytest").origin).parents[1]
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as zf:
    for entry in sorted(site.iterdir()):
        if entry.name.split("-")[0] in names or entry.name in names:
            for f in [entry] if entry.is_file() else sorted(entry.rglob("*")):
                if f.is_file() and "__pycache__" not in f.parts:
                    zf.write(f, f.relative_to(site))
print(f"{sys.argv[1]}: {pathlib.Path(sys.argv[1]).stat().st_size / 1e6:.1f} MB; carry it to the GPU machine")
PY
  exit $?
fi

mkdir -p "$out"
export PYTHONUNBUFFERED=1  # a cut run keeps every line printed so far
missing() {  # the modules of "$@" that do not import
  for module in "$@"; do "$python" -c "import $module" 2>/dev/null || echo "$module"; done
}
{
  echo "python: $("$python" --version 2>&1)"
  need=$(missing torch numba numba.cuda msgpack tokenizers safetensors)
  echo "missing (needed): ${need:-none}"
  if [ -n "$(missing pytest)" ] && [ -f "$pylib" ]; then
    export PYTHONPATH="$PWD/$pylib${PYTHONPATH:+:$PYTHONPATH}"
    echo "pytest: from $pylib"
  fi
  tests_missing=$(missing pytest)
  echo "missing (tests): ${tests_missing:-none}"
} | tee "$out/imports.txt"
need=$(missing torch numba numba.cuda msgpack tokenizers safetensors)
if [ -n "$need" ]; then
  echo "cannot run: install $need (this script installs nothing)" | tee "$out/summary.txt"
  exit 2
fi
model=${INFILL_MODEL:-models/infill-py-16m}  # scripts/gpu_session.sh points it at the model it trained
[ -f "$model/config.json" ] || echo "the bundled model is missing: bench.gpu needs $model" | tee -a "$out/imports.txt"

{ nvidia-smi 2>&1 | head -15
  "$python" -c 'import torch, numba; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available()); print("numba", numba.__version__); print(torch.cuda.get_device_name() if torch.cuda.is_available() else "no CUDA device")'
} > "$out/env.txt" 2>&1

tiny=()
[ -n "${GPU_CHECK_TINY:-}" ] && tiny=(--tiny)
tests_rc=skipped
if [ -z "$(missing pytest)" ]; then
  # tee: the session's log (what comes back first) holds each line as it is printed
  timeout --signal=INT --kill-after=15 "${TESTS_TIMEOUT:-180}" "$python" -m pytest -m gpu tests/test_gpu.py -q -rs \
    -p no:cacheprovider 2>&1 | tee "$out/pytest.txt"
  tests_rc=${PIPESTATUS[0]}
else
  echo "pytest is missing: run scripts/gpu_check.sh --vendor here and carry $pylib" > "$out/pytest.txt"
fi
timeout --signal=INT --kill-after=15 "${BENCH_TIMEOUT:-270}" "$python" -m bench.gpu --json "${tiny[@]}" 2>&1 \
  | tee "$out/bench.txt"
bench_rc=${PIPESTATUS[0]}
# bench.json: the final object, or (a run cut short) the sections that finished, marked partial
"$python" - "$out/bench.txt" "$out/bench.json" <<'PY'
import json, sys
report, sections = None, {}
for line in open(sys.argv[1], errors="replace"):
    try:
        value = json.loads(line)
    except ValueError:
        continue
    if isinstance(value, dict) and "section" in value:
        name = value.pop("section")
        sections.update(value.get("setup", {}) if name == "setup" else value)
    elif isinstance(value, dict):
        report = value
if report is None and sections:
    report = {**sections, "partial": True}
with open(sys.argv[2], "w") as out:
    out.write(json.dumps(report) + "\n" if report else "")
PY

{ echo "gpu tests: rc $tests_rc ($(tail -n 1 "$out/pytest.txt"))"
  echo "bench.gpu: rc $bench_rc ($( [ -s "$out/bench.json" ] && echo "bench.json written" || echo "no JSON: see bench.txt"))"
} | tee "$out/summary.txt"
[ "$tests_rc" = 0 ] || [ "$tests_rc" = skipped ] || exit 1
[ "$bench_rc" = 0 ]
