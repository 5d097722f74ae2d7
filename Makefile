# The three README commands. Everything else is plain CMake (see HACKING.md).
#   make demo   installs what is missing, builds a Release build, runs the end-to-end demo
#   make test   installs what is missing, builds with tests, runs the whole suite, then again
#               under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench  builds and runs the benchmarks (ratios against physical references)
JOBS ?= $(shell nproc)
CMAKE_COMMON := -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
CTEST_JOBS ?= $(JOBS)
# The test builds carry line tables only (-g1): enough for sanitizer reports and backtraces, and
# about a third less compile time than full debug info. The sanitizer build is -O1 (what the
# AddressSanitizer documentation recommends), half the compile time of -O2 under the sanitizers.
TEST_BUILD_FLAGS := -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
ASAN_BUILD_FLAGS := -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"

.PHONY: demo test test-fast test-asan bench deps release clean format tidy

deps:
	@scripts/install-deps.sh

release: deps
	cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DNUMPROBE_BUILD_TESTS=OFF $(CMAKE_COMMON)
	cmake --build build/release -j $(JOBS)

demo: release
	scripts/demo.sh build/release/tools/numprobe/numprobe demo-out

test: test-fast test-asan

test-fast: deps
	cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNUMPROBE_BUILD_TESTS=ON \
	  -DNUMPROBE_WERROR=ON $(TEST_BUILD_FLAGS) $(CMAKE_COMMON)
	cmake --build build/test -j $(JOBS)
	ctest --test-dir build/test --output-on-failure -j $(CTEST_JOBS)

test-asan: deps
	# The Python module is not built here: the tests that load it (label python) cannot run in
	# this pass (an ASan-built module would need the runtime preloaded into the interpreter).
	cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNUMPROBE_BUILD_TESTS=ON \
	  -DNUMPROBE_SANITIZE=ON -DNUMPROBE_BUILD_PYTHON=OFF $(ASAN_BUILD_FLAGS) $(CMAKE_COMMON)
	cmake --build build/asan -j $(JOBS)
	# The mpirun end-to-end tests (label mpi) run in test-fast only: Open MPI under the sanitizers
	# is not verified yet; the cluster layer's own unit tests (label unit) do run here.
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir build/asan --output-on-failure -j $(CTEST_JOBS) -LE 'python|browser|mpi'

bench: deps
	cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DNUMPROBE_BUILD_TESTS=OFF \
	  -DNUMPROBE_BUILD_BENCHMARKS=ON $(CMAKE_COMMON)
	cmake --build build/bench -j $(JOBS)
	scripts/bench.sh build/bench

format:
	git ls-files '*.h' '*.cc' | xargs clang-format -i

tidy:
	git ls-files 'src/*.cc' 'tools/*.cc' | xargs -P2 -n4 clang-tidy -p build/test --quiet

clean:
	rm -rf build demo-out
