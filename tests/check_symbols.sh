#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every symbol the shared library defines and exports must start with
# pcstock_, and the test-only hooks must not be there at all.
set -eu
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ { print $3 }')
[ -n "$syms" ] || { echo "no exported symbols found in $lib" >&2; exit 1; }
bad=$(printf '%s\n' "$syms" | grep -v '^pcstock_' || true)
if [ -n "$bad" ]; then
	echo "exported symbols without the pcstock_ prefix:" >&2
	printf '  %s\n' $bad >&2
	exit 1
fi
for hook in pcstock_explore_hook pcstock_fault_hook; do
	if printf '%s\n' "$syms" | grep -qx "$hook"; then
		echo "test-only symbol $hook is exported" >&2
		exit 1
	fi
done
echo "$(printf '%s\n' "$syms" | wc -l) exported symbols, all pcstock_"
