// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mutants_stock.c - boundary cases of the stock that a mutation study
 * of the code found no test for (docs/mutation.md): each case fails on the
 * mutant named in its comment.
 *
 * A SIM domain of two CPUs, one stocked counter under a parent; the main
 * thread is CPU 0 (one case makes its own RSEQ domain).  Numbers follow stock.c's algorithm by hand.
 */
#define _GNU_SOURCE		/* sched_getcpu(), CPU affinity */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

#include <pcstock/counter.h>
#include <pcstock/cpu.h>
#include <pcstock/percpu.h>
#include <pcstock/stock.h>

#include "atomic.h"
/* The slot's encoding (the disable mark): the library's, not API. */
#define PCSTOCK_INLINE_TYPES_ONLY_
#include <pcstock/stock_inline.h>
#undef PCSTOCK_INLINE_TYPES_ONLY_

#define NR_CPUS 2U
#define BATCH 4U

static struct {
	enum pcstock_stock_policy policy;
	struct pcstock_domain *d;
	struct pcstock_counter parent, c;
} fx;

static enum pcstock_stock_policy policy_default = PCSTOCK_STOCK_DEFAULT;
static enum pcstock_stock_policy policy_v4 = PCSTOCK_STOCK_V4;

static int setup_batch(void **state, unsigned int batch)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_SIM, NULL };

	pcstock_warn_reset();
	fx.policy = *(enum pcstock_stock_policy *)*state;
	if (pcstock_domain_create(&attr, &fx.d))
		return -1;
	pcstock_counter_init(&fx.parent, NULL, false);
	pcstock_counter_init(&fx.c, &fx.parent, false);
	if (pcstock_counter_alloc_stock(&fx.c, fx.d, batch, fx.policy) ||
	    pcstock_cpu_enter(fx.d, 0))
		return -1;
	return 0;
}

static int setup(void **state)
{
	return setup_batch(state, BATCH);
}

static int setup_max_batch(void **state)
{
	return setup_batch(state, PCSTOCK_STOCK_MAX_BATCH);
}

static int teardown(void **state)
{
	(void)state;
	pcstock_cpu_exit(fx.d);
	pcstock_counter_free_stock(&fx.c);
	pcstock_domain_destroy(fx.d);
	return pcstock_warn_count() ? -1 : 0;
}

static int slot(unsigned int cpu)
{
	return atomic_load((atomic_int *)pcstock_percpu_ptr(fx.d,
							     fx.c.stock_slots,
							     cpu));
}

static void charge_ok(unsigned long n, unsigned long expect)
{
	unsigned long charged = ~0UL;

	assert_true(pcstock_counter_try_charge_stock(&fx.c, n, NULL,
						     &charged));
	assert_int_equal(charged, expect);
}

/*
 * A disabled stock still serves what its slot holds, down to the last
 * page: a charge of exactly the pages left is a hit, and the mark stays.
 * Mutant: take_marked() asking for more than it takes ("> nr").
 */
static void test_disabled_slot_serves_its_last_pages(void **state)
{
	struct pcstock_stock_stats st;

	(void)state;
	charge_ok(1, BATCH);
	assert_int_equal(pcstock_counter_stock_pages(&fx.c), BATCH - 1);
	pcstock_counter_disable_stock(&fx.c);
	charge_ok(BATCH - 1, 0);
	assert_int_equal(pcstock_counter_stock_pages(&fx.c), 0);
	assert_int_equal(pcstock_counter_read(&fx.c), BATCH);
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_);
	pcstock_counter_stock_stats(&fx.c, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	pcstock_counter_uncharge_stock(&fx.c, BATCH);
	assert_int_equal(pcstock_counter_read(&fx.parent), 0);
}

/*
 * The slow refill fills a slot up to batch exactly, without a trim: here
 * on an RSEQ domain, whose calls use no per-thread region cache, so every
 * uncharge takes pcs_refill_capped() (pinned to one OS CPU, so both calls
 * see one slot).  Mutant: the cap tested as "want >= batch".
 */
static void test_slow_refill_fills_slot_to_batch(void **state)
{
	struct pcstock_counter c;
	struct pcstock_stock_stats st;
	struct pcstock_domain *d;
	cpu_set_t old, one;
	int cpu = sched_getcpu();

	(void)state;
	assert_true(cpu >= 0);
	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_int_equal(pcstock_domain_create(NULL, &d), 0);
	pcstock_counter_init(&c, NULL, false);
	assert_int_equal(pcstock_counter_alloc_stock(&c, d, BATCH,
						     PCSTOCK_STOCK_DEFAULT), 0);
	assert_true(pcstock_counter_try_charge_stock(&c, BATCH - 1, NULL,
						     NULL));
	assert_int_equal(pcstock_counter_stock_pages(&c), 1);
	pcstock_counter_uncharge_stock(&c, BATCH - 1);
	assert_int_equal(pcstock_counter_stock_pages(&c), BATCH);
	assert_int_equal(pcstock_counter_read(&c), BATCH);
	pcstock_counter_stock_stats(&c, &st);
	assert_int_equal(st.trims, 0);
	/* One page more does not fit: the whole slot goes up with it. */
	pcstock_counter_charge(&c, 1);
	pcstock_counter_uncharge_stock(&c, 1);
	assert_int_equal(pcstock_counter_stock_pages(&c), 0);
	assert_int_equal(pcstock_counter_read(&c), 0);
	pcstock_counter_stock_stats(&c, &st);
	assert_int_equal(st.trims, BATCH + 1);
	pcstock_counter_free_stock(&c);
	assert_int_equal(pcstock_domain_destroy(d), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(old), &old), 0);
}

/*
 * The mark keeps a full slot of the largest batch apart from an unmarked
 * one: disabled, it still counts its pages, a drain takes them all, and
 * the slot stays marked.  Mutant: a mark of -PCSTOCK_STOCK_MAX_BATCH or
 * less in magnitude, which a full slot cancels.
 */
static void test_mark_of_full_max_batch_slot(void **state)
{
	const unsigned long max = PCSTOCK_STOCK_MAX_BATCH;

	(void)state;
	charge_ok(1, max);
	if (fx.policy == PCSTOCK_STOCK_DEFAULT)
		pcstock_counter_uncharge_stock(&fx.c, 1);
	else
		charge_ok(max - 1, 0);
	pcstock_counter_disable_stock(&fx.c);
	if (fx.policy == PCSTOCK_STOCK_DEFAULT) {
		assert_true(slot(0) < 0);
		assert_int_equal(pcstock_counter_stock_pages(&fx.c), max);
		assert_int_equal(pcstock_counter_drain_stock(&fx.c, 0), max);
		assert_int_equal(pcstock_counter_read(&fx.parent), 0);
	} else {
		assert_int_equal(pcstock_counter_stock_pages(&fx.c), 0);
		assert_int_equal(pcstock_counter_drain_stock(&fx.c, 0), 0);
		pcstock_counter_uncharge(&fx.c, max);
	}
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_);
	/* Marked and empty: nothing is served, nothing is put back. */
	charge_ok(1, 1);
	pcstock_counter_uncharge_stock(&fx.c, 1);
	assert_int_equal(slot(0), PCSTOCK_STOCK_MARK_);
	assert_int_equal(pcstock_counter_read(&fx.parent), 0);
}

/* Leave CPU 0 for CPU 1 when the charge adds to usage (as test_stock.c). */
static bool migrated;

static void migrate_hook(enum pcs_atomic_op op, const void *obj)
{
	if (migrated || obj != &fx.c.usage || op != PCS_OP_ADD)
		return;
	migrated = true;
	pcstock_cpu_exit(fx.d);
	pcstock_cpu_enter(fx.d, 1);
}

/*
 * V4's ceiling is inclusive: a surplus that takes a slot exactly to
 * PCSTOCK_STOCK_V4_CEILING stays, one page past it drains the slot.
 * CPU 1's slot holds the ceiling minus BATCH - 1 (charged, then planted),
 * and a miss on CPU 0 whose surplus lands on CPU 1 fills it exactly.
 * Mutant: refill_v4() draining at ">= CEILING".
 */
static void test_v4_slot_may_reach_its_ceiling(void **state)
{
	const unsigned long below = PCSTOCK_STOCK_V4_CEILING - (BATCH - 1);
	struct pcstock_stock_stats st;

	(void)state;
	pcstock_counter_charge(&fx.c, below);
	atomic_store((atomic_int *)pcstock_percpu_ptr(fx.d, fx.c.stock_slots,
						      1), (int)below);
	migrated = false;
	pcstock_explore_hook = migrate_hook;
	charge_ok(1, BATCH);
	pcstock_explore_hook = NULL;
	assert_true(migrated);
	assert_int_equal(slot(1), PCSTOCK_STOCK_V4_CEILING);
	pcstock_counter_stock_stats(&fx.c, &st);
	assert_int_equal(st.drains, 0);
	/* One page more (CPU 0 misses again, CPU 1 gets BATCH - 1). */
	pcstock_cpu_exit(fx.d);
	assert_int_equal(pcstock_cpu_enter(fx.d, 0), 0);
	migrated = false;
	pcstock_explore_hook = migrate_hook;
	charge_ok(1, BATCH);
	pcstock_explore_hook = NULL;
	assert_int_equal(slot(1), 0);
	pcstock_counter_stock_stats(&fx.c, &st);
	assert_int_equal(st.drains, 1);
	assert_int_equal(pcstock_counter_read(&fx.parent), 2);
	pcstock_counter_uncharge(&fx.c, 2);
	pcstock_cpu_exit(fx.d);
	assert_int_equal(pcstock_cpu_enter(fx.d, 0), 0);
}

#define BOTH(f, s)                                                           \
	{ #f "/default", f, s, teardown, &policy_default },                  \
	{ #f "/v4", f, s, teardown, &policy_v4 }

/*
 * THREAD mode: a thread's table has PCS_THREAD_CACHE entries, by domain id
 * modulo its size.  When a domain takes over the entry the hit cache was
 * filled from, the cache goes with it: the replaced domain's next stocked
 * charge asks the table again and gets its next CPU (1), where it misses
 * (a batch of 4 charged), instead of a hit from CPU 0's slot.  Domain ids
 * are consecutive, so the fifth domain after d shares d's entry.
 * Mutant: pcs_thread_cpu_assign() dropping the cache only when it names
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_disabled_slot_serves_its_last_pages, setup),
		cmocka_unit_test(test_slow_refill_fills_slot_to_batch),
		BOTH(test_mark_of_full_max_batch_slot, setup_max_batch),
		{ "test_v4_slot_may_reach_its_ceiling",
		  test_v4_slot_may_reach_its_ceiling, setup, teardown,
		  &policy_v4 },
		cmocka_unit_test(test_thread_entry_replaced_drops_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
