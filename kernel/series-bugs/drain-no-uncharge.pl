# SPDX-License-Identifier: LGPL-2.1-or-later
#
# drain-no-uncharge: page_counter_drain_stock() empties a slot and keeps
# its pages charged: they are held by nobody from then on.
# Sequential: kcheck (slots and usage compared, conservation).
#
# Apply: perl -0777 -i -p drain-no-uncharge.pl mm/page_counter.c
s{(\nvoid page_counter_drain_stock\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s/\bpage_counter_uncharge\s*\(\s*counter\s*,\s*nr_pages\s*\)/(void)nr_pages/
		or die "drain-no-uncharge: no uncharge in page_counter_drain_stock()\n";
	$fn
}se or die "drain-no-uncharge: no page_counter_drain_stock()\n";
