#!/usr/bin/env bash
# Issue 6's GPU check in one shot, for a session that is lent a GPU machine (about 5-8 minutes there):
#   1. `bridgefleet bench` of `baseline` and `default` on CUDA (amp = fp16 autocast + GradScaler there),
#      1 seed, caps 150 / 3000 episodes: the same columns as the CPU table;
#   2. `default` with torch.compile (mode reduce-overhead: CUDA graphs) through `bridgefleet train`;
#   3. benchmarks/learner_throughput.py: the urban update in fp32, fp16 + GradScaler and compiled.
# It uses the machine's own PyTorch (the project's pin is for installs here); gymnasium and pettingzoo,
# missing from that image, come from wheels carried in .wheels/:
#   here:   pip download --no-deps -d .wheels gymnasium pettingzoo farama-notifications
#   there:  device `run` with carry [".wheels"]: bash benchmarks/gpu_check.sh   (results under $OUT)
# Dry run on a CPU: DEVICE=cpu TINY=1 OUT=/tmp/gpu-check bash benchmarks/gpu_check.sh
set -euo pipefail
DEVICE=${DEVICE:-cuda}
OUT=${OUT:-gpu-check}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
if ! "$PY" -c "import gymnasium, pettingzoo" 2>/dev/null; then
  "$PY" -m pip install -q --no-deps --no-index --find-links .wheels gymnasium pettingzoo farama-notifications
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
"$PY" -c "import torch; c = torch.cuda.is_available(); print('torch', torch.__version__, '| cuda', c, '|', torch.cuda.get_device_name() if c else 'no GPU')" | tee "$OUT/device.txt"

tiny=() episodes=3000 quick=()
if [[ -n "${TINY:-}" ]]; then tiny=(--tiny) episodes=64 quick=(--quick); fi

"$PY" -m bridgefleet.bench.measure --device "$DEVICE" --presets baseline,default --seeds 1 \
  --caps 1env=150,default=3000 --out "$OUT/bench" --quiet "${tiny[@]}" | tee "$OUT/bench.txt"

printf 'preset: default\ncompile: reduce-overhead\nepisodes: %s\nstop_at_target: true\n' "$episodes" > "$OUT/compiled.yaml"
rm -rf "$OUT/default-compiled"
"$PY" -m bridgefleet.cli train --config "$OUT/compiled.yaml" --device "$DEVICE" --out "$OUT/default-compiled" --quiet
"$PY" - "$OUT/default-compiled/summary.json" <<'EOF' | tee "$OUT/compiled.txt"
import json, sys
s = json.load(open(sys.argv[1]))
keys = ("episodes", "wall_seconds", "seconds_per_episode", "updates_per_second", "final_eval_return",
        "target_return", "episodes_to_target", "seconds_to_target", "device")
print("default + torch.compile(reduce-overhead):", ", ".join(f"{k} {s.get(k)}" for k in keys))
EOF

"$PY" benchmarks/learner_throughput.py --device "$DEVICE" "${quick[@]}" | tee "$OUT/learner.txt"
