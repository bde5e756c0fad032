# SPDX-License-Identifier: LGPL-2.1-or-later
#
# refill-keeps-callers-pages: the charge through the stock, on a miss,
# charges a batch and puts all of it in the slot, the pages just handed
# to the caller included: they are counted twice.
# Sequential: kcheck.
#
# Apply: perl -0777 -i -p refill-keeps-callers-pages.pl mm/page_counter.c
s{(\nbool page_counter_try_charge_stock\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s/\batomic_add\s*\(\s*\(int\)\s*\(\s*charge\s*-\s*nr_pages\s*\)\s*,/atomic_add((int)charge,/
		or die "refill-keeps-callers-pages: no refill add in page_counter_try_charge_stock()\n";
	$fn
}se or die "refill-keeps-callers-pages: no page_counter_try_charge_stock()\n";
