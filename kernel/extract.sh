#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# extract.sh - take the few kernel files the shim builds out of a kernel
# tree, into a build directory, and describe them.  Nothing it writes
# belongs in the repository: the kernel's code is GPL-2.0, pcstock
# LGPL-2.1.  Only hashes of it are kept here (kernel/fingerprints/).
#
#   extract.sh fetch SRC RAW
#       SRC is a kernel tree (a directory) or a tarball (.tar.xz, .tar.gz,
#       .tar), e.g. /usr/src/linux-source-6.12.tar.xz; copies only the
#       files listed in $files below into RAW, with RAW/VERSION (the
#       Makefile's), RAW/SOURCE, RAW/DESCRIBE (git describe, for a git
#       tree), RAW/FILES (each file and its hash) and RAW/TREE_ID (one
#       hash of them all).  A tarball's files are cached (see cache_dir()).
#   extract.sh stage RAW OUT [MUTATION]
#       lays RAW out in OUT as the kernel unit (kernel/unit.c) includes it:
#       OUT/include/linux/{page_counter,ctype}.h, OUT/mm/page_counter.c,
#       OUT/lib/{ctype.c,kstrtox.h}, OUT/lib/kparse.c (memparse and the
#       integer and whitespace helpers it needs, cut function by function
#       from their files) and OUT/kpc_tree.h (version, features, identity).
#       MUTATION plants one bug in OUT's copy (see mutate() below).
#   extract.sh fingerprint RAW
#       prints one line per function and definition of the files the unit
#       uses: "FILE NAME HASH" (kernel/fingerprints/ keeps these).
#   extract.sh verify RAW DIR
#       compares RAW's fingerprint with every record in DIR; prints which
#       functions differ from the closest record.
#
# Exit status: 0 done (verify: the fingerprint equals a record); 1 failed
# (verify: it differs from every record), with the reason on stderr; 3
# (stage) the planted bug's function is not in this tree at all; 2 usage.
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

# The lib/ functions the unit takes, file by file.
lib_cuts="lib/kstrtox.c:_parse_integer_fixup_radix,_parse_integer_limit
lib/vsprintf.c:simple_strntoull,simple_strtoull
lib/cmdline.c:memparse
lib/string_helpers.c:skip_spaces,strim"

die() {
	echo "kernel/extract.sh: $*" >&2
	exit 1
}

hash12() {
	sha256sum | cut -c1-12
}

# Where a tarball's extracted files are kept between build directories:
# $PCSTOCK_KERNEL_CACHE ("off": nowhere), else the user's cache.
cache_dir() {
	c=${PCSTOCK_KERNEL_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/pcstock/kernels}
	[ "$c" = off ] && return 1
	key=$(stat -L -c '%s %Y %i' "$1" 2>/dev/null) || return 1
	key=$(printf '%s %s\n' "$1" "$key" | hash12)
	echo "$c/$key"
}

fetch() {
	src=$1
	raw=$2
	rm -rf "$raw.tmp"
	mkdir -p "$raw.tmp"
	describe=""
	if [ -d "$src" ]; then
		src=$(cd "$src" && pwd)
		for f in $files; do
			[ -f "$src/$f" ] || die "$src is not a kernel tree: no $f"
			mkdir -p "$raw.tmp/$(dirname "$f")"
			cp "$src/$f" "$raw.tmp/$f"
		done
		if command -v git >/dev/null 2>&1 &&
		   git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
			describe=$(git -C "$src" describe --always --dirty \
				--tags 2>/dev/null || true)
		elif [ -f "$src/DESCRIBE" ]; then
			# A tree extracted before (scripts/deps.sh kernels).
			describe=$(head -n 1 "$src/DESCRIBE")
		fi
	elif [ -f "$src" ]; then
		src=$(cd "$(dirname "$src")" && pwd)/$(basename "$src")
		cache=$(cache_dir "$src" || true)
		if [ -n "$cache" ] && [ -f "$cache/mm/page_counter.c" ] &&
		   [ -f "$cache/Makefile" ]; then
			cp -R "$cache/." "$raw.tmp/"
		else
			untar "$src" "$raw.tmp"
			if [ -n "$cache" ] && mkdir -p "$cache.tmp.$$" 2>/dev/null
			then
				cp -R "$raw.tmp/." "$cache.tmp.$$/" &&
					rm -rf "$cache" &&
					mv "$cache.tmp.$$" "$cache" ||
					rm -rf "$cache.tmp.$$"
			fi
		fi
	else
		die "no kernel tree or tarball at $src"
	fi
	awk -F' *= *' '$1 == "VERSION" { v = $2 }
		$1 == "PATCHLEVEL" { p = $2 }
		$1 == "SUBLEVEL" { s = $2 }
		$1 == "EXTRAVERSION" { x = $2 }
		END { if (v == "") exit 1; printf "%s %s %s %s\n", v, p, s, x }' \
		"$raw.tmp/Makefile" >"$raw.tmp/VERSION" ||
		die "no version in $src/Makefile"
	echo "$src" >"$raw.tmp/SOURCE"
	echo "$describe" >"$raw.tmp/DESCRIBE"
	for f in $files; do
		printf '%s %s\n' "$f" "$(hash12 <"$raw.tmp/$f")"
	done >"$raw.tmp/FILES"
	hash12 <"$raw.tmp/FILES" >"$raw.tmp/TREE_ID"
	rm -rf "$raw"
	mv "$raw.tmp" "$raw"
}

# untar TARBALL DIR: the listed files of a tarball whose top directory is
# not known in advance (match each one level down, keep the shallowest).
untar() {
	pats=""
	for f in $files; do
		pats="$pats */$f"
	done
	mkdir -p "$2/x"
	# The patterns are tar's, not the shell's: no globbing here.
	set -f
	# shellcheck disable=SC2086
	tar -xf "$1" -C "$2/x" --wildcards --no-anchored $pats ||
		die "cannot extract from $1"
	set +f
	top=$(find "$2/x" -path '*/mm/page_counter.c' |
		awk '{ print length($0), $0 }' | sort -n | head -n 1 |
		cut -d' ' -f2-)
	[ -n "$top" ] || die "$1 holds no mm/page_counter.c"
	top=${top%/mm/page_counter.c}
	for f in $files; do
		[ -f "$top/$f" ] || die "$1 has no $f"
		mkdir -p "$2/$(dirname "$f")"
		mv "$top/$f" "$2/$f"
	done
	rm -rf "$2/x"
}

# defs FILE: every top-level definition of FILE (a function, a struct, an
# inline), from its first line at column 0 to its closing brace at column
# 0, as "NAME<TAB>line" records ("name()" for a function, "struct:name"
# for a struct: no spaces); what lies outside any is "(rest)".
defs() {
	awk '
		function name_of(s,    m) {
			if (match(s, /[A-Za-z_][A-Za-z_0-9]*[ \t]*\(/)) {
				m = substr(s, RSTART, RLENGTH)
				sub(/[ \t]*\($/, "", m)
				return m "()"
			}
			if (match(s, /struct[ \t]+[A-Za-z_][A-Za-z_0-9]*/)) {
				m = substr(s, RSTART, RLENGTH)
				sub(/[ \t]+/, ":", m)
				return m
			}
			return ""
		}
		!on && /^[A-Za-z_]/ && $0 !~ /;[ \t]*$/ && $0 !~ /^#/ {
			n = name_of($0)
			if (n != "") { on = 1; cur = n; brace = 0 }
		}
		{ sub(/[ \t]+$/, ""); print (on ? cur : "(rest)") "\t" $0 }
		on && /{/ { brace = 1 }
		# A definition ends at its closing brace, a declaration that
		# spans lines at its semicolon.
		on && (/^}/ || (!brace && /;$/)) { on = 0 }
	' "$1"
}

# fingerprint RAW: "FILE NAME HASH" for page_counter.c and .h, definition
# by definition, and for each lib/ function the unit cuts.
fingerprint() {
	raw=$1
	for f in mm/page_counter.c include/linux/page_counter.h; do
		defs "$raw/$f" >"$raw/.defs"
		cut -f1 "$raw/.defs" | awk '!seen[$0]++' | while read -r n; do
			printf '%s %s %s\n' "$f" "$n" "$(awk -F'\t' -v n="$n" \
				'$1 == n' "$raw/.defs" | hash12)"
		done
		rm -f "$raw/.defs"
	done
	for cut in $lib_cuts; do
		f=${cut%%:*}
		for fn in $(echo "${cut#*:}" | tr ',' ' '); do
			printf '%s %s() %s\n' "$f" "$fn" \
				"$(cut_functions "$raw/$f" "$fn" | hash12)"
		done
	done
}

# verify RAW DIR: the closest record is the one sharing most lines.
verify() {
	raw=$1
	dir=$2
	fingerprint "$raw" | sort >"$raw/FINGERPRINT"
	best=""
	bestn=-1
	for rec in "$dir"/*.txt; do
		[ -f "$rec" ] || continue
		grep -v '^#' "$rec" | sort >"$raw/.rec"
		if cmp -s "$raw/.rec" "$raw/FINGERPRINT"; then
			rm -f "$raw/.rec"
			echo "verified: identical to $(basename "$rec" .txt)"
			return 0
		fi
		n=$(comm -12 "$raw/.rec" "$raw/FINGERPRINT" | wc -l)
		if [ "$n" -gt "$bestn" ]; then
			bestn=$n
			best=$rec
		fi
	done
	rm -f "$raw/.rec"
	if [ -z "$best" ]; then
		echo "unverified: no fingerprint records in $dir"
		return 1
	fi
	grep -v '^#' "$best" | sort >"$raw/.rec"
	echo "unverified: differs from $(basename "$best" .txt), the" \
	     "closest verified tree, in:"
	# Names on one side only, or with another hash.
	{ cut -d' ' -f1,2 "$raw/.rec"; cut -d' ' -f1,2 "$raw/FINGERPRINT"; } |
		sort -u | while read -r f n; do
		a=$(awk -v f="$f" -v n="$n" '$1 == f && $2 == n { print $3 }' \
			"$raw/.rec")
		b=$(awk -v f="$f" -v n="$n" '$1 == f && $2 == n { print $3 }' \
			"$raw/FINGERPRINT")
		if [ -z "$a" ]; then
			echo "  new      $f $n"
		elif [ -z "$b" ]; then
			echo "  gone     $f $n"
		elif [ "$a" != "$b" ]; then
			echo "  changed  $f $n"
		fi
	done
	rm -f "$raw/.rec"
	return 1
}

# cut_functions FILE NAME...: print the definition of each function NAME
# in FILE, from the line that starts it (at column 0, with "NAME(") to the
# first closing brace at column 0.
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

# has_function FILE NAME: FILE defines NAME (not only declares it).
has_function() {
	awk -v fn="$2" '
		$0 ~ "^[a-z].*[ *]" fn "\\(" && $0 !~ /;[ \t]*$/ { f = 1 }
		END { exit !f }' "$1"
}

# in_function FILE NAME PERL-SUBSTITUTION: apply the substitution once,
# within NAME's definition only (it may span lines).  Status 3 if FILE
# has no NAME, 1 if the substitution found nothing to change in it.
in_function() {
	has_function "$1" "$2" || return 3
	KPC_FN=$2 KPC_SUB=$3 perl -0777 -i -pe '
		my $fn = $ENV{KPC_FN};
		my $done = 0;
		s{^([a-z][^\n]*[ *]\Q$fn\E\((?![^\n]*;[ \t]*\n)(?:[^\n]*\n)*?\}\n)}{
			my $body = $1;
			local $_ = $body;
			$done = eval $ENV{KPC_SUB};
			die $@ if $@;
			$_;
		}me;
		END { exit($done ? 0 : 1) }' "$1"
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

# stock_base OUT: the stock a stock_* bug is planted in: the tree's own
# series, else our rendering of it.
stock_base() {
	[ "$(feature stock)" = 1 ] || own_stock "$1"
}

# plant OUT FUNCTION MUTATION SUBSTITUTION: one planted bug, located by
# the function it lives in, not by a line of text.
plant() {
	rc=0
	in_function "$1/mm/page_counter.c" "$2" "$4" || rc=$?
	case $rc in
	0) ;;
	3)
		echo "kernel/extract.sh: planted bug $3: this tree has no" \
		     "$2() in mm/page_counter.c (absent: skipped)" >&2
		exit 3 ;;
	*)
		die "planted bug $3: found nothing to change in $2() of" \
		    "mm/page_counter.c: the function's text is not one this" \
		    "script knows (see kernel/extract.sh, mutate())" ;;
	esac
}

# mutate OUT NAME: plant one bug in OUT's copy of the kernel's file.  Each
# edit is a Perl substitution within one function; it must change the
# text, else the stage fails: a bug cannot silently vanish.
mutate() {
	pc=$1/mm/page_counter.c
	case $2 in
	own_stock)
		own_stock "$1" ;;
	own_stock_refill_bug)
		# The refill keeps the whole batch in the slot, the pages
		# handed to the caller included.
		own_stock "$1" KPC_OWN_STOCK_REFILL_BUG ;;
	watermark_off_by_one)
		# The global peak one page above the usage that set it.
		plant "$1" page_counter_charge "$2" \
			's/(WRITE_ONCE\(\s*c->watermark\s*,\s*new)\s*\)/$1 + 1)/' ;;
	failcnt_not_counted)
		# A failed try_charge no longer counts the failure.
		plant "$1" page_counter_try_charge "$2" \
			's/\bc->failcnt\s*\+\+/(void)0/' ;;
	set_max_refuses_equal)
		# -EBUSY at usage == limit.
		plant "$1" page_counter_set_max "$2" \
			's/\(\s*usage\s*>\s*nr_pages\s*\)/(usage >= nr_pages)/' ;;
	set_max_no_reread)
		# P2: set_max() trusts the usage it read before its exchange
		# of the limit, instead of reading it again after: a charge
		# that saw the old limit in between stays above the new one
		# (race-only: the explorer's).
		plant "$1" page_counter_set_max "$2" \
			's/if\s*\(\s*page_counter_read\(\s*counter\s*\)\s*<=\s*usage\s*\|\|/if (1 ||/' ;;
	protection_rounds_up)
		# The overcommitted share rounds up, whatever the tree's
		# arithmetic was (64-bit or mul_u64_u64_div_u64()).
		plant "$1" effective_protection "$2" \
			's/(if\s*\(\s*siblings_protected\s*>\s*parent_effective\s*\)\s*return\s)[^;]*;/$1(protected * parent_effective + siblings_protected - 1) \/ siblings_protected;/' ;;
	stock_no_null_check)
		# S3: the charge through the stock forgets that a counter may
		# have none (the series' allocation-failure fallback, or a
		# stock freed): this_cpu_ptr() of NULL.  On the tree's series,
		# or on our rendering when the tree has none.
		stock_base "$1"
		plant "$1" page_counter_try_charge_stock "$2" \
			's/if\s*\(\s*!\s*counter->stock\s*\)\s*goto\s+\w+\s*;\s*\n// || s/if\s*\(\s*counter->stock\s*\)/if (1)/' ;;
	stock_cap_leaks)
		# A v5-style batch cap that leaks: after the refill's add, a
		# slot above the batch is cut back to the batch, and the
		# excess, charged to the hierarchy, is dropped instead of
		# uncharged.
		stock_base "$1"
		plant "$1" page_counter_try_charge_stock "$2" \
			's/atomic_add\(\s*(\(int\)\s*\(\s*\w+\s*-\s*nr_pages\s*\))\s*,\s*([^;]*?)\)\s*;/kpc_atomic_add_capped_leaky($1, $2, (int)READ_ONCE(counter->batch));/' ;;
	stock_refill_split)
		# The refill's add to the slot done as a read and a separate
		# write: a drain between them is lost (the explorer's).
		stock_base "$1"
		plant "$1" page_counter_try_charge_stock "$2" \
			's/atomic_add\(\s*(\(int\)\s*\(\s*\w+\s*-\s*nr_pages\s*\))\s*,/kpc_atomic_add_split($1,/' ;;
	stock_drain_split)
		# The drain reads the slot before it empties it, in two
		# accesses: a refill or consume between them is lost.
		stock_base "$1"
		plant "$1" page_counter_drain_stock "$2" \
			's/\batomic_xchg\(/kpc_atomic_xchg_split(/' ;;
	try_charge_relaxed_add)
		# The add of page_counter_try_charge() stops being fully
		# ordered: its limit read may pass it (store buffering with
		# set_max()).
		plant "$1" page_counter_try_charge "$2" \
			's/=\s*atomic_long_add_return\(/= kpc_atomic_long_add_return_relaxed(/' ;;
	*)
		die "unknown mutation $2" ;;
	esac
}

# feature NAME: 1 if the staged copy has it, else 0.
feature() {
	pc=$out/mm/page_counter.c
	h=$out/include/linux/page_counter.h
	case $1 in
	track_failcnt) grep -q track_failcnt "$h" ;;
	protection_support) grep -q 'protection_support' "$h" ;;
	local_watermark) grep -q 'local_watermark' "$h" ;;
	calc_protection)
		has_function "$pc" page_counter_calculate_protection &&
			has_function "$pc" effective_protection ;;
	protection_cap)
		# 6.12.118's fix: the floated share's unprotected usage is
		# capped at the parent's (a min() of the two).
		cut_functions "$pc" effective_protection 2>/dev/null |
			grep -Eq 'min(_t)?\(.*parent_unprotected' ;;
	stock)
		grep -q 'page_counter_try_charge_stock' "$pc" &&
			grep -q 'page_counter_drain_stock' "$pc" ;;
	stock_mentioned)
		grep -Eq 'struct page_counter_stock|__percpu[ *]*stock;' \
			"$h" "$pc" ;;
	esac && echo 1 || echo 0
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
		for cut in $lib_cuts; do
			# shellcheck disable=SC2046
			cut_functions "$raw/${cut%%:*}" \
				$(echo "${cut#*:}" | tr ',' ' ')
		done
	} >"$out/lib/kparse.c"
	own=0
	case $mutation in
	own_stock*)
		# A tree with the series is stocked already: ours would be a
		# second copy.
		[ "$(feature stock)" = 1 ] && {
			echo "kernel/extract.sh: $mutation: the tree carries" \
			     "the stock series itself (absent: skipped)" >&2
			exit 3
		}
		own=1 ;;
	stock_*)
		[ "$(feature stock)" = 1 ] || own=1 ;;
	esac
	if [ -n "$mutation" ]; then
		mutate "$out" "$mutation"
	fi
	# Features, from the staged (perhaps patched) copy.
	read -r v p s x <"$raw/VERSION" || true
	stock=$(feature stock)
	partial=0
	[ "$stock" = 0 ] && [ "$(feature stock_mentioned)" = 1 ] && partial=1
	files_c=$(awk '{ printf "%s %s\\n", $1, $2 }' "$raw/FILES")
	{
		echo "/* Generated by pcstock's kernel/extract.sh. */"
		echo "#define KPC_TREE_VERSION \"$v.$p.$s${x:-}\""
		echo "#define KPC_TREE_VERSION_CODE (($v << 16) + ($p << 8) + ${s:-0})"
		echo "#define KPC_TREE_HAS_TRACK_FAILCNT $(feature track_failcnt)"
		echo "#define KPC_TREE_HAS_PROTECTION_SUPPORT $(feature protection_support)"
		echo "#define KPC_TREE_HAS_LOCAL_WATERMARK $(feature local_watermark)"
		echo "#define KPC_TREE_HAS_CALC_PROTECTION $(feature calc_protection)"
		echo "#define KPC_TREE_HAS_PROTECTION_CAP $(feature protection_cap)"
		echo "#define KPC_TREE_HAS_STOCK $stock"
		echo "#define KPC_TREE_STOCK_PARTIAL $partial"
		echo "#define KPC_TREE_OWN_STOCK $own"
		echo "#define KPC_TREE_MUTATION \"${mutation:-none}\""
		echo "#define KPC_TREE_ID \"$(cat "$raw/TREE_ID")\""
		echo "#define KPC_TREE_SOURCE \"$(sed 's/["\\]/\\&/g' "$raw/SOURCE")\""
		echo "#define KPC_TREE_DESCRIBE \"$(sed 's/["\\]/\\&/g' "$raw/DESCRIBE")\""
		printf '#define KPC_TREE_FILES "%s"\n' "$files_c"
	} >"$out/kpc_tree.h"
}

case ${1:-} in
fetch) [ $# -eq 3 ] || die "usage: extract.sh fetch SRC RAW"; fetch "$2" "$3" ;;
stage) [ $# -ge 3 ] || die "usage: extract.sh stage RAW OUT [MUTATION]"
	stage "$2" "$3" "${4:-}" ;;
fingerprint) [ $# -eq 2 ] || die "usage: extract.sh fingerprint RAW"
	fingerprint "$2" ;;
verify) [ $# -eq 3 ] || die "usage: extract.sh verify RAW DIR"
	verify "$2" "$3" ;;
*) echo "usage: extract.sh fetch SRC RAW | stage RAW OUT [MUTATION] |" \
	"fingerprint RAW | verify RAW DIR" >&2
	exit 2 ;;
esac
