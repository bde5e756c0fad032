// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * policy_counter.c - the policies that stock at the counters: the 2026
 * series' per-counter per-CPU stock (stock.c), one table per kind of it
 * (enum pcstock_stock_policy): "default" (with the review fixes) and "v4"
 * (as posted).
 *
 * Each group's counters get a stock of the table's kind, the flow charges
 * them through pcstock_counter_try_charge_stock(), which batches by itself,
 * and uncharges go through pcstock_counter_uncharge_stock().  The hit is
 * the stock's inline one (charge.c): a group without memsw publishes its
 * memory counter's key as its hit key.  Another kind of the per-counter
 * stock is a table built by PCS_COUNTER_POLICY() (policy.h), in a file of
 * its own (policy_exact.c), and one line in the registry (policy.c).
 */
#include <pthread.h>

#include <pcstock/hierarchy.h>
#include <pcstock/stock.h>

#include "atomic.h"
#include "group.h"
#include "policy.h"
#include "rcu.h"
#include "stock_hit.h"

void pcs_counter_group_init(struct pcstock_group *g)
{
	struct pcstock_tree *t = g->tree;
	enum pcstock_stock_policy p = t->ops->counter_stock;

	const struct pcs_stock_steps *steps = &t->ops->steps;

	/* Failure is not fatal (as in the series): the counter works plain. */
	pcs_counter_alloc_stock_steps(&g->memory, t->domain, t->attr.batch, p,
				      steps);
	if (t->attr.memsw)
		pcs_counter_alloc_stock_steps(&g->memsw, t->domain,
					      t->attr.batch, p, steps);
	else
		pcs_store(&g->hit_key, g->memory.hit_key, PCS_RELAXED);
}

static void drain_group_cpus(struct pcstock_group *g, unsigned int nr_cpus)
{
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
		pcstock_counter_drain_stock(&g->memory, cpu);
		pcstock_counter_drain_stock(&g->memsw, cpu);
	}
}

void pcs_counter_group_offline(struct pcstock_group *g)
{
	pcstock_counter_disable_stock(&g->memory);
	pcstock_counter_disable_stock(&g->memsw);
	drain_group_cpus(g, pcstock_domain_nr_cpus(g->tree->domain));
}

void pcs_counter_group_free(struct pcstock_group *g)
{
	pcstock_counter_free_stock(&g->memory);
	pcstock_counter_free_stock(&g->memsw);
}

void pcs_counter_uncharge(struct pcstock_group *g, unsigned long nr_pages)
{
	/*
	 * Inside a callback the stock's uncached path sends the pages up:
	 * callback_enter() emptied the thread's CPU cache (reclaim.c).
	 */
	pcstock_counter_uncharge_stock(&g->memory, nr_pages);
	if (g->tree->attr.memsw)
		pcstock_counter_uncharge_stock(&g->memsw, nr_pages);
}

/* percpu_charge_mutex: one drain_all of the tree at a time, else skip. */
bool pcs_counter_drain_all(struct pcstock_group *g)
{
	struct pcstock_tree *t = g->tree;
	unsigned int nr_cpus = pcstock_domain_nr_cpus(t->domain);
	struct pcstock_group *pos;

	if (pthread_mutex_trylock(&t->drain_lock))
		return false;
	for_each_in_subtree(pos, g)
		drain_group_cpus(pos, nr_cpus);
	pthread_mutex_unlock(&t->drain_lock);
	return true;
}

unsigned long pcs_counter_stock_pages(struct pcstock_group *g)
{
	struct pcstock_group *pos;
	unsigned long sum = 0;

	for_each_in_subtree(pos, g)
		sum += pcstock_counter_stock_pages(&pos->memory);
	return sum;
}

/*
 * What the subtree's memory counters can hide, as @stock_pages reads them:
 * nr_cpus x batch each (V4 can exceed it, pcstock_counter_stock_bound()),
 * but none for a counter in its exact state (only PCSTOCK_STOCK_EXACT's
 * get there): its slots were marked, then drained, and every refill and
 * uncharge into a marked slot goes up instead (stock.c).  While it
 * switches either way, its slots may still hold up to a batch each.
 */
unsigned long pcs_counter_stock_bound(struct pcstock_group *g)
{
	struct pcstock_group *pos;
	unsigned long sum = 0;

	for_each_in_subtree(pos, g) {
		if (pcs_load(&pos->memory.stock_state, PCS_RELAXED) !=
		    STOCK_EXACT)
			sum += pcstock_counter_stock_bound(&pos->memory);
	}
	return sum;
}

const struct pcs_policy_ops pcs_policy_default = {
	PCS_COUNTER_POLICY("default", PCSTOCK_STOCK_DEFAULT, true),
};
const struct pcs_policy_ops pcs_policy_v4 = {
	PCS_COUNTER_POLICY("v4", PCSTOCK_STOCK_V4, false),
};
