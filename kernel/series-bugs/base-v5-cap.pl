# SPDX-License-Identifier: LGPL-2.1-or-later
#
# base-v5-cap: NOT a bug.  The base variant the two cap bugs are planted
# on.  The series as posted (v4) has no batch cap; this edit gives its
# refill a v5-style one, in our own words: the surplus goes into the slot
# by a compare-and-exchange loop that never lets the slot exceed the
# batch, and whatever would have gone above the batch is uncharged from
# the hierarchy again.  Sequentially a v4 slot never reaches the batch,
# so this variant behaves like v4 unless refills race (kcheck --migrate).
# kcheck-bug-run runs it as a second clean control; a bug that needs it
# says so with a "pcstock-base:" line.
#
# Apply: perl -0777 -i -p base-v5-cap.pl mm/page_counter.c
s{(\nbool page_counter_try_charge_stock\(.*?\n\}\n)}{
	my $fn = $1;
	$fn =~ s{\batomic_add\s*\(\s*(\(int\)\s*\(\s*charge\s*-\s*nr_pages\s*\))\s*,\s*&stock->nr_pages\s*\)\s*;}{{
			/* v5-style cap (pcstock's series-bugs base) */
			int cap = (int)READ_ONCE(counter->batch);
			int cur = atomic_read(&stock->nr_pages);
			int next, keep;

			do {
				next = cur + $1;
				keep = next > cap ? cap : next;
			} while (!atomic_try_cmpxchg(&stock->nr_pages, &cur, keep));
			if (next > cap)
				page_counter_uncharge(counter, next - cap);
		}}
		or die "base-v5-cap: no refill add in page_counter_try_charge_stock()\n";
	$fn
}se or die "base-v5-cap: no page_counter_try_charge_stock()\n";
