// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * policy.c - the registry of stock designs: each line of the list,
 * <pcstock/policies.h>, gives a design's table (policy.h) its enum
 * pcstock_tree_policy value; names are parsed and printed from the tables.  "none", no stock at all, is the empty table:
 * every member NULL, so every flow takes its plain path.
 */
#include <errno.h>
#include <string.h>

#include <pcstock/hierarchy.h>
#include <pcstock/stock.h>

#include "group.h"
#include "policy.h"
#include "stock_impl.h"
#include "rcu.h"

const struct pcs_policy_ops pcs_policy_none = {
	.name = "none",
	.max_batch = PCSTOCK_STOCK_MAX_BATCH,
};

static const struct pcs_policy_ops *const registry[] = {
#define PCSTOCK_POLICY(id, name) [PCSTOCK_TREE_##id] = &pcs_policy_##name,
#include <pcstock/policies.h>
#undef PCSTOCK_POLICY
};

_Static_assert(sizeof(registry) / sizeof(registry[0]) ==
		       PCSTOCK_TREE_NR_POLICIES,
	       "every enum pcstock_tree_policy value has a design");
/* The ABI: the values of released designs never change. */
_Static_assert(PCSTOCK_TREE_DEFAULT == 0 && PCSTOCK_TREE_V4 == 1 &&
		       PCSTOCK_TREE_MEMCG7 == 2 && PCSTOCK_TREE_NONE == 3 &&
		       PCSTOCK_TREE_EXACT == 4,
	       "a design is added at the end of <pcstock/policies.h>");

const struct pcs_policy_ops *pcs_policy_ops(enum pcstock_tree_policy p)
{
	if ((unsigned int)p >= PCSTOCK_TREE_NR_POLICIES)
		return NULL;
	return registry[p];
}

int pcstock_tree_policy_parse(const char *name, enum pcstock_tree_policy *out)
{
	if (!name || !out)
		return -EINVAL;
	for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
		if (!strcmp(name, registry[p]->name)) {
			*out = (enum pcstock_tree_policy)p;
			return 0;
		}
	}
	return -EINVAL;
}

const char *pcstock_tree_policy_name(enum pcstock_tree_policy p)
{
	const struct pcs_policy_ops *ops = pcs_policy_ops(p);

	return ops ? ops->name : NULL;
}

int pcstock_tree_policy_info(enum pcstock_tree_policy p,
			     struct pcstock_policy_info *out)
{
	const struct pcs_policy_ops *ops = pcs_policy_ops(p);

	if (!ops || !out)
		return -EINVAL;
	*out = (struct pcstock_policy_info){
		.name = ops->name,
		.max_batch = ops->max_batch,
		.stocks = ops->drain_all != NULL,
		.per_counter = ops->counter_try ==
			       pcstock_counter_try_charge_stock,
		.counter_stock = ops->counter_stock,
		.group_batch = ops->group_batch,
		.uncharges_refill = ops->uncharges_refill,
		.exact_at_limit = ops->make_room != NULL,
		.caps_slots = ops->counter_try !=
				      pcstock_counter_try_charge_stock ||
			      pcs_stock_kind_capped(ops->counter_stock),
	};
	return 0;
}

unsigned long pcstock_group_stock_bound(const struct pcstock_group *g)
{
	unsigned long sum;

	if (!g || !g->tree->ops->stock_bound)
		return 0;
	rcu_lock();
	sum = g->tree->ops->stock_bound((struct pcstock_group *)g);
	rcu_unlock();
	return sum;
}
