// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_groups.c - the group API a daemon builds on: user data (also seen
 * from a callback) and its release, the post-order walk, the path formatter, the name
 * index under many siblings, churn and allocation failure, and the count
 * of refused charges.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_helpers.h"
#include "internal.h"

static struct pcstock_domain *dom;
static struct pcstock_tree *tree;
static struct pcstock_group *root;
static void *seen_data;

static long reclaim_cb(struct pcstock_group *g, unsigned long nr_pages,
		       void *arg)
{
	seen_data = pcstock_group_data(g);
	return 0;
}

static int setup(void **state)
{
	struct pcstock_domain_attr dattr = { 2, PCSTOCK_CPU_SIM, NULL };
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE,
					  .reclaim = reclaim_cb };

	if (pcstock_domain_create(&dattr, &dom) || pcstock_cpu_enter(dom, 0) ||
	    pcstock_tree_create(dom, &attr, &tree))
		return -1;
	root = pcstock_tree_root(tree);
	seen_data = NULL;
	return 0;
}

static int teardown(void **state)
{
	int err;

	pcstock_fault_hook = NULL;
	err = pcstock_tree_destroy(tree);
	pcstock_cpu_exit(dom);
	pcstock_domain_destroy(dom);
	return err;
}

static void test_data_at_create_and_in_callback(void **state)
{
	int tenant = 42;
	struct pcstock_group *g = NULL, *plain;

	assert_int_equal(pcstock_group_create_data(root, "t", &tenant, &g), 0);
	plain = mkgroup(root, "plain");
	assert_ptr_equal(pcstock_group_data(g), &tenant);
	assert_null(pcstock_group_data(plain));
	assert_null(pcstock_group_data(root));
	assert_null(pcstock_group_data(NULL));
	assert_int_equal(pcstock_group_create_data(root, "t", &tenant, &plain),
			 -EEXIST);

	assert_int_equal(pcstock_group_set_max(g, 1), 0);
	assert_int_equal(pcstock_group_charge(g, 2, PCSTOCK_CHARGE_NORETRY),
			 -ENOMEM);
	assert_ptr_equal(seen_data, &tenant);
	rmgroup(g);
	rmgroup(plain);
}

/* A tenant record whose lifetime the tree's release callback ends. */
struct tenant_rec {
	atomic_int released;		/* release calls with this record */
	atomic_int order;		/* when (1, 2, ...: release order) */
	atomic_bool last_put_started;	/* its group's last put began */
	atomic_bool early;		/* released before that */
};

static atomic_int releases;		/* every call */
static int release_marker;		/* the tree's cb_arg */
static atomic_bool release_bad_arg;

static void release_cb(void *data, void *arg)
{
	struct tenant_rec *r = data;

	if (arg != &release_marker)
		atomic_store(&release_bad_arg, true);
	if (!atomic_load(&r->last_put_started))
		atomic_store(&r->early, true);
	atomic_store(&r->order, atomic_fetch_add(&releases, 1) + 1);
	atomic_fetch_add(&r->released, 1);
}

/*
 * The data's documented lifetime: release is called once per group with
 * data, only after the group's last reference (a child's free puts its
 * parent's, so a parent goes after its children), never for NULL data or a
 * failed create, and every pending release has run when
 * pcstock_tree_destroy() returns, -EBUSY included.
 */
static void test_release_called_once_after_last_put(void **state)
{
	struct pcstock_tree_attr attr = {
		.policy = PCSTOCK_TREE_DEFAULT,
		.cb_arg = &release_marker,
		.release = release_cb,
	};
	struct tenant_rec a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	struct pcstock_group *ga, *gb, *gc, *gd, *plain;
	struct pcstock_tree *t;

	atomic_store(&releases, 0);
	atomic_store(&release_bad_arg, false);
	assert_int_equal(pcstock_tree_create(dom, &attr, &t), 0);
	assert_int_equal(pcstock_group_create_data(pcstock_tree_root(t), "a",
						   &a, &ga), 0);
	assert_int_equal(pcstock_group_create_data(ga, "b", &b, &gb), 0);
	assert_int_equal(pcstock_group_create_data(ga, "c", &c, &gc), 0);
	assert_int_equal(pcstock_group_create_data(ga, "b", &d, &gd), -EEXIST);
	plain = mkgroup(ga, "plain");
	assert_int_equal(pcstock_group_charge(gc, 3, 0), 0);
	pcstock_group_get(gc);		/* a holder of c's pages */

	atomic_store(&b.last_put_started, true);
	rmgroup(gb);			/* b's last reference */
	rmgroup(gc);			/* not c's: the holder keeps one */
	rmgroup(plain);
	assert_int_equal(pcstock_group_destroy(ga), 0);
	atomic_store(&a.last_put_started, true);	/* its children's */
	pcstock_group_put(ga);

	/* Waits for every pending free, then finds c still referenced. */
	assert_int_equal(pcstock_tree_destroy(t), -EBUSY);
	assert_int_equal(atomic_load(&b.released), 1);
	assert_int_equal(atomic_load(&c.released), 0);
	assert_int_equal(atomic_load(&a.released), 0);
	assert_int_equal(atomic_load(&releases), 1);

	pcstock_group_uncharge(gc, 3);
	atomic_store(&c.last_put_started, true);
	pcstock_group_put(gc);
	assert_int_equal(pcstock_tree_destroy(t), 0);
	assert_int_equal(atomic_load(&a.released), 1);
	assert_int_equal(atomic_load(&b.released), 1);
	assert_int_equal(atomic_load(&c.released), 1);
	assert_int_equal(atomic_load(&d.released), 0);
	assert_int_equal(atomic_load(&releases), 3);
	assert_true(atomic_load(&c.order) < atomic_load(&a.order));
	assert_false(atomic_load(&a.early) || atomic_load(&b.early) ||
		     atomic_load(&c.early));
	assert_false(atomic_load(&release_bad_arg));
}

struct visit_log {
	const struct pcstock_group *order[8];
	int n;
	int stop_at;
};

static int record(struct pcstock_group *g, void *arg)
{
	struct visit_log *log = arg;

	log->order[log->n++] = g;
	return log->n == log->stop_at ? 7 : 0;
}

static int position(const struct visit_log *log, const struct pcstock_group *g)
{
	for (int i = 0; i < log->n; i++)
		if (log->order[i] == g)
			return i;
	fail_msg("%s not visited", pcstock_group_name(g));
	return -1;
}

static void test_walk_post_children_first(void **state)
{
	struct pcstock_group *a = mkgroup(root, "a"), *b = mkgroup(root, "b");
	struct pcstock_group *a1 = mkgroup(a, "a1"), *a2 = mkgroup(a, "a2");
	struct pcstock_group *a11 = mkgroup(a1, "a11");
	struct pcstock_group *all[] = { a, b, a1, a2, a11 };
	struct visit_log log = { .stop_at = -1 };

	assert_int_equal(pcstock_group_walk_post(root, record, &log), 0);
	assert_int_equal(log.n, 6);
	assert_ptr_equal(log.order[5], root);
	for (int i = 0; i < 5; i++) {
		const struct pcstock_group *p = pcstock_group_parent(all[i]);

		assert_true(position(&log, all[i]) < position(&log, p));
	}
	/* A subtree: its descendants, then itself; nothing outside. */
	log = (struct visit_log){ .stop_at = -1 };
	assert_int_equal(pcstock_group_walk_post(a, record, &log), 0);
	assert_int_equal(log.n, 4);
	assert_true(position(&log, a11) < position(&log, a1));
	assert_ptr_equal(log.order[3], a);
	/* A leaf is its own walk; a non-zero return stops it. */
	log = (struct visit_log){ .stop_at = -1 };
	assert_int_equal(pcstock_group_walk_post(a2, record, &log), 0);
	assert_int_equal(log.n, 1);
	log = (struct visit_log){ .stop_at = 2 };
	assert_int_equal(pcstock_group_walk_post(root, record, &log), 7);
	assert_int_equal(log.n, 2);
	assert_int_equal(pcstock_group_walk_post(NULL, record, &log), 0);

	/* The order visited is an order that destroys the subtree. */
	log = (struct visit_log){ .stop_at = -1 };
	pcstock_group_walk_post(a, record, &log);
	for (int i = 0; i < log.n; i++)
		assert_int_equal(pcstock_group_destroy(
					 (struct pcstock_group *)log.order[i]),
				 0);
	for (int i = 0; i < 4; i++)
		pcstock_group_put(all[i == 0 ? 0 : i + 1]);
	rmgroup(b);
}

static void test_path_snprintf_like(void **state)
{
	struct pcstock_group *a = mkgroup(root, "tenants");
	struct pcstock_group *b = mkgroup(a, "acme");
	char buf[32];

	memset(buf, 'x', sizeof(buf));
	assert_int_equal(pcstock_group_path(root, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "/");
	assert_int_equal(pcstock_group_path(b, buf, sizeof(buf)), 13);
	assert_string_equal(buf, "/tenants/acme");
	/* Truncation: the first size - 1 characters, the full length. */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(pcstock_group_path(b, buf, 10), 13);
	assert_string_equal(buf, "/tenants/");
	assert_int_equal(pcstock_group_path(b, buf, 3), 13);
	assert_string_equal(buf, "/t");
	assert_int_equal(pcstock_group_path(b, buf, 1), 13);
	assert_string_equal(buf, "");
	assert_int_equal(pcstock_group_path(b, NULL, 0), 13);
	assert_int_equal(pcstock_group_path(b, NULL, 4), -EINVAL);
	assert_int_equal(pcstock_group_path(NULL, buf, 4), -EINVAL);
	/* What it prints, lookup finds. */
	{
		struct pcstock_group *found = NULL;

		pcstock_group_path(b, buf, sizeof(buf));
		assert_int_equal(pcstock_group_lookup(root, buf, &found), 0);
		assert_ptr_equal(found, b);
		pcstock_group_put(found);
	}
	rmgroup(b);
	rmgroup(a);
}

#define MANY 3000

/*
 * Many siblings with similar names, churn that leaves deleted entries
 * behind and forces rebuilds, same names under other parents.
 */
static void test_name_index_many_siblings_and_churn(void **state)
{
	static struct pcstock_group *g[MANY];
	struct pcstock_group *other = mkgroup(root, "other");
	struct pcstock_group *dup, *found;
	char name[32];

	for (int i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		g[i] = mkgroup(root, name);
	}
	assert_int_equal(pcstock_group_create(root, "t7", &dup), -EEXIST);
	dup = mkgroup(other, "t7");	/* another parent: another key */
	for (int round = 0; round < 3; round++) {
		for (int i = round % 2; i < MANY; i += 2)
			rmgroup(g[i]);
		for (int i = 0; i < MANY; i++) {
			int err;

			snprintf(name, sizeof(name), "/t%d", i);
			err = pcstock_group_lookup(root, name, &found);
			if (i % 2 == round % 2) {
				assert_int_equal(err, -ENOENT);
				continue;
			}
			assert_int_equal(err, 0);
			assert_ptr_equal(found, g[i]);
			pcstock_group_put(found);
		}
		for (int i = round % 2; i < MANY; i += 2) {
			snprintf(name, sizeof(name), "t%d", i);
			g[i] = mkgroup(root, name);
		}
	}
	assert_int_equal(pcstock_group_lookup(root, "other/t7", &found), 0);
	assert_ptr_equal(found, dup);
	pcstock_group_put(found);
	for (int i = 0; i < MANY; i++)
		rmgroup(g[i]);
	rmgroup(dup);
	rmgroup(other);
}

static bool fail_slots(const char *site)
{
	return !strcmp(site, "names.slots");
}

/*
 * A rebuild that cannot allocate: creates go on while the table keeps an
 * empty slot (15 of its first 16), then fail with -ENOMEM leaving nothing
 * behind; once memory is back the table grows.
 */
static void test_name_index_rebuild_enomem(void **state)
{
	struct pcstock_group *g[40], *extra;
	struct pcstock_tree_stats st;
	char name[16];
	int n = 0, err = 0;

	pcstock_fault_hook = fail_slots;
	while (n < 40 && !err) {
		snprintf(name, sizeof(name), "g%d", n);
		err = pcstock_group_create(root, name, &g[n]);
		if (!err)
			n++;
	}
	pcstock_fault_hook = NULL;
	assert_int_equal(err, -ENOMEM);
	assert_int_equal(n, 15);
	pcstock_tree_stats(tree, &st);
	assert_int_equal(st.nr_groups, 16);
	assert_int_equal(pcstock_group_lookup(root, "g15", &extra), -ENOENT);
	g[n] = mkgroup(root, "g15");
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		assert_int_equal(pcstock_group_lookup(root, name, &extra), 0);
		assert_ptr_equal(extra, g[i]);
		pcstock_group_put(extra);
		rmgroup(g[i]);
	}
	assert_int_equal(pcstock_group_lookup(root, "g15", &extra), 0);
	assert_ptr_equal(extra, g[n]);
	pcstock_group_put(extra);
	rmgroup(g[n]);
}

static void test_refused_charges_counted(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");
	struct pcstock_group_stats st;

	assert_int_equal(pcstock_group_set_max(g, 4), 0);
	assert_int_equal(pcstock_group_charge(g, 4, 0), 0);
	assert_int_equal(pcstock_group_charge(g, 1, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_int_equal(pcstock_group_charge(g, 1, 0), -ENOMEM);
	/* Forced charges are not refused. */
	assert_int_equal(pcstock_group_charge(g, 1, PCSTOCK_CHARGE_NOFAIL), 0);
	pcstock_group_stats(g, &st);
	assert_int_equal(st.refused, 2);
	pcstock_group_stats(root, &st);
	assert_int_equal(st.refused, 0);
	pcstock_group_uncharge(g, 5);
	rmgroup(g);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_data_at_create_and_in_callback),
		T(test_release_called_once_after_last_put),
		T(test_walk_post_children_first),
		T(test_path_snprintf_like),
		T(test_name_index_many_siblings_and_churn),
		T(test_name_index_rebuild_enomem),
		T(test_refused_charges_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
