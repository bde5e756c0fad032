#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Install the build into a temporary prefix, then build the C++ consumer
# against it with pkg-config, under two C++ standards, warnings as errors,
# and run it: the headers compile as C++ and agree with C on every layout.
set -eu
cmake=$1 build=$2 src=$3 work=$4 cc=$5 cxx=$6
rm -rf "$work"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -n 1)
export PKG_CONFIG_PATH=$libdir
flags="-Wall -Wextra -pedantic -Werror"
"$cc" -std=c11 $flags -c -o "$work/layout.o" "$src/layout.c" \
	$(pkg-config --cflags pcstock)
for std in c++11 c++17; do
	"$cxx" -std=$std $flags -o "$work/consumer-$std" \
		"$src/consumer_cxx.cpp" "$work/layout.o" \
		$(pkg-config --cflags --libs pcstock)
	LD_LIBRARY_PATH=$prefix/lib:$prefix/lib64:${LD_LIBRARY_PATH:-} \
		"$work/consumer-$std"
done
