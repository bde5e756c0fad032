// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_high_race.c - a tree's destroy against other threads' over-high
 * records: it reads records made by threads it never synchronised with,
 * and it drops one while its owner replaces the group in it (the second
 * case, below).
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

#include "atomic.h"
#include "group.h"
#include "hierarchy_helpers.h"
#include "rcu.h"

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

/*
 * A record's group changes hands by exchange only: a tree's destroy that
 * drops the record (pcs_high_recs_drop()) between the owner's read of its
 * old group and its write of the new one leaves the owner nothing to put.
 * Not left to timing: the explore hook stops the owner at its first write
 * after it took its reference on the new group (the record's exchange)
 * and runs the drop there, on another thread.  The owner stays in a
 * read-side section throughout, so the old group, whatever its count,
 * is not freed before the count is read.
 */
static struct {
	struct pcstock_group *next;	/* the owner's new group */
	struct pcstock_tree *dropped;	/* whose records the drop lets go */
	pthread_t owner;
	bool armed, ran;
} hr;

static void *drop_records(void *arg)
{
	(void)arg;
	pcs_high_recs_drop(hr.dropped);
	return NULL;
}

static void drop_at_exchange(enum pcs_atomic_op op, const void *obj)
{
	pthread_t th;

	if (hr.ran || !pthread_equal(pthread_self(), hr.owner))
		return;
	if (!hr.armed) {
		hr.armed = op == PCS_OP_ADD && obj == &hr.next->refs;
		return;
	}
	if (op == PCS_OP_LOAD || op == PCS_OP_FENCE || op == PCS_OP_YIELD)
		return;
	hr.ran = true;
	if (!pthread_create(&th, NULL, drop_records, NULL))
		pthread_join(th, NULL);
}

static void test_record_exchange_against_a_drop(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE };
	struct pcstock_domain *d;
	struct pcstock_tree *t1, *t2;
	struct pcstock_group *a, *b;
	long refs;
	int err;

	(void)state;
	assert_int_equal(pcstock_domain_create(NULL, &d), 0);
	assert_int_equal(pcstock_tree_create(d, &attr, &t1), 0);
	assert_int_equal(pcstock_tree_create(d, &attr, &t2), 0);
	/* a, destroyed, held by the record and by us (to count it). */
	a = mkgroup(pcstock_tree_root(t1), "a");
	assert_int_equal(pcstock_group_set_high(a, 1), 0);
	assert_int_equal(pcstock_group_charge(a, 8, 0), 0);
	assert_int_equal(pcstock_group_uncharge(a, 8), 0);
	pcstock_group_get(a);
	rmgroup(a);
	b = mkgroup(pcstock_tree_root(t2), "b");
	assert_int_equal(pcstock_group_set_high(b, 1), 0);
	hr.next = b;
	hr.dropped = t1;
	hr.owner = pthread_self();
	rcu_lock();
	pcstock_explore_hook = drop_at_exchange;
	err = pcstock_group_charge(b, 16, 0);
	pcstock_explore_hook = NULL;
	refs = pcs_load(&a->refs, PCS_RELAXED);
	rcu_unlock();
	assert_int_equal(err, 0);
	assert_true(hr.ran);
	/* The drop put the record's reference and the owner none: ours. */
	assert_int_equal(refs, 1);
	/* A dropped record is no debt: b's pages only. */
	assert_int_equal(pcstock_over_high_pages(), 16);
	pcstock_handle_over_high();
	assert_int_equal(pcstock_group_uncharge(b, 16), 0);
	rmgroup(b);
	pcstock_group_put(a);
	assert_int_equal(pcstock_tree_destroy(t2), 0);
	assert_int_equal(pcstock_tree_destroy(t1), 0);
	assert_int_equal(pcstock_domain_destroy(d), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_destroy_reads_a_record_made_after_its_lock),
		cmocka_unit_test(test_record_exchange_against_a_drop),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);

	return cmocka_run_group_tests(tests, NULL, NULL);
}
