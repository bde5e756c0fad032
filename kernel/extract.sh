#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# extract.sh - take the few kernel files the shim builds out of a kernel
# tree, into a build directory.  Nothing it writes belongs in the
# repository: the kernel's code is GPL-2.0, pcstock LGPL-2.1.
#
#   extract.sh fetch SRC RAW
#       SRC is a kernel tree (a directory) or a tarball (.tar.xz, .tar.gz,
#       .tar), e.g. /usr/src/linux-source-6.12.tar.xz; copies only the
#       files listed in $files below into RAW, plus RAW/VERSION.
#   extract.sh stage RAW OUT [MUTATION]
#       lays RAW out in OUT as the kernel unit (kernel/unit.c) includes it:
#       OUT/include/linux/{page_counter,ctype}.h, OUT/mm/page_counter.c,
#       OUT/lib/{ctype.c,kstrtox.h}, OUT/lib/kparse.c (memparse and the
#       integer and whitespace helpers it needs, cut function by function
#       from their files) and OUT/kpc_tree.h (version and features).
#       MUTATION plants one bug in OUT's copy (see mutate() below); the
#       script fails if the planted change does not apply.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

files="Makefile
mm/page_counter.c
include/linux/page_counter.h
include/linux/ctype.h
lib/ctype.c
lib/cmdline.c
lib/kstrtox.c
lib/kstrtox.h
lib/vsprintf.c
lib/string_helpers.c"

die() {
	echo "kernel/extract.sh: $*" >&2
	exit 1
}

fetch() {
	src=$1
	raw=$2
	rm -rf "$raw.tmp"
	mkdir -p "$raw.tmp"
	if [ -d "$src" ]; then
		for f in $files; do
			[ -f "$src/$f" ] || die "$src is not a kernel tree: no $f"
			mkdir -p "$raw.tmp/$(dirname "$f")"
			cp "$src/$f" "$raw.tmp/$f"
		done
	elif [ -f "$src" ]; then
		# The tarball's top directory is not known in advance: match
		# each file one level down, and keep the shallowest match.
		pats=""
		for f in $files; do
			pats="$pats */$f"
		done
		mkdir -p "$raw.tmp/x"
		# The patterns are tar's, not the shell's: no globbing here.
		set -f
		# shellcheck disable=SC2086
		tar -xf "$src" -C "$raw.tmp/x" --wildcards --no-anchored \
			$pats || die "cannot extract from $src"
		set +f
		top=$(find "$raw.tmp/x" -path '*/mm/page_counter.c' |
			awk '{ print length($0), $0 }' | sort -n | head -n 1 |
			cut -d' ' -f2-)
		[ -n "$top" ] || die "$src holds no mm/page_counter.c"
		top=${top%/mm/page_counter.c}
		for f in $files; do
			[ -f "$top/$f" ] || die "$src has no $f"
			mkdir -p "$raw.tmp/$(dirname "$f")"
			mv "$top/$f" "$raw.tmp/$f"
		done
		rm -rf "$raw.tmp/x"
	else
		die "no kernel tree or tarball at $src"
	fi
	awk -F' *= *' '$1 == "VERSION" { v = $2 }
		$1 == "PATCHLEVEL" { p = $2 }
		$1 == "SUBLEVEL" { s = $2 }
		END { if (v == "") exit 1; printf "%s %s %s\n", v, p, s }' \
		"$raw.tmp/Makefile" >"$raw.tmp/VERSION" ||
		die "no version in $src/Makefile"
	rm -rf "$raw"
	mv "$raw.tmp" "$raw"
}

# cut FILE NAME...: print the definition of each function NAME in FILE,
# from the line that starts it (at column 0, with "NAME(") to the first
# closing brace at column 0.
cut_functions() {
	file=$1
	shift
	for fn in "$@"; do
		awk -v fn="$fn" '
			!on && $0 ~ "^[a-z].*[ *]" fn "\\(" && $0 !~ /;$/ {
				on = 1; found = 1
			}
			on { print }
			on && /^}/ { on = 0; print "" }
			END { if (!found) exit 1 }' "$file" ||
			die "no function $fn in $file"
	done
}

# own_stock OUT [DEFINE]: give OUT's copy pcstock's own rendering of the
# stock series (kernel/own_stock.c, appended; the struct fields and
# declarations added to the header by the lines below, ours too).
own_stock() {
	h=$1/include/linux/page_counter.h
	grep -q 'struct page_counter \*parent;' "$h" ||
		die "own_stock: no parent field in $h"
	awk -v def="${2:-}" '
		/^struct page_counter \{/ && !s {
			print "#include <linux/percpu.h>"
			print "struct page_counter_stock {"
			print "\tatomic_t nr_pages;"
			print "};"
			print ""
			s = 1
		}
		{ print }
		/struct page_counter \*parent;/ && !f {
			print "\tstruct page_counter_stock __percpu *stock;"
			print "\tunsigned int batch;"
			f = 1
		}' "$h" >"$h.new"
	mv "$h.new" "$h"
	{
		[ -n "${2:-}" ] && echo "#define $2"
		cat "$here/own_stock.c"
	} >>"$1/mm/page_counter.c"
}

# mutate OUT NAME: plant one bug in OUT's copy of the kernel's file.
mutate() {
	pc=$1/mm/page_counter.c
	cp "$pc" "$pc.orig"
	case $2 in
	own_stock)
		own_stock "$1" ;;
	own_stock_refill_bug)
		# The refill keeps the whole batch in the slot, the pages
		# handed to the caller included.
		own_stock "$1" KPC_OWN_STOCK_REFILL_BUG ;;
	watermark_off_by_one)
		# The global peak one page above the usage that set it.
		sed -i '0,/WRITE_ONCE(c->watermark, new);/s//WRITE_ONCE(c->watermark, new + 1);/' "$pc" ;;
	failcnt_not_counted)
		sed -i 's/data_race(c->failcnt++);/(void)0;/' "$pc" ;;
	set_max_refuses_equal)
		sed -i 's/if (usage > nr_pages)/if (usage >= nr_pages)/' "$pc" ;;
	protection_rounds_up)
		sed -i 's|return protected \* parent_effective / siblings_protected;|return (protected * parent_effective + siblings_protected - 1) / siblings_protected;|' "$pc" ;;
	try_charge_relaxed_add)
		# The add of page_counter_try_charge() stops being fully
		# ordered: its limit read may pass it (store buffering with
		# set_max()).
		awk '/^bool page_counter_try_charge\(/ { on = 1 }
			on && /= *atomic_long_add_return\(/ && !done {
				sub(/atomic_long_add_return\(/,
				    "kpc_atomic_long_add_return_relaxed(")
				done = 1
			}
			{ print }' "$pc.orig" >"$pc" ;;
	*)
		die "unknown mutation $2" ;;
	esac
	if cmp -s "$pc" "$pc.orig"; then
		die "mutation $2 did not apply to this tree"
	fi
	rm -f "$pc.orig"
}

stage() {
	raw=$1
	out=$2
	mutation=${3:-}
	rm -rf "$out"
	mkdir -p "$out/include/linux" "$out/mm" "$out/lib"
	cp "$raw/include/linux/page_counter.h" "$raw/include/linux/ctype.h" \
		"$out/include/linux/"
	cp "$raw/mm/page_counter.c" "$out/mm/"
	cp "$raw/lib/ctype.c" "$raw/lib/kstrtox.h" "$out/lib/"
	{
		echo "/* Generated by pcstock's kernel/extract.sh: functions cut"
		echo " * from the kernel tree's lib/ files (GPL-2.0). */"
		echo "#include <linux/ctype.h>"
		echo "#include <linux/export.h>"
		echo "#include <linux/kernel.h>"
		echo "#include <linux/math64.h>"
		echo "#include <linux/string.h>"
		echo "#include \"kstrtox.h\""
		cut_functions "$raw/lib/kstrtox.c" _parse_integer_fixup_radix \
			_parse_integer_limit
		cut_functions "$raw/lib/vsprintf.c" simple_strntoull \
			simple_strtoull
		cut_functions "$raw/lib/cmdline.c" memparse
		cut_functions "$raw/lib/string_helpers.c" skip_spaces strim
	} >"$out/lib/kparse.c"
	if [ -n "$mutation" ]; then
		mutate "$out" "$mutation"
	fi
	# Features, from the staged (perhaps patched) copy.
	read -r v p s <"$raw/VERSION"
	grep -q track_failcnt "$out/include/linux/page_counter.h" &&
		failcnt=1 || failcnt=0
	# The stock series: its charge and drain functions, both.
	grep -q 'page_counter_try_charge_stock' "$out/mm/page_counter.c" &&
		grep -q 'page_counter_drain_stock' "$out/mm/page_counter.c" &&
		stock=1 || stock=0
	{
		echo "/* Generated by pcstock's kernel/extract.sh. */"
		echo "#define KPC_TREE_VERSION \"$v.$p.$s\""
		echo "#define KPC_TREE_VERSION_CODE (($v << 16) + ($p << 8) + ${s:-0})"
		echo "#define KPC_TREE_HAS_TRACK_FAILCNT $failcnt"
		echo "#define KPC_TREE_HAS_STOCK $stock"
		echo "#define KPC_TREE_MUTATION \"${mutation:-none}\""
	} >"$out/kpc_tree.h"
}

case ${1:-} in
fetch) [ $# -eq 3 ] || die "usage: extract.sh fetch SRC RAW"; fetch "$2" "$3" ;;
stage) [ $# -ge 3 ] || die "usage: extract.sh stage RAW OUT [MUTATION]"
	stage "$2" "$3" "${4:-}" ;;
*) die "usage: extract.sh fetch SRC RAW | stage RAW OUT [MUTATION]" ;;
esac
