#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# series.sh KCHECK TREE series FILE|DIR FIXUP [OPTION...]
# series.sh KCHECK TREE rev A..B '' [OPTION...]
#
# pcstock-kcheck --series and --rev (docs/kcheck.md, "A series, patch by
# patch"): check TREE after each patch of a series, or at each commit of
# a git tree, with KCHECK --kernel STEP OPTION..., and report each step's
# verdict and the first step at which a divergence, a crash or a build
# failure appears, with that run's output (its reproducer).
#
# A series is an mbox (git format-patch, git am's input), a mail thread
# saved as text (each "[PATCH n/m]" starts a message; replies, "Re:",
# are left out), or a directory of patch files taken in name order.  Only
# the files pcstock-kcheck takes from a tree (kernel/extract.sh) are
# patched, with patch -p1 (a file's part starts at its "diff" line, of
# git diff or diff -ruN); the other files' hunks (mm/memcontrol.c) are
# not under test and are listed.  A patch that does not apply stops the
# run: put a replacement at FIXUP/NNNN.patch (NNNN: its number in the
# series, from 0001) and run again.
set -u
kcheck=$1 tree=$2 mode=$3 arg=$4 fixup=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)
# Each step is a new tree by design: no step's unit is the tree a test
# configured.
unset PCSTOCK_KPC_EXPECT_TREE
work=$(mktemp -d "${TMPDIR:-/tmp}/pcstock-series-XXXXXX")
trap 'rm -rf "$work"' EXIT
say() { echo "series: $*"; }
# The files kernel/extract.sh takes from a tree.
files=$(sed -n '/^files="/,/"$/p' "$here/extract.sh" | tr -d '"' |
	sed 's/^files=//')

first="" first_log="" n=0 verdict=""

# run_step NAME DIR OPTION...: pcstock-kcheck on DIR; its verdict.
run_step() {
	name=$1 dir=$2
	shift 2
	log=$work/log.$n
	"$kcheck" --kernel "$dir" "$@" >"$log" 2>&1
	rc=$?
	case $rc in
	0) verdict="pass" ;;
	1) if grep -q '^CRASH' "$log"; then verdict="CRASH"
	   else verdict="DIVERGENCE"; fi ;;
	3) verdict="BUILD FAILURE" ;;
	*) verdict="error (exit $rc)" ;;
	esac
	if [ "$rc" -ne 0 ] && [ -z "$first" ]; then
		first=$name
		first_log=$log
	fi
}

summary() {
	echo
	if [ -z "$first" ]; then
		say "no divergence, crash or build failure at any step"
		exit 0
	fi
	say "first failing step: $first"
	cat "$first_log"
	exit 1
}

if [ "$mode" = rev ]; then
	git -C "$tree" rev-parse --git-dir >/dev/null 2>&1 ||
		{ say "--rev needs a git tree: $tree"; exit 2; }
	revs=$(git -C "$tree" rev-list --reverse "$arg") ||
		{ say "bad range $arg"; exit 2; }
	for c in $(git -C "$tree" rev-parse "${arg%%..*}") $revs; do
		n=$((n + 1))
		step=$work/rev.$n
		mkdir -p "$step"
		# shellcheck disable=SC2086
		git -C "$tree" archive "$c" -- $files 2>/dev/null |
			tar -x -C "$step"
		title=$(git -C "$tree" log -1 --format='%h %s' "$c")
		run_step "commit $title" "$step" "$@"
		printf '%-14s %s\n' "$verdict" "$title"
	done
	summary
fi

# The series' patches, one file each, in order.
mkdir -p "$work/p"
mkdir -p "$work/name"
if [ -d "$arg" ]; then
	i=0
	for f in "$arg"/*; do
		[ -f "$f" ] || continue
		i=$((i + 1))
		cp "$f" "$work/p/$(printf %04d "$i")"
		basename "$f" >"$work/name/$(printf %04d "$i")"
	done
else
	awk -v dir="$work/p" '
	function start(reply) {
		n++; out = sprintf("%s/%04d", dir, n)
		if (reply) out = out ".reply"
	}
	/^From [^ ]+ / || /^(Subject: )?\[PATCH/ { start(0) }
	/^(Subject: )?Re: / { start(1) }
	n { print > out }' "$arg"
	rm -f "$work/p/"*.reply
fi
i=0
for f in "$work/p/"*; do
	grep -qE '^diff ' "$f" || { rm -f "$f"; continue; }
	i=$((i + 1))
	mv "$f" "$work/p/patch.$(printf %04d "$i")"
	# A directory's patch keeps its file's name as its title.
	[ -f "$work/name/${f##*/}" ] &&
		mv "$work/name/${f##*/}" "$work/name/$(printf %04d "$i").t"
done
[ "$i" -gt 0 ] || { say "no patch found in $arg"; exit 2; }
say "$i patch(es) in $arg"

step=$work/tree
sh "$here/extract.sh" fetch "$tree" "$step" >"$work/fetch.log" 2>&1 ||
	{ cat "$work/fetch.log"; say "cannot take the files from $tree"; exit 3; }
rm -f "$step/DESCRIBE"
run_step "the tree as given" "$step" "$@"
printf '%-14s %s\n' "$verdict" "0000 the tree as given"
for p in "$work/p/patch."*; do
	n=$((n + 1))
	num=${p##*.}
	title=$(grep -m1 -E '^(Subject: )?\[PATCH' "$p" |
		sed 's/^Subject: //')
	if [ -f "$work/name/$num.t" ]; then
		name=$(cat "$work/name/$num.t")
		title="$name${title:+: $title}"
	fi
	[ -n "$title" ] || title=$(basename "$p")
	src=$p
	if [ -n "$fixup" ] && [ -f "$fixup/$num.patch" ]; then
		src=$fixup/$num.patch
		title="$title (fix-up $src)"
	fi
	# Only the files under test; the others are listed.
	awk -v keep="$work/keep" -v skip="$work/skip" -v root="$step" '
	/^diff / {
		f = $NF; sub(/^b\//, "", f)
		on = (system("test -f \"" root "/" f "\"") == 0)
		if (!on) print f >> skip
	}
	on { print > keep }' "$src"
	skipped=$(sort -u "$work/skip" 2>/dev/null | tr '\n' ' ')
	rm -f "$work/skip"
	if [ ! -s "$work/keep" ]; then
		printf '%-14s %s\n' "unchanged" "$num $title"
		echo "               (no file under test: ${skipped:-none})"
		continue
	fi
	if ! patch -p1 -d "$step" --forward --no-backup-if-mismatch \
		-r "$work/rej" <"$work/keep" >"$work/patch.log" 2>&1; then
		printf '%-14s %s\n' "DOES NOT APPLY" "$num $title"
		sed 's/^/               /' "$work/patch.log"
		[ -f "$work/rej" ] && sed 's/^/    reject: /' "$work/rej"
		say "patch $num does not apply: put a fix-up at" \
		    "FIXUP/$num.patch and give --fixup FIXUP (docs/kcheck.md)"
		[ -z "$first" ] && { first="patch $num (does not apply)";
			cp "$work/patch.log" "$work/log.apply"
			first_log=$work/log.apply; }
		summary
	fi
	rm -f "$work/keep"
	run_step "patch $num $title" "$step" "$@"
	printf '%-14s %s\n' "$verdict" "$num $title"
	grep -E 'offset|fuzz' "$work/patch.log" | sed 's/^/               /'
	[ -n "$skipped" ] && echo "               (not under test: $skipped)"
done
summary
