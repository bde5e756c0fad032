# SPDX-License-Identifier: LGPL-2.1-or-later
#
# p2-set-max-no-reread (P2): page_counter_set_max() trusts the usage it
# read before exchanging the limit and never reads it again, so a charge
# that raced in between (and saw the old, higher limit) leaves usage
# above the new limit.  Race-only: the kernel explorer (counter-tight).
#
# Apply: perl -0777 -i -p p2-set-max-no-reread.pl mm/page_counter.c
s{(\nint page_counter_set_max\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s/\bpage_counter_read\s*\(\s*counter\s*\)\s*<=\s*usage\s*\|\|/1 ||/
		or die "p2-set-max-no-reread: no re-read of usage in page_counter_set_max()\n";
	$fn
}se or die "p2-set-max-no-reread: no page_counter_set_max()\n";
