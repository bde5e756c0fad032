# SPDX-License-Identifier: LGPL-2.1-or-later
# pcstock-base: base-v5-cap.pl
#
# v5-cap-leaks (on the v5 cap base, base-v5-cap.pl, applied first): the
# cap cuts the slot back to the batch and drops the excess instead of
# uncharging it.  Race-only: kcheck --migrate.
#
# Apply: perl -0777 -i -p base-v5-cap.pl mm/page_counter.c
#        perl -0777 -i -p v5-cap-leaks.pl mm/page_counter.c
s{(\nbool page_counter_try_charge_stock\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s/\bif\s*\(\s*next\s*>\s*cap\s*\)\s*page_counter_uncharge\s*\(\s*counter\s*,\s*next\s*-\s*cap\s*\)\s*;/(void)0; \/* excess dropped *\//
		or die "v5-cap-leaks: no v5 cap in page_counter_try_charge_stock() (apply base-v5-cap.pl first)\n";
	$fn
}se or die "v5-cap-leaks: no page_counter_try_charge_stock()\n";
