#!/usr/bin/env bash
# `make train`: execute the parameterised run notebook with its defaults (PPO on CartPole) through papermill and
# say where the executed notebook, the report and the checkpoint are.
set -euo pipefail
cd "$(dirname "$0")/.."
source .venv/bin/activate
out="${1:-runs/train}"
mkdir -p "$out"
export WANDB_MODE="${WANDB_MODE:-disabled}"
set +e
papermill papermill_runs/train.ipynb "$out/train.ipynb" -p out_dir "$out" --log-output 2> >(grep -vE "Kernel is running over TCP|KeyboardInterrupt caught" >&2)
rc=$?
set -e
[ $rc -eq 0 ] || { echo "make train: the run notebook failed (rc $rc); see $out/train.ipynb"; exit $rc; }
echo
echo "make train finished:"
echo "  executed notebook: $out/train.ipynb"
for f in report.html checkpoint.pt metrics.json metrics.csv learning_curve.png; do
  [ -e "$out/$f" ] && printf '  %-17s  %s\n' "$f:" "$out/$f"
done
true
