#!/usr/bin/env bash
# The parallel-commit objectives of issue 21, compared at equal tokens from one autoregressive model:
#   a  the adaptation to masked diffusion (today's recipe)
#   b  the same with a share of each batch kept on next-token loss (`infill train --ar-share`)
#   c  the adaptation on 2/3 of the tokens, then self-distillation with certainty forcing on the rest,
#      on the adapted model's own left-to-right answers (`infill distill`, `--phase distill`)
# and each judged by `bench.decode` (left to right, and `left_run` at four thresholds) on held-out
# 3-line holes and single lines.
#
#   scripts/compare_objectives.sh ARM...     ARM: a, b, c (train), eval-a, eval-b, eval-c (bench)
# Environment: BASE (the autoregressive model folder, default $OUT/ar/model), OUT (default
# work/objectives), TOKENS (each arm's budget, default 3e6), THREADS (1), AR_SHARE (0.25),
# TEACHER_HOLES (3000), CORPUS (work/corpus). Arms are resumable (`infill train` resumes from its
# state.pt; a finished arm is skipped) and two can run side by side, one per core.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
out=${OUT:-work/objectives}
base=${BASE:-$out/ar/model}
corpus=${CORPUS:-work/corpus}
tokens=${TOKENS:-3e6}
threads=${THREADS:-1}
common=(--corpus "$corpus" --seq-len 256 --batch 16 --threads "$threads" --eval-every 400 --save-every 100
        --fim-tasks 0)
adapt=(--phase diffusion --init "$base" --lr 1e-3 --warmup 50)

share() { "$python" -c "print(float('$tokens') * $1)"; }

train_arm() {  # name, then infill train's flags
  local run=$out/$1
  shift
  [ -f "$run/model/model.safetensors" ] && { echo "$run: done"; return; }
  "$python" -m infill.train --out "$run" "${common[@]}" "$@" 2> "$run.log" || { tail -n 5 "$run.log"; exit 1; }
  echo "$run: $(tail -n 1 "$run/log.jsonl")"
}

teacher() {  # the adapted model's own answers to holes of training files
  local file=$out/c-teacher.jsonl
  local have=0
  [ -f "$file" ] && have=$(wc -l < "$file")
  [ "$have" -ge "${TEACHER_HOLES:-3000}" ] && return
  "$python" -m infill.distill --corpus "$corpus" --model "$out/c-adapt/model" --threads "$threads" --batch 8 \
    --count $(( ${TEACHER_HOLES:-3000} - have )) --seed "$have" --out "$file" 2> "$out/c-teacher.log"
}

held_out() {  # the held-out sets, cut from the corpus's validation files
  [ -f "$out/lines.jsonl" ] || "$python" -m infill.heldout --val-files "$corpus/val_files.jsonl" --count 100 \
    --seed 0 --out "$out/lines.jsonl"
  [ -f "$out/lines3.jsonl" ] || "$python" -m infill.heldout --val-files "$corpus/val_files.jsonl" --count 60 \
    --lines 3 --seed 1 --out "$out/lines3.jsonl"
}

evaluate() {  # arm: bench.decode's curve on both held-out sets
  local model=$out/$1/model
  [ "$1" = c ] && model=$out/c/model
  held_out
  local configs=l2r-no-refresh,run-0.9-no-refresh,run-0.7-no-refresh,run-0.5-no-refresh,run-0.3-no-refresh
  "$python" -m bench.decode --tasks "$out/lines3.jsonl" --mode multi_line --max-tokens 64 --threads "$threads" \
    --model "$model" --configs "$configs" --json > "$out/eval-$1-lines3.txt"
  "$python" -m bench.decode --tasks "$out/lines.jsonl" --mode single_line --max-tokens 32 --threads "$threads" \
    --model "$model" --configs "$configs" --json > "$out/eval-$1-lines.txt"
  tail -n 1 "$out/eval-$1-lines3.txt" "$out/eval-$1-lines.txt"
}

mkdir -p "$out"
for arm in "$@"; do
  case $arm in
    a) train_arm a "${adapt[@]}" --tokens "$tokens" ;;
    b) train_arm b "${adapt[@]}" --tokens "$tokens" --ar-share "${AR_SHARE:-0.25}" ;;
    c) train_arm c-adapt "${adapt[@]}" --tokens "$(share 2/3)"
       teacher
       train_arm c --phase distill --init "$out/c-adapt/model" --teacher "$out/c-teacher.jsonl" \
         --tokens "$(share 1/3)" --lr 2e-4 --warmup 20 --certainty "${CERTAINTY:-0.5}" ;;
    eval-a|eval-b|eval-c) evaluate "${arm#eval-}" ;;
    *) echo "unknown arm $arm (a, b, c, eval-a, eval-b, eval-c)" >&2; exit 2 ;;
  esac
done
