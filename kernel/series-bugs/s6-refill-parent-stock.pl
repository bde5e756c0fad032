# SPDX-License-Identifier: LGPL-2.1-or-later
#
# s6-refill-parent-stock (S6): the refill, after charging its batch to
# the counter, puts the surplus into the parent's slot (a crash when the
# counter is a root or its parent has no stock; a slot that does not
# match the charges otherwise).
# Sequential: kcheck (a CRASH or a divergence).
#
# Apply: perl -0777 -i -p s6-refill-parent-stock.pl mm/page_counter.c
s{(\nbool page_counter_try_charge_stock\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s/(\bpage_counter_try_charge\s*\(\s*counter\s*,\s*charge\s*,\s*fail\s*\).*?\bthis_cpu_ptr\s*\(\s*counter)->stock\b/$1->parent->stock/s
		or die "s6-refill-parent-stock: no refill slot in page_counter_try_charge_stock()\n";
	$fn
}se or die "s6-refill-parent-stock: no page_counter_try_charge_stock()\n";
