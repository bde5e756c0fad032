// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * own_stock.c - pcstock's own rendering of the per-counter stock series'
 * page_counter functions (consume, refill, drain), written for
 * pcstock-kcheck's honesty check: kernel/extract.sh appends it to a staged
 * copy of a tree that lacks the series (mutation own_stock), so that CI
 * runs the stock differential, and once more with a planted change
 * (own_stock_refill_bug) that the differential must catch.  It follows
 * the series' documented behaviour; it is not the series' code.
 */
#include <linux/percpu.h>

void page_counter_drain_stock(struct page_counter *counter, unsigned int cpu)
{
	int taken;

	if (!counter->stock)
		return;
	taken = atomic_xchg(&per_cpu_ptr(counter->stock, cpu)->nr_pages, 0);
	if (taken)
		page_counter_uncharge(counter, taken);
}

int page_counter_alloc_stock(struct page_counter *counter, unsigned int batch)
{
	counter->stock = alloc_percpu(struct page_counter_stock);
	if (!counter->stock)
		return -ENOMEM;
	counter->batch = batch;
	return 0;
}

void page_counter_free_stock(struct page_counter *counter)
{
	int cpu;

	if (!counter->stock)
		return;
	for_each_possible_cpu(cpu)
		page_counter_drain_stock(counter, cpu);
	free_percpu(counter->stock);
	counter->stock = NULL;
}

bool page_counter_try_charge_stock(struct page_counter *counter,
				   unsigned long nr_pages,
				   struct page_counter **fail,
				   unsigned long *nr_charged)
{
	unsigned long want = nr_pages;
	atomic_t *slot;
	int have;

	if (counter->stock) {
		/*
		 * Consume: take the pages from this CPU's slot if it has
		 * them.  Only the slot's own CPU consumes and refills it, so
		 * both stay on one CPU (no preemption) from reading the slot
		 * to changing it; a remote drain may still race them.
		 */
		preempt_disable();
		slot = &this_cpu_ptr(counter->stock)->nr_pages;
		have = atomic_read(slot);
		while ((unsigned long)have >= nr_pages) {
			if (atomic_try_cmpxchg(slot, &have,
					       have - (int)nr_pages)) {
				preempt_enable();
				want = 0;
				goto done;
			}
		}
		preempt_enable();
		/*
		 * Refill: charge a whole batch, keep the surplus in the slot
		 * of the CPU the caller is on now (it may have moved).
		 */
		want = READ_ONCE(counter->batch);
		if (want > nr_pages &&
		    page_counter_try_charge(counter, want, fail)) {
			preempt_disable();
			slot = &this_cpu_ptr(counter->stock)->nr_pages;
#ifdef KPC_OWN_STOCK_REFILL_BUG
			atomic_add((int)want, slot);
#else
			atomic_add((int)(want - nr_pages), slot);
#endif
			preempt_enable();
			goto done;
		}
	}
	want = nr_pages;
	if (!page_counter_try_charge(counter, want, fail))
		return false;
done:
	if (nr_charged)
		*nr_charged = want;
	return true;
}
