#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# rev-check.sh KCHECK RAW WORK - pcstock-kcheck --rev on a git tree made
# here from RAW (a tree kernel/extract.sh took out): a first commit of
# its files as they are, a second that plants the global peak one page
# high.  The run must pass the first commit, report the second as the
# first failing step, with a reproducer, and exit 1.
set -u
kcheck=$1 raw=$2 work=$3
git="git -C $work/tree -c user.name=pcstock -c user.email=pcstock@invalid"
rm -rf "$work" && mkdir -p "$work/tree" || exit 1
cp -R "$raw/Makefile" "$raw/mm" "$raw/include" "$raw/lib" "$work/tree/" ||
	exit 1
$git init -q && $git add -A && $git commit -qm "the tree as extracted" ||
	exit 1
perl -0777 -i -pe 's/(WRITE_ONCE\(\s*c->watermark\s*,\s*new)\s*\)/$1 + 1)/' \
	"$work/tree/mm/page_counter.c"
$git diff --quiet &&
	{ echo "rev-check: the watermark edit found nothing"; exit 1; }
$git commit -qam "mm/page_counter: the peak one page high" || exit 1
"$kcheck" --kernel "$work/tree" --rev HEAD~1..HEAD --ops 20000 \
	--parses 1000 --seed 1 --quiet >"$work/out" 2>&1
rc=$?
cat "$work/out"
[ $rc -eq 1 ] &&
	grep -q '^pass  *[0-9a-f]* the tree as extracted' "$work/out" &&
	grep -q '^DIVERGENCE  *[0-9a-f]* mm/page_counter: the peak' \
		"$work/out" &&
	grep -q 'first failing step: commit [0-9a-f]* mm/page_counter: the peak' \
		"$work/out" &&
	grep -q 'reproducer' "$work/out" ||
	{ echo "rev-check: FAIL (exit $rc)"; exit 1; }
echo "rev-check: ok: the first commit passes, the second is the first" \
     "failing step"
