#!/usr/bin/env bash
# The browser tests on the end-to-end demo's compare: runs scripts/demo.sh (reduced size), then
# serve.test.mjs and report.test.mjs with the demo's tensor-mode target and baseline dumps and its
# planted op (runs/target.json) as what the overview must name.
#   NUMPROBE_BIN=... NUMPROBE_SOURCE_DIR=... NUMPROBE_NODE=... tests/browser/on_demo.sh
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! bash "$NUMPROBE_SOURCE_DIR/scripts/demo.sh" "$NUMPROBE_BIN" "$work/demo" --small \
    >"$work/demo.log" 2>&1; then
  cat "$work/demo.log" >&2
  exit 1
fi
NUMPROBE_UI_EXPECT_OP=$(/usr/bin/python3 -c \
  'import json, sys; print(json.load(open(sys.argv[1]))["planted"]["op"])' \
  "$work/demo/runs/target.json")
export NUMPROBE_UI_EXPECT_OP
export NUMPROBE_UI_TARGET="$work/demo/dumps/target_tensor"
export NUMPROBE_UI_GOLDEN="$work/demo/dumps/baseline_tensor"
here=$(cd "$(dirname "$0")" && pwd)
"${NUMPROBE_NODE:-node}" --test --test-concurrency=1 "$here/serve.test.mjs" "$here/report.test.mjs"
