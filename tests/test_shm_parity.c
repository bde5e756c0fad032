// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_shm_parity.c - the shared tree against the private one: what
 * shared.h promises is the private tree's default policy (or the
 * kernel's), case by case, where the two were found to differ.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <pcstock/hierarchy.h>
#include <pcstock/shared.h>

#include "shm.h"
#include "shm_fixture.h"

/*
 * A destroyed group protects nothing, also while its pages are still
 * held (mem_cgroup_css_offline(), as a private tree's destroy): its
 * sibling's share of an overcommitted parent's min is whole again.
 */
static void test_destroyed_group_protects_nothing(void **state)
{
	struct pcstock_shm *s = create(8, 2, 0);
	pcstock_shm_gid p, a, b;
	unsigned long emin, elow;

	(void)state;
	p = mkgroup(s, PCSTOCK_SHM_ROOT, "p");
	a = mkgroup(s, p, "a");
	b = mkgroup(s, p, "b");
	assert_int_equal(pcstock_shm_set_limit(s, p, PCSTOCK_LIMIT_MIN, 100),
			 0);
	assert_int_equal(pcstock_shm_set_limit(s, a, PCSTOCK_LIMIT_MIN, 100),
			 0);
	assert_int_equal(pcstock_shm_set_limit(s, b, PCSTOCK_LIMIT_LOW, 100),
			 0);
	assert_int_equal(pcstock_shm_set_limit(s, b, PCSTOCK_LIMIT_MIN, 100),
			 0);
	assert_int_equal(pcstock_shm_charge(s, a, 100, 0), 0);
	assert_int_equal(pcstock_shm_charge(s, b, 100, 0), 0);
	assert_int_equal(pcstock_shm_calculate_protection(s, PCSTOCK_SHM_ROOT,
							  true), 0);
	assert_int_equal(pcstock_shm_effective_protection(s, a, &emin, &elow),
			 0);
	assert_int_equal(emin, 50);
	assert_int_equal(pcstock_shm_group_destroy(s, b), 0);
	assert_int_equal(pcstock_shm_usage(s, p), 200);
	assert_int_equal(pcstock_shm_calculate_protection(s, PCSTOCK_SHM_ROOT,
							  true), 0);
	assert_int_equal(pcstock_shm_effective_protection(s, a, &emin, &elow),
			 0);
	assert_int_equal(emin, 100);
	assert_int_equal(pcstock_shm_uncharge(s, b, 100), 0);
	assert_int_equal(pcstock_shm_uncharge(s, a, 100), 0);
	assert_int_equal(pcstock_shm_usage(s, PCSTOCK_SHM_ROOT), 0);
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/* The private twin: a SIM domain of one CPU, a default tree, group "a". */
static struct twin {
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *a;
} tw;

static struct pcstock_group *twin_new_attr(const struct pcstock_tree_attr *a)
{
	struct pcstock_domain_attr da = { .nr_cpus = 1,
					  .mode = PCSTOCK_CPU_SIM };

	assert_int_equal(pcstock_domain_create(&da, &tw.d), 0);
	assert_int_equal(pcstock_tree_create(tw.d, a, &tw.t), 0);
	assert_int_equal(pcstock_group_create(pcstock_tree_root(tw.t), "a",
					      &tw.a), 0);
	return tw.a;
}

static struct pcstock_group *twin_new(void)
{
	return twin_new_attr(NULL);
}

static void twin_free(void)
{
	assert_int_equal(pcstock_group_destroy(tw.a), 0);
	pcstock_group_put(tw.a);
	assert_int_equal(pcstock_tree_destroy(tw.t), 0);
	assert_int_equal(pcstock_domain_destroy(tw.d), 0);
}

/*
 * A limit write parses as a private tree's (and the kernel's): strstrip()
 * with the kernel's whitespace (\r, \v, \f and 0xA0 too), then memparse
 * over the whole value, whatever its length.  Each value goes to both
 * trees' memory.high and must give the same result and the same limit.
 */
static void test_limit_writes_parse_as_private_tree(void **state)
{
	static const char *const values[] = {
		"1M", "1M\n", " 1M\r\n", "\v\f1M\t", "\xa0" "1M\xa0", "max",
		" max\n", "16E", "0x10K", "010", "",
		"000000000000000000000000000000000000000000000000000000000064K",
		"1M 2", "1Mx", "-1", "1\xa1", "max max",
	};
	struct pcstock_shm *s = create(4, 2, 0);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	struct pcstock_group *pa = twin_new();

	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		char want[64], got[64];
		int rp, rs;

		/* A value the writes refuse leaves the last one: reset it. */
		assert_int_equal(pcstock_group_write(pa, "memory.high", "7"),
				 0);
		assert_int_equal(pcstock_shm_write(s, a, "memory.high", "7"),
				 0);
		rp = pcstock_group_write(pa, "memory.high", values[i]);
		rs = pcstock_shm_write(s, a, "memory.high", values[i]);
		assert_true(pcstock_group_read(pa, "memory.high", want,
					       sizeof(want)) > 0);
		assert_true(pcstock_shm_read(s, a, "memory.high", got,
					     sizeof(got)) > 0);
		if (rp != rs || strcmp(want, got))
			fail_msg("value %zu \"%s\": private %d \"%s\", shared "
				 "%d \"%s\"", i, values[i], rp, want, rs, got);
	}
	twin_free();
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/*
 * A create or attach that fails keeps no handle: a worker that retries its
 * attach while the region is full does not grow.  (Detached handles stay,
 * so that one used again is -EBADF.)
 */
static void test_failed_attach_keeps_no_handle(void **state)
{
	struct pcstock_shm_attr a = { .max_groups = 4, .max_procs = 1 };
	struct pcstock_shm *s, *w = NULL;
	size_t before;

	(void)state;
	assert_int_equal(pcstock_shm_create(NULL, &a, &s), 0);
	before = shm_handles();
	for (int i = 0; i < 100; i++)
		assert_int_equal(pcstock_shm_attach_fd(pcstock_shm_fd(s), &w),
				 -EUSERS);
	assert_null(w);
	assert_int_equal(shm_handles(), before);
	assert_int_equal(pcstock_shm_detach(s), 0);
	assert_int_equal(shm_handles(), before);
}

/*
 * Every attribute a region is created with is one another process can
 * attach to, and sees: the attach checks the header against the layout the
 * attributes give, so an attribute left out of that check refuses every
 * attach (as track_failcnt did until 0.12.0).  The child charges past a
 * max of 4 and reads the failures counted, or not: with a stock, as the
 * kernel's try_charge_memcg(), the batch is tried first and then the 5
 * pages alone, two failures.
 */
static void test_attach_keeps_every_attribute(void **state)
{
	static const unsigned int batches[] = { PCSTOCK_SHM_NO_STOCK, 0, 8 };

	(void)state;
	for (unsigned int i = 0; i < 3 * 2 * 2; i++) {
		struct pcstock_shm_attr a = {
			.max_groups = 8, .max_procs = 2, .nr_cpus = 2,
			.batch = batches[i % 3],
			.exact = (i / 3) % 2, .track_failcnt = i / 6,
		};
		struct pcstock_shm *s;
		pcstock_shm_gid g;
		pid_t pid;
		int rc;

		assert_int_equal(pcstock_shm_create(NULL, &a, &s), 0);
		g = mkgroup(s, PCSTOCK_SHM_ROOT, "g");
		assert_int_equal(pcstock_shm_set_limit(s, g, PCSTOCK_LIMIT_MAX,
						       4), 0);
		pid = fork_checked();
		if (!pid) {
			struct pcstock_shm *w;
			char buf[32];

			if (pcstock_shm_attach_fd(pcstock_shm_fd(s), &w))
				_exit(1);
			if (pcstock_shm_charge(w, g, 5,
					       PCSTOCK_CHARGE_NOWAIT) != -ENOMEM)
				_exit(2);
			if (pcstock_shm_read(w, g, "memory.failcnt", buf,
					     sizeof(buf)) <= 0 ||
			    strcmp(buf, !a.track_failcnt ? "0\n" :
				   a.batch == PCSTOCK_SHM_NO_STOCK ? "1\n" :
								   "2\n"))
				_exit(3);
			_exit(pcstock_shm_detach(w) ? 4 : 0);
		}
		rc = wait_child(pid);
		if (rc)
			fail_msg("attributes %u: the attached child failed "
				 "with %d", i, rc);
		assert_int_equal(pcstock_shm_usage(s, PCSTOCK_SHM_ROOT), 0);
		assert_int_equal(pcstock_shm_detach(s), 0);
	}
}

/*
 * A new group's v2 files read as a private tree's: memory.high "max" (no
 * high, as mem_cgroup_css_alloc() sets), every limit at "max" printed as
 * "max", memory.events' six lines; after "max" is written to min and low,
 * they too read "max"; and the root has no v2 file.
 */
static void test_fresh_group_files_read_as_private_tree(void **state)
{
	static const char *const files[] = {
		"memory.current", "memory.min", "memory.low", "memory.high",
		"memory.max", "memory.peak", "memory.events",
	};
	struct pcstock_shm *s = create(4, 2, 0);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	struct pcstock_group *pa = twin_new();
	char want[256], got[256];

	(void)state;
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			assert_true(pcstock_group_read(pa, files[i], want,
						       sizeof(want)) > 0);
			assert_true(pcstock_shm_read(s, a, files[i], got,
						     sizeof(got)) > 0);
			if (strcmp(want, got))
				fail_msg("round %d, %s: private \"%s\", "
					 "shared \"%s\"", round, files[i],
					 want, got);
			assert_int_equal(pcstock_group_read(
						 pcstock_tree_root(tw.t), files[i],
						 want, sizeof(want)),
					 -ENOENT);
			assert_int_equal(pcstock_shm_read(s, PCSTOCK_SHM_ROOT,
							  files[i], got,
							  sizeof(got)),
					 -ENOENT);
		}
		assert_int_equal(pcstock_group_write(pa, "memory.min", "max"),
				 0);
		assert_int_equal(pcstock_group_write(pa, "memory.low", "max"),
				 0);
		assert_int_equal(pcstock_shm_write(s, a, "memory.min", "max"),
				 0);
		assert_int_equal(pcstock_shm_write(s, a, "memory.low", "max"),
				 0);
	}
	twin_free();
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/*
 * A refused charge goes through the kernel's failure loop in both trees
 * alike: the same MAX and OOM events, reclaim calls and failures, for a
 * reclaim that frees nothing (1 page, 8, 9, NORETRY), one that claims
 * progress it does not make (the progress rounds, for at most 8 pages),
 * NOWAIT|NOFAIL (the forced charge's MAX event) and no OOM callback (the
 * OOM event still counts).  The limit, 10 pages, all used, is on c, a
 * child of a: a's memory.events count c's events, its .local none.  No
 * stock.
 */
static unsigned int reclaims;
static long claim;

static long private_reclaim(struct pcstock_group *g, unsigned long n,
			    void *arg)
{
	(void)g;
	(void)n;
	(void)arg;
	reclaims++;
	return claim;
}

static unsigned long shared_reclaim(struct pcstock_shm *s, pcstock_shm_gid g,
				    unsigned long n, void *arg)
{
	(void)s;
	(void)g;
	(void)n;
	(void)arg;
	reclaims++;
	return (unsigned long)claim;
}

static void test_refused_charges_count_as_private_tree(void **state)
{
	static const struct {
		unsigned long n;
		unsigned int flags;
		long claim;
	} cases[] = {
		{ 1, 0, 0 }, { 8, 0, 0 }, { 9, 0, 0 },
		{ 1, PCSTOCK_CHARGE_NORETRY, 0 }, { 1, 0, 1 }, { 9, 0, 1 },
		{ 6, PCSTOCK_CHARGE_NOWAIT | PCSTOCK_CHARGE_NOFAIL, 0 },
	};
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE,
					  .reclaim = private_reclaim };
	struct pcstock_shm_callbacks cb = { .reclaim = shared_reclaim };
	struct pcstock_shm *s = create(4, 2, 0);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	pcstock_shm_gid c = mkgroup(s, a, "c");
	struct pcstock_group *pa = twin_new_attr(&attr), *pc;
	char want[256], got[256];

	(void)state;
	assert_int_equal(pcstock_group_create(pa, "c", &pc), 0);
	assert_int_equal(pcstock_shm_set_callbacks(s, &cb), 0);
	assert_int_equal(pcstock_group_set_max(pc, 10), 0);
	assert_int_equal(pcstock_shm_set_limit(s, c, PCSTOCK_LIMIT_MAX, 10), 0);
	assert_int_equal(pcstock_group_charge(pc, 10, 0), 0);
	assert_int_equal(pcstock_shm_charge(s, c, 10, 0), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned long ev[2][3];
		unsigned int calls[2];
		int ret[2];

		claim = cases[i].claim;
		reclaims = 0;
		ret[0] = pcstock_group_charge(pc, cases[i].n, cases[i].flags);
		calls[0] = reclaims;
		reclaims = 0;
		ret[1] = pcstock_shm_charge(s, c, cases[i].n, cases[i].flags);
		calls[1] = reclaims;
		for (int e = 0; e < 3; e++) {
			static const enum pcstock_event evs[] = {
				PCSTOCK_EVENT_MAX, PCSTOCK_EVENT_OOM,
				PCSTOCK_EVENT_OOM_KILL,
			};

			ev[0][e] = pcstock_group_events(pc, evs[e]);
			ev[1][e] = pcstock_shm_events(s, c, evs[e]);
		}
		if (ret[0] != ret[1] || calls[0] != calls[1] ||
		    memcmp(ev[0], ev[1], sizeof(ev[0])))
			fail_msg("case %zu: private %d, %u reclaims, events "
				 "%lu/%lu/%lu; shared %d, %u, %lu/%lu/%lu", i,
				 ret[0], calls[0], ev[0][0], ev[0][1],
				 ev[0][2], ret[1], calls[1], ev[1][0],
				 ev[1][1], ev[1][2]);
		/* Only the forced charge succeeds. */
		assert_int_equal(ret[0], cases[i].flags &
					 PCSTOCK_CHARGE_NOFAIL ? 0 : -ENOMEM);
		if (!ret[0]) {
			assert_int_equal(pcstock_group_uncharge(pc,
								cases[i].n),
					 0);
			assert_int_equal(pcstock_shm_uncharge(s, c,
							      cases[i].n),
					 0);
		}
	}
	/* The four event files of a and c, as the private tree's. */
	for (int k = 0; k < 4; k++) {
		const char *file = k & 1 ? "memory.events.local" :
					   "memory.events";

		assert_true(pcstock_group_read(k & 2 ? pc : pa, file, want,
					       sizeof(want)) > 0);
		assert_true(pcstock_shm_read(s, k & 2 ? c : a, file, got,
					     sizeof(got)) > 0);
		if (strcmp(want, got))
			fail_msg("%s of %s: private \"%s\", shared \"%s\"",
				 file, k & 2 ? "c" : "a", want, got);
	}
	assert_int_equal(pcstock_shm_usage(s, a), 10);
	assert_int_equal(pcstock_shm_uncharge(s, c, 10), 0);
	assert_int_equal(pcstock_group_uncharge(pc, 10), 0);
	assert_int_equal(pcstock_group_destroy(pc), 0);
	pcstock_group_put(pc);
	twin_free();
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/*
 * An uncharge of more than a batch goes straight to the counters and
 * leaves this CPU's slot as it was, as the private default policy's
 * (stock.h); one within the batch that overflows the slot empties it.
 */
static void test_large_uncharge_keeps_the_slot(void **state)
{
	struct pcstock_shm *s = create(4, 2, 8);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");

	(void)state;
	run_on_cpu(0);
	assert_int_equal(pcstock_shm_charge(s, a, 1, 0), 0);
	assert_int_equal(pcstock_shm_charge(s, a, 20, 0), 0);
	assert_int_equal(pcstock_shm_stock_pages(s, a), 7);
	assert_int_equal(pcstock_shm_uncharge(s, a, 9), 0);
	assert_int_equal(pcstock_shm_stock_pages(s, a), 7);
	assert_int_equal(pcstock_shm_usage(s, a), 8 + 20 - 9);
	assert_int_equal(pcstock_shm_uncharge(s, a, 2), 0);
	assert_int_equal(pcstock_shm_stock_pages(s, a), 0);
	assert_int_equal(pcstock_shm_uncharge(s, a, 10), 0);
	assert_int_equal(pcstock_shm_drain(s, a) >= 0, 1);
	assert_int_equal(pcstock_shm_usage(s, a), 0);
	run_anywhere();
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/*
 * The callback mark is the thread's, whatever the tree (as PF_MEMALLOC is
 * the task's): a charge of a private group made inside a shared tree's
 * reclaim callback is forced, and one of a shared group inside a private
 * tree's.  Both groups are full (max 1, 1 page used).
 */
static struct pcstock_shm *cross_s;
static pcstock_shm_gid cross_g;
static struct pcstock_group *cross_pg;
static int cross_ret;

static unsigned long shared_cb_charges_private(struct pcstock_shm *s,
					       pcstock_shm_gid g,
					       unsigned long n, void *arg)
{
	(void)s;
	(void)g;
	(void)n;
	(void)arg;
	cross_ret = pcstock_group_charge(cross_pg, 1, 0);
	return 0;
}

static long private_cb_charges_shared(struct pcstock_group *g,
				      unsigned long n, void *arg)
{
	(void)g;
	(void)n;
	(void)arg;
	cross_ret = pcstock_shm_charge(cross_s, cross_g, 1, 0);
	return 0;
}

static void test_callback_mark_crosses_trees(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_NONE,
					  .reclaim = private_cb_charges_shared };
	struct pcstock_shm_callbacks cb = {
		.reclaim = shared_cb_charges_private,
	};

	(void)state;
	cross_s = create(4, 2, 0);
	cross_g = mkgroup(cross_s, PCSTOCK_SHM_ROOT, "a");
	cross_pg = twin_new_attr(&attr);
	assert_int_equal(pcstock_shm_set_callbacks(cross_s, &cb), 0);
	assert_int_equal(pcstock_group_set_max(cross_pg, 1), 0);
	assert_int_equal(pcstock_shm_set_limit(cross_s, cross_g,
					       PCSTOCK_LIMIT_MAX, 1), 0);
	assert_int_equal(pcstock_group_charge(cross_pg, 1, 0), 0);
	assert_int_equal(pcstock_shm_charge(cross_s, cross_g, 1, 0), 0);

	cross_ret = 1;
	assert_int_equal(pcstock_shm_charge(cross_s, cross_g, 1,
					    PCSTOCK_CHARGE_NORETRY),
			 -ENOMEM);
	assert_int_equal(cross_ret, 0);		/* forced: over its max */
	assert_int_equal(pcstock_counter_read(pcstock_group_memory(cross_pg)),
			 1 + 2);		/* one per NORETRY round */
	cross_ret = 1;
	assert_int_equal(pcstock_group_charge(cross_pg, 1,
					      PCSTOCK_CHARGE_NORETRY),
			 -ENOMEM);
	assert_int_equal(cross_ret, 0);
	assert_int_equal(pcstock_shm_usage(cross_s, cross_g), 1 + 2);
	/*
	 * Each forced charge raised its MAX event, as the private group's
	 * (2 of its own refused rounds, 2 forced) and the shared group's
	 * (2 rounds, 2 forced) show alike.
	 */
	assert_int_equal(pcstock_group_events(cross_pg, PCSTOCK_EVENT_MAX),
			 4);
	assert_int_equal(pcstock_shm_events(cross_s, cross_g,
					    PCSTOCK_EVENT_MAX), 4);

	assert_int_equal(pcstock_group_uncharge(cross_pg, 3), 0);
	assert_int_equal(pcstock_shm_uncharge(cross_s, cross_g, 3), 0);
	twin_free();
	assert_int_equal(pcstock_shm_detach(cross_s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_destroyed_group_protects_nothing),
		cmocka_unit_test(test_limit_writes_parse_as_private_tree),
		cmocka_unit_test(test_failed_attach_keeps_no_handle),
		cmocka_unit_test(test_attach_keeps_every_attribute),
		cmocka_unit_test(test_fresh_group_files_read_as_private_tree),
		cmocka_unit_test(test_refused_charges_count_as_private_tree),
		cmocka_unit_test(test_large_uncharge_keeps_the_slot),
		cmocka_unit_test(test_callback_mark_crosses_trees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
