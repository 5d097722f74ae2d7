#!/usr/bin/env bash
# The end-to-end demo. A small transformer block is trained a few steps on synthetic data on CPU
# and captured with numprobe's PrecisionDebugger (statistics task at level mix over every step,
# tensor task over the first step): a baseline run, a target run with one planted precision bug,
# and a run that goes NaN. Then numprobe compares the target against the baseline, scans the NaN
# run, diffs the final weights and compares the two runs' configurations; the summary at the end
# names the planted op and the op that first produced the NaN, and the demo fails (exit 1) unless
# numprobe found exactly those. Everything is written under OUT_DIR.
#
#   scripts/demo.sh NUMPROBE_BIN OUT_DIR [--small]
#
# --small: the reduced size that `make test` runs. The Python package is taken from the build
# folder of NUMPROBE_BIN (BUILD/tools/numprobe/numprobe -> BUILD/python) unless
# NUMPROBE_PYTHONPATH names another folder.
set -euo pipefail
usage="usage: scripts/demo.sh NUMPROBE_BIN OUT_DIR [--small]"
bin=${1:?$usage}
out=${2:?$usage}
size=${3:-}
if [[ -n "$size" && "$size" != --small ]]; then
  echo "$usage" >&2
  exit 2
fi
py=/usr/bin/python3  # Debian's interpreter: the one that sees torch and numpy
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
pydir=${NUMPROBE_PYTHONPATH:-$(dirname "$(dirname "$(dirname "$bin")")")/python}
if ! compgen -G "$pydir/numprobe/_numprobe*.so" >/dev/null; then
  echo "demo: no numprobe Python module under $pydir (build the _numprobe target)" >&2
  exit 2
fi
export PYTHONPATH="$pydir${PYTHONPATH:+:$PYTHONPATH}"
start=$SECONDS

rm -rf "$out"
mkdir -p "$out/samples" "$out/logs"
out=$(cd "$out" && pwd)

# numprobe's own subcommands; those not in this build are skipped and reported as such.
has() { "$bin" --help | grep -q "^  $1 "; }
# Runs numprobe, keeping its output in logs/NAME.log; exit 0 or 1 (findings) is success.
np() {
  local name=$1
  shift
  echo "\$ numprobe ${*//$out\//}"
  local rc=0
  "$bin" "$@" >"$out/logs/$name.log" 2>&1 || rc=$?
  sed "s|$out/||g" "$out/logs/$name.log"
  if ((rc > 1)); then
    echo "demo: numprobe $1 failed with exit code $rc" >&2
    exit 1
  fi
  echo
}

echo "== Sample tensor files, and the training runs (captured with numprobe.pytorch)"
$py "$here/make_demo_samples.py" "$out/samples" >"$out/logs/samples.log" 2>&1 &
samples_pid=$!
$py "$here/demo/runs.py" "$out" $size
wait "$samples_pid" || { cat "$out/logs/samples.log" >&2; exit 1; }
echo
np inspect inspect "$out/samples"

echo "== Where does the target run start to diverge from the baseline?"
np compare_statistics compare -tp "$out/dumps/target" -gp "$out/dumps/baseline" \
  -o "$out/compare/statistics"
np compare_tensor compare -tp "$out/dumps/target_tensor" -gp "$out/dumps/baseline_tensor" \
  -o "$out/compare/tensor"

if has scan; then
  echo "== Which op first produced the NaN?"
  np scan scan "$out/dumps/nan" -o "$out/scan"
fi

if has precheck; then
  echo "== Which APIs lose precision, without a baseline? (precheck of the target run's first step)"
  for task in statistics tensor; do
    name=target
    [[ $task == tensor ]] && name=target_tensor
    dumps=("$out/dumps/$name"/step0/*/dump.json)
    np precheck_$task precheck -api_info "${dumps[0]}" -o "$out/precheck/$task"
  done
  echo "== What would fp16 break? (the static plan, from the fp32 baseline's statistics)"
  np precheck_plan precheck --plan fp16 "$out/dumps/baseline/step0" -o "$out/precheck/plan"
fi

if has diff; then
  echo "== Final weights, target vs baseline (the reference second, as in compare)"
  np diff diff "$out/weights/target/model.pt" "$out/weights/baseline/model.pt" -o "$out/diff"
fi

if has config-check; then
  echo "== Configurations of the two runs"
  mkdir -p "$out/config_check"
  for run in baseline target; do
    echo "\$ numprobe config-check collect -o config_check/$run.json" \
      "--config configs/$run/config.json --weights weights/$run/model.pt" \
      "-- python train.py --variant $run"
    "$bin" config-check collect -o "$out/config_check/$run.json" \
      --config "$out/configs/$run/config.json" --weights "$out/weights/$run/model.pt" \
      -- "$py" scripts/demo/train.py --variant "$run" >"$out/logs/collect_$run.log" 2>&1 &
  done
  for job in $(jobs -p); do
    wait "$job" || { cat "$out"/logs/collect_*.log >&2; exit 1; }
  done
  np config_check config-check compare "$out/config_check/target.json" \
    "$out/config_check/baseline.json" -o "$out/config_check"
fi

$py "$here/demo/summarize.py" "$out" --seconds $((SECONDS - start))
