// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_hierarchy_misuse.c - the group API against misuse, one case per
 * crash, undefined behaviour or silently wrong result a daemon author hit:
 * the root's reference, a put too many, NULL readers, bad group names, a
 * domain destroyed under its tree or counters, leaked pages at tree
 * destruction, and a pool thread's over-high record pinning a tree.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include <pcstock/hierarchy.h>
#include <pcstock/stock.h>

#include "abort_helpers.h"
#include "hierarchy_helpers.h"

struct fixture {
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *root;
};

static struct fixture fx;

static int setup(void **state)
{
	struct pcstock_domain_attr attr = { 4, PCSTOCK_CPU_SIM, NULL };

	memset(&fx, 0, sizeof(fx));
	if (pcstock_domain_create(&attr, &fx.d) ||
	    pcstock_cpu_enter(fx.d, 0) ||
	    pcstock_tree_create(fx.d, NULL, &fx.t))
		return -1;
	fx.root = pcstock_tree_root(fx.t);
	return 0;
}

static int teardown(void **state)
{
	int err = fx.t ? pcstock_tree_destroy(fx.t) : 0;

	pcstock_cpu_exit(fx.d);
	return err ? err : pcstock_domain_destroy(fx.d);
}

/* tree_root() hands out no reference: puts on the root change nothing. */
static void test_root_is_immune_to_put(void **state)
{
	struct pcstock_group *a, *r = NULL;

	for (int i = 0; i < 3; i++)
		pcstock_group_put(fx.root);
	pcstock_group_get(fx.root);
	assert_int_equal(pcstock_group_lookup(fx.root, "", &r), 0);
	assert_ptr_equal(r, fx.root);
	pcstock_group_put(r);
	a = mkgroup(fx.root, "a");	/* the root still works */
	assert_int_equal(pcstock_group_charge(a, 3, 0), 0);
	assert_int_equal(pcstock_group_usage_exact(fx.root), 3);
	assert_int_equal(pcstock_group_uncharge(a, 3), 0);
	rmgroup(a);
}

static void put_twice_online(void *arg)
{
	struct pcstock_group *a = mkgroup(fx.root, "twice");

	pcstock_group_put(a);	/* the creator's */
	pcstock_group_put(a);	/* the tree's: too many */
}

static void put_twice_offline(void *arg)
{
	struct pcstock_group *a = mkgroup(fx.root, "twice");

	pcstock_group_get(a);
	assert_int_equal(pcstock_group_destroy(a), 0);
	pcstock_group_put(a);
	pcstock_group_put(a);	/* the last one: freed after a grace period */
	pcstock_group_put(a);	/* too many, before the free */
}

/* A double put is a documented abort, not a free under the tree. */
static void test_double_put_aborts(void **state)
{
	expect_abort(put_twice_online, NULL,
		     "group \"twice\" (");
	expect_abort(put_twice_offline, NULL,
		     "put more often than it was got");
}

/* Readers accept NULL as the header documents; commands say -EINVAL. */
static void test_null_readers(void **state)
{
	struct pcstock_group_stats st;
	struct pcstock_tree_stats ts;

	memset(&st, 0xff, sizeof(st));
	memset(&ts, 0xff, sizeof(ts));
	assert_null(pcstock_tree_root(NULL));
	assert_null(pcstock_tree_domain(NULL));
	assert_int_equal(pcstock_tree_policy(NULL), PCSTOCK_TREE_NR_POLICIES);
	pcstock_tree_stats(NULL, &ts);
	assert_int_equal(ts.nr_groups, 0);
	assert_int_equal(ts.memcg7.hits, 0);
	pcstock_tree_stats(fx.t, NULL);
	assert_null(pcstock_group_name(NULL));
	assert_null(pcstock_group_parent(NULL));
	assert_null(pcstock_group_tree(NULL));
	assert_false(pcstock_group_online(NULL));
	assert_null(pcstock_group_memory(NULL));
	assert_null(pcstock_group_memsw(NULL));
	assert_int_equal(pcstock_group_usage(NULL), 0);
	assert_int_equal(pcstock_group_usage_exact(NULL), 0);
	assert_int_equal(pcstock_group_memsw_usage(NULL), 0);
	assert_int_equal(pcstock_group_stock_pages(NULL), 0);
	assert_int_equal(pcstock_group_events(NULL, PCSTOCK_EVENT_MAX), 0);
	pcstock_group_stats(NULL, &st);
	assert_int_equal(st.max, 0);
	assert_int_equal(st.events[PCSTOCK_EVENT_OOM], 0);
	assert_int_equal(st.stock.hits, 0);
	pcstock_group_stats(fx.root, NULL);
	pcstock_group_get(NULL);
	pcstock_group_put(NULL);
	pcstock_group_drain_all(NULL);
	assert_int_equal(pcstock_group_walk(NULL, NULL, NULL), 0);
	assert_int_equal(pcstock_group_set_max(NULL, 1), -EINVAL);
	assert_int_equal(pcstock_group_charge(NULL, 1, 0), -EINVAL);
	assert_int_equal(pcstock_group_destroy(NULL), -EINVAL);
}

/* ".", "..", '/', control characters and overlong names are refused. */
static void test_group_names(void **state)
{
	static const char *const bad[] = {
		"", ".", "..", "a/b", "/", "a\nb", "tab\there", "\x1b[31m",
		"del\x7f",
	};
	char name[PCSTOCK_GROUP_NAME_MAX + 2];
	struct pcstock_group *g = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_int_equal(pcstock_group_create(fx.root, bad[i], &g),
				 -EINVAL);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';		/* 256 bytes */
	assert_int_equal(pcstock_group_create(fx.root, name, &g), -EINVAL);
	assert_null(g);
	name[PCSTOCK_GROUP_NAME_MAX] = '\0';	/* 255: fine */
	rmgroup(mkgroup(fx.root, name));
	rmgroup(mkgroup(fx.root, "..."));
	rmgroup(mkgroup(fx.root, ".hidden"));
	rmgroup(mkgroup(fx.root, "t\xc3\xa9nant"));	/* UTF-8 */
	rmgroup(mkgroup(fx.root, "with space"));
}

/* A domain in use by a tree or a stocked counter says -EBUSY. */
static void test_domain_destroy_busy(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_counter c;

	assert_int_equal(pcstock_domain_destroy(fx.d), -EBUSY);
	rmgroup(a);
	assert_int_equal(pcstock_tree_destroy(fx.t), 0);
	fx.t = NULL;
	pcstock_counter_init(&c, NULL, false);
	assert_int_equal(pcstock_counter_alloc_stock(&c, fx.d, 8,
						     PCSTOCK_STOCK_DEFAULT),
			 0);
	assert_int_equal(pcstock_domain_destroy(fx.d), -EBUSY);
	pcstock_counter_free_stock(&c);
	/* still intact: it can carry a new tree */
	assert_int_equal(pcstock_tree_create(fx.d, NULL, &fx.t), 0);
	fx.root = pcstock_tree_root(fx.t);
	assert_int_equal(pcstock_domain_destroy(NULL), 0);
}

/* Pages whose holder put its reference without uncharging are reported. */
static void test_tree_destroy_reports_leaked_pages(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");

	assert_int_equal(pcstock_group_charge(a, 5, 0), 0);
	rmgroup(a);			/* the 5 pages were never uncharged */
	assert_int_equal(pcstock_tree_destroy(fx.t), 5);
	fx.t = NULL;
}

struct pool_thread {
	struct pcstock_group *g;
	pthread_barrier_t *charged, *done;
	unsigned long pages_after;
	unsigned long delay_after;
};

/* Charges over high, then waits (a pool thread that never exits). */
static void *pool_worker(void *arg)
{
	struct pool_thread *p = arg;

	assert_int_equal(pcstock_group_charge(p->g, 100, 0), 0);
	assert_int_equal(pcstock_over_high_pages(), 100);
	assert_int_equal(pcstock_group_uncharge(p->g, 100), 0);
	pthread_barrier_wait(p->charged);
	pthread_barrier_wait(p->done);
	/* the destroyed tree took the record away */
	p->pages_after = pcstock_over_high_pages();
	p->delay_after = pcstock_handle_over_high();
	return NULL;
}

/*
 * Another thread's over-high record on a group no longer pins the tree:
 * pcstock_tree_destroy() drops it while that thread lives on.
 */
static void test_pool_thread_record_does_not_pin(void **state)
{
	pthread_barrier_t charged, done;
	struct pool_thread p = { .charged = &charged, .done = &done };
	pthread_t th;

	pthread_barrier_init(&charged, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	p.g = mkgroup(fx.root, "a");
	assert_int_equal(pcstock_group_set_high(p.g, 10), 0);
	assert_int_equal(pthread_create(&th, NULL, pool_worker, &p), 0);
	pthread_barrier_wait(&charged);
	rmgroup(p.g);
	assert_int_equal(pcstock_tree_destroy(fx.t), 0);	/* not -EBUSY */
	fx.t = NULL;
	pthread_barrier_wait(&done);
	pthread_join(th, NULL);
	assert_int_equal(p.pages_after, 0);
	assert_int_equal(p.delay_after, 0);
	pthread_barrier_destroy(&charged);
	pthread_barrier_destroy(&done);
}

#define CASE(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		CASE(test_root_is_immune_to_put),
		CASE(test_double_put_aborts),
		CASE(test_null_readers),
		CASE(test_group_names),
		CASE(test_domain_destroy_busy),
		CASE(test_tree_destroy_reports_leaked_pages),
		CASE(test_pool_thread_record_does_not_pin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
