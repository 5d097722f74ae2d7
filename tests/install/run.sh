#!/usr/bin/env bash
# The installed package, checked from outside: installs BUILD into a temporary prefix, builds the
# C++ capture example from tests/install/ (a project of its own, find_package(numprobe)) and runs it.
#   tests/install/run.sh BUILD_DIR SOURCE_DIR WORK_DIR [EXTRA_CXX_FLAGS]
set -euo pipefail
build=$1
source=$2
work=$3
flags=${4:-}
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work.install.log" 2>&1 ||
  { cat "$work.install.log"; exit 1; }
cmake -S "$source/tests/install" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DNUMPROBE_EXAMPLES="$source/examples" -DNUMPROBE_PUBLIC_INCLUDE="$work/prefix/include" \
  -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags"
cmake --build "$work/build" -j2
# The public headers alone: nothing under src/ is installed or needed.
if find "$work/prefix/include" -name '*.h' | xargs grep -l '#include "\(core\|formats\|kernels\|msprobe\|compare\|scan\|diff\|config_check\|capture\|ui\|inspect\)/' ; then
  echo "an installed header includes an internal one" >&2
  exit 1
fi
if [ -e "$work/prefix/include/numprobe/app" ]; then
  echo "include/numprobe/app/ (the front ends' entry points) was installed" >&2
  exit 1
fi
"$work/build/kernel_validation" "$work/out"
echo "installed package OK: $(find "$work/prefix/include/numprobe" -name '*.h' | wc -l) public headers"
