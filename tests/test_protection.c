// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_protection.c - memory.min and memory.low, sequentially, on a 4-CPU
 * SIM domain (hierarchy_fixture.h): the effective protection of the tree
 * the kernel's cgroup selftest builds (docs/conformance.md, "The selftest's
 * protection tree"), plain and recursive, and what a destroyed group still
 * claims, also when its protection is written while it is destroyed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_fixture.h"
#include "atomic.h"
#include "group.h"		/* the tree lock, to see whether it is held */

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

/*
 * A memory.min or memory.low write racing the group's destroy: either the
 * setter finds the group offline (-ENODEV), or its store lands before the
 * destroy's reset to 0; after both, the group protects nothing and its
 * parent's sums of protected usage count nothing of it.  The setter checks
 * online and stores under the tree lock, which the destroy takes.
 *
 * The explore hook stops the setter at its store of the setting (before
 * it is made) and starts the destroy on another thread there.  If the
 * setter holds the tree lock, as it must, the destroy waits for it;
 * otherwise the destroy runs to its end first, between the setter's
 * online check and its store.  Mutant H5: the store made after the lock
 * is dropped, which leaves the offline group protecting @prot pages.
 */
static struct protection_race {
	struct pcstock_group *g;
	const void *store;		/* the setting the setter writes */
	bool armed;
	pthread_t destroyer;
	int started;			/* pthread_create()'s */
	bool joined;
	int destroyed;			/* the destroy's return */
} race;

static void *destroy_fn(void *arg)
{
	race.destroyed = pcstock_group_destroy(arg);
	return NULL;
}

static void destroy_at_store(enum pcs_atomic_op op, const void *obj)
{
	if (!race.armed || op != PCS_OP_STORE || obj != race.store)
		return;
	race.armed = false;
	race.started = pthread_create(&race.destroyer, NULL, destroy_fn,
				      race.g);
	if (race.started || pthread_mutex_trylock(&fx.t->lock))
		return;		/* the setter holds it: the destroy waits */
	pthread_mutex_unlock(&fx.t->lock);
	race.joined = !pthread_join(race.destroyer, NULL);
}

static void protection_write_racing_destroy(bool low)
{
	const unsigned long prot = 40, held = 100;
	struct pcstock_group *p = mkgroup(fx.root, "p");
	struct pcstock_group *b = mkgroup(p, "b");
	struct pcstock_group *c = mkgroup(p, "c");
	const struct pcstock_counter *pm = pcstock_group_memory(p);
	const struct pcstock_counter *cm = pcstock_group_memory(c);
	int (*set)(struct pcstock_group *, unsigned long) =
		low ? pcstock_group_set_low : pcstock_group_set_min;
	int ret;

	assert_int_equal(pcstock_group_charge(b, held, 0), 0);
	assert_int_equal(pcstock_group_charge(c, held, 0), 0);
	assert_int_equal(set(b, prot), 0);
	race = (struct protection_race){
		.g = c,
		.store = low ? (const void *)&cm->low : (const void *)&cm->min,
		.armed = true,
	};
	pcstock_explore_hook = destroy_at_store;
	ret = set(c, prot);
	assert_false(race.armed);
	assert_int_equal(race.started, 0);
	if (!race.joined)
		assert_int_equal(pthread_join(race.destroyer, NULL), 0);
	pcstock_explore_hook = NULL;
	assert_int_equal(race.destroyed, 0);
	assert_true(ret == 0 || ret == -ENODEV);
	assert_int_equal(low ? pcstock_counter_low(cm) : pcstock_counter_min(cm),
			 0);
	assert_int_equal(low ? pcstock_counter_children_low_usage(pm) :
			       pcstock_counter_children_min_usage(pm),
			 prot);

	pcstock_group_uncharge(c, held);
	pcstock_group_put(c);
	pcstock_group_uncharge(b, held);
	rmgroup(b);
	rmgroup(p);
}

static void test_protection_write_racing_destroy(void **state)
{
	protection_write_racing_destroy(false);
	protection_write_racing_destroy(true);
}

/* @argv[1]: a cmocka test filter, on the names "case" and "case/policy". */
int main(int argc, char **argv)
{
	static const struct case_def cases[] = {
		PER_POLICY(test_protection_selftest_tree),
		PER_POLICY(test_offline_group_drops_protection),
		ONCE(test_protection_write_racing_destroy),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return run_cases("test_protection", cases,
			 sizeof(cases) / sizeof(cases[0]));
}
