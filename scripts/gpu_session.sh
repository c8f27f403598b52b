#!/usr/bin/env bash
# The prepared GPU session (issue 21): in one run of at most 9 minutes on one H200,
#   1. the autoregressive twin, trained with fill-in-the-middle (PSM and SPM at --fim-rate 0.5,
#      `infill.fim_ar`) and a share of windows with `<|snippet|>` context;
#   2. its adaptation to masked diffusion on the product's objective: one to three padded holes
#      per window, a share of windows with the snippets the language server would send
#      (`training.snippet_data`: definitions of the names near a cursor, found in the other files of
#      the same package, from training files only), and edit canvases when there are some; a
#      quarter of each batch kept on next-token loss with the same weights (`--ar-share`, the
#      joint objective: scripts/compare_objectives.sh measured it best of three at 3M parameters);
#   3. the `gpu` tests and `python -m bench.gpu` (scripts/gpu_check.sh) on the new model;
#   4. both models stored int8 with per-channel scales (`infill.int8_store`, read by
#      `infill.checkpoint.load_model`), packed with the logs in what comes back.
# With INIT_MODEL=FOLDER at --prepare (e.g. work/models-away/infill-py-16m, stored int8 for the
# trip), the session continues that model instead: no AR phase, every minute on step 2 at
# DIFFUSION_LR 3e-4, brought back as FOLDER's name + "-next". The first session (2026-12-04) is why:
# its 9 minutes trained a 25M model from scratch to the bundled 16M's quality (263M tokens against
# 404M); continuing the 16M adds ~320M tokens at 837k tokens/s (Chinchilla L(N, D) 4.74 -> ~4.51,
# where the new 25M model's 263M tokens give 4.86; an upper bound: to make room for the model, the
# first 60M training tokens travel by default, so each is seen about 5 times).
#
#   scripts/gpu_session.sh --prepare [CORPUS]    # here, before: work/gpu-session/, work/gpu-pylib.zip
#   scripts/gpu_session.sh                       # on the GPU machine (the device tool's command)
#   scripts/gpu_session.sh --unpack RESULTS      # here, after: the models into models/, logs into $BACK
#   GPU_SESSION_TINY=1 scripts/gpu_session.sh    # tiny sizes on the CPU (tests/test_gpu_session.py)
#
# The device tool's command (the tracked models are left out of the trip, as in the last run):
#   run(command="scripts/gpu_session.sh", carry=["work/gpu-session", "work/gpu-pylib.zip"], timeout_s=600)
# What comes back, in $OUT (at most 8 files of 16 MiB, 64 MiB together; the script checks):
#   NAME-ar.tar.part-*, NAME.tar.part-* (two pieces each), check.tar, session.log, summary.txt
#
# Size and tokens, by arithmetic from the last run (infill-py-16m: 930k tokens/s autoregressive,
# 837k diffusion, bf16 on an H200). Training FLOPs per token ~ 6N + 12·L·T·d (attention; half of
# it when causal): 113M (AR) and 132M (diffusion) for the 16M model, so ~105-110 TFLOP/s were
# achieved (~14% of the H200's bf16 peak). Of the 9 minutes, ~1.9 go to start-ups, packing and
# the GPU check, leaving 3.2 minutes of AR and 2.8 of diffusion training. At the same TFLOP/s:
#   | d / layers / FFN | params | AR tok/s | diff. tok/s | tokens (AR + diff.) | Chinchilla L(N, D) |
#   | 384 / 8 / 1024   | 15.7M  | 930k     | 837k        | 179M + 141M = 320M  | 4.848 |
#   | 512 / 8 / 1280   | 25.2M  | 597k     | 547k        | 115M +  92M = 207M  | 4.856 |
#   | 512 / 10 / 1280  | 30.4M  | 491k     | 449k        |  94M +  75M = 169M  | 4.891 |
# (L = 1.69 + 406.4/N^0.34 + 410.7/D^0.28, Hoffmann et al. 2022, only a guide at this size; the
# last run, 15.7M at 404M tokens: 4.741.) The ~3.8e16 FLOP of 6 minutes are Chinchilla-optimal
# near 18M parameters: a model 2-3x the current one at *more* tokens does not fit these 9 minutes;
# it needs more minutes or more TFLOP/s (torch.compile, not tried on this GPU). The defaults take
# the 25.2M shape (1.6x; 65,536 tokens a step, ~1,750 AR and ~1,400 diffusion steps): within 0.01
# of the current shape's predicted loss in this budget, wider matrices (a better share of the
# peak), 1.6x the CPU cost of a decoding step, and two int8 models of ~26 MB that come back with
# room to spare. LAYERS=10 gives the 30.4M shape (two models of ~31 MB, still within the limits).
#
# int8 storage against fp16, measured on the CPU with the current bundled model stored both ways
# (`python -m training.bundle models/infill-py-16m infill-py-16m-int8 --models work/int8 --int8`,
# 15.9 MB against 31.5 MB, decoder.json copied beside it), fp16 / int8:
#   diffusion validation loss (`training.train.validate`, 64 held-out windows, fp32 compute): 0.3906 / 0.3906
#   held-out lines (`training.heldout --count 200`), `bench.quality --mode single_line --max-tokens 32
#     --threads 1 --model M`: exact 6.5% / 5.5%, edit sim. 0.562 / 0.557 (the worker's int8 compute);
#     with `--weights fp32`: exact 7.5% / 7.5%, edit sim. 0.5623 / 0.5619
#   HumanEval single-line (all 1,033, same flags and `--jobs 1`, int8 compute): pass@1 7.84% / 8.23%,
#     exact 5.32% / 5.52%, edit sim. 0.5772 / 0.5771
# Storing int8 costs nothing measurable: the loss is the same to four places, fp32 compute gives
# the same exact matches, and under the worker's int8 compute (which quantizes the stored weights
# again, per tensor) 2 of 200 held-out lines were lost and 4 of 1,033 HumanEval passes gained.
#
# Safety (issue 31): a preflight first (scripts/gpu_preflight.py, ~5-15 s: the imports in one
# Python call, CUDA asserted, one row-statistics and one commit on CUDA tensors) written to
# $OUT/preflight.txt line by line, the session stopping there when CUDA or an import is missing;
# the training minutes derived from the time left (SESSION_SECONDS less RESERVE_SECONDS for packing
# and the check, AR_SHARE_OF_TIME to the AR phase) unless AR_MINUTES / DIFFUSION_MINUTES are set;
# PYTHONUNBUFFERED=1 and `timeout --signal=INT` so a cut run keeps its output; the diffusion model
# saved at 90% of its minutes (training.train) and packed even when the phase is cut; a pyzmq
# wheel for the GPU's Python carried when --prepare could fetch one (the worker's socket).
#
# Knobs (environment): NAME=infill-py-25m HIDDEN=512 LAYERS=8 HEADS=8 KV_HEADS=2 FFN=1280 SEQ_LEN=1024
# BATCH=64 AR_MINUTES, DIFFUSION_MINUTES (default: from the time left) RESERVE_SECONDS=120
# AR_SHARE_OF_TIME=0.53 AR_LR=1.5e-3 DIFFUSION_LR=7.5e-4 FIM_RATE=0.5
# FIM_SPM=0.5 AR_SNIPPET_SHARE=0.25 SNIPPET_SHARE=0.3 CANVAS_SHARE=0.15 AR_SHARE=0.25 SESSION_SECONDS=540
# VAL_TOKENS=262144 TRAIN_TOKENS=92000000 INIT_MODEL (--prepare: validation and training tokens sent,
# a model to continue)
# THREADS=8 DEVICE=(cuda when present) IN=work/gpu-session OUT=work/gpu-session-out
# BACK=work/gpu-session-back RUNS=work/runs/gpu-session.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
in=${IN:-work/gpu-session}
out=${OUT:-work/gpu-session-out}
back=${BACK:-work/gpu-session-back}
piece_bytes=$((16 * 1024 * 1024 - 65536))
export PYTHONUNBUFFERED=1  # a cut run keeps every line it printed
if [ -n "${GPU_SESSION_TINY:-}" ]; then  # the CPU test: every step, at sizes that take seconds
  : "${NAME:=tiny}" "${HIDDEN:=32}" "${LAYERS:=2}" "${HEADS:=4}" "${KV_HEADS:=2}" "${FFN:=64}" "${SEQ_LEN:=64}"
  : "${BATCH:=4}" "${AR_MINUTES:=0.03}" "${DIFFUSION_MINUTES:=0.03}" "${THREADS:=1}" "${DEVICE:=cpu}"
  : "${EVAL_EVERY:=5}" "${SESSION_SECONDS:=900}"
  export GPU_CHECK_TINY=1
fi
continuing=""
if [ -f "$in/init/config.json" ]; then continuing=yes; fi  # --prepare put a model to continue (INIT_MODEL) there
name=${NAME:-$(cat "$in/init_name.txt" 2>/dev/null || echo infill-py-25m)}
seq_len=${SEQ_LEN:-1024}

prepare() {  # prepare CORPUS: the session's inputs in $in, and pytest for the GPU machine
  local corpus=${1:-work/corpus}
  case "$seq_len" in
    ''|*[!0-9]*) echo "SEQ_LEN=$seq_len is not a whole number of tokens"; exit 1 ;;
  esac
  if [ "$seq_len" -lt 64 ] || [ "$seq_len" -gt 4096 ] || [ $((seq_len % 64)) -ne 0 ]; then
    echo "SEQ_LEN=$seq_len: use a multiple of 64 between 64 and 4096"; exit 1
  fi
  local present="" f
  while read -r f; do  # the first tracked model file still here (no `| head`: under pipefail its SIGPIPE is an exit 141)
    if [ -e "$f" ]; then present=$f; break; fi
  done < <(git ls-files models/ 2>/dev/null)
  if [ -z "${GPU_SESSION_TINY:-}" ] && [ -n "$present" ]; then  # tracked files travel: ~63 MB, no room left
    echo "models/ is still tracked and present ($present): it would travel and leave no room; move the" \
         "model folders aside (mkdir -p work/models-away && mv models/infill-py-16m* work/models-away/," \
         "as README's GPU section says), then --prepare again"
    exit 1
  fi
  mkdir -p "$in"
  if [ -e "$in/init" ] && [ ! -f "$in/init_name.txt" ]; then  # init_name.txt marks the folder as --prepare's own
    echo "$in/init is there but --prepare did not write it: move it away first"; exit 1
  fi
  echo "$seq_len" > "$in/seq_len.txt"  # the session trains at the length the snippets were cut for
  cp "$corpus/tokenizer.json" "$in/"
  # validation draws 64 windows: the first VAL_TOKENS of val.bin are plenty, and leave room for canvases
  head -c $((2 * ${VAL_TOKENS:-262144})) "$corpus/val.bin" > "$in/val.bin"
  : > "$in/val_files.jsonl"  # the quick FIM check is off on the GPU (--fim-tasks 0): no held-out text travels
  # the first N training tokens travel: 92M leave ~5 MiB for canvases, 60M room for a 16M model to continue
  local tokens=${TRAIN_TOKENS:-$( [ -n "${INIT_MODEL:-}" ] && echo 60000000 || echo 92000000)}
  if [ ! -f "$in/train.bin.xz" ] || [ "$corpus/train.bin" -nt "$in/train.bin.xz" ] \
     || [ "$(cat "$in/train_tokens.txt" 2>/dev/null)" != "$tokens" ]; then
    head -c $((2 * tokens)) "$corpus/train.bin" | nice -n 19 "$python" -c 'import lzma, shutil, sys; shutil.copyfileobj(sys.stdin.buffer, lzma.open(sys.argv[1], "wb", preset=6), 1 << 24)' \
      "$in/train.bin.xz"
    echo "$tokens" > "$in/train_tokens.txt"
  fi
  nice -n 19 "$python" -m training.snippet_data --corpus "$corpus" --wheels "${WHEELS:-$corpus/wheels}" \
    --seq-len "$seq_len" --out "$in/snippets.npz"
  if [ -n "${CANVASES:-}" ]; then  # edit canvases (JSONL) written here beforehand; they travel compressed
    "$python" -c 'import lzma, shutil, sys; shutil.copyfileobj(open(sys.argv[1], "rb"), lzma.open(sys.argv[2], "wb"))' \
      "$CANVASES" "$in/canvases.jsonl.xz"
  fi
  rm -rf "$in/init" "$in/init_name.txt"
  if [ -n "${INIT_MODEL:-}" ]; then  # continue this model folder (stored int8: ~16 MB for the 16M) instead of a new one
    "$python" -m training.bundle "$INIT_MODEL" init --models "$in" --int8
    echo "$(basename "$INIT_MODEL")-next" > "$in/init_name.txt"
  fi
  local decoder=models/${BASE_MODEL:-infill-py-16m}/decoder.json
  [ -f "$decoder" ] || decoder=work/models-away/${BASE_MODEL:-infill-py-16m}/decoder.json  # moved aside for the trip
  [ -f "$decoder" ] && cp "$decoder" "$in/decoder.json"
  [ -n "${GPU_SESSION_TINY:-}" ] || scripts/gpu_check.sh --vendor  # pytest's files, for a GPU machine without pytest
  if [ -z "${GPU_SESSION_TINY:-}" ] && ! ls "$in"/pyzmq-*.whl >/dev/null 2>&1; then  # the worker's socket there
    "$python" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
      --platform manylinux_2_28_x86_64 --dest "$in" "pyzmq==${PYZMQ_VERSION:-27.3.0}" \
      || echo "no pyzmq wheel fetched: the worker will not be tried on the GPU"
  fi
  # the device tool counts disk blocks, not bytes (66.9 MB of bytes, 64.8 MiB on disk, was refused): measure
  # those, for the tree (tracked and untracked files but models/) and what is carried, with 1 MiB to spare
  { git ls-files -z --cached --others --exclude-standard | grep -zv '^models/'; printf '%s\0' "$in"
    if [ -f work/gpu-pylib.zip ]; then printf '%s\0' work/gpu-pylib.zip; fi; } | du -ck --files0-from=- 2>/dev/null | tail -n 1 |
    awk '{ printf "to the GPU machine: %.1f MiB on disk (the limit 64 MiB, 63 with a margin)\n", $1 / 1024;
           if ($1 > 63 * 1024) { print "too much: send fewer tokens (TRAIN_TOKENS), snippets or canvases"; exit 1 } }'
}

unpack() {  # unpack RESULTS [MODELS]: the models into MODELS (default models/), logs and checks into $back
  local results=$1 models=${2:-models}
  mkdir -p "$back" "$models"
  for pieces in "$results"/*.tar.part-aa; do
    [ -f "$pieces" ] || continue
    cat "${pieces%aa}"* | tar -xf - -C "$back" || echo "$pieces: incomplete pieces, skipped"
  done
  if [ -f "$results/check.tar" ]; then tar -xf "$results/check.tar" -C "$back" || echo "check.tar: damaged"; fi
  for file in session.log summary.txt preflight.txt; do
    if [ -f "$results/$file" ]; then cp "$results/$file" "$back/"; else echo "$file: not in $results (the run was cut)"; fi
  done
  for model in "$back"/*/config.json; do
    [ -f "$model" ] || continue
    local folder
    folder=$(dirname "$model")
    [ -e "$models/$(basename "$folder")" ] && { echo "$models/$(basename "$folder") exists: move it away first"; exit 1; }
    mv "$folder" "$models/"
    "$python" -c 'import sys; from infill.checkpoint import load_model; m = load_model(sys.argv[1]); c = m.cfg
print(f"{sys.argv[1]}: {c.num_params():,} parameters, causal {c.causal}, snippets {c.snippet_context}, FIM {c.fim_sentinels}")' \
      "$models/$(basename "$folder")"
  done
}

case "${1:-}" in
  --prepare) prepare "${2:-}"; exit ;;
  --unpack) unpack "$2" "${3:-}"; exit ;;
esac

session_started=$SECONDS
deadline=$((session_started + ${SESSION_SECONDS:-540}))
runs=${RUNS:-work/runs/gpu-session}
mkdir -p "$out" "$runs/bundled"
exec > >(tee -a "$out/session.log") 2>&1
for wheel in "$in"/pyzmq-*.whl; do  # the worker's socket, unpacked where Python (the preflight too) finds it
  [ -f "$wheel" ] || continue
  "$python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$runs/pylib"
  export PYTHONPATH="$PWD/$runs/pylib${PYTHONPATH:+:$PYTHONPATH}"
done
preflight_flags=()
[ -n "${GPU_SESSION_TINY:-}" ] && preflight_flags=(--cpu)
if ! "$python" scripts/gpu_preflight.py "$out/preflight.txt" "${preflight_flags[@]}"; then
  cat "$out/preflight.txt"
  echo "preflight failed at $((SECONDS - session_started)) s: nothing trained (see preflight.txt)" | tee "$out/summary.txt"
  exit 1
fi
echo "preflight passed at $((SECONDS - session_started)) s"
row_choice=$(sed -n 's/.*row_stats=\(numba\|torch\)$/\1/p' "$out/preflight.txt" | tail -n 1)
export INFILL_CUDA_ROW_STATS=${INFILL_CUDA_ROW_STATS:-${row_choice:-numba}}
if [ -f "$in/seq_len.txt" ] && [ "$(cat "$in/seq_len.txt")" != "$seq_len" ]; then
  echo "SEQ_LEN=$seq_len but the inputs were prepared at $(cat "$in/seq_len.txt"): set SEQ_LEN=$(cat "$in/seq_len.txt")"
  exit 1
fi
device_flag=()
[ -n "${DEVICE:-}" ] && device_flag=(--device "$DEVICE")
shape=(--hidden "${HIDDEN:-512}" --layers "${LAYERS:-8}" --heads "${HEADS:-8}" --kv-heads "${KV_HEADS:-2}"
       --ffn "${FFN:-1280}" --seq-len "$seq_len" --batch "${BATCH:-64}")
common=(--corpus "$in" --threads "${THREADS:-8}" --tokens 1e12 --eval-every "${EVAL_EVERY:-200}"
        --save-every 1000000 --fim-tasks 0 --snippets "$in/snippets.npz" "${device_flag[@]}")

unxz() {  # unxz FILE.xz: FILE, unless it is there
  [ -f "${1%.xz}" ] || "$python" -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"), 1 << 24)' \
    "$1" "${1%.xz}"
}

canvas_flags() {  # the diffusion phase's edit canvases (`training.edit_canvases`), when some travelled
  [ -f "$in/canvases.jsonl.xz" ] || { echo "edit canvases: none in $in (skipped)" >&2; return; }
  unxz "$in/canvases.jsonl.xz"
  echo "edit canvases: $in/canvases.jsonl at share ${CANVAS_SHARE:-0.15}" >&2
  echo "--canvases $in/canvases.jsonl --canvas-share ${CANVAS_SHARE:-0.15}"
}

pack() {  # pack MODEL RUN: the run's model stored int8, with its training log, in pieces for the trip
  local model=$1 run=$2
  [ -f "$run/model/config.json" ] || { echo "pack $model: no model saved in $run (cut before its first save)"; return; }
  rm -rf "${runs:?}/bundled/$model"  # packed again after the early pack of its 90% save
  "$python" -m training.bundle "$run/model" "$model" --models "$runs/bundled" --int8
  [ -f "$in/decoder.json" ] && [ "$model" = "$name" ] && cp "$in/decoder.json" "$runs/bundled/$model/"
  cp "$run/log.jsonl" "$runs/bundled/$model.log.jsonl"
  # the pieces are written aside and renamed into place: a session cut while packing leaves whole pieces
  rm -rf "$out/.packing"
  mkdir -p "$out/.packing"
  tar -cf - -C "$runs/bundled" "$model" "$model.log.jsonl" | split -b "$piece_bytes" - "$out/.packing/$model.tar.part-"
  rm -f "$out/$model".tar.part-*
  mv "$out/.packing/$model".tar.part-* "$out/"
  rmdir "$out/.packing"
  echo "packed $model at $((SECONDS - session_started)) s: $(du -cb "$out/$model".tar.part-* | tail -n 1 | cut -f1) bytes"
}

check() {  # the gpu tests and bench.gpu on the new model, in the time left
  local left=$((deadline - SECONDS - 10))
  if [ "$left" -lt 30 ]; then
    echo "gpu check: skipped, ${left} s left" | tee "$runs/check-skipped.txt"
    tar -cf "$out/check.tar" -C "$runs" check-skipped.txt
    return
  fi
  OUT="$runs/check" INFILL_MODEL="$runs/bundled/$name" TESTS_TIMEOUT=$((left * 2 / 5)) \
    BENCH_TIMEOUT=$((left * 3 / 5 - 5)) PYTHON="$python" scripts/gpu_check.sh || echo "gpu check: rc $?"
  tar -cf "$out/check.tar" -C "$runs" check
}

summary() {  # what comes back, checked against the limits
  local files bytes
  files=$(($(find "$out" -maxdepth 1 -type f ! -name summary.txt | wc -l) + 1))  # and summary.txt
  bytes=$(du -cb "$out" | tail -n 1 | cut -f1)
  { echo "session: $((SECONDS - session_started)) s of ${SESSION_SECONDS:-540}"
    echo "back: $files files, $bytes bytes (limits: 8 files of 16 MiB, 67108864 bytes)"
    [ -f "$runs/check/summary.txt" ] && cat "$runs/check/summary.txt"
    [ "$files" -le 8 ] && [ "$bytes" -le 67108864 ] || echo "OVER THE LIMITS: bring back less"
  } | tee "$out/summary.txt"
}

minutes_left() {  # minutes_left SHARE: that share of the training time left before the reserve, in minutes
  awk -v left=$((deadline - SECONDS - ${RESERVE_SECONDS:-120})) -v share="$1" \
    'BEGIN { m = left * share / 60; printf "%.2f", (m < 0.05 ? 0.05 : m) }'
}
until_deadline() {  # until_deadline CMD...: CMD, interrupted (SIGINT: it saves and prints) at the deadline
  local left=$((deadline - SECONDS - 5))
  [ "$left" -gt 1 ] || left=1
  timeout --signal=INT --kill-after=20 "$left" "$@"
}

echo "gpu session: $name, $(date -u +%FT%TZ)"
unxz "$in/train.bin.xz"
if [ -n "$continuing" ]; then  # its shape and its training so far: every minute goes to the product's objective
  echo "AR phase: skipped, continuing $in/init"
  start_from=$in/init
else
  ar_minutes=${AR_MINUTES:-$(minutes_left "${AR_SHARE_OF_TIME:-0.53}")}
  echo "AR phase: $ar_minutes minutes"
  until_deadline "$python" -m training.train --phase ar --out "$runs/ar" "${shape[@]}" "${common[@]}" \
    --fim-rate "${FIM_RATE:-0.5}" --fim-spm "${FIM_SPM:-0.5}" --snippet-share "${AR_SNIPPET_SHARE:-0.25}" \
    --lr "${AR_LR:-1.5e-3}" --warmup 100 --minutes "$ar_minutes" || echo "AR phase: rc $?"
  pack "$name-ar" "$runs/ar"
  start_from=$runs/ar/model
fi
read -r -a canvases <<< "$(canvas_flags)"
diffusion_minutes=${DIFFUSION_MINUTES:-$(minutes_left 1)}
echo "diffusion phase: $diffusion_minutes minutes"
rm -f "$runs/diffusion.done"
(  # the model saved at 90% of the minutes goes into $out at once: a session cut after it keeps it
  while [ ! -f "$runs/diffusion.done" ]; do
    if [ -f "$runs/diffusion/model/tokenizer.json" ]; then pack "$name" "$runs/diffusion"; exit; fi
    sleep 1
  done
) &
early_pack=$!
until_deadline "$python" -m training.train --phase diffusion --init "$start_from" --out "$runs/diffusion" \
  --seq-len "$seq_len" --batch "${BATCH:-64}" "${common[@]}" --snippet-share "${SNIPPET_SHARE:-0.3}" \
  "${canvases[@]}" --ar-share "${AR_SHARE:-0.25}" --lr "${DIFFUSION_LR:-$( [ -n "$continuing" ] && echo 3e-4 || echo 7.5e-4)}" --warmup 50 \
  --minutes "$diffusion_minutes" || echo "diffusion phase: rc $? (its model as last saved is packed)"
touch "$runs/diffusion.done"
wait "$early_pack" || true
pack "$name" "$runs/diffusion"
check
summary
