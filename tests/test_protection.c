// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_protection.c - memory.min and memory.low, sequentially, on a 4-CPU
 * SIM domain (hierarchy_fixture.h): the effective protection of the tree
 * the kernel's cgroup selftest builds (docs/conformance.md, "The selftest's
 * protection tree"), plain and recursive, and what a destroyed group still
 * claims.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_fixture.h"

static void protection_case(bool recursive, bool use_low)
{
	int (*set)(struct pcstock_group *, unsigned long) =
		use_low ? pcstock_group_set_low : pcstock_group_set_min;
	struct pcstock_group *A, *B, *g[4];
	static const unsigned long prot[4] = { MB(75), MB(25), 0, MB(500) };
	static const unsigned long use[4] = { MB(50), MB(50), MB(50), 0 };
	static const unsigned long expect[4] = { 8533, 4266, 0, 0 };
	static const char *const names[4] = { "C", "D", "E", "F" };
	struct pcstock_group_stats st;

	assert_int_equal(tree_open(fx.policy, false, recursive), 0);
	A = mkgroup(fx.root, "A");
	B = mkgroup(A, "B");
	assert_int_equal(pcstock_group_write_limit(A, PCSTOCK_LIMIT_MAX,
						   "200M"),
			 0);
	assert_int_equal(set(B, MB(50)), 0);
	for (int i = 0; i < 4; i++) {
		g[i] = mkgroup(B, names[i]);
		assert_int_equal(set(g[i], prot[i]), 0);
		assert_int_equal(pcstock_group_charge(g[i], use[i], 0), 0);
	}
	pcstock_group_calculate_protection(A);
	pcstock_group_stats(B, &st);
	assert_int_equal(use_low ? st.elow : st.emin, MB(50));
	for (int i = 0; i < 4; i++) {
		pcstock_group_stats(g[i], &st);
		assert_int_equal(use_low ? st.elow : st.emin, expect[i]);
		pcstock_group_uncharge(g[i], use[i]);
		rmgroup(g[i]);
	}
	rmgroup(B);
	rmgroup(A);
}

static void test_protection_selftest_tree(void **state)
{
	protection_case(false, false);
	protection_case(true, false);
	protection_case(false, true);
	protection_case(true, true);
}

/*
 * mem_cgroup_css_offline() sets memory.min and memory.low to 0: a
 * destroyed group whose pages are still held claims no protection, so its
 * live sibling gets the parent's whole budget (100, not 100 * 100 / 200).
 */
static void test_offline_group_drops_protection(void **state)
{
	struct pcstock_group *p = mkgroup(fx.root, "p");
	struct pcstock_group *b = mkgroup(p, "b");
	struct pcstock_group *c = mkgroup(p, "c");
	struct pcstock_group *g[3] = { p, b, c };
	struct pcstock_group_stats st;

	for (int i = 0; i < 3; i++) {
		assert_int_equal(pcstock_group_set_min(g[i], 100), 0);
		assert_int_equal(pcstock_group_set_low(g[i], 100), 0);
	}
	assert_int_equal(pcstock_group_charge(b, 100, 0), 0);
	assert_int_equal(pcstock_group_charge(c, 100, 0), 0);
	pcstock_group_calculate_protection(fx.root);
	pcstock_group_stats(b, &st);
	assert_int_equal(st.emin, 50);
	assert_int_equal(st.elow, 50);

	assert_int_equal(pcstock_group_destroy(c), 0);	/* pages still held */
	pcstock_group_stats(c, &st);
	assert_int_equal(st.min, 0);
	assert_int_equal(st.low, 0);
	pcstock_group_calculate_protection(fx.root);
	pcstock_group_stats(b, &st);
	assert_int_equal(st.emin, 100);
	assert_int_equal(st.elow, 100);

	/* its limit files are gone: nothing brings the protection back */
	assert_int_equal(pcstock_group_set_min(c, 100), -ENODEV);
	assert_int_equal(pcstock_group_write_limit(c, PCSTOCK_LIMIT_LOW,
						   "400K"),
			 -ENODEV);
	pcstock_group_calculate_protection(fx.root);
	pcstock_group_stats(b, &st);
	assert_int_equal(st.emin, 100);
	assert_int_equal(st.elow, 100);

	pcstock_group_uncharge(c, 100);
	pcstock_group_put(c);
	pcstock_group_uncharge(b, 100);
	rmgroup(b);
	rmgroup(p);
}

int main(void)
{
	static const struct case_def cases[] = {
		PER_POLICY(test_protection_selftest_tree),
		PER_POLICY(test_offline_group_drops_protection),
	};

	return run_cases("test_protection", cases,
			 sizeof(cases) / sizeof(cases[0]));
}
