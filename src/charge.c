// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * charge.c - the group charge and uncharge.
 *
 * The charge path is the kernel's try_charge_memcg(), in the order
 * pcstock_group_charge()'s comment (pcstock/hierarchy.h) numbers: the hit
 * (1), the counters (2), a policy's make_room (3), the reclaim loop (4),
 * the OOM callback and NOFAIL (5).  The comments below name each stage by
 * that number and by what the kernel calls it.
 */
#include <stddef.h>

#include <pcstock/hierarchy.h>

#include "atomic.h"
#include "counter_read.h"
#include "group.h"
#include "internal.h"
#include "policy.h"
#include "stock_hit.h"

/* ---- charge ------------------------------------------------------------ */

static struct pcstock_group *memory_owner(struct pcstock_counter *c)
{
	return (void *)((char *)c - offsetof(struct pcstock_group, memory));
}

static struct pcstock_group *memsw_owner(struct pcstock_counter *c)
{
	return (void *)((char *)c - offsetof(struct pcstock_group, memsw));
}

/* A policy's counter_try when it has none: the plain counter. */
static bool counter_try_plain(struct pcstock_counter *c,
			      unsigned long nr_pages,
			      struct pcstock_counter **fail,
			      unsigned long *charged)
{
	*charged = nr_pages;
	return pcstock_counter_try_charge(c, nr_pages, fail);
}

void pcs_group_uncharge_counters(struct pcstock_group *g,
				 unsigned long nr_pages)
{
	pcstock_counter_uncharge(&g->memory, nr_pages);
	if (g->tree->attr.memsw)
		pcstock_counter_uncharge(&g->memsw, nr_pages);
}

/*
 * Stage 2, the counters: memsw, then memory.  If memory fails,
 * memsw gives back what it handed to this attempt: @nr_pages, whether they
 * came from its stock or from the hierarchy; a surplus the attempt parked
 * in memsw's stock stays there, where the conservation invariant counts it
 * (usage == held + stock holds before and after).  @charged receives the
 * pages the memory counter took from the hierarchy (0: a stock hit).
 */
static bool charge_counters(struct pcstock_group *g, unsigned long nr_pages,
			    struct pcstock_group **over,
			    unsigned long *charged)
{
	struct pcstock_tree *t = g->tree;
	struct pcstock_counter *fail = NULL;
	unsigned long memsw_charged;

	if (t->attr.memsw && !t->counter_try(&g->memsw, nr_pages, &fail,
					     &memsw_charged)) {
		*over = memsw_owner(fail);
		return false;
	}
	if (t->counter_try(&g->memory, nr_pages, &fail, charged))
		return true;
	if (t->attr.memsw)
		pcstock_counter_uncharge(&g->memsw, nr_pages);
	*over = memory_owner(fail);
	return false;
}

/*
 * The kernel's memory.high check after a charge (the header: "a charge
 * that touched the counters and left a level above its high"): the first
 * level above its high records the charged pages.
 */
static void check_high(struct pcstock_group *g, unsigned long charged)
{
	for (struct pcstock_group *pos = g; pos; pos = pos->parent) {
		if (pcs_counter_usage(&pos->memory) >
		    pcs_counter_high(&pos->memory)) {
			pcs_high_record(g, charged);
			return;
		}
	}
}

static bool oom_allowed(unsigned long nr_pages)
{
	/* not for get_order(nr_pages * PAGE_SIZE) > PAGE_ALLOC_COSTLY_ORDER */
	return pages_order(nr_pages) <= COSTLY_ORDER;
}

/*
 * @first_over: NULL, or the over-limit group of a first attempt (stages 1
 * and 2) the caller already made without memsw (through the policy's
 * counter_try: the per-counter stock, which then failed with its exact
 * fallback, or the plain counter): the flow goes on after the counters'
 * failure, as the kernel's does after its own first attempt.  The caller
 * has made the first consume.
 */
static __attribute__((noinline)) int
try_charge_group(struct pcstock_group *g, unsigned long nr_pages,
		 unsigned int flags, struct pcstock_group *first_over)
{
	struct pcstock_tree *t = g->tree;
	unsigned long batch = nr_pages;
	int nr_retries = PCSTOCK_MAX_RECLAIM_RETRIES;
	unsigned int progress_rounds = 0, oom_calls = 0;
	bool drained = false, raised_max_event = false, looked_up = false;
	bool made_room = false;
	struct pcstock_group *over = g;
	unsigned long charged, reclaimed;

	if (first_over) {
		over = first_over;
		goto failed;
	}
	if (t->ops->group_batch)
		batch = PCS_MAX((unsigned long)t->attr.batch, nr_pages);
retry:
	/*
	 * 1: consume_stock(), a hit returns at once, no counter, no high
	 * check.  (The caller made the first consume.)
	 */
	if (t->consume && looked_up && t->consume(t, g, nr_pages))
		return 0;
	looked_up = true;
	if (charge_counters(g, batch, &over, &charged))
		goto done;
	/* 2: never reclaim for the optional surplus (batch > nr_pages). */
	if (batch > nr_pages) {
		batch = nr_pages;
		goto retry;
	}
failed:
	/* Reclaim's own charges are forced (the kernel's PF_MEMALLOC). */
	if (pcs_in_callback)
		goto force;
	/* 3, ours: a policy that drains before it reclaims (policy.h). */
	if (!made_room && t->ops->make_room) {
		made_room = true;
		if (t->ops->make_room(over))
			goto retry;
	}
	if (flags & PCSTOCK_CHARGE_NOWAIT)
		goto nomem;
	/* 4: memcg_memory_event(MEMCG_MAX), then reclaim. */
	pcs_group_event(over, PCSTOCK_EVENT_MAX);
	raised_max_event = true;
	reclaimed = pcs_call_reclaim(over, nr_pages);
	if (pcs_group_margin(over) >= nr_pages)		/* mem_cgroup_margin() */
		goto retry;
	if (!drained) {					/* drain_all_stock() */
		pcstock_group_drain_all(over);
		drained = true;
		goto retry;
	}
	if (flags & PCSTOCK_CHARGE_NORETRY)		/* __GFP_NORETRY */
		goto nomem;
	if (nr_pages <= COSTLY_PAGES &&			/* progress, small */
	    reclaim_progress(reclaimed, &progress_rounds))
		goto retry;
	if (nr_retries--)				/* nr_retries */
		goto retry;
	/* 5: mem_cgroup_oom(); progress restarts the retries (bounded: ours). */
	if (oom_allowed(nr_pages) &&
	    pcs_group_oom(over, nr_pages, &oom_calls)) {
		nr_retries = PCSTOCK_MAX_RECLAIM_RETRIES;
		goto retry;
	}
nomem:
	if (!(flags & PCSTOCK_CHARGE_NOFAIL)) {		/* __GFP_NOFAIL */
		pcs_fetch_add(&g->refused, 1, PCS_RELAXED);
		return -ENOMEM;
	}
force:
	if (!raised_max_event)			/* the event a force raises */
		pcs_group_event(over, PCSTOCK_EVENT_MAX);
	pcstock_counter_charge(&g->memory, nr_pages);
	if (t->attr.memsw)
		pcstock_counter_charge(&g->memsw, nr_pages);
	return 0;

done:
	/* done_restock() (a per-counter stock refilled its own slot). */
	if (batch > nr_pages)
		t->ops->refill(g, batch - nr_pages);
	if (!charged)
		return 0;	/* the series: a stock hit skips the high check */
	check_high(g, charged);
	return 0;
}

static int check_pages(const struct pcstock_group *g, unsigned long nr_pages)
{
	return g && nr_pages <= PCSTOCK_COUNTER_MAX ? 0 : -EINVAL;
}

#define CHARGE_FLAGS (PCSTOCK_CHARGE_NOWAIT | PCSTOCK_CHARGE_NOFAIL | \
		      PCSTOCK_CHARGE_NORETRY)

/* Everything but a hit (charge.c's inline one, or the policy's consume). */
static __attribute__((noinline)) int
group_charge_slow(struct pcstock_group *g, unsigned long nr_pages,
		  unsigned int flags)
{
	struct pcstock_tree *t;

	if (check_pages(g, nr_pages) || (flags & ~CHARGE_FLAGS))
		return -EINVAL;
	/* Acquire pairs with the release in pcstock_group_destroy(). */
	if (!pcs_load(&g->online, PCS_ORDER(CHARGE_ONLINE, PCS_ACQUIRE)))
		return -ENOENT;
	if (!nr_pages || group_is_root(g))
		return 0;
	t = g->tree;
	/*
	 * The first attempt (stages 1 and 2) without memsw or a group batch is
	 * kept out of the slow path's frame: one counter_try (per-counter
	 * stock: hit, else batch, else exact; plain: one exact attempt).
	 * The tree's miss made the first consume.
	 */
	if (!t->attr.memsw && !t->ops->group_batch) {
		struct pcstock_counter *fail = NULL;
		unsigned long charged = nr_pages;

		if (!t->counter_try(&g->memory, nr_pages, &fail, &charged))
			return try_charge_group(g, nr_pages, flags,
						memory_owner(fail));
		if (charged)	/* the series: a stock hit skips the high check */
			check_high(g, charged);
		return 0;
	}
	return try_charge_group(g, nr_pages, flags, NULL);
}

/*
 * The tree's miss, where a charge the inline hit did not serve goes (with
 * @t, @g's tree, loaded once): the policy's consume first, before any
 * check (policy.h), or straight to the slow path.
 */
static int miss_consume_first(struct pcstock_group *g, unsigned long nr_pages,
			      unsigned int flags, struct pcstock_tree *t)
{
	if (t->consume(t, g, nr_pages))
		return 0;
	return group_charge_slow(g, nr_pages, flags);
}

static int miss_slow(struct pcstock_group *g, unsigned long nr_pages,
		     unsigned int flags, struct pcstock_tree *t)
{
	return group_charge_slow(g, nr_pages, flags);
}

int pcstock_group_charge(struct pcstock_group *g, unsigned long nr_pages,
			 unsigned int flags)
{
	if (!g || (flags & ~CHARGE_FLAGS))
		return group_charge_slow(g, nr_pages, flags);
	if (pcs_stock_take(&g->memory, pcs_load(&g->hit_key, PCS_RELAXED),
			   nr_pages))
		return 0;	/* the series: a stock hit skips the high check */
	/*
	 * A hit needs no other check: a key is only set on a non-root group,
	 * and a hit takes at most a slot's pages, so nr_pages is in range.
	 */
	return g->tree->miss(g, nr_pages, flags, g->tree);
}

/*
 * The tree's uncharge miss (its @unmiss), where an uncharge the inline
 * stock did not take goes, with @t, @g's tree, loaded once: the one call
 * a policy may put its own uncharge in front of (policy.h), as it may put
 * its hit in front of the charge's miss.
 */
static int group_uncharge_slow(struct pcstock_group *g,
			       unsigned long nr_pages, struct pcstock_tree *t)
{
	if (nr_pages > PCSTOCK_COUNTER_MAX)	/* @g: not NULL */
		return -EINVAL;
	if (!nr_pages || group_is_root(g))
		return 0;
	/*
	 * Inside a callback the pages go straight up (callback_enter()): each
	 * policy's uncharge sees to it (policy.h).
	 */
	t->uncharge(g, nr_pages);
	return 0;
}

int pcstock_group_uncharge(struct pcstock_group *g, unsigned long nr_pages)
{
	unsigned int batch;

	if (!g)
		return -EINVAL;
	batch = pcs_load(&g->memory.stock_refill_batch, PCS_RELAXED);
	/* Expected: the stock's layout, its hit falling through. */
	if (__builtin_expect(pcstock_stock_refills_(batch, nr_pages), 1) &&
	    pcs_stock_give(&g->memory, pcs_load(&g->hit_key, PCS_RELAXED),
			   batch, nr_pages))
		return 0;
	return g->tree->unmiss(g, nr_pages, g->tree);
}

int pcstock_group_uncharge_direct(struct pcstock_group *g,
				  unsigned long nr_pages)
{
	if (check_pages(g, nr_pages))
		return -EINVAL;
	if (nr_pages && !group_is_root(g))
		pcs_group_uncharge_counters(g, nr_pages);
	return 0;
}

/* The old name (pcstock/hierarchy.h): one more call, for soname 1 only. */
int pcstock_group_uncharge_batch(struct pcstock_group *g,
				 unsigned long nr_pages)
{
	return pcstock_group_uncharge_direct(g, nr_pages);
}

/* ---- the policy's copies --------------------------------------------- */

void pcs_tree_set_policy(struct pcstock_tree *t,
			 const struct pcs_policy_ops *ops)
{
	t->ops = ops;
	t->consume = ops->consume;
	t->miss = ops->consume ? miss_consume_first : miss_slow;
	t->unmiss = group_uncharge_slow;
	t->counter_try = ops->counter_try ? ops->counter_try :
					    counter_try_plain;
	t->uncharge = ops->uncharge ? ops->uncharge :
				      pcs_group_uncharge_counters;
}
