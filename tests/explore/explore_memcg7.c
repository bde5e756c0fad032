// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_memcg7.c - schedule-explorer scenarios for memcg7's two variants.
 *
 * memcg7-owner: the owner-exclusive variant, a drain queued to an owner
 * that is leaving its CPU.
 *
 * Per schedule a fresh cache (batch 4) over a COOP domain of two CPUs,
 * with two fake keys f and g.  Thread 0 enters CPU 1, refills f (3 pages),
 * takes 1 back, refills g (2 pages) and exits; thread 1, which is no CPU,
 * runs drain_all for f twice.  Each drain_all either finds nothing of f's
 * cached, drains CPU 1 itself (nobody owns it: borrowed), or queues the
 * drain to thread 0, which must run it at its next operation or on its
 * way out: exit runs the queued work, gives the CPU up, then looks again
 * (the requester may have seen the CPU still owned).
 *
 * The cache's own locks are kept out of the explored threads: no key dies
 * (no deferred reference to reap), and only thread 0 exits (the domain's
 * hotplug lock, under which exit runs the work).
 *
 * Invariants at the end:
 *  - per key, pages refilled == pages uncharged + taken back + cached;
 *  - after one more drain_all for f (unscheduled, no CPU), no page of f is
 *    cached: a queued drain that nobody runs leaves CPU 1 flushing, and
 *    every later drain_all skips it.
 */
/*
 * memcg7-locked: the locked variant (SIM CPUs, which threads may share),
 * its per-CPU spinlock against two threads on one CPU and a remote
 * drain_all.  Per schedule a fresh cache (batch 4) over a SIM domain of
 * two CPUs.  Threads 0 and 1 are both CPU 0: each refills f (2 pages),
 * takes 1 of f back, refills g (1 page) and takes 1 of g back; thread 2,
 * no CPU, runs drain_all for f twice.  Whatever interleaving, a consume or
 * a refill either holds the cache's lock or bypasses the cache.
 * Invariants at the end: per key, refilled == uncharged + taken + cached;
 * after one more drain_all for f (unscheduled), nothing of f is cached.
 */
/*
 * memcg7-destroy-idle, memcg7-destroy-exit: a tree destroy's flush against
 * an owner's idle or exit.  Per schedule a fresh cache (batch 4) over a
 * COOP domain of two CPUs.  Thread 0 enters CPU 1, refills f (3 pages)
 * and waits; thread 1, no CPU, runs drain_all for f (CPU 1 is owned: the
 * drain is queued to thread 0), lets thread 0 go, and flushes the cache as
 * pcstock_tree_destroy() does, while thread 0 idles then exits (-idle) or
 * just exits (-exit), running the queued drain.  The owner runs it under
 * the domain's work lock, which the flush holds: no slot is drained by
 * both (without the flush's lock both read the count, and the pages are
 * uncharged twice).  Invariants at the end: per key, refilled ==
 * uncharged + cached, and nothing is cached.  The waits are spins at a
 * scheduling point, not uses of the cache; thread 0's gives up after a
 * while, so that the sequential schedule (PCT's calibration, which always
 * runs the first live thread) ends.
 */
#include <stdatomic.h>
#include <stdio.h>

#include <pcstock/cpu.h>

#include "atomic.h"	/* pcs_spin_yield() */
#include "explore.h"
#include "memcg7.h"

#define NR_CPUS 2
#define BATCH 4

struct fake {
	unsigned long in;		/* refilled */
	unsigned long out;		/* uncharged by the cache */
	unsigned long taken;		/* consumed */
};

static struct {
	struct pcstock_domain *d;
	struct memcg7 *m;
	struct fake f, g;
	atomic_int step;		/* memcg7-destroy: the threads' hand-off */
	char msg[160];
} S;

static void fake_uncharge(void *key, unsigned long nr_pages)
{
	((struct fake *)key)->out += nr_pages;
}

static void fake_ref(void *key)
{
	(void)key;
}

static bool fake_online(void *key)
{
	(void)key;
	return true;
}

static bool fake_in_subtree(void *key, void *root)
{
	return key == root;
}

static const struct memcg7_ops fake_ops = {
	.uncharge = fake_uncharge,
	.get = fake_ref,
	.put = fake_ref,
	.online = fake_online,
	.in_subtree = fake_in_subtree,
};

static int m7_domain(enum pcstock_cpu_mode mode)
{
	struct pcstock_domain_attr attr = { .nr_cpus = NR_CPUS, .mode = mode };

	return pcstock_domain_create(&attr, &S.d);
}

static int m7_init(const struct explore_scenario *s)
{
	(void)s;
	return m7_domain(PCSTOCK_CPU_COOP);
}

static void m7_setup(const struct explore_scenario *s)
{
	(void)s;
	S.f = (struct fake){ 0 };
	S.g = (struct fake){ 0 };
	atomic_store(&S.step, 0);
	if (memcg7_create(S.d, BATCH, false, &fake_ops, &S.m))
		S.m = NULL;
}

static void refill(struct fake *k, unsigned long n)
{
	k->in += n;
	memcg7_refill(S.m, k, n);
}

static void take(struct fake *k)
{
	if (memcg7_consume(S.m, k, 1))
		k->taken++;
}

/*
 * Both scenarios' thread @drainer runs two drain_all for f, from no CPU.
 * True if thread @t is done: it was the drainer, or there is no cache.
 */
static bool drained(unsigned int t, unsigned int drainer)
{
	if (S.m && t == drainer) {
		memcg7_drain_all(S.m, &S.f);
		memcg7_drain_all(S.m, &S.f);
	}
	return !S.m || t == drainer;
}

static void m7_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	if (drained(t, 1))
		return;
	if (pcstock_cpu_enter(S.d, 1))
		return;
	refill(&S.f, 3);
	take(&S.f);
	refill(&S.g, 2);
	pcstock_cpu_exit(S.d);
}

static unsigned long cached(void *key)
{
	unsigned long sum = 0;

	for (unsigned int cpu = 0; cpu < NR_CPUS; cpu++) {
		for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++) {
			unsigned int nr;
			void *k;

			if (memcg7_slot(S.m, cpu, i, &k, &nr) && k == key)
				sum += nr;
		}
	}
	return sum;
}

static const char *conserved(const char *name, struct fake *k)
{
	if (k->in == k->out + k->taken + cached(k))
		return NULL;
	snprintf(S.msg, sizeof(S.msg),
		 "%s: %lu refilled, %lu uncharged + %lu taken + %lu cached",
		 name, k->in, k->out, k->taken, cached(k));
	return S.msg;
}

static const char *m7_check_end(const struct explore_scenario *s)
{
	const char *why;

	(void)s;
	if (!S.m)
		return "memcg7_create failed";
	why = conserved("f", &S.f);
	if (!why)
		why = conserved("g", &S.g);
	if (why)
		return why;
	memcg7_drain_all(S.m, &S.f);
	if (cached(&S.f)) {
		snprintf(S.msg, sizeof(S.msg),
			 "%lu pages of f still cached after drain_all "
			 "(flushing: cpu0 %d, cpu1 %d): a drain was lost",
			 cached(&S.f), memcg7_flushing(S.m, 0),
			 memcg7_flushing(S.m, 1));
		return S.msg;
	}
	return conserved("f", &S.f);
}

static void m7_teardown(const struct explore_scenario *s)
{
	(void)s;
	memcg7_destroy(S.m);
	S.m = NULL;
}

static void step_to(int step)
{
	atomic_store(&S.step, step);
}

#define STEP_WAIT_BOUND 64

/* Wait for @step; if @bounded, give up after STEP_WAIT_BOUND yields. */
static void step_wait(int step, bool bounded)
{
	for (unsigned int i = 0; atomic_load(&S.step) < step; i++) {
		if (bounded && i == STEP_WAIT_BOUND)
			return;
		pcs_spin_yield();
	}
}

static void destroy_run(const struct explore_scenario *s, unsigned int t)
{
	const bool *exit_only = s->arg;

	if (!S.m)
		return;
	if (t == 1) {
		step_wait(1, false);
		memcg7_drain_all(S.m, &S.f);
		step_to(2);
		memcg7_flush(S.m);
		return;
	}
	if (pcstock_cpu_enter(S.d, 1)) {
		step_to(1);
		return;
	}
	refill(&S.f, 3);
	step_to(1);
	step_wait(2, true);
	if (!*exit_only)
		pcstock_cpu_idle(S.d);
	pcstock_cpu_exit(S.d);
}

static const char *destroy_check_end(const struct explore_scenario *s)
{
	const char *why;

	(void)s;
	if (!S.m)
		return "memcg7_create failed";
	why = conserved("f", &S.f);
	if (!why && cached(&S.f))
		why = "pages of f still cached after the flush";
	return why;
}

static int locked_init(const struct explore_scenario *s)
{
	(void)s;
	return m7_domain(PCSTOCK_CPU_SIM);
}

/* memcg7-locked: threads 0 and 1 share CPU 0 for every schedule. */
static void locked_thread_init(const struct explore_scenario *s,
			       unsigned int t)
{
	(void)s;
	if (t < 2 && pcstock_cpu_enter(S.d, 0))
		fprintf(stderr, "memcg7-locked: thread %u cannot enter\n", t);
}

static void locked_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	if (drained(t, 2))
		return;
	refill(&S.f, 2);
	take(&S.f);
	refill(&S.g, 1);
	take(&S.g);
}

/*
 * memcg7-reenter: as memcg7-owner, but thread 0 leaves CPU 1 and enters it
 * again, then takes a page of f back and refills it: the drains thread 1
 * ran meanwhile (on CPU 1 borrowed, or queued to thread 0) must be seen
 * by the new owner, whose cpu_own() acquires what the last holder left.
 */
static void reenter_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	if (drained(t, 1))
		return;
	if (pcstock_cpu_enter(S.d, 1))
		return;
	refill(&S.f, 3);
	pcstock_cpu_exit(S.d);
	if (pcstock_cpu_enter(S.d, 1))
		return;
	take(&S.f);
	refill(&S.f, 1);
	pcstock_cpu_exit(S.d);
}

static const struct explore_scenario memcg7_locked = {
	.name = "memcg7-locked",
	.help = "memcg7 on SIM CPUs: two threads share cpu0's locked cache, "
		"remote drain_all",
	.nr_threads = 3,
	.init = locked_init,
	.thread_init = locked_thread_init,
	.setup = m7_setup,
	.run = locked_run,
	.check_end = m7_check_end,
	.teardown = m7_teardown,
};

/* The owner-exclusive scenarios: a COOP domain, an owner and a drainer. */
#define M7_COOP_SCENARIO(id, nm, hlp, body)                                 \
	static const struct explore_scenario id = {                         \
		.name = nm, .help = hlp, .nr_threads = 2, .init = m7_init,  \
		.setup = m7_setup, .run = body, .check_end = m7_check_end,  \
		.teardown = m7_teardown,                                    \
	}

M7_COOP_SCENARIO(memcg7_owner, "memcg7-owner",
		 "memcg7 on COOP CPUs: drain_all queues to an exiting owner",
		 m7_run);
M7_COOP_SCENARIO(memcg7_reenter, "memcg7-reenter",
		 "memcg7 on COOP CPUs: an owner leaves and enters again while "
		 "drain_all borrows its CPU", reenter_run);

static const bool no = false, yes = true;

/* memcg7-destroy-@suffix: the owner idles first unless @exit_only. */
#define DESTROY_SCENARIO(var, suffix, what, exit_only)                       \
	static const struct explore_scenario var = {                         \
		.name = "memcg7-destroy-" suffix,                            \
		.help = "memcg7 on COOP CPUs: a tree destroy's flush "       \
			"against an owner that " what,                       \
		.nr_threads = 2,                                             \
		.init = m7_init,                                             \
		.setup = m7_setup,                                           \
		.run = destroy_run,                                          \
		.check_end = destroy_check_end,                              \
		.teardown = m7_teardown,                                     \
		.arg = (exit_only),                                          \
	}

DESTROY_SCENARIO(memcg7_destroy_idle, "idle", "idles, then exits", &no);
DESTROY_SCENARIO(memcg7_destroy_exit, "exit", "exits", &yes);

const struct explore_scenario *const explore_memcg7_scenarios[] = {
	&memcg7_owner,
	&memcg7_destroy_idle,
	&memcg7_destroy_exit,
	&memcg7_locked,
	&memcg7_reenter,
	NULL,
};
