// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_drain.c - group-drain-*: a CPU's hits and refills against remote
 * drains, for every registered policy with a stock.
 *
 * Per schedule a fresh tree of the policy (batch 4) on two simulated CPUs
 * with one group, b.  Threads 0 and 1 share CPU 0 and charge and uncharge
 * b (hits from CPU 0's stock, misses that refill it, uncharges into it),
 * so each preempts the other between any two of its steps; thread 2, on
 * CPU 1, drains b's subtree three times between charges of its own.
 *
 * For the per-counter policies this is the slot's RMWs against the drain's
 * exchange.  For plain (src/policy_plain.c) it is what the policy rests
 * on: the explorer runs the library's model of its restartable sequences
 * (src/policy_plain.h), in which a sequence whose CPU started another
 * sequence (the other thread of CPU 0 ran) or saw a membarrier between
 * its load and its commit does not store but restarts; a drain closes the
 * slots, runs the modelled membarrier and then takes the pages.  A drain
 * that skipped the membarrier would let a sequence that loaded the slot
 * before the drain store its stale value after the drain took the pages:
 * pages counted twice, usage below held + stock
 * (tests/mutants/plain_no_membarrier.patch).
 *
 * Checks, every step: usage(b) - held - stock(b) within the pages in
 * flight (and never below 0 for a per-counter stock, whose usage is the
 * first to gain and the last to lose), stock(b) at most its bound (for a
 * policy that caps its slots), no usage underflow; at the end, usage ==
 * held + stock, and after a drain_all the stock is 0.
 */
#include <stdio.h>
#include <stdlib.h>

#include <pcstock/cpu.h>
#include <pcstock/hierarchy.h>

#include <urcu-bp.h>

#include "explore.h"

#define NR_CPUS 2
#define NR_THREADS 3
#define BATCH 4
#define ROUNDS 3
/* Pages an operation may have in flight: a batch, beyond the request. */
#define FLIGHT (2 * BATCH)

static const int cpu_of[NR_THREADS] = { 0, 0, 1 };

static struct {
	struct pcstock_domain *d;
	struct pcstock_tree *reg_tree;	/* urcu-bp registration only */
	struct pcstock_tree *t;
	struct pcstock_group *b;
	unsigned long held[NR_THREADS];
	unsigned long inflight[NR_THREADS];
	char msg[128];
} S;

static int drain_init(const struct explore_scenario *s)
{
	struct pcstock_domain_attr attr = { .nr_cpus = NR_CPUS,
					    .mode = PCSTOCK_CPU_SIM };
	int err;

	(void)s;
	err = pcstock_domain_create(&attr, &S.d);
	return err ? err : pcstock_tree_create(S.d, NULL, &S.reg_tree);
}

static void drain_thread_init(const struct explore_scenario *s,
			      unsigned int t)
{
	struct pcstock_group *root;

	(void)s;
	pcstock_cpu_enter(S.d, (unsigned int)cpu_of[t]);
	/* A read-side section registers this thread with urcu-bp. */
	if (!pcstock_group_lookup(pcstock_tree_root(S.reg_tree), "", &root))
		pcstock_group_put(root);
}

static void drain_setup(const struct explore_scenario *s)
{
	struct pcstock_tree_attr attr = { .policy = s->policy, .batch = BATCH };

	if (pcstock_tree_create(S.d, &attr, &S.t) ||
	    pcstock_group_create(pcstock_tree_root(S.t), "b", &S.b))
		abort();
	explore_label(pcstock_group_memory(S.b), sizeof(struct pcstock_counter),
		      "b.mem", explore_counter_fields);
	for (int t = 0; t < NR_THREADS; t++)
		S.held[t] = S.inflight[t] = 0;
	pcstock_warn_reset();
}

static unsigned long held(void)
{
	return S.held[0] + S.held[1] + S.held[2];
}

static const char *drain_check_step(const struct explore_scenario *s)
{
	unsigned long stock = pcstock_group_stock_pages(S.b);
	long inflight = (long)(S.inflight[0] + S.inflight[1] +
			       S.inflight[2]);
	long gap = (long)pcstock_group_usage(S.b) - (long)held() -
		   (long)stock;

	if (pcstock_warn_count())
		return "usage underflow (warn_count != 0)";
	/* V4's racing refills grow a slot past its batch (caps_slots). */
	if (explore_caps_slots(&s->info) &&
	    stock > pcstock_group_stock_bound(S.b))
		return "b: stock above its bound";
	if (gap < (s->info.per_counter ? 0 : -inflight) || gap > inflight) {
		snprintf(S.msg, sizeof(S.msg),
			 "b: usage - held - stock = %ld, outside [%ld, %ld in "
			 "flight]", gap, s->info.per_counter ? 0 : -inflight,
			 inflight);
		return S.msg;
	}
	return NULL;
}

static void charge(unsigned int t, unsigned long n)
{
	S.inflight[t] = n + FLIGHT;
	if (!pcstock_group_charge(S.b, n, 0))
		S.held[t] += n;
	S.inflight[t] = 0;
}

static void uncharge(unsigned int t, unsigned long n)
{
	if (S.held[t] < n)
		return;
	S.held[t] -= n;
	S.inflight[t] = n + FLIGHT;
	pcstock_group_uncharge(S.b, n);
	S.inflight[t] = 0;
}

static void drain_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	for (int i = 0; i < ROUNDS; i++) {
		if (t == 2) {
			S.inflight[t] = FLIGHT;
			pcstock_group_drain_all(S.b);
			S.inflight[t] = 0;
			charge(t, 1);
			uncharge(t, 1);
			continue;
		}
		charge(t, 1 + t);
		charge(t, 1);
		uncharge(t, 1 + t);
	}
}

static const char *drain_check_end(const struct explore_scenario *s)
{
	const char *msg = drain_check_step(s);

	if (msg)
		return msg;
	if (pcstock_group_usage(S.b) !=
	    held() + pcstock_group_stock_pages(S.b))
		return "at rest: usage != held + stock";
	pcstock_group_drain_all(pcstock_tree_root(S.t));
	if (pcstock_group_stock_pages(S.b) ||
	    pcstock_group_usage(S.b) != held())
		return "after drain_all: stock left, or usage != held";
	return NULL;
}

static void drain_teardown(const struct explore_scenario *s)
{
	(void)s;
	pcstock_group_uncharge(S.b, held());
	pcstock_group_destroy(S.b);
	pcstock_group_put(S.b);
	if (pcstock_tree_destroy(S.t))
		abort();
}

static bool stocked(const struct pcstock_policy_info *info)
{
	return info->stocks && info->max_batch >= BATCH;
}

static const struct explore_scenario drain = {
	.name = "group-drain",
	.help = "one CPU's hits and refills against remote drains",
	.nr_threads = NR_THREADS,
	.init = drain_init,
	.thread_init = drain_thread_init,
	.setup = drain_setup,
	.run = drain_run,
	.check_step = drain_check_step,
	.check_end = drain_check_end,
	.teardown = drain_teardown,
	.applies = stocked,
	.policy_info = pcstock_tree_policy_info,
};

const struct explore_scenario *const explore_drain_scenarios[] = {
	&drain,
	NULL,
};
