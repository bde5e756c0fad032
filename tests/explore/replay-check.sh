#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# replay-check.sh EXPLORER [explorer options...]
# Runs the explorer expecting a violation, takes the replay command it
# prints, runs that, and passes only if the replay reports the same
# violation with the identical interleaving.
set -eu
bin=$1
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/pcstock-replay.XXXXXX")
trap 'rm -rf "$dir"' EXIT

"$bin" --expect-violation "$@" >"$dir/first" || {
	echo "FAIL: no violation found"; cat "$dir/first"; exit 1; }
replay=$(sed -n 's/^replay: [^ ]* //p' "$dir/first")
[ -n "$replay" ] || { echo "FAIL: no replay line"; exit 1; }
echo "replaying: $replay"
# shellcheck disable=SC2086 # the printed options are split on purpose
"$bin" --expect-violation $replay >"$dir/second" || {
	echo "FAIL: the replay found no violation"; cat "$dir/second"; exit 1; }

# The violation and the interleaving must match; the header differs only
# in the schedule's index within its run.
extract() {
	sed -n '/^VIOLATION/p; /^interleaving/,/^end of interleaving/p' "$1"
}
extract "$dir/first" >"$dir/first.trace"
extract "$dir/second" >"$dir/second.trace"
steps=$(grep -c '^ *[0-9]* t[0-9]' "$dir/first.trace" || true)
[ "$steps" -gt 0 ] || { echo "FAIL: empty interleaving"; exit 1; }
if ! cmp -s "$dir/first.trace" "$dir/second.trace"; then
	echo "FAIL: the replay differs"
	diff "$dir/first.trace" "$dir/second.trace" | head -20
	exit 1
fi
head -1 "$dir/first.trace"
echo "replayed $steps steps identically"
