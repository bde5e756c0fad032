/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * strategy.h - helpers shared by the strategy adapters (strategy.c,
 * group.c).
 */
#ifndef BENCH_STRATEGY_H
#define BENCH_STRATEGY_H

#include <limits.h>
#include <stddef.h>

#include "bench.h"

/* Node numbering of a tree_spec: ancestors 0..nr_anc-1, then leaves. */
struct tree_shape {
	unsigned int nr_anc;
	unsigned int nr_leaves;
	unsigned int nr_nodes;
};

void shape_init(struct tree_shape *s, const struct tree_spec *spec);
int shape_parent(const struct tree_shape *s, unsigned int node);
int shape_check(const struct tree_shape *s, void *inst,
		long (*usage)(void *, unsigned int),
		long (*stock)(void *, unsigned int), const long *held,
		char *why, size_t len);

/*
 * The ctr-* strategies' instance (strategy.c).  Like every instance of a
 * strategy over a domain (group.c's too), it opens with its domain, so
 * that one domain_enter() and domain_exit() serve as all their enter and
 * exit.
 */
struct ctr_tree {
	struct pcstock_domain *d;	/* first: domain_enter() */
	struct tree_shape shape;
	struct pcstock_counter *node;
	enum pcstock_cpu_mode mode;
	bool stocked;
};
_Static_assert(offsetof(struct ctr_tree, d) == 0, "opens with its domain");

#define CTR_DRAIN_ALL UINT_MAX
void ctr_drain_under(struct ctr_tree *t, unsigned int top);

/* ctr-inline's adapters, built with PCSTOCK_INLINE (inline.c). */
bool ctr_inline_charge(void *inst, unsigned int thread, unsigned int leaf,
		       unsigned long nr);
void ctr_inline_uncharge(void *inst, unsigned int thread, unsigned int leaf,
			 unsigned long nr);

long held_sum(const long *held, unsigned int n);
void *zalloc_lines(size_t size);
int domain_enter(void *inst, unsigned int cpu);
void domain_exit(void *inst);
void ctr_destroy(void *inst);

extern const struct strategy strat_floor, strat_local, strat_mutex;
extern const struct strategy strat_ctr_none, strat_ctr_v4, strat_ctr_default;
extern const struct strategy strat_ctr_inline;
/* group.c: one strategy per registered policy */
unsigned int grp_strategies(const struct strategy **out, unsigned int room);
/*
 * Whether the group strategy of policy @name ran on RSEQ CPUs because its
 * policy refused the mode asked (-EOPNOTSUPP: one that runs on RSEQ CPUs
 * only); false for any other name.
 */
bool grp_ran_on_rseq(const char *name);

#endif /* BENCH_STRATEGY_H */
