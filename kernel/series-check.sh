#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# series-check.sh KCHECK RAW WORK - pcstock-kcheck --series on a series
# made here from RAW (a tree kernel/extract.sh took out): patch 0001 adds
# a comment, patch 0002 plants the global peak one page high.  The run
# must pass 0001, report 0002 as the first failing patch, with a
# reproducer, and exit 1; each patch is titled with its file's name.
set -u
kcheck=$1 raw=$2 work=$3
rm -rf "$work" && mkdir -p "$work/a/mm" "$work/series" || exit 1
cp "$raw/mm/page_counter.c" "$work/a/mm/"
cp -R "$work/a" "$work/b"
sed -i '2i /* A comment, as a first patch of a series might add. */' \
	"$work/b/mm/page_counter.c"
(cd "$work" && diff -ruN a b) >"$work/series/0001-comment.patch"
rm -rf "$work/a" && mv "$work/b" "$work/a" && cp -R "$work/a" "$work/b"
perl -0777 -i -pe 's/(WRITE_ONCE\(\s*c->watermark\s*,\s*new)\s*\)/$1 + 1)/' \
	"$work/b/mm/page_counter.c"
(cd "$work" && diff -ruN a b) >"$work/series/0002-watermark.patch"
[ -s "$work/series/0002-watermark.patch" ] ||
	{ echo "series-check: the watermark edit found nothing"; exit 1; }
"$kcheck" --kernel "$raw" --series "$work/series" --ops 20000 \
	--parses 1000 --seed 1 --quiet >"$work/out" 2>&1
rc=$?
cat "$work/out"
[ $rc -eq 1 ] &&
	grep -q '^pass  *0001' "$work/out" &&
	grep -q '^DIVERGENCE  *0002 0002-watermark.patch$' "$work/out" &&
	grep -q 'first failing step: patch 0002' "$work/out" &&
	grep -q 'reproducer' "$work/out" ||
	{ echo "series-check: FAIL (exit $rc)"; exit 1; }
echo "series-check: ok: 0001 passes, 0002 is the first failing patch"
