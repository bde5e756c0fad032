// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_charge.c - the charge flow, sequentially, on a 4-CPU SIM domain
 * (hierarchy_fixture.h): bad input, each stage of pcstock_group_charge()
 * (numbered 1 to 5 in its comment, include/pcstock/hierarchy.h: the
 * kernel's try_charge_memcg() in mm/memcontrol.c) with the reclaim and
 * OOM callbacks it calls, the uncharge kinds, the memsw charge and its
 * rollback, and drain_all.  S4 is the case of docs/conformance.md.
 *
 * A case whose comment names a mutant ("Mutant Q13: ...") came from the
 * mutation study (docs/mutation.md, by that id) and fails on it.
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
#include "atomic.h"

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

/* Stage 1, the hit, and S4 for every stocked policy: one batch, then hits. */
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
 * a kmem/socket uncharge refills the stock of a policy whose uncharges
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

	assert_int_equal(pcstock_group_uncharge_direct(a, 2), 0);
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

	assert_int_equal(pcstock_group_uncharge_direct(NULL, 1), -EINVAL);
	assert_int_equal(pcstock_group_uncharge_direct(a,
				PCSTOCK_COUNTER_MAX + 1), -EINVAL);
	assert_int_equal(pcstock_group_uncharge_direct(a, 0), 0);
	assert_int_equal(pcstock_group_uncharge_direct(fx.root, 5), 0);
	/*
	 * The deprecated old name, exported for soname 1, is the same call:
	 * the last page through it, past the stock.
	 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	assert_int_equal(pcstock_group_uncharge_batch(NULL, 1), -EINVAL);
	assert_int_equal(pcstock_group_uncharge_batch(a, 1), 0);
#pragma GCC diagnostic pop
	assert_int_equal(pcstock_group_stock_pages(a), refills ? stock + 1 :
								stock);
	pcstock_group_drain_all(a);
	assert_int_equal(pcstock_group_usage(a), 0);
	assert_int_equal(pcstock_group_memsw_usage(a), 0);
	assert_int_equal(pcstock_group_usage(fx.root), 0);
	rmgroup(a);
}

/*
 * Exact at the limit: max = batch + 1, a small charge on CPU 0 parks batch - 1
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
 * What exact_at_limit promises: a charge refused at a parent only because a
 * sibling's stock holds pages.  Far from max, b parks BATCH - 1 pages on
 * CPU 0; a's large charge on CPU 1 then fits the pages in use but not the
 * parked ones.  EXACT drains the parent's subtree before anything else
 * (policy make_room): no reclaim call, no max event.  The others reclaim
 * first (the kernel's order), then drain_all makes the room.
 *
 * With @memsw the parent's memsw.max is the limit too, and memsw is
 * charged first: b parks BATCH - 1 pages in each of its counters' stocks,
 * and a's charge fails at the parent's memsw.max.  make_room must return
 * the memsw stocks' pages as well as memory's: EXACT's charge then fits
 * at once, both counters exactly at their limit.  Mutant H2: a make_room
 * that switches memory's stocks alone, which leaves the charge failing at
 * memsw until reclaim and drain_all (one reclaim call, one max event).
 */
static void sibling_stock_case(bool memsw)
{
	const unsigned long limit = 1000, big = limit - 1;
	struct pcstock_group *p, *a, *b;
	struct pcstock_tree_stats ts;

	assert_int_equal(tree_open(fx.policy, memsw, false), 0);
	p = mkgroup(fx.root, "p");
	a = mkgroup(p, "a");
	b = mkgroup(p, "b");
	assert_int_equal(pcstock_group_set_max(p, limit), 0);
	if (memsw)
		assert_int_equal(pcstock_group_set_memsw_max(p, limit), 0);
	assert_int_equal(pcstock_group_charge(b, 1, 0), 0);
	assert_int_equal(pcstock_group_stock_pages(b),
			 has_stock() ? BATCH - 1 : 0);
	on_cpu(1);
	assert_int_equal(pcstock_group_charge(a, big, 0), 0);
	assert_int_equal(pcstock_group_usage_exact(p), limit);
	pcstock_tree_stats(fx.t, &ts);
	if (fx.info.exact_at_limit || !has_stock()) {
		assert_int_equal(fx.reclaim_calls, 0);
		assert_int_equal(pcstock_group_events(p, PCSTOCK_EVENT_MAX), 0);
		assert_int_equal(ts.drain_all, 0);
		assert_int_equal(pcstock_group_usage(p), limit);
		if (memsw)
			assert_int_equal(pcstock_group_memsw_usage(p), limit);
	} else {
		assert_int_equal(fx.reclaim_calls, 1);
		assert_int_equal(pcstock_group_events(p, PCSTOCK_EVENT_MAX), 1);
	}
	pcstock_group_uncharge_direct(a, big);
	on_cpu(0);
	pcstock_group_uncharge_direct(b, 1);
	pcstock_group_drain_all(p);
	assert_int_equal(pcstock_group_usage(p), 0);
	assert_int_equal(pcstock_group_memsw_usage(p), 0);
	rmgroup(a);
	rmgroup(b);
	rmgroup(p);
}

static void test_sibling_stock_costs_no_reclaim(void **state)
{
	sibling_stock_case(false);
}

static void test_sibling_memsw_stock_costs_no_reclaim(void **state)
{
	sibling_stock_case(true);
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
 * The memsw rollback: memory fails after memsw was served (a) from its stock,
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

/*
 * A charge forced past the limit (NOFAIL) charges memsw as well as
 * memory, as the kernel's force: label does.  Mutant G3: the force path
 * charging memory alone.
 */
static void test_forced_charge_charges_memsw(void **state)
{
	struct pcstock_group *g;

	assert_int_equal(tree_open(PCSTOCK_TREE_NONE, true, false), 0);
	g = mkgroup(fx.root, "g");
	assert_int_equal(pcstock_group_set_max(g, 4), 0);
	assert_int_equal(pcstock_group_charge(g, 10, PCSTOCK_CHARGE_NOFAIL),
			 0);
	assert_int_equal(pcstock_counter_read(pcstock_group_memory(g)), 10);
	assert_int_equal(pcstock_counter_read(pcstock_group_memsw(g)), 10);
	assert_int_equal(pcstock_counter_read(pcstock_group_memsw(fx.root)), 10);
	assert_int_equal(pcstock_group_uncharge(g, 10), 0);
	assert_int_equal(pcstock_counter_read(pcstock_group_memsw(fx.root)), 0);
	rmgroup(g);
}

/*
 * A charge that fails on an ancestor's memsw limit raises the max event
 * on that ancestor, the kernel's mem_over_limit (mem_cgroup_from_counter(
 * counter, memsw)), which memory.events counts upwards only: the charging
 * child's own count stays 0.  Mutant P11: the memsw failure naming the
 * charging group as over its limit.
 */
static void test_memsw_failure_names_the_ancestor(void **state)
{
	struct pcstock_group *p, *c;

	assert_int_equal(tree_open(PCSTOCK_TREE_NONE, true, false), 0);
	p = mkgroup(fx.root, "p");
	c = mkgroup(p, "c");
	assert_int_equal(pcstock_group_set_max(p, 4), 0);
	assert_int_equal(pcstock_group_set_memsw_max(p, 4), 0);
	assert_int_equal(pcstock_group_charge(c, 8, 0), -ENOMEM);
	/* one per retry (18), as the kernel counts them */
	assert_true(pcstock_group_events(p, PCSTOCK_EVENT_MAX) > 0);
	assert_int_equal(pcstock_group_events(c, PCSTOCK_EVENT_MAX), 0);
	rmgroup(c);
	rmgroup(p);
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

/*
 * Stage 4 to its end, then NOFAIL's forced charge: a max event and a
 * reclaim call on the first attempt, on the retry after drain_all and on
 * each of the 16 retries; no OOM call for 20 pages (stage 5: at most 8).
 */
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

/* Stage 4: reclaim frees enough, the margin check retries before drain_all. */
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

/*
 * Stages 4 and 5 after drain_all: NORETRY's exit, the retries while
 * reclaim claims progress (small charges only), the OOM callback, and the
 * 16 retries its progress restarts.
 */
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
 * PAGE_ALLOC_COSTLY_ORDER) still retry on claimed progress (stage 4) and
 * call the OOM callback (stage 5); test_retry_rules_and_oom has 9 pages do
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

/*
 * A reclaim callback may return every page it was asked for: that is in
 * range, not clamped (callback_clamped counts only returns below 0 or
 * above the request).  Mutant Q28: the range test as freed < nr_pages.
 */
static void test_reclaim_of_all_pages_asked_not_clamped(void **state)
{
	struct pcstock_group *g = mkgroup(fx.root, "g");
	struct pcstock_tree_stats ts;

	assert_int_equal(pcstock_group_set_max(g, 4), 0);
	assert_int_equal(pcstock_group_charge(g, 4, 0), 0);
	fx.claim_all = true;
	assert_int_equal(pcstock_group_charge(g, 1, PCSTOCK_CHARGE_NORETRY),
			 -ENOMEM);
	fx.claim_all = false;
	assert_int_equal(fx.reclaim_asked, 1);
	pcstock_tree_stats(fx.t, &ts);
	assert_int_equal(ts.callback_clamped, 0);
	assert_int_equal(pcstock_group_uncharge(g, 4), 0);
	rmgroup(g);
}

/*
 * drain_all is serialised the kernel's way: a caller that finds another
 * drain running skips instead of waiting.  Force the overlap
 * deterministically: the explore hook fires inside the first drain (at its
 * first exchange or compare-and-swap, the removal from a slot that every
 * policy's drain makes under the drain lock: an exchange, or a CAS that
 * keeps a slot's marks, as EXACT's or a policy's own drain step may) and
 * starts a second drain from there.  No policy is named: which removal a
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

/* @argv[1]: a cmocka test filter, on the names "case" and "case/policy". */
int main(int argc, char **argv)
{
	static const struct case_def cases[] = {
		ONCE(test_charge_bad_input),
		PER_POLICY(test_stock_hit_returns_at_once),
		PER_POLICY(test_tight_limit_spread_stock),
		PER_POLICY(test_sibling_stock_costs_no_reclaim),
		PER_POLICY(test_sibling_memsw_stock_costs_no_reclaim),
		PER_POLICY(test_uncharge_kinds),
		STOCKED(test_concurrent_drain_all_is_skipped),
		PER_POLICY(test_memsw_rollback),
		ONCE(test_forced_charge_charges_memsw),
		ONCE(test_memsw_failure_names_the_ancestor),
		PER_POLICY(test_nowait_never_calls_callbacks),
		ONCE(test_nofail_charges_over_limit),
		ONCE(test_reclaim_then_margin_retry),
		ONCE(test_retry_rules_and_oom),
		ONCE(test_costly_threshold_exact),
		ONCE(test_callback_results_clamped),
		ONCE(test_reclaim_of_all_pages_asked_not_clamped),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return run_cases("test_charge", cases,
			 sizeof(cases) / sizeof(cases[0]));
}
