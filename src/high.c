// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * high.c - memory.high: the over-high records a charge leaves, and their
 * handling, pcstock_handle_over_high().
 */
#include <pthread.h>
#include <stdlib.h>

#include <pcstock/hierarchy.h>

#include "atomic.h"
#include "counter_read.h"
#include "group.h"
#include "internal.h"
#include "rcu.h"

/* memory.high throttling (mm/memcontrol.c), with HZ = 1000. */
#define HZ 1000UL
#define DELAY_PRECISION_SHIFT 20
#define DELAY_SCALING_SHIFT 14
#define MAX_HIGH_DELAY (2 * HZ)
#define HIGH_RECLAIM_RETRY_PAGES 32UL	/* SWAP_CLUSTER_MAX */

/* ---- over-high records --------------------------------------------------- */

/*
 * A thread's charges over memory.high record the pages and a referenced
 * group (the kernel keeps both in the task) for pcstock_handle_over_high().
 * Records are also listed process-wide so that pcstock_tree_destroy() can
 * drop those other threads hold on its groups: a pool thread that never
 * handles its record must not pin a tree.  The group pointer changes hands
 * only by exchange or compare-and-swap (acq_rel, each pairing with the
 * others), so the owner and a destroyer never put the same reference; a
 * destroyer reads another thread's group under RCU, so it is not freed
 * under the read.
 */
struct high_rec {
	_Atomic(struct pcstock_group *) g;
	unsigned long pages;		/* the owner's only */
	struct high_rec *next, *prev;	/* under high_lock */
};

static pthread_mutex_t high_lock = PTHREAD_MUTEX_INITIALIZER;
static struct high_rec *high_recs;
static pthread_key_t high_key;		/* its destructor runs at thread exit */
static pthread_once_t high_once = PTHREAD_ONCE_INIT;
static bool high_key_ok;
static _Thread_local struct high_rec *high_self PCS_TLS;

static void high_rec_free(void *arg)
{
	struct high_rec *r = arg;

	pthread_mutex_lock(&high_lock);
	if (r->prev)
		r->prev->next = r->next;
	else
		high_recs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	pthread_mutex_unlock(&high_lock);
	pcstock_group_put(pcs_xchg(&r->g, NULL,
				   PCS_ORDER(HIGH_FREE, PCS_ACQ_REL)));
	high_self = NULL;
	free(r);
}

static void high_key_create(void)
{
	high_key_ok = !pthread_key_create(&high_key, high_rec_free);
}

/* The calling thread's record, listed on first use; NULL without memory. */
static struct high_rec *high_rec_get(void)
{
	struct high_rec *r = high_self;

	if (r)
		return r;
	/* pthread_once() orders the key's creation before the read. */
	pthread_once(&high_once, high_key_create);
	if (!high_key_ok)
		return NULL;
	r = pcs_calloc(1, sizeof(*r), "hierarchy.high");
	if (!r)
		return NULL;
	if (pthread_setspecific(high_key, r)) {
		free(r);
		return NULL;
	}
	pthread_mutex_lock(&high_lock);
	r->next = high_recs;
	if (high_recs)
		high_recs->prev = r;
	high_recs = r;
	pthread_mutex_unlock(&high_lock);
	high_self = r;
	return r;
}

/* Take the record's group (and its reference); NULL if there is none. */
static struct pcstock_group *high_rec_take(void)
{
	struct high_rec *r = high_self;

	return r ? pcs_xchg(&r->g, NULL, PCS_ORDER(HIGH_TAKE, PCS_ACQ_REL)) :
		   NULL;
}

void pcs_high_record(struct pcstock_group *g, unsigned long nr_pages)
{
	struct high_rec *r = high_rec_get();
	struct pcstock_group *old;

	if (!r)
		return;
	if (pcs_load(&r->g, PCS_RELAXED) != g) {
		pcstock_group_get(g);
		old = pcs_xchg(&r->g, g, PCS_ORDER(HIGH_RECORD, PCS_ACQ_REL));
		if (!old)	/* handled, or dropped by a tree's destroy */
			r->pages = 0;
		pcstock_group_put(old);
	}
	r->pages += nr_pages;
}

/* Every thread's record on a group of @t lets go of it. */
void pcs_high_recs_drop(struct pcstock_tree *t)
{
	pthread_mutex_lock(&high_lock);
	rcu_lock();
	for (struct high_rec *r = high_recs; r; r = r->next) {
		struct pcstock_group *g =
			pcs_load(&r->g, PCS_ORDER(HIGH_DROP_LOAD, PCS_ACQUIRE));

		if (g && g->tree == t &&
		    pcs_cas(&r->g, &g, NULL, PCS_ORDER(HIGH_DROP, PCS_ACQ_REL),
			    PCS_ORDER(HIGH_DROP_FAIL, PCS_ACQUIRE)))
			pcstock_group_put(g);
	}
	rcu_unlock();
	pthread_mutex_unlock(&high_lock);
}

/* ---- memory.high ------------------------------------------------------- */

/* reclaim_high(): every non-root level from @g up that is above high. */
static unsigned long reclaim_high(struct pcstock_group *g,
				  unsigned long nr_pages)
{
	unsigned long reclaimed = 0;

	for (; g && !group_is_root(g); g = g->parent) {
		if (pcs_counter_usage(&g->memory) <=
		    pcs_counter_high(&g->memory))
			continue;
		pcs_group_event(g, PCSTOCK_EVENT_HIGH);
		reclaimed += pcs_call_reclaim(g, nr_pages);
	}
	return reclaimed;
}

/* calculate_overage(): u64 arithmetic, wrapping as the kernel's. */
static unsigned long long overage(unsigned long usage, unsigned long high)
{
	if (usage <= high)
		return 0;
	high = PCS_MAX(high, 1UL);
	return ((unsigned long long)(usage - high) << DELAY_PRECISION_SHIFT) /
	       high;
}

/* calculate_high_delay() with mem_find_max_overage(), clamped. */
static unsigned long high_delay(struct pcstock_group *g,
				unsigned long nr_pages)
{
	unsigned long long max_ov = 0, penalty;

	for (; g && !group_is_root(g); g = g->parent)
		max_ov = PCS_MAX(max_ov,
				 overage(pcs_counter_usage(&g->memory),
					 pcs_counter_high(&g->memory)));
	if (!max_ov)
		return 0;
	penalty = max_ov * max_ov * HZ;
	penalty >>= DELAY_PRECISION_SHIFT;
	penalty >>= DELAY_SCALING_SHIFT;
	penalty = penalty * nr_pages / PCSTOCK_DEFAULT_BATCH;
	return (unsigned long)PCS_MIN(penalty,
				      (unsigned long long)MAX_HIGH_DELAY);
}

unsigned long pcstock_handle_over_high(void)
{
	struct pcstock_group *g = high_rec_take();
	unsigned long nr_pages, delay = 0, reclaimed;
	int nr_retries = PCSTOCK_MAX_RECLAIM_RETRIES;
	unsigned int rounds = 0;
	bool in_retry = false;

	if (!g)
		return 0;
	nr_pages = high_self->pages;
	high_self->pages = 0;
	while (nr_pages) {
		reclaimed = reclaim_high(g, in_retry ?
						    HIGH_RECLAIM_RETRY_PAGES :
						    nr_pages);
		delay = high_delay(g, nr_pages);
		if (delay <= HZ / 100) {
			delay = 0;
			break;
		}
		/* Progress or retries left: reclaim again, do not throttle. */
		if (!reclaim_progress(reclaimed, &rounds) && !nr_retries--)
			break;
		in_retry = true;
	}
	pcstock_group_put(g);
	return delay;
}

unsigned long pcstock_over_high_pages(void)
{
	struct high_rec *r = high_self;

	return r && pcs_load(&r->g, PCS_RELAXED) ? r->pages : 0;
}
