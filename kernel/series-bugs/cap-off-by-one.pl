# SPDX-License-Identifier: LGPL-2.1-or-later
# pcstock-base: base-v5-cap.pl
#
# cap-off-by-one (on the v5 cap base, base-v5-cap.pl, applied first): a
# slot that would pass the batch is cut to one page below it, while only
# the pages above the batch are sent back up: each cut leaves one page
# charged to the hierarchy and held by nobody.  Race-only (a v4 slot
# reaches the batch only when refills race): kcheck --migrate.
#
# Apply: perl -0777 -i -p base-v5-cap.pl mm/page_counter.c
#        perl -0777 -i -p cap-off-by-one.pl mm/page_counter.c
s{(\nbool page_counter_try_charge_stock\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s/\bkeep\s*=\s*next\s*>\s*cap\s*\?\s*cap\s*:/keep = next > cap ? cap - 1 :/
		or die "cap-off-by-one: no v5 cap in page_counter_try_charge_stock() (apply base-v5-cap.pl first)\n";
	$fn
}se or die "cap-off-by-one: no page_counter_try_charge_stock()\n";
