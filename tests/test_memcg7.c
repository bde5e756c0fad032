// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_memcg7.c - the pre-series 7-slot memcg stock: the kernel's
 * multi-memcg per-CPU charge cache of v6.16 (mm/memcontrol.c), and cases
 * S1 to S5 of docs/conformance.md.
 *
 * S1-S3 run on the cache alone with fake keys whose uncharges and
 * references are recorded; S1 again, S4, S5 and the drain_all behaviour
 * (whole-CPU drains, the isolated-CPU flushing flag and its proposed fix)
 * run through groups of a memcg7 tree on a 4-CPU SIM domain (the locked
 * variant).  The owner-exclusive variant runs on a COOP domain with a peer
 * thread owning CPU 1, stepped command by command, so each interleaving
 * of a queued drain with its owner is pinned.
 *
 * A case whose comment names a mutant ("Mutant D2: ...") came from the
 * mutation study (docs/mutation.md, by that id) and fails on it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_helpers.h"
#include "internal.h"
#include "memcg7_fake.h"

#define NR_CPUS 4U
#define BATCH 64U

static struct pcstock_domain *dom;

static int setup(void **state)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_SIM, NULL };

	if (pcstock_domain_create(&attr, &dom) || pcstock_cpu_enter(dom, 0))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	pcstock_cpu_exit(dom);
	pcstock_domain_destroy(dom);
	return 0;
}

/* A cache of fake keys over @d; @fix: the isolated-CPU fix. */
static struct memcg7 *fake_cache(struct pcstock_domain *d, bool fix)
{
	struct memcg7 *m = NULL;

	assert_int_equal(memcg7_create(d, BATCH, fix, &memcg7_fake_ops, &m),
			 0);
	return m;
}

static void assert_slot(struct memcg7 *m, unsigned int cpu, unsigned int i,
			void *key, unsigned int nr)
{
	void *k;
	unsigned int n;

	assert_true(memcg7_slot(m, cpu, i, &k, &n));
	assert_ptr_equal(k, key);
	assert_int_equal(n, nr);
}

/* S1: slots fill in order; then slot 0, slot 1, ... are the victims. */
static void test_s1_round_robin_eviction(void **state)
{
	struct memcg7_fake f[16] = { 0 };
	struct memcg7 *m = fake_cache(dom, false);

	for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++)
		memcg7_refill(m, &f[i], 1);
	for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++)
		assert_slot(m, 0, i, &f[i], 1);
	memcg7_refill(m, &f[7], 1);
	assert_slot(m, 0, 0, &f[7], 1);
	assert_int_equal(f[0].uncharged, 1);
	assert_int_equal(f[0].refs, 0);
	memcg7_refill(m, &f[8], 1);
	assert_slot(m, 0, 1, &f[8], 1);
	assert_int_equal(f[1].uncharged, 1);
	/* the k-th eviction drains slot k mod 7, whoever is in it */
	for (unsigned int i = 9; i < 16; i++)
		memcg7_refill(m, &f[i], 1);
	assert_slot(m, 0, 1, &f[15], 1);
	assert_slot(m, 0, 2, &f[9], 1);
	assert_int_equal(f[7].uncharged, 1);	/* slot 0 again */
	/* a second refill of a cached key adds to its slot */
	memcg7_refill(m, &f[9], 2);
	assert_slot(m, 0, 2, &f[9], 3);
	memcg7_destroy(m);
	for (unsigned int i = 0; i < 16; i++)
		assert_int_equal(f[i].refs, 0);
	assert_int_equal(f[9].uncharged, 3);
}

/* S2: 60 + 5 passes the batch: the whole slot (65) is drained. */
static void test_s2_overflow_drains_slot(void **state)
{
	struct memcg7_fake f = { 0 };
	struct memcg7 *m = fake_cache(dom, false);

	memcg7_refill(m, &f, 60);
	assert_slot(m, 0, 0, &f, 60);
	memcg7_refill(m, &f, 4);
	assert_slot(m, 0, 0, &f, 64);	/* equal to batch stays */
	memcg7_refill(m, &f, 1);
	assert_slot(m, 0, 0, NULL, 0);
	assert_int_equal(f.uncharged, 65);
	assert_int_equal(f.refs, 0);
	memcg7_destroy(m);
}

/* S3: an oversize refill bypasses the cache; consume limits. */
static void test_s3_oversize_bypass_and_consume(void **state)
{
	struct memcg7_fake f = { 0 }, g = { 0 };
	struct pcstock_memcg7_stats st;
	struct memcg7 *m = fake_cache(dom, false);

	memcg7_refill(m, &f, 65);
	assert_int_equal(f.uncharged, 65);
	assert_slot(m, 0, 0, NULL, 0);
	memcg7_refill(m, &f, 10);
	assert_false(memcg7_consume(m, &f, 65));
	assert_false(memcg7_consume(m, &f, 11));
	assert_true(memcg7_consume(m, &f, 10));
	assert_false(memcg7_consume(m, &g, 1));
	assert_slot(m, 0, 0, &f, 0);	/* an empty slot keeps its key */
	/* offline keys and threads that are no CPU bypass */
	g.offline = true;
	memcg7_refill(m, &g, 3);
	assert_int_equal(g.uncharged, 3);
	pcstock_cpu_exit(dom);
	memcg7_refill(m, &f, 2);
	assert_int_equal(f.uncharged, 67);
	assert_false(memcg7_consume(m, &f, 0));
	assert_int_equal(pcstock_cpu_enter(dom, 0), 0);
	memcg7_stats(m, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 2);	/* oversize and no-CPU: no scan */
	assert_int_equal(st.bypasses, 2);	/* the third had no CPU */
	memcg7_destroy(m);
	assert_int_equal(f.refs, 0);
}

/* ---- through groups ------------------------------------------------------ */

static struct pcstock_tree *open_tree(bool fix, bool track_failcnt)
{
	struct pcstock_tree_attr attr = {
		.policy = PCSTOCK_TREE_MEMCG7,
		.memcg7_isolated_fix = fix,
		.track_failcnt = track_failcnt,
	};
	struct pcstock_tree *t = NULL;

	assert_int_equal(pcstock_tree_create(dom, &attr, &t), 0);
	return t;
}

static void on_cpu(unsigned int cpu)
{
	move_to_cpu(dom, cpu);
}

/* S1 through groups: the 8th group on a CPU evicts the 1st's stock. */
static void test_s1_groups_evict(void **state)
{
	struct pcstock_tree *t = open_tree(false, false);
	struct pcstock_group *g[9];
	char name[8];

	for (int i = 0; i < 9; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		g[i] = mkgroup(pcstock_tree_root(t), name);
		assert_int_equal(pcstock_group_charge(g[i], 1, 0), 0);
		assert_int_equal(pcstock_group_usage(g[i]), BATCH);
	}
	assert_int_equal(pcstock_group_usage(g[0]), 1);	/* evicted */
	assert_int_equal(pcstock_group_usage(g[1]), 1);
	assert_int_equal(pcstock_group_usage(g[2]), BATCH);
	assert_int_equal(pcstock_group_usage(pcstock_tree_root(t)),
			 9 + 7 * (BATCH - 1));
	assert_int_equal(pcstock_group_usage_exact(pcstock_tree_root(t)), 9);
	for (int i = 0; i < 9; i++) {
		assert_int_equal(pcstock_group_uncharge(g[i], 1), 0);
		rmgroup(g[i]);
	}
	assert_int_equal(pcstock_group_usage(pcstock_tree_root(t)), 0);
	assert_int_equal(pcstock_tree_destroy(t), 0);
}

/* S4: one batch per 64 one-page charges on a CPU. */
static void test_s4_batching(void **state)
{
	struct pcstock_tree *t = open_tree(false, false);
	struct pcstock_group *a = mkgroup(pcstock_tree_root(t), "a");
	struct pcstock_tree_stats ts;

	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	assert_int_equal(pcstock_group_usage(a), BATCH);
	assert_int_equal(pcstock_group_stock_pages(a), BATCH - 1);
	for (unsigned int i = 0; i < BATCH - 1; i++)
		assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	assert_int_equal(pcstock_group_usage(a), BATCH);
	assert_int_equal(pcstock_counter_watermark(pcstock_group_memory(a)),
			 BATCH);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	assert_int_equal(pcstock_group_usage(a), 2 * BATCH);
	pcstock_tree_stats(t, &ts);
	assert_int_equal(ts.memcg7.hits, BATCH - 1);
	/* uncharges refill the slot; past the batch it is drained whole */
	assert_int_equal(pcstock_group_uncharge(a, BATCH), 0);
	assert_int_equal(pcstock_group_usage(a), 1);	/* 63 + 64 went up */
	assert_int_equal(pcstock_group_stock_pages(a), 0);
	assert_int_equal(pcstock_group_uncharge(a, 1), 0);
	assert_int_equal(pcstock_group_stock_pages(a), 1);
	assert_int_equal(pcstock_group_usage(a), 1);
	pcstock_group_drain_all(a);
	assert_int_equal(pcstock_group_usage(a), 0);
	rmgroup(a);
	assert_int_equal(pcstock_tree_destroy(t), 0);
}

/* S5: room for 10 pages: the batch fails (failcnt + 1), 1 page fits. */
static void test_s5_batch_fallback(void **state)
{
	struct pcstock_tree *t = open_tree(false, true);
	struct pcstock_group *a = mkgroup(pcstock_tree_root(t), "a");

	assert_int_equal(pcstock_group_charge(a, 100, 0), 0);
	assert_int_equal(pcstock_group_set_max(a, 110), 0);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	assert_int_equal(pcstock_group_usage(a), 101);
	assert_int_equal(pcstock_counter_failcnt(pcstock_group_memory(a)), 1);
	assert_int_equal(pcstock_group_stock_pages(a), 0);	/* no refill */
	assert_int_equal(pcstock_group_events(a, PCSTOCK_EVENT_MAX), 0);
	pcstock_group_uncharge(a, 101);
	pcstock_group_drain_all(a);
	rmgroup(a);
	assert_int_equal(pcstock_tree_destroy(t), 0);
}

/* A drain_all for one group drains the whole cache of each CPU it hits. */
static void test_drain_all_drains_other_groups(void **state)
{
	struct pcstock_tree *t = open_tree(false, false);
	struct pcstock_group *a = mkgroup(pcstock_tree_root(t), "a");
	struct pcstock_group *b = mkgroup(pcstock_tree_root(t), "b");

	on_cpu(1);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	assert_int_equal(pcstock_group_charge(b, 1, 0), 0);
	on_cpu(2);
	assert_int_equal(pcstock_group_charge(b, 1, 0), 0);
	on_cpu(0);
	pcstock_group_drain_all(a);
	assert_int_equal(pcstock_group_usage(a), 1);
	/* b lost CPU 1's stock too, but keeps CPU 2's (no a there) */
	assert_int_equal(pcstock_group_usage(b), 2 + BATCH - 1);
	pcstock_group_uncharge(a, 1);
	pcstock_group_uncharge(b, 2);
	rmgroup(a);
	rmgroup(b);
	assert_int_equal(pcstock_tree_destroy(t), 0);
}

/*
 * The 2026 bug (Hui Zhu): drain_all skips an isolated CPU but leaves its
 * flushing flag set, so no later drain_all drains that CPU, even after it
 * stops being isolated.  With the proposed fix the flag is cleared.
 */
static void isolated_case(bool fix)
{
	struct pcstock_tree *t = open_tree(fix, false);
	struct pcstock_group *a = mkgroup(pcstock_tree_root(t), "a");
	struct pcstock_tree_stats ts;

	on_cpu(3);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	on_cpu(0);
	assert_int_equal(pcstock_cpu_set_isolated(dom, 3, true), 0);
	pcstock_group_drain_all(a);
	assert_int_equal(pcstock_group_usage(a), BATCH);	/* skipped */
	assert_int_equal(pcstock_cpu_set_isolated(dom, 3, false), 0);
	pcstock_group_drain_all(a);
	pcstock_tree_stats(t, &ts);
	assert_int_equal(ts.memcg7.isolated_skips, 1);
	if (fix) {
		assert_int_equal(pcstock_group_usage(a), 1);
		assert_int_equal(ts.memcg7.flushing_skips, 0);
	} else {
		assert_int_equal(pcstock_group_usage(a), BATCH);
		assert_int_equal(ts.memcg7.flushing_skips, 1);
	}
	pcstock_group_uncharge(a, 1);
	rmgroup(a);	/* destroy drains the group's slots everywhere */
	assert_int_equal(pcstock_group_usage(pcstock_tree_root(t)), 0);
	assert_int_equal(pcstock_tree_destroy(t), 0);
}

static void test_isolated_cpu_flag_stays_set(void **state)
{
	isolated_case(false);
}

static void test_isolated_cpu_flag_fix(void **state)
{
	isolated_case(true);
}

/*
 * drain_all drains its own CPU at once, isolated or not: the kernel's
 * drain_all_stock() tests cpu == curcpu before cpu_is_isolated().
 */
static void test_isolated_own_cpu_drained(void **state)
{
	struct pcstock_tree *t = open_tree(false, false);
	struct pcstock_group *a = mkgroup(pcstock_tree_root(t), "a");
	struct pcstock_tree_stats ts;

	on_cpu(3);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	assert_int_equal(pcstock_cpu_set_isolated(dom, 3, true), 0);
	pcstock_group_drain_all(a);
	assert_int_equal(pcstock_group_usage(a), 1);
	pcstock_tree_stats(t, &ts);
	assert_int_equal(ts.memcg7.isolated_skips, 0);
	assert_int_equal(pcstock_cpu_set_isolated(dom, 3, false), 0);
	on_cpu(0);
	pcstock_group_uncharge(a, 1);
	rmgroup(a);
	assert_int_equal(pcstock_group_usage(pcstock_tree_root(t)), 0);
	assert_int_equal(pcstock_tree_destroy(t), 0);
}

/*
 * Pages cached on a CPU after it went offline used to be unreachable:
 * drain_all skips offline CPUs and nothing else drained them.  Mainline
 * drains a dead CPU once and never refills it; a thread still entered on
 * an offline CPU now bypasses the cache.  Limit 100, one page charged on
 * offline CPU 1 (its batch surplus of 63 would be cached there), then 99
 * pages on CPU 0 must fit, under memcg7 as under DEFAULT.
 */
static void offline_cpu_case(enum pcstock_tree_policy policy)
{
	struct pcstock_tree_attr attr = { .policy = policy };
	struct pcstock_tree *t = NULL;
	struct pcstock_group *a;

	assert_int_equal(pcstock_tree_create(dom, &attr, &t), 0);
	a = mkgroup(pcstock_tree_root(t), "a");
	assert_int_equal(pcstock_group_set_max(a, 100), 0);
	assert_int_equal(pcstock_cpu_set_online(dom, 1, false), 0);
	on_cpu(1);
	assert_int_equal(pcstock_group_charge(a, 1, 0), 0);
	assert_int_equal(pcstock_group_uncharge(a, 0), 0);
	on_cpu(0);
	assert_int_equal(pcstock_group_charge(a, 99, 0), 0);
	assert_int_equal(pcstock_group_usage_exact(a), 100);
	assert_int_equal(pcstock_group_uncharge(a, 100), 0);
	pcstock_group_drain_all(a);
	assert_int_equal(pcstock_group_usage(a), 0);
	assert_int_equal(pcstock_cpu_set_online(dom, 1, true), 0);
	rmgroup(a);
	assert_int_equal(pcstock_tree_destroy(t), 0);
}

static void test_offline_cpu_not_refilled(void **state)
{
	offline_cpu_case(PCSTOCK_TREE_MEMCG7);
	offline_cpu_case(PCSTOCK_TREE_DEFAULT);
}

/* The cache alone: an offline CPU's refill goes to the counters. */
static void test_offline_cpu_bypasses_cache(void **state)
{
	struct memcg7_fake f = { 0 };
	struct memcg7 *m = fake_cache(dom, false);

	on_cpu(1);
	memcg7_refill(m, &f, 5);
	assert_slot(m, 1, 0, &f, 5);
	assert_int_equal(pcstock_cpu_set_online(dom, 1, false), 0);
	assert_slot(m, 1, 0, NULL, 0);		/* the dead CPU's drain */
	assert_int_equal(f.uncharged, 5);
	memcg7_refill(m, &f, 3);
	assert_slot(m, 1, 0, NULL, 0);
	assert_int_equal(f.uncharged, 8);
	assert_false(memcg7_consume(m, &f, 1));
	assert_int_equal(pcstock_cpu_set_online(dom, 1, true), 0);
	on_cpu(0);
	memcg7_destroy(m);
	assert_int_equal(f.refs, 0);
}

/* Pins the per-CPU flag itself on the cache. */
static void test_flushing_flag_on_cache(void **state)
{
	struct memcg7_fake f = { 0 };
	struct memcg7 *m;

	for (int fix = 0; fix < 2; fix++) {
		m = fake_cache(dom, fix);
		on_cpu(2);
		memcg7_refill(m, &f, 5);
		on_cpu(0);
		assert_int_equal(pcstock_cpu_set_isolated(dom, 2, true), 0);
		assert_true(memcg7_drain_all(m, &f));
		assert_int_equal(memcg7_flushing(m, 2), !fix);
		assert_int_equal(pcstock_cpu_set_isolated(dom, 2, false), 0);
		assert_true(memcg7_drain_all(m, &f));
		assert_int_equal(f.uncharged, fix ? 5 : 0);
		assert_false(memcg7_flushing(m, 0));
		memcg7_destroy(m);
		f.uncharged = 0;
	}
	assert_int_equal(f.refs, 0);
}

/* ---- the owner-exclusive variant (COOP) ----------------------------------- */

enum peer_op { PEER_ENTER, PEER_REFILL, PEER_CONSUME, PEER_IDLE, PEER_EXIT,
	       PEER_QUIT };

/* A thread that owns a CPU of a COOP domain and runs one op per command. */
static struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct pcstock_domain *d;
	struct memcg7 *m;
	enum peer_op op;
	void *key;
	unsigned int arg;
	bool pending;
	long ret;
} peer = { .lock = PTHREAD_MUTEX_INITIALIZER,
	   .cond = PTHREAD_COND_INITIALIZER };

static long peer_do(void)
{
	switch (peer.op) {
	case PEER_ENTER:
		return pcstock_cpu_enter(peer.d, peer.arg);
	case PEER_REFILL:
		memcg7_refill(peer.m, peer.key, peer.arg);
		return 0;
	case PEER_CONSUME:
		return memcg7_consume(peer.m, peer.key, peer.arg);
	case PEER_IDLE:
		return pcstock_cpu_idle(peer.d);
	case PEER_EXIT:
		return pcstock_cpu_exit(peer.d);
	default:
		return 0;
	}
}

static void *peer_main(void *unused)
{
	bool quit = false;

	while (!quit) {
		pthread_mutex_lock(&peer.lock);
		while (!peer.pending)
			pthread_cond_wait(&peer.cond, &peer.lock);
		quit = peer.op == PEER_QUIT;
		peer.ret = peer_do();
		peer.pending = false;
		pthread_cond_broadcast(&peer.cond);
		pthread_mutex_unlock(&peer.lock);
	}
	return NULL;
}

/* Run @op on the peer and wait for it. */
static long peer_run(enum peer_op op, void *key, unsigned int arg)
{
	long ret;

	pthread_mutex_lock(&peer.lock);
	peer.op = op;
	peer.key = key;
	peer.arg = arg;
	peer.pending = true;
	pthread_cond_broadcast(&peer.cond);
	while (peer.pending)
		pthread_cond_wait(&peer.cond, &peer.lock);
	ret = peer.ret;
	pthread_mutex_unlock(&peer.lock);
	return ret;
}

/* A COOP domain: this thread owns CPU 0, the peer CPU 1. */
static struct memcg7 *coop_open(struct pcstock_domain **d)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_COOP, NULL };
	struct memcg7 *m;

	assert_int_equal(pcstock_domain_create(&attr, d), 0);
	pcstock_cpu_exit(dom);
	assert_int_equal(pcstock_cpu_enter(*d, 0), 0);
	m = fake_cache(*d, false);
	assert_true(memcg7_is_owned(m));
	peer.d = *d;
	peer.m = m;
	assert_int_equal(pthread_create(&peer.thread, NULL, peer_main, NULL),
			 0);
	assert_int_equal(peer_run(PEER_ENTER, NULL, 1), 0);
	return m;
}

static void coop_close(struct pcstock_domain *d, struct memcg7 *m)
{
	peer_run(PEER_QUIT, NULL, 0);
	pthread_join(peer.thread, NULL);
	memcg7_destroy(m);
	pcstock_cpu_exit(d);
	pcstock_domain_destroy(d);
	assert_int_equal(pcstock_cpu_enter(dom, 0), 0);
}

/* A CPU has one owner: entering an owned CPU is refused. */
static void test_coop_one_owner_per_cpu(void **state)
{
	struct pcstock_domain *d;
	struct memcg7 *m = coop_open(&d);

	assert_int_equal(peer_run(PEER_EXIT, NULL, 0), 0);
	assert_int_equal(peer_run(PEER_ENTER, NULL, 0), -EBUSY);
	assert_int_equal(peer_run(PEER_ENTER, NULL, 1), 0);
	assert_int_equal(peer_run(PEER_IDLE, NULL, 0), 0);
	assert_int_equal(pcstock_cpu_idle(dom), -EINVAL);
	coop_close(d, m);
}

/*
 * drain_all marks the owner's CPU flushing and queues the drain without
 * waiting: the pages stay until the owner's next operation, its idle
 * point or its exit runs it; the drainer's own CPU is drained at once,
 * and a CPU nobody owns is borrowed and drained by the drainer.
 */
static void test_coop_drain_all_queues_work(void **state)
{
	struct memcg7_fake f = { 0 }, g = { 0 };
	struct pcstock_domain *d;
	struct memcg7 *m = coop_open(&d);

	/* the next operation runs it */
	peer_run(PEER_REFILL, &f, 5);
	memcg7_refill(m, &f, 2);
	assert_true(memcg7_drain_all(m, &f));
	assert_int_equal(f.uncharged, 2);		/* own CPU: at once */
	assert_true(memcg7_flushing(m, 1));
	assert_slot(m, 1, 0, &f, 5);			/* queued */
	assert_true(memcg7_drain_all(m, &f));		/* flushing: skipped */
	assert_int_equal(f.uncharged, 2);
	assert_false(peer_run(PEER_CONSUME, &g, 1));	/* any operation */
	assert_slot(m, 1, 0, NULL, 0);
	assert_int_equal(f.uncharged, 7);
	assert_false(memcg7_flushing(m, 1));

	/* the idle point runs it */
	peer_run(PEER_REFILL, &f, 3);
	assert_true(memcg7_drain_all(m, &f));
	assert_int_equal(f.uncharged, 7);
	assert_int_equal(peer_run(PEER_IDLE, NULL, 0), 0);
	assert_int_equal(f.uncharged, 10);

	/* the exit runs it; then nobody owns CPU 1: drained at once */
	peer_run(PEER_REFILL, &f, 4);
	assert_true(memcg7_drain_all(m, &f));
	assert_int_equal(peer_run(PEER_EXIT, NULL, 0), 0);
	assert_int_equal(f.uncharged, 14);
	assert_int_equal(peer_run(PEER_ENTER, NULL, 1), 0);
	peer_run(PEER_REFILL, &f, 6);
	assert_int_equal(peer_run(PEER_EXIT, NULL, 0), 0);
	assert_slot(m, 1, 0, &f, 6);			/* cached, no owner */
	assert_true(memcg7_drain_all(m, &f));
	assert_int_equal(f.uncharged, 20);
	assert_false(memcg7_flushing(m, 1));
	assert_int_equal(peer_run(PEER_ENTER, NULL, 1), 0);
	coop_close(d, m);
	assert_int_equal(f.refs, 0);
}

/*
 * Slots hold no reference; a destroyed key's reference is taken by the
 * cache and dropped once every CPU ran the drain it queued.  An offline
 * CPU's drain is queued the same way, and its owner then bypasses.
 */
static void test_coop_deferred_reference(void **state)
{
	struct memcg7_fake f = { 0 }, g = { 0 };
	struct memcg7_dead dead;
	struct pcstock_domain *d;
	struct memcg7 *m = coop_open(&d);

	peer_run(PEER_REFILL, &f, 5);
	assert_int_equal(f.refs, 0);
	f.offline = true;
	memcg7_drain_key(m, &f, &dead);
	assert_int_equal(f.refs, 1);			/* CPU 1 to go */
	assert_slot(m, 1, 0, &f, 5);
	peer_run(PEER_REFILL, &f, 1);			/* offline: bypass */
	assert_int_equal(f.uncharged, 6);
	assert_slot(m, 1, 0, NULL, 0);
	assert_int_equal(f.refs, 0);

	peer_run(PEER_REFILL, &g, 4);
	assert_int_equal(pcstock_cpu_set_online(d, 1, false), 0);
	assert_slot(m, 1, 0, &g, 4);			/* queued */
	peer_run(PEER_REFILL, &g, 2);			/* drains, bypasses */
	assert_slot(m, 1, 0, NULL, 0);
	assert_int_equal(g.uncharged, 6);
	assert_int_equal(pcstock_cpu_set_online(d, 1, true), 0);
	coop_close(d, m);
	assert_int_equal(g.refs, 0);
}

/*
 * A tree destroy refused with -EBUSY (a destroyed group still referenced
 * by its user) has flushed the cache (tree_release): the drain a
 * drain_all queued to an owner is done by the flush, so the flushing flag
 * it set must go with it; left set, every later drain_all skips that CPU
 * and its pages stay cached for good.
 */
static void test_coop_flush_clears_flushing(void **state)
{
	struct memcg7_fake f = { 0 };
	struct pcstock_domain *d;
	struct memcg7 *m = coop_open(&d);

	peer_run(PEER_REFILL, &f, 5);
	assert_true(memcg7_drain_all(m, &f));
	assert_true(memcg7_flushing(m, 1));		/* queued */
	memcg7_flush(m);
	assert_int_equal(f.uncharged, 5);
	assert_slot(m, 1, 0, NULL, 0);
	assert_false(memcg7_flushing(m, 1));
	peer_run(PEER_REFILL, &f, 3);
	assert_true(memcg7_drain_all(m, &f));		/* reaches CPU 1 */
	assert_true(memcg7_flushing(m, 1));
	assert_false(peer_run(PEER_CONSUME, &f, 4));	/* runs it */
	assert_int_equal(f.uncharged, 8);
	assert_false(memcg7_flushing(m, 1));
	coop_close(d, m);
}

/*
 * A drain queued on a CPU while a requester has it borrowed (here by a
 * key dying in the middle of the borrower's drain) is run by the borrower
 * when it gives the CPU back: it looks for work again.  Otherwise the
 * dead key's deferred reference stays until the CPU is next entered.
 * Mutant D2: kick() testing the work bit once (if, not while).
 *
 * The cache on a COOP domain of two CPUs that nobody owns, this thread
 * on none of them.
 */
static struct {
	struct pcstock_domain *d;
	struct memcg7 *m;
	struct memcg7_fake f, g;
	struct memcg7_dead g_dead;
	bool g_dying;
} borrowed;

/* f's first uncharge destroys g: memcg7_drain_key() from inside a drain. */
static void kill_g(struct memcg7_fake *k)
{
	if (borrowed.g_dying)
		return;
	borrowed.g_dying = true;
	memcg7_drain_key(borrowed.m, &borrowed.g, &borrowed.g_dead);
}

/* Enter CPU 1, cache 3 pages of f and 2 of g, leave. */
static void *fill_cpu1(void *arg)
{
	if (pcstock_cpu_enter(borrowed.d, 1))
		return borrowed.d;
	memcg7_refill(borrowed.m, &borrowed.f, 3);
	memcg7_refill(borrowed.m, &borrowed.g, 2);
	pcstock_cpu_exit(borrowed.d);
	return NULL;
}

static void test_work_queued_while_borrowed_is_run(void **state)
{
	struct pcstock_domain_attr attr = { 2, PCSTOCK_CPU_COOP, NULL };
	pthread_t th;
	void *ret;

	pcstock_cpu_exit(dom);
	borrowed.f.on_uncharge = kill_g;
	assert_int_equal(pcstock_domain_create(&attr, &borrowed.d), 0);
	borrowed.m = fake_cache(borrowed.d, false);
	assert_true(memcg7_is_owned(borrowed.m));
	assert_int_equal(pthread_create(&th, NULL, fill_cpu1, NULL), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_null(ret);
	assert_int_equal(memcg7_pages(borrowed.m, &borrowed.f), 3);

	/* Nobody owns CPU 1: drain_all borrows it and drains it now. */
	assert_true(memcg7_drain_all(borrowed.m, &borrowed.f));
	assert_true(borrowed.g_dying);
	assert_int_equal(borrowed.f.uncharged, 3);
	assert_int_equal(borrowed.g.uncharged, 2);
	assert_false(memcg7_flushing(borrowed.m, 1));
	/* Every CPU ran the drain queued for g: its reference is dropped. */
	assert_int_equal(borrowed.g.refs, 0);
	memcg7_destroy(borrowed.m);
	assert_int_equal(borrowed.g.refs, 0);
	assert_int_equal(pcstock_domain_destroy(borrowed.d), 0);
	assert_int_equal(pcstock_cpu_enter(dom, 0), 0);
}

/* ---- a PINNED enter whose binding fails ---------------------------------- */

static struct pcstock_group *bind_victim;

/* At the binding, with CPU 1 owned: destroy the group, then refuse. */
static bool destroy_at_bind(const char *site)
{
	if (strcmp(site, "cpu-bind"))
		return false;
	pcstock_fault_hook = NULL;
	rmgroup(bind_victim);
	return true;
}

/*
 * A PINNED enter owns the CPU before it binds.  When the binding fails,
 * a drain queued meanwhile (a group destroy, which found the CPU owned
 * and left its drain to the owner) must be run on the way out, as an exit
 * runs it: otherwise the destroyed group's pages stay cached on a CPU
 * nobody owns, and its deferred reference with them, until some unrelated
 * drain_all reaches that CPU.
 */
static void test_pinned_failed_bind_runs_queued_drain(void **state)
{
	struct pcstock_domain_attr attr = { 2, PCSTOCK_CPU_PINNED, NULL };
	struct pcstock_tree_attr tattr = { .policy = PCSTOCK_TREE_MEMCG7 };
	struct pcstock_domain *d;
	struct pcstock_tree *t;
	struct pcstock_group *root, *g;

	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	assert_int_equal(pcstock_tree_create(d, &tattr, &t), 0);
	root = pcstock_tree_root(t);
	g = mkgroup(root, "g");
	pcstock_cpu_exit(dom);
	assert_int_equal(pcstock_cpu_enter(d, 1), 0);
	assert_int_equal(pcstock_group_charge(g, 1, 0), 0);
	assert_int_equal(pcstock_cpu_exit(d), 0);
	assert_int_equal(pcstock_group_stock_pages(root), BATCH - 1);

	pcstock_group_get(g);		/* the page's holder */
	bind_victim = g;
	pcstock_fault_hook = destroy_at_bind;
	assert_int_equal(pcstock_cpu_enter(d, 1), -EPERM);
	assert_null(pcstock_fault_hook);	/* the hook ran */
	assert_int_equal(pcstock_this_cpu(d), -1);
	/* The queued drain ran: only the held page is left. */
	assert_int_equal(pcstock_group_stock_pages(root), 0);
	assert_int_equal(pcstock_group_usage(root), 1);

	pcstock_group_uncharge(g, 1);
	pcstock_group_put(g);
	assert_int_equal(pcstock_tree_destroy(t), 0);
	assert_int_equal(pcstock_domain_destroy(d), 0);
	assert_int_equal(pcstock_cpu_enter(dom, 0), 0);
}

/* ---- stress: a tree destroy against an owner's idle or exit -------------- */

#define RACE_ITERATIONS 1000
/*
 * A slot per group on CPU 1, each group below a chain: every slot's
 * uncharge climbs the chain, which widens the drains' overlap.
 */
#define RACE_GROUPS MEMCG7_NR_SLOTS
#define RACE_DEPTH 24

enum race_phase { RACE_WAIT, RACE_CHARGE, RACE_CHARGED, RACE_GO, RACE_STOP };

/* The owner of CPU 1 of a COOP domain, stepped by the phase. */
static struct {
	pthread_t thread;
	struct pcstock_domain *d;
	struct pcstock_group *g[RACE_GROUPS];
	bool exit;			/* exit and re-enter instead of idling */
	atomic_int phase;
	atomic_bool quit;
	atomic_bool failed;
} race;

/*
 * Wait for a phase in [@lo, @hi]: spinning if @spin (the race's start),
 * else sleeping.  The owner waits for GO or STOP: a destroy may be over
 * before it looks.
 */
static void race_await(int lo, int hi, bool spin)
{
	const struct timespec tick = { 0, 100000 };
	int phase;

	while (phase = atomic_load(&race.phase), (phase < lo || phase > hi) &&
						 !atomic_load(&race.quit)) {
		if (spin)
			sched_yield();
		else
			nanosleep(&tick, NULL);
	}
}

static void *race_owner(void *unused)
{
	if (pcstock_cpu_enter(race.d, 1))
		atomic_store(&race.failed, true);
	while (!atomic_load(&race.quit)) {
		race_await(RACE_CHARGE, RACE_CHARGE, false);
		if (atomic_load(&race.quit))
			break;
		/* One page kept a group, the batch's other 63 cached. */
		for (unsigned int i = 0; i < RACE_GROUPS; i++)
			if (pcstock_group_charge(race.g[i], 1, 0))
				atomic_store(&race.failed, true);
		atomic_store(&race.phase, RACE_CHARGED);
		race_await(RACE_GO, RACE_STOP, true);
		/* The destroy's drain is queued here: run it, racing. */
		while (atomic_load(&race.phase) == RACE_GO) {
			if (!race.exit) {
				pcstock_cpu_idle(race.d);
				continue;
			}
			pcstock_cpu_exit(race.d);
			while (pcstock_cpu_enter(race.d, 1))
				sched_yield();
		}
		atomic_store(&race.phase, RACE_WAIT);
	}
	pcstock_cpu_exit(race.d);
	return NULL;
}

/*
 * pcstock_tree_destroy() flushes every CPU's memcg7 cache.  An owner that
 * idles or exits at the same time runs the drain its group's destroy
 * queued there: the two must not drain the same slots (each such double
 * drain uncharges a slot's 63 cached pages twice, an underflow).  The page
 * the owner keeps of each group is the tree's only leak.
 */
static void destroy_race(bool exit)
{
	struct pcstock_domain_attr attr = { 2, PCSTOCK_CPU_COOP, NULL };
	struct pcstock_tree_attr tattr = { .policy = PCSTOCK_TREE_MEMCG7 };
	unsigned long warns, underflows = 0, leaks = 0;
	struct pcstock_group *chain[RACE_DEPTH];
	struct pcstock_tree *t;
	char name[8];
	int ret;

	assert_int_equal(pcstock_domain_create(&attr, &race.d), 0);
	race.exit = exit;
	atomic_store(&race.phase, RACE_WAIT);
	atomic_store(&race.quit, false);
	atomic_store(&race.failed, false);
	assert_int_equal(pthread_create(&race.thread, NULL, race_owner, NULL),
			 0);
	for (unsigned int i = 0; i < RACE_ITERATIONS; i++) {
		assert_int_equal(pcstock_tree_create(race.d, &tattr, &t), 0);
		chain[0] = mkgroup(pcstock_tree_root(t), "c");
		for (unsigned int j = 1; j < RACE_DEPTH; j++)
			chain[j] = mkgroup(chain[j - 1], "c");
		for (unsigned int j = 0; j < RACE_GROUPS; j++) {
			snprintf(name, sizeof(name), "g%u", j);
			race.g[j] = mkgroup(chain[RACE_DEPTH - 1], name);
		}
		atomic_store(&race.phase, RACE_CHARGE);
		race_await(RACE_CHARGED, RACE_CHARGED, false);
		/* CPU 1 is owned: its drains are queued, and the pages'
		 * groups kept by the cache's deferred references. */
		for (unsigned int j = 0; j < RACE_GROUPS; j++)
			rmgroup(race.g[j]);
		for (unsigned int j = RACE_DEPTH; j-- > 0;)
			rmgroup(chain[j]);
		warns = pcstock_warn_count();
		atomic_store(&race.phase, RACE_GO);
		ret = pcstock_tree_destroy(t);
		atomic_store(&race.phase, RACE_STOP);
		race_await(RACE_WAIT, RACE_WAIT, false);
		underflows += pcstock_warn_count() != warns;
		leaks += ret != RACE_GROUPS;
	}
	atomic_store(&race.quit, true);
	assert_int_equal(pthread_join(race.thread, NULL), 0);
	assert_false(atomic_load(&race.failed));
	assert_int_equal(pcstock_domain_destroy(race.d), 0);
	if (underflows || leaks)
		fail_msg("%lu of %u destroys drained twice (%lu leaks wrong)",
			 underflows, RACE_ITERATIONS, leaks);
}

static void test_destroy_races_idle(void **state)
{
	destroy_race(false);
}

static void test_destroy_races_exit(void **state)
{
	destroy_race(true);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_s1_round_robin_eviction),
		cmocka_unit_test(test_s2_overflow_drains_slot),
		cmocka_unit_test(test_s3_oversize_bypass_and_consume),
		cmocka_unit_test(test_s1_groups_evict),
		cmocka_unit_test(test_s4_batching),
		cmocka_unit_test(test_s5_batch_fallback),
		cmocka_unit_test(test_drain_all_drains_other_groups),
		cmocka_unit_test(test_isolated_cpu_flag_stays_set),
		cmocka_unit_test(test_isolated_cpu_flag_fix),
		cmocka_unit_test(test_isolated_own_cpu_drained),
		cmocka_unit_test(test_flushing_flag_on_cache),
		cmocka_unit_test(test_offline_cpu_not_refilled),
		cmocka_unit_test(test_offline_cpu_bypasses_cache),
		cmocka_unit_test(test_coop_one_owner_per_cpu),
		cmocka_unit_test(test_coop_drain_all_queues_work),
		cmocka_unit_test(test_coop_deferred_reference),
		cmocka_unit_test(test_coop_flush_clears_flushing),
		cmocka_unit_test(test_work_queued_while_borrowed_is_run),
		cmocka_unit_test(test_pinned_failed_bind_runs_queued_drain),
	};
	const struct CMUnitTest stress[] = {
		cmocka_unit_test(test_destroy_races_idle),
		cmocka_unit_test(test_destroy_races_exit),
	};

	if (argc > 1 && !strcmp(argv[1], "stress"))
		return cmocka_run_group_tests_name("memcg7-stress", stress,
						   NULL, NULL);
	return cmocka_run_group_tests(tests, setup, teardown);
}
