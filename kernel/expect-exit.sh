#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# expect-exit.sh STATUS [REGEX...] -- COMMAND [ARG...] - run COMMAND and
# pass only if it exits with STATUS and its output (stdout and stderr)
# matches every extended REGEX: how the kernel tests pin pcstock-kcheck's
# exit statuses and what it says.
set -u
want=${1:?usage: expect-exit.sh STATUS [REGEX...] -- COMMAND...}
shift
n=0
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	n=$((n + 1))
	eval "re_$n=\$1"
	shift
done
[ $# -gt 1 ] || { echo "usage: expect-exit.sh STATUS [REGEX...] -- COMMAND..." >&2; exit 2; }
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
fail=0
if [ "$rc" -ne "$want" ]; then
	echo "expect-exit.sh: exit status $rc, wanted $want"
	fail=1
fi
i=1
while [ $i -le $n ]; do
	eval "re=\$re_$i"
	if ! printf '%s\n' "$out" | grep -Eq -- "$re"; then
		echo "expect-exit.sh: no line matches '$re'"
		fail=1
	fi
	i=$((i + 1))
done
exit $fail
