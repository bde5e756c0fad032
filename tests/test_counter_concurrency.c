// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_counter_concurrency.c - the counter under contention (label stress).
 *
 * Tree R <- M <- {L0..L3}.  NR_CHARGERS threads (more than the machine's
 * cores) try_charge and uncharge small random amounts on the leaves and
 * remember what they hold, while one setter thread keeps lowering and
 * raising M's limit with pcstock_counter_set_max().  The run is cut into
 * rounds of a fixed number of operations; between rounds every thread
 * stops at a barrier and the main thread checks, at that quiescent point:
 *
 *  - the set_max() handshake (docs/design.md §4, "Charge against a limit
 *    write"): if the last successful set_max() set M's limit to v, M's
 *    committed usage is <= v, and max(M) == v;
 *  - every level's usage equals the pages held through it;
 *  - children_{min,low}_usage equals the sum of the children's
 *    {min,low}_usage (exact at quiescence: propagate_protected_usage()
 *    adds what its exchange replaced, however publishers interleave);
 *  - no underflow was reported.
 *
 * Bounded by operation counts, never by time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include <pcstock/counter.h>

#include "atomic.h"

#define NR_LEAVES 4
#define NR_CHARGERS 8
#define ROUNDS 50
#define OPS_PER_ROUND 4000
#define MAX_CHARGE 8
/* M's limit: usage + [0, LIMIT_SLACK), now and then PCM. */
#define LIMIT_SLACK 24
/* One of the setter's atomic accesses in NOISE_ONE_IN spins < NOISE_SPIN. */
#define NOISE_ONE_IN 4
#define NOISE_SPIN 512

static struct pcstock_counter root, mid, leaf[NR_LEAVES];
static pthread_barrier_t start_line, stop_line;
static atomic_int chargers_done;

/* Written by each thread, read by the main thread between the barriers. */
static unsigned long held[NR_CHARGERS];
static unsigned long limit_set;		/* the setter's last success */
static unsigned long nr_ebusy, nr_set;

static uint64_t next_random(uint64_t *s)
{
	/* xorshift64 */
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Timing noise: the test library calls this hook at every atomic access;
 * the setter pauses for a random short spin at some of its own, which
 * holds open the window between set_max()'s read of usage and its
 * exchange of max while the chargers run on the other core.  Without it a
 * 2-core machine practically never runs a charger inside that window (a
 * set_max() without the re-check then passes).  A spin, not a yield: a
 * yielding setter on a loaded machine barely runs at all.
 */
static _Thread_local uint64_t noise;

static void pause_sometimes(enum pcs_atomic_op op, const void *obj)
{
	volatile unsigned int spin;
	unsigned int n;

	if (!noise)
		return;
	n = (unsigned int)(next_random(&noise) % (NOISE_ONE_IN * NOISE_SPIN));
	if (n < NOISE_SPIN)
		for (spin = 0; spin < n; spin++)
			;
}

static void *charger(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	struct pcstock_counter *c = &leaf[id % NR_LEAVES];
	uint64_t rnd = 0x9e3779b97f4a7c15ULL * (id + 1);
	int round, i;

	for (round = 0; round < ROUNDS; round++) {
		pthread_barrier_wait(&start_line);
		for (i = 0; i < OPS_PER_ROUND; i++) {
			uint64_t r = next_random(&rnd);
			unsigned long nr = 1 + r % MAX_CHARGE;

			/*
			 * Mixed first; the second half only charges, so that
			 * usage pushed above a limit by a broken handshake
			 * cannot drain away before the check.
			 */
			if (i >= OPS_PER_ROUND / 2 || r & 0x300 || !held[id]) {
				if (pcstock_counter_try_charge(c, nr, NULL))
					held[id] += nr;
			} else {
				nr = 1 + (r >> 16) % held[id];
				pcstock_counter_uncharge(c, nr);
				held[id] -= nr;
			}
		}
		atomic_fetch_add(&chargers_done, 1);
		pthread_barrier_wait(&stop_line);
	}
	return NULL;
}

static void *setter(void *arg)
{
	uint64_t rnd = 12345;
	int round;

	noise = 67890;
	for (round = 0; round < ROUNDS; round++) {
		pthread_barrier_wait(&start_line);
		/* As long as the chargers run, so that they overlap. */
		while (atomic_load(&chargers_done) < NR_CHARGERS) {
			uint64_t r = next_random(&rnd);
			unsigned long v;
			int rc;

			/* Mostly a limit just above usage, where it bites. */
			v = pcstock_counter_read(&mid) + r % LIMIT_SLACK;
			if ((r >> 32) % 16 == 0)
				v = PCSTOCK_COUNTER_MAX;
			rc = pcstock_counter_set_max(&mid, v);
			nr_set++;
			if (rc == 0)
				limit_set = v;
			else if (rc == -EBUSY)
				nr_ebusy++;
			else
				limit_set = 0xbad; /* fails the check */
		}
		pthread_barrier_wait(&stop_line);
	}
	return NULL;
}

static void check_quiescent(void)
{
	unsigned long sum[NR_LEAVES] = { 0 }, total = 0;
	unsigned long cmin = 0, clow = 0;
	int i;

	for (i = 0; i < NR_CHARGERS; i++) {
		sum[i % NR_LEAVES] += held[i];
		total += held[i];
	}
	for (i = 0; i < NR_LEAVES; i++) {
		assert_int_equal(pcstock_counter_read(&leaf[i]), sum[i]);
		cmin += pcstock_counter_min_usage(&leaf[i]);
		clow += pcstock_counter_low_usage(&leaf[i]);
	}
	assert_int_equal(pcstock_counter_read(&mid), total);
	assert_int_equal(pcstock_counter_read(&root), total);
	assert_int_equal(pcstock_counter_max(&mid), limit_set);
	assert_true(total <= limit_set);
	assert_int_equal(pcstock_counter_children_min_usage(&mid), cmin);
	assert_int_equal(pcstock_counter_children_low_usage(&mid), clow);
	assert_int_equal(pcstock_counter_children_min_usage(&root),
			 pcstock_counter_min_usage(&mid));
	assert_int_equal(pcstock_counter_children_low_usage(&root),
			 pcstock_counter_low_usage(&mid));
	assert_int_equal(pcstock_warn_count(), 0);
}

static void test_try_charge_races_set_max(void **state)
{
	pthread_t threads[NR_CHARGERS + 1];
	int i, round;

	pcstock_warn_reset();
	pcstock_counter_init(&root, NULL, true);
	pcstock_counter_init(&mid, &root, true);
	pcstock_counter_set_min(&mid, 40);
	pcstock_counter_set_low(&mid, 90);
	for (i = 0; i < NR_LEAVES; i++) {
		pcstock_counter_init(&leaf[i], &mid, true);
		pcstock_counter_set_track_failcnt(&leaf[i], true);
		pcstock_counter_set_min(&leaf[i], 10 * (unsigned long)i);
		pcstock_counter_set_low(&leaf[i], 30);
	}
	limit_set = PCSTOCK_COUNTER_MAX;
	pcstock_explore_hook = pause_sometimes;

	assert_int_equal(pthread_barrier_init(&start_line, NULL,
					      NR_CHARGERS + 2), 0);
	assert_int_equal(pthread_barrier_init(&stop_line, NULL,
					      NR_CHARGERS + 2), 0);
	for (i = 0; i < NR_CHARGERS; i++)
		assert_int_equal(pthread_create(&threads[i], NULL, charger,
						(void *)(uintptr_t)i), 0);
	assert_int_equal(pthread_create(&threads[NR_CHARGERS], NULL, setter,
					NULL), 0);

	for (round = 0; round < ROUNDS; round++) {
		pthread_barrier_wait(&start_line);
		pthread_barrier_wait(&stop_line);
		atomic_store(&chargers_done, 0);
		check_quiescent();
	}
	for (i = 0; i <= NR_CHARGERS; i++)
		assert_int_equal(pthread_join(threads[i], NULL), 0);
	pthread_barrier_destroy(&start_line);
	pthread_barrier_destroy(&stop_line);
	pcstock_explore_hook = NULL;

	/* Give everything back: every level must return to exactly 0. */
	for (i = 0; i < NR_CHARGERS; i++) {
		pcstock_counter_uncharge(&leaf[i % NR_LEAVES], held[i]);
		held[i] = 0;
	}
	check_quiescent();
	assert_int_equal(pcstock_counter_read(&root), 0);
	assert_int_equal(pcstock_counter_min_usage(&mid), 0);

	print_message("set_max calls %lu (-EBUSY %lu), failcnt(M) %lu\n",
		      nr_set, nr_ebusy, pcstock_counter_failcnt(&mid));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_try_charge_races_set_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
