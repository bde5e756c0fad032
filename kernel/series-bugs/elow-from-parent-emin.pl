# SPDX-License-Identifier: LGPL-2.1-or-later
#
# elow-from-parent-emin: page_counter_calculate_protection() computes a
# child's effective low from its parent's effective min.
# Sequential: kcheck (the protection walk).
#
# Apply: perl -0777 -i -p elow-from-parent-emin.pl mm/page_counter.c
s{(\nvoid page_counter_calculate_protection\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s/\bREAD_ONCE\s*\(\s*parent->elow\s*\)/READ_ONCE(parent->emin)/
		or die "elow-from-parent-emin: no read of the parent's elow in page_counter_calculate_protection()\n";
	$fn
}se or die "elow-from-parent-emin: no page_counter_calculate_protection()\n";
