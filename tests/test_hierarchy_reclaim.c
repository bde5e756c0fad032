// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_hierarchy_reclaim.c - reclaim is exact, whichever uncharge frees.
 *
 * In the kernel, reclaimed folios leave through uncharge_batch(), straight
 * to the counters, so a memory.max write frees exactly the excess and a v1
 * limit_in_bytes write stops as soon as the limit fits.  A callback that
 * frees with pcstock_group_uncharge() (the stock path) must get the same:
 * pages uncharged inside a reclaim or OOM callback lower usage at once.
 * Each case runs on every policy, with and without memsw, and the callback
 * frees with either uncharge; the stocked policies also on the default
 * (RSEQ) domain, whose hits have a cache entry of their own; every figure (pages freed, calls, drains) is
 * exact, on one thread.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_helpers.h"

#define NR_CPUS 4U

/* One configuration: the prestate of each case. */
struct config {
	enum pcstock_tree_policy policy;
	bool memsw;
	bool batch_uncharge;	/* the callbacks free with _uncharge_direct() */
	bool rseq;		/* the default domain (RSEQ), not SIM */
};

struct fixture {
	const struct config *cfg;
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *root;
	struct pcstock_group *g;	/* the group under test */
	unsigned long held;		/* pages the callbacks may free */
	bool reclaim_frees;		/* else reclaim frees nothing */
	bool oom_frees_all;		/* the OOM callback frees @held */
	unsigned long freed;		/* pages freed by the callbacks */
	unsigned int reclaim_calls;
	unsigned int oom_calls;
	unsigned int late;		/* uncharges usage did not show */
};

static struct fixture fx;

/* Free @n pages of the group under test as the configuration says. */
static void free_pages(struct fixture *f, unsigned long n)
{
	unsigned long before = pcstock_group_usage(f->g);
	unsigned long memsw = pcstock_group_memsw_usage(f->g);

	if (!n)
		return;
	if (f->cfg->batch_uncharge)
		pcstock_group_uncharge_direct(f->g, n);
	else
		pcstock_group_uncharge(f->g, n);
	f->held -= n;
	f->freed += n;
	/* at once: no assertion here, the library holds its locks */
	if (pcstock_group_usage(f->g) != before - n ||
	    (f->cfg->memsw && pcstock_group_memsw_usage(f->g) != memsw - n))
		f->late++;
}

static long reclaim_cb(struct pcstock_group *g, unsigned long nr_pages,
		       void *arg)
{
	struct fixture *f = arg;
	unsigned long n = nr_pages < f->held ? nr_pages : f->held;

	f->reclaim_calls++;
	if (!f->reclaim_frees)
		return 0;
	free_pages(f, n);
	return (long)n;
}

static int oom_cb(struct pcstock_group *g, void *arg)
{
	struct fixture *f = arg;

	f->oom_calls++;
	if (!f->oom_frees_all || !f->held)
		return PCSTOCK_OOM_NONE;
	free_pages(f, f->held);
	return PCSTOCK_OOM_KILLED;
}

static int setup(void **state)
{
	struct pcstock_domain_attr dattr = { NR_CPUS, PCSTOCK_CPU_SIM, NULL };
	const struct config *cfg = *state;
	struct pcstock_tree_attr attr = {
		.policy = cfg->policy,
		.memsw = cfg->memsw,
		.reclaim = reclaim_cb,
		.oom = oom_cb,
		.cb_arg = &fx,
	};

	print_message("policy %s%s%s, callbacks free with %s\n",
		      pcstock_tree_policy_name(cfg->policy),
		      cfg->memsw ? " with memsw" : "",
		      cfg->rseq ? " on the default domain" : "",
		      cfg->batch_uncharge ? "pcstock_group_uncharge_direct()" :
					    "pcstock_group_uncharge()");
	memset(&fx, 0, sizeof(fx));
	fx.cfg = cfg;
	fx.reclaim_frees = true;
	if (pcstock_domain_create(cfg->rseq ? NULL : &dattr, &fx.d) ||
	    (!cfg->rseq && pcstock_cpu_enter(fx.d, 0)) ||
	    pcstock_tree_create(fx.d, &attr, &fx.t) ||
	    pcstock_group_create(pcstock_tree_root(fx.t), "g", &fx.g))
		return -1;
	fx.root = pcstock_tree_root(fx.t);
	return 0;
}

static int teardown(void **state)
{
	int err;

	pcstock_group_uncharge_direct(fx.g, fx.held);
	pcstock_group_destroy(fx.g);
	pcstock_group_put(fx.g);
	err = pcstock_tree_destroy(fx.t);
	if (!fx.cfg->rseq)
		pcstock_cpu_exit(fx.d);
	pcstock_domain_destroy(fx.d);
	return err;
}

/* @n pages held by the test, usage exactly @n (no stock). */
static void hold(unsigned long n)
{
	assert_int_equal(pcstock_group_charge(fx.g, n, 0), 0);
	fx.held += n;
	pcstock_group_drain_all(fx.g);
	assert_int_equal(pcstock_group_usage(fx.g), fx.held);
	assert_int_equal(pcstock_group_stock_pages(fx.root), 0);
}

/* The callbacks freed @freed pages in @calls reclaim calls, each at once. */
static void assert_freed(unsigned long freed, unsigned int calls)
{
	assert_int_equal(fx.freed, freed);
	assert_int_equal(fx.reclaim_calls, calls);
	assert_int_equal(fx.late, 0);
}

static unsigned long drains(void)
{
	struct pcstock_tree_stats st;

	pcstock_tree_stats(fx.t, &st);
	return st.drain_all + st.drain_all_busy;
}

/*
 * memory.max write: usage 150, limit 100.  One reclaim call asked for the
 * excess frees it, usage is then at the limit and nothing more is asked
 * (with the stock path and no bypass, the 50 pages sat in this CPU's slot
 * and a second call freed 50 more before the slot overflowed).
 */
static void test_max_write_frees_excess(void **state)
{
	hold(150);
	assert_int_equal(pcstock_group_set_max(fx.g, 100), 0);
	assert_freed(50, 1);
	assert_int_equal(pcstock_group_usage(fx.g), 100);
	assert_int_equal(fx.held, 100);
	assert_int_equal(pcstock_group_stock_pages(fx.root), 0);
}

/*
 * v1 limit_in_bytes write: set_max is refused, the stock drained, then one
 * page reclaimed per round: 50 rounds free 50 pages and the limit is
 * applied (with the stock path, usage did not move for 64 rounds and the
 * write gave up with -EBUSY after 65 pages had been freed).
 */
static void test_v1_limit_write_exact(void **state)
{
	hold(150);
	assert_int_equal(pcstock_group_set_max_strict(fx.g, 100), 0);
	assert_freed(50, 50);
	assert_int_equal(pcstock_group_usage(fx.g), 100);
	assert_int_equal(pcstock_counter_max(pcstock_group_memory(fx.g)), 100);
}

/*
 * v1 memsw.limit_in_bytes: the memsw counter sees the frees at once too.
 * memory.max (which memsw.max may not go below) is lowered first with
 * nothing to reclaim, leaving usage above it.
 */
static void test_v1_memsw_limit_write_exact(void **state)
{
	assert_true(fx.cfg->memsw);
	hold(150);
	fx.reclaim_frees = false;
	assert_int_equal(pcstock_group_set_max(fx.g, 100), 0);
	assert_int_equal(pcstock_group_usage(fx.g), 150);
	fx.reclaim_frees = true;
	fx.reclaim_calls = 0;
	assert_int_equal(pcstock_group_set_memsw_max(fx.g, 120), 0);
	assert_freed(30, 30);
	assert_int_equal(pcstock_group_memsw_usage(fx.g), 120);
	assert_int_equal(pcstock_group_usage(fx.g), 120);
}

/*
 * The charge path's own reclaim (stage 4 of pcstock_group_charge(),
 * include/pcstock/hierarchy.h): at the limit, a charge of 8 pages asks for
 * 8, the callback frees 8, and the margin check retries at once: no
 * drain_all (it comes after a failed margin check), one reclaim call.
 */
static void test_charge_reclaim_sees_progress(void **state)
{
	unsigned long before;

	assert_int_equal(pcstock_group_set_max(fx.g, 100), 0);
	hold(100);
	before = drains();
	assert_int_equal(pcstock_group_charge(fx.g, 8, 0), 0);
	fx.held += 8;
	assert_freed(8, 1);
	assert_int_equal(drains(), before);
	assert_int_equal(pcstock_group_events(fx.g, PCSTOCK_EVENT_MAX), 1);
	pcstock_group_drain_all(fx.g);
	assert_int_equal(pcstock_group_usage(fx.g), 100);
}

/*
 * An OOM callback that kills synchronously: the victim's pages (fewer
 * than a batch, so that the stock path would keep them) count at once,
 * so a memory.max write calls it once.
 */
static void test_oom_kill_frees_at_once(void **state)
{
	hold(60);
	fx.reclaim_frees = false;
	fx.oom_frees_all = true;
	assert_int_equal(pcstock_group_set_max(fx.g, 20), 0);
	assert_freed(60, PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_int_equal(fx.oom_calls, 1);
	assert_int_equal(pcstock_group_usage(fx.g), 0);
	assert_int_equal(pcstock_group_events(fx.g, PCSTOCK_EVENT_OOM_KILL),
			 1);
}

/*
 * The other side: a charge refused because reclaim made no progress
 * counts 18 max events (the first attempt, the retry after the drain, 16
 * retries), as the kernel's, whatever the stock; one OOM call.
 */
static void test_refused_charge_max_events(void **state)
{
	assert_int_equal(pcstock_group_set_max(fx.g, 100), 0);
	hold(100);
	fx.reclaim_frees = false;
	assert_int_equal(pcstock_group_charge(fx.g, 1, 0), -ENOMEM);
	assert_int_equal(pcstock_group_events(fx.g, PCSTOCK_EVENT_MAX),
			 2 + PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_int_equal(fx.reclaim_calls, 2 + PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_int_equal(fx.oom_calls, 1);
}

/*
 * Outside callbacks nothing changed: a small pcstock_group_uncharge()
 * still goes into the stock of a policy whose uncharges refill (DEFAULT,
 * memcg7, EXACT), also right after a reclaim ran on this thread.
 */
static void test_stock_path_outside_callbacks(void **state)
{
	struct pcstock_policy_info info;
	bool keeps;

	assert_int_equal(pcstock_tree_policy_info(fx.cfg->policy, &info), 0);
	keeps = !fx.cfg->batch_uncharge && info.uncharges_refill;

	hold(150);
	assert_int_equal(pcstock_group_set_max(fx.g, 100), 0);
	assert_int_equal(pcstock_group_set_max(fx.g, PCSTOCK_COUNTER_MAX), 0);
	if (fx.cfg->batch_uncharge)
		pcstock_group_uncharge_direct(fx.g, 10);
	else
		pcstock_group_uncharge(fx.g, 10);
	fx.held -= 10;
	assert_int_equal(pcstock_group_usage(fx.g), keeps ? 100 : 90);
	assert_int_equal(pcstock_group_usage_exact(fx.g), 90);
}

/*
 * The configurations, from the registry: every policy plain and with
 * memsw; every policy with a stock also with callbacks that free through
 * pcstock_group_uncharge_direct(), alone and with memsw; every policy
 * whose stock is the per-counter one also on the default (RSEQ) domain,
 * whose hits go through their own cache entry (domain.h).
 */
#define MAX_CONFIGS (6 * PCSTOCK_TREE_NR_POLICIES)
static struct config configs[MAX_CONFIGS];
static unsigned int nr_configs;

static void add_config(enum pcstock_tree_policy p, bool memsw, bool batch,
		       bool rseq)
{
	configs[nr_configs++] = (struct config){ p, memsw, batch, rseq };
}

static void make_configs(void)
{
	struct pcstock_policy_info info;

	for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
		if (pcstock_tree_policy_info((enum pcstock_tree_policy)p,
					     &info))
			abort();
		add_config((enum pcstock_tree_policy)p, false, false, false);
		add_config((enum pcstock_tree_policy)p, true, false, false);
		if (info.stocks) {
			add_config((enum pcstock_tree_policy)p, false, true,
				   false);
			add_config((enum pcstock_tree_policy)p, true, true,
				   false);
		}
		if (info.per_counter)
			add_config((enum pcstock_tree_policy)p, false, false,
				   true);
	}
}

/* Every case on every configuration (memsw: those with memsw only). */
static struct CMUnitTest tests[7 * MAX_CONFIGS];
static unsigned int nr_tests;

static void add_case(const char *name, CMUnitTestFunction fn,
		     bool memsw_only)
{
	for (unsigned int i = 0; i < nr_configs; i++) {
		if (memsw_only && !configs[i].memsw)
			continue;
		tests[nr_tests++] = (struct CMUnitTest){
			.name = name, .test_func = fn,
			.setup_func = setup, .teardown_func = teardown,
			.initial_state = &configs[i],
		};
	}
}

int main(void)
{
	make_configs();
	add_case("test_max_write_frees_excess", test_max_write_frees_excess,
		 false);
	add_case("test_v1_limit_write_exact", test_v1_limit_write_exact,
		 false);
	add_case("test_v1_memsw_limit_write_exact",
		 test_v1_memsw_limit_write_exact, true);
	add_case("test_charge_reclaim_sees_progress",
		 test_charge_reclaim_sees_progress, false);
	add_case("test_oom_kill_frees_at_once", test_oom_kill_frees_at_once,
		 false);
	add_case("test_refused_charge_max_events",
		 test_refused_charge_max_events, false);
	add_case("test_stock_path_outside_callbacks",
		 test_stock_path_outside_callbacks, false);
	return _cmocka_run_group_tests("test_hierarchy_reclaim", tests,
				       nr_tests, NULL, NULL);
}
