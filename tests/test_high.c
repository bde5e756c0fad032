// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_high.c - memory.high, sequentially, on a 4-CPU SIM domain
 * (hierarchy_fixture.h): what a charge records over high, and what
 * pcstock_handle_over_high() then reclaims and how long it throttles, by
 * the kernel's mem_cgroup_handle_over_high()'s figures (mm/memcontrol.c).
 *
 * A case whose comment names a mutant ("Mutant Q13: ...") came from the
 * mutation study (docs/mutation.md, by that id) and fails on it.
 */
#define _GNU_SOURCE		/* sched_getcpu(), CPU affinity */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>

#include <pcstock/hierarchy.h>

#include "affinity_helpers.h"
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
	cpu_set_t old;

	pin_here(&old);
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
	unpin(&old);
}

/*
 * A charge up to exactly high is not over it (usage > high, the test
 * try_charge_memcg() makes after charging the counters); one page more
 * is.  Charges of at least a batch are exact under every policy, so usage
 * lands on high itself.
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

/*
 * mem_cgroup_handle_over_high() throttles only above HZ / 100 jiffies:
 * "if (penalty_jiffies <= HZ / 100) goto out".  80 pages against a high
 * of 79, 64 pages recorded: overage (1 << 20) / 79 = 13273, penalty
 * 13273^2 * 1000 >> 20 >> 14 = 10 jiffies (ms) exactly, so no delay.
 * Mutant N10: the test as "< HZ / 100" (a 10 ms delay returned).
 */
static void test_over_high_delay_of_exactly_10ms(void **state)
{
	struct pcstock_group *g = mkgroup(fx.root, "g");

	assert_int_equal(pcstock_group_charge(g, 16, 0), 0);
	assert_int_equal(pcstock_group_set_high(g, 79), 0);
	assert_int_equal(pcstock_group_charge(g, 64, 0), 0);
	assert_int_equal(pcstock_over_high_pages(), 64);
	assert_int_equal(pcstock_handle_over_high(), 0);
	assert_int_equal(pcstock_over_high_pages(), 0);
	/* One page more: 81 against 79 is 40 ms, throttled. */
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);
	assert_int_equal(pcstock_handle_over_high(), 0);
	assert_int_equal(pcstock_group_charge(g, 64, 0), 0);
	assert_true(pcstock_handle_over_high() > 10);
	assert_int_equal(pcstock_group_uncharge(g, 145), 0);
	rmgroup(g);
}

/*
 * pcstock_tree_destroy() drops the over-high records every thread holds on
 * ITS groups, no other tree's: a record on a group of this tree survives
 * the destroy of another (empty) tree.  Mutant Q15: pcs_high_recs_drop()
 * without the tree test, dropping every record.
 */
static void test_high_record_survives_other_tree_destroy(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE };
	struct pcstock_group *g = mkgroup(fx.root, "g");
	struct pcstock_tree *other;

	assert_int_equal(pcstock_group_set_high(g, 1), 0);
	assert_int_equal(pcstock_group_charge(g, 64, 0), 0);
	assert_int_equal(pcstock_over_high_pages(), 64);
	assert_int_equal(pcstock_tree_create(fx.d, &attr, &other), 0);
	assert_int_equal(pcstock_tree_destroy(other), 0);
	assert_int_equal(pcstock_over_high_pages(), 64);
	pcstock_handle_over_high();
	assert_int_equal(pcstock_over_high_pages(), 0);
	assert_int_equal(pcstock_group_uncharge(g, 64), 0);
	rmgroup(g);
}

/*
 * A record a tree's destroy dropped (its group gone) is no debt of the
 * thread's next group: the next charge over high records its own pages
 * only, as after a pcstock_handle_over_high().  Mutant Q14: pcs_high_record()
 * adding to the dropped record's pages (64 + 10).
 */
static void test_high_record_after_drop_starts_afresh(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE };
	struct pcstock_group *g = mkgroup(fx.root, "g"), *o;
	struct pcstock_tree *other;

	assert_int_equal(pcstock_tree_create(fx.d, &attr, &other), 0);
	o = mkgroup(pcstock_tree_root(other), "o");
	assert_int_equal(pcstock_group_set_high(o, 1), 0);
	assert_int_equal(pcstock_group_charge(o, 64, 0), 0);
	assert_int_equal(pcstock_over_high_pages(), 64);
	assert_int_equal(pcstock_group_uncharge(o, 64), 0);
	rmgroup(o);
	/* The record's reference goes with the tree. */
	assert_int_equal(pcstock_tree_destroy(other), 0);
	assert_int_equal(pcstock_over_high_pages(), 0);
	assert_int_equal(pcstock_group_set_high(g, 1), 0);
	assert_int_equal(pcstock_group_charge(g, 10, 0), 0);
	assert_int_equal(pcstock_over_high_pages(), 10);
	pcstock_handle_over_high();
	assert_int_equal(pcstock_group_uncharge(g, 10), 0);
	rmgroup(g);
}

/*
 * The over-high delay is the largest overage of the charging group and
 * every ancestor (mem_find_max_overage()), not the charging group's own:
 * c has no high, its parent p is at 81 pages against 79 (41 ms for a
 * batch, 51 for the 81 pages recorded).  Mutant Q11: calculate_high_delay()
 * looking at the charging group alone (no delay).  Mutant Q18:
 * check_high() looking at the charging group alone (nothing recorded).
 */
static void test_over_high_delay_from_an_ancestor(void **state)
{
	struct pcstock_group *p = mkgroup(fx.root, "p");
	struct pcstock_group *c = mkgroup(p, "c");

	assert_int_equal(pcstock_group_set_high(p, 79), 0);
	assert_int_equal(pcstock_group_charge(c, 81, 0), 0);
	assert_int_equal(pcstock_over_high_pages(), 81);
	assert_int_equal(pcstock_handle_over_high(), 51);
	assert_int_equal(pcstock_group_uncharge(c, 81), 0);
	rmgroup(c);
	rmgroup(p);
}

/*
 * reclaim_high() reclaims from, and raises the high event on, the levels
 * above their high only: p exactly at its high of 100 is not, c at 100
 * against 50 is.  Mutant Q12: the level test as usage < high (p reclaimed,
 * its own high event raised).
 */
static void test_reclaim_high_skips_a_level_at_high(void **state)
{
	struct pcstock_group *p = mkgroup(fx.root, "p");
	struct pcstock_group *c = mkgroup(p, "c");
	struct pcstock_group_stats st;

	assert_int_equal(pcstock_group_set_high(p, 100), 0);
	assert_int_equal(pcstock_group_set_high(c, 50), 0);
	assert_int_equal(pcstock_group_charge(c, 100, 0), 0);
	assert_int_equal(pcstock_over_high_pages(), 100);
	pcstock_handle_over_high();
	pcstock_group_stats(p, &st);
	assert_int_equal(st.events_local[PCSTOCK_EVENT_HIGH], 0);
	pcstock_group_stats(c, &st);
	assert_true(st.events_local[PCSTOCK_EVENT_HIGH] > 0);
	assert_int_equal(pcstock_group_uncharge(c, 100), 0);
	rmgroup(c);
	rmgroup(p);
}

/*
 * mem_cgroup_handle_over_high(): the first reclaim asks for the pages
 * recorded, each retry for SWAP_CLUSTER_MAX (32).  Mutant Q13: every round
 * asking for the recorded 64 again.
 */
static void test_over_high_retries_reclaim_32(void **state)
{
	struct pcstock_group *g = mkgroup(fx.root, "g");

	assert_int_equal(pcstock_group_set_high(g, 1), 0);
	assert_int_equal(pcstock_group_charge(g, 64, 0), 0);
	fx.reclaim_asked = 0;
	assert_true(pcstock_handle_over_high() > 10);	/* it retried */
	assert_int_equal(fx.reclaim_asked, 32);
	assert_int_equal(pcstock_group_uncharge(g, 64), 0);
	rmgroup(g);
}

/*
 * A memory.high of 0: every charge is over it, and the overage divides by
 * max(high, 1), never by 0 (calculate_overage()).  One page over 0 is no
 * overage.  Mutant Q16: the divisor high itself (SIGFPE).
 */
static void test_over_high_of_zero(void **state)
{
	struct pcstock_group *g = mkgroup(fx.root, "g");

	assert_int_equal(pcstock_group_set_high(g, 0), 0);
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);
	assert_int_equal(pcstock_over_high_pages(), 1);
	assert_int_equal(pcstock_handle_over_high(), 0);
	assert_int_equal(pcstock_group_uncharge(g, 1), 0);
	rmgroup(g);
}

int main(void)
{
	static const struct case_def cases[] = {
		ONCE(test_high_throttle_figures),
		ONCE(test_rseq_hit_skips_high),
		PER_POLICY(test_charge_up_to_exactly_high),
		ONCE(test_over_high_delay_of_exactly_10ms),
		ONCE(test_high_record_survives_other_tree_destroy),
		ONCE(test_high_record_after_drop_starts_afresh),
		ONCE(test_over_high_delay_from_an_ancestor),
		ONCE(test_reclaim_high_skips_a_level_at_high),
		ONCE(test_over_high_retries_reclaim_32),
		ONCE(test_over_high_of_zero),
	};

	return run_cases("test_high", cases, sizeof(cases) / sizeof(cases[0]));
}
