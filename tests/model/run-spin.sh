#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-spin.sh MODEL verify|violate [-DNAME ...]
# Generates the verifier of a Promela model with spin, compiles it and
# runs an exhaustive safety search with a bounded depth.  "verify" passes
# when the search completes with no error; "violate" passes when it
# reports an assertion violation (a planted bug must be caught).
# Exits 77 (ctest's skip code) when spin or a C compiler is missing.
set -eu
model=$1
expect=$2
shift 2
command -v spin >/dev/null 2>&1 || { echo "spin not installed: skip"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "no C compiler: skip"; exit 77; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/pcstock-spin.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cp "$model" "$dir/model.pml"
cd "$dir"
spin -a "$@" model.pml >spin.log 2>&1 || { cat spin.log; exit 1; }
"$cc" -O2 -DSAFETY -DMEMLIM=1024 -o pan pan.c
./pan -m200000 >pan.log 2>&1 || true
grep -E "assertion violated|errors:|states, stored|depth too small|Search not completed" pan.log

if grep -q "depth too small" pan.log; then
	echo "FAIL: search depth bound reached: the search was not exhaustive"
	exit 1
fi
if [ "$expect" = verify ] && grep -q "Search not completed" pan.log; then
	echo "FAIL: the search did not complete (memory bound?)"
	exit 1
fi
case $expect in
verify)
	grep -q "errors: 0" pan.log && exit 0
	echo "FAIL: expected the model to verify"
	spin -t -p model.pml | tail -40
	exit 1 ;;
violate)
	grep -q "assertion violated" pan.log && exit 0
	echo "FAIL: expected an assertion violation"
	exit 1 ;;
*)
	echo "usage: $0 MODEL verify|violate [-DNAME ...]"
	exit 2 ;;
esac
