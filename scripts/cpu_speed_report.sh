#!/usr/bin/env bash
# The CPU speed figures of docs/results/cpu_measurements.md, "Speed on a CPU", each printed with its ratios by the
# repo's own bench commands. "eager" is the physics step as Isaac Lab 3.0 runs it on a CPU (no graph),
# the project's state before the CPU graph replay; every other row is the default now.
# Takes about 15 minutes on a 2-core CPU; run it with nothing else on the cores.
set -euo pipefail
cd "$(dirname "$0")/.."
LAB=".venv/bin/linkage-lab"
EAGER="eager:env.sim.physics.use_cuda_graph=false"
OUT="${1:-outputs/bench}"
mkdir -p "$OUT"

for task in LinkageLab-Velocity-Flat-Limit LinkageLab-Velocity-Flat-Marvin; do
  echo "== env-steps/s, zero actions: $task"
  "$LAB" bench env --task "$task" --num-envs 64 256 --steps 100 --variant "$EAGER" --variant graph: | tee "$OUT/env_$task.txt"
done

echo "== PPO iteration: Limit, 256 envs, eager 1 process vs graph 1 and 2 processes"
"$LAB" bench train --task LinkageLab-Velocity-Flat-Limit --num-envs 256 --workers 1 2 --iterations 4 --warmup 1 \
  --variant "$EAGER" --variant graph: --out "$OUT" | tee "$OUT/train_limit.txt"

echo "== PPO iteration: Marvin, 256 envs, the same rows"
"$LAB" bench train --task LinkageLab-Velocity-Flat-Marvin --num-envs 256 --workers 1 2 --iterations 3 --warmup 1 \
  --variant "$EAGER" --variant graph: --out "$OUT" | tee "$OUT/train_marvin.txt"

echo "== distance to plain MuJoCo: Limit"
"$LAB" bench physics --task LinkageLab-Velocity-Flat-Limit --num-envs 256 | tee "$OUT/physics_limit.txt"

for task in LinkageLab-Velocity-Flat-Limit LinkageLab-Velocity-Flat-Marvin; do
  echo "== where an env step goes: $task (graph, then eager for the kernel groups)"
  "$LAB" bench env --task "$task" --num-envs 64 256 --steps 60 --profile --out "$OUT/profile_graph"
  "$LAB" bench env --task "$task" --num-envs 64 256 --steps 60 --profile --out "$OUT/profile_eager" \
    env.sim.physics.use_cuda_graph=false
done
