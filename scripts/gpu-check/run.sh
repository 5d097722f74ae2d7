#!/bin/bash
# The GPU check (HACKING.md, "Capture on a GPU machine"): builds the Python module against the
# machine's Python and torch from what scripts/gpu-check/pack.sh packed, runs the capture tests
# there (CUDA ones included) and the CUDA rows of the capture bench (numprobe against msprobe on
# the same block and config). pytest-xdist and pytest-timeout are expected there.
#   scripts/gpu-check/run.sh CARRY_DIR [tests] [cudatests] [bench]
# Its log goes to $OUT/log.txt (OUT defaults to ./gpu-check-out); BLOCKS=mid|large|mid,large and
# BENCH_S (seconds) bound the bench.
set -u
W=$PWD
C=$(cd "$1" && pwd)
shift
OUT=${OUT:-$W/gpu-check-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
t_start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t_start )) s] $*"; }
stamp "env"
nvidia-smi -L
python3 --version
g++ --version | head -1
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
PYINC=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
ls "$PYINC/Python.h" || exit 3
EXT=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
B=$(mktemp -d)
mkdir -p "$B"/py
cp -r python/numprobe "$B"/py/
rm -rf "$B"/py/numprobe/__pycache__

# The module's own sources, with the definitions CMake gives them (the options pack.sh keeps on).
build() {  # $1: the pybind11 include folder
  rm -f "$B"/*.o
  local pids=()
  for f in module precheck_module loop_module analysis_module compare_module api_wrapper; do
    g++ -std=c++20 -O2 -DNDEBUG -fPIC -fvisibility=hidden -DFMT_SHARED -DNUMPROBE_WITH_PROTOBUF=1 \
      -DNUMPROBE_WITH_XLSX=1 -DNUMPROBE_WITH_YAML=1 -DNUMPROBE_WITH_ZLIB=1 -w -I include \
      -isystem "$C/include" -isystem "$PYINC" -isystem "$1" -c python/src/$f.cc -o "$B"/$f.o \
      2> "$B"/$f.err &
    pids+=($!)
  done
  wait "${pids[@]}"  # not a bare wait: it would wait for the tee above too
  for f in module precheck_module loop_module analysis_module compare_module api_wrapper; do
    [ -f "$B"/$f.o ] || { head -30 "$B"/$f.err; return 1; }
  done
  g++ -shared -o "$B/py/numprobe/_numprobe$EXT" "$B"/*.o -Wl,--start-group "$C"/a/*.a -Wl,--end-group \
    "$C"/lib/*.so* -lpthread -Wl,--disable-new-dtags -Wl,-rpath,"$C/lib"
}
stamp "build"
PB=$(python3 -c "import pybind11; print(pybind11.get_include())" 2>/dev/null)
python3 -c "import pybind11; print('pybind11', pybind11.__version__)"
if ! build "$PB"; then
  stamp "build with the machine's pybind11 failed; again with Debian's 2.10.3"
  build "$C/include-pb" || exit 4
fi
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$C/lib" "$C/bin/numprobe" > "$B"/numprobe
chmod +x "$B"/numprobe
export PYTHONPATH="$B"/py:$W/tests/python NUMPROBE_BIN="$B"/numprobe NUMPROBE_SOURCE_DIR=$W
export PYTHONUNBUFFERED=1
python3 -c "import numprobe, numprobe.pytorch; print('numprobe imports')" || exit 5
"$B"/numprobe --version
stamp "built"
for what in "$@"; do
  case $what in
    tests)  # the whole Python suite, on the machine's torch
      stamp "tests"
      timeout 300 python3 -m pytest -q -p no:cacheprovider -n 12 --timeout 240 -rfEs \
        tests/python 2>&1 | tail -80
      ;;
    cudatests)
      stamp "cuda tests"
      timeout 90 python3 -m pytest -q -p no:cacheprovider -n 6 --timeout 80 -rfEs \
        tests/python/test_capture.py -k "cuda or async" 2>&1 | tail -40
      ;;
    bench)
      stamp "bench"
      NUMPROBE_BENCH_CUDA_BLOCKS=${BLOCKS:-mid,large} NUMPROBE_BENCH_MSPROBE=$C \
        NUMPROBE_BENCH_DIR=/tmp timeout "${BENCH_S:-290}" python3 bench/capture_bench.py --cuda
      ;;
  esac
done
stamp "done"
