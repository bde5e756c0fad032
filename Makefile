# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Thin wrapper around CMake.  Every target first makes sure the
# dependencies it needs are installed (scripts/deps.sh): the build set for
# `install`, everything (CMocka, clang, spin, gnuplot too) for the rest.
#
#   make test                 build and run the whole test suite (ctest),
#                             the kernel tests on every tree of the matrix
#   make bench                build and run the default benchmark matrix
#   make install PREFIX=/usr/local
#                             build the library alone (no tests, no bench,
#                             in $(BUILD)-lib) and install it
#   make clean

BUILD    ?= build
PREFIX   ?= /usr/local
TYPE     ?= RelWithDebInfo
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
BENCH_ARGS ?=
KERNEL_MATRIX ?= 1
KMATRIX = $(if $(filter 1,$(KERNEL_MATRIX)),$$(sh scripts/deps.sh kernels | paste -sd ';' -))

.PHONY: all deps deps-build configure build test bench install clean

all: build

deps:
	@sh scripts/deps.sh all

deps-build:
	@sh scripts/deps.sh build

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(TYPE) \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# make test also runs the kernel tests on the trees of kernel/matrix.txt
# (fetched by scripts/deps.sh kernels; KERNEL_MATRIX=0 leaves them out).
# Tests of a kernel tree pcstock was not verified against carry the label
# kernel-unverified: they run and print, loudly, but do not decide the
# verdict (docs/kcheck.md, "When the kernel changes").
test: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(TYPE) \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) \
		-DPCSTOCK_KERNEL_MATRIX="$(KMATRIX)" $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) \
		-LE kernel-unverified
	@sh scripts/unverified-kernels $(BUILD) $(JOBS)

bench: build
	@if [ -x $(BUILD)/bench/pcstock-bench ]; then \
		$(BUILD)/bench/pcstock-bench $(BENCH_ARGS); \
	else \
		echo "no benchmark yet"; \
	fi

# The library alone needs only the build dependencies.
install: deps-build
	cmake -S . -B $(BUILD)-lib -DCMAKE_BUILD_TYPE=$(TYPE) \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) -DPCSTOCK_BUILD_TESTS=OFF \
		-DPCSTOCK_BUILD_BENCH=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD)-lib -j $(JOBS)
	cmake --install $(BUILD)-lib --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(BUILD)-lib
