// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_groups.c - the group API a daemon builds on: user data (also seen
 * from a callback) and its release, the post-order walk, the path
 * formatter, the name index under many siblings, churn and allocation
 * failure, the count of refused charges, and a thread using two THREAD
 * domains whose CPU table entries collide.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <pcstock/hierarchy.h>
#include <pcstock/percpu.h>
#include <pcstock/stock.h>

#include "affinity_helpers.h"
#include "atomic.h"
#include "domain.h"
#include "hierarchy_helpers.h"
#include "internal.h"
#include "rcu.h"

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
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE,
					  .reclaim = reclaim_cb };

	if (sim_tree_open(2, &attr, &dom, &tree))
		return -1;
	root = pcstock_tree_root(tree);
	seen_data = NULL;
	return 0;
}

static int teardown(void **state)
{
	pcstock_fault_hook = NULL;
	return sim_tree_close(dom, tree);
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

/* ---- THREAD domains sharing a CPU table entry ---------------------------- */

#define COLLIDE_CPUS 4U
#define COLLIDE_BATCH 64U
#define COLLIDE_CHARGES 1000U

/* What the thread does on the second domain between its charges. */
enum collide_trigger {
	TRIGGER_THIS_CPU,	/* pcstock_this_cpu() */
	TRIGGER_MEMCG7,		/* a group charge of a memcg7 tree */
	TRIGGER_NONE,		/* a group charge of an unstocked tree */
};

struct collide_case {
	enum pcstock_tree_policy policy;	/* of the first domain's tree */
	enum collide_trigger trigger;
};

static struct pcstock_domain *thread_domain(void)
{
	struct pcstock_domain_attr attr = { COLLIDE_CPUS, PCSTOCK_CPU_THREAD,
					    NULL };
	struct pcstock_domain *d = NULL;

	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	return d;
}

/* A THREAD domain whose entry of the thread's CPU table is @d's. */
static struct pcstock_domain *colliding_domain(struct pcstock_domain *d)
{
	struct pcstock_domain *fill[PCS_THREAD_CACHE], *e;
	unsigned int i, n = 0;

	for (;;) {
		e = thread_domain();
		if (e->hit_key % PCS_THREAD_CACHE == d->hit_key % PCS_THREAD_CACHE)
			break;
		assert_true(n < PCS_THREAD_CACHE);
		fill[n++] = e;
	}
	for (i = 0; i < n; i++)
		assert_int_equal(pcstock_domain_destroy(fill[i]), 0);
	return e;
}

static struct pcstock_tree *tree_on(struct pcstock_domain *d,
				    enum pcstock_tree_policy policy)
{
	struct pcstock_tree_attr attr = { .policy = policy,
					  .batch = policy ==
							   PCSTOCK_TREE_MEMCG7 ?
							   0 :
							   COLLIDE_BATCH };
	struct pcstock_tree *t = NULL;

	assert_int_equal(pcstock_tree_create(d, &attr, &t), 0);
	return t;
}

static int slot_value(struct pcstock_domain *d,
		      const struct pcstock_counter *c, unsigned int cpu)
{
	return atomic_load((atomic_int *)pcstock_percpu_ptr(d, c->stock_slots,
							    cpu));
}

/*
 * The thread charges a group of a stocked tree on THREAD domain d, then
 * makes one call on domain e, whose id shares d's entry of the thread's
 * CPU table, so e's CPU evicts d's; then it charges d's group page by
 * page.  The hit cache must follow the table: hits and refills on one
 * CPU, the slot within its bounds, every page accounted for.
 */
static void test_thread_table_collision(void **state)
{
	const struct collide_case *cc = *state;
	struct pcstock_domain *d = thread_domain(), *e = colliding_domain(d);
	struct pcstock_tree *t = tree_on(d, cc->policy), *u = NULL;
	struct pcstock_group *g = mkgroup(pcstock_tree_root(t), "a");
	struct pcstock_group *h = NULL;
	struct pcstock_counter *mem =
		(struct pcstock_counter *)pcstock_group_memory(g);
	struct pcstock_stock_stats st;
	unsigned long held = 0, hits;
	unsigned int i, cpu;
	int top = 0;

	if (cc->trigger != TRIGGER_THIS_CPU) {
		u = tree_on(e, cc->trigger == TRIGGER_MEMCG7 ?
				       PCSTOCK_TREE_MEMCG7 :
				       PCSTOCK_TREE_NONE);
		h = mkgroup(pcstock_tree_root(u), "b");
	}
	/* The thread's CPU of d is cached. */
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);
	held++;
	if (h) {
		assert_int_equal(pcstock_group_charge(h, 1, 0), 0);
		assert_int_equal(pcstock_group_uncharge(h, 1), 0);
	} else {
		assert_true(pcstock_this_cpu(e) >= 0);
	}
	pcstock_counter_stock_stats(mem, &st);
	hits = st.hits;
	for (i = 0; i < COLLIDE_CHARGES; i++) {
		assert_int_equal(pcstock_group_charge(g, 1, 0), 0);
		held++;
		for (cpu = 0; cpu < COLLIDE_CPUS; cpu++)
			top = PCS_MAX(top, slot_value(d, mem, cpu));
	}
	pcstock_counter_stock_stats(mem, &st);
	hits = st.hits - hits;
	/* Every CPU's slot stays within batch (DEFAULT) or a miss's refill. */
	assert_true(top <= (int)(cc->policy == PCSTOCK_TREE_V4 ?
					 2 * COLLIDE_BATCH :
					 COLLIDE_BATCH));
	if (cc->policy == PCSTOCK_TREE_DEFAULT)
		assert_true(hits >= COLLIDE_CHARGES * 9 / 10);
	/* A disabled, drained stock leaves exactly the pages held charged. */
	pcstock_counter_disable_stock(mem);
	for (cpu = 0; cpu < COLLIDE_CPUS; cpu++)
		pcstock_counter_drain_stock(mem, cpu);
	assert_int_equal(pcstock_counter_read(mem), held);
	assert_int_equal(pcstock_group_uncharge(g, held), 0);
	assert_int_equal(pcstock_counter_read(mem), 0);

	rmgroup(g);
	assert_int_equal(pcstock_tree_destroy(t), 0);
	if (h) {
		rmgroup(h);
		assert_int_equal(pcstock_tree_destroy(u), 0);
	}
	assert_int_equal(pcstock_domain_destroy(e), 0);
	assert_int_equal(pcstock_domain_destroy(d), 0);
}

#define COLLIDE(pol, trig)                                                   \
	{ "test_thread_table_collision/" #pol "/" #trig,                     \
	  test_thread_table_collision, NULL, NULL,                           \
	  &(struct collide_case){ PCSTOCK_TREE_##pol, TRIGGER_##trig } }

/*
 * A group's RCU free puts its parent, whose own free then waits for
 * another grace period: a chain destroyed leaf first is freed one level
 * per grace period.  pcstock_tree_destroy() waits for every pending free,
 * in a bounded number of grace periods whatever the depth.
 */
#define CHAIN_DEPTH 1000
/*
 * Barriers until no free runs (two: one runs the queued frees, the next
 * finds none; three if a free that began before the destroy queued its
 * parent), then one grace period for the groups the destroyer frees.
 */
#define CHAIN_MAX_WAITS 4

static void test_tree_destroy_waits_bounded_grace_periods(void **state)
{
	struct pcstock_group *g[CHAIN_DEPTH];
	unsigned long waits;

	g[0] = mkgroup(root, "c");
	for (unsigned int i = 1; i < CHAIN_DEPTH; i++)
		g[i] = mkgroup(g[i - 1], "c");
	for (unsigned int i = CHAIN_DEPTH; i-- > 0;)
		rmgroup(g[i]);
	waits = atomic_load(&pcs_rcu_waits);
	assert_int_equal(pcstock_tree_destroy(tree), 0);
	tree = NULL;
	waits = atomic_load(&pcs_rcu_waits) - waits;
	print_message("%lu grace periods waited for a chain of %u\n", waits,
		      CHAIN_DEPTH);
	assert_in_range(waits, 1, CHAIN_MAX_WAITS);
}

/* ---- RSEQ hits ------------------------------------------------------------ */

/* Accesses the library made (schedule-explorer hook), and one hop. */
static unsigned int ops_seen;
static const void *hop_slot;
static cpu_set_t hop_to;
static bool hopped;

static void count_hook(enum pcs_atomic_op op, const void *obj)
{
	ops_seen++;
	/* The hit read the slot of its CPU and is about to take from it. */
	if (!hopped && hop_slot && obj == hop_slot && op == PCS_OP_CAS) {
		hopped = true;
		assert_int_equal(sched_setaffinity(0, sizeof(hop_to), &hop_to),
				 0);
	}
}

/* The library accesses one 1-page group charge makes. */
static unsigned int charge_ops(struct pcstock_group *g)
{
	ops_seen = 0;
	pcstock_explore_hook = count_hook;
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);
	pcstock_explore_hook = NULL;
	return ops_seen;
}

static unsigned long hits_of(struct pcstock_group *g)
{
	struct pcstock_stock_stats st;

	pcstock_counter_stock_stats(pcstock_group_memory(g), &st);
	return st.hits;
}

/*
 * On an RSEQ domain (what pcstock_domain_create(NULL) gives) a hit takes
 * the fast path, the one a SIM CPU's takes, with no more accesses.  A
 * thread migrated between reading its CPU and taking from the slot takes
 * from its old CPU's slot (an atomic: no page is lost), and its next
 * charge finds the new CPU, caches it and hits there.
 */
static void test_rseq_hit_follows_the_os_cpu(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_DEFAULT,
					  .batch = COLLIDE_BATCH };
	struct pcstock_domain *d = NULL;
	struct pcstock_tree *t = NULL;
	struct pcstock_group *g;
	const struct pcstock_counter *mem;
	cpu_set_t all;
	int a, b, ca, cb;
	unsigned int sim_ops;

	(void)state;
	/* The reference: a hit on the fixture's SIM CPU. */
	assert_int_equal(pcstock_tree_create(dom, &attr, &t), 0);
	g = mkgroup(pcstock_tree_root(t), "sim");
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);
	sim_ops = charge_ops(g);
	assert_int_equal(hits_of(g), 1);
	assert_int_equal(pcstock_group_uncharge(g, 2), 0);
	rmgroup(g);
	assert_int_equal(pcstock_tree_destroy(t), 0);

	/*
	 * The domain before the pin: the real machine is restricted to the
	 * process's binding, which on Linux is its threads' together.  Made
	 * after, it would hold b only while another thread (liburcu's
	 * call_rcu thread) ran unpinned: a run whose frees never woke that
	 * thread got a domain of CPU a alone, and no CPU for b.
	 */
	two_cpus_or_skip(&all, &a, &b);
	assert_int_equal(pcstock_domain_create(NULL, &d), 0);
	pin_to(a);
	ca = pcstock_this_cpu(d);
	assert_true(ca >= 0);
	assert_int_equal(pcstock_tree_create(d, &attr, &t), 0);
	g = mkgroup(pcstock_tree_root(t), "g");
	mem = pcstock_group_memory(g);

	/* A miss caches the CPU; the hit then costs what a SIM CPU's does. */
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);
	assert_int_equal(slot_value(d, mem, (unsigned int)ca),
			 COLLIDE_BATCH - 1);
	assert_int_equal(charge_ops(g), sim_ops);
	assert_int_equal(hits_of(g), 1);

	/* Migrated inside the hit: the old CPU's slot serves it. */
	CPU_ZERO(&hop_to);
	CPU_SET(b, &hop_to);
	hopped = false;
	hop_slot = pcstock_percpu_ptr(d, mem->stock_slots, (unsigned int)ca);
	charge_ops(g);
	hop_slot = NULL;
	assert_true(hopped);
	assert_int_equal(sched_getcpu(), b);
	assert_int_equal(hits_of(g), 2);
	assert_int_equal(slot_value(d, mem, (unsigned int)ca),
			 COLLIDE_BATCH - 3);
	cb = pcstock_this_cpu(d);
	assert_true(cb >= 0 && cb != ca);

	/* Then the new CPU: a miss there, and hits from its slot. */
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);
	assert_int_equal(slot_value(d, mem, (unsigned int)cb),
			 COLLIDE_BATCH - 1);
	assert_int_equal(charge_ops(g), sim_ops);
	assert_int_equal(hits_of(g), 3);
	assert_int_equal(slot_value(d, mem, (unsigned int)cb),
			 COLLIDE_BATCH - 2);
	assert_int_equal(slot_value(d, mem, (unsigned int)ca),
			 COLLIDE_BATCH - 3);
	assert_int_equal(pcstock_counter_read(mem),
			 5 + pcstock_counter_stock_pages(mem));

	assert_int_equal(pcstock_group_uncharge(g, 5), 0);
	rmgroup(g);
	assert_int_equal(pcstock_tree_destroy(t), 0);
	assert_int_equal(pcstock_domain_destroy(d), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
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
		COLLIDE(DEFAULT, THIS_CPU),
		COLLIDE(DEFAULT, MEMCG7),
		COLLIDE(DEFAULT, NONE),
		COLLIDE(V4, THIS_CPU),
		COLLIDE(V4, MEMCG7),
		COLLIDE(V4, NONE),
		T(test_tree_destroy_waits_bounded_grace_periods),
		T(test_rseq_hit_follows_the_os_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
