// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * group.c - the stock policies through the group API (hierarchy.h), the
 * code path an accounting daemon uses: none, memcg7, v4, default, exact.
 *
 * Shape mapping.  The root group's counter is charged by every descendant
 * (as the root memcg's page_counter), so it is node 0 of the shape: a tree
 * of depth D is the root, D - 2 groups in a chain and the leaves.  Depth 1
 * cannot be built (leaves sit under the root, which is charged too): it
 * costs as depth 2.  Above BUCKET leaves, leaves are spread over bucket
 * groups of BUCKET children each (one more level), because creating a
 * group scans its siblings' names: 100k siblings would take O(n^2).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "strategy.h"

#define BUCKET 1024U

struct grp_tree {
	struct tree_shape shape;
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group **node;	/* shape nodes; [0] = root if nr_anc */
	struct pcstock_group **bucket;
	unsigned int nr_buckets;
	unsigned int created;		/* node[] entries holding a reference */
	enum pcstock_tree_policy policy;
	unsigned int batch;
	atomic_ulong reclaims;		/* reclaim callback calls */
};

static void drop(struct pcstock_group *g)
{
	pcstock_group_destroy(g);
	pcstock_group_put(g);
}

/* Leaves, buckets, then the chain bottom-up; the root goes with the tree. */
static void grp_destroy(void *inst)
{
	struct grp_tree *t = inst;
	unsigned int i;

	for (i = t->created; i-- > t->shape.nr_anc;)
		drop(t->node[i]);
	while (t->nr_buckets)
		drop(t->bucket[--t->nr_buckets]);
	for (i = t->created < t->shape.nr_anc ? t->created : t->shape.nr_anc;
	     i-- > 1;)
		drop(t->node[i]);
	pcstock_tree_destroy(t->t);
	pcstock_domain_destroy(t->d);
	free(t->bucket);
	free(t->node);
	free(t);
}

static int make_group(struct pcstock_group *parent, char kind,
		      unsigned int idx, struct pcstock_group **out)
{
	char name[16];

	snprintf(name, sizeof(name), "%c%u", kind, idx);
	return pcstock_group_create(parent, name, out);
}

static int grp_build(struct grp_tree *t, const struct tree_spec *spec)
{
	struct pcstock_group *top = pcstock_tree_root(t->t), *parent;
	unsigned int i, l;
	int ret;

	if (t->shape.nr_anc)
		t->node[t->created++] = top;
	for (i = 1; i < t->shape.nr_anc; i++) {
		ret = make_group(top, 'a', i, &t->node[i]);
		if (ret)
			return ret;
		top = t->node[t->created++];
	}
	if (spec->nr_leaves > BUCKET) {
		t->bucket = calloc((spec->nr_leaves + BUCKET - 1) / BUCKET,
				   sizeof(*t->bucket));
		if (!t->bucket)
			return -ENOMEM;
	}
	for (l = 0; l < spec->nr_leaves; l++) {
		parent = top;
		if (t->bucket) {
			if (l % BUCKET == 0) {
				ret = make_group(top, 'b', l / BUCKET,
						 &t->bucket[t->nr_buckets]);
				if (ret)
					return ret;
				t->nr_buckets++;
			}
			parent = t->bucket[t->nr_buckets - 1];
		}
		ret = make_group(parent, 'l', l, &t->node[t->shape.nr_anc + l]);
		if (ret)
			return ret;
		t->created++;
		if (spec->leaf_max) {
			ret = pcstock_group_set_max(t->node[t->created - 1],
						    spec->leaf_max);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Counts the calls and reclaims nothing: what a NULL callback does. */
static long grp_reclaim(struct pcstock_group *g, unsigned long nr_pages,
			void *arg)
{
	struct grp_tree *t = arg;

	atomic_fetch_add_explicit(&t->reclaims, 1, memory_order_relaxed);
	return 0;
}

static int grp_create(const struct tree_spec *spec, void **inst,
		      enum pcstock_tree_policy policy)
{
	struct pcstock_domain_attr dattr = {
		.nr_cpus = spec->mode == PCSTOCK_CPU_RSEQ ? 0 : spec->nr_cpus,
		.mode = spec->mode,
	};
	struct pcstock_tree_attr tattr = {
		.policy = policy,
		.batch = spec->batch,
		.reclaim = grp_reclaim,
	};
	struct grp_tree *t = zalloc_lines(sizeof(*t));
	int ret;

	if (!t)
		return -ENOMEM;
	tattr.cb_arg = t;
	shape_init(&t->shape, spec);
	t->policy = policy;
	t->batch = spec->batch;
	t->node = calloc(t->shape.nr_nodes, sizeof(*t->node));
	ret = t->node ? pcstock_domain_create(&dattr, &t->d) : -ENOMEM;
	if (!ret)
		ret = pcstock_tree_create(t->d, &tattr, &t->t);
	if (!ret)
		ret = grp_build(t, spec);
	if (ret) {
		if (t->t)
			grp_destroy(t);
		else {
			pcstock_domain_destroy(t->d);
			free(t->node);
			free(t);
		}
		return ret;
	}
	*inst = t;
	return 0;
}

static int grp_create_none(const struct tree_spec *spec, void **inst)
{
	return grp_create(spec, inst, PCSTOCK_TREE_NONE);
}

static int grp_create_memcg7(const struct tree_spec *spec, void **inst)
{
	return grp_create(spec, inst, PCSTOCK_TREE_MEMCG7);
}

static int grp_create_v4(const struct tree_spec *spec, void **inst)
{
	return grp_create(spec, inst, PCSTOCK_TREE_V4);
}

static int grp_create_default(const struct tree_spec *spec, void **inst)
{
	return grp_create(spec, inst, PCSTOCK_TREE_DEFAULT);
}

static int grp_create_exact(const struct tree_spec *spec, void **inst)
{
	return grp_create(spec, inst, PCSTOCK_TREE_EXACT);
}

static int grp_enter(void *inst, unsigned int cpu)
{
	struct grp_tree *t = inst;

	return domain_enter(t->d, cpu);
}

static void grp_exit(void *inst)
{
	struct grp_tree *t = inst;

	domain_exit(t->d);
}

static bool grp_charge(void *inst, unsigned int thread, unsigned int leaf,
		       unsigned long nr)
{
	struct grp_tree *t = inst;

	return !pcstock_group_charge(t->node[t->shape.nr_anc + leaf], nr, 0);
}

static void grp_uncharge(void *inst, unsigned int thread, unsigned int leaf,
			 unsigned long nr)
{
	struct grp_tree *t = inst;

	pcstock_group_uncharge(t->node[t->shape.nr_anc + leaf], nr);
}

static void grp_uncharge_batch(void *inst, unsigned int thread,
			       unsigned int leaf, unsigned long nr)
{
	struct grp_tree *t = inst;

	pcstock_group_uncharge_batch(t->node[t->shape.nr_anc + leaf], nr);
}

static void grp_idle(void *inst)
{
	struct grp_tree *t = inst;

	pcstock_cpu_idle(t->d);
}

static void grp_drain_all(void *inst)
{
	struct grp_tree *t = inst;

	pcstock_group_drain_all(pcstock_tree_root(t->t));
}

static unsigned long grp_stock_pages(void *inst)
{
	struct grp_tree *t = inst;

	return pcstock_group_stock_pages(pcstock_tree_root(t->t));
}

/* Whether @g or an ancestor has a max below @room. */
static bool max_below(struct pcstock_group *g, unsigned long room)
{
	for (; g; g = pcstock_group_parent(g))
		if (pcstock_counter_max(pcstock_group_memory(g)) < room)
			return true;
	return false;
}

struct bound_arg {
	unsigned long sum;
	bool exact;
};

/*
 * exact: a counter under a max below what its slots can hide finds its
 * margin below that on every miss, so it stocks nothing from its first
 * miss on (and nothing before it): its bound is 0 there, else
 * nr_cpus × batch as default's.  (Between that and twice it, it depends
 * on the counter's history: the bench counts the larger.)
 */
static int bound_one(struct pcstock_group *g, void *arg)
{
	struct bound_arg *a = arg;
	unsigned long b = pcstock_counter_stock_bound(pcstock_group_memory(g));

	if (!a->exact || !max_below(g, b))
		a->sum += b;
	return 0;
}

/* memcg7: 7 slots per CPU for the whole tree; else per counter. */
static unsigned long grp_stock_bound(void *inst)
{
	struct grp_tree *t = inst;
	struct bound_arg a = { .exact = t->policy == PCSTOCK_TREE_EXACT };

	if (t->policy == PCSTOCK_TREE_MEMCG7)
		return 7UL * pcstock_domain_nr_cpus(t->d) * t->batch;
	pcstock_group_walk(pcstock_tree_root(t->t), bound_one, &a);
	return a.sum;
}

static long grp_usage(void *inst, unsigned int node)
{
	struct grp_tree *t = inst;

	return (long)pcstock_group_usage(t->node[node]);
}

static long grp_node_stock(void *inst, unsigned int node)
{
	struct grp_tree *t = inst;

	return (long)pcstock_group_stock_pages(t->node[node]);
}

static int grp_check(void *inst, const long *held, char *why, size_t len)
{
	struct grp_tree *t = inst;

	return shape_check(&t->shape, inst, grp_usage, grp_node_stock, held,
			   why, len);
}

static int max_events_one(struct pcstock_group *g, void *arg)
{
	struct pcstock_group_stats st;

	pcstock_group_stats(g, &st);
	*(unsigned long *)arg += st.events_local[PCSTOCK_EVENT_MAX];
	return 0;
}

/* The root keeps no hierarchical events (as cgroup2): sum local ones. */
static void grp_pressure(void *inst, unsigned long *reclaims,
			 unsigned long *max_events)
{
	struct grp_tree *t = inst;

	*reclaims = atomic_load_explicit(&t->reclaims, memory_order_relaxed);
	*max_events = 0;
	pcstock_group_walk(pcstock_tree_root(t->t), max_events_one,
			   max_events);
}

static void grp_counters(void *inst,
			 void (*fn)(const struct pcstock_counter *c,
				    const char *label, void *arg),
			 void *arg)
{
	struct grp_tree *t = inst;
	char label[24];
	unsigned int i;

	for (i = 0; i < t->created; i++) {
		if (i < t->shape.nr_anc)
			snprintf(label, sizeof(label), "level %u", i);
		else
			snprintf(label, sizeof(label), "leaf %u",
				 i - t->shape.nr_anc);
		fn(pcstock_group_memory(t->node[i]), label, arg);
	}
}

#define GRP_STRATEGY(sname, swhat, sflags, screate)                          \
	{                                                                    \
		.name = sname, .what = swhat, .flags = sflags,               \
		.create = screate, .destroy = grp_destroy,                   \
		.enter = grp_enter, .exit = grp_exit,                        \
		.charge = grp_charge, .uncharge = grp_uncharge,              \
		.uncharge_batch = grp_uncharge_batch, .idle = grp_idle,      \
		.drain_all = grp_drain_all,                                  \
		.stock_pages = grp_stock_pages,                              \
		.stock_bound = grp_stock_bound, .check = grp_check,          \
		.pressure = grp_pressure, .counters = grp_counters,          \
	}

const struct strategy strat_none = GRP_STRATEGY("none",
	"group API, no stock: every charge walks the counters",
	STRAT_LIMITS | STRAT_DOMAIN | STRAT_PRESSURE, grp_create_none);
const struct strategy strat_memcg7 = GRP_STRATEGY("memcg7",
	"group API, pre-series memcg stock: 7 slots per CPU",
	STRAT_LIMITS | STRAT_STOCK | STRAT_DOMAIN | STRAT_BOUNDED |
	STRAT_PRESSURE, grp_create_memcg7);
const struct strategy strat_v4 = GRP_STRATEGY("v4",
	"group API, per-counter stock as posted (v4)",
	STRAT_LIMITS | STRAT_STOCK | STRAT_DOMAIN | STRAT_PRESSURE,
	grp_create_v4);
const struct strategy strat_default = GRP_STRATEGY("default",
	"group API, per-counter stock with the review fixes",
	STRAT_LIMITS | STRAT_STOCK | STRAT_DOMAIN | STRAT_BOUNDED |
	STRAT_PRESSURE, grp_create_default);
const struct strategy strat_exact = GRP_STRATEGY("exact",
	"group API, per-counter stock, exact at the limit (no stock near max)",
	STRAT_LIMITS | STRAT_STOCK | STRAT_DOMAIN | STRAT_BOUNDED |
	STRAT_PRESSURE, grp_create_exact);
