// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stats.c - the group readers: usage, stock, events, statistics.
 */
#include <pcstock/hierarchy.h>

#include "atomic.h"
#include "counter_read.h"
#include "group.h"
#include "policy.h"
#include "rcu.h"

/* ---- reads ------------------------------------------------------------- */

unsigned long pcstock_group_usage(const struct pcstock_group *g)
{
	return g ? pcs_counter_usage(&g->memory) : 0;
}

unsigned long pcstock_group_memsw_usage(const struct pcstock_group *g)
{
	return g && g->tree->attr.memsw ? pcs_counter_usage(&g->memsw) : 0;
}

unsigned long pcstock_group_stock_pages(const struct pcstock_group *g)
{
	unsigned long sum;

	if (!g || !g->tree->ops->stock_pages)
		return 0;
	rcu_lock();
	sum = g->tree->ops->stock_pages((struct pcstock_group *)g);
	rcu_unlock();
	return sum;
}

unsigned long pcstock_group_usage_exact(const struct pcstock_group *g)
{
	unsigned long usage = pcstock_group_usage(g);
	unsigned long stock = pcstock_group_stock_pages(g);

	return usage > stock ? usage - stock : 0;
}

unsigned long pcstock_group_events(const struct pcstock_group *g,
				   enum pcstock_event ev)
{
	if (!g || (unsigned int)ev >= PCSTOCK_NR_EVENTS)
		return 0;
	return pcs_load(&g->events[ev], PCS_RELAXED);
}

void pcstock_group_stats(const struct pcstock_group *g,
			 struct pcstock_group_stats *st)
{
	const struct pcstock_counter *m, *s;
	bool memsw;

	if (!st)
		return;
	if (!g) {
		*st = (struct pcstock_group_stats){ 0 };
		return;
	}
	m = &g->memory;
	s = &g->memsw;
	memsw = g->tree->attr.memsw;
	*st = (struct pcstock_group_stats){
		.usage = pcs_counter_usage(m),
		.usage_exact = pcstock_group_usage_exact(g),
		.memsw_usage = memsw ? pcs_counter_usage(s) : 0,
		.max = pcs_counter_max(m),
		.high = pcs_counter_high(m),
		.min = pcs_counter_min(m),
		.low = pcs_counter_low(m),
		.memsw_max = memsw ? pcs_counter_max(s) : 0,
		.emin = pcs_counter_emin(m),
		.elow = pcs_counter_elow(m),
		.watermark = pcs_counter_watermark(m),
		.failcnt = pcs_counter_failcnt(m),
		.memsw_failcnt = memsw ? pcs_counter_failcnt(s) : 0,
		.refused = pcs_load(&g->refused, PCS_RELAXED),
	};
	for (int ev = 0; ev < PCSTOCK_NR_EVENTS; ev++) {
		st->events[ev] = pcs_load(&g->events[ev], PCS_RELAXED);
		st->events_local[ev] = pcs_load(&g->events_local[ev],
						PCS_RELAXED);
	}
	pcstock_counter_stock_stats(m, &st->stock);
}
