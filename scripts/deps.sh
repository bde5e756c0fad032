#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# deps.sh [build|all] - make sure the dependencies of pcstock are present
# on a Debian or Ubuntu machine.
#
#   build  what building and installing the library needs (make install)
#   all    build, plus what the tests and the benchmark need (make test,
#          make bench): the default
#   kernels  the kernel matrix's trees (kernel/matrix.txt), fetched into a
#          cache; prints their directories
#
# As root it installs what is missing with apt-get; otherwise it prints
# the exact command to run and fails (for linux-source-6.12, which only the
# kernel tests use, it warns instead: those tests then report themselves
# skipped).  Nothing is downloaded from anywhere
# but the distribution's package archive.
set -eu

# package:probe pairs; the probe is a command name or pkg-config module.
build="cmake:cmd:cmake
gcc:cmd:gcc
libc6-dev:dpkg:libc6-dev
make:cmd:make
pkg-config:cmd:pkg-config
liburcu-dev:pc:liburcu
libhwloc-dev:pc:hwloc"
# CMocka runs the tests; g++ checks that the headers compile as C++;
# patch plants the bugs of tests/mutants/ in a copy of src/;
# clang + libclang-rt-14-dev give libFuzzer, spin
# the model checker, gnuplot-nox the benchmark plots; linux-source-6.12
# is the kernel tree the kernel tests (label kernel, docs/kcheck.md)
# take mm/page_counter.c from, at build time, into the build directory;
# python3 reads the coverage and JSON records in .ci/run's coverage stage
# (scripts/check-policy-coverage) and in the line model's scripts
# (lines-validate, lkp-predict, store-buffer-bound): Debian's minimal
# images lack it; valgrind re-counts the stores the line model's
# store buffer bound takes per design (bench_lines_store_counts).
check="libcmocka-dev:pc:cmocka
python3:cmd:python3
g++:cmd:g++
patch:cmd:patch
clang:cmd:clang
libclang-rt-14-dev:dpkg:libclang-rt-14-dev
spin:cmd:spin
gnuplot-nox:cmd:gnuplot
valgrind:cmd:valgrind
linux-source-6.12:dpkg:linux-source-6.12"

# kernels: fetch the trees of kernel/matrix.txt into a cache, each as the
# few files kernel/extract.sh takes, and print one directory a line (for
# PCSTOCK_KERNEL_MATRIX).  Downloads go through apt-get, from the
# distribution's archive only.  Nothing here fails the caller: an entry
# that cannot be had is skipped with a message on stderr.
kernels() {
	here=$(cd "$(dirname "$0")/.." && pwd)
	if [ "$(id -u)" = 0 ]; then
		cache=${PCSTOCK_DEB_CACHE:-/var/cache/pcstock/kernels}
	else
		cache=${PCSTOCK_DEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pcstock/debian-kernels}
	fi
	mkdir -p "$cache" 2>/dev/null || {
		echo "pcstock: kernel matrix: cannot create $cache:" \
		     "matrix skipped" >&2
		return 0
	}
	command -v apt-get >/dev/null 2>&1 || {
		echo "pcstock: kernel matrix: no apt-get here: skipped" >&2
		return 0
	}
	updated=0
	# PCSTOCK_KERNEL_MATRIX_FILE: another list, for trying the rules.
	grep -v '^#' "${PCSTOCK_KERNEL_MATRIX_FILE:-$here/kernel/matrix.txt}" |
		while read -r pkg ver; do
		[ -n "$pkg" ] || continue
		if [ "$ver" = candidate ]; then
			ver=$(apt-cache policy "$pkg" 2>/dev/null |
				awk '/Candidate:/ { print $2 }')
			if { [ -z "$ver" ] || [ "$ver" = "(none)" ]; } &&
			   [ "$updated" = 0 ] && [ "$(id -u)" = 0 ]; then
				apt-get update -qq >&2 || true
				updated=1
				ver=$(apt-cache policy "$pkg" 2>/dev/null |
					awk '/Candidate:/ { print $2 }')
			fi
		fi
		if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
			echo "pcstock: kernel matrix: $pkg is not in the" \
			     "archive: skipped" >&2
			continue
		fi
		dir=$cache/${pkg}_$(echo "$ver" | tr '~:' '__')
		if [ -f "$dir/mm/page_counter.c" ] && [ -f "$dir/TREE_ID" ]; then
			echo "$dir"
			continue
		fi
		tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
		if ! (cd "$tmp" && apt-get download -q "$pkg=$ver" \
			>/dev/null 2>&1) && [ "$updated" = 0 ] &&
		   [ "$(id -u)" = 0 ]; then
			apt-get update -qq >&2 || true
			updated=1
			(cd "$tmp" && apt-get download -q "$pkg=$ver" \
				>/dev/null 2>&1) || true
		fi
		deb=$(ls "$tmp"/*.deb 2>/dev/null | head -n 1)
		if [ -z "$deb" ]; then
			echo "pcstock: kernel matrix: $pkg=$ver is no longer in" \
			     "the archive: skipped" >&2
			rm -rf "$tmp"
			continue
		fi
		echo "pcstock: kernel matrix: fetching $pkg $ver" >&2
		if dpkg-deb --fsys-tarfile "$deb" |
		   tar -xf - -C "$tmp" --wildcards './usr/src/*.tar.*' &&
		   tarball=$(ls "$tmp"/usr/src/linux-source-*.tar.* | head -n 1) &&
		   PCSTOCK_KERNEL_CACHE=off sh "$here/kernel/extract.sh" fetch \
			"$tarball" "$tmp/tree" >&2; then
			echo "Debian $pkg $ver" >"$tmp/tree/DESCRIBE"
			rm -rf "$dir"
			mv "$tmp/tree" "$dir"
			echo "$dir"
		else
			echo "pcstock: kernel matrix: cannot unpack $pkg $ver:" \
			     "skipped" >&2
		fi
		rm -rf "$tmp"
	done
	return 0
}

case ${1:-all} in
build) want=$build ;;
all) want="$build
$check" ;;
kernels) kernels; exit 0 ;;
*)
	echo "usage: deps.sh [build|all|kernels]" >&2
	exit 2
	;;
esac

missing=""
for line in $want; do
	pkg=${line%%:*}
	rest=${line#*:}
	kind=${rest%%:*}
	probe=${rest#*:}
	case $kind in
	cmd) command -v "$probe" >/dev/null 2>&1 && continue ;;
	pc) command -v pkg-config >/dev/null 2>&1 &&
		pkg-config --exists "$probe" 2>/dev/null && continue ;;
	dpkg) dpkg-query -W -f='${Status}' "$probe" 2>/dev/null |
		grep -q 'install ok installed' && continue ;;
	esac
	missing="$missing $pkg"
done

[ -z "$missing" ] && exit 0

cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	if [ "$missing" = " linux-source-6.12" ]; then
		echo "pcstock: linux-source-6.12 is missing: the kernel tests" \
		     "will be skipped (as root: $cmd)" >&2
		exit 0
	fi
	echo "pcstock: missing dependencies:$missing" >&2
	echo "pcstock: run as root:  $cmd" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "pcstock: missing dependencies:$missing (no apt-get here;" \
	     "install them with your package manager)" >&2
	exit 1
fi
echo "pcstock: installing dependencies:$missing" >&2
apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
