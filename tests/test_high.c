// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_high.c - memory.high (spec §3.6.3), sequentially, on a 4-CPU SIM
 * domain (hierarchy_fixture.h): what a charge records over high, and what
 * pcstock_handle_over_high() then reclaims and how long it throttles, by
 * mem_cgroup_handle_over_high()'s figures.
 */
#define _GNU_SOURCE		/* sched_getcpu(), CPU affinity */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>
#include <stdbool.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_fixture.h"

static void test_high_throttle_figures(void **state)
{
	static const struct {
		unsigned long usage, delay;
	} cases[] = {
		{ MB(101), 0 },	/* 6 ms: not above 10, no throttling */
		{ MB(105), 159 },
		{ MB(110), 639 },
		{ MB(118), 2000 },
	};
	struct pcstock_group *a = mkgroup(fx.root, "a");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned long base = cases[i].usage - 64;

		fx.reclaim_calls = 0;
		assert_int_equal(pcstock_group_charge(a, base, 0), 0);
		assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_HIGH,
							   "100M"),
				 0);
		assert_int_equal(pcstock_over_high_pages(), 0);
		assert_int_equal(pcstock_group_charge(a, 64, 0), 0);
		assert_int_equal(pcstock_over_high_pages(), 64);
		fx.reclaim_calls = 0;
		assert_int_equal(pcstock_handle_over_high(), cases[i].delay);
		assert_int_equal(pcstock_over_high_pages(), 0);
		/* first 64 pages, then 16 retries of 32 unless under 10 ms */
		assert_int_equal(fx.reclaim_calls,
				 cases[i].delay ?
					 1 + PCSTOCK_MAX_RECLAIM_RETRIES :
					 1);
		assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_HIGH,
							   "max"),
				 0);
		pcstock_group_uncharge(a, cases[i].usage);
	}
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_HIGH),
			 1 + 3 * (1 + PCSTOCK_MAX_RECLAIM_RETRIES));
	assert_int_equal(pcstock_handle_over_high(), 0);
	rmgroup(a);
}

/*
 * A stock hit records nothing over high (the series; mainline's
 * consume_stock() returns before the high check) on an RSEQ domain too,
 * whose hits do not use the per-thread region cache and take the charge
 * flow's path: pinned to one OS CPU, a miss above high records its 64
 * pages, a later hit from the same slot none.
 */
static void test_rseq_hit_skips_high(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_DEFAULT };
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *a;
	cpu_set_t old, one;
	int cpu = sched_getcpu();

	assert_true(cpu >= 0);
	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_int_equal(pcstock_domain_create(NULL, &d), 0);
	assert_int_equal(pcstock_tree_create(d, &attr, &t), 0);
	assert_int_equal(pcstock_group_create(pcstock_tree_root(t), "a", &a),
			 0);
	assert_int_equal(pcstock_group_set_high(a, 1), 0);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);	/* miss */
	assert_int_equal(pcstock_over_high_pages(), 64);
	pcstock_handle_over_high();
	assert_int_equal(pcstock_over_high_pages(), 0);
	assert_int_equal(pcstock_group_stock_pages(a), 63);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);	/* hit */
	assert_int_equal(pcstock_group_stock_pages(a), 62);
	assert_int_equal(pcstock_over_high_pages(), 0);
	assert_int_equal(pcstock_group_uncharge(a, 2), 0);
	assert_int_equal(pcstock_group_destroy(a), 0);
	pcstock_group_put(a);
	assert_int_equal(pcstock_tree_destroy(t), 0);
	assert_int_equal(pcstock_domain_destroy(d), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(old), &old), 0);
}

/*
 * A charge up to exactly high is not over it (usage > high, step 17); one
 * page more is.  Charges of at least a batch are exact under every policy,
 * so usage lands on high itself.
 */
static void test_charge_up_to_exactly_high(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");

	assert_true(BATCH <= 100);
	assert_int_equal(pcstock_group_set_high(a, 100), 0);
	assert_int_equal(pcstock_group_charge(a, 100, 0), 0);
	assert_int_equal(pcstock_group_usage(a), 100);
	assert_int_equal(pcstock_over_high_pages(), 0);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	assert_true(pcstock_over_high_pages() > 0);
	pcstock_handle_over_high();
	pcstock_group_uncharge(a, 101);
	rmgroup(a);
}

int main(void)
{
	static const struct case_def cases[] = {
		ONCE(test_high_throttle_figures),
		ONCE(test_rseq_hit_skips_high),
		PER_POLICY(test_charge_up_to_exactly_high),
	};

	return run_cases("test_high", cases, sizeof(cases) / sizeof(cases[0]));
}
