#!/usr/bin/env bash
# The prepared GPU training run: autoregressive pretraining, then adaptation to masked diffusion,
# each inside a time budget, then both models bundled in fp16 and packed for the trip home.
#
#   scripts/train_gpu.sh CORPUS RESULTS
#
# CORPUS holds what `infill corpus build` wrote (tokenizer.json, val.bin, val_files.jsonl) and
# train.bin, or train.bin.xz when the token file had to travel compressed. RESULTS receives
# NAME-ar.tar.part-*, NAME.tar.part-* (pieces of at most 15 MiB) and train.log. Sizes and budgets
# come from the environment; the defaults are the GPU run (7.6 minutes of an H200 in all):
#   NAME=infill-py-16m HIDDEN=384 LAYERS=8 HEADS=6 KV_HEADS=2 FFN=1024 SEQ_LEN=1024 BATCH=64
#   AR_MINUTES=4.0 DIFFUSION_MINUTES=3.6 THREADS=8 DEVICE=(cuda if present)
# The CPU test (tests/test_train.py) runs it end to end at a tiny size.
set -euo pipefail

corpus=$1
results=$2
name=${NAME:-infill-py-16m}
python=${PYTHON:-python3}
runs=${RUNS:-work/runs/gpu}
models=${MODELS:-models}
device_flag=()
[ -n "${DEVICE:-}" ] && device_flag=(--device "$DEVICE")
shape=(--hidden "${HIDDEN:-384}" --layers "${LAYERS:-8}" --heads "${HEADS:-6}" --kv-heads "${KV_HEADS:-2}"
       --ffn "${FFN:-1024}" --seq-len "${SEQ_LEN:-1024}" --batch "${BATCH:-64}")
common=(--corpus "$corpus" --threads "${THREADS:-8}" --tokens 1e12 --eval-every "${EVAL_EVERY:-200}"
        --save-every 1000000 --fim-tasks 0 "${device_flag[@]}")

mkdir -p "$results" "$runs"
exec > >(tee -a "$results/train.log") 2>&1

if [ ! -f "$corpus/train.bin" ]; then
  "$python" -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"), 1 << 24)' \
    "$corpus/train.bin.xz" "$corpus/train.bin"
fi

pack() {  # pack NAME RUN: the run's model bundled in fp16, and its log, in pieces small enough to travel
  local model=$1 run=$2
  "$python" -m training.bundle "$run/model" "$model" --models "$models"
  tar -cf - -C "$models" "$model" -C "$run" log.jsonl | split -b 15M - "$results/$model.tar.part-"
}

"$python" -m training.train --phase ar --out "$runs/ar" "${shape[@]}" "${common[@]}" \
  --lr "${AR_LR:-2e-3}" --warmup 100 --minutes "${AR_MINUTES:-4.0}"
pack "$name-ar" "$runs/ar"

"$python" -m training.train --phase diffusion --init "$runs/ar/model" --out "$runs/diffusion" \
  --seq-len "${SEQ_LEN:-1024}" --batch "${BATCH:-64}" "${common[@]}" \
  --lr "${DIFFUSION_LR:-1e-3}" --warmup 50 --minutes "${DIFFUSION_MINUTES:-3.6}"
pack "$name" "$runs/diffusion"
echo "done: $(ls "$results")"
