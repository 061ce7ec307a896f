# Trellis convenience wrapper around CMake/CTest.
#   make build | run | test | asan | tsan | install | clean | deps
# Variables: BUILD_DIR (default build), ASAN_BUILD_DIR (default build-asan),
#            TSAN_BUILD_DIR (default build-tsan),
#            JOBS (default nproc), TRELLIS_SKIP_DEPS=1 skips scripts/install-deps.sh,
#            PREFIX (default /usr/local) for `make install`.

BUILD_DIR      ?= build
ASAN_BUILD_DIR ?= build-asan
TSAN_BUILD_DIR ?= build-tsan
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

.PHONY: all deps build run test asan tsan install clean

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

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) --timeout 1200

asan: deps
	$(call configure,$(ASAN_BUILD_DIR),-DCMAKE_BUILD_TYPE=Debug -DTRELLIS_SANITIZE=ON)
	cmake --build $(ASAN_BUILD_DIR) -j$(JOBS)
	ctest --test-dir $(ASAN_BUILD_DIR) --output-on-failure -j$(JOBS) --timeout 1200

# ThreadSanitizer: libtrellis and the concurrency tests (ctest label "concurrency": many threads x
# one network on every registered backend, a dynamic network, LoadNetwork/UnloadNetwork while
# others run). OpenMP: LLVM's libomp with its Archer tool stands in for libgomp during the run
# (tests/CMakeLists.txt; suppressions with their reasons in tests/concurrency/tsan.supp).
tsan: deps
	$(call configure,$(TSAN_BUILD_DIR),-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRELLIS_SANITIZE_THREAD=ON)
	cmake --build $(TSAN_BUILD_DIR) -j$(JOBS) --target trellis_concurrency_tests
	ctest --test-dir $(TSAN_BUILD_DIR) -L concurrency --output-on-failure --timeout 1800

# Library, headers, the trellis CLI and the CMake package (find_package(Trellis)) under PREFIX.
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR) $(TSAN_BUILD_DIR)
