// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_high_race.c - a tree's destroy reads the over-high records of
 * threads it never synchronised with.
 *
 * pcstock_tree_destroy() walks every thread's record and tests the tree of
 * the group each names (pcs_high_recs_drop(), src/high.c).  That group may
 * have been created by the record's owner after the destroyer last
 * synchronised with it: the only thing that orders the group's
 * initialisation before the destroyer's read of its tree is the record's
 * exchange (release) and the destroyer's load of it (acquire).  Weakened,
 * the read races with the group's creation, which C11 leaves undefined.
 *
 * No assertion here can see that race: the read returns the right value on
 * every machine we run.  ThreadSanitizer can, and the sanitizer suite runs
 * this program against three planted bugs (tests/hierarchy.cmake): the
 * record's exchange relaxed, or acquire only, and the destroyer's load
 * relaxed.  So this program takes care that the two threads meet through
 * nothing but the record: the destroyer waits for the owner with a relaxed
 * flag, the owner's trees and domain are its own, and its record is listed
 * (under a lock the destroyer takes) before the group is created.
 * Without ThreadSanitizer it checks what the destroy must leave: the
 * owner's record, on another tree's group, intact.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_helpers.h"

static atomic_int recorded, destroyed;
static unsigned long owner_pages;

static void wait_for(atomic_int *flag)
{
	/* Relaxed: the wait itself must not order anything (see above). */
	while (!atomic_load_explicit(flag, memory_order_relaxed))
		sched_yield();
}

/* The record's owner: its own domain and tree, the group made late. */
static void *owner(void *arg)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE };
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *first, *late;

	(void)arg;
	assert_int_equal(pcstock_domain_create(NULL, &d), 0);
	assert_int_equal(pcstock_tree_create(d, &attr, &t), 0);
	/* A first record lists this thread's record under its lock. */
	first = mkgroup(pcstock_tree_root(t), "first");
	assert_int_equal(pcstock_group_set_high(first, 1), 0);
	assert_int_equal(pcstock_group_charge(first, 8, 0), 0);
	/* Then the group the destroyer will find, created after that. */
	late = mkgroup(pcstock_tree_root(t), "late");
	assert_int_equal(pcstock_group_set_high(late, 1), 0);
	assert_int_equal(pcstock_group_charge(late, 16, 0), 0);
	atomic_store_explicit(&recorded, 1, memory_order_relaxed);
	wait_for(&destroyed);
	/* The other tree's destroy left this record alone. */
	owner_pages = pcstock_over_high_pages();
	pcstock_handle_over_high();
	assert_int_equal(pcstock_group_uncharge(late, 16), 0);
	assert_int_equal(pcstock_group_uncharge(first, 8), 0);
	rmgroup(late);
	rmgroup(first);
	assert_int_equal(pcstock_tree_destroy(t), 0);
	assert_int_equal(pcstock_domain_destroy(d), 0);
	return NULL;
}

static void test_destroy_reads_a_record_made_after_its_lock(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE };
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	pthread_t th;

	(void)state;
	assert_int_equal(pcstock_domain_create(NULL, &d), 0);
	assert_int_equal(pcstock_tree_create(d, &attr, &t), 0);
	assert_int_equal(pthread_create(&th, NULL, owner, NULL), 0);
	wait_for(&recorded);
	assert_int_equal(pcstock_tree_destroy(t), 0);
	atomic_store_explicit(&destroyed, 1, memory_order_relaxed);
	assert_int_equal(pthread_join(th, NULL), 0);
	/* Both charges' pages: a replaced group keeps the thread's debt. */
	assert_int_equal(owner_pages, 24);
	assert_int_equal(pcstock_domain_destroy(d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_destroy_reads_a_record_made_after_its_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
