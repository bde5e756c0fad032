// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * inline.c - what a program that opts in to the inline fast paths
 * (PCSTOCK_INLINE, pcstock/stock_inline.h) runs: the ctr-inline strategy
 * and the inline rows of --profile.  The only file of the bench built with
 * PCSTOCK_INLINE.  In pcstock-bench-lines the inline paths use plain C11
 * atomics, not the trace hooks, so --lines does not model ctr-inline.
 */
#define PCSTOCK_INLINE

#include "bench.h"
#include "ctr_ops.h"

bool ctr_inline_charge(void *inst, unsigned int thread, unsigned int leaf,
		       unsigned long nr)
{
	return ctr_charge_body(inst, leaf, nr);
}

void ctr_inline_uncharge(void *inst, unsigned int thread, unsigned int leaf,
			 unsigned long nr)
{
	ctr_uncharge_body(inst, leaf, nr);
}

/*
 * --profile's inline kinds (profile.c), on the leaf @c[2] as the exported
 * kinds' marks use it.
 */
BENCH_MARK bool
bench_mark_inline_charge_stock(struct pcstock_counter *c)
{
	return pcstock_counter_try_charge_stock(&c[2], 1, NULL, NULL);
}

BENCH_MARK void
bench_mark_inline_uncharge_stock(struct pcstock_counter *c)
{
	pcstock_counter_uncharge_stock(&c[2], 1);
}
