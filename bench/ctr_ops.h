/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ctr_ops.h - the ctr-* strategies' charge and uncharge, included by
 * strategy.c (the exported functions) and by inline.c, which defines
 * PCSTOCK_INLINE first so that the same text runs the inline fast paths.
 */
#ifndef BENCH_CTR_OPS_H
#define BENCH_CTR_OPS_H

#include "strategy.h"

/* A failed stocked charge drains the failing subtree and retries once. */
static inline bool ctr_charge_body(struct ctr_tree *t, unsigned int leaf,
				   unsigned long nr)
{
	struct pcstock_counter *c = &t->node[t->shape.nr_anc + leaf], *fail;

	if (!t->stocked)
		return pcstock_counter_try_charge(c, nr, &fail);
	if (pcstock_counter_try_charge_stock(c, nr, &fail, NULL))
		return true;
	ctr_drain_under(t, (unsigned int)(fail - t->node));
	return pcstock_counter_try_charge_stock(c, nr, &fail, NULL);
}

static inline void ctr_uncharge_body(struct ctr_tree *t, unsigned int leaf,
				     unsigned long nr)
{
	struct pcstock_counter *c = &t->node[t->shape.nr_anc + leaf];

	if (t->stocked)
		pcstock_counter_uncharge_stock(c, nr);
	else
		pcstock_counter_uncharge(c, nr);
}

#endif /* BENCH_CTR_OPS_H */
