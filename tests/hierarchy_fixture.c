// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hierarchy_fixture.c - the group tests' fixture (hierarchy_fixture.h):
 * the tree, its recording callbacks and the per-policy case table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hierarchy_fixture.h"
#include "internal.h"

struct fixture fx;

static long reclaim_cb(struct pcstock_group *g, unsigned long nr_pages,
		       void *arg)
{
	struct fixture *f = arg;
	unsigned long n;

	f->reclaim_calls++;
	f->reclaim_asked = nr_pages;
	if (f->claim_all)
		return (long)nr_pages;
	if (f->claim_progress > 0) {
		f->claim_progress--;
		return 1;
	}
	if (!f->free_from)
		return f->reclaim_ret;
	n = nr_pages < f->held ? nr_pages : f->held;
	f->held -= n;
	pcstock_group_uncharge(f->free_from, n);
	return (long)n;
}

static int oom_cb(struct pcstock_group *g, void *arg)
{
	struct fixture *f = arg;

	f->oom_calls++;
	if (f->oom_progress > 0) {
		f->oom_progress--;
		return PCSTOCK_OOM_KILLED;
	}
	return PCSTOCK_OOM_NONE;
}

static struct pcstock_tree_attr tree_attr(enum pcstock_tree_policy policy,
					  bool memsw, bool recursive)
{
	return (struct pcstock_tree_attr){
		.policy = policy,
		.memsw = memsw,
		.recursive_protection = recursive,
		.track_failcnt = true,
		.reclaim = reclaim_cb,
		.oom = oom_cb,
		.cb_arg = &fx,
	};
}

int tree_open(enum pcstock_tree_policy policy, bool memsw, bool recursive)
{
	struct pcstock_tree_attr attr = tree_attr(policy, memsw, recursive);

	if (fx.t && pcstock_tree_destroy(fx.t))
		return -1;
	fx.t = NULL;
	if (pcstock_tree_create(fx.d, &attr, &fx.t))
		return -1;
	fx.root = pcstock_tree_root(fx.t);
	return 0;
}

/* @state: the policy, or NULL for "none". */
static int setup(void **state)
{
	enum pcstock_tree_policy policy = PCSTOCK_TREE_NONE;
	struct pcstock_tree_attr attr;

	if (*state)
		policy = *(enum pcstock_tree_policy *)*state;
	memset(&fx, 0, sizeof(fx));
	fx.policy = policy;
	if (pcstock_tree_policy_info(policy, &fx.info))
		return -1;
	attr = tree_attr(policy, false, false);
	if (sim_tree_open(NR_CPUS, &attr, &fx.d, &fx.t))
		return -1;
	fx.root = pcstock_tree_root(fx.t);
	return 0;
}

static int teardown(void **state)
{
	pcstock_handle_over_high();
	pcstock_fault_hook = NULL;
	return sim_tree_close(fx.d, fx.t);
}

void on_cpu(unsigned int cpu)
{
	move_to_cpu(fx.d, cpu);
}

bool has_stock(void)
{
	return fx.info.stocks;
}

static bool runs_on(enum runs r, const struct pcstock_policy_info *info)
{
	switch (r) {
	case RUN_STOCKED:
		return info->stocks;
	case RUN_PER_COUNTER:
		return info->per_counter;
	default:
		return true;
	}
}

int run_cases(const char *group, const struct case_def *cases, size_t nr)
{
	static enum pcstock_tree_policy policies[PCSTOCK_TREE_NR_POLICIES];
	size_t max = nr * PCSTOCK_TREE_NR_POLICIES, n = 0;
	struct CMUnitTest *tests = calloc(max, sizeof(*tests));
	char (*names)[80] = calloc(max, sizeof(*names));
	struct pcstock_policy_info info;
	int failed;

	if (!tests || !names) {
		fprintf(stderr, "%s: out of memory\n", group);
		return 1;
	}
	for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++)
		policies[p] = (enum pcstock_tree_policy)p;
	for (size_t i = 0; i < nr; i++) {
		const struct case_def *c = &cases[i];

		if (c->runs == RUN_ONCE) {
			tests[n++] = (struct CMUnitTest){ c->name, c->fn, setup,
							  teardown, NULL };
			continue;
		}
		for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
			if (pcstock_tree_policy_info(policies[p], &info) ||
			    !runs_on(c->runs, &info))
				continue;
			snprintf(names[n], sizeof(names[n]), "%s/%s", c->name,
				 info.name);
			tests[n] = (struct CMUnitTest){ names[n], c->fn, setup,
							teardown, &policies[p] };
			n++;
		}
	}
	failed = _cmocka_run_group_tests(group, tests, n, NULL, NULL);
	free(names);
	free(tests);
	return failed;
}
