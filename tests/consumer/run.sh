#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Install the build into a temporary prefix, then build and run a small
# program against the installed package twice: with CMake's
# find_package(pcstock) and with pkg-config.
set -eu
cmake=$1 build=$2 src=$3 work=$4 cc=$5
rm -rf "$work"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >/dev/null

# 1. CMake package.
"$cmake" -S "$src" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_COMPILER="$cc" >/dev/null
"$cmake" --build "$work/cmake-build" >/dev/null
LD_LIBRARY_PATH=$prefix/lib:$prefix/lib64:${LD_LIBRARY_PATH:-} \
	"$work/cmake-build/consumer"

# 2. pkg-config, shared (also with the inline fast paths); then the static archive with its dependencies
#    (Requires.private) linked dynamically.
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -n 1)
export PKG_CONFIG_PATH=$libdir
"$cc" -std=c11 -o "$work/consumer-pc" "$src/consumer.c" \
	$(pkg-config --cflags --libs pcstock)
LD_LIBRARY_PATH=$prefix/lib:$prefix/lib64:${LD_LIBRARY_PATH:-} \
	"$work/consumer-pc"
"$cc" -std=c11 -DPCSTOCK_INLINE -o "$work/consumer-pc-inline" \
	"$src/consumer.c" $(pkg-config --cflags --libs pcstock)
LD_LIBRARY_PATH=$prefix/lib:$prefix/lib64:${LD_LIBRARY_PATH:-} \
	"$work/consumer-pc-inline"
"$cc" -std=c11 -static-libgcc -o "$work/consumer-pc-static" \
	"$src/consumer.c" $(pkg-config --cflags pcstock) \
	"$(dirname "$libdir")/libpcstock.a" $(pkg-config --libs liburcu-bp hwloc) -pthread
"$work/consumer-pc-static"
echo "consumer builds with find_package and pkg-config (shared and static)"
