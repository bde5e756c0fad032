# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Thin wrapper around CMake.  Every target first makes sure the build
# dependencies are installed (scripts/deps.sh).
#
#   make test                 build and run the whole test suite (ctest)
#   make bench                build and run the default benchmark matrix
#   make install PREFIX=/usr/local
#   make clean

BUILD    ?= build
PREFIX   ?= /usr/local
TYPE     ?= RelWithDebInfo
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
BENCH_ARGS ?=

.PHONY: all deps configure build test bench install clean

all: build

deps:
	@sh scripts/deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(TYPE) \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

bench: build
	@if [ -x $(BUILD)/bench/pcstock-bench ]; then \
		$(BUILD)/bench/pcstock-bench $(BENCH_ARGS); \
	else \
		echo "no benchmark yet"; \
	fi

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
