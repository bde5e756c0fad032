#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# process-replay.sh EXPLORER
# A seed names one run in every process: the same command, run again in
# another process whose heap, stack and libraries lie elsewhere (ASLR, an
# environment of another size, `setarch -R` where the system allows it),
# must make the same decisions and print the same report, byte for byte
# once the timing is taken out: every schedule's interleaving (--verbose)
# with the values read, the steps, the sites reached in weak memory, a
# violation's schedule and trace.  So a violation found at schedule N of
# seed S is found at N by anyone who runs the command.
#
# The cases: every group-<policy> scenario (one per registered policy,
# from --list), group scenarios that free a group or the name index's
# old table through liburcu's call_rcu thread while threads run, memcg7
# scenarios, stock scenarios (stock-cap-v4 ends in its violation) and a
# counter one; each in sequential consistency and in weak memory, the
# random walk then PCT in one process, on a small budget.
set -eu
exe=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/pcstock-process-replay.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# 4 KiB more of environment: the stack starts lower.
pad=$(printf '%04096d' 0)
if setarch -R true 2>/dev/null; then
	norandom="setarch -R"
else
	echo "setarch -R unavailable: the third run keeps ASLR"
	norandom=
fi

groups=$("$exe" --list | awk '$1 ~ /^group-[a-z0-9]+$/ { print $1 }')
[ -n "$groups" ] || { echo "FAIL: no group-<policy> scenario listed"; exit 1; }

# run OUT SCENARIO MODEL [prefix...]: one run's report, its exit status
# last, the timing taken out.
run() {
	out=$1 scenario=$2 model=$3
	shift 3
	case $scenario in
	group-*) n=5 ;;
	*) n=200 ;;
	esac
	weak=
	[ "$model" = weak ] && weak="--weak --site-coverage"
	status=0
	# shellcheck disable=SC2086 # $weak is two options or none
	"$@" "$exe" --scenario "$scenario" --strategy random,pct \
		--schedules "$n,$n" --depth 3 --seed 1 --verbose $weak \
		>"$out.raw" 2>&1 || status=$?
	echo "exit status $status" >>"$out.raw"
	sed -E 's/, [0-9.]+ s, [0-9]+ schedules\/s//' "$out.raw" >"$out"
	rm -f "$out.raw"
}

fail=0
nr=0
for scenario in $groups group-last-put-memcg7 group-last-put-default \
	group-rebuild-v4 group-publish-exact memcg7-owner memcg7-key-death \
	stock-charge-default stock-cap-v4 counter-tight; do
	for model in sc weak; do
		base=$dir/$scenario-$model
		run "$base.a" "$scenario" "$model" env
		run "$base.b" "$scenario" "$model" env PCSTOCK_PAD="$pad"
		# shellcheck disable=SC2086 # $norandom is a command or none
		# (the sanitizers' options, suppressions included, kept)
		run "$base.c" "$scenario" "$model" $norandom env -i \
			${TSAN_OPTIONS+"TSAN_OPTIONS=$TSAN_OPTIONS"} \
			${ASAN_OPTIONS+"ASAN_OPTIONS=$ASAN_OPTIONS"} \
			${UBSAN_OPTIONS+"UBSAN_OPTIONS=$UBSAN_OPTIONS"} \
			${LSAN_OPTIONS+"LSAN_OPTIONS=$LSAN_OPTIONS"}
		for v in b c; do
			cmp -s "$base.a" "$base.$v" && continue
			echo "FAIL: $scenario ($model): run $v differs from run a"
			diff "$base.a" "$base.$v" | head -10
			fail=1
		done
		nr=$((nr + 1))
	done
done
[ "$fail" = 0 ] || exit 1
echo "$nr runs replayed identically in three processes each"
