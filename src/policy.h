/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy.h - a stock policy as one table (private).
 *
 * The group layer's flows (charge.c, reclaim.c, group.c, tree.c,
 * stats.c) ask a tree's policy for everything that differs between
 * policies through its struct pcs_policy_ops, and test no policy by name.
 * A policy is one file, src/policy_<name>.c, that defines its table
 * pcs_policy_<name>, and one line in the list of policies,
 * <pcstock/policies.h>, that gives it its enum pcstock_tree_policy value
 * and its place in the registry (policy.c).  A policy's state is its
 * own: per tree, whatever @tree_init allocates (pcs_tree_state()); per
 * group, @group_state_size bytes the core allocates with each group and
 * never looks into (pcs_group_state()).
 *
 * The hit is not in the table: the group hit paths (charge.c) run the
 * per-counter stock's inline hit on the key a policy publishes in
 * struct pcstock_group's hit_key, and a policy that publishes none (or a
 * key of its own that hit never matches: plain's) pays the failed key
 * compares before its miss.  A policy that wants its own hit on
 * the fast path adds it to charge.c as reviewed hot-path code, or is a
 * kind of the per-counter stock (policy_counter.c).
 */
#ifndef PCSTOCK_POLICY_H
#define PCSTOCK_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include <pcstock/hierarchy.h>
#include <pcstock/stock.h>

#include "group.h"
#include "stock_steps.h"

struct pcstock_counter;

/**
 * struct pcs_policy_ops - what the group flows need of a stock policy
 * @name: the policy's name (pcstock_tree_policy_parse(), _name())
 * @max_batch: the largest batch a tree of this policy accepts; 0:
 *	PCSTOCK_STOCK_MAX_BATCH
 * @stocks: the policy keeps pages in per-CPU stock at all (struct
 *	pcstock_policy_info's @stocks); needs @drain_all
 * @per_counter: its stock is the per-counter stock of kind
 *	@counter_stock, run by @steps (PCS_COUNTER_POLICY() sets it): the
 *	tests then treat its counters' stocks as theirs
 * @exact_at_limit: no charge fails or reclaims for pages in stock (struct
 *	pcstock_policy_info's); needs @make_room
 * @group_batch: the flow charges max(batch, nr_pages) at the counters and
 *	hands the surplus to @refill (memcg7's try_charge_memcg() with
 *	MEMCG_CHARGE_BATCH); needs @refill.  False: the counters are charged
 *	the pages asked for (through @counter_try, which may batch itself).
 * @uncharges_refill: an uncharge of up to a batch stays in the policy's
 *	stock (a property the tests and the bench ask for; the flows do not)
 * @counter_stock: the per-counter stock's kind, for the policies of
 *	policy_counter.c; unused by the others
 * @steps: the per-counter stock's steps the policy replaces
 *	(stock_steps.h), each NULL for its kind's own; only with
 *	@per_counter.  A policy with any step gets no inline hit: its
 *	counters' every charge goes through @steps.take, one call away.
 * @group_state_size: the bytes of state the policy keeps per group,
 *	allocated zeroed with every group of its trees (the root too),
 *	aligned for any type, freed with the group: pcs_group_state().  At
 *	most PCS_GROUP_STATE_MAX.  0: none (pcs_group_state() is NULL).
 * @tree_init: set up the policy's per-tree state and hand it to the tree
 *	with pcs_tree_set_state(), after the tree's attributes and root are
 *	set.  Return: 0 or a negative errno, which fails
 *	pcstock_tree_create().  NULL: none.
 * @tree_release: the tree is being destroyed, every group unlinked: drop
 *	the references the policy holds on groups, before the RCU waits.
 *	NULL: it holds none.
 * @tree_fini: free the per-tree state; every group but the root is
 *	freed.  NULL: none.
 * @group_init: give a new non-root group its stock, before it is linked.
 *	Failure must leave a group that works without stock.  A policy whose
 *	hit is the per-counter stock's publishes the group's key here.  NULL:
 *	no per-group stock.
 * @group_offline: pcstock_group_destroy(), after the group went offline
 *	and was unlinked: leave no stock of the group behind.  NULL: none.
 * @group_free: free what @group_init allocated, a grace period after the
 *	last put (also for a group that was never linked, and for the root,
 *	which @group_init never saw).  NULL: nothing.
 * @consume: stage 1 of the charge flow (pcstock_group_charge()), a
 *	charge the inline hit did not serve: take @nr_pages of @g, a
 *	group of @t, from the policy's per-group cache (memcg7's
 *	consume_stock()).  True if it did.
 *	Called for any group, online or not, root or not, with any
 *	@nr_pages (the cache holds only non-root groups' pages, at most a
 *	batch): it must not serve an offline group.  NULL: no such cache.
 *	@tree_init may replace the tree's copy (struct pcstock_tree's
 *	@consume) with another function of the same contract, a variant
 *	picked once per tree.  It may also put the hit in front of the
 *	tree's @miss (what pcstock_group_charge() calls when the group hit
 *	did not serve): a function of @miss's type that serves the charges
 *	@consume would and calls the @miss it replaced for the others, so
 *	that a hit pays no second call (policy_plain.c).
 * @counter_try: stage 2 on one counter (memsw, then memory): charge
 *	@nr_pages to @c and its ancestors; on failure *@fail is the counter
 *	over its limit and nothing stays charged by the attempt.  *@charged
 *	receives the pages the counters took from the hierarchy (0 for a hit
 *	of a per-counter stock, which skips the memory.high check).  NULL:
 *	pcstock_counter_try_charge(), *@charged = @nr_pages.
 * @refill: done_restock() for @group_batch policies: keep the
 *	@nr_pages the flow charged above the request.
 * @uncharge: @nr_pages (1..PCSTOCK_COUNTER_MAX) of a non-root group that
 *	the inline uncharge did not take.  Inside a reclaim or OOM callback
 *	(pcs_in_callback) the pages must reach the counters at once.  NULL:
 *	straight to the counters, memory and (v1) memsw.  @tree_init may
 *	also put the policy's own uncharge in front of the tree's @unmiss
 *	(what pcstock_group_uncharge() jumps to when the inline uncharge
 *	did not take the pages, which checks the request and calls
 *	@uncharge): a function of @unmiss's type, reached by every such
 *	uncharge (any group, root and offline ones too, any @nr_pages),
 *	that calls the @unmiss it replaced for what it does not keep, so
 *	that an uncharge into its stock pays no second call
 *	(policy_plain.c).
 * @drain_all: pcstock_group_drain_all() under RCU: return every page the
 *	subtree of @g has in stock to the counters.  False if another drain
 *	was running and this one did nothing (counted as drain_all_busy).
 *	NULL: no stock, nothing to do, nothing counted.
 * @make_room: a charge failed at @over (its first failure in this
 *	charge, before the max event, reclaim, NOWAIT's and NORETRY's
 *	exits): return to the counters every page the subtree of @over has
 *	in stock, so that the flow reclaims or fails only for pages that are
 *	really in use.  True if it returned any: the flow then retries
 *	once.  NULL: the kernel's order (reclaim first, then drain_all).
 * @stock_pages: under RCU, the pages the subtree of @g has in stock.
 *	NULL: 0.
 * @stock_bound: under RCU, the most pages the subtree of @g's stock can
 *	hide in its present state (pcstock_group_stock_bound()): at least
 *	what @stock_pages could read while that state lasts.  NULL: 0 (no
 *	stock).
 * @tree_stats: the policy's part of pcstock_tree_stats().  NULL: none.
 *
 * Only @name is required: every other member has a default, and
 * pcs_policy_check() refuses a table whose members contradict each other
 * (a policy failing it cannot make a tree: -EINVAL).  The flows copy
 * @consume, @counter_try and @uncharge, resolved, into the tree, so a miss
 * pays one load for them.
 */
struct pcs_policy_ops {
	const char *name;
	unsigned int max_batch;
	bool stocks;
	bool per_counter;
	bool exact_at_limit;
	bool group_batch;
	bool uncharges_refill;
	enum pcstock_stock_policy counter_stock;
	struct pcs_stock_steps steps;
	size_t group_state_size;

	int (*tree_init)(struct pcstock_tree *t);
	void (*tree_release)(struct pcstock_tree *t);
	void (*tree_fini)(struct pcstock_tree *t);

	void (*group_init)(struct pcstock_group *g);
	void (*group_offline)(struct pcstock_group *g);
	void (*group_free)(struct pcstock_group *g);

	bool (*consume)(struct pcstock_tree *t, struct pcstock_group *g,
			unsigned long nr_pages);
	bool (*counter_try)(struct pcstock_counter *c, unsigned long nr_pages,
			    struct pcstock_counter **fail,
			    unsigned long *charged);
	void (*refill)(struct pcstock_group *g, unsigned long nr_pages);
	void (*uncharge)(struct pcstock_group *g, unsigned long nr_pages);

	bool (*drain_all)(struct pcstock_group *g);
	bool (*make_room)(struct pcstock_group *over);
	unsigned long (*stock_pages)(struct pcstock_group *g);
	unsigned long (*stock_bound)(struct pcstock_group *g);
	void (*tree_stats)(const struct pcstock_tree *t,
			   struct pcstock_tree_stats *st);
};

/* The most per-group state a policy may declare (pcs_policy_check()). */
#define PCS_GROUP_STATE_MAX 4096U

/* @g's per-group state: @group_state_size bytes of its policy's, or NULL. */
static inline void *pcs_group_state(const struct pcstock_group *g)
{
	return g->policy_state;
}

/* The per-tree state @t's policy gave it in @tree_init, or NULL. */
static inline void *pcs_tree_state(const struct pcstock_tree *t)
{
	return t->policy_state;
}

static inline void pcs_tree_set_state(struct pcstock_tree *t, void *state)
{
	t->policy_state = state;
}

/* The policies' tables (policy_*.c; "none" is policy.c's). */
#define PCSTOCK_POLICY(id, name)                                             \
	extern const struct pcs_policy_ops pcs_policy_##name;
#include <pcstock/policies.h>
#undef PCSTOCK_POLICY

/*
 * The per-counter stock's members (policy_counter.c), for the policies that
 * are a kind of it: PCS_COUNTER_POLICY(name, kind, refills) fills a
 * table's members but @make_room and @tree_stats, which a kind may add.
 */
void pcs_counter_group_init(struct pcstock_group *g);
void pcs_counter_group_offline(struct pcstock_group *g);
void pcs_counter_group_free(struct pcstock_group *g);
void pcs_counter_uncharge(struct pcstock_group *g, unsigned long nr_pages);
bool pcs_counter_drain_all(struct pcstock_group *g);
unsigned long pcs_counter_stock_pages(struct pcstock_group *g);
unsigned long pcs_counter_stock_bound(struct pcstock_group *g);

#define PCS_COUNTER_POLICY(policy_name, kind, refills)                       \
	.name = (policy_name), .max_batch = PCSTOCK_STOCK_MAX_BATCH,         \
	.stocks = true, .per_counter = true,                                 \
	.uncharges_refill = (refills), .counter_stock = (kind),              \
	.group_init = pcs_counter_group_init,                                \
	.group_offline = pcs_counter_group_offline,                          \
	.group_free = pcs_counter_group_free,                                \
	.counter_try = pcstock_counter_try_charge_stock,                     \
	.uncharge = pcs_counter_uncharge,                                    \
	.drain_all = pcs_counter_drain_all,                                  \
	.stock_pages = pcs_counter_stock_pages,                              \
	.stock_bound = pcs_counter_stock_bound

/* The registry (policy.c): @p's table, NULL if @p names no policy. */
const struct pcs_policy_ops *pcs_policy_ops(enum pcstock_tree_policy p);

/*
 * pcs_policy_check() - whether @ops is a table the flows can run: NULL if
 * so, else which of its invariants it breaks (a message for the tests).
 */
const char *pcs_policy_check(const struct pcs_policy_ops *ops);

/* @ops' largest batch: @max_batch, or the default when it is left out. */
static inline unsigned int pcs_policy_max_batch(const struct pcs_policy_ops *ops)
{
	return ops->max_batch ? ops->max_batch : PCSTOCK_STOCK_MAX_BATCH;
}

/*
 * pcs_policy_alloc_counter_stock() - give @c the stock a counter of a tree
 * of policy @p gets (its kind and its steps), as @p's groups do: for the
 * per-policy tests of the stock alone.  -EINVAL if @p is not per-counter.
 */
int pcs_policy_alloc_counter_stock(enum pcstock_tree_policy p,
				   struct pcstock_counter *c,
				   struct pcstock_domain *d, unsigned int batch);

#endif /* PCSTOCK_POLICY_H */
