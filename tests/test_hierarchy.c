// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_hierarchy.c - groups, sequentially, on a 4-CPU SIM domain: tree
 * lifecycle and bad input, each step of the charge flow (spec §3.6.2), the
 * memsw rollback, memory.high throttling figures (§3.6.3), the limit
 * writers (§3.6.4), the §5.3 protection numbers and allocation failures.
 *
 * Cases that depend on the stock run once per policy (the prestate is the
 * policy); flow steps that do not are run on the "none" policy, where every
 * charge walks the counters, so the callback counts are exact.
 */
#define _GNU_SOURCE		/* sched_getcpu(), CPU affinity */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <urcu-bp.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_helpers.h"
#include "atomic.h"
#include "internal.h"

#define NR_CPUS 4U
#define BATCH 64UL
#define MB(x) ((unsigned long)(x) * 256UL)	/* pages of 4 KiB */

struct fixture {
	enum pcstock_tree_policy policy;
	struct pcstock_policy_info info;	/* the design's properties */
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *root;
	/* callback behaviour and records */
	long reclaim_ret;		/* returned when free_from is NULL */
	struct pcstock_group *free_from; /* reclaim uncharges from here */
	unsigned long held;		/* pages free_from may give back */
	unsigned int reclaim_calls;
	unsigned long reclaim_asked;
	int claim_progress;		/* first calls claiming 1 page */
	int oom_progress;		/* first OOM calls reporting true */
	unsigned int oom_calls;
};

static struct fixture fx;

static long reclaim_cb(struct pcstock_group *g, unsigned long nr_pages,
		       void *arg)
{
	struct fixture *f = arg;
	unsigned long n;

	f->reclaim_calls++;
	f->reclaim_asked = nr_pages;
	if (f->claim_progress > 0) {
		f->claim_progress--;
		return 1;
	}
	if (!f->free_from)
		return f->reclaim_ret;
	n = nr_pages < f->held ? nr_pages : f->held;
	f->held -= n;
	pcstock_group_uncharge(f->free_from, n);
	return (long)n;
}

static int oom_cb(struct pcstock_group *g, void *arg)
{
	struct fixture *f = arg;

	f->oom_calls++;
	if (f->oom_progress > 0) {
		f->oom_progress--;
		return PCSTOCK_OOM_KILLED;
	}
	return PCSTOCK_OOM_NONE;
}

static int tree_open(enum pcstock_tree_policy policy, bool memsw,
		     bool recursive)
{
	struct pcstock_tree_attr attr = {
		.policy = policy,
		.memsw = memsw,
		.recursive_protection = recursive,
		.track_failcnt = true,
		.reclaim = reclaim_cb,
		.oom = oom_cb,
		.cb_arg = &fx,
	};

	if (fx.t && pcstock_tree_destroy(fx.t))
		return -1;
	fx.t = NULL;
	if (pcstock_tree_create(fx.d, &attr, &fx.t))
		return -1;
	fx.root = pcstock_tree_root(fx.t);
	return 0;
}

static int setup(void **state)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_SIM, NULL };
	enum pcstock_tree_policy policy = PCSTOCK_TREE_NONE;

	if (*state)
		policy = *(enum pcstock_tree_policy *)*state;
	memset(&fx, 0, sizeof(fx));
	fx.policy = policy;
	if (pcstock_tree_policy_info(policy, &fx.info))
		return -1;
	if (pcstock_domain_create(&attr, &fx.d) || pcstock_cpu_enter(fx.d, 0))
		return -1;
	return tree_open(policy, false, false);
}

static int teardown(void **state)
{
	int err;

	pcstock_handle_over_high();
	pcstock_fault_hook = NULL;
	err = pcstock_tree_destroy(fx.t);
	pcstock_cpu_exit(fx.d);
	pcstock_domain_destroy(fx.d);
	return err;
}

static void on_cpu(unsigned int cpu)
{
	move_to_cpu(fx.d, cpu);
}

static bool has_stock(void)
{
	return fx.info.stocks;
}

/* ---- tree and groups ----------------------------------------------------- */

static void test_tree_bad_input(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NR_POLICIES };
	struct pcstock_tree *t = NULL;
	enum pcstock_tree_policy p;

	assert_int_equal(pcstock_tree_create(NULL, NULL, &t), -EINVAL);
	assert_int_equal(pcstock_tree_create(fx.d, NULL, NULL), -EINVAL);
	assert_int_equal(pcstock_tree_create(fx.d, &attr, &t), -EINVAL);
	attr.policy = PCSTOCK_TREE_DEFAULT;
	attr.batch = PCSTOCK_STOCK_MAX_BATCH + 1;
	assert_int_equal(pcstock_tree_create(fx.d, &attr, &t), -EINVAL);
	assert_null(t);
	assert_int_equal(pcstock_tree_policy_parse("memcg7", &p), 0);
	assert_int_equal(p, PCSTOCK_TREE_MEMCG7);
	assert_int_equal(pcstock_tree_policy_parse("memcg8", &p), -EINVAL);
	assert_string_equal(pcstock_tree_policy_name(PCSTOCK_TREE_V4), "v4");
	assert_null(pcstock_tree_policy_name(PCSTOCK_TREE_NR_POLICIES));
	assert_int_equal(pcstock_tree_destroy(NULL), 0);
}

/* Every registered design answers for its properties; nothing else does. */
static void test_policy_info(void **state)
{
	struct pcstock_policy_info info = { .name = "untouched" };
	enum pcstock_tree_policy back;

	assert_int_equal(pcstock_tree_policy_info(PCSTOCK_TREE_NR_POLICIES,
						  &info), -EINVAL);
	assert_int_equal(pcstock_tree_policy_info((enum pcstock_tree_policy)-1,
						  &info), -EINVAL);
	assert_string_equal(info.name, "untouched");
	assert_int_equal(pcstock_tree_policy_info(PCSTOCK_TREE_DEFAULT, NULL),
			 -EINVAL);
	for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
		assert_int_equal(pcstock_tree_policy_info(
					 (enum pcstock_tree_policy)p, &info), 0);
		assert_string_equal(info.name, pcstock_tree_policy_name(
						       (enum pcstock_tree_policy)p));
		assert_int_equal(pcstock_tree_policy_parse(info.name, &back), 0);
		assert_int_equal(back, p);
		assert_true(info.max_batch >= 1);
		/* A design without stock neither batches nor refills. */
		if (!info.stocks)
			assert_false(info.per_counter || info.group_batch ||
				     info.uncharges_refill ||
				     info.exact_at_limit);
		/* Batching at group level and at the counter exclude. */
		assert_false(info.per_counter && info.group_batch);
	}
	/* The designs the kernel has, as the kernel has them. */
	assert_int_equal(pcstock_tree_policy_info(PCSTOCK_TREE_MEMCG7, &info),
			 0);
	assert_true(info.stocks && info.group_batch && info.uncharges_refill &&
		    info.caps_slots);
	assert_false(info.per_counter || info.exact_at_limit);
	assert_int_equal(pcstock_tree_policy_info(PCSTOCK_TREE_V4, &info), 0);
	/* The series' uncharge goes to the counters. */
	assert_true(info.stocks && info.per_counter);
	assert_false(info.uncharges_refill || info.exact_at_limit ||
		     info.caps_slots);
	assert_int_equal(info.counter_stock, PCSTOCK_STOCK_V4);
	assert_int_equal(pcstock_tree_policy_info(PCSTOCK_TREE_NONE, &info), 0);
	assert_false(info.stocks);
	assert_int_equal(pcstock_tree_policy_info(PCSTOCK_TREE_EXACT, &info),
			 0);
	assert_true(info.per_counter && info.exact_at_limit);
	assert_int_equal(info.counter_stock, PCSTOCK_STOCK_EXACT);
}

static void test_group_names_and_destroy(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a"), *b, *g = NULL;

	assert_int_equal(pcstock_group_create(fx.root, "a", &g), -EEXIST);
	assert_int_equal(pcstock_group_create(fx.root, "", &g), -EINVAL);
	assert_int_equal(pcstock_group_create(fx.root, "x/y", &g), -EINVAL);
	assert_int_equal(pcstock_group_create(NULL, "x", &g), -EINVAL);
	assert_null(g);
	b = mkgroup(a, "a");	/* same name, other parent */
	assert_int_equal(pcstock_group_destroy(fx.root), -EBUSY);
	assert_int_equal(pcstock_group_destroy(a), -EBUSY);
	assert_int_equal(pcstock_tree_destroy(fx.t), -EBUSY);
	rmgroup(b);
	assert_int_equal(pcstock_group_destroy(a), 0);
	assert_int_equal(pcstock_group_destroy(a), -ENOENT);
	assert_false(pcstock_group_online(a));
	assert_int_equal(pcstock_group_create(a, "c", &g), -ENOENT);
	assert_int_equal(pcstock_group_charge(a, 1, 0), -ENOENT);
	pcstock_group_put(a);
	a = mkgroup(fx.root, "a");	/* the name is free again */
	assert_string_equal(pcstock_group_name(a), "a");
	assert_ptr_equal(pcstock_group_parent(a), fx.root);
	assert_ptr_equal(pcstock_group_tree(a), fx.t);
	rmgroup(a);
}

static void test_destroyed_group_keeps_uncharging(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group *b = mkgroup(a, "b");

	assert_int_equal(pcstock_group_charge(b, 5, 0), 0);
	assert_int_equal(pcstock_group_destroy(b), 0);
	/* offline: its stock went up, the 5 pages are still charged */
	assert_int_equal(pcstock_group_usage(a), 5);
	assert_int_equal(pcstock_group_usage_exact(a), 5);
	assert_int_equal(pcstock_group_uncharge(b, 5), 0);
	assert_int_equal(pcstock_group_usage(b), 0);
	assert_int_equal(pcstock_group_usage(fx.root), 0);
	pcstock_group_put(b);
	rmgroup(a);
}

static int collect(struct pcstock_group *g, void *arg)
{
	char *buf = arg;

	strcat(buf, pcstock_group_name(g));
	strcat(buf, ".");
	return !strcmp(pcstock_group_name(g), "stop");
}

static void test_lookup_and_walk(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group *b = mkgroup(a, "b");
	struct pcstock_group *c = mkgroup(a, "c");
	struct pcstock_group *d = mkgroup(fx.root, "d");
	struct pcstock_group *g = NULL;
	char buf[64] = "";

	assert_int_equal(pcstock_group_lookup(fx.root, "a/b", &g), 0);
	assert_ptr_equal(g, b);
	pcstock_group_put(g);
	assert_int_equal(pcstock_group_lookup(fx.root, "/a/c/", &g), 0);
	assert_ptr_equal(g, c);
	pcstock_group_put(g);
	assert_int_equal(pcstock_group_lookup(a, "", &g), 0);
	assert_ptr_equal(g, a);
	pcstock_group_put(g);
	assert_int_equal(pcstock_group_lookup(fx.root, "a//b", &g), -EINVAL);
	assert_int_equal(pcstock_group_lookup(fx.root, "a/x", &g), -ENOENT);
	assert_int_equal(pcstock_group_lookup(fx.root, "ab", &g), -ENOENT);

	/* pre-order; children are listed newest first */
	assert_int_equal(pcstock_group_walk(fx.root, collect, buf), 0);
	assert_string_equal(buf, ".d.a.c.b.");
	rmgroup(c);
	c = mkgroup(a, "stop");
	buf[0] = '\0';
	assert_int_equal(pcstock_group_walk(a, collect, buf), 1);
	assert_string_equal(buf, "a.stop.");
	rmgroup(c);
	rmgroup(b);
	assert_int_equal(pcstock_group_lookup(fx.root, "a/b", &g), -ENOENT);
	rmgroup(a);
	rmgroup(d);
}

static void test_charge_bad_input(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");

	assert_int_equal(pcstock_group_charge(a, 0, 0), 0);
	assert_int_equal(pcstock_group_usage(a), 0);
	assert_int_equal(pcstock_group_charge(a, PCSTOCK_COUNTER_MAX + 1, 0),
			 -EINVAL);
	assert_int_equal(pcstock_group_charge(a, 1, 0x80), -EINVAL);
	assert_int_equal(pcstock_group_charge(NULL, 1, 0), -EINVAL);
	assert_int_equal(pcstock_group_uncharge(a, PCSTOCK_COUNTER_MAX + 1),
			 -EINVAL);
	assert_int_equal(pcstock_group_uncharge(a, 0), 0);
	/* the root charges nothing */
	assert_int_equal(pcstock_group_charge(fx.root, 10, 0), 0);
	assert_int_equal(pcstock_group_usage(fx.root), 0);
	rmgroup(a);
}

/* ---- charge flow --------------------------------------------------------- */

/* Step 1 and S4 for every stocked policy: one batch, then hits. */
static void test_stock_hit_returns_at_once(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	unsigned long expect = has_stock() ? BATCH : 1;

	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	assert_int_equal(pcstock_group_usage(a), expect);
	assert_int_equal(pcstock_group_usage_exact(a), 1);
	assert_int_equal(pcstock_group_stock_pages(a), expect - 1);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	assert_int_equal(pcstock_group_usage(a), has_stock() ? BATCH : 2);
	assert_int_equal(pcstock_group_usage_exact(a), 2);
	pcstock_group_uncharge(a, 2);
	pcstock_group_drain_all(a);
	assert_int_equal(pcstock_group_usage(a), 0);
	rmgroup(a);
}

/*
 * The two uncharge kinds (mainline): a folio batch goes straight to the
 * counters under every policy, memory and memsw, leaving the stock alone;
 * a kmem/socket uncharge refills the stock of a design whose uncharges
 * refill (memcg7's refill_stock(), DEFAULT, EXACT), and uncharges the
 * counters under the others (V4 as posted, none).
 */
static void test_uncharge_kinds(void **state)
{
	bool refills = fx.info.uncharges_refill;
	struct pcstock_group *a;
	unsigned long usage, stock;

	assert_int_equal(tree_open(fx.policy, true, false), 0);
	a = mkgroup(fx.root, "a");
	assert_int_equal(pcstock_group_charge(a, 4, 0), 0);
	usage = pcstock_group_usage(a);
	stock = pcstock_group_stock_pages(a);
	assert_int_equal(usage, has_stock() ? BATCH : 4);

	assert_int_equal(pcstock_group_uncharge_batch(a, 2), 0);
	assert_int_equal(pcstock_group_usage(a), usage - 2);
	assert_int_equal(pcstock_group_memsw_usage(a), usage - 2);
	assert_int_equal(pcstock_group_stock_pages(a), stock);
	assert_int_equal(pcstock_group_usage_exact(a), 2);

	assert_int_equal(pcstock_group_uncharge(a, 1), 0);
	assert_int_equal(pcstock_group_usage(a), refills ? usage - 2 :
							  usage - 3);
	assert_int_equal(pcstock_group_stock_pages(a), refills ? stock + 1 :
								stock);
	assert_int_equal(pcstock_group_usage_exact(a), 1);

	assert_int_equal(pcstock_group_uncharge_batch(NULL, 1), -EINVAL);
	assert_int_equal(pcstock_group_uncharge_batch(a,
				PCSTOCK_COUNTER_MAX + 1), -EINVAL);
	assert_int_equal(pcstock_group_uncharge_batch(a, 0), 0);
	assert_int_equal(pcstock_group_uncharge_batch(fx.root, 5), 0);
	assert_int_equal(pcstock_group_uncharge_batch(a, 1), 0);
	pcstock_group_drain_all(a);
	assert_int_equal(pcstock_group_usage(a), 0);
	assert_int_equal(pcstock_group_memsw_usage(a), 0);
	assert_int_equal(pcstock_group_usage(fx.root), 0);
	rmgroup(a);
}

/*
 * Acceptance 1: max = batch + 1, a small charge on CPU 0 parks batch - 1
 * pages there; a batch-sized charge on CPU 1 only fits after the drain.
 * EXACT parks nothing so close to max, and the charge fits at once: no
 * reclaim call, no max event, no drain_all.
 */
static void test_tight_limit_spread_stock(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_tree_stats ts;

	assert_int_equal(pcstock_group_set_max(a, BATCH + 1), 0);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	on_cpu(1);
	assert_int_equal(pcstock_group_charge(a, BATCH, 0), 0);
	assert_int_equal(pcstock_group_usage(a), BATCH + 1);
	assert_int_equal(pcstock_group_usage_exact(a), BATCH + 1);
	pcstock_tree_stats(fx.t, &ts);
	if (fx.info.exact_at_limit) {
		assert_int_equal(fx.reclaim_calls, 0);
		assert_int_equal(ts.drain_all, 0);
		assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_MAX), 0);
	} else if (has_stock()) {
		/* one reclaim, then the drain made room */
		assert_int_equal(fx.reclaim_calls, 1);
		assert_int_equal(ts.drain_all, 1);
		assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_MAX), 1);
	} else {
		assert_int_equal(fx.reclaim_calls, 0);
	}
	pcstock_group_uncharge(a, BATCH + 1);
	on_cpu(0);
	pcstock_group_drain_all(a);
	on_cpu(1);
	pcstock_group_drain_all(a);
	on_cpu(0);
	assert_int_equal(pcstock_group_usage(a), 0);
	rmgroup(a);
}

/*
 * Issue 21's fifth design: a charge refused at a parent only because a
 * sibling's stock holds pages.  Far from max, b parks BATCH - 1 pages on
 * CPU 0; a's large charge on CPU 1 then fits the pages in use but not the
 * parked ones.  EXACT drains the parent's subtree before anything else
 * (policy make_room): no reclaim call, no max event.  The others reclaim
 * first (the kernel's order), then drain_all makes the room.
 */
static void test_sibling_stock_costs_no_reclaim(void **state)
{
	struct pcstock_group *p = mkgroup(fx.root, "p");
	struct pcstock_group *a = mkgroup(p, "a"), *b = mkgroup(p, "b");
	unsigned long big = 1000 - 1;

	assert_int_equal(pcstock_group_set_max(p, 1000), 0);
	assert_int_equal(pcstock_group_charge(b, 1, 0), 0);
	assert_int_equal(pcstock_group_stock_pages(b),
			 has_stock() ? BATCH - 1 : 0);
	on_cpu(1);
	assert_int_equal(pcstock_group_charge(a, big, 0), 0);
	assert_int_equal(pcstock_group_usage_exact(p), big + 1);
	if (fx.info.exact_at_limit || !has_stock()) {
		assert_int_equal(fx.reclaim_calls, 0);
		assert_int_equal(pcstock_group_events(p, PCSTOCK_EVENT_MAX), 0);
	} else {
		assert_int_equal(fx.reclaim_calls, 1);
		assert_int_equal(pcstock_group_events(p, PCSTOCK_EVENT_MAX), 1);
	}
	pcstock_group_uncharge_batch(a, big);
	on_cpu(0);
	pcstock_group_uncharge_batch(b, 1);
	pcstock_group_drain_all(p);
	assert_int_equal(pcstock_group_usage(p), 0);
	rmgroup(a);
	rmgroup(b);
	rmgroup(p);
}

static unsigned long memsw_stock(struct pcstock_group *g)
{
	return pcstock_counter_stock_pages(pcstock_group_memsw(g));
}

static unsigned long memory_stock(struct pcstock_group *g)
{
	return pcstock_counter_stock_pages(pcstock_group_memory(g));
}

/*
 * usage == held + stock, for memory and memsw: a per-counter stock per
 * counter, a group-level one (memcg7) counts for both.
 */
static void assert_conserved(struct pcstock_group *g, unsigned long held)
{
	unsigned long m7 = fx.info.per_counter ? 0 :
				   pcstock_group_stock_pages(g);

	assert_int_equal(pcstock_group_usage(g), held + memory_stock(g) + m7);
	assert_int_equal(pcstock_group_memsw_usage(g),
			 held + memsw_stock(g) + m7);
}

/*
 * Acceptance 1: memory fails after memsw was served (a) from its stock,
 * (b) from the hierarchy; memsw gives back exactly what it handed out.
 */
static void test_memsw_rollback(void **state)
{
	struct pcstock_group_stats st;
	unsigned long failcnt;
	struct pcstock_group *a;

	assert_int_equal(tree_open(fx.policy, true, false), 0);
	a = mkgroup(fx.root, "a");
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	assert_conserved(a, 1);

	if (fx.info.per_counter && !fx.info.exact_at_limit) {
		/* (a) memsw has stock on this CPU, memory has none */
		pcstock_counter_drain_stock(
			(struct pcstock_counter *)pcstock_group_memory(a), 0);
		assert_int_equal(memsw_stock(a), BATCH - 1);
		assert_int_equal(pcstock_group_set_max_strict(a, 1), 0);
		assert_int_equal(pcstock_group_charge(a, 1,
						      PCSTOCK_CHARGE_NOWAIT),
				 -ENOMEM);
		assert_int_equal(memsw_stock(a), BATCH - 2);
		assert_conserved(a, 1);
		assert_int_equal(pcstock_group_set_max_strict(a, BATCH * 4), 0);
	}
	/* (b) nothing stocked anywhere: memsw charges the hierarchy */
	pcstock_group_drain_all(a);
	assert_int_equal(pcstock_group_set_max_strict(a, 1), 0);
	assert_int_equal(pcstock_group_charge(a, 1, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_conserved(a, 1);
	/* (c) memsw fails: as mainline, no counter counts it (failcnt) */
	pcstock_group_stats(a, &st);
	failcnt = st.failcnt;
	assert_int_equal(pcstock_group_set_memsw_max(a, 1), 0);
	assert_int_equal(pcstock_group_charge(a, 1, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	pcstock_group_stats(a, &st);
	assert_int_equal(st.failcnt, failcnt);
	assert_int_equal(st.memsw_failcnt, 0);
	assert_int_equal(pcstock_group_uncharge(a, 1), 0);
	pcstock_group_drain_all(a);
	assert_int_equal(pcstock_group_usage(a), 0);
	assert_int_equal(pcstock_group_memsw_usage(a), 0);
	rmgroup(a);
}

static void test_nowait_never_calls_callbacks(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");

	assert_int_equal(pcstock_group_set_max(a, 10), 0);
	assert_int_equal(pcstock_group_charge(a, 20, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_int_equal(pcstock_group_charge(a, 1, PCSTOCK_CHARGE_NOWAIT |
							   PCSTOCK_CHARGE_NOFAIL),
			 0);
	assert_int_equal(pcstock_group_charge(a, 20, PCSTOCK_CHARGE_NOWAIT |
							    PCSTOCK_CHARGE_NOFAIL),
			 0);
	assert_int_equal(fx.reclaim_calls, 0);
	assert_int_equal(fx.oom_calls, 0);
	assert_int_equal(pcstock_group_usage_exact(a), 21);
	/* only the forced charge raised a max event */
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_MAX), 1);
	pcstock_group_uncharge(a, 21);
	rmgroup(a);
}

/* Steps 6-12 and 16: 1 + 1 (after the drain) + 16 reclaim rounds. */
static void test_nofail_charges_over_limit(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");

	assert_int_equal(pcstock_group_set_max(a, 10), 0);
	assert_int_equal(pcstock_group_charge(a, 20, PCSTOCK_CHARGE_NOFAIL),
			 0);
	assert_int_equal(pcstock_group_usage(a), 20);
	assert_int_equal(fx.reclaim_calls, 2 + PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_int_equal(fx.reclaim_asked, 20);
	assert_int_equal(fx.oom_calls, 0);	/* 20 pages: costly order */
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_MAX),
			 2 + PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_int_equal(pcstock_group_charge(a, 20, 0), -ENOMEM);
	pcstock_group_uncharge(a, 20);
	rmgroup(a);
}

/* Steps 7-8: reclaim frees enough, the margin check retries at once. */
static void test_reclaim_then_margin_retry(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group *b = mkgroup(a, "b");
	struct pcstock_group *c = mkgroup(a, "c");
	struct pcstock_tree_stats ts;

	assert_int_equal(pcstock_group_set_max(a, 100), 0);
	assert_int_equal(pcstock_group_charge(b, 100, 0), 0);
	fx.free_from = b;
	fx.held = 100;
	assert_int_equal(pcstock_group_charge(c, 30, 0), 0);
	/* the over-limit group is the parent, asked for the charge size */
	assert_int_equal(fx.reclaim_calls, 1);
	assert_int_equal(fx.reclaim_asked, 30);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_MAX), 1);
	assert_int_equal(pcstock_group_events(c, PCSTOCK_EVENT_MAX), 0);
	pcstock_tree_stats(fx.t, &ts);
	assert_int_equal(ts.drain_all + ts.drain_all_busy, 0);
	assert_int_equal(pcstock_group_usage(a), 100);
	pcstock_group_uncharge(b, fx.held);
	pcstock_group_uncharge(c, 30);
	rmgroup(b);
	rmgroup(c);
	rmgroup(a);
}

/* Steps 10-14: NORETRY, the small-charge rule, OOM and its reset. */
static void test_retry_rules_and_oom(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");

	assert_int_equal(pcstock_group_set_max(a, 10), 0);
	assert_int_equal(pcstock_group_charge(a, 10, 0), 0);

	assert_int_equal(pcstock_group_charge(a, 1, PCSTOCK_CHARGE_NORETRY),
			 -ENOMEM);
	assert_int_equal(fx.reclaim_calls, 2);
	assert_int_equal(fx.oom_calls, 0);

	/* claimed progress retries small charges: 3 more rounds */
	fx.reclaim_calls = 0;
	fx.claim_progress = 3;
	assert_int_equal(pcstock_group_charge(a, 1, 0), -ENOMEM);
	assert_int_equal(fx.reclaim_calls, 4 + PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_int_equal(fx.oom_calls, 1);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM), 1);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM_KILL), 0);

	/* but not charges above 8 pages, which never OOM either */
	fx.reclaim_calls = fx.oom_calls = 0;
	fx.claim_progress = 3;
	assert_int_equal(pcstock_group_charge(a, 9, 0), -ENOMEM);
	assert_int_equal(fx.reclaim_calls, 2 + PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_int_equal(fx.oom_calls, 0);

	/* OOM progress restarts the 16 retries */
	fx.reclaim_calls = fx.oom_calls = 0;
	fx.claim_progress = 0;
	fx.oom_progress = 1;
	assert_int_equal(pcstock_group_charge(a, 1, 0), -ENOMEM);
	assert_int_equal(fx.reclaim_calls, 3 + 2 * PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_int_equal(fx.oom_calls, 2);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM_KILL), 1);
	pcstock_group_uncharge(a, 10);
	rmgroup(a);
}

/*
 * The small-charge threshold exactly at its limit: 8 pages (order 3,
 * PAGE_ALLOC_COSTLY_ORDER) still retry on claimed progress (step 11) and
 * call the OOM callback (step 14); test_retry_rules_and_oom has 9 pages do
 * neither.  Moving either threshold by a page fails one of the two.
 */
static void test_costly_threshold_exact(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");

	assert_int_equal(pcstock_group_set_max(a, 10), 0);
	assert_int_equal(pcstock_group_charge(a, 10, 0), 0);
	fx.claim_progress = 3;
	assert_int_equal(pcstock_group_charge(a, 8, 0), -ENOMEM);
	assert_int_equal(fx.reclaim_calls, 4 + PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_int_equal(fx.oom_calls, 1);
	pcstock_group_uncharge(a, 10);
	rmgroup(a);
}

static void test_callback_results_clamped(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_tree_stats ts;

	assert_int_equal(pcstock_group_set_max(a, 0), 0);
	fx.reclaim_ret = -5;
	assert_int_equal(pcstock_group_charge(a, 9, 0), -ENOMEM);
	pcstock_tree_stats(fx.t, &ts);
	assert_int_equal(ts.callback_clamped, 2 + PCSTOCK_MAX_RECLAIM_RETRIES);
	/* a lie of "more than asked" is progress: bounded, not a hang */
	fx.reclaim_ret = 1000;
	assert_int_equal(pcstock_group_charge(a, 1, 0), -ENOMEM);
	assert_int_equal(pcstock_group_usage(a), 0);
	rmgroup(a);
}

/* ---- memory.high --------------------------------------------------------- */

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

/* ---- limits -------------------------------------------------------------- */

static void test_set_max_v2(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group_stats st;

	assert_int_equal(pcstock_group_charge(a, 100, 0), 0);
	/* unconditional, then 16 fruitless reclaims and the OOM callback */
	assert_int_equal(pcstock_group_set_max(a, 50), 0);
	pcstock_group_stats(a, &st);
	assert_int_equal(st.max, 50);
	assert_int_equal(st.usage, 100);
	assert_int_equal(fx.reclaim_calls, PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_int_equal(fx.oom_calls, 1);
	assert_int_equal(st.events[PCSTOCK_EVENT_OOM], 1);
	/* reclaim that works brings usage under the new limit */
	fx.reclaim_calls = fx.oom_calls = 0;
	fx.free_from = a;
	fx.held = 100;
	assert_int_equal(pcstock_group_set_max(a, 30), 0);
	assert_int_equal(pcstock_group_usage(a), 30);
	assert_int_equal(fx.reclaim_calls, 1);
	assert_int_equal(fx.oom_calls, 0);
	pcstock_group_uncharge(a, fx.held);
	assert_int_equal(pcstock_group_set_max(fx.root, 1), -EINVAL);
	assert_int_equal(pcstock_group_set_max(a, PCSTOCK_COUNTER_MAX + 1),
			 -EINVAL);
	rmgroup(a);
}

static void test_set_max_strict_and_memsw(void **state)
{
	struct pcstock_group *a;

	a = mkgroup(fx.root, "a");
	assert_int_equal(pcstock_group_set_memsw_max(a, 10), -EOPNOTSUPP);
	assert_int_equal(pcstock_group_charge(a, 100, 0), 0);
	assert_int_equal(pcstock_group_set_max_strict(a, 50), -EBUSY);
	assert_int_equal(pcstock_counter_max(pcstock_group_memory(a)),
			 PCSTOCK_COUNTER_MAX);
	assert_int_equal(fx.reclaim_calls, 1);
	assert_int_equal(pcstock_group_set_max_strict(a, 100), 0);
	pcstock_group_uncharge(a, 100);
	rmgroup(a);

	assert_int_equal(tree_open(fx.policy, true, false), 0);
	a = mkgroup(fx.root, "a");
	/* memory.max <= memsw.max: memory first when lowering */
	assert_int_equal(pcstock_group_set_memsw_max(a, 200), -EINVAL);
	assert_int_equal(pcstock_group_set_max_strict(a, 150), 0);
	assert_int_equal(pcstock_group_set_memsw_max(a, 200), 0);
	assert_int_equal(pcstock_group_set_max_strict(a, 201), -EINVAL);
	assert_int_equal(pcstock_group_set_memsw_max(a, 149), -EINVAL);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_MEMSW_MAX,
						   "max"),
			 0);
	rmgroup(a);
}

/*
 * memsw.max equal to memory.max is allowed from either side (v1 refuses
 * memsw < memory only), and a charge fills both exactly.
 */
static void test_memsw_limit_equal_to_memory(void **state)
{
	struct pcstock_group *a;

	assert_int_equal(tree_open(fx.policy, true, false), 0);
	a = mkgroup(fx.root, "a");
	assert_int_equal(pcstock_group_set_max_strict(a, 150), 0);
	assert_int_equal(pcstock_group_set_memsw_max(a, 150), 0);
	assert_int_equal(pcstock_group_set_max_strict(a, 150), 0);
	assert_int_equal(pcstock_group_set_memsw_max(a, 149), -EINVAL);
	assert_int_equal(pcstock_group_set_max_strict(a, 151), -EINVAL);
	assert_true(BATCH <= 150);
	assert_int_equal(pcstock_group_charge(a, 150, 0), 0);
	assert_int_equal(pcstock_group_charge(a, 1, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_int_equal(pcstock_group_usage(a), 150);
	assert_int_equal(pcstock_counter_read(pcstock_group_memsw(a)), 150);
	pcstock_group_uncharge(a, 150);
	rmgroup(a);
}

static void test_write_limit_strings(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group_stats st;

	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_MAX,
						   " 100M\n"),
			 0);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_LOW, "1G"),
			 0);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_MIN,
						   "8192"),
			 0);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_HIGH,
						   "max"),
			 0);
	pcstock_group_stats(a, &st);
	assert_int_equal(st.max, MB(100));
	assert_int_equal(st.low, MB(1024));
	assert_int_equal(st.min, 2);
	assert_int_equal(st.high, PCSTOCK_COUNTER_MAX);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_MAX, "1Q"),
			 -EINVAL);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_MAX, "-1"),
			 -EINVAL);
	assert_int_equal(pcstock_group_write_limit(a, 99, "1"), -EINVAL);
	assert_int_equal(pcstock_group_write_limit(fx.root, PCSTOCK_LIMIT_MAX,
						   "max"),
			 -EINVAL);
	rmgroup(a);
}

/* ---- protection (spec §5.3) --------------------------------------------- */

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

static void test_protection_5_3(void **state)
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

/* ---- CPUs, reads --------------------------------------------------------- */

static void test_cpu_offline_drains(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");

	on_cpu(2);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	on_cpu(0);
	assert_int_equal(pcstock_group_usage(a), has_stock() ? BATCH : 1);
	assert_int_equal(pcstock_cpu_set_online(fx.d, 2, false), 0);
	assert_int_equal(pcstock_group_usage(a), 1);
	assert_int_equal(pcstock_group_stock_pages(fx.root), 0);
	assert_int_equal(pcstock_cpu_set_online(fx.d, 2, true), 0);
	pcstock_group_uncharge(a, 1);
	pcstock_group_drain_all(a);
	assert_int_equal(pcstock_group_usage(fx.root), 0);
	rmgroup(a);
}

/*
 * pcstock_group_stock_bound() caps what pcstock_group_stock_pages() reads,
 * and is what the design's properties say: per-counter stock a batch per
 * CPU per memory counter, none while an exact-at-limit counter is exact.
 */
static void assert_bounded(struct pcstock_group *g)
{
	assert_true(pcstock_group_stock_pages(g) <=
		    pcstock_group_stock_bound(g));
}

static void test_stock_bound(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a"), *b = mkgroup(a, "b");
	const unsigned long per = NR_CPUS * BATCH;
	struct pcstock_policy_info info;
	unsigned long held;

	assert_int_equal(pcstock_tree_policy_info(fx.policy, &info), 0);
	assert_int_equal(pcstock_group_stock_bound(NULL), 0);
	for (unsigned int cpu = 0; cpu < NR_CPUS; cpu++) {
		on_cpu(cpu);
		assert_int_equal(pcstock_group_charge(b, 1, 0), 0);
		assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	}
	on_cpu(0);
	assert_bounded(fx.root);
	assert_bounded(a);
	assert_bounded(b);
	if (!info.stocks) {
		assert_int_equal(pcstock_group_stock_bound(fx.root), 0);
	} else if (info.per_counter) {
		/* The root's counters are not stocked. */
		assert_int_equal(pcstock_group_stock_bound(b), per);
		assert_int_equal(pcstock_group_stock_bound(a), 2 * per);
		assert_int_equal(pcstock_group_stock_bound(fx.root), 2 * per);
	} else {
		/* A group-level stock holds a batch of b per CPU at least. */
		assert_true(pcstock_group_stock_bound(b) >= per);
		assert_true(pcstock_group_stock_bound(fx.root) >=
			    pcstock_group_stock_bound(b));
	}
	/*
	 * memcg7's own: its 7 slots per CPU (NR_MEMCG_STOCK) may hold any
	 * group's pages, so any subtree may have them all.
	 */
	if (fx.policy == PCSTOCK_TREE_MEMCG7) {
		assert_int_equal(pcstock_group_stock_bound(b), 7 * per);
		assert_int_equal(pcstock_group_stock_bound(fx.root), 7 * per);
	}
	if (info.stocks)
		assert_true(pcstock_group_stock_pages(b) > 0);

	/* a's margin below what b's stock could hide, then a miss at b */
	pcstock_group_drain_all(fx.root);
	held = pcstock_group_usage(a);
	assert_int_equal(held, 2 * NR_CPUS);
	assert_int_equal(pcstock_group_set_max(a, held + per / 2), 0);
	assert_int_equal(pcstock_group_charge(b, 1, 0), 0);
	assert_bounded(a);
	assert_bounded(b);
	if (info.exact_at_limit) {
		/* b went exact; a, which has not missed, has not. */
		assert_int_equal(pcstock_group_stock_bound(b), 0);
		assert_int_equal(pcstock_group_stock_pages(b), 0);
		assert_int_equal(pcstock_group_stock_bound(a), per);
	} else if (info.per_counter) {
		assert_int_equal(pcstock_group_stock_bound(b), per);
	}
	/* far from max again: b's next miss stocks, and the bound is back */
	assert_int_equal(pcstock_group_set_max(a, PCSTOCK_COUNTER_MAX), 0);
	on_cpu(1);
	assert_int_equal(pcstock_group_charge(b, 1, 0), 0);
	assert_bounded(b);
	if (info.per_counter)
		assert_int_equal(pcstock_group_stock_bound(b), per);
	on_cpu(0);
	pcstock_group_uncharge(b, NR_CPUS + 2);
	pcstock_group_uncharge(a, NR_CPUS);
	rmgroup(b);
	rmgroup(a);
}

static void test_destroy_returns_stock(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group *b = mkgroup(a, "b");

	for (unsigned int cpu = 0; cpu < NR_CPUS; cpu++) {
		on_cpu(cpu);
		assert_int_equal(pcstock_group_charge(b, 3, 0), 0);
	}
	on_cpu(0);
	assert_int_equal(pcstock_group_usage_exact(a), 3 * NR_CPUS);
	assert_int_equal(pcstock_group_destroy(b), 0);
	assert_int_equal(pcstock_group_usage(a), 3 * NR_CPUS);
	assert_int_equal(pcstock_group_usage(fx.root), 3 * NR_CPUS);
	pcstock_group_uncharge(b, 3 * NR_CPUS);
	pcstock_group_put(b);
	assert_int_equal(pcstock_group_usage(fx.root), 0);
	rmgroup(a);
}

/*
 * Whoever sees a group offline cannot charge it, not even from pages still
 * in its stock: destroy clears the group's hit key before online and
 * drains after.  The explore hook stops the destroy just after online
 * clears (at the disable of the memory counter's stock, a CAS on its
 * state), while the slot still holds pages, and charges from there.
 */
static struct pcstock_group *offline_group;
static bool offline_armed;
static int offline_ret;

static void offline_charge_hook(enum pcs_atomic_op op, const void *obj)
{
	if (!offline_armed || op != PCS_OP_CAS ||
	    obj != &pcstock_group_memory(offline_group)->stock_state)
		return;
	offline_armed = false;
	assert_false(pcstock_group_online(offline_group));
	assert_int_equal(pcstock_group_stock_pages(offline_group), BATCH - 1);
	offline_ret = pcstock_group_charge(offline_group, 1, 0);
}

static void test_offline_group_takes_no_hit(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");

	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	offline_group = a;
	offline_armed = true;
	offline_ret = 0;
	pcstock_explore_hook = offline_charge_hook;
	assert_int_equal(pcstock_group_destroy(a), 0);
	pcstock_explore_hook = NULL;
	assert_false(offline_armed);
	assert_int_equal(offline_ret, -ENOENT);
	assert_int_equal(pcstock_group_usage(fx.root), 1);
	assert_int_equal(pcstock_group_uncharge(a, 1), 0);
	assert_int_equal(pcstock_group_usage(fx.root), 0);
	pcstock_group_put(a);
}

static void test_stats_snapshot(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group *b = mkgroup(a, "b");
	struct pcstock_group_stats st;

	assert_int_equal(pcstock_group_set_max(a, 10), 0);
	assert_int_equal(pcstock_group_charge(b, 11, 0), -ENOMEM);
	pcstock_group_stats(a, &st);
	assert_int_equal(st.events_local[PCSTOCK_EVENT_MAX],
			 2 + PCSTOCK_MAX_RECLAIM_RETRIES);
	/* one or two failed attempts per round, depending on the policy */
	assert_true(st.failcnt >= 2 + PCSTOCK_MAX_RECLAIM_RETRIES);
	pcstock_group_stats(fx.root, &st);
	/* the root's memory.events never count (as cgroup2's root) */
	assert_int_equal(st.events[PCSTOCK_EVENT_MAX], 0);
	pcstock_group_stats(b, &st);
	assert_int_equal(st.events[PCSTOCK_EVENT_MAX], 0);
	assert_int_equal(st.usage, 0);
	rmgroup(b);
	rmgroup(a);
}

/*
 * drain_all is serialised the kernel's way: a caller that finds another
 * drain running skips instead of waiting.  Force the overlap
 * deterministically: the explore hook fires inside the first drain (at its
 * first exchange or compare-and-swap, the removal from a slot that every
 * design's drain makes under the drain lock: an exchange, or a CAS that
 * keeps a slot's marks, as EXACT's or a design's own drain step may) and
 * starts a second drain from there.  No design is named: which removal a
 * drain uses is its own business.
 */
static struct pcstock_group *nested_group;
static struct pcstock_tree_stats nested_stats;
static bool nested_armed;

static void nested_drain_hook(enum pcs_atomic_op op, const void *obj)
{
	(void)obj;
	if (!nested_armed || (op != PCS_OP_XCHG && op != PCS_OP_CAS))
		return;
	nested_armed = false;
	pcstock_group_drain_all(nested_group);
	pcstock_tree_stats(fx.t, &nested_stats);
}

static void test_concurrent_drain_all_is_skipped(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_tree_stats st;

	on_cpu(1);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	on_cpu(0);
	assert_int_equal(pcstock_group_stock_pages(a), BATCH - 1);
	pcstock_tree_stats(fx.t, &st);
	nested_group = a;
	nested_armed = true;
	pcstock_explore_hook = nested_drain_hook;
	pcstock_group_drain_all(a);
	pcstock_explore_hook = NULL;
	assert_false(nested_armed);
	/* the nested drain was skipped, and drained nothing ... */
	assert_int_equal(nested_stats.drain_all_busy, st.drain_all_busy + 1);
	assert_int_equal(nested_stats.drain_all, st.drain_all);
	/* ... while the outer one completed */
	pcstock_tree_stats(fx.t, &st);
	assert_int_equal(st.drain_all, nested_stats.drain_all + 1);
	assert_int_equal(pcstock_group_stock_pages(a), 0);
	assert_int_equal(pcstock_group_usage(a), 1);
	pcstock_group_uncharge(a, 1);
	pcstock_group_drain_all(a);
	rmgroup(a);
}

/* ---- allocation failures ------------------------------------------------- */

static int fail_at, alloc_calls;

static bool fail_nth(const char *site)
{
	return alloc_calls++ == fail_at;
}

static void test_enomem_leaves_nothing(void **state)
{
	int failures = 0;

	for (fail_at = 0;; fail_at++) {
		struct pcstock_tree_attr attr = { .policy = fx.policy };
		struct pcstock_tree *t = NULL;
		struct pcstock_group *g = NULL;
		int err;

		alloc_calls = 0;
		pcstock_fault_hook = fail_nth;
		err = pcstock_tree_create(fx.d, &attr, &t);
		if (!err)
			err = pcstock_group_create(pcstock_tree_root(t), "g",
						   &g);
		pcstock_fault_hook = NULL;
		if (g) {
			/* a stock that failed to allocate: plain counters */
			assert_int_equal(pcstock_group_charge(g, 2, 0), 0);
			pcstock_group_uncharge(g, 2);
			rmgroup(g);
		}
		if (t)
			assert_int_equal(pcstock_tree_destroy(t), 0);
		if (!err && alloc_calls <= fail_at)
			break;
		if (err) {
			assert_int_equal(err, -ENOMEM);
			failures++;
		}
	}
	assert_true(failures >= 3);
}

/*
 * The cases, each run once (ONCE, on "none") or on every registered
 * design with a property: PER_POLICY on all, STOCKED on those with stock,
 * COUNTER_STOCK on the per-counter ones.  main() builds the list from the
 * registry at run time, so a new design runs them without an edit here.
 */
enum runs { RUN_ONCE, RUN_ALL, RUN_STOCKED, RUN_PER_COUNTER };

struct case_def {
	const char *name;
	CMUnitTestFunction fn;
	enum runs runs;
};

#define ONCE(fn) { #fn, fn, RUN_ONCE }
#define PER_POLICY(fn) { #fn, fn, RUN_ALL }
#define STOCKED(fn) { #fn, fn, RUN_STOCKED }
#define COUNTER_STOCK(fn) { #fn, fn, RUN_PER_COUNTER }

static bool runs_on(enum runs r, const struct pcstock_policy_info *info)
{
	switch (r) {
	case RUN_STOCKED:
		return info->stocks;
	case RUN_PER_COUNTER:
		return info->per_counter;
	default:
		return true;
	}
}

int main(void)
{
	static enum pcstock_tree_policy policies[PCSTOCK_TREE_NR_POLICIES];
	static const struct case_def cases[] = {
		ONCE(test_tree_bad_input),
		ONCE(test_policy_info),
		PER_POLICY(test_group_names_and_destroy),
		PER_POLICY(test_destroyed_group_keeps_uncharging),
		ONCE(test_lookup_and_walk),
		ONCE(test_charge_bad_input),
		PER_POLICY(test_stock_hit_returns_at_once),
		PER_POLICY(test_tight_limit_spread_stock),
		PER_POLICY(test_sibling_stock_costs_no_reclaim),
		PER_POLICY(test_uncharge_kinds),
		STOCKED(test_concurrent_drain_all_is_skipped),
		PER_POLICY(test_memsw_rollback),
		PER_POLICY(test_nowait_never_calls_callbacks),
		ONCE(test_nofail_charges_over_limit),
		ONCE(test_reclaim_then_margin_retry),
		ONCE(test_retry_rules_and_oom),
		ONCE(test_costly_threshold_exact),
		ONCE(test_callback_results_clamped),
		ONCE(test_high_throttle_figures),
		ONCE(test_rseq_hit_skips_high),
		PER_POLICY(test_charge_up_to_exactly_high),
		ONCE(test_set_max_v2),
		ONCE(test_set_max_strict_and_memsw),
		PER_POLICY(test_memsw_limit_equal_to_memory),
		ONCE(test_write_limit_strings),
		PER_POLICY(test_protection_5_3),
		PER_POLICY(test_offline_group_drops_protection),
		PER_POLICY(test_cpu_offline_drains),
		PER_POLICY(test_destroy_returns_stock),
		PER_POLICY(test_stock_bound),
		COUNTER_STOCK(test_offline_group_takes_no_hit),
		PER_POLICY(test_stats_snapshot),
		PER_POLICY(test_enomem_leaves_nothing),
	};
	enum { NR_CASES = sizeof(cases) / sizeof(cases[0]) };
	static struct CMUnitTest tests[NR_CASES * PCSTOCK_TREE_NR_POLICIES];
	static char names[NR_CASES * PCSTOCK_TREE_NR_POLICIES][80];
	struct pcstock_policy_info info;
	size_t n = 0;

	for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++)
		policies[p] = (enum pcstock_tree_policy)p;
	for (size_t i = 0; i < NR_CASES; i++) {
		const struct case_def *c = &cases[i];

		if (c->runs == RUN_ONCE) {
			tests[n++] = (struct CMUnitTest){ c->name, c->fn, setup,
							  teardown, NULL };
			continue;
		}
		for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
			if (pcstock_tree_policy_info(policies[p], &info) ||
			    !runs_on(c->runs, &info))
				continue;
			/* "case/design": a design's cases can be counted. */
			snprintf(names[n], sizeof(names[n]), "%s/%s", c->name,
				 info.name);
			tests[n] = (struct CMUnitTest){ names[n], c->fn, setup,
							teardown, &policies[p] };
			n++;
		}
	}
	return _cmocka_run_group_tests("test_hierarchy", tests, n, NULL, NULL);
}
