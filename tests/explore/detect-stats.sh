#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# detect-stats.sh EXPLORER SCENARIO STRATEGY RUNS [explorer options...]
# Detection power: runs the explorer RUNS times from independent first
# seeds (1, 1000001, 2000001, ...) and prints how many schedules each run
# needed to find its first violation, then min / median / max.  Runs that
# find nothing within the budget (--schedules, default 100000) count as
# "none" and are left out of the figures.
set -eu
bin=$1 scenario=$2 strategy=$3 runs=$4
shift 4
found=""
missed=0
i=0
while [ "$i" -lt "$runs" ]; do
	seed=$((i * 1000000 + 1))
	out=$("$bin" --quiet --expect-violation --scenario "$scenario" \
		--strategy "$strategy" --seed "$seed" --schedules 100000 \
		"$@" || true)
	n=$(printf '%s\n' "$out" | sed -n 's/.*  schedule: \([0-9]*\)$/\1/p')
	if [ -n "$n" ]; then found="$found $n"; else missed=$((missed + 1)); fi
	i=$((i + 1))
done
sorted=$(printf '%s\n' $found | sort -n)
count=$(printf '%s\n' $sorted | grep -c . || true)
if [ "$count" -eq 0 ]; then
	echo "$scenario $strategy: never found in $runs runs"
	exit 1
fi
min=$(printf '%s\n' $sorted | head -1)
max=$(printf '%s\n' $sorted | tail -1)
med=$(printf '%s\n' $sorted | sed -n "$(( (count + 1) / 2 ))p")
echo "$scenario $strategy: runs $runs found $count missed $missed" \
	"schedules to first detection min $min median $med max $max" \
	"(all:$found)"
