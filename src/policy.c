// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * policy.c - the registry of stock policies: each line of the list,
 * <pcstock/policies.h>, gives a policy's table (policy.h) its enum
 * pcstock_tree_policy value; names are parsed and printed from the tables.
 * "none", no stock at all, is the empty table: every member NULL, so every
 * flow takes its plain path.  A table is registered only if
 * pcs_policy_check() accepts it: one that breaks an invariant is no policy
 * (parse, info and pcstock_tree_create() refuse it with -EINVAL), and the
 * registry's unit test (tests/test_policy.c) fails on it.
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
};

static const struct pcs_policy_ops *const registry[] = {
#define PCSTOCK_POLICY(id, name) [PCSTOCK_TREE_##id] = &pcs_policy_##name,
#include <pcstock/policies.h>
#undef PCSTOCK_POLICY
};

_Static_assert(sizeof(registry) / sizeof(registry[0]) ==
		       PCSTOCK_TREE_NR_POLICIES,
	       "every enum pcstock_tree_policy value has a policy");
/* The ABI: the values of released policies never change. */
_Static_assert(PCSTOCK_TREE_DEFAULT == 0 && PCSTOCK_TREE_V4 == 1 &&
		       PCSTOCK_TREE_MEMCG7 == 2 && PCSTOCK_TREE_NONE == 3 &&
		       PCSTOCK_TREE_EXACT == 4,
	       "a policy is added at the end of <pcstock/policies.h>");

/*
 * Each property the tables declare, checked against the members it needs,
 * so that no flow, test or bench has to infer one from the other.
 */
const char *pcs_policy_check(const struct pcs_policy_ops *ops)
{
	if (!ops || !ops->name || !ops->name[0])
		return "no name";
	if (ops->max_batch > PCSTOCK_STOCK_MAX_BATCH)
		return "max_batch above PCSTOCK_STOCK_MAX_BATCH";
	if (ops->group_state_size > PCS_GROUP_STATE_MAX)
		return "group_state_size above PCS_GROUP_STATE_MAX";
	if (ops->group_batch && !ops->refill)
		return "group_batch without refill";
	if (ops->stocks != (ops->drain_all != NULL))
		return "stocks and drain_all disagree";
	if (ops->exact_at_limit != (ops->make_room != NULL))
		return "exact_at_limit and make_room disagree";
	if (!ops->stocks && (ops->uncharges_refill || ops->group_batch))
		return "a property of a stock without stocks";
	if (!ops->per_counter && pcs_stock_steps_any(&ops->steps))
		return "stock steps on a policy that is not per_counter";
	if (ops->per_counter &&
	    (!ops->stocks || !ops->group_init || !ops->group_free ||
	     ops->group_batch ||
	     (unsigned int)ops->counter_stock > PCSTOCK_STOCK_EXACT))
		return "per_counter without its members (PCS_COUNTER_POLICY())";
	return NULL;
}

const struct pcs_policy_ops *pcs_policy_ops(enum pcstock_tree_policy p)
{
	if ((unsigned int)p >= PCSTOCK_TREE_NR_POLICIES ||
	    pcs_policy_check(registry[p]))
		return NULL;
	return registry[p];
}

int pcs_policy_alloc_counter_stock(enum pcstock_tree_policy p,
				   struct pcstock_counter *c,
				   struct pcstock_domain *d, unsigned int batch)
{
	const struct pcs_policy_ops *ops = pcs_policy_ops(p);

	if (!ops || !ops->per_counter)
		return -EINVAL;
	return pcs_counter_alloc_stock_steps(c, d, batch, ops->counter_stock,
					     &ops->steps);
}

int pcstock_tree_policy_parse(const char *name, enum pcstock_tree_policy *out)
{
	if (!name || !out)
		return -EINVAL;
	for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
		if (pcs_policy_ops((enum pcstock_tree_policy)p) &&
		    !strcmp(name, registry[p]->name)) {
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
		.max_batch = pcs_policy_max_batch(ops),
		.stocks = ops->stocks,
		.per_counter = ops->per_counter,
		.counter_stock = ops->counter_stock,
		.group_batch = ops->group_batch,
		.uncharges_refill = ops->uncharges_refill,
		.exact_at_limit = ops->exact_at_limit,
		/* Only the per-counter stock has a kind that does not cap. */
		.caps_slots = !ops->per_counter ||
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
