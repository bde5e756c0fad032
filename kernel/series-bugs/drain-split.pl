# SPDX-License-Identifier: LGPL-2.1-or-later
#
# drain-split (ordering): the drain reads the slot and then zeroes it, in
# two accesses, instead of one exchange.  A consume or refill on the
# slot's CPU between the two is lost (a consume's pages are uncharged
# twice, a refill's surplus vanishes).
# Race-only: the kernel explorer's kstock-drain (or kcheck --migrate).
#
# Apply: perl -0777 -i -p drain-split.pl mm/page_counter.c
s{(\nvoid page_counter_drain_stock\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s/\b(\w+)\s*=\s*atomic_xchg\s*\(\s*&stock->nr_pages\s*,\s*0\s*\)\s*;/$1 = atomic_read(&stock->nr_pages);\n\tatomic_set(&stock->nr_pages, 0);/
		or die "drain-split: no exchange in page_counter_drain_stock()\n";
	$fn
}se or die "drain-split: no page_counter_drain_stock()\n";
