#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# probe-unit.sh BUILD-UNIT STAGE OUT [CFLAGS...] - compile the unit of one staged tree
# once, at configure time, and say in one line why it does not build when
# it does not: a function the tree calls that the shim lacks, or the
# compiler's first error.  Exit status: the compiler's.
set -u
[ $# -ge 3 ] || { echo "usage: probe-unit.sh BUILD-UNIT STAGE OUT [CFLAGS...]" >&2; exit 2; }
log=$(sh "$@" 2>&1)
rc=$?
[ $rc -eq 0 ] && exit 0
missing=$(printf '%s\n' "$log" |
	sed -n "s/.*implicit declaration of function [‘'\`]\([A-Za-z0-9_]*\)[’'].*/\1/p" |
	sort -u | tr '\n' ' ')
if [ -n "$missing" ]; then
	echo "the kernel unit does not build: the shim lacks ${missing% }"
	echo "(called by the tree's mm/page_counter.c or the lib/ functions" \
	     "cut from it; add it to kernel/shim, in our own words)"
else
	echo "the kernel unit does not build over the shim:" \
	     "$(printf '%s\n' "$log" | grep -m1 'error' || echo 'see below')"
fi
echo "--- compiler output ($2):"
printf '%s\n' "$log"
exit $rc
