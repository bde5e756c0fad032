// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_tree.c - last puts while a tree is destroyed.
 *
 * tree-reap: from pcstock_tree_destroy()'s store of dying, a group's last
 * put does not queue the group's free: it pushes the group on the tree's
 * reap list, which the destroyer frees in one go (src/tree.c,
 * group_reap()).  Two such puts can race: the destroyer's own (a record's
 * or the policy's reference it drops) and liburcu's call_rcu thread's (a
 * freed child putting its parent).  Neither can be an explored thread,
 * so this scenario stands in for them: it marks its tree dying as the
 * destroy does and has two explored threads make those last puts, on two
 * groups already destroyed.  The push is a compare-and-swap loop whose
 * every turn links the group to the head it will swap out; the explorer
 * schedules each thread between its read of the head and its swap.
 *
 * One tree (policy none) on a SIM domain; per schedule two fresh groups,
 * destroyed, each with the one reference left that a thread puts.
 * Invariant at the end: the reap list holds both groups, once each.  The
 * teardown frees them as the destroyer would, takes the tree out of its
 * dying state and empties the list.
 */
#include <stdio.h>
#include <stdlib.h>

#include <pcstock/cpu.h>
#include <pcstock/hierarchy.h>

#include "atomic.h"
#include "explore.h"
#include "group.h"

#define NR_CPUS 2

static struct {
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *g[2];
	char msg[120];
} S;

static int reap_init(const struct explore_scenario *s)
{
	struct pcstock_domain_attr attr = { .nr_cpus = NR_CPUS,
					    .mode = PCSTOCK_CPU_SIM };
	struct pcstock_tree_attr tattr = { .policy = PCSTOCK_TREE_NONE };
	int err;

	(void)s;
	err = pcstock_domain_create(&attr, &S.d);
	return err ? err : pcstock_tree_create(S.d, &tattr, &S.t);
}

static void reap_setup(const struct explore_scenario *s)
{
	static const char *const names[] = { "g0", "g1" };

	(void)s;
	for (int i = 0; i < 2; i++) {
		if (pcstock_group_create(pcstock_tree_root(S.t), names[i],
					 &S.g[i]) ||
		    pcstock_group_destroy(S.g[i]))
			abort();
		explore_label(S.g[i], sizeof(*S.g[i]), names[i], NULL);
	}
	explore_label(&S.t->reaped, sizeof(S.t->reaped), "reaped", NULL);
	/* As pcstock_tree_destroy() before it drops any reference. */
	pcs_store(&S.t->dying, true, PCS_RELAXED);
}

static void reap_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	pcstock_group_put(S.g[t]);
}

static const char *reap_check_end(const struct explore_scenario *s)
{
	bool seen[2] = { false, false };
	unsigned int n = 0;

	(void)s;
	for (struct pcstock_group *g = pcs_load(&S.t->reaped, PCS_RELAXED);
	     g && n <= 2; g = g->reap_next, n++) {
		for (int i = 0; i < 2; i++)
			if (g == S.g[i]) {
				if (seen[i])
					return "a group is on the reap list "
					       "twice";
				seen[i] = true;
			}
	}
	if (!seen[0] || !seen[1]) {
		snprintf(S.msg, sizeof(S.msg),
			 "the reap list lost a group pushed on it (g0 %s, g1 "
			 "%s): never freed, and the tree's destroy waits for "
			 "it", seen[0] ? "on it" : "lost",
			 seen[1] ? "on it" : "lost");
		return S.msg;
	}
	return n == 2 ? NULL : "the reap list holds more than the two groups";
}

static void reap_teardown(const struct explore_scenario *s)
{
	(void)s;
	for (int i = 0; i < 2; i++) {
		pcs_fetch_sub(&S.t->nr_groups, 1, PCS_RELAXED);
		pcs_group_free(S.g[i]);
	}
	pcs_store(&S.t->reaped, NULL, PCS_RELAXED);
	pcs_store(&S.t->dying, false, PCS_RELAXED);
}

static const struct explore_scenario tree_reap = {
	.name = "tree-reap",
	.help = "two last puts while the tree is destroyed push their groups "
		"on the reap list: neither is lost",
	.nr_threads = 2,
	.init = reap_init,
	.setup = reap_setup,
	.run = reap_run,
	.check_end = reap_check_end,
	.teardown = reap_teardown,
};

const struct explore_scenario *const explore_tree_scenarios[] = {
	&tree_reap,
	NULL,
};
