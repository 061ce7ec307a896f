# Trellis convenience wrapper around CMake/CTest.
#   make build | run | test | python | asan | tsan | fuzz | fuzz-ci | install | clean | deps
# Variables: BUILD_DIR (default build), ASAN_BUILD_DIR (default build-asan),
#            TSAN_BUILD_DIR (default build-tsan),
#            FUZZ_BUILD_DIR (default build-fuzz), FUZZ_CXX (default clang++-14),
#            FUZZ_SECONDS (default 300: fuzzing time per target of `make fuzz`),
#            FUZZ_CI_SECONDS (default 60: the same for `make fuzz-ci`),
#            JOBS (default nproc), TRELLIS_SKIP_DEPS=1 skips scripts/install-deps.sh,
#            PREFIX (default /usr/local) for `make install`.

BUILD_DIR      ?= build
ASAN_BUILD_DIR ?= build-asan
TSAN_BUILD_DIR ?= build-tsan
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_CXX       ?= clang++-14
FUZZ_SECONDS   ?= 300
FUZZ_CI_SECONDS ?= 60
JOBS           ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS     ?=
EXAMPLE_MODEL  ?= examples/models/mlp.onnx
PREFIX         ?= /usr/local

# Configure $(1) with extra args $(2). Tool detection runs at recipe time (after
# `deps`); -G is only passed for a fresh build dir so an existing cache is reused.
define configure
	@set -e; gen=; launcher=; \
	if [ ! -f "$(1)/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then gen="-G Ninja"; fi; \
	if command -v ccache >/dev/null 2>&1; then launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"; fi; \
	echo "cmake -S . -B $(1) $$gen $$launcher $(2) $(CMAKE_ARGS)"; \
	cmake -S . -B "$(1)" $$gen $$launcher $(2) $(CMAKE_ARGS)
endef

.PHONY: all deps build run test python asan tsan fuzz-build fuzz fuzz-ci install clean

all: build

deps:
ifeq ($(TRELLIS_SKIP_DEPS),1)
	@echo "deps: skipped (TRELLIS_SKIP_DEPS=1)"
else
	bash scripts/install-deps.sh
endif

build: deps
	$(call configure,$(BUILD_DIR),-DCMAKE_BUILD_TYPE=Release)
	cmake --build $(BUILD_DIR) -j$(JOBS)

run: build
	./$(BUILD_DIR)/bin/trellis run $(EXAMPLE_MODEL)

# The code generator's full suites (ctest label codegen_full: every op case, node case and model
# compiled as an artifact, about an hour) are left out; run them with ctest -L codegen_full.
test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) --timeout 1200 -LE codegen_full

# The Python package installed into .venv (which scripts/install-deps.sh prepares with the pinned
# nanobind and scikit-build-core) from this checkout, offline: pip runs CMake through
# scikit-build-core in build-python/ (docs/python.md). `make test` tests the package the CMake
# build assembles in $(BUILD_DIR)/python instead.
python: deps
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(if $(shell command -v ccache 2>/dev/null),CMAKE_CXX_COMPILER_LAUNCHER=ccache) \
	  .venv/bin/python -m pip install --disable-pip-version-check --no-build-isolation --no-deps .
	.venv/bin/python -c "import trellis; print('trellis', trellis.__version__, 'installed in .venv:', trellis.__file__)"

asan: deps
	$(call configure,$(ASAN_BUILD_DIR),-DCMAKE_BUILD_TYPE=Debug -DTRELLIS_SANITIZE=ON)
	cmake --build $(ASAN_BUILD_DIR) -j$(JOBS)
	ctest --test-dir $(ASAN_BUILD_DIR) --output-on-failure -j$(JOBS) --timeout 1200 -LE codegen_full

# ThreadSanitizer: libtrellis and the concurrency tests (ctest label "concurrency": many threads x
# one network on every registered backend, a dynamic network, LoadNetwork/UnloadNetwork while
# others run). OpenMP: LLVM's libomp with its Archer tool stands in for libgomp during the run
# (tests/CMakeLists.txt; suppressions with their reasons in tests/concurrency/tsan.supp).
tsan: deps
	$(call configure,$(TSAN_BUILD_DIR),-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRELLIS_SANITIZE_THREAD=ON)
	cmake --build $(TSAN_BUILD_DIR) -j$(JOBS) --target trellis_concurrency_tests
	ctest --test-dir $(TSAN_BUILD_DIR) -L concurrency --output-on-failure --timeout 1800
# libFuzzer targets (tests/fuzz, docs/reliability.md) in their own clang build tree, the whole
# library instrumented (ASan + UBSan + coverage; -O1 with asserts on). The seed corpus is copied
# into $(FUZZ_BUILD_DIR)/corpus/<target> at build time. `make fuzz` replays each target's corpus
# and committed regression inputs, then fuzzes it for FUZZ_SECONDS; `make fuzz-ci` does the same
# for FUZZ_CI_SECONDS (.ci/run).
fuzz-build: deps
	$(call configure,$(FUZZ_BUILD_DIR),-DCMAKE_CXX_COMPILER=$(FUZZ_CXX) -DTRELLIS_FUZZ=ON -DTRELLIS_BUILD_TESTS=OFF -DTRELLIS_CPUACC=OFF -DTRELLIS_GPUACC=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g")
	cmake --build $(FUZZ_BUILD_DIR) -j$(JOBS) --target trellis_fuzz_targets

fuzz: fuzz-build
	bash tests/fuzz/run_fuzzers.sh $(FUZZ_BUILD_DIR) $(FUZZ_SECONDS)

fuzz-ci: fuzz-build
	bash tests/fuzz/run_fuzzers.sh $(FUZZ_BUILD_DIR) $(FUZZ_CI_SECONDS)

# Library, headers, the trellis CLI and the CMake package (find_package(Trellis)) under PREFIX.
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR) $(TSAN_BUILD_DIR) $(FUZZ_BUILD_DIR) build-python
