#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kunit-check.sh KCHECK KB MUTATION WORK BUILD_KUNIT - a planted bug's
# reproducer as a KUnit case (docs/kcheck.md, "Reports to paste"): pcstock-kcheck finds
# MUTATION in the unit KB/kpc-MUTATION.so and writes its reproducer
# (--repro-out) and KUnit case (--kunit-out); --replay diverges on the
# planted unit and not on the clean one; the case, compiled with the
# KUnit stand-in (BUILD_KUNIT), fails on the planted stage and
# passes on the clean one; --junit records the failure.
set -u
kcheck=$1 kb=$2 m=$3 work=$4 bk=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "kunit-check: FAIL: $*"; exit 1; }

"$kcheck" --unit "$kb/kpc-$m.so" --no-parse --ops 200000 --seed 1 \
	--quiet --repro-out "$work/repro.txt" --kunit-out "$work/case.c" \
	--junit "$work/junit.xml"
[ $? -eq 1 ] || fail "pcstock-kcheck did not find $m"
grep -q '<failure' "$work/junit.xml" || fail "no <failure> in --junit"
cat "$work/case.c"

"$kcheck" --unit "$kb/kpc-$m.so" --replay "$work/repro.txt" --quiet
[ $? -eq 1 ] || fail "--replay did not diverge on the planted unit"
"$kcheck" --unit "$kb/kpc-none.so" --replay "$work/repro.txt" --quiet ||
	fail "--replay diverged on the clean unit"

sh "$bk" "$kb/stage-$m" "$work/case.c" "$work/planted" ||
	fail "the KUnit case does not compile against stage-$m"
sh "$bk" "$kb/stage-none" "$work/case.c" "$work/clean" ||
	fail "the KUnit case does not compile against stage-none"
"$work/planted" && fail "the KUnit case passes on the planted tree"
"$work/clean" || fail "the KUnit case fails on the clean tree"
echo "kunit-check: ok: $m's KUnit case fails planted, passes clean"
