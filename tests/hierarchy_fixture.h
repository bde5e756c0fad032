/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hierarchy_fixture.h - the fixture of the group tests (test_tree.c,
 * test_charge.c, test_high.c, test_limits.c, test_protection.c): a tree on
 * a 4-CPU SIM domain whose reclaim and OOM callbacks do what the case set
 * and record their calls, and the table that runs each case once or once
 * per registered policy (include after <cmocka.h>).
 *
 * Cases that depend on the stock run once per policy (the prestate is the
 * policy); steps that do not run on the "none" policy, where every charge
 * walks the counters, so the callback counts are exact.
 */
#ifndef PCSTOCK_TESTS_HIERARCHY_FIXTURE_H
#define PCSTOCK_TESTS_HIERARCHY_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_helpers.h"

#define NR_CPUS 4U
#define BATCH 64UL
#define MB(x) ((unsigned long)(x) * 256UL)	/* pages of 4 KiB */

struct fixture {
	enum pcstock_tree_policy policy;
	struct pcstock_policy_info info;	/* the policy's properties */
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *root;
	/* callback behaviour and records */
	long reclaim_ret;		/* returned when free_from is NULL */
	struct pcstock_group *free_from; /* reclaim uncharges from here */
	unsigned long held;		/* pages free_from may give back */
	bool claim_all;			/* claim every page asked, free none */
	unsigned int reclaim_calls;
	unsigned long reclaim_asked;	/* by the last call */
	int claim_progress;		/* first calls claiming 1 page */
	int oom_progress;		/* first OOM calls reporting true */
	unsigned int oom_calls;
};

extern struct fixture fx;

/*
 * tree_open() - replace the fixture's tree by one of @policy, with memsw
 * and recursive protection as asked, failcnt tracked, the recording
 * callbacks.  Return: 0 or -1.
 */
int tree_open(enum pcstock_tree_policy policy, bool memsw, bool recursive);
/* on_cpu() - move the calling thread to @cpu of the fixture's domain */
void on_cpu(unsigned int cpu);
/* has_stock() - whether the case's policy stocks at all */
bool has_stock(void);

/*
 * The cases, each run once (ONCE, on "none") or on every registered
 * policy with a property: PER_POLICY on all, STOCKED on those with stock,
 * COUNTER_STOCK on the per-counter ones.  run_cases() builds the list from
 * the registry at run time, so a new policy runs them without an edit.
 */
enum runs { RUN_ONCE, RUN_ALL, RUN_STOCKED, RUN_PER_COUNTER };

struct case_def {
	const char *name;
	CMUnitTestFunction fn;
	enum runs runs;
};

#define ONCE(fn) { #fn, fn, RUN_ONCE }
#define PER_POLICY(fn) { #fn, fn, RUN_ALL }
#define STOCKED(fn) { #fn, fn, RUN_STOCKED }
#define COUNTER_STOCK(fn) { #fn, fn, RUN_PER_COUNTER }

/*
 * run_cases() - run @cases as the cmocka group @group: a case run once is
 * named after its function, one per policy "case/policy", so that a
 * policy's cases can be counted.  Return: the number of cases failed.
 */
int run_cases(const char *group, const struct case_def *cases, size_t nr);

#endif /* PCSTOCK_TESTS_HIERARCHY_FIXTURE_H */
