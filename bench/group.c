// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * group.c - the stock policies through the group API (hierarchy.h), the
 * code path an accounting daemon uses: one strategy per registered policy
 * (pcstock_tree_policy_info()), made at startup by grp_strategies(), named
 * as the policy, so a newly registered policy is in the matrix with no
 * edit here.
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
	struct pcstock_domain *d;	/* first: domain_enter() */
	struct tree_shape shape;
	struct pcstock_tree *t;
	struct pcstock_group **node;	/* shape nodes; [0] = root if nr_anc */
	struct pcstock_group **bucket;
	unsigned int nr_buckets;
	unsigned int created;		/* node[] entries holding a reference */
	atomic_ulong reclaims;		/* reclaim callback calls */
};
_Static_assert(offsetof(struct grp_tree, d) == 0, "opens with its domain");

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

/* The policies that ran on RSEQ CPUs for another mode (grp_create()). */
static atomic_bool grp_on_rseq[PCSTOCK_TREE_NR_POLICIES];

bool grp_ran_on_rseq(const char *name)
{
	enum pcstock_tree_policy p;

	return !pcstock_tree_policy_parse(name, &p) &&
	       atomic_load(&grp_on_rseq[p]);
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
	t->node = calloc(t->shape.nr_nodes, sizeof(*t->node));
	ret = t->node ? pcstock_domain_create(&dattr, &t->d) : -ENOMEM;
	if (!ret)
		ret = pcstock_tree_create(t->d, &tattr, &t->t);
	/*
	 * A policy that runs on RSEQ CPUs only (-EOPNOTSUPP on the others:
	 * plain) runs on them whatever the mode, noted in the tables.
	 */
	if (ret == -EOPNOTSUPP && spec->mode != PCSTOCK_CPU_RSEQ) {
		pcstock_domain_destroy(t->d);
		t->d = NULL;
		ret = pcstock_domain_create(NULL, &t->d);
		if (!ret)
			ret = pcstock_tree_create(t->d, &tattr, &t->t);
		if (!ret)
			atomic_store(&grp_on_rseq[policy], true);
	}
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

static void grp_uncharge_direct(void *inst, unsigned int thread,
			       unsigned int leaf, unsigned long nr)
{
	struct grp_tree *t = inst;

	pcstock_group_uncharge_direct(t->node[t->shape.nr_anc + leaf], nr);
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

/* The policy answers for itself: memcg7's slots, exact's exact state. */
static unsigned long grp_stock_bound(void *inst)
{
	struct grp_tree *t = inst;

	return pcstock_group_stock_bound(pcstock_tree_root(t->t));
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

/*
 * The create hook takes no argument saying which policy (main.c and
 * bench/lines/ call it as every strategy's), so each policy gets a
 * trampoline of its own, indexed by its enum value.
 */
#define GRP_CREATE(i)                                                        \
	static int grp_create_##i(const struct tree_spec *spec, void **inst) \
	{                                                                    \
		return grp_create(spec, inst, (enum pcstock_tree_policy)(i)); \
	}
GRP_CREATE(0) GRP_CREATE(1) GRP_CREATE(2) GRP_CREATE(3)
GRP_CREATE(4) GRP_CREATE(5) GRP_CREATE(6) GRP_CREATE(7)
GRP_CREATE(8) GRP_CREATE(9) GRP_CREATE(10) GRP_CREATE(11)
GRP_CREATE(12) GRP_CREATE(13) GRP_CREATE(14) GRP_CREATE(15)

static int (*const grp_creators[])(const struct tree_spec *, void **) = {
	grp_create_0, grp_create_1, grp_create_2, grp_create_3,
	grp_create_4, grp_create_5, grp_create_6, grp_create_7,
	grp_create_8, grp_create_9, grp_create_10, grp_create_11,
	grp_create_12, grp_create_13, grp_create_14, grp_create_15,
};

_Static_assert(PCSTOCK_TREE_NR_POLICIES <=
		       sizeof(grp_creators) / sizeof(grp_creators[0]),
	       "more policies than GRP_CREATE trampolines: add some");

/*
 * Whether a policy's stock stays within the bound stock_bound() reports:
 * a policy that caps its slots (not the series' V4 kind, which
 * <pcstock/stock.h> documents to exceed it).
 */
static bool policy_bounded(const struct pcstock_policy_info *in)
{
	return in->stocks && in->caps_slots;
}

/* What --list says of a policy, from its properties. */
static void policy_what(const struct pcstock_policy_info *in, char *buf,
			size_t len)
{
	if (!in->stocks) {
		snprintf(buf, len, "group API, no stock: every charge walks "
			 "the counters");
		return;
	}
	snprintf(buf, len, "group API, %s%s%s%s",
		 in->per_counter ? "per-counter stock" :
		 "per-CPU stock of its own",
		 in->group_batch ? ", batched per group" : "",
		 in->uncharges_refill ? ", uncharges refill" :
		 ", uncharges to the counters",
		 in->exact_at_limit ? ", exact at the limit" : "");
}

static struct strategy grp_strats[PCSTOCK_TREE_NR_POLICIES];
static char grp_what[PCSTOCK_TREE_NR_POLICIES][128];

/**
 * grp_strategies() - one strategy per registered policy
 * @out: receives pointers to them, in the registry's order
 * @room: entries @out has
 *
 * Each strategy is named as its policy and has the flags its properties
 * give.  Not thread-safe: strategy.c calls it once, at startup.
 *
 * Return: the number written.
 */
unsigned int grp_strategies(const struct strategy **out, unsigned int room)
{
	struct pcstock_policy_info in;
	unsigned int i, n = 0;
	struct strategy *s;

	for (i = 0; i < PCSTOCK_TREE_NR_POLICIES && n < room; i++) {
		if (pcstock_tree_policy_info((enum pcstock_tree_policy)i,
					     &in)) {
			fprintf(stderr, "pcstock-bench: policy %u has no "
				"properties: left out\n", i);
			continue;
		}
		s = &grp_strats[i];
		policy_what(&in, grp_what[i], sizeof(grp_what[i]));
		*s = (struct strategy){
			.name = in.name, .what = grp_what[i],
			.flags = STRAT_LIMITS | STRAT_DOMAIN | STRAT_PRESSURE |
				 STRAT_POLICY |
				 (in.stocks ? STRAT_STOCK : 0) |
				 (policy_bounded(&in) ? STRAT_BOUNDED : 0),
			.policy = (enum pcstock_tree_policy)i,
			.create = grp_creators[i], .destroy = grp_destroy,
			.enter = domain_enter, .exit = domain_exit,
			.charge = grp_charge, .uncharge = grp_uncharge,
			.uncharge_direct = grp_uncharge_direct,
			.idle = grp_idle, .drain_all = grp_drain_all,
			.stock_pages = grp_stock_pages,
			.stock_bound = grp_stock_bound, .check = grp_check,
			.pressure = grp_pressure, .counters = grp_counters,
		};
		out[n++] = s;
	}
	return n;
}
