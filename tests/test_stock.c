// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_stock.c - the stock layer, sequentially, on a SIM domain: the series'
 * v4 3/5 behaviour (spec §3.5, §3.7) for both policies where they agree,
 * and the review findings DEFAULT fixes pinned where they differ (uncharge
 * refill, drain of an empty slot, over-batch uncharge, racing refill).
 *
 * Every case runs on a 3-level tree root <- mid <- leaf with a stock of
 * BATCH pages on the leaf; the main thread is CPU 0 unless a case moves it.
 * Expected numbers are derived by hand from the series' algorithm.
 *
 * The racing-refill case forces one interleaving of two threads sharing
 * CPU 0 through the test library's schedule-explorer hook (every atomic of
 * the library calls it before acting).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <string.h>

#include <pcstock/counter.h>
#include <pcstock/cpu.h>
#include <pcstock/percpu.h>
#include <pcstock/stock.h>
/* The slot's encoding (the disable mark): the library's, not API. */
#define PCSTOCK_INLINE_TYPES_ONLY_
#include <pcstock/stock_inline.h>
#undef PCSTOCK_INLINE_TYPES_ONLY_

#include "atomic.h"
#include "internal.h"

/* test_stock_inline (tests/stock.cmake) must run the inline paths. */
#if defined(PCSTOCK_INLINE) && (!defined(pcstock_counter_try_charge_stock) || \
				!defined(pcstock_counter_uncharge_stock))
#error "PCSTOCK_INLINE did not select the inline fast paths"
#endif

#define NR_CPUS 4U
#define BATCH 16U
/* EXACT's own mark: the library's PCS_EXACT_MARK (src/stock_hit.h). */
#define EXACT_MARK (PCSTOCK_STOCK_MARK_ / 2)

/* ---- fixtures ------------------------------------------------------------ */

struct fixture {
	enum pcstock_stock_policy policy;
	struct pcstock_domain *d;
	struct pcstock_counter root, mid, leaf;
};

static struct fixture fx;
static enum pcstock_stock_policy policy_default = PCSTOCK_STOCK_DEFAULT;
static enum pcstock_stock_policy policy_v4 = PCSTOCK_STOCK_V4;
static enum pcstock_stock_policy policy_exact = PCSTOCK_STOCK_EXACT;

static void hooks_off(void)
{
	pcstock_explore_hook = NULL;
	pcstock_fault_hook = NULL;
}

static int setup(void **state)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_SIM, NULL };

	hooks_off();
	pcstock_warn_reset();
	fx.policy = *(enum pcstock_stock_policy *)*state;
	if (pcstock_domain_create(&attr, &fx.d))
		return -1;
	pcstock_counter_init(&fx.root, NULL, false);
	pcstock_counter_init(&fx.mid, &fx.root, false);
	pcstock_counter_init(&fx.leaf, &fx.mid, false);
	pcstock_counter_set_track_failcnt(&fx.leaf, true);
	if (pcstock_counter_alloc_stock(&fx.leaf, fx.d, BATCH, fx.policy) ||
	    pcstock_cpu_enter(fx.d, 0))
		return -1;
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hooks_off();
	pcstock_cpu_exit(fx.d);
	pcstock_counter_free_stock(&fx.leaf);
	pcstock_domain_destroy(fx.d);
	/* No case may leave an underflow behind. */
	return pcstock_warn_count() ? -1 : 0;
}

/* Run a case once per policy, named after each. */
#define EACH(f)                                                              \
	{ #f "/default", f, setup, teardown, &policy_default },              \
	{ #f "/v4", f, setup, teardown, &policy_v4 },                        \
	{ #f "/exact", f, setup, teardown, &policy_exact }
#define EXACT_ONLY(f) { #f "/exact", f, setup, teardown, &policy_exact }

static bool is_v4(void)
{
	return fx.policy == PCSTOCK_STOCK_V4;
}

/* EXACT: stops stocking within nr_cpus × batch of a max. */
static bool is_exact(void)
{
	return fx.policy == PCSTOCK_STOCK_EXACT;
}

static atomic_int *slot_ptr(const struct pcstock_counter *c, unsigned int cpu)
{
	return pcstock_percpu_ptr(fx.d, c->stock_slots, cpu);
}

static int slot(unsigned int cpu)
{
	return atomic_load(slot_ptr(&fx.leaf, cpu));
}

static void move_to(unsigned int cpu)
{
	assert_int_equal(pcstock_cpu_exit(fx.d), 0);
	assert_int_equal(pcstock_cpu_enter(fx.d, cpu), 0);
}

static void assert_usage(unsigned long leaf, unsigned long mid,
			 unsigned long root)
{
	assert_int_equal(pcstock_counter_read(&fx.leaf), leaf);
	assert_int_equal(pcstock_counter_read(&fx.mid), mid);
	assert_int_equal(pcstock_counter_read(&fx.root), root);
}

/* Charge through the stock, expecting success and @expect hierarchy pages. */
static void charge_ok(unsigned long n, unsigned long expect)
{
	unsigned long charged = ~0UL;

	assert_true(pcstock_counter_try_charge_stock(&fx.leaf, n, NULL,
						     &charged));
	assert_int_equal(charged, expect);
}

/* ---- explore-hook helpers ------------------------------------------------- */

/* Operations seen on the objects in [lo, hi), by kind. */
static const char *watch_lo, *watch_hi;
static unsigned int watched[PCS_OP_NR];

static void watch_hook(enum pcs_atomic_op op, const void *obj)
{
	const char *p = obj;

	if (p >= watch_lo && p < watch_hi)
		watched[op]++;
}

static void watch(const void *obj, size_t size)
{
	memset(watched, 0, sizeof(watched));
	watch_lo = obj;
	watch_hi = watch_lo + size;
	pcstock_explore_hook = watch_hook;
}

static unsigned int watched_total(void)
{
	unsigned int op, n = 0;

	for (op = 0; op < PCS_OP_NR; op++)
		n += watched[op];
	return n;
}

/* ---- charge path (both policies agree) -------------------------------------- */

static void test_empty_stock_charges_a_batch(void **state)
{
	(void)state;
	charge_ok(1, BATCH);
	assert_usage(BATCH, BATCH, BATCH);
	assert_int_equal(slot(0), BATCH - 1);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), BATCH - 1);
	assert_int_equal(slot(1), 0);
}

static void test_hits_touch_no_counter(void **state)
{
	unsigned int i;

	(void)state;
	charge_ok(1, BATCH);
	/*
	 * The counters' first three cache lines (usage, watermarks, limits)
	 * of the whole tree: a hit may read the stock descriptor only.
	 */
	watch(&fx.root, 3 * PCSTOCK_CACHELINE);
	for (i = 0; i < BATCH - 1; i++)
		charge_ok(1, 0);
	pcstock_explore_hook = NULL;
	assert_int_equal(watched_total(), 0);
	watch(&fx.leaf, 3 * PCSTOCK_CACHELINE);
	charge_ok(0, 0);
	pcstock_explore_hook = NULL;
	assert_int_equal(watched_total(), 0);
	assert_usage(BATCH, BATCH, BATCH);
	assert_int_equal(pcstock_counter_watermark(&fx.leaf), BATCH);
	assert_int_equal(slot(0), 0);
	/* The slot is empty again: the next page is a batch. */
	charge_ok(1, BATCH);
	assert_usage(2 * BATCH, 2 * BATCH, 2 * BATCH);
}

static void test_multi_page_hit_takes_exactly_n(void **state)
{
	(void)state;
	charge_ok(3, BATCH);
	assert_int_equal(slot(0), BATCH - 3);
	charge_ok(BATCH - 3, 0);
	assert_int_equal(slot(0), 0);
	/* Not enough left: a miss charges a new batch, the rest stays. */
	charge_ok(2, BATCH);
	charge_ok(BATCH - 3, 0);
	assert_int_equal(slot(0), 1);
	charge_ok(2, BATCH);
	assert_int_equal(slot(0), 1 + BATCH - 2);
	assert_usage(3 * BATCH, 3 * BATCH, 3 * BATCH);
}

static void test_tight_limit_greedy_fails_exact_succeeds(void **state)
{
	struct pcstock_counter *fail = NULL;
	unsigned long charged = 12345;

	(void)state;
	/* EXACT: the failed greedy charge turns the stock off (marked). */
	const int empty = is_exact() ? EXACT_MARK : 0;

	assert_int_equal(pcstock_counter_set_max(&fx.root, BATCH / 2), 0);
	charge_ok(1, 1);
	assert_int_equal(pcstock_counter_failcnt(&fx.root), 1);
	assert_int_equal(pcstock_counter_failcnt(&fx.leaf), 0);
	assert_int_equal(slot(0), empty);
	assert_usage(1, 1, 1);

	/* Exactly at the limit: the exact charge still succeeds. */
	charge_ok(BATCH / 2 - 1, BATCH / 2 - 1);
	/* EXACT, now exact: no greedy attempt, no failcnt. */
	assert_int_equal(pcstock_counter_failcnt(&fx.root),
			 is_exact() ? 1 : 2);
	assert_usage(BATCH / 2, BATCH / 2, BATCH / 2);

	/* No headroom: greedy and exact fail, failcnt +2, *fail the root. */
	assert_false(pcstock_counter_try_charge_stock(&fx.leaf, 1, &fail,
						      &charged));
	assert_ptr_equal(fail, &fx.root);
	assert_int_equal(charged, 12345);
	assert_int_equal(pcstock_counter_failcnt(&fx.root),
			 is_exact() ? 2 : 4);
	assert_usage(BATCH / 2, BATCH / 2, BATCH / 2);
	assert_int_equal(slot(0), empty);
}

static void test_hit_succeeds_at_the_limit(void **state)
{
	(void)state;
	charge_ok(1, BATCH);
	assert_int_equal(pcstock_counter_set_max(&fx.root, BATCH), 0);
	/* The pages were charged earlier: no limit check, no failure. */
	charge_ok(BATCH - 1, 0);
	assert_int_equal(pcstock_counter_failcnt(&fx.root), 0);
	assert_false(pcstock_counter_try_charge_stock(&fx.leaf, 1, NULL,
						      NULL));
}

static void test_batch_or_more_is_exact(void **state)
{
	(void)state;
	charge_ok(BATCH, BATCH);
	assert_int_equal(slot(0), 0);
	charge_ok(BATCH + 5, BATCH + 5);
	assert_int_equal(slot(0), 0);
	/* With pages in the slot but fewer than asked: still exact. */
	charge_ok(1, BATCH);
	charge_ok(BATCH, BATCH);
	assert_int_equal(slot(0), BATCH - 1);
	assert_usage(4 * BATCH + 5, 4 * BATCH + 5, 4 * BATCH + 5);
}

static void test_drain_returns_and_uncharges(void **state)
{
	(void)state;
	charge_ok(1, BATCH);
	move_to(2);
	charge_ok(2, BATCH);
	move_to(0);
	/* Remote drain of CPU 2 from CPU 0. */
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 2), BATCH - 2);
	assert_int_equal(slot(2), 0);
	assert_usage(BATCH + 2, BATCH + 2, BATCH + 2);
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 2), 0);
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 0), BATCH - 1);
	assert_usage(3, 3, 3);
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, NR_CPUS), 0);
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, ~0U), 0);
}

static void test_free_drains_every_cpu(void **state)
{
	unsigned int cpu;

	(void)state;
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		move_to(cpu);
		charge_ok(1, BATCH);
	}
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf),
			 NR_CPUS * (BATCH - 1));
	pcstock_counter_free_stock(&fx.leaf);
	assert_usage(NR_CPUS, NR_CPUS, NR_CPUS);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), 0);
	assert_int_equal(pcstock_counter_stock_batch(&fx.leaf), 0);
	assert_int_equal(pcstock_counter_stock_bound(&fx.leaf), 0);
	/* Plain again, and free is idempotent. */
	charge_ok(1, 1);
	pcstock_counter_free_stock(&fx.leaf);
	pcstock_counter_uncharge_stock(&fx.leaf, NR_CPUS + 1);
	assert_usage(0, 0, 0);
	/* A freed counter can be stocked again. */
	assert_int_equal(pcstock_counter_alloc_stock(&fx.leaf, fx.d, BATCH,
						     fx.policy), 0);
	charge_ok(1, BATCH);
}

/*
 * The same sequence through the plain calls on one tree and the stocked
 * calls on another must leave every field equal.
 */
static void check_plain_equivalence(struct pcstock_counter *c)
{
	static const unsigned long seq[] = { 1, 5, 0, 3, BATCH, 2 * BATCH };
	struct pcstock_counter r, m, l, *fp = NULL, *fs = NULL;
	unsigned long charged;
	unsigned int i;
	bool okp, oks;

	pcstock_counter_init(&r, NULL, false);
	pcstock_counter_init(&m, &r, false);
	pcstock_counter_init(&l, &m, false);
	pcstock_counter_set_track_failcnt(&l, true);
	assert_int_equal(pcstock_counter_set_max(&r, 3 * BATCH), 0);
	assert_int_equal(pcstock_counter_set_max(&fx.root, 3 * BATCH), 0);
	for (i = 0; i < 2 * sizeof(seq) / sizeof(seq[0]); i++) {
		unsigned long n = seq[i % (sizeof(seq) / sizeof(seq[0]))];

		okp = pcstock_counter_try_charge(&l, n, &fp);
		oks = pcstock_counter_try_charge_stock(c, n, &fs, &charged);
		assert_int_equal(okp, oks);
		if (oks)
			assert_int_equal(charged, n);
		else
			assert_ptr_equal(fs, &fx.root);
		assert_int_equal(pcstock_counter_read(c),
				 pcstock_counter_read(&l));
		assert_int_equal(pcstock_counter_read(&fx.root),
				 pcstock_counter_read(&r));
		assert_int_equal(pcstock_counter_failcnt(&fx.root),
				 pcstock_counter_failcnt(&r));
		assert_int_equal(pcstock_counter_watermark(&fx.root),
				 pcstock_counter_watermark(&r));
	}
	pcstock_counter_uncharge(&l, 2);
	pcstock_counter_uncharge_stock(c, 2);
	assert_int_equal(pcstock_counter_read(c), pcstock_counter_read(&l));
	assert_int_equal(pcstock_counter_read(&fx.root),
			 pcstock_counter_read(&r));
	assert_int_equal(pcstock_counter_stock_pages(c), 0);
}

static void test_unstocked_counter_is_plain(void **state)
{
	struct pcstock_stock_stats st;

	(void)state;
	pcstock_counter_free_stock(&fx.leaf);
	check_plain_equivalence(&fx.leaf);
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 0), 0);
	pcstock_counter_stock_stats(&fx.leaf, &st);
	assert_int_equal(st.hits + st.misses + st.refills + st.drains, 0);
	/* Disabling an unstocked counter does nothing. */
	pcstock_counter_disable_stock(&fx.leaf);
	assert_int_equal(pcstock_counter_alloc_stock(&fx.leaf, fx.d, BATCH,
						     fx.policy), 0);
}

static void test_no_cpu_thread_is_plain(void **state)
{
	(void)state;
	assert_int_equal(pcstock_cpu_exit(fx.d), 0);
	assert_int_equal(pcstock_this_cpu(fx.d), -1);
	check_plain_equivalence(&fx.leaf);
	assert_int_equal(pcstock_cpu_enter(fx.d, 0), 0);
}

/*
 * The hit paths cache the region of the thread's CPU in the domain of its
 * last stocked call.  A counter of another domain, or of a new domain made
 * where a destroyed one was, must never be served from it: the thread is
 * no CPU of those, so they charge exactly and their slots stay empty.
 */
static void test_cached_region_is_per_domain(void **state)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_SIM, NULL };
	struct pcstock_domain *other;
	struct pcstock_counter c;
	unsigned long charged;
	int round;

	(void)state;
	pcstock_counter_init(&c, NULL, false);
	for (round = 0; round < 2; round++) {
		assert_int_equal(pcstock_domain_create(&attr, &other), 0);
		assert_int_equal(pcstock_counter_alloc_stock(&c, other, BATCH,
							     fx.policy), 0);
		charge_ok(1, BATCH);	/* caches CPU 0 of fx.d */
		assert_true(pcstock_counter_try_charge_stock(&c, 1, NULL,
							     &charged));
		assert_int_equal(charged, 1);
		pcstock_counter_uncharge_stock(&c, 1);
		assert_int_equal(pcstock_counter_read(&c), 0);
		assert_int_equal(pcstock_counter_stock_pages(&c), 0);
		/* fx.d's cached CPU 0 is still served. */
		charge_ok(1, 0);
		assert_int_equal(slot(0), BATCH - 2);
		pcstock_counter_free_stock(&c);
		pcstock_domain_destroy(other);
		assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 0),
				 BATCH - 2);
		pcstock_counter_uncharge(&fx.leaf, 2);
	}
}

/*
 * A THREAD domain caches the thread's CPU there too; alternating with the
 * SIM domain the thread entered, each call still uses its own domain's
 * slot.
 */
static void test_cached_region_alternates_domains(void **state)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_THREAD, NULL };
	struct pcstock_domain *other;
	struct pcstock_counter c;
	int cpu, i;

	(void)state;
	pcstock_counter_init(&c, NULL, false);
	assert_int_equal(pcstock_domain_create(&attr, &other), 0);
	assert_int_equal(pcstock_counter_alloc_stock(&c, other, BATCH,
						     fx.policy), 0);
	cpu = pcstock_this_cpu(other);
	assert_true(cpu >= 0);
	for (i = 0; i < 3; i++) {
		charge_ok(1, i ? 0 : BATCH);
		assert_true(pcstock_counter_try_charge_stock(&c, 1, NULL,
							     NULL));
	}
	assert_int_equal(slot(0), BATCH - 3);
	assert_int_equal(atomic_load((atomic_int *)pcstock_percpu_ptr(other,
					c.stock_slots, (unsigned int)cpu)),
			 BATCH - 3);
	assert_int_equal(pcstock_counter_read(&c), BATCH);
	pcstock_counter_free_stock(&c);
	assert_int_equal(pcstock_counter_read(&c), 3);
	pcstock_counter_uncharge(&c, 3);
	pcstock_domain_destroy(other);
}

static void test_offline_drains_that_cpu(void **state)
{
	struct pcstock_stock_stats st;

	(void)state;
	move_to(2);
	charge_ok(1, BATCH);
	move_to(3);
	charge_ok(1, BATCH);
	assert_int_equal(pcstock_cpu_set_online(fx.d, 2, false), 0);
	assert_int_equal(slot(2), 0);
	assert_int_equal(slot(3), BATCH - 1);
	assert_usage(BATCH + 1, BATCH + 1, BATCH + 1);
	pcstock_counter_stock_stats(&fx.leaf, &st);
	assert_int_equal(st.drains, 1);
	assert_int_equal(st.drained_pages, BATCH - 1);
	/* Onlining drains nothing; a freed stock's hook is gone. */
	assert_int_equal(pcstock_cpu_set_online(fx.d, 2, true), 0);
	assert_int_equal(slot(3), BATCH - 1);
	pcstock_counter_free_stock(&fx.leaf);
	assert_int_equal(pcstock_cpu_set_online(fx.d, 3, false), 0);
	assert_usage(2, 2, 2);
}

static void test_disable_stops_refills(void **state)
{
	struct pcstock_stock_stats st;

	(void)state;
	charge_ok(1, BATCH);
	pcstock_counter_disable_stock(&fx.leaf);
	pcstock_counter_disable_stock(&fx.leaf);
	/* Every slot is marked once, its pages kept ... */
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_ + (int)BATCH - 1);
	assert_int_equal(slot(1), PCSTOCK_STOCK_MARK_);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), BATCH - 1);
	/* ... what is left is still consumed, as hits ... */
	charge_ok(2, 0);
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_ + (int)BATCH - 3);
	pcstock_counter_stock_stats(&fx.leaf, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	/* ... a miss charges exactly, with no surplus ... */
	charge_ok(BATCH - 2, BATCH - 2);
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_ + (int)BATCH - 3);
	/* ... uncharges go straight up ... */
	pcstock_counter_uncharge_stock(&fx.leaf, 1);
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_ + (int)BATCH - 3);
	assert_usage(2 * BATCH - 3, 2 * BATCH - 3, 2 * BATCH - 3);
	/* ... and drains still work, keeping the mark (V4's exchange too). */
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 0), BATCH - 3);
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_);
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 1), 0);
	assert_int_equal(slot(1), PCSTOCK_STOCK_MARK_);
	assert_usage(BATCH, BATCH, BATCH);
	charge_ok(1, 1);
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), 0);
	assert_int_equal(pcstock_counter_stock_batch(&fx.leaf), BATCH);
}

static void test_stats_count_each_event(void **state)
{
	struct pcstock_stock_stats st;

	(void)state;
	charge_ok(1, BATCH);		/* miss, refill */
	charge_ok(2, 0);		/* hit */
	charge_ok(3, 0);		/* hit */
	charge_ok(BATCH, BATCH);	/* miss, exact */
	move_to(1);
	charge_ok(1, BATCH);		/* miss, refill on CPU 1 */
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 0), BATCH - 6);
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 1), BATCH - 1);
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 1), 0);
	pcstock_counter_stock_stats(&fx.leaf, &st);
	assert_int_equal(st.hits, 2);
	assert_int_equal(st.misses, 3);
	assert_int_equal(st.refills, 2);
	assert_int_equal(st.drains, 2);
	assert_int_equal(st.drained_pages, 2 * BATCH - 7);
	assert_int_equal(st.trims, 0);
	/* A zero-page charge is a hit that takes nothing. */
	charge_ok(0, 0);
	pcstock_counter_stock_stats(&fx.leaf, &st);
	assert_int_equal(st.hits, 3);
	assert_int_equal(slot(0), 0);
	pcstock_counter_stock_stats(&fx.leaf, NULL);
}

static void test_bound_and_batch(void **state)
{
	(void)state;
	assert_int_equal(pcstock_counter_stock_batch(&fx.leaf), BATCH);
	assert_int_equal(pcstock_counter_stock_bound(&fx.leaf),
			 NR_CPUS * BATCH);
	assert_int_equal(pcstock_counter_stock_batch(&fx.mid), 0);
	assert_int_equal(pcstock_counter_stock_bound(&fx.mid), 0);
	assert_int_equal(pcstock_counter_stock_pages(&fx.mid), 0);
	assert_int_equal(pcstock_counter_stock_batch(NULL), 0);
	assert_int_equal(pcstock_counter_stock_bound(NULL), 0);
	assert_int_equal(pcstock_counter_stock_pages(NULL), 0);
}

static void test_bad_input(void **state)
{
	struct pcstock_counter *c = &fx.mid;

	(void)state;
	assert_int_equal(pcstock_counter_alloc_stock(NULL, fx.d, BATCH,
						     fx.policy), -EINVAL);
	assert_int_equal(pcstock_counter_alloc_stock(c, NULL, BATCH,
						     fx.policy), -EINVAL);
	assert_int_equal(pcstock_counter_alloc_stock(c, fx.d, 0, fx.policy),
			 -EINVAL);
	assert_int_equal(pcstock_counter_alloc_stock(c, fx.d,
			 PCSTOCK_STOCK_MAX_BATCH + 1, fx.policy), -EINVAL);
	assert_int_equal(pcstock_counter_alloc_stock(c, fx.d, BATCH,
			 (enum pcstock_stock_policy)7), -EINVAL);
	assert_int_equal(pcstock_counter_stock_batch(c), 0);
	assert_int_equal(pcstock_counter_alloc_stock(&fx.leaf, fx.d, BATCH,
						     fx.policy), -EBUSY);
	assert_int_equal(pcstock_counter_stock_batch(&fx.leaf), BATCH);
	/* The largest batch is accepted. */
	assert_int_equal(pcstock_counter_alloc_stock(c, fx.d,
			 PCSTOCK_STOCK_MAX_BATCH, fx.policy), 0);
	assert_int_equal(pcstock_counter_stock_bound(c),
			 (unsigned long)NR_CPUS * PCSTOCK_STOCK_MAX_BATCH);
	pcstock_counter_free_stock(c);
	pcstock_counter_free_stock(NULL);
	pcstock_counter_disable_stock(NULL);
	assert_int_equal(pcstock_counter_drain_stock(NULL, 0), 0);
	/*
	 * A request no slot can hold goes to the hierarchy, exactly.  EXACT
	 * drains its stock before it fails, in case that made room.
	 */
	charge_ok(1, BATCH);
	assert_false(pcstock_counter_try_charge_stock(&fx.leaf, ULONG_MAX / 2,
						      NULL, NULL));
	assert_int_equal(slot(0), is_exact() ? 0 : (int)BATCH - 1);
}

/* ---- allocation failure ---------------------------------------------------- */

static unsigned int fault_calls, fault_at;
static bool failed_percpu, failed_hook;

static bool fail_kth(const char *site)
{
	if (++fault_calls != fault_at)
		return false;
	failed_percpu |= !strncmp(site, "percpu", 6);
	failed_hook |= !strcmp(site, "cpu-hook");
	return true;
}

/*
 * Fail the k-th allocation of alloc_stock() for k = 1, 2, ... until it
 * succeeds, on a fresh domain (so that the arena has to grow): every
 * failure is -ENOMEM, frees what was taken and leaves a working plain
 * counter.
 */
static void test_alloc_failure_leaves_a_plain_counter(void **state)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_SIM, NULL };
	struct pcstock_domain_memory before, after;
	struct pcstock_domain *d;
	int ret = -ENOMEM;

	(void)state;
	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	pcstock_domain_memory(d, &before);
	failed_percpu = failed_hook = false;
	for (fault_at = 1; fault_at < 1000; fault_at++) {
		fault_calls = 0;
		pcstock_fault_hook = fail_kth;
		ret = pcstock_counter_alloc_stock(&fx.mid, d, BATCH, fx.policy);
		pcstock_fault_hook = NULL;
		if (!ret)
			break;
		assert_int_equal(ret, -ENOMEM);
		pcstock_domain_memory(d, &after);
		assert_int_equal(after.in_use, before.in_use);
		assert_int_equal(pcstock_counter_stock_batch(&fx.mid), 0);
		/* The mid counter works unstocked. */
		assert_true(pcstock_counter_try_charge_stock(&fx.mid, 1, NULL,
							     NULL));
		pcstock_counter_uncharge_stock(&fx.mid, 1);
		assert_usage(0, 0, 0);
	}
	/* The arena and the hook registration failed once each, then ok. */
	assert_int_equal(ret, 0);
	assert_true(failed_percpu);
	assert_true(failed_hook);
	assert_true(fault_calls < fault_at);
	assert_int_equal(pcstock_counter_stock_batch(&fx.mid), BATCH);
	pcstock_counter_free_stock(&fx.mid);
	pcstock_domain_memory(d, &after);
	assert_int_equal(after.in_use, before.in_use);
	pcstock_domain_destroy(d);
}

/* ---- where the policies differ ------------------------------------------------ */

static void test_small_uncharge_refills_default_only(void **state)
{
	struct pcstock_stock_stats st;

	(void)state;
	charge_ok(1, BATCH);
	pcstock_counter_uncharge_stock(&fx.leaf, 1);
	if (is_v4()) {
		/* v4: straight up the hierarchy. */
		assert_int_equal(slot(0), BATCH - 1);
		assert_usage(BATCH - 1, BATCH - 1, BATCH - 1);
	} else {
		assert_int_equal(slot(0), BATCH);
		assert_usage(BATCH, BATCH, BATCH);
	}
	/* DEFAULT: an overflowing slot goes up whole, as a trim. */
	charge_ok(4, 0);
	pcstock_counter_uncharge_stock(&fx.leaf, 4);
	charge_ok(3, 0);
	pcstock_counter_uncharge_stock(&fx.leaf, 3);
	pcstock_counter_stock_stats(&fx.leaf, &st);
	if (is_v4()) {
		assert_int_equal(slot(0), BATCH - 8);
		assert_usage(BATCH - 8, BATCH - 8, BATCH - 8);
		assert_int_equal(st.trims, 0);
		assert_int_equal(st.refills, 1);
	} else {
		assert_int_equal(slot(0), BATCH);
		assert_usage(BATCH, BATCH, BATCH);
		assert_int_equal(st.trims, 0);
		assert_int_equal(st.refills, 4);
		/*
		 * Hold more than a batch (exact), give 3 back to the full
		 * slot: the slot and the 3 pages go up together (mainline's
		 * refill_stock()), so that a CPU that only receives pages
		 * pays one hierarchical uncharge per batch, not per call.
		 */
		charge_ok(BATCH + 1, BATCH + 1);
		pcstock_counter_uncharge_stock(&fx.leaf, 3);
		pcstock_counter_stock_stats(&fx.leaf, &st);
		assert_int_equal(slot(0), 0);
		assert_int_equal(st.trims, BATCH + 3);
		assert_usage(BATCH - 2, BATCH - 2, BATCH - 2);
	}
}

static void test_over_batch_uncharge_bypasses(void **state)
{
	(void)state;
	charge_ok(1, BATCH);
	charge_ok(3 * BATCH, 3 * BATCH);
	pcstock_counter_uncharge_stock(&fx.leaf, BATCH + 1);
	assert_int_equal(slot(0), BATCH - 1);
	assert_usage(3 * BATCH - 1, 3 * BATCH - 1, 3 * BATCH - 1);
	/* Exactly batch is still "small" for DEFAULT: it fills the slot. */
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 0), BATCH - 1);
	pcstock_counter_uncharge_stock(&fx.leaf, BATCH);
	if (is_v4()) {
		assert_int_equal(slot(0), 0);
		assert_usage(BATCH, BATCH, BATCH);
	} else {
		assert_int_equal(slot(0), BATCH);
		assert_usage(2 * BATCH, 2 * BATCH, 2 * BATCH);
	}
}

static void test_drain_of_empty_slot(void **state)
{
	(void)state;
	watch(slot_ptr(&fx.leaf, 1), sizeof(atomic_int));
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 1), 0);
	pcstock_explore_hook = NULL;
	if (is_v4()) {
		/* v4: the exchange pulls the owner's line even when empty. */
		assert_int_equal(watched[PCS_OP_XCHG], 1);
		assert_int_equal(watched_total(), 1);
	} else {
		assert_int_equal(watched[PCS_OP_LOAD], 1);
		assert_int_equal(watched_total(), 1);
	}
	/*
	 * A full slot is exchanged by both, and compare-exchanged by EXACT,
	 * which keeps the slot's marks as they are.
	 */
	move_to(1);
	charge_ok(1, BATCH);
	watch(slot_ptr(&fx.leaf, 1), sizeof(atomic_int));
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 1), BATCH - 1);
	pcstock_explore_hook = NULL;
	assert_int_equal(watched[is_exact() ? PCS_OP_CAS : PCS_OP_XCHG], 1);
}

/*
 * Migration inside a miss: the thread changes CPU (or stops being one)
 * between the greedy charge and the surplus add.  The surplus goes to the
 * CPU it is on afterwards (v4 re-reads it), or up the hierarchy.
 */
static int migrate_to;
static bool migrate_done;
static const void *migrate_usage;	/* the charge that triggers it */

static void migrate_hook(enum pcs_atomic_op op, const void *obj)
{
	if (migrate_done || obj != migrate_usage || op != PCS_OP_ADD)
		return;
	migrate_done = true;
	pcstock_cpu_exit(fx.d);
	if (migrate_to >= 0)
		pcstock_cpu_enter(fx.d, (unsigned int)migrate_to);
}

static void test_surplus_goes_to_the_cpu_after_the_charge(void **state)
{
	(void)state;
	migrate_usage = &fx.leaf.usage;
	migrate_to = 3;
	migrate_done = false;
	pcstock_explore_hook = migrate_hook;
	charge_ok(1, BATCH);
	pcstock_explore_hook = NULL;
	assert_int_equal(pcstock_this_cpu(fx.d), 3);
	assert_int_equal(slot(0), 0);
	assert_int_equal(slot(3), BATCH - 1);

	/* No CPU any more: the surplus is uncharged, the charge stands. */
	move_to(1);
	migrate_to = -1;
	migrate_done = false;
	pcstock_explore_hook = migrate_hook;
	charge_ok(2, BATCH);
	pcstock_explore_hook = NULL;
	assert_int_equal(pcstock_this_cpu(fx.d), -1);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), BATCH - 1);
	assert_usage(BATCH + 2, BATCH + 2, BATCH + 2);
	assert_int_equal(pcstock_cpu_enter(fx.d, 0), 0);
}

/* Charge a page of @c on CPU 0, migrating to CPU 3 inside the charge. */
static void charge_0_refill_3(struct pcstock_counter *c)
{
	move_to(0);
	migrate_usage = &c->usage;
	migrate_to = 3;
	migrate_done = false;
	pcstock_explore_hook = migrate_hook;
	assert_true(pcstock_counter_try_charge_stock(c, 1, NULL, NULL));
	pcstock_explore_hook = NULL;
	assert_true(migrate_done);
}

/*
 * A thread that always misses on CPU 0 and migrates to CPU 3 before its
 * surplus lands (an adversarial scheduler, or RSEQ's OS CPU changing)
 * refills CPU 3 at every charge and never takes from it.  V4 has no cap:
 * the slot would grow by a batch per charge into the mark's range and
 * overflow; ours drains it past PCSTOCK_STOCK_V4_CEILING.  DEFAULT never
 * lets it exceed the batch.  Either way every page stays accounted for.
 */
static void test_slot_growth_is_bounded(void **state)
{
	const unsigned int batch = PCSTOCK_STOCK_MAX_BATCH;
	const unsigned int rounds = PCSTOCK_STOCK_V4_CEILING / (batch - 1) + 2;
	struct pcstock_stock_stats st;
	struct pcstock_counter c;
	unsigned int i;
	int top = 0, v;

	(void)state;
	pcstock_counter_init(&c, NULL, false);
	assert_int_equal(pcstock_counter_alloc_stock(&c, fx.d, batch,
						     fx.policy), 0);
	for (i = 0; i < rounds; i++) {
		charge_0_refill_3(&c);
		v = atomic_load(slot_ptr(&c, 3));
		top = PCS_MAX(top, v);
	}
	move_to(0);
	assert_true(top >= 0);
	assert_true(top <= (int)(is_v4() ? PCSTOCK_STOCK_V4_CEILING : batch));
	pcstock_counter_stock_stats(&c, &st);
	if (is_v4())
		assert_int_equal(st.drains, 1);
	assert_int_equal(pcstock_counter_read(&c),
			 rounds + pcstock_counter_stock_pages(&c));
	pcstock_counter_disable_stock(&c);
	for (i = 0; i < NR_CPUS; i++)
		pcstock_counter_drain_stock(&c, i);
	assert_int_equal(pcstock_counter_read(&c), rounds);
	pcstock_counter_uncharge(&c, rounds);
	pcstock_counter_free_stock(&c);
}

/*
 * A V4 slot grown past PCSTOCK_STOCK_MAX_BATCH (here by surpluses that
 * land on CPU 3 after misses on CPU 0) serves a charge above the largest
 * batch, as the series' try_charge_stock() serves any n <= the slot.
 * DEFAULT never holds that much: the charge is exact.
 */
static void test_large_charge_hits_a_large_slot(void **state)
{
	const unsigned int batch = PCSTOCK_STOCK_MAX_BATCH;
	const unsigned long big = PCSTOCK_STOCK_MAX_BATCH + 1;
	struct pcstock_counter c;
	unsigned long charged = ~0UL, held = 0;
	int before;

	(void)state;
	pcstock_counter_init(&c, NULL, false);
	assert_int_equal(pcstock_counter_alloc_stock(&c, fx.d, batch,
						     fx.policy), 0);
	for (; held < 2; held++)
		charge_0_refill_3(&c);
	move_to(3);
	before = atomic_load(slot_ptr(&c, 3));
	assert_true(pcstock_counter_try_charge_stock(&c, big, NULL, &charged));
	held += big;
	if (is_v4()) {
		assert_int_equal(before, 2 * (batch - 1));
		assert_int_equal(charged, 0);
		assert_int_equal(atomic_load(slot_ptr(&c, 3)),
				 before - (int)big);
	} else {
		assert_true(before <= (int)batch);
		assert_int_equal(charged, big);
		assert_int_equal(atomic_load(slot_ptr(&c, 3)), before);
	}
	assert_int_equal(pcstock_counter_read(&c),
			 held + pcstock_counter_stock_pages(&c));
	pcstock_counter_free_stock(&c);
	assert_int_equal(pcstock_counter_read(&c), held);
	pcstock_counter_uncharge(&c, held);
	move_to(0);
}

/*
 * The racing refill (Sashiko, v4 review): thread A misses, charges a batch
 * and is preempted just before it adds its surplus; thread B, on the same
 * CPU, misses, charges a batch and adds its surplus; then A adds.  v4's
 * plain add leaves 2 × (batch − 1) in the slot; DEFAULT's capped CAS fails
 * on A's stale value, sees the overflow and sends the whole slot up.
 */
struct race {
	const void *usage;
	const void *slot;
	sem_t b_go;
	sem_t b_done;
};

static struct race race;
static _Thread_local bool race_is_a, race_a_charged, race_a_held;

static void race_hook(enum pcs_atomic_op op, const void *obj)
{
	if (!race_is_a || race_a_held)
		return;
	if (obj == race.usage && op == PCS_OP_ADD) {
		race_a_charged = true;
	} else if (race_a_charged && obj == race.slot && op != PCS_OP_LOAD) {
		/* A is about to add its surplus: let B run first. */
		race_a_held = true;
		sem_post(&race.b_go);
		sem_wait(&race.b_done);
	}
}

static void *race_b(void *arg)
{
	unsigned long charged = 0;

	(void)arg;
	sem_wait(&race.b_go);
	if (pcstock_cpu_enter(fx.d, 0) ||
	    !pcstock_counter_try_charge_stock(&fx.leaf, 1, NULL, &charged))
		charged = 0;
	pcstock_cpu_exit(fx.d);
	sem_post(&race.b_done);
	return (void *)(uintptr_t)charged;
}

static void test_racing_refill_exceeds_batch_only_in_v4(void **state)
{
	struct pcstock_stock_stats st;
	pthread_t b;
	void *ret;

	(void)state;
	race_a_charged = false;
	race_a_held = false;
	race.usage = &fx.leaf.usage;
	race.slot = slot_ptr(&fx.leaf, 0);
	assert_int_equal(sem_init(&race.b_go, 0, 0), 0);
	assert_int_equal(sem_init(&race.b_done, 0, 0), 0);
	assert_int_equal(pthread_create(&b, NULL, race_b, NULL), 0);
	pcstock_explore_hook = race_hook;
	race_is_a = true;
	charge_ok(1, BATCH);
	race_is_a = false;
	pcstock_explore_hook = NULL;
	assert_int_equal(pthread_join(b, &ret), 0);
	sem_destroy(&race.b_go);
	sem_destroy(&race.b_done);
	/* B ran inside A's window and missed too. */
	assert_true(race_a_held);
	assert_int_equal((uintptr_t)ret, BATCH);

	pcstock_counter_stock_stats(&fx.leaf, &st);
	if (is_v4()) {
		assert_int_equal(slot(0), 2 * (BATCH - 1));
		assert_true(slot(0) > (int)BATCH);
		assert_int_equal(st.trims, 0);
	} else {
		assert_int_equal(slot(0), 0);
		assert_int_equal(st.trims, 2 * (BATCH - 1));
	}
	/* Conservation either way: 2 pages held, the rest in the slot. */
	assert_int_equal(pcstock_counter_read(&fx.root),
			 2 + pcstock_counter_stock_pages(&fx.leaf));
}

/* ---- exact at the limit (EXACT) -------------------------------------------- */

#define HIDE (NR_CPUS * BATCH)	/* what the leaf's slots can hide */

/*
 * Whether the leaf's stock is empty whenever some level is within HIDE of
 * its max (the stranding bound of PCSTOCK_STOCK_EXACT, with max fixed and
 * every charge through the leaf).
 */
static bool stock_empty_near_max(void)
{
	const struct pcstock_counter *lv[] = { &fx.leaf, &fx.mid, &fx.root };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		unsigned long u = pcstock_counter_read(lv[i]);
		unsigned long max = pcstock_counter_max(lv[i]);

		if (u + HIDE > max)
			return pcstock_counter_stock_pages(&fx.leaf) == 0;
	}
	return true;
}

/*
 * Every CPU charges one page in turn, CPU 0 four times as often, until the
 * pages held reach max: a charge that fails while held + 1 <= max failed
 * for pages in stock.  Returns those failures; checks conservation.
 */
static unsigned long charge_round_robin_to(unsigned long max)
{
	unsigned long held = 0, early = 0, turn = 0;

	assert_int_equal(pcstock_counter_set_max(&fx.mid, max), 0);
	while (held < max) {
		unsigned int t = (unsigned int)(turn++ % (NR_CPUS + 3));

		move_to(t < 4 ? 0 : t - 3);
		if (pcstock_counter_try_charge_stock(&fx.leaf, 1, NULL, NULL))
			held++;
		else if (++early > 4 * max)
			break;
		if (is_exact())
			assert_true(stock_empty_near_max());
	}
	move_to(0);
	assert_int_equal(pcstock_counter_read(&fx.leaf),
			 held + pcstock_counter_stock_pages(&fx.leaf));
	return early;
}

/*
 * The workload of issue 21: charges to within a batch of max from every
 * CPU.  EXACT fails none while held + request <= max, and holds nothing
 * in stock within HIDE of max; DEFAULT and V4 strand pages in the other
 * CPUs' slots and fail early.
 */
static void test_exact_no_failure_for_pages_in_stock(void **state)
{
	unsigned long early;

	(void)state;
	early = charge_round_robin_to(4 * HIDE);
	if (is_exact()) {
		assert_int_equal(early, 0);
		assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), 0);
		assert_int_equal(pcstock_counter_read(&fx.mid), 4 * HIDE);
		/* At max: the next page fails, and nothing is in stock. */
		assert_false(pcstock_counter_try_charge_stock(&fx.leaf, 1,
							      NULL, NULL));
		/* Hits fail on the marked slots; uncharges go straight up. */
		pcstock_counter_uncharge_stock(&fx.leaf, 1);
		assert_int_equal(slot(0), EXACT_MARK);
		assert_int_equal(pcstock_counter_read(&fx.mid), 4 * HIDE - 1);
	} else {
		assert_true(early > 0);
	}
}

/*
 * EXACT's failed exact charge drains every slot and tries once more: a
 * charge that fits only without the pages in its own counter's stock
 * succeeds (mutation Q10, docs/mutation.md).  Far from max (the margin
 * is above HIDE), so the leaf stays stocked until the charge.
 */
static void test_exact_charge_retries_after_its_drain(void **state)
{
	const unsigned long max = 4 * HIDE, big = max - 1;

	(void)state;
	assert_int_equal(pcstock_counter_set_max(&fx.root, max), 0);
	move_to(0);
	assert_true(pcstock_counter_try_charge_stock(&fx.leaf, 1, NULL,
						     NULL));
	assert_int_equal(slot(0), BATCH - 1);
	/* BATCH + big is over max, 1 + big is not. */
	assert_true(pcstock_counter_try_charge_stock(&fx.leaf, big, NULL,
						     NULL));
	assert_int_equal(pcstock_counter_read(&fx.root), max);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), 0);
}

/* Far from every max, EXACT stocks as DEFAULT does. */
static void test_exact_far_from_max_stocks(void **state)
{
	struct pcstock_stock_stats st;
	unsigned int cpu;

	(void)state;
	assert_int_equal(pcstock_counter_set_max(&fx.root, 100 * HIDE), 0);
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		move_to(cpu);
		charge_ok(1, BATCH);
		charge_ok(1, 0);
		assert_int_equal(slot(cpu), BATCH - 2);
	}
	pcstock_counter_uncharge_stock(&fx.leaf, 1);
	assert_int_equal(slot(NR_CPUS - 1), BATCH - 1);
	pcstock_counter_stock_stats(&fx.leaf, &st);
	assert_int_equal(st.hits, NR_CPUS);
	assert_int_equal(st.misses, NR_CPUS);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf),
			 NR_CPUS * (BATCH - 2) + 1);
}

/*
 * Near max the leaf goes exact (slots marked and drained), and a miss
 * that finds every level at least twice HIDE below its max stocks again.
 */
static void test_exact_hysteresis(void **state)
{
	unsigned int cpu;

	(void)state;
	assert_int_equal(pcstock_counter_set_max(&fx.root, 3 * HIDE), 0);
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		move_to(cpu);
		charge_ok(1, BATCH);
	}
	move_to(0);
	/* Exact charges leave HIDE below max: still stocked. */
	charge_ok(HIDE, HIDE);
	charge_ok(BATCH, BATCH);
	assert_int_equal(pcstock_counter_read(&fx.root), 2 * HIDE + BATCH);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf),
			 NR_CPUS * (BATCH - 1));
	/* Within HIDE of max: EXACT drains every slot and marks it. */
	charge_ok(BATCH, BATCH);
	if (is_exact()) {
		assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), 0);
		for (cpu = 0; cpu < NR_CPUS; cpu++)
			assert_int_equal(slot(cpu), EXACT_MARK);
		charge_ok(1, 1);
		/* Room for HIDE more pages but not 2 × HIDE: still exact. */
		pcstock_counter_uncharge_stock(&fx.leaf, 2 * BATCH);
		charge_ok(1, 1);
		/* Twice HIDE below max: the next miss re-enables. */
		pcstock_counter_uncharge(&fx.leaf,
					 pcstock_counter_read(&fx.leaf) - 1);
		charge_ok(1, 1);
		assert_int_equal(slot(0), 0);
		charge_ok(1, BATCH);
		assert_int_equal(slot(0), BATCH - 1);
		assert_int_equal(pcstock_counter_read(&fx.leaf),
				 2 + BATCH);
	}
}

/*
 * A counter-level hook for the group layer: a sibling's stock under a
 * common ancestor at its max.  Draining it (and, for EXACT, keeping it
 * from filling again) lets the other leaf's charge succeed.
 */
static void test_exact_go_exact_frees_a_siblings_stock(void **state)
{
	struct pcstock_counter sib;
	unsigned long got, in_stock;
	unsigned int cpu;

	(void)state;
	pcstock_counter_init(&sib, &fx.mid, false);
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		move_to(cpu);
		charge_ok(1, BATCH);
	}
	move_to(0);
	in_stock = pcstock_counter_stock_pages(&fx.leaf);
	assert_int_equal(in_stock, NR_CPUS * (BATCH - 1));
	assert_int_equal(pcstock_counter_set_max(&fx.mid, NR_CPUS * BATCH), 0);
	assert_false(pcstock_counter_try_charge(&sib, 1, NULL));
	got = pcstock_counter_stock_go_exact(&fx.leaf);
	assert_int_equal(got, in_stock);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), 0);
	assert_int_equal(pcstock_counter_read(&fx.mid), NR_CPUS);
	assert_true(pcstock_counter_try_charge(&sib, in_stock, NULL));
	pcstock_counter_uncharge(&sib, in_stock);
	/* EXACT stays exact: its next charge takes one page, no batch. */
	if (is_exact()) {
		charge_ok(1, 1);
		assert_int_equal(slot(0), EXACT_MARK);
	} else {
		charge_ok(1, BATCH);
	}
	assert_int_equal(pcstock_counter_stock_go_exact(NULL), 0);
	assert_int_equal(pcstock_counter_stock_go_exact(&fx.mid), 0);
}

/*
 * A disable while exact adds its own mark: the slots carry two, which
 * drains and readers decode, and a later miss far from max cannot lift
 * the disable's.
 */
static void test_exact_disable_while_exact(void **state)
{
	(void)state;
	charge_ok(1, BATCH);
	pcstock_counter_stock_go_exact(&fx.leaf);
	pcstock_counter_disable_stock(&fx.leaf);
	assert_int_equal(slot(1), is_exact() ? PCSTOCK_STOCK_MARK_ + EXACT_MARK :
			 PCSTOCK_STOCK_MARK_);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), 0);
	assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 1), 0);
	charge_ok(1, 1);
	charge_ok(1, 1);
	pcstock_counter_uncharge_stock(&fx.leaf, 1);
	assert_true(slot(0) < 0);
	assert_true(slot(1) < 0);
	assert_usage(2, 2, 2);
}

/*
 * An optional argument is a cmocka test filter: a star then "/exact" runs
 * the EXACT cases only (tests/stock.cmake runs them on a planted bug).
 */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		EACH(test_empty_stock_charges_a_batch),
		EACH(test_hits_touch_no_counter),
		EACH(test_multi_page_hit_takes_exactly_n),
		EACH(test_tight_limit_greedy_fails_exact_succeeds),
		EACH(test_hit_succeeds_at_the_limit),
		EACH(test_batch_or_more_is_exact),
		EACH(test_drain_returns_and_uncharges),
		EACH(test_free_drains_every_cpu),
		EACH(test_unstocked_counter_is_plain),
		EACH(test_no_cpu_thread_is_plain),
		EACH(test_cached_region_is_per_domain),
		EACH(test_cached_region_alternates_domains),
		EACH(test_offline_drains_that_cpu),
		EACH(test_disable_stops_refills),
		EACH(test_stats_count_each_event),
		EACH(test_bound_and_batch),
		EACH(test_bad_input),
		EACH(test_alloc_failure_leaves_a_plain_counter),
		EACH(test_small_uncharge_refills_default_only),
		EACH(test_over_batch_uncharge_bypasses),
		EACH(test_drain_of_empty_slot),
		EACH(test_surplus_goes_to_the_cpu_after_the_charge),
		EACH(test_racing_refill_exceeds_batch_only_in_v4),
		EACH(test_slot_growth_is_bounded),
		EACH(test_large_charge_hits_a_large_slot),
		EACH(test_exact_no_failure_for_pages_in_stock),
		EXACT_ONLY(test_exact_far_from_max_stocks),
		EXACT_ONLY(test_exact_charge_retries_after_its_drain),
		EACH(test_exact_hysteresis),
		EACH(test_exact_go_exact_frees_a_siblings_stock),
		EACH(test_exact_disable_while_exact),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
