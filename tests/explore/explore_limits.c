// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_limits.c - a limit writer against the group's destroy.
 *
 * group-protect-destroy: memory.min and memory.low written while the group
 * is destroyed.  The kernel removes a cgroup's files, and waits for their
 * writers, before css_offline resets the protection; ours promises the
 * same outcome (src/limits.c, group_set_protection()): a setter either
 * finds the group offline (-ENODEV) or stores before the destroy's reset
 * to 0.  Both sides hold the tree's lock for that, the destroy from its
 * reset to its store of online, the setter from its test of online to its
 * store; here that lock is a mutex the model knows (explore_model_mutex()),
 * so a schedule may stop either side at any access in between, the
 * lock's own included.
 *
 * One tree (policy none, no stock) on a SIM domain; per schedule a fresh
 * group g in it.  Thread 0 writes min = 3, then low = 2; thread 1 destroys g.
 * Invariants at the end: g is offline, its min and low are 0, and each
 * write that returned 0 did so only if it ran before the destroy's reset
 * (the write after it, if any, then got -ENODEV or also came first).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <pcstock/cpu.h>
#include <pcstock/hierarchy.h>

#include "explore.h"
#include "group.h"
#include "rcu.h"

#define NR_CPUS 2

static struct {
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *g;
	int set_min, set_low;
	char msg[160];
} S;

static int limits_init(const struct explore_scenario *s)
{
	struct pcstock_domain_attr attr = { .nr_cpus = NR_CPUS,
					    .mode = PCSTOCK_CPU_SIM };

	struct pcstock_tree_attr tattr = { .policy = PCSTOCK_TREE_NONE };
	int err;

	(void)s;
	err = pcstock_domain_create(&attr, &S.d);
	return err ? err : pcstock_tree_create(S.d, &tattr, &S.t);
}

static void limits_thread_init(const struct explore_scenario *s,
			       unsigned int t)
{
	struct pcstock_group *root;

	(void)s;
	(void)t;
	/* A read-side section registers this thread with urcu-bp. */
	if (!pcstock_group_lookup(pcstock_tree_root(S.t), "", &root))
		pcstock_group_put(root);
}

static void limits_setup(const struct explore_scenario *s)
{
	(void)s;
	if (pcstock_group_create(pcstock_tree_root(S.t), "g", &S.g))
		abort();
	S.set_min = S.set_low = 1;
	explore_model_mutex(0, &S.t->lock, "tree_lock");
	explore_label(pcstock_group_memory(S.g), sizeof(struct pcstock_counter),
		      "g.mem", explore_counter_fields);
}

static void limits_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	if (t == 0) {
		S.set_min = pcstock_group_set_min(S.g, 3);
		S.set_low = pcstock_group_set_low(S.g, 2);
		return;
	}
	if (pcstock_group_destroy(S.g))
		explore_fail("the destroy of g failed");
}

static const char *limits_check_end(const struct explore_scenario *s)
{
	const struct pcstock_counter *c = pcstock_group_memory(S.g);
	unsigned long min = pcstock_counter_min(c);
	unsigned long low = pcstock_counter_low(c);

	(void)s;
	if (pcstock_group_online(S.g))
		return "g is still online after its destroy returned";
	if ((S.set_min && S.set_min != -ENODEV) ||
	    (S.set_low && S.set_low != -ENODEV)) {
		snprintf(S.msg, sizeof(S.msg),
			 "a protection write failed with %d / %d, not 0 or "
			 "-ENODEV", S.set_min, S.set_low);
		return S.msg;
	}
	if (min || low) {
		snprintf(S.msg, sizeof(S.msg),
			 "g is offline but protects min %lu, low %lu (written "
			 "after the destroy's reset: %d / %d)", min, low,
			 S.set_min, S.set_low);
		return S.msg;
	}
	return NULL;
}

static void limits_teardown(const struct explore_scenario *s)
{
	(void)s;
	explore_model_mutex(0, NULL, NULL);
	pcstock_group_put(S.g);
}

/*
 * Each schedule's group is freed a grace period after its last put, and
 * its free's accesses read the explorer's hook: every free is over before
 * the explorer takes its hook away.  The barrier runs them (an explorer
 * build's frees wait for it, src/rcu.h); the acquire load of the tree's
 * group count, which each free's last access decrements (release), keeps
 * the order visible to ThreadSanitizer whichever thread ran them.
 */
static void limits_fini(const struct explore_scenario *s)
{
	(void)s;
	pcs_rcu_barrier();
	(void)atomic_load_explicit(&S.t->nr_groups, memory_order_acquire);
}

static const struct explore_scenario group_protect_destroy = {
	.name = "group-protect-destroy",
	.help = "memory.min and memory.low written while the group is "
		"destroyed: an offline group protects nothing",
	.nr_threads = 2,
	.init = limits_init,
	.thread_init = limits_thread_init,
	.setup = limits_setup,
	.run = limits_run,
	.check_end = limits_check_end,
	.teardown = limits_teardown,
	.fini = limits_fini,
};

const struct explore_scenario *const explore_limits_scenarios[] = {
	&group_protect_destroy,
	NULL,
};
