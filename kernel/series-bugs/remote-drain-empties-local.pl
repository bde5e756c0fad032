# SPDX-License-Identifier: LGPL-2.1-or-later
#
# remote-drain-empties-local: page_counter_drain_stock(counter, cpu)
# empties the slot of the CPU it runs on, not the one it was asked for.
# Sequential: kcheck (slots compared per CPU).
#
# Apply: perl -0777 -i -p remote-drain-empties-local.pl mm/page_counter.c
s{(\nvoid page_counter_drain_stock\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s/\bper_cpu_ptr\s*\(\s*counter->stock\s*,\s*cpu\s*\)/this_cpu_ptr(counter->stock)/
		or die "remote-drain-empties-local: no per_cpu_ptr() in page_counter_drain_stock()\n";
	$fn
}se or die "remote-drain-empties-local: no page_counter_drain_stock()\n";
