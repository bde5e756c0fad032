// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hierarchy.c - groups: a memcg-like tree over counters and stocks.
 *
 * The tree.  Each group links to its parent (immutable) and to its first
 * child and next sibling (RCU-published atomics).  Writers (create,
 * destroy) serialise on the tree's lock; readers walk under urcu-bp.  A
 * link store is a release and a walker's load an acquire, so a walker sees
 * a new group initialised.  An unlinked group keeps its sibling pointer, so
 * a walker standing on it carries on; it is freed by call_rcu after its
 * refcount drops to zero (while its tree is destroyed: by the destroyer,
 * after one grace period for all), and its refcount only drops to zero
 * after it is unlinked (the tree holds a reference while it is linked).  A child holds
 * a reference on its parent until it is freed, so a group's parent chain,
 * counters included, outlives it.
 *
 * The charge path is try_charge_memcg() (see pcstock_group_charge() in the
 * header for the steps); the comments below name the spec's step numbers
 * (spec §3.6.2).
 *
 * TSan and RCU: see rcu.h.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <pcstock/hierarchy.h>

#include "atomic.h"
#include "group.h"
#include "internal.h"
#include "memcg7.h"
#include "names.h"
#include "rcu.h"
#include "stock_hit.h"

/* PCS_TSAN: a TSan build (atomic.h). */
#ifdef PCS_TSAN
char pcs_rcu_hb_token;
#endif
atomic_ulong pcs_rcu_waits;

/* PAGE_ALLOC_COSTLY_ORDER: "small" charges are at most 8 pages. */
#define COSTLY_ORDER 3U
#define COSTLY_PAGES (1UL << COSTLY_ORDER)
/* memory.high throttling (mm/memcontrol.c), with HZ = 1000. */
#define HZ 1000UL
#define DELAY_PRECISION_SHIFT 20
#define DELAY_SCALING_SHIFT 14
#define MAX_HIGH_DELAY (2 * HZ)
#define HIGH_RECLAIM_RETRY_PAGES 32UL	/* SWAP_CLUSTER_MAX */
#define NR_MUTEXES 4		/* struct pcstock_tree's locks */

struct pcstock_group {
	struct pcstock_counter memory;
	struct pcstock_counter memsw;
	struct pcstock_tree *tree;
	struct pcstock_group *parent;
	/*
	 * memory's stock key while a hit on it is the whole charge (stocked,
	 * no memsw, online), else 0: the group hit paths' one check.
	 */
	_Atomic unsigned long long hit_key;
	_Atomic(struct pcstock_group *) children;
	_Atomic(struct pcstock_group *) sibling;
	struct pcstock_group *prev;	/* previous sibling (tree lock) */
	void *data;			/* the creator's */
	atomic_ulong events[PCSTOCK_NR_EVENTS];
	atomic_ulong events_local[PCSTOCK_NR_EVENTS];
	struct memcg7_dead m7_dead;	/* memcg7's reference after destroy */
	atomic_ulong refused;		/* charges that returned -ENOMEM */
	struct rcu_head rcu;
	struct pcstock_group *reap_next;	/* see pcstock_tree_destroy() */
	/*
	 * What a lookup touches, together: with 100,000 siblings each line
	 * is a cache miss (the name follows in the same allocation).
	 */
	_Alignas(PCSTOCK_CACHELINE) struct name_key key; /* name index */
	atomic_long refs;
	atomic_bool online;
	char name[];
};

struct pcstock_tree {
	struct pcstock_domain *domain;
	struct pcstock_tree_attr attr;
	struct pcstock_group *root;
	bool stocked;			/* DEFAULT or V4: counters have stock */
	struct memcg7 *m7;		/* MEMCG7 only */
	pthread_mutex_t lock;		/* topology writers */
	pthread_mutex_t limit_lock;	/* the kernel's memcg_max_mutex */
	pthread_mutex_t drain_lock;	/* percpu_charge_mutex (per-counter) */
	pthread_mutex_t oom_lock;	/* the kernel's oom_lock, per tree */
	struct name_index names;	/* children by name, under lock */
	atomic_long nr_groups;
	/* While the tree is destroyed: groups freed by the destroyer. */
	atomic_bool dying;
	_Atomic(struct pcstock_group *) reaped;
	atomic_ulong drain_all;
	atomic_ulong drain_all_busy;
	atomic_ulong callback_clamped;
};

/* ---- RCU and references ---------------------------------------------------- */

static void group_free_rcu(struct rcu_head *head);
static void group_reap(struct pcstock_group *g);

static bool group_is_root(const struct pcstock_group *g)
{
	return !g->parent;
}

/* The root is not counted: it lives until pcstock_tree_destroy(). */
void pcstock_group_get(struct pcstock_group *g)
{
	if (g && !group_is_root(g))
		pcs_fetch_add(&g->refs, 1, PCS_RELAXED);
}

/* inc-not-zero, for groups found under RCU. */
static bool group_tryget(struct pcstock_group *g)
{
	long refs = pcs_load(&g->refs, PCS_RELAXED);

	if (group_is_root(g))
		return true;

	while (refs > 0)
		if (pcs_cas(&g->refs, &refs, refs + 1, PCS_RELAXED,
			    PCS_RELAXED))
			return true;
	return false;
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
	refs = pcs_fetch_sub(&g->refs, 1, PCS_ACQ_REL);
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
	if (pcs_load(&g->tree->dying, PCS_ACQUIRE)) {
		group_reap(g);
		return;
	}
	rcu_hb_release();
	urcu_bp_call_rcu(&g->rcu, group_free_rcu);
}

static void group_free(struct pcstock_group *g)
{
	pcstock_counter_free_stock(&g->memory);
	pcstock_counter_free_stock(&g->memsw);
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
	group_free(g);
	pcstock_group_put(parent);
	/* Release pairs with the acquire in wait_rcu_frees() (and TSan's). */
	rcu_hb_release();
	pcs_fetch_sub(&t->nr_groups, 1, PCS_RELEASE);
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
	} while (!pcs_cas(&t->reaped, &head, g, PCS_RELEASE, PCS_RELAXED));
}

static bool in_subtree(const struct pcstock_group *g,
		       const struct pcstock_group *root)
{
	for (; g; g = g->parent)
		if (g == root)
			return true;
	return false;
}

/* Pre-order successor of @pos within @root's subtree, under RCU. */
static struct pcstock_group *next_pre(struct pcstock_group *pos,
				      struct pcstock_group *root)
{
	/* Acquires pair with the release stores in link_child(). */
	struct pcstock_group *next = pcs_load(&pos->children, PCS_ACQUIRE);

	if (next)
		return next;
	while (pos != root) {
		next = pcs_load(&pos->sibling, PCS_ACQUIRE);
		if (next)
			return next;
		pos = pos->parent;
	}
	return NULL;
}

#define for_each_in_subtree(pos, root) \
	for ((pos) = (root); (pos); (pos) = next_pre((pos), (root)))

/* ---- events and callbacks ------------------------------------------------ */

/* memcg_memory_event(): local count, then every non-root level upward. */
static void group_event(struct pcstock_group *g, enum pcstock_event ev)
{
	pcs_fetch_add(&g->events_local[ev], 1, PCS_RELAXED);
	for (; g && !group_is_root(g); g = g->parent)
		pcs_fetch_add(&g->events[ev], 1, PCS_RELAXED);
}

/*
 * Depth of callbacks on this thread: charges inside them are forced, and
 * group uncharges inside them skip the stock.
 */
static _Thread_local unsigned int in_callback PCS_TLS;

/*
 * Around a reclaim or OOM callback.  The kernel's reclaimed folios leave
 * through uncharge_batch(), straight to the counters, so its callers see
 * the progress at once; here pages the callback gives back with
 * pcstock_group_uncharge() would land in the stock and usage would not
 * drop.  Emptying the thread's CPU cache (domain.h) sends every uncharge
 * of the callback to a slow path that sends the pages up:
 * group_uncharge_slow() for memcg7, the stock's uncached uncharge for the
 * per-counter stocks.  The fast paths outside callbacks test nothing more.
 */
static void callback_enter(void)
{
	in_callback++;
	pcs_fast_suspend();
}

static void callback_exit(void)
{
	pcs_fast_resume();
	in_callback--;
}

static unsigned long call_reclaim(struct pcstock_group *g,
				  unsigned long nr_pages)
{
	struct pcstock_tree *t = g->tree;
	long freed;

	if (!t->attr.reclaim || !nr_pages)
		return 0;
	callback_enter();
	freed = t->attr.reclaim(g, nr_pages, t->attr.cb_arg);
	callback_exit();
	if (freed >= 0 && (unsigned long)freed <= nr_pages)
		return (unsigned long)freed;
	pcs_fetch_add(&t->callback_clamped, 1, PCS_RELAXED);
	return freed < 0 ? 0 : nr_pages;
}

/* ---- drain --------------------------------------------------------------- */

static void drain_group_cpus(struct pcstock_group *g, unsigned int nr_cpus)
{
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
		pcstock_counter_drain_stock(&g->memory, cpu);
		pcstock_counter_drain_stock(&g->memsw, cpu);
	}
}

void pcstock_group_drain_all(struct pcstock_group *g)
{
	struct pcstock_tree *t;
	struct pcstock_group *pos;
	bool done = true;

	if (!g)
		return;
	t = g->tree;
	if (t->attr.policy == PCSTOCK_TREE_NONE)
		return;
	rcu_lock();
	if (t->m7) {
		done = memcg7_drain_all(t->m7, g);
	} else if (pthread_mutex_trylock(&t->drain_lock)) {
		done = false;
	} else {
		unsigned int nr_cpus = pcstock_domain_nr_cpus(t->domain);

		for_each_in_subtree(pos, g)
			drain_group_cpus(pos, nr_cpus);
		pthread_mutex_unlock(&t->drain_lock);
	}
	rcu_unlock();
	pcs_fetch_add(done ? &t->drain_all : &t->drain_all_busy, 1,
		      PCS_RELAXED);
}

/* ---- memcg7 glue ----------------------------------------------------------- */

static struct pcstock_group *key_group(void *key)
{
	return key;
}

/* memcg_uncharge(): memory and (v1) memsw, straight to the counters. */
static void group_uncharge_counters(struct pcstock_group *g,
				    unsigned long nr_pages)
{
	pcstock_counter_uncharge(&g->memory, nr_pages);
	if (g->tree->attr.memsw)
		pcstock_counter_uncharge(&g->memsw, nr_pages);
}

static void m7_uncharge(void *key, unsigned long nr_pages)
{
	group_uncharge_counters(key_group(key), nr_pages);
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
	return pcs_load(&key_group(key)->online, PCS_ACQUIRE);
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
static _Thread_local struct high_rec *high_self;

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
	pcstock_group_put(pcs_xchg(&r->g, NULL, PCS_ACQ_REL));
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

	return r ? pcs_xchg(&r->g, NULL, PCS_ACQ_REL) : NULL;
}

static void high_record(struct pcstock_group *g, unsigned long nr_pages)
{
	struct high_rec *r = high_rec_get();
	struct pcstock_group *old;

	if (!r)
		return;
	if (pcs_load(&r->g, PCS_RELAXED) != g) {
		pcstock_group_get(g);
		old = pcs_xchg(&r->g, g, PCS_ACQ_REL);
		if (!old)	/* handled, or dropped by a tree's destroy */
			r->pages = 0;
		pcstock_group_put(old);
	}
	r->pages += nr_pages;
}

/* Every thread's record on a group of @t lets go of it. */
static void high_recs_drop(struct pcstock_tree *t)
{
	pthread_mutex_lock(&high_lock);
	rcu_lock();
	for (struct high_rec *r = high_recs; r; r = r->next) {
		struct pcstock_group *g = pcs_load(&r->g, PCS_ACQUIRE);

		if (g && g->tree == t &&
		    pcs_cas(&r->g, &g, NULL, PCS_ACQ_REL, PCS_ACQUIRE))
			pcstock_group_put(g);
	}
	rcu_unlock();
	pthread_mutex_unlock(&high_lock);
}

/* ---- tree -------------------------------------------------------------- */

static const char *const policy_names[PCSTOCK_TREE_NR_POLICIES] = {
	[PCSTOCK_TREE_DEFAULT] = "default",
	[PCSTOCK_TREE_V4] = "v4",
	[PCSTOCK_TREE_MEMCG7] = "memcg7",
	[PCSTOCK_TREE_NONE] = "none",
};

int pcstock_tree_policy_parse(const char *name, enum pcstock_tree_policy *out)
{
	if (!name || !out)
		return -EINVAL;
	for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
		if (!strcmp(name, policy_names[p])) {
			*out = (enum pcstock_tree_policy)p;
			return 0;
		}
	}
	return -EINVAL;
}

const char *pcstock_tree_policy_name(enum pcstock_tree_policy p)
{
	if ((unsigned int)p >= PCSTOCK_TREE_NR_POLICIES)
		return NULL;
	return policy_names[p];
}

/* Counters of a new group; high starts at "max" as css_alloc sets it. */
static void group_init(struct pcstock_group *g, struct pcstock_tree *t,
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

static struct pcstock_group *group_alloc(const char *name)
{
	size_t len = strlen(name);
	struct pcstock_group *g;

	g = pcs_aligned_alloc(PCSTOCK_CACHELINE, sizeof(*g) + len + 1,
			      "hierarchy.group");
	if (!g)
		return NULL;
	memset(g, 0, sizeof(*g));
	memcpy(g->name, name, len + 1);
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
	struct pcstock_tree *t;
	int err;

	if (!d || !out)
		return -EINVAL;
	if (attr && ((unsigned int)attr->policy >= PCSTOCK_TREE_NR_POLICIES ||
		     attr->batch > PCSTOCK_STOCK_MAX_BATCH))
		return -EINVAL;
	t = pcs_calloc(1, sizeof(*t), "hierarchy.tree");
	if (!t)
		return -ENOMEM;
	t->domain = d;
	if (attr)
		t->attr = *attr;
	if (!t->attr.batch)
		t->attr.batch = PCSTOCK_DEFAULT_BATCH;
	t->stocked = t->attr.policy == PCSTOCK_TREE_DEFAULT ||
		     t->attr.policy == PCSTOCK_TREE_V4;
	err = mutexes_init(t);
	if (err)
		goto free_tree;
	err = name_index_init(&t->names);
	if (err)
		goto free_mutexes;
	err = -ENOMEM;
	t->root = group_alloc("");
	if (!t->root)
		goto free_names;
	group_init(t->root, t, NULL);
	if (t->attr.policy == PCSTOCK_TREE_MEMCG7) {
		err = memcg7_create(d, t->attr.batch,
				    t->attr.memcg7_isolated_fix, &m7_ops,
				    &t->m7);
		if (err)
			goto free_root;
	}
	pcs_store(&t->nr_groups, 1, PCS_RELAXED);
	pcs_domain_users_add(d, 1);
	*out = t;
	return 0;

free_root:
	group_free(t->root);
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
		before = pcs_load(&t->nr_groups, PCS_ACQUIRE);
		pcs_rcu_barrier();
		rcu_hb_acquire();	/* the callbacks' ends, for TSan */
	} while (pcs_load(&t->nr_groups, PCS_ACQUIRE) < before);
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

	while ((g = pcs_xchg(&t->reaped, NULL, PCS_ACQUIRE))) {
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
	if (pcs_load(&t->root->children, PCS_ACQUIRE))
		return -EBUSY;
	/*
	 * A group's free puts its parent, whose free would wait for another
	 * grace period: a chain would cost one per level.  From here every
	 * last put hands its group to us instead (release pairs with the
	 * acquire in pcstock_group_put()): once the frees already queued
	 * have run, one grace period covers all, as every group was
	 * unlinked before we began.
	 */
	pcs_store(&t->dying, true, PCS_RELEASE);
	high_recs_drop(t);
	/* memcg7 holds references on (offline) groups: drop them. */
	if (t->m7)
		memcg7_flush(t->m7);
	wait_rcu_frees(t);
	if (pcs_load(&t->reaped, PCS_RELAXED)) {
		pcs_rcu_synchronize();
		reap_all(t);
	}
	pcs_store(&t->dying, false, PCS_RELAXED);
	/* Acquire pairs with the release decrement in group_release(). */
	if (pcs_load(&t->nr_groups, PCS_ACQUIRE) != 1)
		return -EBUSY;
	/* Every group is gone: what the root still counts, nobody holds. */
	leaked = pcstock_counter_read(&t->root->memory);
	memcg7_destroy(t->m7);
	group_free(t->root);
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
	if (t->m7)
		memcg7_stats(t->m7, &st->memcg7);
}

/* ---- groups -------------------------------------------------------------- */

/* As cgroupfs: not "." or "..", no '/'; also no control characters. */
static bool name_valid(const char *name)
{
	size_t len = strnlen(name, PCSTOCK_GROUP_NAME_MAX + 1);

	if (!len || len > PCSTOCK_GROUP_NAME_MAX || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	for (const unsigned char *p = (const void *)name; *p; p++)
		if (*p == '/' || *p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/*
 * Under RCU or the tree lock: the child of @parent named @name[0..len), if
 * it is indexed (only online groups are).
 */
static struct pcstock_group *find_child(struct pcstock_group *parent,
					const char *name, size_t len)
{
	struct name_key *k = name_index_find(&parent->tree->names, parent,
					     name, len);

	return k ? (void *)((char *)k - offsetof(struct pcstock_group, key)) :
		   NULL;
}

/* Release publishes @g's initialisation; pairs with next_pre()'s loads. */
static void link_child(struct pcstock_group *parent, struct pcstock_group *g)
{
	struct pcstock_group *next = pcs_load(&parent->children, PCS_RELAXED);

	pcs_store(&g->sibling, next, PCS_RELAXED);
	if (next)
		next->prev = g;
#ifdef PCSTOCK_MUTATE_RELAXED_PUBLISH
	/* Planted bug, test builds only: the publication weakened. */
	pcs_store(&parent->children, g, PCS_RELAXED);
#else
	pcs_store(&parent->children, g, PCS_RELEASE);
#endif
}

/*
 * O(1) with the writers' back link.  @g keeps its sibling pointer: a
 * walker standing on it carries on.
 */
static void unlink_child(struct pcstock_group *parent, struct pcstock_group *g)
{
	struct pcstock_group *next = pcs_load(&g->sibling, PCS_RELAXED);

	if (next)
		next->prev = g->prev;
	/* Release: @next's initialisation, as in link_child(). */
	pcs_store(g->prev ? &g->prev->sibling : &parent->children, next,
		  PCS_RELEASE);
}

static void group_alloc_stock(struct pcstock_group *g)
{
	struct pcstock_tree *t = g->tree;
	enum pcstock_stock_policy p = t->attr.policy == PCSTOCK_TREE_V4 ?
					      PCSTOCK_STOCK_V4 :
					      PCSTOCK_STOCK_DEFAULT;

	/* Failure is not fatal (as in the series): the counter works plain. */
	pcstock_counter_alloc_stock(&g->memory, t->domain, t->attr.batch, p);
	if (t->attr.memsw)
		pcstock_counter_alloc_stock(&g->memsw, t->domain,
					    t->attr.batch, p);
	else
		pcs_store(&g->hit_key, g->memory.stock_key, PCS_RELAXED);
}

int pcstock_group_create(struct pcstock_group *parent, const char *name,
			 struct pcstock_group **out)
{
	return pcstock_group_create_data(parent, name, NULL, out);
}

int pcstock_group_create_data(struct pcstock_group *parent, const char *name,
			      void *data, struct pcstock_group **out)
{
	struct pcstock_tree *t;
	struct pcstock_group *g;
	int err = 0;

	if (!parent || !name || !out || !name_valid(name))
		return -EINVAL;
	t = parent->tree;
	g = group_alloc(name);
	if (!g)
		return -ENOMEM;
	group_init(g, t, parent);
	g->data = data;
	g->key = (struct name_key){ .parent = parent, .name = g->name };
	if (t->stocked)
		group_alloc_stock(g);

	pthread_mutex_lock(&t->lock);
	if (!pcs_load(&parent->online, PCS_RELAXED))
		err = -ENOENT;
	else if (find_child(parent, name, strlen(name)))
		err = -EEXIST;
	else
		err = name_index_add(&t->names, &g->key);
	if (!err) {
		pcstock_group_get(parent);
		pcstock_group_get(g);	/* the caller's; the first is the tree's */
		pcs_fetch_add(&t->nr_groups, 1, PCS_RELAXED);
		link_child(parent, g);
	}
	pthread_mutex_unlock(&t->lock);
	if (err) {
		group_free(g);
		return err;
	}
	*out = g;
	return 0;
}

int pcstock_group_destroy(struct pcstock_group *g)
{
	struct pcstock_tree *t;

	if (!g)
		return -EINVAL;
	if (group_is_root(g))
		return -EBUSY;
	t = g->tree;
	pthread_mutex_lock(&t->lock);
	if (!pcs_load(&g->online, PCS_RELAXED)) {
		pthread_mutex_unlock(&t->lock);
		return -ENOENT;
	}
	if (pcs_load(&g->children, PCS_RELAXED)) {
		pthread_mutex_unlock(&t->lock);
		return -EBUSY;
	}
	/*
	 * Hits stop before online clears: whoever sees it clear (acquire)
	 * sees no key either.  A hit that read the key just before is a
	 * charge that read online just before, as in the kernel.
	 */
	pcs_store(&g->hit_key, 0, PCS_RELAXED);
	/*
	 * Release pairs with the acquire loads in group_charge_slow() and
	 * m7_online(); memcg7 refills test it under the CPU lock that the
	 * drain below takes after this store (owner variant: before their
	 * CPU runs the drain the one below queues after it).
	 */
#ifdef PCSTOCK_MUTATE_RELAXED_OFFLINE	/* planted bug, explorer only */
	pcs_store(&g->online, false, PCS_RELAXED);
#else
	pcs_store(&g->online, false, PCS_RELEASE);
#endif
	/*
	 * mem_cgroup_css_offline(): an offline group protects nothing, also
	 * while its pages are still held.  Under the tree lock, as the
	 * setters' online check (group_set_protection()).
	 */
	pcstock_counter_set_min(&g->memory, 0);
	pcstock_counter_set_low(&g->memory, 0);
	name_index_del(&t->names, &g->key);
	unlink_child(g->parent, g);
	pthread_mutex_unlock(&t->lock);

	if (t->stocked) {
		pcstock_counter_disable_stock(&g->memory);
		pcstock_counter_disable_stock(&g->memsw);
		drain_group_cpus(g, pcstock_domain_nr_cpus(t->domain));
	}
	if (t->m7)
		memcg7_drain_key(t->m7, g, &g->m7_dead);
	pcstock_group_put(g);
	return 0;
}

int pcstock_group_lookup(struct pcstock_group *from, const char *path,
			 struct pcstock_group **out)
{
	struct pcstock_group *g = from;
	const char *p = path;
	int err = 0;

	if (!from || !path || !out)
		return -EINVAL;
	while (*p == '/')
		p++;
	rcu_lock();
	while (*p && g) {
		size_t len = strcspn(p, "/");

		g = find_child(g, p, len);
		p += len;
		if (*p == '/' && *++p == '/') {
			err = -EINVAL;
			break;
		}
	}
	if (!err && (!g || !pcs_load(&g->online, PCS_ACQUIRE) ||
		     !group_tryget(g)))
		err = -ENOENT;
	rcu_unlock();
	if (!err)
		*out = g;
	return err;
}

/* Deepest first descendant of @pos (or @pos): where a post-order starts. */
static struct pcstock_group *leftmost_leaf(struct pcstock_group *pos)
{
	struct pcstock_group *c;

	/* Acquires pair with the release stores in link_child(). */
	while ((c = pcs_load(&pos->children, PCS_ACQUIRE)))
		pos = c;
	return pos;
}

/* Post-order successor of @pos within @root's subtree, under RCU. */
static struct pcstock_group *next_post(struct pcstock_group *pos,
				       struct pcstock_group *root)
{
	struct pcstock_group *next;

	if (pos == root)
		return NULL;
	next = pcs_load(&pos->sibling, PCS_ACQUIRE);
	return next ? leftmost_leaf(next) : pos->parent;
}

static int walk(struct pcstock_group *root, pcstock_walk_fn fn, void *arg,
		bool post)
{
	struct pcstock_group *pos;
	int ret = 0;

	if (!root || !fn)
		return 0;
	rcu_lock();
	for (pos = post ? leftmost_leaf(root) : root; pos;
	     pos = post ? next_post(pos, root) : next_pre(pos, root)) {
		ret = fn(pos, arg);
		if (ret)
			break;
	}
	rcu_unlock();
	return ret;
}

int pcstock_group_walk(struct pcstock_group *root, pcstock_walk_fn fn,
		       void *arg)
{
	return walk(root, fn, arg, false);
}

int pcstock_group_walk_post(struct pcstock_group *root, pcstock_walk_fn fn,
			    void *arg)
{
	return walk(root, fn, arg, true);
}

int pcstock_group_path(const struct pcstock_group *g, char *buf, size_t size)
{
	const struct pcstock_group *pos;
	size_t len = 0, end;

	if (!g || (!buf && size))
		return -EINVAL;
	for (pos = g; !group_is_root(pos); pos = pos->parent)
		len += 1 + strlen(pos->name);
	if (!len)
		len = 1;		/* the root: "/" */
	if (!size)
		return (int)len;
	/* Fill from the end; only what falls inside @buf is written. */
	end = len;
	for (pos = g; !group_is_root(pos); pos = pos->parent) {
		size_t n = strlen(pos->name);

		end -= n;
		for (size_t i = 0; i < n; i++)
			if (end + i < size - 1)
				buf[end + i] = pos->name[i];
		if (--end < size - 1)
			buf[end] = '/';
	}
	if (size > 1)
		buf[0] = '/';
	buf[PCS_MIN(len, size - 1)] = '\0';
	return (int)len;
}

void *pcstock_group_data(const struct pcstock_group *g)
{
	return g ? g->data : NULL;
}

const char *pcstock_group_name(const struct pcstock_group *g)
{
	return g ? g->name : NULL;
}

struct pcstock_group *pcstock_group_parent(const struct pcstock_group *g)
{
	return g ? g->parent : NULL;
}

struct pcstock_tree *pcstock_group_tree(const struct pcstock_group *g)
{
	return g ? g->tree : NULL;
}

bool pcstock_group_online(const struct pcstock_group *g)
{
#ifdef PCSTOCK_MUTATE_RELAXED_ONLINE_LOAD	/* planted bug, explorer only */
	return g && pcs_load(&g->online, PCS_RELAXED);
#else
	return g && pcs_load(&g->online, PCS_ACQUIRE);
#endif
}

const struct pcstock_counter *
pcstock_group_memory(const struct pcstock_group *g)
{
	return g ? &g->memory : NULL;
}

const struct pcstock_counter *
pcstock_group_memsw(const struct pcstock_group *g)
{
	return g && g->tree->attr.memsw ? &g->memsw : NULL;
}

/* ---- charge ------------------------------------------------------------ */

static struct pcstock_group *memory_owner(struct pcstock_counter *c)
{
	return (void *)((char *)c - offsetof(struct pcstock_group, memory));
}

static struct pcstock_group *memsw_owner(struct pcstock_counter *c)
{
	return (void *)((char *)c - offsetof(struct pcstock_group, memsw));
}

static bool counter_try(struct pcstock_counter *c, unsigned long nr_pages,
			bool stocked, struct pcstock_counter **fail,
			unsigned long *charged)
{
	if (stocked)
		return pcstock_counter_try_charge_stock(c, nr_pages, fail,
							charged);
	*charged = nr_pages;
	return pcstock_counter_try_charge(c, nr_pages, fail);
}

/*
 * Steps 3 (and the series' 4/5): memsw, then memory.  If memory fails,
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

	if (t->attr.memsw && !counter_try(&g->memsw, nr_pages, t->stocked,
					  &fail, &memsw_charged)) {
		*over = memsw_owner(fail);
		return false;
	}
	if (counter_try(&g->memory, nr_pages, t->stocked, &fail, charged))
		return true;
	if (t->attr.memsw)
		pcstock_counter_uncharge(&g->memsw, nr_pages);
	*over = memory_owner(fail);
	return false;
}

/* mem_cgroup_margin(). */
static unsigned long group_margin(struct pcstock_group *g)
{
	unsigned long count = pcstock_counter_read(&g->memory);
	unsigned long limit = pcstock_counter_max(&g->memory);
	unsigned long margin = count < limit ? limit - count : 0;

	if (g->tree->attr.memsw) {
		count = pcstock_counter_read(&g->memsw);
		limit = pcstock_counter_max(&g->memsw);
		margin = count <= limit ? PCS_MIN(margin, limit - count) : 0;
	}
	return margin;
}

/* Reclaim calls that claim progress, per operation (bounded: ours). */
static bool reclaim_progress(unsigned long reclaimed, unsigned int *rounds)
{
	return reclaimed && (*rounds)++ < PCSTOCK_MAX_PROGRESS_ROUNDS;
}

/*
 * get_order(nr_pages * PAGE_SIZE): the smallest order whose 2^order pages
 * hold @nr_pages (0 for 0 and 1 page).
 */
static unsigned int pages_order(unsigned long nr_pages)
{
	unsigned int order = 0;

	while ((1UL << order) < nr_pages)
		order++;
	return order;
}

/* Room for @need more pages, or (@need = 0) usage at or below max. */
static bool has_room(struct pcstock_group *g, unsigned long need)
{
	if (need)
		return group_margin(g) >= need;
	return pcstock_counter_read(&g->memory) <=
	       pcstock_counter_max(&g->memory);
}

/* An asynchronous victim: poll for its pages (see enum pcstock_oom_result). */
static void oom_wait(struct pcstock_group *g, unsigned long need)
{
	const struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < PCSTOCK_OOM_WAIT_MS && !has_room(g, need); i++)
		nanosleep(&ms, NULL);
}

/*
 * mem_cgroup_oom() and mem_cgroup_out_of_memory(): the OOM event, then
 * under the OOM lock no callback if another thread's OOM made room, else
 * the callback, and the wait for an asynchronous victim with the lock
 * still held, so that other chargers wait instead of killing again.
 * "Room" under the lock is the kernel's: a margin of 1 << order pages,
 * order = get_order(@need * PAGE_SIZE) for a charge of @need pages, and 0
 * for the memory.max writer (@need = 0), whose wait is for usage at or
 * below max.
 * Return: true if the caller should retry.
 */
static bool group_oom(struct pcstock_group *g, unsigned long need,
		      unsigned int *calls)
{
	struct pcstock_tree *t = g->tree;
	int res = PCSTOCK_OOM_NONE;

	if ((*calls)++ >= PCSTOCK_MAX_OOM_CALLS)
		return false;
	group_event(g, PCSTOCK_EVENT_OOM);
	pthread_mutex_lock(&t->oom_lock);
	if (group_margin(g) >= 1UL << pages_order(need)) {
		pthread_mutex_unlock(&t->oom_lock);
		return true;
	}
	if (t->attr.oom) {
		callback_enter();
		res = t->attr.oom(g, t->attr.cb_arg);
		callback_exit();
	}
	switch (res) {
	case PCSTOCK_OOM_NONE:
		break;
	case PCSTOCK_OOM_KILLED:
		group_event(g, PCSTOCK_EVENT_OOM_KILL);
		break;
	case PCSTOCK_OOM_KILLED_ASYNC:
		group_event(g, PCSTOCK_EVENT_OOM_KILL);
		oom_wait(g, need);
		break;
	case PCSTOCK_OOM_WAIT:
		oom_wait(g, need);
		break;
	default:
		pcs_fetch_add(&t->callback_clamped, 1, PCS_RELAXED);
		res = PCSTOCK_OOM_NONE;
	}
	pthread_mutex_unlock(&t->oom_lock);
	return res != PCSTOCK_OOM_NONE;
}

/* Step 17: the first level above its high records the charged pages. */
static void check_high(struct pcstock_group *g, unsigned long charged)
{
	for (struct pcstock_group *pos = g; pos; pos = pos->parent) {
		if (pcstock_counter_read(&pos->memory) >
		    pcstock_counter_high(&pos->memory)) {
			high_record(g, charged);
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
 * @first_over: NULL, or the over-limit group of a first attempt (steps 1-4)
 * the caller already made without memsw (through the per-counter stock,
 * which then failed with its exact fallback, or exactly for the none
 * policy): the flow goes on at step 5, as the kernel's does after its own
 * first attempt.  With memcg7 the caller has made the first cache lookup.
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
	struct pcstock_group *over = g;
	unsigned long charged, reclaimed;

	if (first_over) {
		over = first_over;
		goto failed;
	}
	if (t->m7)
		batch = PCS_MAX((unsigned long)t->attr.batch, nr_pages);
retry:
	/*
	 * Step 1: a hit returns at once, no counter, no high check.  (The
	 * caller made the first memcg7 lookup.)
	 */
	if (t->m7 && looked_up && memcg7_consume(t->m7, g, nr_pages))
		return 0;
	looked_up = true;
	if (charge_counters(g, batch, &over, &charged))
		goto done;
	/* Step 4: never reclaim for the optional surplus. */
	if (batch > nr_pages) {
		batch = nr_pages;
		goto retry;
	}
failed:
	/* Step 5: reclaim's own charges are forced (PF_MEMALLOC). */
	if (in_callback)
		goto force;
	if (flags & PCSTOCK_CHARGE_NOWAIT)
		goto nomem;
	group_event(over, PCSTOCK_EVENT_MAX);		/* step 6 */
	raised_max_event = true;
	reclaimed = call_reclaim(over, nr_pages);	/* step 7 */
	if (group_margin(over) >= nr_pages)		/* step 8 */
		goto retry;
	if (!drained) {					/* step 9 */
		pcstock_group_drain_all(over);
		drained = true;
		goto retry;
	}
	if (flags & PCSTOCK_CHARGE_NORETRY)		/* step 10 */
		goto nomem;
	if (nr_pages <= COSTLY_PAGES &&			/* step 11 */
	    reclaim_progress(reclaimed, &progress_rounds))
		goto retry;
	if (nr_retries--)				/* step 12 */
		goto retry;
	/* Step 14: OOM progress restarts the retries (bounded: ours). */
	if (oom_allowed(nr_pages) && group_oom(over, nr_pages, &oom_calls)) {
		nr_retries = PCSTOCK_MAX_RECLAIM_RETRIES;
		goto retry;
	}
nomem:
	if (!(flags & PCSTOCK_CHARGE_NOFAIL)) {		/* step 15 */
		pcs_fetch_add(&g->refused, 1, PCS_RELAXED);
		return -ENOMEM;
	}
force:
	if (!raised_max_event)				/* step 16 */
		group_event(over, PCSTOCK_EVENT_MAX);
	pcstock_counter_charge(&g->memory, nr_pages);
	if (t->attr.memsw)
		pcstock_counter_charge(&g->memsw, nr_pages);
	return 0;

done:
	/* Step 17, done_restock; the per-counter stocks restocked already. */
	if (t->m7 && batch > nr_pages)
		memcg7_refill(t->m7, g, batch - nr_pages);
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

/* Everything but a hit on an online, stocked, memsw-less group. */
static __attribute__((noinline)) int
group_charge_slow(struct pcstock_group *g, unsigned long nr_pages,
		  unsigned int flags)
{
	struct pcstock_tree *t;

	if (check_pages(g, nr_pages) || (flags & ~CHARGE_FLAGS))
		return -EINVAL;
	/* Acquire pairs with the release in pcstock_group_destroy(). */
	if (!pcs_load(&g->online, PCS_ACQUIRE))
		return -ENOENT;
	if (!nr_pages || group_is_root(g))
		return 0;
	t = g->tree;
	/*
	 * The first attempt (steps 1-4) for the configurations without memsw
	 * is kept out of the slow path's frame.  Per-counter stock: one
	 * stocked attempt (hit, else batch, else exact); none: one exact
	 * attempt.  memcg7: pcstock_group_charge() made the cache lookup.
	 */
	if (t->m7)
		return try_charge_group(g, nr_pages, flags, NULL);
	if (!t->attr.memsw) {
		struct pcstock_counter *fail = NULL;
		unsigned long charged = nr_pages;
		bool ok = t->stocked ?
			pcstock_counter_try_charge_stock(&g->memory, nr_pages,
							 &fail, &charged) :
			pcstock_counter_try_charge(&g->memory, nr_pages, &fail);

		if (!ok)
			return try_charge_group(g, nr_pages, flags,
						memory_owner(fail));
		if (charged)	/* the series: a stock hit skips the high check */
			check_high(g, charged);
		return 0;
	}
	return try_charge_group(g, nr_pages, flags, NULL);
}

/*
 * A hit needs no other check: a key is only set on a non-root group, and a
 * hit takes at most a slot's pages, so nr_pages is in range.  memcg7's
 * consume_stock() comes first too: only non-root groups are cached, at
 * most a batch is taken, and an offline group's slots are drained before
 * (locked) or at (owner) the next lookup after its destroy queued that.
 */
static __attribute__((noinline)) int
group_charge_miss(struct pcstock_group *g, unsigned long nr_pages,
		  unsigned int flags)
{
	struct memcg7 *m7;

	if (!g || (flags & ~CHARGE_FLAGS))
		return group_charge_slow(g, nr_pages, flags);
	m7 = g->tree->m7;
	if (m7 && memcg7_consume(m7, g, nr_pages))
		return 0;
	return group_charge_slow(g, nr_pages, flags);
}

int pcstock_group_charge(struct pcstock_group *g, unsigned long nr_pages,
			 unsigned int flags)
{
	if (g && !(flags & ~CHARGE_FLAGS) &&
	    pcs_stock_take(&g->memory, pcs_load(&g->hit_key, PCS_RELAXED),
			   nr_pages))
		return 0;	/* the series: a stock hit skips the high check */
	return group_charge_miss(g, nr_pages, flags);
}

static __attribute__((noinline)) int
group_uncharge_slow(struct pcstock_group *g, unsigned long nr_pages)
{
	struct pcstock_tree *t;

	if (check_pages(g, nr_pages))
		return -EINVAL;
	if (!nr_pages || group_is_root(g))
		return 0;
	t = g->tree;
	/*
	 * Inside a callback the pages go straight up (callback_enter()):
	 * memcg7's cache is tested here, the per-counter stocks test it in
	 * their uncached path, the one a callback's uncharge takes.
	 */
	if (t->stocked) {
		pcstock_counter_uncharge_stock(&g->memory, nr_pages);
		if (t->attr.memsw)
			pcstock_counter_uncharge_stock(&g->memsw, nr_pages);
	} else if (t->m7 && !in_callback) {
		memcg7_refill(t->m7, g, nr_pages);
	} else {
		group_uncharge_counters(g, nr_pages);
	}
	return 0;
}

int pcstock_group_uncharge(struct pcstock_group *g, unsigned long nr_pages)
{
	unsigned int batch;

	if (!g)
		return -EINVAL;
	batch = pcs_load(&g->memory.stock_refill_batch, PCS_RELAXED);
	if (pcstock_stock_refills_(batch, nr_pages) &&
	    pcs_stock_give(&g->memory, pcs_load(&g->hit_key, PCS_RELAXED),
			   batch, nr_pages))
		return 0;
	return group_uncharge_slow(g, nr_pages);
}

int pcstock_group_uncharge_batch(struct pcstock_group *g,
				 unsigned long nr_pages)
{
	if (check_pages(g, nr_pages))
		return -EINVAL;
	if (nr_pages && !group_is_root(g))
		group_uncharge_counters(g, nr_pages);
	return 0;
}

/* ---- memory.high ------------------------------------------------------- */

/* reclaim_high(): every non-root level from @g up that is above high. */
static unsigned long reclaim_high(struct pcstock_group *g,
				  unsigned long nr_pages)
{
	unsigned long reclaimed = 0;

	for (; g && !group_is_root(g); g = g->parent) {
		if (pcstock_counter_read(&g->memory) <=
		    pcstock_counter_high(&g->memory))
			continue;
		group_event(g, PCSTOCK_EVENT_HIGH);
		reclaimed += call_reclaim(g, nr_pages);
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
				 overage(pcstock_counter_read(&g->memory),
					 pcstock_counter_high(&g->memory)));
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

/* ---- limits ------------------------------------------------------------ */

/*
 * A destroyed group's files are gone (kernfs: -ENODEV on a file still
 * open).  Checked before the value, as kernfs before the handler.
 */
static int check_online(const struct pcstock_group *g)
{
	if (!g || group_is_root(g))
		return -EINVAL;
	return pcs_load(&g->online, PCS_RELAXED) ? 0 : -ENODEV;
}

static int check_limit(const struct pcstock_group *g, unsigned long nr_pages)
{
	int err = check_online(g);

	if (err)
		return err;
	return nr_pages <= PCSTOCK_COUNTER_MAX ? 0 : -EINVAL;
}

/*
 * The limit writers that reclaim: from inside a reclaim or OOM callback
 * they would recurse into the callbacks or wait for the OOM lock the
 * thread holds.
 */
static int check_reclaiming_limit(struct pcstock_group *g,
				  unsigned long nr_pages)
{
	if (in_callback)
		return -EDEADLK;
	return check_limit(g, nr_pages);
}

/*
 * The v2 writers' loop head: pages above @limit, the first time after a
 * drain of the stock (which may be all it takes).
 */
static unsigned long excess_after_drain(struct pcstock_group *g,
					unsigned long limit, bool *drained)
{
	unsigned long usage = pcstock_counter_read(&g->memory);

	if (usage > limit && !*drained) {
		pcstock_group_drain_all(g);
		*drained = true;
		usage = pcstock_counter_read(&g->memory);
	}
	return usage > limit ? usage - limit : 0;
}

int pcstock_group_set_max(struct pcstock_group *g, unsigned long nr_pages)
{
	int nr_reclaims = PCSTOCK_MAX_RECLAIM_RETRIES;
	unsigned int rounds = 0, oom_calls = 0;
	unsigned long excess;
	bool drained = false;
	int err;

	err = check_reclaiming_limit(g, nr_pages);
	if (err)
		return err;
	/*
	 * memory_max_write(): an unconditional xchg.  Fully ordered (see the
	 * counter), so either a racing charge sees the new limit or the
	 * usage read below sees the charge.
	 */
	pcstock_counter_xchg_max(&g->memory, nr_pages);
	while ((excess = excess_after_drain(g, nr_pages, &drained))) {
		if (nr_reclaims) {
			if (!reclaim_progress(call_reclaim(g, excess),
					      &rounds))
				nr_reclaims--;
			continue;
		}
		if (!group_oom(g, 0, &oom_calls))
			break;
	}
	return 0;
}

int pcstock_group_set_high(struct pcstock_group *g, unsigned long nr_pages)
{
	int nr_retries = PCSTOCK_MAX_RECLAIM_RETRIES;
	unsigned int rounds = 0;
	unsigned long excess;
	bool drained = false;
	int err;

	err = check_reclaiming_limit(g, nr_pages);
	if (err)
		return err;
	pcstock_counter_set_high(&g->memory, nr_pages);
	while ((excess = excess_after_drain(g, nr_pages, &drained)))
		if (!reclaim_progress(call_reclaim(g, excess), &rounds) &&
		    !nr_retries--)
			break;
	return 0;
}

/*
 * mem_cgroup_resize_max(): v1, under the limit mutex, memory.max may not
 * exceed memsw.max; -EBUSY once a drain and then reclaim stop helping.
 */
static int resize_max(struct pcstock_group *g, unsigned long nr_pages,
		      bool memsw)
{
	struct pcstock_tree *t = g->tree;
	unsigned int rounds = 0;
	bool drained = false;
	int ret;

	for (;;) {
		pthread_mutex_lock(&t->limit_lock);
		if (t->attr.memsw &&
		    (memsw ? nr_pages < pcstock_counter_max(&g->memory) :
			     nr_pages > pcstock_counter_max(&g->memsw))) {
			pthread_mutex_unlock(&t->limit_lock);
			return -EINVAL;
		}
		ret = pcstock_counter_set_max(memsw ? &g->memsw : &g->memory,
					      nr_pages);
		pthread_mutex_unlock(&t->limit_lock);
		if (!ret)
			return 0;
		if (!drained) {
			pcstock_group_drain_all(g);
			drained = true;
			continue;
		}
		if (!reclaim_progress(call_reclaim(g, 1), &rounds))
			return -EBUSY;
	}
}

int pcstock_group_set_max_strict(struct pcstock_group *g,
				 unsigned long nr_pages)
{
	int err;

	err = check_reclaiming_limit(g, nr_pages);
	if (err)
		return err;
	return resize_max(g, nr_pages, false);
}

int pcstock_group_set_memsw_max(struct pcstock_group *g,
				unsigned long nr_pages)
{
	int err;

	err = check_reclaiming_limit(g, nr_pages);
	if (err)
		return err;
	if (!g->tree->attr.memsw)
		return -EOPNOTSUPP;
	return resize_max(g, nr_pages, true);
}

/*
 * memory.min and memory.low: the online check and the store under the tree
 * lock, so that a setter racing pcstock_group_destroy() either sees the
 * group offline or stores before destroy's reset to 0 (the kernel's
 * css_offline runs after the file's last writer).
 */
static int group_set_protection(struct pcstock_group *g,
				unsigned long nr_pages,
				void (*set)(struct pcstock_counter *,
					    unsigned long))
{
	int err = check_limit(g, nr_pages);

	if (err)
		return err;
	pthread_mutex_lock(&g->tree->lock);
	if (pcs_load(&g->online, PCS_RELAXED))
		set(&g->memory, nr_pages);
	else
		err = -ENODEV;
	pthread_mutex_unlock(&g->tree->lock);
	return err;
}

int pcstock_group_set_min(struct pcstock_group *g, unsigned long nr_pages)
{
	return group_set_protection(g, nr_pages, pcstock_counter_set_min);
}

int pcstock_group_set_low(struct pcstock_group *g, unsigned long nr_pages)
{
	return group_set_protection(g, nr_pages, pcstock_counter_set_low);
}

/*
 * isspace() of the kernel's ctype table (lib/ctype.c, Latin-1): \t \n \v
 * \f \r, ' ' and the no-break space 0xA0; whatever the C locale says.
 */
static bool kernel_isspace(char ch)
{
	unsigned char c = (unsigned char)ch;

	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

int pcs_group_write_limit(struct pcstock_group *g, enum pcstock_limit which,
			  const char *buf, const char *max_keyword)
{
	static int (*const setters[])(struct pcstock_group *, unsigned long) = {
		[PCSTOCK_LIMIT_MAX] = pcstock_group_set_max,
		[PCSTOCK_LIMIT_MAX_STRICT] = pcstock_group_set_max_strict,
		[PCSTOCK_LIMIT_HIGH] = pcstock_group_set_high,
		[PCSTOCK_LIMIT_MIN] = pcstock_group_set_min,
		[PCSTOCK_LIMIT_LOW] = pcstock_group_set_low,
		[PCSTOCK_LIMIT_MEMSW_MAX] = pcstock_group_set_memsw_max,
	};
	unsigned long nr_pages;
	size_t len;
	int err;

	if (!buf || (unsigned int)which >= sizeof(setters) /
						 sizeof(setters[0]))
		return -EINVAL;
	err = check_online(g);
	if (err)
		return err;
	/* strstrip(), then memparse over the whole value, any length */
	while (kernel_isspace(*buf))
		buf++;
	len = strlen(buf);
	while (len && kernel_isspace(buf[len - 1]))
		len--;
	err = pcs_memparse_n(buf, len, max_keyword, &nr_pages);
	if (err)
		return err;
	return setters[which](g, nr_pages);
}

int pcstock_group_write_limit(struct pcstock_group *g,
			      enum pcstock_limit which, const char *buf)
{
	return pcs_group_write_limit(g, which, buf, "max");
}

struct pcstock_counter *pcs_group_counter(struct pcstock_group *g,
					  bool memsw)
{
	if (!memsw)
		return &g->memory;
	return g->tree->attr.memsw ? &g->memsw : NULL;
}

void pcstock_group_calculate_protection(struct pcstock_group *g)
{
	struct pcstock_group *pos;

	if (!g)
		return;
	rcu_lock();
	for_each_in_subtree(pos, g)
		pcstock_counter_calculate_protection(
			&g->memory, &pos->memory,
			g->tree->attr.recursive_protection);
	rcu_unlock();
}

/* ---- reads ------------------------------------------------------------- */

unsigned long pcstock_group_usage(const struct pcstock_group *g)
{
	return g ? pcstock_counter_read(&g->memory) : 0;
}

unsigned long pcstock_group_memsw_usage(const struct pcstock_group *g)
{
	return g && g->tree->attr.memsw ? pcstock_counter_read(&g->memsw) : 0;
}

unsigned long pcstock_group_stock_pages(const struct pcstock_group *g)
{
	struct pcstock_group *root = (struct pcstock_group *)g, *pos;
	unsigned long sum = 0;

	if (!g || g->tree->attr.policy == PCSTOCK_TREE_NONE)
		return 0;
	rcu_lock();
	if (g->tree->m7) {
		sum = memcg7_pages(g->tree->m7, root);
	} else {
		for_each_in_subtree(pos, root)
			sum += pcstock_counter_stock_pages(&pos->memory);
	}
	rcu_unlock();
	return sum;
}

unsigned long pcstock_group_usage_exact(const struct pcstock_group *g)
{
	unsigned long usage = pcstock_group_usage(g);
	unsigned long stock = pcstock_group_stock_pages(g);

	return usage > stock ? usage - stock : 0;
}

unsigned long pcstock_group_events(const struct pcstock_group *g,
				   enum pcstock_event ev)
{
	if (!g || (unsigned int)ev >= PCSTOCK_NR_EVENTS)
		return 0;
	return pcs_load(&g->events[ev], PCS_RELAXED);
}

void pcstock_group_stats(const struct pcstock_group *g,
			 struct pcstock_group_stats *st)
{
	const struct pcstock_counter *m, *s;
	bool memsw;

	if (!st)
		return;
	if (!g) {
		*st = (struct pcstock_group_stats){ 0 };
		return;
	}
	m = &g->memory;
	s = &g->memsw;
	memsw = g->tree->attr.memsw;
	*st = (struct pcstock_group_stats){
		.usage = pcstock_counter_read(m),
		.usage_exact = pcstock_group_usage_exact(g),
		.memsw_usage = memsw ? pcstock_counter_read(s) : 0,
		.max = pcstock_counter_max(m),
		.high = pcstock_counter_high(m),
		.min = pcstock_counter_min(m),
		.low = pcstock_counter_low(m),
		.memsw_max = memsw ? pcstock_counter_max(s) : 0,
		.emin = pcstock_counter_emin(m),
		.elow = pcstock_counter_elow(m),
		.watermark = pcstock_counter_watermark(m),
		.failcnt = pcstock_counter_failcnt(m),
		.memsw_failcnt = memsw ? pcstock_counter_failcnt(s) : 0,
		.refused = pcs_load(&g->refused, PCS_RELAXED),
	};
	for (int ev = 0; ev < PCSTOCK_NR_EVENTS; ev++) {
		st->events[ev] = pcs_load(&g->events[ev], PCS_RELAXED);
		st->events_local[ev] = pcs_load(&g->events_local[ev],
						PCS_RELAXED);
	}
	pcstock_counter_stock_stats(m, &st->stock);
}
