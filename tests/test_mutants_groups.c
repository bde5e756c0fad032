// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mutants_groups.c - boundary cases of the group layer that a
 * mutation study of the code found no test for (docs/mutation.md): each
 * fails on the mutant named in its comment.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <pcstock/counter.h>
#include <pcstock/cpu.h>
#include <pcstock/hierarchy.h>

#include "hierarchy_helpers.h"

static struct pcstock_domain *dom;
static struct pcstock_tree *tree;
static struct pcstock_group *root;

static int setup_attr(const struct pcstock_tree_attr *attr)
{
	struct pcstock_domain_attr dattr = { 2, PCSTOCK_CPU_SIM, NULL };

	if (pcstock_domain_create(&dattr, &dom) || pcstock_cpu_enter(dom, 0) ||
	    pcstock_tree_create(dom, attr, &tree))
		return -1;
	root = pcstock_tree_root(tree);
	return 0;
}

static int setup(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE };

	(void)state;
	return setup_attr(&attr);
}

static int teardown(void **state)
{
	int err;

	(void)state;
	err = pcstock_tree_destroy(tree);
	pcstock_cpu_exit(dom);
	pcstock_domain_destroy(dom);
	return err;
}

/*
 * A name is found whole, never by a prefix or as a prefix of another:
 * "ab" next to "abc" is its own group.  Mutant: the name index comparing
 * only the first len bytes (no test of the stored name's end).
 */
static void test_name_is_not_a_prefix(void **state)
{
	struct pcstock_group *abc, *ab, *g = NULL;

	(void)state;
	abc = mkgroup(root, "abc");
	assert_int_equal(pcstock_group_lookup(root, "ab", &g), -ENOENT);
	assert_int_equal(pcstock_group_lookup(root, "ab/", &g), -ENOENT);
	ab = mkgroup(root, "ab");
	assert_int_equal(pcstock_group_lookup(root, "ab", &g), 0);
	assert_ptr_equal(g, ab);
	pcstock_group_put(g);
	assert_int_equal(pcstock_group_lookup(root, "abc", &g), 0);
	assert_ptr_equal(g, abc);
	pcstock_group_put(g);
	rmgroup(abc);
	assert_int_equal(pcstock_group_lookup(root, "abc", &g), -ENOENT);
	assert_int_equal(pcstock_group_lookup(root, "ab", &g), 0);
	assert_ptr_equal(g, ab);
	pcstock_group_put(g);
	rmgroup(ab);
}

/* A v1 tree (failcnt tracked) with memsw. */
static int setup_v1(void **state)
{
	struct pcstock_tree_attr attr = {
		.policy = PCSTOCK_TREE_NONE,
		.memsw = true,
		.track_failcnt = true,
	};

	(void)state;
	return setup_attr(&attr);
}

/*
 * v1's files all exist on the root (no CFTYPE_NOT_ON_ROOT in the legacy
 * table), their counters and resets included.  Mutant: memory.failcnt
 * flagged not-on-root.
 */
static void test_v1_files_on_root(void **state)
{
	static const char *const files[] = {
		"memory.usage_in_bytes", "memory.limit_in_bytes",
		"memory.max_usage_in_bytes", "memory.failcnt",
		"memory.memsw.usage_in_bytes", "memory.memsw.limit_in_bytes",
		"memory.memsw.max_usage_in_bytes", "memory.memsw.failcnt",
		"memory.stat",
	};
	char buf[256];

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		assert_true(pcstock_group_read(root, files[i], buf,
					       sizeof(buf)) > 0);
	assert_int_equal(pcstock_group_write(root, "memory.failcnt", "0"), 0);
	assert_int_equal(pcstock_group_write(root, "memory.memsw.failcnt",
					     "0"), 0);
	assert_int_equal(pcstock_group_write(root,
					     "memory.max_usage_in_bytes", "0"),
			 0);
}

/*
 * A charge forced past the limit (NOFAIL) charges memsw as well as
 * memory, as the kernel's force: label does.  Mutant: the force path
 * charging memory alone.
 */
static void test_forced_charge_charges_memsw(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");

	(void)state;
	assert_int_equal(pcstock_group_set_max(g, 4), 0);
	assert_int_equal(pcstock_group_charge(g, 10, PCSTOCK_CHARGE_NOFAIL),
			 0);
	assert_int_equal(pcstock_counter_read(pcstock_group_memory(g)), 10);
	assert_int_equal(pcstock_counter_read(pcstock_group_memsw(g)), 10);
	assert_int_equal(pcstock_counter_read(pcstock_group_memsw(root)), 10);
	assert_int_equal(pcstock_group_uncharge(g, 10), 0);
	assert_int_equal(pcstock_counter_read(pcstock_group_memsw(root)), 0);
	rmgroup(g);
}

/*
 * A charge that fails on an ancestor's memsw limit raises the max event
 * on that ancestor, the kernel's mem_over_limit (mem_cgroup_from_counter(
 * counter, memsw)), which memory.events counts upwards only: the charging
 * child's own count stays 0.  Mutant: the memsw failure naming the
 * charging group as over its limit.
 */
static void test_memsw_failure_names_the_ancestor(void **state)
{
	struct pcstock_group *p = mkgroup(root, "p");
	struct pcstock_group *c = mkgroup(p, "c");

	(void)state;
	assert_int_equal(pcstock_group_set_max(p, 4), 0);
	assert_int_equal(pcstock_group_set_memsw_max(p, 4), 0);
	assert_int_equal(pcstock_group_charge(c, 8, 0), -ENOMEM);
	/* one per retry (18), as the kernel counts them */
	assert_true(pcstock_group_events(p, PCSTOCK_EVENT_MAX) > 0);
	assert_int_equal(pcstock_group_events(c, PCSTOCK_EVENT_MAX), 0);
	rmgroup(c);
	rmgroup(p);
}

/*
 * mem_cgroup_handle_over_high() throttles only above HZ / 100 jiffies:
 * "if (penalty_jiffies <= HZ / 100) goto out".  80 pages against a high
 * of 79, 64 pages recorded: overage (1 << 20) / 79 = 13273, penalty
 * 13273^2 * 1000 >> 20 >> 14 = 10 jiffies (ms) exactly, so no delay.
 * Mutant: the test as "< HZ / 100" (a 10 ms delay returned).
 */
static void test_over_high_delay_of_exactly_10ms(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");

	(void)state;
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
 * the destroy of another (empty) tree.  Mutant: pcs_high_recs_drop()
 * without the tree test, dropping every record.
 */
static void test_high_record_survives_other_tree_destroy(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE };
	struct pcstock_group *g = mkgroup(root, "g");
	struct pcstock_tree *other;

	(void)state;
	assert_int_equal(pcstock_group_set_high(g, 1), 0);
	assert_int_equal(pcstock_group_charge(g, 64, 0), 0);
	assert_int_equal(pcstock_over_high_pages(), 64);
	assert_int_equal(pcstock_tree_create(dom, &attr, &other), 0);
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
 * only, as after a pcstock_handle_over_high().  Mutant: pcs_high_record()
 * adding to the dropped record's pages (64 + 10).
 */
static void test_high_record_after_drop_starts_afresh(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE };
	struct pcstock_group *g = mkgroup(root, "g"), *o;
	struct pcstock_tree *other;

	(void)state;
	assert_int_equal(pcstock_tree_create(dom, &attr, &other), 0);
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
 * batch, 51 for the 81 pages recorded).  Mutant: calculate_high_delay()
 * looking at the charging group alone (no delay).
 */
static void test_over_high_delay_from_an_ancestor(void **state)
{
	struct pcstock_group *p = mkgroup(root, "p");
	struct pcstock_group *c = mkgroup(p, "c");

	(void)state;
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
 * against 50 is.  Mutant: the level test as usage < high (p reclaimed,
 * its own high event raised).
 */
static void test_reclaim_high_skips_a_level_at_high(void **state)
{
	struct pcstock_group *p = mkgroup(root, "p");
	struct pcstock_group *c = mkgroup(p, "c");
	struct pcstock_group_stats st;

	(void)state;
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

static unsigned long last_reclaim_ask;
static bool reclaim_claims_all;

/* Frees nothing; claims the pages asked for if reclaim_claims_all. */
static long note_reclaim(struct pcstock_group *g, unsigned long nr_pages,
			 void *arg)
{
	(void)g;
	(void)arg;
	last_reclaim_ask = nr_pages;
	return reclaim_claims_all ? (long)nr_pages : 0;
}

static int setup_reclaim(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE,
					  .reclaim = note_reclaim };

	(void)state;
	return setup_attr(&attr);
}

/*
 * mem_cgroup_handle_over_high(): the first reclaim asks for the pages
 * recorded, each retry for SWAP_CLUSTER_MAX (32).  Mutant: every round
 * asking for the recorded 64 again.
 */
static void test_over_high_retries_reclaim_32(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");

	(void)state;
	assert_int_equal(pcstock_group_set_high(g, 1), 0);
	assert_int_equal(pcstock_group_charge(g, 64, 0), 0);
	last_reclaim_ask = 0;
	assert_true(pcstock_handle_over_high() > 10);	/* it retried */
	assert_int_equal(last_reclaim_ask, 32);
	assert_int_equal(pcstock_group_uncharge(g, 64), 0);
	rmgroup(g);
}

/*
 * A memory.high of 0: every charge is over it, and the overage divides by
 * max(high, 1), never by 0 (calculate_overage()).  One page over 0 is no
 * overage.  Mutant: the divisor high itself (SIGFPE).
 */
static void test_over_high_of_zero(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");

	(void)state;
	assert_int_equal(pcstock_group_set_high(g, 0), 0);
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);
	assert_int_equal(pcstock_over_high_pages(), 1);
	assert_int_equal(pcstock_handle_over_high(), 0);
	assert_int_equal(pcstock_group_uncharge(g, 1), 0);
	rmgroup(g);
}


/*
 * A reclaim callback may return every page it was asked for: that is in
 * range, not clamped (callback_clamped counts only returns below 0 or
 * above the request).  Mutant: the range test as freed < nr_pages.
 */
static void test_reclaim_of_all_pages_asked_not_clamped(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");
	struct pcstock_tree_stats ts;

	(void)state;
	assert_int_equal(pcstock_group_set_max(g, 4), 0);
	assert_int_equal(pcstock_group_charge(g, 4, 0), 0);
	reclaim_claims_all = true;
	assert_int_equal(pcstock_group_charge(g, 1, PCSTOCK_CHARGE_NORETRY),
			 -ENOMEM);
	reclaim_claims_all = false;
	assert_int_equal(last_reclaim_ask, 1);
	pcstock_tree_stats(tree, &ts);
	assert_int_equal(ts.callback_clamped, 0);
	assert_int_equal(pcstock_group_uncharge(g, 4), 0);
	rmgroup(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_name_is_not_a_prefix,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_v1_files_on_root,
						setup_v1, teardown),
		cmocka_unit_test_setup_teardown(
			test_forced_charge_charges_memsw, setup_v1, teardown),
		cmocka_unit_test_setup_teardown(
			test_memsw_failure_names_the_ancestor, setup_v1,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_over_high_delay_of_exactly_10ms, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_high_record_survives_other_tree_destroy, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_high_record_after_drop_starts_afresh, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_over_high_delay_from_an_ancestor, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_reclaim_high_skips_a_level_at_high, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_over_high_retries_reclaim_32, setup_reclaim,
			teardown),
		cmocka_unit_test_setup_teardown(test_over_high_of_zero, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_reclaim_of_all_pages_asked_not_clamped,
			setup_reclaim, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
