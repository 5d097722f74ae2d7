#!/bin/bash
# Packs what scripts/gpu-check/run.sh needs on a GPU machine that has its own Python and torch
# (any version) and a C++20 compiler but none of numprobe's Debian packages: the static
# libraries and the CLI built here (Release, position-independent, no LTO, no web UI), the
# shared libraries they use, fmt's headers, Debian's pybind11 (a fallback for the machine's own),
# and optionally a source checkout of msprobe (for the bench's msprobe column) with pytz.
#   scripts/gpu-check/pack.sh [CARRY_DIR=.gpu-check] [MSPROBE_PYTHON_TREE]
# Then, on the machine, from a copy of this working tree with CARRY_DIR beside it:
#   scripts/gpu-check/run.sh CARRY_DIR cudatests bench
set -eu
carry=${1:-.gpu-check}
msprobe=${2:-}
build=${BUILD:-build/gpu-check}  # BUILD: another build folder of the same options
cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DNUMPROBE_BUILD_TESTS=OFF \
  -DNUMPROBE_WITH_WEBUI=OFF -DNUMPROBE_WITH_MPI=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF > /dev/null
cmake --build $build -j"$(nproc)" --target numprobe
rm -rf "$carry"
mkdir -p "$carry"/lib "$carry"/include "$carry"/include-pb "$carry"/a "$carry"/bin
cp $build/src/*.a "$carry"/a/
cp $build/tools/numprobe/numprobe "$carry"/bin/ && strip "$carry"/bin/numprobe
# What the libraries and the CLI load, by soname (the machine's own may differ or be missing).
for lib in libhwy.so.1 libcsv.so.3 libdeflate.so.0 libcrypto.so.3 libprotobuf.so.32 \
           libxlsxwriter.so.4 libyaml-cpp.so.0.7 libfmt.so.9 libminizip.so.1 libexpat.so.1 \
           libz.so.1; do
  cp -L /lib/x86_64-linux-gnu/$lib "$carry"/lib/
done
cp -r /usr/include/fmt "$carry"/include/
cp -r /usr/include/pybind11 "$carry"/include-pb/
if [ -n "$msprobe" ]; then
  cp -r "$msprobe/msprobe" "$carry"/
  rm -rf "$carry"/msprobe/response_anomaly  # 12 MB of data msprobe.pytorch does not import
  cp -r /usr/lib/python3/dist-packages/pytz "$carry"/
fi
find "$carry" -name __pycache__ -prune -exec rm -rf {} +
du -sh "$carry"
