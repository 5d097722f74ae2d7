#!/usr/bin/env bash
# The end-to-end demo: writes sample tensor files with real numpy/torch and inspects them.
set -euo pipefail
bin=${1:?usage: scripts/demo.sh NUMPROBE_BIN OUT_DIR}
out=${2:?usage: scripts/demo.sh NUMPROBE_BIN OUT_DIR}
rm -rf "$out"
mkdir -p "$out/samples"
/usr/bin/python3 "$(dirname "$0")/make_demo_samples.py" "$out/samples"
echo "== numprobe inspect $out/samples"
"$bin" inspect "$out/samples"
echo
echo "demo outputs are under $out"
