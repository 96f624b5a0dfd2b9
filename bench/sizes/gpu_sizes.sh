#!/usr/bin/env bash
# The GPU rows of bench/sizes/run.py (issue 30) on a lent GPU machine, each size under a
# time limit, so a slow row cannot eat the device budget.
#
# Prepare HERE (where the embedded model, ../shared/data and PyPI are):
#     python -m bench.sizes.cuda_prep .gpu          # data, tokenizer, wheels (~50 MB)
# Then, on the GPU machine (device call with carry [".gpu"], timeout_s ~540):
#     bash bench/sizes/gpu_sizes.sh                 # or: SIZES=bert-base ROWS=attention512 bash ...
# The stand-ins are built there (seeded random weights: no carry; ~1 minute), the table and
# JSON go to $OUT (or /tmp/gpu_sizes). Set LIMIT (seconds per size, default 200).
set -u
OUT=${OUT:-/tmp/gpu_sizes}
mkdir -p "$OUT"
SIZES=${SIZES:-bert-base,bert-large}
ROWS=${ROWS:-attention128,attention512,noop,drift,syntax_heads,attribution128,attribution512,importance,reps_corpus,finetune}
LIMIT=${LIMIT:-200}
if [ -d .gpu/whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/whl/*.whl
  export PYTHONPATH=/tmp/site:$PWD
fi
export DASHBOARD_CACHE=/tmp/gpu_sizes_cache HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
export STANDIN_TOKENIZER=$PWD/.gpu/minilm
nvidia-smi --query-gpu=name,memory.total --format=csv 2>&1 | tee "$OUT/gpu.txt"
status=0
for size in ${SIZES//,/ }; do
  timeout "$LIMIT" python3 -m bench.sizes.standins "$size" 2>&1 | grep -v "Writing model" | tee -a "$OUT/log.txt"
  timeout "$LIMIT" python3 -m bench.sizes.run --data .gpu --sizes "$size" --rows "$ROWS" \
      --max-minutes "$(( LIMIT / 60 ))" --json "$OUT/sizes-$size.json" 2>&1 \
      | grep -v "Writing model" | tee -a "$OUT/log.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 124 ] && echo "$size: stopped at its ${LIMIT}s limit (rows after the last printed are unmeasured)" | tee -a "$OUT/log.txt"
  [ "$rc" != 0 ] && status=1
done
exit $status
