// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_memcg7.c - schedule-explorer scenarios for memcg7's two variants.
 * An id such as O12 or N35 below names a mutant of the mutation study
 * (docs/mutation.md) that the scenario catches.
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
 * runs the first live thread) ends.  The work lock is one of the mutexes
 * the model knows (see "mutexes the model knows" below): in weak memory
 * (--weak) the flush must see the owner's slots through it.
 */
/*
 * memcg7-key-death: the owner variant's deferred reference on a dead key
 * (memcg7_drain_key(): the epoch, the queued drains, reap()).  Per
 * schedule a fresh cache (batch 4) over a COOP domain of three CPUs,
 * thread t the owner of CPU t for the whole run (so each queued drain is
 * run by its owner, at its next operation).  Threads 0 and 1 refill a key
 * k (2 pages) and take one page of it back; thread 2 refills k (1 page),
 * then kills it: marks it offline and calls memcg7_drain_key().  (The
 * killer is the last CPU: the first drain it queues, to CPU 0, follows no
 * fence of its own since the epoch's store, so only queue_work()'s release
 * orders that epoch for CPU 0's owner.)  The cache keeps one reference
 * on k until every CPU has drained since k died.
 * Invariants: per key, refilled == uncharged + taken + cached; when the
 * cache drops that reference (k is "freed"), no slot of any CPU, as the
 * dropping thread sees it, still names k (done_epoch's release, O14);
 * at the end, once no CPU has a drain queued, the reference was dropped
 * (an owner that read a stale epoch after taking the queued work, through
 * pcs_m7_run_work()'s acquire or queue_work()'s release weakened, stores
 * the old epoch and nobody ever reaps k: O12, N35).
 *
 * reap() and memcg7_drain_key() take the cache's dead_lock, a mutex, at
 * scheduling points.  A descheduled holder would hang a thread blocking on
 * it: it is one of the mutexes the model knows (below), registered by this
 * scenario's setup.
 */
/*
 * memcg7-key-death-locked: the locked variant's drain of a dying key
 * (memcg7_drain_key() takes each CPU's lock and drains there and then the
 * slots that name the key).  Per schedule a fresh cache (batch 4) over a
 * SIM domain of two CPUs.  Threads 0 and 1 share CPU 0: each refills k
 * (2 pages) and takes 1 back; thread 2, no CPU, refills 1 page (which,
 * without a CPU, goes straight back), takes k offline (release) and drains
 * it, as pcstock_group_destroy() does (death_run(), as memcg7-key-death).  A refill holds CPU 0's
 * lock from its test of online to its install, so the drain, which waits
 * for that lock before it looks at the slots, finds what the refill
 * installed; or the refill sees k offline and bypasses the cache.
 * Invariants at the end: refilled == uncharged + taken + cached; once the
 * drain returned, no slot names k and the cache holds no reference on it.
 */
/*
 * memcg7-publish: a slot's key is published by the owner's release store
 * and dereferenced by remote readers (drain_needed(), memcg7_pages()).
 * Per schedule a fresh cache over a COOP domain of two CPUs, thread 0 the
 * owner of CPU 1: it writes key k's payload (a relaxed store, as any
 * initialisation of the key) and refills k (2 pages).  Thread 1, no CPU,
 * drains k's subtree (memcg7_drain_all(): drain_needed() calls the key's
 * in_subtree()), which may borrow CPU 1 and drain it, then counts the
 * cached pages of k twice (memcg7_pages(), which calls it too).
 * Invariant: a reader that finds k in a slot sees its payload (O13: the
 * install weakened to relaxed; either reader's load of the key).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include <pcstock/cpu.h>

#include "atomic.h"	/* pcs_spin_yield() */
#include "domain.h"	/* the domain's work lock */
#include "explore.h"
#include "memcg7.h"
#include "memcg7_fake.h"
#include "memcg7_pcp.h"	/* the cache's dead_lock and work bits */

#define NR_CPUS 2
#define BATCH 4

/* A fake key (its first member) and the scenario's books of it. */
struct fake {
	struct memcg7_fake key;		/* key.uncharged: by the cache */
	unsigned long in;		/* refilled */
	unsigned long taken;		/* consumed */
};

static struct {
	struct pcstock_domain *d;
	struct memcg7 *m;
	struct fake f, g;
	atomic_int step;		/* memcg7-destroy: the threads' hand-off */
	char msg[160];
} S;

/* ---- mutexes the model knows ------------------------------------------------ */

/*
 * The mutexes of a scenario that reach scheduling points while held (the
 * cache's dead_lock, the domain's work lock), registered by its setup:
 * each is a spinlock on a word of the weak-memory model (an acquire CAS,
 * a release store), whose waiter yields at a scheduling point, so that
 * the explorer schedules the waiting and the model knows the lock's
 * happens-before, as the mutex's is in the real program.  Every other
 * mutex goes to the real function (dlsym(RTLD_NEXT): a sanitizer's
 * interceptor, if any).
 */
#define MODELLED 2

static struct {
	pthread_mutex_t *mu;
	atomic_int word;
} modelled[MODELLED];

static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);
static int (*real_unlock)(pthread_mutex_t *);

static atomic_int *model_word(const pthread_mutex_t *mu)
{
	for (unsigned int i = 0; i < MODELLED; i++)
		if (mu && modelled[i].mu == mu)
			return &modelled[i].word;
	return NULL;
}

/* Slot @i models @mu from now on (NULL: none): explore.h. */
void explore_model_mutex(unsigned int i, pthread_mutex_t *mu,
			 const char *name)
{
	modelled[i].mu = mu;
	if (mu)
		explore_label(&modelled[i].word, sizeof(atomic_int), name,
			      NULL);
}

int pthread_mutex_trylock(pthread_mutex_t *mu)
{
	atomic_int *w = model_word(mu);
	int unlocked = 0;

	/* Acquire pairs with the release store in the unlock. */
	if (w)
		return pcs_cas(w, &unlocked, 1, PCS_ACQUIRE, PCS_RELAXED) ?
			       0 : EBUSY;
	if (!real_trylock)
		real_trylock = (int (*)(pthread_mutex_t *))dlsym(
			RTLD_NEXT, "pthread_mutex_trylock");
	return real_trylock(mu);
}

int pthread_mutex_lock(pthread_mutex_t *mu)
{
	if (model_word(mu)) {
		while (pthread_mutex_trylock(mu))
			pcs_spin_yield();
		return 0;
	}
	if (!real_lock)
		real_lock = (int (*)(pthread_mutex_t *))dlsym(
			RTLD_NEXT, "pthread_mutex_lock");
	return real_lock(mu);
}

int pthread_mutex_unlock(pthread_mutex_t *mu)
{
	atomic_int *w = model_word(mu);

	if (w) {
		pcs_store(w, 0, PCS_RELEASE);
		return 0;
	}
	if (!real_unlock)
		real_unlock = (int (*)(pthread_mutex_t *))dlsym(
			RTLD_NEXT, "pthread_mutex_unlock");
	return real_unlock(mu);
}

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
	if (memcg7_create(S.d, BATCH, false, &memcg7_fake_ops, &S.m))
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

	for (unsigned int cpu = 0; cpu < S.m->nr_cpus; cpu++) {
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
	if (k->in == k->key.uncharged + k->taken + cached(k))
		return NULL;
	snprintf(S.msg, sizeof(S.msg),
		 "%s: %lu refilled, %lu uncharged + %lu taken + %lu cached",
		 name, k->in, k->key.uncharged, k->taken, cached(k));
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

/*
 * The threads' hand-off, an access of the weak-memory model: the release
 * pairs with the acquire in step_wait(), so that the waiter sees what the
 * other thread did before, as it would in the real program.  The waiter
 * reads with an RMW, which reads the newest value: a load may read an
 * older one, and PCT's calibration run, whose decisions are all 0, would
 * read the oldest for ever.
 */
static void step_to(int step)
{
	pcs_store(&S.step, step, PCS_RELEASE);
}

#define STEP_WAIT_BOUND 64

/* Wait for @step; if @bounded, give up after STEP_WAIT_BOUND yields. */
static void step_wait(int step, bool bounded)
{
	for (unsigned int i = 0;
	     pcs_fetch_add(&S.step, 0, PCS_ACQUIRE) < step; i++) {
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

static void destroy_setup(const struct explore_scenario *s)
{
	m7_setup(s);
	explore_model_mutex(1, &S.d->hotplug_lock, "work_lock");
}

static void destroy_teardown(const struct explore_scenario *s)
{
	m7_teardown(s);
	explore_model_mutex(1, NULL, NULL);
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
 * memcg7-handover: as memcg7-owner, and a third thread takes CPU 1 over as
 * soon as thread 0 gives it up (a few tries, each a failed enter while the
 * CPU is owned), then refills f (2 pages) and takes one back.  Thread 0's
 * exit runs the drain thread 1 queued to it before it gives the CPU up:
 * once another thread owns the CPU, the old owner writing its slots races
 * the new owner's plain loads and stores.  Invariants as memcg7-owner's.
 */
#define HANDOVER_TRIES 64

static void handover_run(const struct explore_scenario *s, unsigned int t)
{
	unsigned int tries = 0;

	if (t < 2) {
		m7_run(s, t);
		return;
	}
	if (!S.m)
		return;
	while (pcstock_cpu_enter(S.d, 1))
		if (++tries == HANDOVER_TRIES)
			return;
	refill(&S.f, 2);
	take(&S.f);
	pcstock_cpu_exit(S.d);
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


/* ---- memcg7-key-death, memcg7-publish ------------------------------------ */

#define DEATH_CPUS 3
#define PAYLOAD 0x5a5aUL

/* A key with what a real group has that the cache relies on. */
struct dkey {
	unsigned long in, out, taken;	/* as struct fake's */
	atomic_bool online;		/* the group's online flag */
	atomic_ulong payload;		/* its contents, for readers */
	int refs;			/* references the cache took */
	bool freed;			/* the last one dropped */
};

static struct {
	struct pcstock_domain *d;
	struct dkey k;
	struct memcg7_dead dead;
	bool killed;
} D;

static void death_uncharge(void *key, unsigned long nr_pages)
{
	((struct dkey *)key)->out += nr_pages;
}

static void death_get(void *key)
{
	((struct dkey *)key)->refs++;
}

/* A slot of any CPU that still names @key, as this thread sees it. */
static int slot_naming(void *key)
{
	for (unsigned int cpu = 0; cpu < S.m->nr_cpus; cpu++) {
		for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++) {
			unsigned int nr;
			void *k;

			if (memcg7_slot(S.m, cpu, i, &k, &nr) && k == key)
				return (int)cpu;
		}
	}
	return -1;
}

static void death_put(void *key)
{
	struct dkey *k = key;
	int cpu;

	if (--k->refs)
		return;
	k->freed = true;
	cpu = slot_naming(k);
	if (cpu >= 0) {
		snprintf(S.msg, sizeof(S.msg),
			 "k freed while a slot of cpu%d still names it "
			 "(its drain not seen by the reaper)", cpu);
		explore_fail(S.msg);
	}
}

static bool death_online(void *key)
{
	/* As pcstock_group_online(): acquire. */
	return pcs_load(&((struct dkey *)key)->online, PCS_ACQUIRE);
}

static bool death_in_subtree(void *key, void *root)
{
	/* A remote reader dereferences the key: it must see it written. */
	if (pcs_load(&((struct dkey *)key)->payload, PCS_RELAXED) != PAYLOAD)
		explore_fail("a remote reader found a key in a slot but not "
			     "its contents (the install's release)");
	return key == root;
}

static const struct memcg7_ops death_ops = {
	.uncharge = death_uncharge,
	.get = death_get,
	.put = death_put,
	.online = death_online,
	.in_subtree = death_in_subtree,
};

static int death_init(const struct explore_scenario *s)
{
	struct pcstock_domain_attr attr = { .mode = PCSTOCK_CPU_COOP };

	attr.nr_cpus = s->nr_threads == 3 ? DEATH_CPUS : NR_CPUS;
	return pcstock_domain_create(&attr, &D.d);
}

/* memcg7-key-death: thread t owns CPU t; memcg7-publish: thread 0 CPU 1. */
static void death_thread_init(const struct explore_scenario *s,
			      unsigned int t)
{
	unsigned int cpu = s->nr_threads == 3 ? t : 1;

	if ((s->nr_threads == 3 || t == 0) && pcstock_cpu_enter(D.d, cpu))
		fprintf(stderr, "%s: thread %u cannot enter\n", s->name, t);
}

static void death_setup(const struct explore_scenario *s)
{
	D.k = (struct dkey){ 0 };
	atomic_store(&D.k.online, true);
	/* memcg7-publish: thread 0 writes it; here k is an old key. */
	if (s->nr_threads == 3)
		atomic_store(&D.k.payload, PAYLOAD);
	D.killed = false;
	if (memcg7_create(D.d, BATCH, false, &death_ops, &S.m)) {
		S.m = NULL;
		return;
	}
	explore_model_mutex(0, &S.m->dead_lock, "dead_lock");
	explore_label(&D.k, sizeof(D.k), "k", NULL);
	explore_label(&S.m->epoch, sizeof(S.m->epoch), "epoch", NULL);
	for (unsigned int cpu = 0; cpu < S.m->nr_cpus; cpu++) {
		static const char *const names[] = { "pcp0", "pcp1", "pcp2" };

		explore_label(pcp_of(S.m, cpu), sizeof(struct memcg7_pcp),
			      names[cpu], NULL);
	}
}

static void death_refill(unsigned long n)
{
	D.k.in += n;
	memcg7_refill(S.m, &D.k, n);
}

static void death_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	if (!S.m)
		return;
	if (t < 2) {
		death_refill(2);
		if (memcg7_consume(S.m, &D.k, 1))
			D.k.taken++;
		return;
	}
	death_refill(1);
	/* As pcstock_group_destroy(): offline (release), then the drain. */
	pcs_store(&D.k.online, false, PCS_RELEASE);
	memcg7_drain_key(S.m, &D.k, &D.dead);
	D.killed = true;
}

/* k's pages: refilled == uncharged + taken + cached. */
static const char *death_conserved(void)
{
	if (!S.m)
		return "memcg7_create failed";
	/* Unscheduled: the loads act on memory (explore_wmm.c). */
	if (D.k.in != D.k.out + D.k.taken + cached(&D.k)) {
		snprintf(S.msg, sizeof(S.msg),
			 "k: %lu refilled, %lu uncharged + %lu taken + %lu "
			 "cached", D.k.in, D.k.out, D.k.taken, cached(&D.k));
		return S.msg;
	}
	return NULL;
}

static const char *death_check_end(const struct explore_scenario *s)
{
	const char *why = death_conserved();

	(void)s;
	if (why)
		return why;
	for (unsigned int cpu = 0; cpu < S.m->nr_cpus; cpu++)
		if (atomic_load(&pcp_of(S.m, cpu)->work))
			return NULL;	/* an owner has yet to drain */
	if (D.killed && !D.k.freed)
		return "every CPU drained since k died, but the cache still "
		       "holds k's reference (a stale epoch)";
	return NULL;
}

static void death_teardown(const struct explore_scenario *s)
{
	(void)s;
	memcg7_destroy(S.m);
	S.m = NULL;
	explore_model_mutex(0, NULL, NULL);
}

static int death_locked_init(const struct explore_scenario *s)
{
	struct pcstock_domain_attr attr = { .mode = PCSTOCK_CPU_SIM,
					    .nr_cpus = NR_CPUS };

	(void)s;
	return pcstock_domain_create(&attr, &D.d);
}

/* memcg7-key-death-locked: threads 0 and 1 share CPU 0. */
static void death_locked_thread_init(const struct explore_scenario *s,
				     unsigned int t)
{
	if (t < 2 && pcstock_cpu_enter(D.d, 0))
		fprintf(stderr, "%s: thread %u cannot enter\n", s->name, t);
}

static const char *death_locked_check_end(const struct explore_scenario *s)
{
	const char *why = death_conserved();
	int cpu;

	(void)s;
	if (why || !D.killed)
		return why;
	cpu = slot_naming(&D.k);
	if (cpu >= 0) {
		snprintf(S.msg, sizeof(S.msg),
			 "k's drain returned, but a slot of cpu%d still names "
			 "it (installed after the drain looked)", cpu);
		return S.msg;
	}
	if (D.k.refs)
		return "k's drain returned, but the cache still holds a "
		       "reference on it";
	return NULL;
}

static void publish_run(const struct explore_scenario *s, unsigned int t)
{
	(void)s;
	if (!S.m)
		return;
	if (t == 0) {
		/* Relaxed: the install's release publishes it. */
		pcs_store(&D.k.payload, PAYLOAD, PCS_RELAXED);
		death_refill(2);
		return;
	}
	memcg7_drain_all(S.m, &D.k);
	memcg7_pages(S.m, &D.k);
	memcg7_pages(S.m, &D.k);
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

static const struct explore_scenario memcg7_handover = {
	.name = "memcg7-handover",
	.help = "memcg7 on COOP CPUs: drain_all queues to an exiting owner "
		"whose CPU another thread takes over",
	.nr_threads = 3, .init = m7_init, .setup = m7_setup,
	.run = handover_run, .check_end = m7_check_end,
	.teardown = m7_teardown,
};

static const bool no = false, yes = true;

/* memcg7-destroy-@suffix: the owner idles first unless @exit_only. */
#define DESTROY_SCENARIO(var, suffix, what, exit_only)                       \
	static const struct explore_scenario var = {                         \
		.name = "memcg7-destroy-" suffix,                            \
		.help = "memcg7 on COOP CPUs: a tree destroy's flush "       \
			"against an owner that " what,                       \
		.nr_threads = 2,                                             \
		.init = m7_init,                                             \
		.setup = destroy_setup,                                      \
		.run = destroy_run,                                          \
		.check_end = destroy_check_end,                              \
		.teardown = destroy_teardown,                                \
		.arg = (exit_only),                                          \
	}

DESTROY_SCENARIO(memcg7_destroy_idle, "idle", "idles, then exits", &no);
DESTROY_SCENARIO(memcg7_destroy_exit, "exit", "exits", &yes);

/* memcg7-key-death, memcg7-publish: their own domains and keys. */
/* @pre: death_ (owner variant, COOP) or death_locked_ (locked, SIM). */
#define DEATH_SCENARIO_OF(pre, var, nm, hlp, threads, body)                 \
	static const struct explore_scenario var = {                         \
		.name = nm, .help = hlp, .nr_threads = threads,              \
		.init = pre##init, .thread_init = pre##thread_init,          \
		.setup = death_setup, .run = body,                           \
		.check_end = pre##check_end, .teardown = death_teardown,     \
	}
#define DEATH_SCENARIO(var, nm, hlp, threads, body)                          \
	DEATH_SCENARIO_OF(death_, var, nm, hlp, threads, body)

DEATH_SCENARIO(memcg7_key_death, "memcg7-key-death",
	       "memcg7 on COOP CPUs: a key dies while its owners run their "
	       "drains; its deferred reference is dropped once, after all",
	       3, death_run);
DEATH_SCENARIO_OF(death_locked_, memcg7_key_death_locked,
		  "memcg7-key-death-locked",
		  "memcg7 on SIM CPUs: a key dies while two threads of one CPU "
		  "refill it; the drain finds every slot it was installed in",
		  3, death_run);
DEATH_SCENARIO(memcg7_publish, "memcg7-publish",
	       "memcg7 on COOP CPUs: a remote reader dereferences a key an "
	       "owner just installed", 2, publish_run);

const struct explore_scenario *const explore_memcg7_scenarios[] = {
	&memcg7_owner,
	&memcg7_destroy_idle,
	&memcg7_destroy_exit,
	&memcg7_locked,
	&memcg7_reenter,
	&memcg7_handover,
	&memcg7_key_death,
	&memcg7_key_death_locked,
	&memcg7_publish,
	NULL,
};
