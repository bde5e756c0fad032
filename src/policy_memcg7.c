// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * policy_memcg7.c - the "memcg7" policy: the pre-series memcg stock, an
 * adapter over the unchanged engine in memcg7.c.
 *
 * The engine caches pages per CPU keyed by group; the flow charges
 * max(batch, nr_pages) at the counters (group_batch) and hands the surplus
 * to the engine's refill, as try_charge_memcg() did before the series.  It
 * publishes no hit key: its hit is @consume, the first step of the miss
 * path, one indirect call after the inline hit's failed key compare.
 */
#include <pcstock/hierarchy.h>

#include "atomic.h"
#include "group.h"
#include "internal.h"
#include "memcg7.h"
#include "policy.h"

/* ---- what the engine asks of the groups --------------------------------- */

static struct pcstock_group *key_group(void *key)
{
	return key;
}

static void m7_uncharge(void *key, unsigned long nr_pages)
{
	pcs_group_uncharge_counters(key_group(key), nr_pages);
}

static void m7_get(void *key)
{
	pcstock_group_get(key_group(key));
}

static void m7_put(void *key)
{
	pcstock_group_put(key_group(key));
}

static bool m7_online(void *key)
{
	return pcs_load(&key_group(key)->online,
			PCS_ORDER(M7_KEY_ONLINE, PCS_ACQUIRE));
}

static bool m7_in_subtree(void *key, void *root)
{
	return in_subtree(key_group(key), root);
}

static const struct memcg7_ops m7_ops = {
	.uncharge = m7_uncharge,
	.get = m7_get,
	.put = m7_put,
	.online = m7_online,
	.in_subtree = m7_in_subtree,
};

/* ---- the policy ----------------------------------------------------------- */

static struct memcg7 *tree_m7(const struct pcstock_tree *t)
{
	return pcs_tree_state(t);
}

/*
 * consume_stock().  Before any other check of the charge: only non-root
 * groups are cached and at most a batch is taken.  The group's online
 * flag is read first, though: its destroy drains its slots on other CPUs
 * only when their owners next look (owner variant) or when the drain loop
 * reaches them, so a charge whose caller saw the group offline would
 * otherwise be served from a slot not yet drained, where
 * pcstock_group_charge() promises -ENOENT (the explorer's
 * group-offline-memcg7).  The kernel's consume_stock() serves a dying
 * memcg; our groups refuse charges once offline, for every policy.
 * Acquire pairs with the release in pcstock_group_destroy().  The tree
 * takes the variant's own function at its creation (m7_tree_init()), so
 * that a hit tests the group's online flag instead of the variant.
 */
static bool m7_consume_locked(struct pcstock_tree *t, struct pcstock_group *g,
			      unsigned long nr_pages)
{
	return pcs_load(&g->online,
			PCS_ORDER(M7_CONSUME_ONLINE, PCS_ACQUIRE)) &&
	       memcg7_consume_locked(tree_m7(t), g, nr_pages);
}

static bool m7_consume_owned(struct pcstock_tree *t, struct pcstock_group *g,
			     unsigned long nr_pages)
{
	return pcs_load(&g->online,
			PCS_ORDER(M7_CONSUME_OWNED_ONLINE, PCS_ACQUIRE)) &&
	       memcg7_consume_owned(tree_m7(t), g, nr_pages);
}

static int m7_tree_init(struct pcstock_tree *t)
{
	struct memcg7 *m;
	int err = memcg7_create(t->domain, t->attr.batch,
				t->attr.memcg7_isolated_fix, &m7_ops, &m);

	if (err)
		return err;
	pcs_tree_set_state(t, m);
	if (memcg7_is_owned(m))
		t->consume = m7_consume_owned;
	return 0;
}

/* The cache holds references on (offline) groups: drop them. */
static void m7_tree_release(struct pcstock_tree *t)
{
	memcg7_flush(tree_m7(t));
}

static void m7_tree_fini(struct pcstock_tree *t)
{
	memcg7_destroy(tree_m7(t));
}

static void m7_group_offline(struct pcstock_group *g)
{
	/* The reference a destroyed key may leave, in the group's state. */
	memcg7_drain_key(tree_m7(g->tree), g, pcs_group_state(g));
}

static void m7_refill(struct pcstock_group *g, unsigned long nr_pages)
{
	memcg7_refill(tree_m7(g->tree), g, nr_pages);
}

/*
 * Inside a callback the pages go straight up (callback_enter(),
 * reclaim.c): the engine's refill does not look at the thread's CPU cache
 * that callback_enter() empties, so the depth is tested here.
 */
static void m7_group_uncharge(struct pcstock_group *g, unsigned long nr_pages)
{
	if (pcs_in_callback)
		pcs_group_uncharge_counters(g, nr_pages);
	else
		memcg7_refill(tree_m7(g->tree), g, nr_pages);
}

static bool m7_drain_all(struct pcstock_group *g)
{
	return memcg7_drain_all(tree_m7(g->tree), g);
}

static unsigned long m7_stock_pages(struct pcstock_group *g)
{
	return memcg7_pages(tree_m7(g->tree), g);
}

/*
 * Any group of the tree may sit in any of a CPU's slots, each of at most a
 * batch: the whole tree's stock, whatever the subtree.
 */
static unsigned long m7_stock_bound(struct pcstock_group *g)
{
	struct pcstock_tree *t = g->tree;

	return (unsigned long)MEMCG7_NR_SLOTS *
	       pcstock_domain_nr_cpus(t->domain) * t->attr.batch;
}

static void m7_tree_stats(const struct pcstock_tree *t,
			  struct pcstock_tree_stats *st)
{
	memcg7_stats(tree_m7(t), &st->memcg7);
}

const struct pcs_policy_ops pcs_policy_memcg7 = {
	.name = "memcg7",
	.stocks = true,
	.max_batch = MEMCG7_MAX_BATCH,
	.group_batch = true,
	.uncharges_refill = true,
	.group_state_size = sizeof(struct memcg7_dead),
	.tree_init = m7_tree_init,
	.tree_release = m7_tree_release,
	.tree_fini = m7_tree_fini,
	.group_offline = m7_group_offline,
	.consume = m7_consume_locked,
	.refill = m7_refill,
	.uncharge = m7_group_uncharge,
	.drain_all = m7_drain_all,
	.stock_pages = m7_stock_pages,
	.stock_bound = m7_stock_bound,
	.tree_stats = m7_tree_stats,
};
