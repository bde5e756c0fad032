// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_hierarchy_callbacks.c - untrusted callbacks cannot hang anything.
 *
 * Reclaim callbacks that claim progress while usage stays put (a lie, a
 * slow one, an asynchronous evictor), and OOM callbacks that kill
 * asynchronously, lie, or return garbage, against every loop that calls
 * them: the charge, the v2 and v1 limit writers, memory.high and
 * pcstock_handle_over_high().  Each case asserts the documented result and
 * the exact number of callback calls; the ctest TIMEOUT catches a hang.
 * The tree uses the "none" policy, so every charge walks the counters and
 * the counts are exact.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_helpers.h"

#define NR_CPUS 4U
#define LIE_ROUNDS (PCSTOCK_MAX_PROGRESS_ROUNDS + PCSTOCK_MAX_RECLAIM_RETRIES)

struct fixture {
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *root;
	/* reclaim: claim every page asked for, free nothing */
	bool reclaim_lies;
	long reclaim_sleep_ms;
	atomic_uint reclaim_calls;
	/* OOM: the result to return; an asynchronous victim's pages */
	int oom_result;
	struct pcstock_group *victim;
	unsigned long victim_pages;
	long victim_delay_ms;
	int reaper_cpu;			/* > 0: the reaper runs as that CPU */
	pthread_t reaper;
	bool reaper_started;
	atomic_bool victim_pending;
	atomic_uint oom_calls;
	atomic_int oom_inside;
	atomic_bool oom_overlapped;
	unsigned long recheck_frees;	/* oom_recheck_case()'s A frees */
	/* if set, decides the OOM result (@call counts from 1) */
	int (*oom_hook)(struct fixture *f, struct pcstock_group *g,
			unsigned int call);
	/* both: try every limit writer on the group, keep what they return */
	bool write_limits;
	int writer_ret[2][5];		/* [reclaim, oom][writer] */
};

static struct fixture fx;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* What a misbehaving callback gets from the limit writers of its group. */
static void write_limits(struct fixture *f, struct pcstock_group *g,
			 int *ret)
{
	if (!f->write_limits)
		return;
	ret[0] = pcstock_group_set_max(g, 1);
	ret[1] = pcstock_group_set_high(g, 1);
	ret[2] = pcstock_group_set_max_strict(g, 1);
	ret[3] = pcstock_group_set_memsw_max(g, 1);
	ret[4] = pcstock_group_set_min(g, 1);
}

static long reclaim_cb(struct pcstock_group *g, unsigned long nr_pages,
		       void *arg)
{
	struct fixture *f = arg;

	atomic_fetch_add(&f->reclaim_calls, 1);
	write_limits(f, g, f->writer_ret[0]);
	if (f->reclaim_sleep_ms)
		sleep_ms(f->reclaim_sleep_ms);
	return f->reclaim_lies ? (long)nr_pages : 0;
}

/* The asynchronous "exit" of an OOM victim: its pages go later. */
static void *reaper(void *arg)
{
	struct fixture *f = arg;

	sleep_ms(f->victim_delay_ms);
	if (f->reaper_cpu > 0 &&
	    pcstock_cpu_enter(f->d, (unsigned int)f->reaper_cpu))
		return NULL;
	pcstock_group_uncharge(f->victim, f->victim_pages);
	if (f->reaper_cpu > 0)
		pcstock_cpu_exit(f->d);
	atomic_store(&f->victim_pending, false);
	return NULL;
}

static int oom_cb(struct pcstock_group *g, void *arg)
{
	struct fixture *f = arg;
	int res = f->oom_result;

	unsigned int call = atomic_fetch_add(&f->oom_calls, 1) + 1;

	write_limits(f, g, f->writer_ret[1]);
	if (atomic_fetch_add(&f->oom_inside, 1))
		atomic_store(&f->oom_overlapped, true);
	if (f->victim) {
		/* kill once, then report the victim as still exiting */
		if (f->reaper_started) {
			res = atomic_load(&f->victim_pending) ?
				      PCSTOCK_OOM_WAIT : PCSTOCK_OOM_NONE;
		} else {
			atomic_store(&f->victim_pending, true);
			assert_int_equal(pthread_create(&f->reaper, NULL,
							reaper, f), 0);
			f->reaper_started = true;
			res = PCSTOCK_OOM_KILLED_ASYNC;
		}
	}
	if (f->oom_hook)
		res = f->oom_hook(f, g, call);
	atomic_fetch_sub(&f->oom_inside, 1);
	return res;
}

static int tree_policy = PCSTOCK_TREE_NONE;

static int setup(void **state)
{
	struct pcstock_domain_attr dattr = { NR_CPUS, PCSTOCK_CPU_SIM, NULL };
	struct pcstock_tree_attr attr = {
		.policy = tree_policy,
		.reclaim = reclaim_cb,
		.oom = oom_cb,
		.cb_arg = &fx,
	};

	memset(&fx, 0, sizeof(fx));
	if (*state)
		attr.memsw = true;
	if (pcstock_domain_create(&dattr, &fx.d) ||
	    pcstock_cpu_enter(fx.d, 0) ||
	    pcstock_tree_create(fx.d, &attr, &fx.t))
		return -1;
	fx.root = pcstock_tree_root(fx.t);
	return 0;
}

/* The same on a stocked tree: uncharges from other CPUs stay in stocks. */
static int setup_stocked(void **state)
{
	tree_policy = PCSTOCK_TREE_DEFAULT;
	return setup(state);
}

static int teardown(void **state)
{
	int err;

	if (fx.reaper_started)
		pthread_join(fx.reaper, NULL);
	pcstock_handle_over_high();
	err = pcstock_tree_destroy(fx.t);
	pcstock_cpu_exit(fx.d);
	pcstock_domain_destroy(fx.d);
	tree_policy = PCSTOCK_TREE_NONE;
	return err;
}

/* A group at 100 pages with limits only the callbacks could satisfy. */
static struct pcstock_group *full_group(void)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");

	assert_int_equal(pcstock_group_charge(a, 100, 0), 0);
	return a;
}

static void empty_group(struct pcstock_group *a, unsigned long pages)
{
	assert_int_equal(pcstock_group_uncharge(a, pages), 0);
	rmgroup(a);
}

/* memory.max: 64 claimed rounds, 16 fruitless ones, one OOM; then 0. */
static void test_set_max_lying_reclaim(void **state)
{
	struct pcstock_group *a = full_group();

	fx.reclaim_lies = true;
	assert_int_equal(pcstock_group_set_max(a, 50), 0);
	assert_int_equal(pcstock_counter_max(pcstock_group_memory(a)), 50);
	assert_int_equal(pcstock_group_usage(a), 100);
	assert_int_equal(fx.reclaim_calls, LIE_ROUNDS);
	assert_int_equal(fx.oom_calls, 1);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM), 1);
	empty_group(a, 100);
}

/* memory.high: the same budget, no OOM. */
static void test_set_high_lying_reclaim(void **state)
{
	struct pcstock_group *a = full_group();

	fx.reclaim_lies = true;
	assert_int_equal(pcstock_group_set_high(a, 50), 0);
	assert_int_equal(pcstock_counter_high(pcstock_group_memory(a)), 50);
	assert_int_equal(fx.reclaim_calls, LIE_ROUNDS + 1);
	assert_int_equal(fx.oom_calls, 0);
	empty_group(a, 100);
}

/* v1 writers: -EBUSY once the progress budget is spent. */
static void test_strict_writers_lying_reclaim(void **state)
{
	struct pcstock_group *a = full_group();

	fx.reclaim_lies = true;
	assert_int_equal(pcstock_group_set_max_strict(a, 50), -EBUSY);
	assert_int_equal(fx.reclaim_calls, PCSTOCK_MAX_PROGRESS_ROUNDS + 1);
	assert_int_equal(pcstock_counter_max(pcstock_group_memory(a)),
			 PCSTOCK_COUNTER_MAX);
	/* memsw.max may not go below memory.max: put that at 50 first */
	fx.reclaim_lies = false;
	assert_int_equal(pcstock_group_set_max(a, 50), 0);
	fx.reclaim_lies = true;
	fx.reclaim_calls = 0;
	assert_int_equal(pcstock_group_set_memsw_max(a, 60), -EBUSY);
	assert_int_equal(fx.reclaim_calls, PCSTOCK_MAX_PROGRESS_ROUNDS + 1);
	assert_int_equal(pcstock_counter_max(pcstock_group_memsw(a)),
			 PCSTOCK_COUNTER_MAX);
	empty_group(a, 100);
}

/* A charge: -ENOMEM after the bounded rounds and one OOM call. */
static void test_charge_lying_reclaim(void **state)
{
	struct pcstock_group *a = full_group();

	assert_int_equal(pcstock_group_set_max(a, 100), 0);
	fx.reclaim_lies = true;
	assert_int_equal(pcstock_group_charge(a, 1, 0), -ENOMEM);
	/* the drain retry, the claimed rounds, then 16 + 1 fruitless ones */
	assert_int_equal(fx.reclaim_calls, 1 + LIE_ROUNDS + 1);
	assert_int_equal(fx.oom_calls, 1);
	assert_int_equal(pcstock_group_usage(a), 100);
	empty_group(a, 100);
}

/* Over-high reclaim on the thread's record: bounded, record dropped. */
static void test_handle_over_high_lying_reclaim(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");

	assert_int_equal(pcstock_group_set_high(a, 10), 0);
	assert_int_equal(pcstock_group_charge(a, 100, 0), 0);
	assert_int_equal(pcstock_over_high_pages(), 100);
	fx.reclaim_lies = true;
	assert_int_equal(pcstock_handle_over_high(), 2000);
	assert_int_equal(fx.reclaim_calls, LIE_ROUNDS + 1);
	assert_int_equal(pcstock_over_high_pages(), 0);
	empty_group(a, 100);
}

/* A slow liar (2 ms a call) gets the same bounded number of calls. */
static void test_slow_lying_reclaim(void **state)
{
	struct pcstock_group *a = full_group();

	fx.reclaim_lies = true;
	fx.reclaim_sleep_ms = 2;
	fx.oom_result = PCSTOCK_OOM_KILLED;	/* and a lying killer */
	assert_int_equal(pcstock_group_set_max(a, 50), 0);
	assert_int_equal(fx.reclaim_calls, LIE_ROUNDS);
	assert_int_equal(fx.oom_calls, PCSTOCK_MAX_OOM_CALLS);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM_KILL),
			 PCSTOCK_MAX_OOM_CALLS);
	empty_group(a, 100);
}

/*
 * An asynchronous killer whose victim never goes: 16 calls, each followed
 * by the wait, then -ENOMEM; the OOM lock keeps calls from overlapping.
 */
static void test_async_oom_never_frees(void **state)
{
	struct pcstock_group *a = full_group();

	assert_int_equal(pcstock_group_set_max(a, 100), 0);
	fx.oom_result = PCSTOCK_OOM_KILLED_ASYNC;
	assert_int_equal(pcstock_group_charge(a, 1, 0), -ENOMEM);
	assert_int_equal(fx.oom_calls, PCSTOCK_MAX_OOM_CALLS);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM),
			 PCSTOCK_MAX_OOM_CALLS);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM_KILL),
			 PCSTOCK_MAX_OOM_CALLS);
	/* a NOFAIL charge still goes through, over the limit */
	fx.oom_calls = 0;
	fx.oom_result = PCSTOCK_OOM_WAIT;
	assert_int_equal(pcstock_group_charge(a, 1, PCSTOCK_CHARGE_NOFAIL),
			 0);
	assert_int_equal(fx.oom_calls, PCSTOCK_MAX_OOM_CALLS);
	empty_group(a, 101);
}

/*
 * A killer whose victim frees its pages from another thread a little later:
 * the charge waits for them and succeeds, with exactly one kill.
 */
static void test_async_oom_victim_frees_later(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group *v = mkgroup(a, "victim");

	assert_int_equal(pcstock_group_set_max(a, 100), 0);
	assert_int_equal(pcstock_group_charge(v, 100, 0), 0);
	fx.victim = v;
	fx.victim_pages = 100;
	fx.victim_delay_ms = 5;
	assert_int_equal(pcstock_group_charge(a, 8, 0), 0);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM_KILL), 1);
	assert_in_range(fx.oom_calls, 1, PCSTOCK_MAX_OOM_CALLS);
	pthread_join(fx.reaper, NULL);
	fx.reaper_started = false;
	assert_int_equal(pcstock_group_usage(a), 8);
	rmgroup(v);
	empty_group(a, 8);
}

/*
 * The natural code for a daemon's asynchronous victim (issue 33's trap):
 * another thread, on a CPU of its own, frees the victim's pages with
 * pcstock_group_uncharge(), so they land in that CPU's stock of the
 * victim, not in the counters.  The charge that waits for room must see
 * them there: it succeeds with one kill, and once every stock is drained
 * the usage is its own pages alone.
 */
static void test_async_oom_victim_frees_into_a_stock(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group *v = mkgroup(a, "victim");
	struct pcstock_group *o = mkgroup(a, "other");

	(void)state;
	assert_int_equal(pcstock_group_set_max(a, 100), 0);
	assert_int_equal(pcstock_group_charge(v, 40, 0), 0);
	assert_int_equal(pcstock_group_charge(o, 60, 0), 0);
	pcstock_group_drain_all(fx.root);
	assert_int_equal(pcstock_group_usage(a), 100);
	fx.victim = v;
	fx.victim_pages = 40;	/* fits in one slot: no page goes up */
	fx.victim_delay_ms = 3;
	fx.reaper_cpu = 1;
	assert_int_equal(pcstock_group_charge(a, 8, 0), 0);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM_KILL), 1);
	pthread_join(fx.reaper, NULL);
	fx.reaper_started = false;
	pcstock_group_drain_all(fx.root);
	assert_int_equal(pcstock_group_usage(v), 0);
	assert_int_equal(pcstock_group_usage(a), 68);
	rmgroup(v);
	pcstock_group_uncharge(o, 60);
	rmgroup(o);
	empty_group(a, 8);
}

/* memory.max waits for the victim too: usage ends under the new limit. */
static void test_set_max_async_oom(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group *v = mkgroup(a, "victim");

	assert_int_equal(pcstock_group_charge(v, 100, 0), 0);
	fx.victim = v;
	fx.victim_pages = 100;
	fx.victim_delay_ms = 5;
	assert_int_equal(pcstock_group_set_max(a, 50), 0);
	pthread_join(fx.reaper, NULL);
	fx.reaper_started = false;
	assert_int_equal(pcstock_group_usage(a), 0);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM_KILL), 1);
	rmgroup(v);
	rmgroup(a);
}

struct charger {
	struct pcstock_group *g;
	int ret;
};

static void *charge_one(void *arg)
{
	struct charger *c = arg;

	c->ret = pcstock_group_charge(c->g, 1, 0);
	return NULL;
}

/*
 * Four chargers against a killer that always answers "victim exiting":
 * the callback never runs twice at once and each charge calls it at most
 * PCSTOCK_MAX_OOM_CALLS times before -ENOMEM.
 */
static void test_concurrent_oom_serialised(void **state)
{
	struct pcstock_group *a = full_group();
	struct charger c[4];
	pthread_t th[4];

	assert_int_equal(pcstock_group_set_max(a, 100), 0);
	fx.oom_result = PCSTOCK_OOM_WAIT;
	for (int i = 0; i < 4; i++) {
		c[i].g = a;
		assert_int_equal(pthread_create(&th[i], NULL, charge_one, &c[i]),
				 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(c[i].ret, -ENOMEM);
	}
	assert_false(fx.oom_overlapped);
	assert_in_range(fx.oom_calls, PCSTOCK_MAX_OOM_CALLS,
			4 * PCSTOCK_MAX_OOM_CALLS);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM_KILL), 0);
	empty_group(a, 100);
}

/*
 * The first OOM call (thread A, holding the OOM lock) waits until thread B
 * has raised its OOM event on @g and is on its way to the lock, then frees
 * f->recheck_frees of the group's pages and reports nothing killed; a
 * later call reports a kill.
 */
static int free_when_b_waits(struct fixture *f, struct pcstock_group *g,
			     unsigned int call)
{
	if (call > 1)
		return PCSTOCK_OOM_KILLED;
	for (int i = 0; pcstock_group_events(g, PCSTOCK_EVENT_OOM) < 2; i++) {
		assert_true(i < 10000);		/* B never came: fail, no hang */
		sleep_ms(1);
	}
	assert_int_equal(pcstock_group_uncharge(g, f->recheck_frees), 0);
	return PCSTOCK_OOM_NONE;
}

struct oom_writer {
	struct pcstock_group *g;
	unsigned long nr_pages;		/* charge this; 0: set_max(g, 5) */
	int ret;
};

static void *oom_writer_fn(void *arg)
{
	struct oom_writer *w = arg;

	w->ret = w->nr_pages ? pcstock_group_charge(w->g, w->nr_pages, 0) :
			       pcstock_group_set_max(w->g, 5);
	return NULL;
}

/*
 * Under the OOM lock, mem_cgroup_out_of_memory() skips the kill only when
 * the margin holds 1 << order pages: order = get_order(nr_pages *
 * PAGE_SIZE) for a charge (4 pages for 3), 0 for memory.max's writer (1
 * page).  A group at its limit of 8; A enters the OOM callback, B queues
 * on the lock; A's callback frees @freed pages and gives up.  With 3
 * freed, B then finds a margin of 3 (a charge of 3: not 4 pages) or of 0
 * (the writer, usage now at its limit of 5: not 1 page), so B calls the
 * callback too (@calls 2).  With 4 freed, B finds exactly the pages it
 * needs there, 4 (the charge) or 1 (the writer, usage 4 below its limit
 * of 5), and retries without a call (@calls 1): the kernel's check is
 * margin >= 1 << order, not more.
 */
static void oom_recheck_case(unsigned long b_pages, unsigned long freed,
			     unsigned int calls)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct oom_writer wa = { a, b_pages ? 1 : 0, 1 };
	struct oom_writer wb = { a, b_pages, 1 };
	unsigned long after = 8 - freed + b_pages;
	pthread_t th;

	fx.oom_calls = 0;
	assert_int_equal(pcstock_group_set_max(a, 8), 0);
	assert_int_equal(pcstock_group_charge(a, 8, 0), 0);
	fx.recheck_frees = freed;
	fx.oom_hook = free_when_b_waits;
	assert_int_equal(pthread_create(&th, NULL, oom_writer_fn, &wa), 0);
	for (int i = 0; atomic_load(&fx.oom_calls) < 1; i++) {
		assert_true(i < 10000);
		sleep_ms(1);
	}
	oom_writer_fn(&wb);
	pthread_join(th, NULL);
	assert_int_equal(wa.ret, b_pages ? -ENOMEM : 0);
	assert_int_equal(wb.ret, 0);
	assert_int_equal(fx.oom_calls, calls);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM), 2);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM_KILL),
			 calls - 1);
	assert_int_equal(pcstock_group_usage(a), after);
	fx.oom_hook = NULL;
	empty_group(a, after);
}

static void test_oom_recheck_wants_the_order_pages(void **state)
{
	oom_recheck_case(3, 3, 2);
	oom_recheck_case(0, 3, 2);
}

/* Mutant H4: the re-check as margin > 1 << order, which calls B's too. */
static void test_oom_recheck_skips_at_the_order_pages(void **state)
{
	oom_recheck_case(3, 4, 1);
	oom_recheck_case(0, 4, 1);
}

/* An unknown OOM result counts as "nothing killed", and is counted. */
static void test_oom_garbage_result(void **state)
{
	struct pcstock_group *a = full_group();
	struct pcstock_tree_stats ts;

	assert_int_equal(pcstock_group_set_max(a, 100), 0);
	fx.oom_result = 7;
	assert_int_equal(pcstock_group_charge(a, 1, 0), -ENOMEM);
	assert_int_equal(fx.oom_calls, 1);
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_OOM_KILL), 0);
	pcstock_tree_stats(fx.t, &ts);
	assert_int_equal(ts.callback_clamped, 1);
	empty_group(a, 100);
}

/*
 * A callback that writes a limit of its tree would recurse into the
 * callbacks or wait for the OOM lock its thread holds: the reclaiming
 * writers refuse with -EDEADLK (and change nothing); set_min is a plain
 * store and works.  Without the check this case hangs (ctest's timeout).
 */
static void test_limit_writers_refused_in_callbacks(void **state)
{
	struct pcstock_group *a = full_group();

	assert_int_equal(pcstock_group_set_max(a, 100), 0);
	fx.write_limits = true;
	assert_int_equal(pcstock_group_charge(a, 1, 0), -ENOMEM);
	assert_true(fx.reclaim_calls > 0);
	assert_int_equal(fx.oom_calls, 1);
	for (int cb = 0; cb < 2; cb++) {
		for (int w = 0; w < 4; w++)
			assert_int_equal(fx.writer_ret[cb][w], -EDEADLK);
		assert_int_equal(fx.writer_ret[cb][4], 0);
	}
	assert_int_equal(pcstock_counter_max(pcstock_group_memory(a)), 100);
	assert_int_equal(pcstock_counter_high(pcstock_group_memory(a)),
			 PCSTOCK_COUNTER_MAX);
	fx.write_limits = false;
	assert_int_equal(pcstock_group_set_min(a, 0), 0);
	empty_group(a, 100);
}

#define CASE(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* @argv[1]: a cmocka test filter (a pattern of the names below). */
int main(int argc, char **argv)
{
	static bool memsw = true;
	const struct CMUnitTest tests[] = {
		CASE(test_set_max_lying_reclaim),
		CASE(test_set_high_lying_reclaim),
		cmocka_unit_test_prestate_setup_teardown(
			test_strict_writers_lying_reclaim, setup, teardown,
			&memsw),
		CASE(test_charge_lying_reclaim),
		CASE(test_handle_over_high_lying_reclaim),
		CASE(test_slow_lying_reclaim),
		CASE(test_async_oom_never_frees),
		CASE(test_async_oom_victim_frees_later),
		cmocka_unit_test_setup_teardown(
			test_async_oom_victim_frees_into_a_stock,
			setup_stocked, teardown),
		CASE(test_set_max_async_oom),
		CASE(test_concurrent_oom_serialised),
		CASE(test_oom_garbage_result),
		CASE(test_oom_recheck_wants_the_order_pages),
		CASE(test_oom_recheck_skips_at_the_order_pages),
		CASE(test_limit_writers_refused_in_callbacks),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
