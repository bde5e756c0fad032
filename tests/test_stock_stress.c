// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_stock_stress.c - the stock under concurrency, oversubscribed: 16
 * threads migrating over 64 SIM CPUs (with spells as no CPU at all) charge
 * and uncharge small and occasionally large amounts on a 3-level tree with
 * stocks on several counters and a tight limit on an ancestor, while a
 * remote drainer drains random CPUs (and disables one stock midway) and a
 * hotplug thread takes CPUs offline and back.
 *
 * At every quiescent point (a barrier between rounds) it checks, for every
 * counter X:  usage(X) == Σ over the subtree of X of (pages held by the
 * callers through that counter + that counter's stock), that no DEFAULT
 * slot holds more than batch, and that no counter ever underflowed; at the
 * end, that returning every page and freeing every stock leaves zero usage.
 * Bounded by iterations, not time; every policy.  EXACT also has its
 * stock turned off and on (pcstock_counter_stock_go_exact() by the
 * drainer, and the misses' own switches near the tight limit), and at
 * every quiescent point a stock that is exact holds no page.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
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

#define NR_CPUS 64U
#define NR_WORKERS 16U
#define BATCH 8U
#define ROUNDS 16U
#define OPS_PER_ROUND 10000U
#define HOLD_CAP 48UL		/* a worker returns pages above this */

/*
 * The tree: 0 root; 1, 2 mids; 3, 4 leaves of 1; 5, 6 leaves of 2.
 * Stocked: 1, 3, 4, 5.  Charged directly: everything but the root.
 * Limit: node 1's subtree is tight (below its possible stock).
 */
#define NR_NODES 7U
static const int parent_of[NR_NODES] = { -1, 0, 0, 1, 1, 2, 2 };
static const bool stocked[NR_NODES] = { 0, 1, 0, 1, 1, 1, 0 };
#define TIGHT_NODE 1U
#define TIGHT_MAX (64 * BATCH)
#define DISABLED_NODE 4U

static struct pcstock_counter node[NR_NODES];
static struct pcstock_domain *dom;
static enum pcstock_stock_policy policy;
static pthread_barrier_t barrier;
static unsigned long exact_seen;	/* EXACT stocks found off */
static atomic_uint workers_running;

struct worker {
	unsigned int id;
	uint64_t rng;
	unsigned long held[NR_NODES];
	unsigned long failures;
};

static struct worker workers[NR_WORKERS];

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64 */
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static bool in_subtree(unsigned int n, unsigned int top)
{
	int p;

	for (p = (int)n; p >= 0; p = parent_of[p])
		if ((unsigned int)p == top)
			return true;
	return false;
}

/* What a failed charge does before giving up: drain the failing subtree. */
static void drain_subtree(const struct pcstock_counter *fail)
{
	unsigned int top, n, cpu;

	for (top = 0; top < NR_NODES && &node[top] != fail; top++)
		;
	for (n = 0; n < NR_NODES; n++) {
		if (!stocked[n] || !in_subtree(n, top))
			continue;
		for (cpu = 0; cpu < NR_CPUS; cpu++)
			pcstock_counter_drain_stock(&node[n], cpu);
	}
}

static void give_back(struct worker *w, unsigned int n, unsigned long nr)
{
	pcstock_counter_uncharge_stock(&node[n], nr);
	w->held[n] -= nr;
}

static void migrate(struct worker *w)
{
	uint64_t r = next_rand(&w->rng);

	pcstock_cpu_exit(dom);
	/* One move in eight leaves the thread without a CPU for a while. */
	if (r % 8)
		pcstock_cpu_enter(dom, (unsigned int)(r >> 8) % NR_CPUS);
}

static void worker_op(struct worker *w)
{
	uint64_t r = next_rand(&w->rng);
	unsigned int n = 1 + (unsigned int)(r % (NR_NODES - 1));
	unsigned long nr = 1 + (r >> 8) % 4;
	struct pcstock_counter *fail = NULL;

	if ((r >> 16) % 16 == 0)
		nr = BATCH + 1 + (r >> 20) % (3 * BATCH);
	if (w->held[n] && ((r >> 32) % 2 || w->held[n] > HOLD_CAP)) {
		give_back(w, n, nr < w->held[n] ? nr : w->held[n]);
		return;
	}
	if (pcstock_counter_try_charge_stock(&node[n], nr, &fail, NULL)) {
		w->held[n] += nr;
		return;
	}
	w->failures++;
	if ((r >> 40) % 16 == 0)
		drain_subtree(fail);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned int rnd, i, n;

	pcstock_cpu_enter(dom, w->id % NR_CPUS);
	for (rnd = 0; rnd < ROUNDS; rnd++) {
		pthread_barrier_wait(&barrier);
		for (i = 0; i < OPS_PER_ROUND; i++) {
			if (i % 64 == 63)
				migrate(w);
			worker_op(w);
		}
		atomic_fetch_sub(&workers_running, 1);
		pthread_barrier_wait(&barrier);
	}
	/* After the main thread's last check: return everything. */
	pthread_barrier_wait(&barrier);
	for (n = 0; n < NR_NODES; n++)
		if (w->held[n])
			give_back(w, n, w->held[n]);
	pcstock_cpu_exit(dom);
	return NULL;
}

/*
 * The remote drainer: drains random CPUs, disables one stock midway, and
 * turns random EXACT stocks off (the next miss far from the limit turns
 * them on again).
 */
static void drain_step(uint64_t r, unsigned int rnd)
{
	pcstock_counter_drain_stock(&node[r % NR_NODES],
				    (unsigned int)(r >> 8) % NR_CPUS);
	if (policy == PCSTOCK_STOCK_EXACT && (r >> 16) % 8 == 0)
		pcstock_counter_stock_go_exact(&node[(r >> 24) % NR_NODES]);
	if (rnd == ROUNDS / 2 && (r >> 32) % 64 == 0)
		pcstock_counter_disable_stock(&node[DISABLED_NODE]);
}

/* The hotplug thread: takes a random CPU down (draining it) and up. */
static void hotplug_step(uint64_t r, unsigned int rnd)
{
	(void)rnd;
	pcstock_cpu_set_online(dom, (unsigned int)(r % NR_CPUS), false);
	pcstock_cpu_set_online(dom, (unsigned int)(r % NR_CPUS), true);
}

struct helper {
	void (*step)(uint64_t r, unsigned int rnd);
	uint64_t rng;
};

/* A helper thread runs its step while the workers run their round. */
static void *helper_main(void *arg)
{
	struct helper *h = arg;
	unsigned int rnd;

	for (rnd = 0; rnd < ROUNDS; rnd++) {
		pthread_barrier_wait(&barrier);
		while (atomic_load(&workers_running))
			h->step(next_rand(&h->rng), rnd);
		pthread_barrier_wait(&barrier);
	}
	pthread_barrier_wait(&barrier);
	return NULL;
}

/* ---- checks at quiescence ------------------------------------------------- */

static unsigned long held_through(unsigned int n)
{
	unsigned long sum = 0;
	unsigned int i;

	for (i = 0; i < NR_WORKERS; i++)
		sum += workers[i].held[n];
	return sum;
}

/*
 * EXACT's slots: enabled, 0..batch pages; exact, its own mark and no page
 * (its switch drained after marking, and nothing enters a marked slot);
 * disabled, the disable's mark on top, at most a batch of pages.  No
 * switch is half done: the drainer is at the barrier too.
 */
static void check_exact_slots(unsigned int n)
{
	unsigned int cpu, state = atomic_load(&node[n].stock_state);
	int v;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		v = atomic_load((atomic_int *)pcstock_percpu_ptr(dom,
					node[n].stock_slots, cpu));
		if (state == PCSTOCK_STOCK_ENABLED_) {
			assert_true(v >= 0 && v <= (int)BATCH);
			continue;
		}
		if (v < PCSTOCK_STOCK_MARK_ / 2) {	/* the disable's */
			assert_true(v < 0);
			v -= PCSTOCK_STOCK_MARK_;
			if (v < 0)
				v -= PCSTOCK_STOCK_MARK_ / 2;
			assert_true(v >= 0 && v <= (int)BATCH);
		} else {
			/* Exact: EXACT_MARK of test_stock.c, no page. */
			assert_int_equal(v, PCSTOCK_STOCK_MARK_ / 2);
		}
	}
	exact_seen += state != PCSTOCK_STOCK_ENABLED_;
}

static void check_quiescent(void)
{
	unsigned int x, n, cpu;

	for (x = 0; x < NR_NODES; x++) {
		unsigned long expect = 0;

		for (n = 0; n < NR_NODES; n++)
			if (in_subtree(n, x))
				expect += held_through(n) +
					  pcstock_counter_stock_pages(&node[n]);
		assert_int_equal(pcstock_counter_read(&node[x]), expect);
	}
	for (n = 0; n < NR_NODES; n++) {
		if (stocked[n] && policy == PCSTOCK_STOCK_EXACT)
			check_exact_slots(n);
		if (!stocked[n] || policy != PCSTOCK_STOCK_DEFAULT)
			continue;
		for (cpu = 0; cpu < NR_CPUS; cpu++) {
			atomic_int *slot = pcstock_percpu_ptr(dom,
						node[n].stock_slots, cpu);
			int v = atomic_load(slot);

			/* A disabled stock's slots keep the mark. */
			if (atomic_load(&node[n].stock_state) !=
			    PCSTOCK_STOCK_ENABLED_) {
				assert_true(v < 0);
				v -= PCSTOCK_STOCK_MARK_;
			}
			assert_true(v <= (int)BATCH);
			assert_true(v >= 0);
		}
	}
	assert_int_equal(pcstock_warn_count(), 0);
}

static void run_stress(enum pcstock_stock_policy p)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_SIM, NULL };
	struct helper helpers[2] = {
		{ drain_step, 0x9e3779b97f4a7c15ULL },
		{ hotplug_step, 0x2545f4914f6cdd1dULL },
	};
	pthread_t worker_t[NR_WORKERS], helper_t[2];
	struct pcstock_stock_stats st;
	unsigned long hits = 0, failures = 0;
	unsigned int rnd, i, n;

	policy = p;
	exact_seen = 0;
	pcstock_warn_reset();
	assert_int_equal(pcstock_domain_create(&attr, &dom), 0);
	for (n = 0; n < NR_NODES; n++) {
		pcstock_counter_init(&node[n],
				     parent_of[n] < 0 ? NULL : &node[parent_of[n]],
				     false);
		if (stocked[n])
			assert_int_equal(pcstock_counter_alloc_stock(&node[n],
						dom, BATCH, p), 0);
	}
	assert_int_equal(pcstock_counter_set_max(&node[TIGHT_NODE], TIGHT_MAX),
			 0);
	assert_int_equal(pthread_barrier_init(&barrier, NULL,
					      NR_WORKERS + 3), 0);
	for (i = 0; i < NR_WORKERS; i++) {
		memset(&workers[i], 0, sizeof(workers[i]));
		workers[i].id = i;
		workers[i].rng = 0x853c49e6748fea9bULL * (i + 1);
		assert_int_equal(pthread_create(&worker_t[i], NULL,
						worker_main, &workers[i]), 0);
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&helper_t[i], NULL, helper_main,
						&helpers[i]), 0);
	for (rnd = 0; rnd < ROUNDS; rnd++) {
		atomic_store(&workers_running, NR_WORKERS);
		pthread_barrier_wait(&barrier);
		pthread_barrier_wait(&barrier);
		check_quiescent();
	}
	pthread_barrier_wait(&barrier);
	for (i = 0; i < NR_WORKERS; i++) {
		assert_int_equal(pthread_join(worker_t[i], NULL), 0);
		failures += workers[i].failures;
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_join(helper_t[i], NULL), 0);
	check_quiescent();

	/* The run exercised the stock, then free returns every page. */
	for (n = 0; n < NR_NODES; n++) {
		pcstock_counter_stock_stats(&node[n], &st);
		hits += st.hits;
		pcstock_counter_free_stock(&node[n]);
	}
	assert_true(hits > 0);
	assert_true(failures > 0);
	if (p == PCSTOCK_STOCK_EXACT)
		assert_true(exact_seen > 0);
	for (n = 0; n < NR_NODES; n++)
		assert_int_equal(pcstock_counter_read(&node[n]), 0);
	assert_int_equal(pcstock_warn_count(), 0);
	pthread_barrier_destroy(&barrier);
	pcstock_domain_destroy(dom);
}

static void test_stress_default(void **state)
{
	(void)state;
	run_stress(PCSTOCK_STOCK_DEFAULT);
}

static void test_stress_v4(void **state)
{
	(void)state;
	run_stress(PCSTOCK_STOCK_V4);
}

static void test_stress_exact(void **state)
{
	(void)state;
	run_stress(PCSTOCK_STOCK_EXACT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stress_default),
		cmocka_unit_test(test_stress_v4),
		cmocka_unit_test(test_stress_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
