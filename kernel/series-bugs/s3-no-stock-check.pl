# SPDX-License-Identifier: LGPL-2.1-or-later
#
# s3-no-stock-check (S3): the charge through the stock forgets that a
# counter may have no stock (the series' allocation-failure fallback, or
# a stock freed): it takes the per-CPU slot of a NULL stock.
# Sequential: kcheck (a CRASH; stocks are a property of the case).
#
# Apply: perl -0777 -i -p s3-no-stock-check.pl mm/page_counter.c
s{(\nbool page_counter_try_charge_stock\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s/\n\s*if\s*\(\s*!\s*counter->stock\s*\)\s*goto\s+\w+\s*;//
		or die "s3-no-stock-check: no stock check in page_counter_try_charge_stock()\n";
	$fn
}se or die "s3-no-stock-check: no page_counter_try_charge_stock()\n";
