#!/usr/bin/env bash
# Runs every benchmark executable of a build folder and prints their ratio lines. Benchmarks
# write their scratch files under NUMPROBE_BENCH_DIR (default: BUILD/bench-data).
set -euo pipefail
build=${1:?usage: scripts/bench.sh BUILD_DIR}
export NUMPROBE_BENCH_DIR=${NUMPROBE_BENCH_DIR:-$build/bench-data}
mkdir -p "$NUMPROBE_BENCH_DIR"
status=0
for exe in "$build"/bench/*_bench; do
  [ -x "$exe" ] || continue
  echo "== $(basename "$exe")"
  "$exe" || status=1
done
if [ -d "$build/python/numprobe" ]; then
  echo "== capture_bench.py"
  PYTHONPATH="$build/python" /usr/bin/python3 "$(dirname "$0")/../bench/capture_bench.py" || status=1
  echo "== precheck_bench.py"
  PYTHONPATH="$build/python" /usr/bin/python3 "$(dirname "$0")/../bench/precheck_bench.py" || status=1
fi
if [ -d "$build/python/numprobe" ] && [ -x "$build/tools/numprobe/numprobe" ]; then
  echo "== verdict_bench.py"
  PYTHONPATH="$build/python" /usr/bin/python3 "$(dirname "$0")/../bench/verdict_bench.py" \
    "$build/tools/numprobe/numprobe" || status=1
fi
if [ -x "$build/tools/numprobe/numprobe" ] && [ -x "$build/bench/sax_pass" ]; then
  echo "== large_stats_bench.py"
  /usr/bin/python3 "$(dirname "$0")/../bench/large_stats_bench.py" \
    "$build/tools/numprobe/numprobe" "$build/bench/sax_pass" || status=1
fi
if [ -x "$build/tools/numprobe/numprobe" ]; then
  echo "== cluster_bench.py"
  /usr/bin/python3 "$(dirname "$0")/../bench/cluster_bench.py" "$build/tools/numprobe/numprobe" \
    || status=1
fi
echo "== all benchmark lines:"
exit $status
