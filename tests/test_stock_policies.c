// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_stock_policies.c - the stock layer where its policies differ, a part
 * of test_stock (test_stock.c runs these cases after its own, on the same
 * fixture, stock_fixture.c): the review findings DEFAULT fixes pinned
 * (uncharge refill, drain of an empty slot, over-batch uncharge, racing
 * refill, slot growth), and EXACT at the limit.
 *
 * The racing-refill case forces one interleaving of two threads sharing
 * CPU 0 through the test library's schedule-explorer hook (every atomic of
 * the library calls it before acting).
 *
 * A case whose comment names a mutant ("Mutant C11: ...") came from the
 * mutation study (docs/mutation.md, by that id) and fails on it.
 */
#define _GNU_SOURCE		/* sched_getcpu(), CPU affinity */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>

#include "affinity_helpers.h"
#include "stock_fixture.h"

/* ---- where the policies differ ------------------------------------------- */

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

/*
 * The slow refill fills a slot up to batch exactly, without a trim: here
 * on an RSEQ domain, whose calls use no per-thread region cache, so every
 * uncharge takes pcs_refill_capped() (pinned to one OS CPU, so both calls
 * see one slot).  Mutant C11: the cap tested as "want >= batch".
 */
static void test_slow_refill_fills_slot_to_batch(void **state)
{
	struct pcstock_counter c;
	struct pcstock_stock_stats st;
	struct pcstock_domain *d;
	cpu_set_t old;

	(void)state;
	pin_here(&old);
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
	unpin(&old);
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

/*
 * charge_ok(@n, @expect) from this CPU, which the thread leaves for CPU
 * @to (no CPU if negative) inside the charge.
 */
static void charge_migrating(int to, unsigned long n, unsigned long expect)
{
	migrate_usage = &fx.leaf.usage;
	migrate_to = to;
	migrate_done = false;
	pcstock_explore_hook = migrate_hook;
	charge_ok(n, expect);
	pcstock_explore_hook = NULL;
	assert_true(migrate_done);
}

static void test_surplus_goes_to_the_cpu_after_the_charge(void **state)
{
	(void)state;
	charge_migrating(3, 1, BATCH);
	assert_int_equal(pcstock_this_cpu(fx.d), 3);
	assert_int_equal(slot(0), 0);
	assert_int_equal(slot(3), BATCH - 1);

	/*
	 * No CPU any more: the surplus is uncharged, the charge stands, and
	 * the call reports the 2 pages it left charged (as a refill at the
	 * limit does), not the batch it went back up with.
	 */
	move_to(1);
	charge_migrating(-1, 2, 2);
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
 * V4's ceiling is inclusive: a surplus that takes a slot exactly to
 * PCSTOCK_STOCK_V4_CEILING stays, one page past it drains the slot.
 * CPU 1's slot holds the ceiling minus BATCH - 1 (charged, then planted),
 * and a miss on CPU 0 whose surplus lands on CPU 1 fills it exactly.
 * Mutant N17: refill_v4() draining at ">= CEILING".
 */
static void test_v4_slot_may_reach_its_ceiling(void **state)
{
	const unsigned long below = PCSTOCK_STOCK_V4_CEILING - (BATCH - 1);
	struct pcstock_stock_stats st;

	(void)state;
	pcstock_counter_charge(&fx.leaf, below);
	atomic_store(slot_ptr(&fx.leaf, 1), (int)below);
	charge_migrating(1, 1, BATCH);
	assert_int_equal(slot(1), PCSTOCK_STOCK_V4_CEILING);
	pcstock_counter_stock_stats(&fx.leaf, &st);
	assert_int_equal(st.drains, 0);
	/* One page more (CPU 0 misses again, CPU 1 gets BATCH - 1). */
	move_to(0);
	charge_migrating(1, 1, BATCH);
	assert_int_equal(slot(1), 0);
	pcstock_counter_stock_stats(&fx.leaf, &st);
	assert_int_equal(st.drains, 1);
	assert_int_equal(pcstock_counter_read(&fx.root), 2);
	pcstock_counter_uncharge(&fx.leaf, 2);
	move_to(0);
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

/* ---- exact at the limit (EXACT) ------------------------------------------ */

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
 * The nearmax workload (pcstock-bench): charges to within a batch of max from
 * every CPU.  EXACT fails none while held + request <= max, and holds nothing
 * in stock within HIDE of max; DEFAULT and V4 strand pages in the other CPUs'
 * slots and fail early.
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
	park_on_every_cpu();
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
 * A level already over its max (memory.max written below usage, or a
 * forced charge) has no margin at all, not a huge one: an EXACT miss that
 * sees it goes exact, and no miss there leaves exact.  Each CPU parks
 * BATCH - 1 pages, then mid's max drops to the pages held plus BATCH: a
 * charge of BATCH, a miss on CPU 0, fits only with every stocked page
 * back.  It must fit exactly at max with the slots marked, so that an
 * uncharge then goes straight up.  With mid over its max again, a charge
 * that must fail must not switch the stock back to stocking either: the
 * next uncharge still goes up.  Mutant H3: the margin max - usage taken
 * without the over-max guard, which wraps to a huge value and stocks on
 * in both places.
 */
static void test_exact_over_max_has_no_margin(void **state)
{
	unsigned int cpu;

	(void)state;
	park_on_every_cpu();
	move_to(0);
	pcstock_counter_xchg_max(&fx.mid, NR_CPUS + BATCH);
	charge_ok(BATCH, BATCH);
	assert_usage(NR_CPUS + BATCH, NR_CPUS + BATCH, NR_CPUS + BATCH);
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		assert_int_equal(slot(cpu), EXACT_MARK);
	move_to(1);
	pcstock_counter_uncharge_stock(&fx.leaf, 1);
	assert_int_equal(slot(1), EXACT_MARK);
	assert_usage(NR_CPUS + BATCH - 1, NR_CPUS + BATCH - 1,
		     NR_CPUS + BATCH - 1);

	pcstock_counter_xchg_max(&fx.mid, NR_CPUS);
	move_to(2);
	assert_false(pcstock_counter_try_charge_stock(&fx.leaf, 1, NULL, NULL));
	pcstock_counter_uncharge_stock(&fx.leaf, 1);
	assert_int_equal(slot(2), EXACT_MARK);
	assert_usage(NR_CPUS + BATCH - 2, NR_CPUS + BATCH - 2,
		     NR_CPUS + BATCH - 2);
	move_to(0);
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

	(void)state;
	pcstock_counter_init(&sib, &fx.mid, false);
	park_on_every_cpu();
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

int run_stock_policy_cases(void)
{
	const struct CMUnitTest tests[] = {
		EACH(test_small_uncharge_refills_default_only),
		cmocka_unit_test(test_slow_refill_fills_slot_to_batch),
		EACH(test_over_batch_uncharge_bypasses),
		EACH(test_drain_of_empty_slot),
		EACH(test_surplus_goes_to_the_cpu_after_the_charge),
		EACH(test_racing_refill_exceeds_batch_only_in_v4),
		EACH(test_slot_growth_is_bounded),
		V4_ONLY(test_v4_slot_may_reach_its_ceiling),
		EACH(test_large_charge_hits_a_large_slot),
		EACH(test_exact_no_failure_for_pages_in_stock),
		EXACT_ONLY(test_exact_far_from_max_stocks),
		EXACT_ONLY(test_exact_charge_retries_after_its_drain),
		EACH(test_exact_hysteresis),
		EXACT_ONLY(test_exact_over_max_has_no_margin),
		EACH(test_exact_go_exact_frees_a_siblings_stock),
		EACH(test_exact_disable_while_exact),
	};

	return cmocka_run_group_tests_name("test_stock_policies", tests, NULL,
					   NULL);
}
