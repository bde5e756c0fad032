// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree.c - trees and group references: create and destroy a tree, the
 * references that keep a group, and its free a grace period after the
 * last put (see group.c for the tree's links and their RCU rules).
 *
 * TSan and RCU: see rcu.h.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include <pcstock/hierarchy.h>

#include "atomic.h"
#include "counter_read.h"
#include "group.h"
#include "internal.h"
#include "policy.h"
#include "names.h"
#include "rcu.h"

/* PCS_TSAN: a TSan build (atomic.h). */
#ifdef PCS_TSAN
char pcs_rcu_hb_token;
#endif
atomic_ulong pcs_rcu_waits;

#ifdef PCSTOCK_EXPLORE_RCU
/*
 * The explorer's callbacks (rcu.h), newest first, linked through their
 * heads' own queue link.  Plain C11 atomics, not pcs_*(): a free is not a
 * step the explorer schedules or the weak-memory model traces.
 */
static _Atomic(struct rcu_head *) rcu_deferred;

static struct rcu_head *deferred_next(struct rcu_head *h)
{
	return (struct rcu_head *)h->next.next;
}

void pcs_rcu_defer(struct rcu_head *head, void (*fn)(struct rcu_head *))
{
	struct rcu_head *old = atomic_load_explicit(&rcu_deferred,
						    memory_order_relaxed);

	head->func = fn;
	do {
		head->next.next = (struct cds_wfcq_node *)old;
	} while (!atomic_compare_exchange_weak_explicit(&rcu_deferred, &old,
			head, memory_order_release, memory_order_relaxed));
}

/* Every callback queued so far, oldest first, after a grace period. */
void pcs_rcu_run_deferred(void)
{
	struct rcu_head *h, *next, *fifo = NULL;

	h = atomic_exchange_explicit(&rcu_deferred, NULL,
				     memory_order_acquire);
	if (!h)
		return;
	urcu_bp_synchronize_rcu();
	for (; h; h = next) {
		next = deferred_next(h);
		h->next.next = (struct cds_wfcq_node *)fifo;
		fifo = h;
	}
	for (h = fifo; h; h = next) {
		next = deferred_next(h);
		h->func(h);
	}
}
#endif

#define NR_MUTEXES 4		/* struct pcstock_tree's locks */

/* ---- RCU and references ---------------------------------------------------- */

static void group_free_rcu(struct rcu_head *head);
static void group_reap(struct pcstock_group *g);

/* The root is not counted: it lives until pcstock_tree_destroy(). */
void pcstock_group_get(struct pcstock_group *g)
{
	if (g && !group_is_root(g))
		pcs_fetch_add(&g->refs, 1, PCS_RELAXED);
}

/*
 * Release orders this thread's use of @g before the free; the last put's
 * acquire (acq_rel) pairs with every earlier put's release.
 */
void pcstock_group_put(struct pcstock_group *g)
{
	long refs;

	if (!g || group_is_root(g))
		return;
	refs = pcs_fetch_sub(&g->refs, 1, PCS_ORDER(TREE_PUT, PCS_ACQ_REL));
	if (refs > 1)
		return;
	/*
	 * The tree holds a reference while @g is online: reaching zero on
	 * an online group, or going below zero, means a put too many.  The
	 * relaxed load is ordered by the acq_rel decrement, which reads
	 * from pcstock_group_destroy()'s put after its release of online.
	 */
	if (refs < 1 || pcs_load(&g->online, PCS_RELAXED))
		pcs_die("pcstock_group_put(): group \"%s\" (%p) put more often "
			"than it was got", g->name, (void *)g);
	/* Acquire pairs with the store in pcstock_tree_destroy(). */
	if (pcs_load(&g->tree->dying, PCS_ORDER(TREE_PUT_DYING, PCS_ACQUIRE))) {
		group_reap(g);
		return;
	}
	rcu_hb_release();
	pcs_call_rcu(&g->rcu, group_free_rcu);
}

void pcs_group_free(struct pcstock_group *g)
{
	if (g->tree->ops->group_free)
		g->tree->ops->group_free(g);
	free(g);
}

/* Free @g, a grace period after it was unlinked and its last put. */
static void group_release(struct pcstock_group *g)
{
	struct pcstock_group *parent;
	struct pcstock_tree *t;

	rcu_hb_acquire();
	parent = g->parent;
	t = g->tree;
	/* The tree outlives this: its destroy waits for our decrement. */
	if (g->data && t->attr.release)
		t->attr.release(g->data, t->attr.cb_arg);
	pcs_group_free(g);
	pcstock_group_put(parent);
	/* Release pairs with the acquire in wait_rcu_frees() (and TSan's). */
	rcu_hb_release();
	pcs_fetch_sub(&t->nr_groups, 1, PCS_ORDER(TREE_FREED, PCS_RELEASE));
}

static void group_free_rcu(struct rcu_head *head)
{
	group_release((void *)((char *)head -
			       offsetof(struct pcstock_group, rcu)));
}

/*
 * A group whose last put comes while its tree is destroyed: the destroyer
 * frees it (pcstock_tree_destroy()).  The release pairs with the acquire
 * exchange in reap_all().
 */
static void group_reap(struct pcstock_group *g)
{
	struct pcstock_tree *t = g->tree;
	struct pcstock_group *head = pcs_load(&t->reaped, PCS_RELAXED);

	do {
		g->reap_next = head;
	} while (!pcs_cas(&t->reaped, &head, g,
			  PCS_ORDER(TREE_REAP, PCS_RELEASE), PCS_RELAXED));
}

/* ---- tree -------------------------------------------------------------- */

/* Counters of a new group; high starts at "max" as css_alloc sets it. */
void pcs_group_init(struct pcstock_group *g, struct pcstock_tree *t,
		    struct pcstock_group *parent)
{
	g->tree = t;
	g->parent = parent;
	pcstock_counter_init(&g->memory, parent ? &parent->memory : NULL,
			     true);
	pcstock_counter_set_high(&g->memory, PCSTOCK_COUNTER_MAX);
	pcstock_counter_set_track_failcnt(&g->memory, t->attr.track_failcnt);
	pcstock_counter_init(&g->memsw, parent ? &parent->memsw : NULL,
			     false);
	pcstock_counter_set_high(&g->memsw, PCSTOCK_COUNTER_MAX);
	/* Mainline counts failures of memory only (track_failcnt, v6.15). */
	pcs_store(&g->refs, 1, PCS_RELAXED);
	pcs_store(&g->online, true, PCS_RELAXED);
}

/*
 * One allocation: the group, its name, then the policy's state, aligned
 * for any type (as css_alloc() hands a controller a struct of its own
 * size, but the core allocates it, so a group never exists without it).
 */
struct pcstock_group *pcs_group_alloc(const struct pcstock_tree *t,
				      const char *name)
{
	const size_t align = _Alignof(max_align_t);
	size_t len = strlen(name);
	size_t state = t->ops->group_state_size;
	size_t at = (sizeof(struct pcstock_group) + len + 1 + align - 1) &
		    ~(align - 1);
	struct pcstock_group *g;

	g = pcs_aligned_alloc(PCSTOCK_CACHELINE,
			      state ? at + state : sizeof(*g) + len + 1,
			      "hierarchy.group");
	if (!g)
		return NULL;
	memset(g, 0, sizeof(*g));
	memcpy(g->name, name, len + 1);
	if (state) {
		g->policy_state = (char *)g + at;
		memset(g->policy_state, 0, state);
	}
	return g;
}

static void mutexes_destroy(struct pcstock_tree *t, int n)
{
	pthread_mutex_t *m[] = { &t->lock, &t->limit_lock, &t->drain_lock,
				 &t->oom_lock };

	while (n-- > 0)
		pthread_mutex_destroy(m[n]);
}

static int mutexes_init(struct pcstock_tree *t)
{
	pthread_mutex_t *m[] = { &t->lock, &t->limit_lock, &t->drain_lock,
				 &t->oom_lock };

	for (int i = 0; i < NR_MUTEXES; i++) {
		if (pthread_mutex_init(m[i], NULL)) {
			mutexes_destroy(t, i);
			return -ENOMEM;
		}
	}
	return 0;
}

int pcstock_tree_create(struct pcstock_domain *d,
			const struct pcstock_tree_attr *attr,
			struct pcstock_tree **out)
{
	/* All zero: the first policy, the default batch. */
	static const struct pcstock_tree_attr defaults;
	const struct pcs_policy_ops *ops;
	struct pcstock_tree *t;
	int err;

	if (!d || !out)
		return -EINVAL;
	if (!attr)
		attr = &defaults;
	ops = pcs_policy_ops(attr->policy);
	if (!ops || attr->batch > pcs_policy_max_batch(ops))
		return -EINVAL;
	t = pcs_calloc(1, sizeof(*t), "hierarchy.tree");
	if (!t)
		return -ENOMEM;
	t->domain = d;
	t->attr = *attr;
	if (!t->attr.batch)
		t->attr.batch = PCSTOCK_DEFAULT_BATCH;
	pcs_tree_set_policy(t, ops);
	err = mutexes_init(t);
	if (err)
		goto free_tree;
	err = name_index_init(&t->names);
	if (err)
		goto free_mutexes;
	err = -ENOMEM;
	t->root = pcs_group_alloc(t, "");
	if (!t->root)
		goto free_names;
	pcs_group_init(t->root, t, NULL);
	if (ops->tree_init) {
		err = ops->tree_init(t);
		if (err)
			goto free_root;
	}
	pcs_store(&t->nr_groups, 1, PCS_RELAXED);
	pcs_domain_users_add(d, 1);
	*out = t;
	return 0;

free_root:
	pcs_group_free(t->root);
free_names:
	name_index_fini(&t->names);
free_mutexes:
	mutexes_destroy(t, NR_MUTEXES);
free_tree:
	free(t);
	return err;
}

/*
 * Every pending RCU free.  A free puts the parent; one that read the tree
 * dying hands it to the destroyer, one that ran before queued it, to run
 * after the next barrier.
 */
static void wait_rcu_frees(struct pcstock_tree *t)
{
	long before;

	do {
		before = pcs_load(&t->nr_groups,
				  PCS_ORDER(TREE_WAIT_BEFORE, PCS_ACQUIRE));
		pcs_rcu_barrier();
		rcu_hb_acquire();	/* the callbacks' ends, for TSan */
	} while (pcs_load(&t->nr_groups,
			  PCS_ORDER(TREE_WAIT_AFTER, PCS_ACQUIRE)) < before);
}

/*
 * Free every group handed to the destroyer, and the parents their frees
 * hand on.  Each was unlinked before the destroy began and a grace period
 * has passed since: nobody can reach it.  The acquire pairs with the
 * release in group_reap().
 */
static void reap_all(struct pcstock_tree *t)
{
	struct pcstock_group *g, *next;

	while ((g = pcs_xchg(&t->reaped, NULL,
			     PCS_ORDER(TREE_REAP_ALL, PCS_ACQUIRE)))) {
		for (; g; g = next) {
			next = g->reap_next;
			group_release(g);
		}
	}
}

int pcstock_tree_destroy(struct pcstock_tree *t)
{
	unsigned long leaked;

	if (!t)
		return 0;
	if (pcs_load(&t->root->children,
		     PCS_ORDER(TREE_DESTROY_CHILDREN, PCS_ACQUIRE)))
		return -EBUSY;
	/*
	 * A group's free puts its parent, whose free would wait for another
	 * grace period: a chain would cost one per level.  From here every
	 * last put hands its group to us instead (release pairs with the
	 * acquire in pcstock_group_put()): once the frees already queued
	 * have run, one grace period covers all, as every group was
	 * unlinked before we began.
	 */
	pcs_store(&t->dying, true, PCS_ORDER(TREE_DYING, PCS_RELEASE));
	pcs_high_recs_drop(t);
	/* The policy's references on (offline) groups go. */
	if (t->ops->tree_release)
		t->ops->tree_release(t);
	wait_rcu_frees(t);
	if (pcs_load(&t->reaped, PCS_RELAXED)) {
		pcs_rcu_synchronize();
		reap_all(t);
	}
	pcs_store(&t->dying, false, PCS_RELAXED);
	/* Acquire pairs with the release decrement in group_release(). */
	if (pcs_load(&t->nr_groups,
		     PCS_ORDER(TREE_DESTROY_GROUPS, PCS_ACQUIRE)) != 1)
		return -EBUSY;
	/* Every group is gone: what the root still counts, nobody holds. */
	leaked = pcs_counter_usage(&t->root->memory);
	if (t->ops->tree_fini)
		t->ops->tree_fini(t);
	pcs_group_free(t->root);
	name_index_fini(&t->names);
	mutexes_destroy(t, NR_MUTEXES);
	pcs_domain_users_add(t->domain, -1);
	free(t);
	return (int)PCS_MIN(leaked, (unsigned long)INT_MAX);
}

struct pcstock_group *pcstock_tree_root(struct pcstock_tree *t)
{
	return t ? t->root : NULL;
}

struct pcstock_domain *pcstock_tree_domain(const struct pcstock_tree *t)
{
	return t ? t->domain : NULL;
}

enum pcstock_tree_policy pcstock_tree_policy(const struct pcstock_tree *t)
{
	return t ? t->attr.policy : PCSTOCK_TREE_NR_POLICIES;
}

void pcstock_tree_stats(const struct pcstock_tree *t,
			struct pcstock_tree_stats *st)
{
	if (!st)
		return;
	if (!t) {
		*st = (struct pcstock_tree_stats){ 0 };
		return;
	}
	*st = (struct pcstock_tree_stats){
		.nr_groups = (unsigned long)pcs_load(&t->nr_groups,
						     PCS_RELAXED),
		.drain_all = pcs_load(&t->drain_all, PCS_RELAXED),
		.drain_all_busy = pcs_load(&t->drain_all_busy, PCS_RELAXED),
		.callback_clamped = pcs_load(&t->callback_clamped,
					     PCS_RELAXED),
	};
	if (t->ops->tree_stats)
		t->ops->tree_stats(t, st);
}
