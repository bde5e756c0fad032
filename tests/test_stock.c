// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_stock.c - the stock layer, sequentially, on a SIM domain: the series'
 * v4 3/5 behaviour (include/pcstock/stock.h: the series, its policies and
 * the invariant at rest) where the policies agree, and the stock's
 * allocation failures; test_stock_policies.c has the cases where they
 * differ.  Both files are one program, around stock_fixture.c: a
 * 3-level tree root <- mid <- leaf with a stock of BATCH pages on the
 * leaf; the main thread is CPU 0 unless a case moves it.  Expected numbers
 * are derived by hand from the series' algorithm.
 *
 * A case whose comment names a mutant ("Mutant C2: ...") came from the
 * mutation study (docs/mutation.md, by that id) and fails on it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "stock_fixture.h"

/* ---- charge path (both policies agree) ----------------------------------- */

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
	(void)state;
	park_on_every_cpu();
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

/*
 * THREAD mode: a thread's table has PCS_THREAD_CACHE entries, by domain id
 * modulo its size.  When a domain takes over the entry the hit cache was
 * filled from, the cache goes with it: the replaced domain's next stocked
 * charge asks the table again and gets its next CPU (1), where it misses
 * (a batch of 4 charged), instead of a hit from CPU 0's slot.  Domain ids
 * are consecutive, so the fifth domain after d shares d's entry.
 * Mutant Q21: pcs_thread_cpu_assign() dropping the cache only when it names
 * the new domain.
 */
struct entry_replaced {
	struct pcstock_counter *c;
	unsigned long charged[2];	/* by each charge: a miss takes BATCH */
	int cpu_other, err;
};

static void *thread_entry_replaced(void *arg)
{
	struct entry_replaced *r = arg;
	struct pcstock_domain_attr attr = { 1, PCSTOCK_CPU_THREAD, NULL };
	struct pcstock_domain *others[4];
	int i;

	if (!pcstock_counter_try_charge_stock(r->c, 1, NULL, &r->charged[0]))
		r->err = -1;
	for (i = 0; i < 4; i++)
		r->err |= pcstock_domain_create(&attr, &others[i]);
	if (r->err)
		return NULL;
	r->cpu_other = pcstock_this_cpu(others[3]);
	if (!pcstock_counter_try_charge_stock(r->c, 1, NULL, &r->charged[1]))
		r->err = -1;
	for (i = 0; i < 4; i++)
		r->err |= pcstock_domain_destroy(others[i]);
	return NULL;
}

static void test_thread_entry_replaced_drops_cache(void **state)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_THREAD, NULL };
	struct pcstock_domain *d;
	struct pcstock_counter c;
	struct entry_replaced r = { &c, { 0, 0 }, -1, 0 };
	pthread_t th;

	(void)state;
	pcstock_counter_init(&c, NULL, false);
	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	assert_int_equal(pcstock_counter_alloc_stock(&c, d, BATCH,
						     PCSTOCK_STOCK_DEFAULT),
			 0);
	assert_int_equal(pthread_create(&th, NULL, thread_entry_replaced, &r),
			 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.cpu_other, 0);
	assert_int_equal(r.charged[0], BATCH);	/* CPU 0: a miss */
	assert_int_equal(r.charged[1], BATCH);	/* CPU 1: a miss again */
	assert_int_equal(pcstock_counter_read(&c), 2 * BATCH);
	assert_int_equal(pcstock_counter_drain_stock(&c, 0), BATCH - 1);
	assert_int_equal(pcstock_counter_drain_stock(&c, 1), BATCH - 1);
	pcstock_counter_free_stock(&c);
	assert_int_equal(pcstock_domain_destroy(d), 0);
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

/*
 * A disabled stock still serves what its slot holds, down to the last
 * page: a charge of exactly the pages left is a hit, and the mark stays.
 * Mutant C2: the take from a marked slot (take_pages(), src/stock.c)
 * asking for more than it takes ("> nr").
 */
static void test_disabled_slot_serves_its_last_pages(void **state)
{
	struct pcstock_stock_stats st;

	(void)state;
	charge_ok(1, BATCH);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), BATCH - 1);
	pcstock_counter_disable_stock(&fx.leaf);
	charge_ok(BATCH - 1, 0);
	assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), 0);
	assert_int_equal(pcstock_counter_read(&fx.leaf), BATCH);
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_);
	pcstock_counter_stock_stats(&fx.leaf, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	pcstock_counter_uncharge_stock(&fx.leaf, BATCH);
	assert_int_equal(pcstock_counter_read(&fx.root), 0);
}

/*
 * The mark keeps a full slot of the largest batch apart from an unmarked
 * one: disabled, it still counts its pages, a drain takes them all, and
 * the slot stays marked.  Mutant C15: a mark of -PCSTOCK_STOCK_MAX_BATCH or
 * less in magnitude, which a full slot cancels.
 */
static void test_mark_of_full_max_batch_slot(void **state)
{
	const unsigned long max = PCSTOCK_STOCK_MAX_BATCH;

	(void)state;
	charge_ok(1, max);
	if (fx.policy == PCSTOCK_STOCK_DEFAULT)
		pcstock_counter_uncharge_stock(&fx.leaf, 1);
	else
		charge_ok(max - 1, 0);
	pcstock_counter_disable_stock(&fx.leaf);
	if (fx.policy == PCSTOCK_STOCK_DEFAULT) {
		assert_true(slot(0) < 0);
		assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), max);
		assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 0), max);
		assert_int_equal(pcstock_counter_read(&fx.root), 0);
	} else {
		assert_int_equal(pcstock_counter_stock_pages(&fx.leaf), 0);
		assert_int_equal(pcstock_counter_drain_stock(&fx.leaf, 0), 0);
		pcstock_counter_uncharge(&fx.leaf, max);
	}
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_);
	/* Marked and empty: nothing is served, nothing is put back. */
	charge_ok(1, 1);
	pcstock_counter_uncharge_stock(&fx.leaf, 1);
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_);
	assert_int_equal(pcstock_counter_read(&fx.root), 0);
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

/* ---- allocation failure -------------------------------------------------- */

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
		cmocka_unit_test(test_thread_entry_replaced_drops_cache),
		EACH(test_offline_drains_that_cpu),
		EACH(test_disable_stops_refills),
		DEFAULT_AND_V4(test_disabled_slot_serves_its_last_pages, setup),
		DEFAULT_AND_V4(test_mark_of_full_max_batch_slot,
			       setup_max_batch),
		EACH(test_stats_count_each_event),
		EACH(test_bound_and_batch),
		EACH(test_bad_input),
		EACH(test_alloc_failure_leaves_a_plain_counter),
	};
	int failed;

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	failed = cmocka_run_group_tests_name("test_stock", tests, NULL, NULL);
	return failed + run_stock_policy_cases();
}
