/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * group.h - the group layer's private header: the group and tree structs,
 * the small helpers its files share, and what it shares with the cgroup
 * file interface (cgroupfs.c).
 *
 * The layer's rooms: group.c (groups: create, destroy, lookup, walks,
 * path), tree.c (trees, references, RCU frees), charge.c (the
 * try_charge_memcg() flow and uncharges), reclaim.c (events, callbacks,
 * reclaim calls, drain_all, OOM), high.c (over-high records, memory.high),
 * limits.c (limit writers) and stats.c (readers).
 */
#ifndef PCSTOCK_GROUP_H
#define PCSTOCK_GROUP_H

#include <pthread.h>
#include <stdbool.h>

#include <pcstock/hierarchy.h>

#include "atomic.h"
#include "domain.h"
#include "internal.h"
#include "names.h"
#include "rcu.h"


struct pcs_policy_ops;

struct pcstock_group {
	struct pcstock_counter memory;
	struct pcstock_counter memsw;
	struct pcstock_tree *tree;
	struct pcstock_group *parent;
	/*
	 * memory's stock key while a hit on it is the whole charge (a policy
	 * that stocks at the counter, no memsw, online), else 0: the group
	 * hit paths' one check.  Published by the policy (policy.h), which
	 * may also publish a key of its own that those paths never match
	 * (plain's, policy_plain.h); cleared when the group goes offline.
	 */
	_Atomic unsigned long long hit_key;
	_Atomic(struct pcstock_group *) children;
	_Atomic(struct pcstock_group *) sibling;
	struct pcstock_group *prev;	/* previous sibling (tree lock) */
	void *data;			/* the creator's */
	atomic_ulong events[PCSTOCK_NR_EVENTS];
	atomic_ulong events_local[PCSTOCK_NR_EVENTS];
	/*
	 * The policy's per-group state, @group_state_size bytes of this
	 * group's allocation (NULL when the policy declares none); the core
	 * never looks inside (policy.h's pcs_group_state()).
	 */
	void *policy_state;
	atomic_ulong refused;		/* charges that returned -ENOMEM */
	struct rcu_head rcu;
	struct pcstock_group *reap_next;	/* see pcstock_tree_destroy() */
	/*
	 * What a lookup touches, together: with 100,000 siblings each line
	 * is a cache miss (the name follows in the same allocation).
	 */
	_Alignas(PCSTOCK_CACHELINE) struct name_key key; /* name index */
	/*
	 * The group's number in its tree, 0 for the root: its children's
	 * name-index seed, so that the index never depends on an address.
	 */
	uint64_t serial;
	atomic_long refs;
	atomic_bool online;
	char name[];
};

struct pcstock_tree {
	struct pcstock_domain *domain;
	struct pcstock_tree_attr attr;
	struct pcstock_group *root;
	const struct pcs_policy_ops *ops;	/* the policy (policy.h) */
	/* The flows' copies of ops' hot members, resolved (policy.h). */
	int (*miss)(struct pcstock_group *g, unsigned long nr_pages,
			   unsigned int flags, struct pcstock_tree *t);
	/* Where an uncharge the inline stock did not take goes (charge.c). */
	int (*unmiss)(struct pcstock_group *g, unsigned long nr_pages,
		      struct pcstock_tree *t);
	bool (*consume)(struct pcstock_tree *t, struct pcstock_group *g,
			unsigned long nr_pages);
	bool (*counter_try)(struct pcstock_counter *c, unsigned long nr_pages,
			    struct pcstock_counter **fail,
			    unsigned long *charged);
	void (*uncharge)(struct pcstock_group *g, unsigned long nr_pages);
	void *policy_state;	/* the policy's per-tree state (@tree_init's) */
	pthread_mutex_t lock;		/* topology writers */
	pthread_mutex_t limit_lock;	/* the kernel's memcg_max_mutex */
	pthread_mutex_t drain_lock;	/* a policy's drain_all serialisation */
	pthread_mutex_t oom_lock;	/* the kernel's oom_lock, per tree */
	struct name_index names;	/* children by name, under lock */
	atomic_long nr_groups;
	atomic_ulong next_serial;	/* the last serial a group was given */
	/* While the tree is destroyed: groups freed by the destroyer. */
	atomic_bool dying;
	_Atomic(struct pcstock_group *) reaped;
	atomic_ulong drain_all;
	atomic_ulong drain_all_busy;
	atomic_ulong callback_clamped;
};

static inline bool group_is_root(const struct pcstock_group *g)
{
	return !g->parent;
}

/* inc-not-zero, for groups found under RCU. */
static inline bool group_tryget(struct pcstock_group *g)
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

static inline bool in_subtree(const struct pcstock_group *g,
			      const struct pcstock_group *root)
{
	for (; g; g = g->parent)
		if (g == root)
			return true;
	return false;
}

/* Pre-order successor of @pos within @root's subtree, under RCU. */
static inline struct pcstock_group *next_pre(struct pcstock_group *pos,
					     struct pcstock_group *root)
{
	/* Acquires pair with the release stores in link_child(). */
	struct pcstock_group *next;

	next = pcs_load(&pos->children, PCS_ORDER(WALK_CHILD, PCS_ACQUIRE));

	if (next)
		return next;
	while (pos != root) {
		next = pcs_load(&pos->sibling,
				PCS_ORDER(WALK_SIBLING, PCS_ACQUIRE));
		if (next)
			return next;
		pos = pos->parent;
	}
	return NULL;
}

#define for_each_in_subtree(pos, root) \
	for ((pos) = (root); (pos); (pos) = next_pre((pos), (root)))

/* Reclaim calls that claim progress, per operation (bounded: ours). */
static inline bool reclaim_progress(unsigned long reclaimed,
				    unsigned int *rounds)
{
	return reclaimed && (*rounds)++ < PCSTOCK_MAX_PROGRESS_ROUNDS;
}

/* tree.c */
void pcs_group_init(struct pcstock_group *g, struct pcstock_tree *t,
		    struct pcstock_group *parent);
/*
 * A zeroed group named @name for @t, with the per-group state @t's policy
 * declares (policy.h) in the same allocation; NULL if out of memory.
 */
struct pcstock_group *pcs_group_alloc(const struct pcstock_tree *t,
				      const char *name);
void pcs_group_free(struct pcstock_group *g);

/* charge.c */
/* memcg_uncharge(): memory and (v1) memsw, straight to the counters. */
void pcs_group_uncharge_counters(struct pcstock_group *g,
				 unsigned long nr_pages);
/* Give @t the policy @ops, and the flows their copies of it. */
void pcs_tree_set_policy(struct pcstock_tree *t,
			 const struct pcs_policy_ops *ops);

/* reclaim.c (pcs_in_callback: internal.h) */
void pcs_group_event(struct pcstock_group *g, enum pcstock_event ev);
unsigned long pcs_call_reclaim(struct pcstock_group *g,
			       unsigned long nr_pages);
unsigned long pcs_group_margin(struct pcstock_group *g);
bool pcs_group_oom(struct pcstock_group *g, unsigned long need,
		   unsigned int *calls);

/* high.c */
void pcs_high_record(struct pcstock_group *g, unsigned long nr_pages);
void pcs_high_recs_drop(struct pcstock_tree *t);

/* limits.c */
/* @g's memory counter, or its memsw one (@memsw; NULL without memsw). */
struct pcstock_counter *pcs_group_counter(struct pcstock_group *g,
					  bool memsw);

/*
 * pcstock_group_write_limit() with the kernel's "no limit" keyword of the
 * interface: "max" for cgroup v2, "-1" for v1.
 */
int pcs_group_write_limit(struct pcstock_group *g, enum pcstock_limit which,
			  const char *buf, const char *max_keyword);

#endif /* PCSTOCK_GROUP_H */
