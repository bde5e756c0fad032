# SPDX-License-Identifier: LGPL-2.1-or-later
#
# refill-split (ordering): the refill's atomic add to the slot becomes a
# read followed by a separate write.  A remote drain (or another access
# to the slot) between the two is undone: the drained pages come back in
# the slot while the drain also uncharged them.
# Race-only: the kernel explorer's kstock-drain (or kcheck --migrate).
#
# Apply: perl -0777 -i -p refill-split.pl mm/page_counter.c
s{(\nbool page_counter_try_charge_stock\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s/\batomic_add\s*\(\s*(\(int\)\s*\(\s*charge\s*-\s*nr_pages\s*\))\s*,\s*&stock->nr_pages\s*\)\s*;/atomic_set(&stock->nr_pages, atomic_read(&stock->nr_pages) + $1);/
		or die "refill-split: no refill add in page_counter_try_charge_stock()\n";
	$fn
}se or die "refill-split: no page_counter_try_charge_stock()\n";
