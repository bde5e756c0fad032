// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * memcg7.c - the pre-series memcg stock: 7 slots per CPU keyed by group.
 *
 * Kept as a comparison policy for the per-counter stock (stock.c): its
 * costs are the slot scan, evictions when more than 7 groups charge on one
 * CPU (a round-robin victim is drained whole), and drain_all draining every
 * group's slots of a CPU, not just the subtree's.
 *
 * Two variants, chosen by the domain's mode (pcstock/cpu.h):
 *
 * Owner-exclusive (PINNED, COOP: a CPU has one owner at a time).  As the
 * kernel's memcg_stock under local_trylock: the owner alone writes its
 * CPU's cache, with plain (relaxed) loads and stores and no locked
 * instruction; keys and counts share one cache line; statistics are
 * owner-written per-CPU words.  Slots hold no reference on their keys (no
 * shared write on install or eviction): a key is alive while its group is
 * online, and a destroyed group's reference is deferred, kept by the cache
 * until every CPU has drained its slots (the kernel's css references are
 * per-CPU, so its puts cost no shared write either).  drain_all, a destroy
 * or an offline mark a CPU's work bit and move on; the owner runs the
 * drain at its next operation, when it goes idle or when it exits, as the
 * kernel's workqueue runs drain_local_memcg_stock() on that CPU.  A CPU
 * nobody entered is borrowed and drained by the requester at once.
 *
 * Locked (SIM: several threads may share a CPU, which models preemption).
 * Each CPU's cache has a small spinlock: the charge path only trylocks it
 * (on failure it bypasses the cache, as the kernel does when its trylock
 * fails), drains take it, and the remote drain "work" runs synchronously
 * in the draining thread.  Slots reference their keys (ops->get/put).
 *
 * Remote readers (drain_needed, the page count for usage_exact) read slots
 * without either, with relaxed atomics, as the kernel's READ_ONCE readers
 * do: they see some recent state, and the keys they see are kept alive by
 * RCU (the caller's read section).
 *
 * The flushing flag reproduces FLUSHING_CACHED_CHARGE: set by drain_all
 * when it decides to drain a CPU, cleared by the drain.  When the CPU is
 * isolated the drain is skipped and, as in the kernel before the 2026 fix,
 * the flag stays set so every later drain_all skips that CPU; with
 * isolated_fix the flag is cleared instead.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdint.h>

#include "atomic.h"
#include "domain.h"
#include "internal.h"
#include "memcg7.h"

enum memcg7_stat {
	ST_HITS,
	ST_MISSES,
	ST_REFILLS,
	ST_BYPASSES,
	ST_EVICTIONS,
	ST_SLOT_DRAINS,
	ST_DRAINED_PAGES,
	ST_ISOLATED_SKIPS,
	ST_FLUSHING_SKIPS,
	ST_NR
};

/*
 * One CPU's cache.  The first line is all a hit touches besides the
 * statistics: the 7 keys and their counts (u8 as the kernel's, which is
 * why the batch is at most MEMCG7_MAX_BATCH) and the owner variant's work
 * bit.  Remote writers (drain_all's flag, the locked variant's lock) keep
 * to the last line.
 */
struct memcg7_pcp {
	alignas(PCSTOCK_CACHELINE) _Atomic(void *) cached[MEMCG7_NR_SLOTS];
	_Atomic uint8_t nr_pages[MEMCG7_NR_SLOTS];
	_Atomic uint8_t work;		/* owner variant: a drain is queued */
	/* owner-written (locked variant: under the lock or RMW) */
	alignas(PCSTOCK_CACHELINE) atomic_ulong st[ST_NR];
	unsigned char drain_idx;
	atomic_ulong done_epoch;	/* owner variant: see reap() */
	alignas(PCSTOCK_CACHELINE) atomic_int lock;	/* locked variant */
	atomic_bool flushing;
};

struct memcg7 {
	struct pcstock_domain *d;
	size_t pcp;			/* arena handle of struct memcg7_pcp */
	unsigned int nr_cpus;
	unsigned int batch;
	bool isolated_fix;
	bool owned;			/* the owner-exclusive variant */
	const struct memcg7_ops *ops;
	pthread_mutex_t drain_lock;	/* the kernel's percpu_charge_mutex */
	struct pcstock_cpu_hook *hook;
	struct pcstock_cpu_hook *work_hook;	/* owner variant */
	/* owner variant: destroyed keys whose reference the cache keeps */
	pthread_mutex_t dead_lock;
	struct memcg7_dead *dead;
	atomic_ulong epoch;		/* of the newest dead key */
};

static struct memcg7_pcp *pcp_of(const struct memcg7 *m, unsigned int cpu)
{
	return pcs_percpu_ptr(m->d, m->pcp, cpu);
}

/*
 * Statistics: the owner variant's are written by the owner alone (a load
 * and a store, no RMW; remote readers see some recent value); the locked
 * variant's may be bumped by threads sharing the CPU at once.
 */
static inline __attribute__((always_inline)) void
stat_add(bool owned, struct memcg7_pcp *p, enum memcg7_stat s,
	 unsigned long v)
{
	if (owned)
		pcs_store(&p->st[s], pcs_load(&p->st[s], PCS_RELAXED) + v,
			  PCS_RELAXED);
	else
		pcs_fetch_add(&p->st[s], v, PCS_RELAXED);
}

/* Acquire pairs with the release in pcp_unlock() of the previous holder. */
static bool pcp_trylock(struct memcg7_pcp *p)
{
	int unlocked = 0;

	return pcs_cas(&p->lock, &unlocked, 1, PCS_ACQUIRE, PCS_RELAXED);
}

static void pcp_lock(struct memcg7_pcp *p)
{
	while (!pcp_trylock(p))
		pcs_spin_yield();
}

/* Release pairs with the acquire CAS in pcp_trylock(). */
static void pcp_unlock(struct memcg7_pcp *p)
{
#ifdef PCSTOCK_MUTATE_M7_RELAXED_UNLOCK		/* planted bug, explorer only */
	pcs_store(&p->lock, 0, PCS_RELAXED);
#else
	pcs_store(&p->lock, 0, PCS_RELEASE);
#endif
}

/*
 * drain_stock(stock, i): by the owner or a borrower (owner variant), under
 * the lock (locked variant).
 */
static void drain_slot(const struct memcg7 *m, struct memcg7_pcp *p,
		       unsigned int i)
{
	void *key = pcs_load(&p->cached[i], PCS_RELAXED);
	unsigned int nr;

	if (!key)
		return;
	nr = pcs_load(&p->nr_pages[i], PCS_RELAXED);
	if (nr) {
		m->ops->uncharge(key, nr);
		pcs_store(&p->nr_pages[i], 0, PCS_RELAXED);
		stat_add(m->owned, p, ST_SLOT_DRAINS, 1);
		stat_add(m->owned, p, ST_DRAINED_PAGES, nr);
	}
	pcs_store(&p->cached[i], NULL, PCS_RELAXED);
	if (!m->owned)
		m->ops->put(key);
}

static void drain_pcp(const struct memcg7 *m, struct memcg7_pcp *p)
{
	for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++)
		drain_slot(m, p, i);
}

/* ---- owner variant: queued work and deferred references ------------------ */

/*
 * Drop the deferred reference of every dead key that each CPU has drained
 * since it died: a key's epoch is at most every CPU's done_epoch.
 */
static void reap(struct memcg7 *m)
{
	struct memcg7_dead **pos, *x;
	unsigned long min = ULONG_MAX;

	pthread_mutex_lock(&m->dead_lock);
	/* Acquire pairs with the release store in run_work(). */
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
		min = PCS_MIN(min, pcs_load(&pcp_of(m, cpu)->done_epoch,
					    PCS_ACQUIRE));
	for (pos = &m->dead; (x = *pos);) {
		if (x->epoch <= min) {
			*pos = x->next;
			m->ops->put(x->key);
		} else {
			pos = &x->next;
		}
	}
	pthread_mutex_unlock(&m->dead_lock);
}

/*
 * drain_local_memcg_stock(), by the owner or a borrower of @p's CPU: if a
 * drain is queued, drain every slot.  The xchg's acquire pairs with the
 * release in queue_work(), so the epoch read after it covers every key
 * that died before the request.  The release store of flushing pairs with
 * the relaxed test in memcg7_drain_all() as in the locked variant.
 */
static __attribute__((noinline)) void run_work(struct memcg7 *m,
					       struct memcg7_pcp *p)
{
	unsigned long epoch;

	if (!pcs_xchg(&p->work, 0, PCS_ACQ_REL))
		return;
	epoch = pcs_load(&m->epoch, PCS_RELAXED);
	drain_pcp(m, p);
	pcs_store(&p->flushing, false, PCS_RELEASE);
	if (pcs_load(&p->done_epoch, PCS_RELAXED) == epoch)
		return;
	pcs_store(&p->done_epoch, epoch, PCS_RELEASE);
	reap(m);
}

static void work_hook(struct pcstock_domain *d, unsigned int cpu, void *arg)
{
	struct memcg7 *m = arg;

	run_work(m, pcp_of(m, cpu));
}

/*
 * Run @cpu's queued drain if nobody holds the CPU, and look again after
 * giving it back: a requester that found it held (by us) left its drain
 * to us.  The loads follow the seq_cst fence of the requester's
 * queue_work() or of the giver's cpu_release() (see pcs_cpu_borrow()).
 */
static void kick(struct memcg7 *m, unsigned int cpu)
{
	struct memcg7_pcp *p = pcp_of(m, cpu);

	while (pcs_load(&p->work, PCS_RELAXED) && pcs_cpu_borrow(m->d, cpu)) {
		run_work(m, p);
		pcs_cpu_unborrow(m->d, cpu);
	}
}

static void kick_hook(struct pcstock_domain *d, unsigned int cpu, void *arg)
{
	kick(arg, cpu);
}

/*
 * Queue a drain on @cpu without waiting (schedule_work_on()): its holder
 * runs it, or, if nobody holds the CPU, we borrow it and run it now.  The
 * release pairs with the acquire in run_work().
 */
static void queue_work(struct memcg7 *m, unsigned int cpu)
{
	pcs_store(&pcp_of(m, cpu)->work, 1, PCS_RELEASE);
#ifndef PCSTOCK_MUTATE_M7_NO_QUEUE_FENCE	/* planted bug, explorer only */
	pcs_fence(memory_order_seq_cst);
#endif
	kick(m, cpu);
}

/* The owner's check at each operation: a relaxed load of the hot line. */
static void owner_work(struct memcg7 *m, struct memcg7_pcp *p)
{
	if (pcs_load(&p->work, PCS_RELAXED))
		run_work(m, p);
}

/* The caller's own CPU: run its queued work now. */
static void run_own_work(struct memcg7 *m)
{
	int cpu = pcs_this_cpu(m->d);

	if (cpu >= 0)
		owner_work(m, pcp_of(m, (unsigned int)cpu));
}

/* ---- setup -------------------------------------------------------------- */

static void hotplug_dead(struct pcstock_domain *d, unsigned int cpu,
			 void *arg)
{
	struct memcg7 *m = arg;
	struct memcg7_pcp *p = pcp_of(m, cpu);

	if (m->owned) {
		queue_work(m, cpu);
		return;
	}
	pcp_lock(p);
	drain_pcp(m, p);
	pcp_unlock(p);
}

int memcg7_create(struct pcstock_domain *d, unsigned int batch,
		  bool isolated_fix, const struct memcg7_ops *ops,
		  struct memcg7 **out)
{
	struct memcg7 *m;
	int err;

	if (!batch || batch > MEMCG7_MAX_BATCH)
		return -EINVAL;
	m = pcs_calloc(1, sizeof(*m), "memcg7.cache");
	if (!m)
		return -ENOMEM;
	m->d = d;
	m->nr_cpus = pcstock_domain_nr_cpus(d);
	m->batch = batch;
	m->isolated_fix = isolated_fix;
	m->owned = pcs_cpu_exclusive(d);
	m->ops = ops;
	err = pcstock_percpu_alloc(d, sizeof(struct memcg7_pcp),
				   alignof(struct memcg7_pcp), &m->pcp);
	if (err)
		goto free;
	err = pthread_mutex_init(&m->drain_lock, NULL) ? -ENOMEM : 0;
	if (err)
		goto free_pcp;
	err = pthread_mutex_init(&m->dead_lock, NULL) ? -ENOMEM : 0;
	if (err)
		goto destroy_drain;
	err = pcstock_cpu_hook_add(d, hotplug_dead, m, &m->hook);
	if (err)
		goto destroy_dead;
	if (m->owned) {
		err = pcs_work_hook_add(d, work_hook, kick_hook, m,
					&m->work_hook);
		if (err)
			goto remove_hook;
	}
	*out = m;
	return 0;

remove_hook:
	pcstock_cpu_hook_remove(d, m->hook);
destroy_dead:
	pthread_mutex_destroy(&m->dead_lock);
destroy_drain:
	pthread_mutex_destroy(&m->drain_lock);
free_pcp:
	pcstock_percpu_free(d, m->pcp);
free:
	free(m);
	return err;
}

/*
 * Owner variant: an owner runs its CPU's queued drain when it idles or
 * exits, and an offline queues one, all under the domain's work lock,
 * which the flush holds: no slot is drained by both.  (Its charges are
 * the caller's to stop.)  The lock orders the owner's last writes to
 * its slots before the flush, and the flush before its next drain, which
 * finds no work.
 */
void memcg7_flush(struct memcg7 *m)
{
#ifndef PCSTOCK_MUTATE_M7_FLUSH_UNLOCKED	/* planted bug, explorer only */
	pcs_work_lock(m->d);
#endif
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct memcg7_pcp *p = pcp_of(m, cpu);

		drain_pcp(m, p);
		pcs_store(&p->work, 0, PCS_RELAXED);
		pcs_store(&p->done_epoch, pcs_load(&m->epoch, PCS_RELAXED),
			  PCS_RELAXED);
	}
#ifndef PCSTOCK_MUTATE_M7_FLUSH_UNLOCKED
	pcs_work_unlock(m->d);
#endif
	reap(m);
}

void memcg7_destroy(struct memcg7 *m)
{
	if (!m)
		return;
	pcs_work_hook_remove(m->d, m->work_hook);
	pcstock_cpu_hook_remove(m->d, m->hook);
	memcg7_flush(m);
	pthread_mutex_destroy(&m->dead_lock);
	pthread_mutex_destroy(&m->drain_lock);
	pcstock_percpu_free(m->d, m->pcp);
	free(m);
}

/* ---- the charge path ---------------------------------------------------- */

/*
 * Locked variant: the current CPU's cache, locked, or NULL when the thread
 * is no CPU of the domain or the trylock fails (the kernel's local_trylock
 * on the charge path: a busy cache is bypassed, never waited for).
 */
static struct memcg7_pcp *this_pcp_trylock(struct memcg7 *m, int *cpu)
{
	struct memcg7_pcp *p;

	*cpu = pcs_this_cpu(m->d);
	if (*cpu < 0)
		return NULL;
	p = pcp_of(m, (unsigned int)*cpu);
#ifdef PCSTOCK_MUTATE_M7_NO_TRYLOCK
	/*
	 * Planted bug, test builds only (tests/explore.cmake): the charge
	 * path uses the cache without taking its lock, so two threads of one
	 * SIM CPU lose each other's updates.  memcg7-locked must catch it.
	 */
	return p;
#else
	return pcp_trylock(p) ? p : NULL;
#endif
}

/*
 * Owner variant: the current CPU's cache, its queued work run, or NULL
 * when the thread is no CPU of the domain.  PINNED and COOP keep the CPU
 * the thread entered in a thread-local, read inline.
 */
static inline __attribute__((always_inline)) struct memcg7_pcp *
this_pcp_owned(struct memcg7 *m, int *cpu)
{
	struct memcg7_pcp *p;

	*cpu = pcs_tls_entered.id == m->d->id ? pcs_tls_entered.cpu : -1;
	if (*cpu < 0)
		return NULL;
	p = pcp_of(m, (unsigned int)*cpu);
	owner_work(m, p);
	return p;
}

/* Take @nr_pages from @key's slot of @p, if it has them. */
static inline __attribute__((always_inline)) bool
consume_slot(struct memcg7_pcp *p, void *key, unsigned int nr_pages)
{
	/* A key occupies at most one slot: stop at the first match. */
	for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++) {
		unsigned int nr;

		if (pcs_load(&p->cached[i], PCS_RELAXED) != key)
			continue;
		nr = pcs_load(&p->nr_pages[i], PCS_RELAXED);
		if (nr < nr_pages)
			return false;
		pcs_store(&p->nr_pages[i], (uint8_t)(nr - nr_pages),
			  PCS_RELAXED);
		return true;
	}
	return false;
}

/*
 * The owner-exclusive hit, out of line so that its machine code can be
 * checked: the owner's plain loads and stores, no locked instruction.
 */
static __attribute__((noinline)) bool
consume_owned(struct memcg7 *m, void *key, unsigned int nr_pages)
{
	struct memcg7_pcp *p;
	bool ok;
	int cpu;

	p = this_pcp_owned(m, &cpu);
	if (!p)
		return false;
	ok = consume_slot(p, key, nr_pages);
	stat_add(true, p, ok ? ST_HITS : ST_MISSES, 1);
	return ok;
}

/* The locked variant's hit: trylock, or bypass a busy cache. */
static __attribute__((noinline)) bool
consume_locked(struct memcg7 *m, void *key, unsigned int nr_pages)
{
	struct memcg7_pcp *p;
	bool ok;
	int cpu;

	p = this_pcp_trylock(m, &cpu);
	if (!p)
		return false;
	ok = consume_slot(p, key, nr_pages);
	stat_add(false, p, ok ? ST_HITS : ST_MISSES, 1);
	pcp_unlock(p);
	return ok;
}

bool memcg7_consume(struct memcg7 *m, void *key, unsigned long nr_pages)
{
	if (nr_pages > m->batch)
		return false;
	if (m->owned)
		return consume_owned(m, key, (unsigned int)nr_pages);
	return consume_locked(m, key, (unsigned int)nr_pages);
}

/*
 * May @p's CPU cache pages for @key?  A dead CPU runs nothing in the
 * kernel, so its cache, drained by memcg_hotplug_cpu_dead(), is never
 * refilled: a thread still entered on an offline CPU bypasses it.  Not the
 * kernel's: an offline key is refused.  Locked variant: both are tested
 * under the lock, which the offline hook and the destroy's drain take
 * after clearing the flags, so a refill either precedes that drain or
 * sees the flag.  Owner variant: the hook and the destroy queue their
 * drain after clearing the flag (the release in queue_work() pairs with
 * the acquire in run_work()), so a refill either precedes the drain this
 * CPU will run or, having run it, sees the flag.
 */
static inline __attribute__((always_inline)) bool
may_cache(const struct memcg7 *m, unsigned int cpu, void *key)
{
	/* Relaxed: ordered by the CPU lock or the work bit, as above. */
	return pcs_load(&m->d->online[cpu], PCS_RELAXED) &&
	       m->ops->online(key);
}

/* refill_stock() on @p, which may cache @key. */
static inline __attribute__((always_inline)) void
refill_pcp(struct memcg7 *m, struct memcg7_pcp *p, void *key,
	   unsigned int nr_pages, bool owned)
{
	int empty = -1;
	unsigned int i;

	for (i = 0; i < MEMCG7_NR_SLOTS; i++) {
		void *cached = pcs_load(&p->cached[i], PCS_RELAXED);
		unsigned int nr;

		if (!cached && empty < 0)
			empty = (int)i;
		if (cached != key)
			continue;
		/* A slot that passes the batch is drained whole (S2). */
		nr = pcs_load(&p->nr_pages[i], PCS_RELAXED) + nr_pages;
		pcs_store(&p->nr_pages[i], (uint8_t)nr, PCS_RELAXED);
		stat_add(owned, p, ST_REFILLS, 1);
		if (nr > m->batch)
			drain_slot(m, p, i);
		return;
	}
	if (empty < 0) {
		/* Round-robin victim (c0cafe24d3f6), drained whole. */
		empty = p->drain_idx;
		p->drain_idx = (unsigned char)((p->drain_idx + 1) %
					       MEMCG7_NR_SLOTS);
		drain_slot(m, p, (unsigned int)empty);
		stat_add(owned, p, ST_EVICTIONS, 1);
	}
	if (!owned)
		m->ops->get(key);
	/* Release: remote readers dereference the key (drain_needed()). */
	pcs_store(&p->cached[empty], key, PCS_RELEASE);
	pcs_store(&p->nr_pages[empty], (uint8_t)nr_pages, PCS_RELAXED);
	stat_add(owned, p, ST_REFILLS, 1);
}

/* What the cache does not take goes straight to the counters. */
static void refill_bypass(struct memcg7 *m, void *key,
			  unsigned long nr_pages, int cpu)
{
	m->ops->uncharge(key, nr_pages);
	if (nr_pages && cpu >= 0)
		stat_add(m->owned, pcp_of(m, (unsigned int)cpu), ST_BYPASSES,
			 1);
}

static __attribute__((noinline)) void
refill_owned(struct memcg7 *m, void *key, unsigned int nr_pages)
{
	struct memcg7_pcp *p;
	int cpu;

	p = this_pcp_owned(m, &cpu);
	if (p && may_cache(m, (unsigned int)cpu, key))
		refill_pcp(m, p, key, nr_pages, true);
	else
		refill_bypass(m, key, nr_pages, cpu);
}

static __attribute__((noinline)) void
refill_locked(struct memcg7 *m, void *key, unsigned int nr_pages)
{
	struct memcg7_pcp *p;
	int cpu;

	p = this_pcp_trylock(m, &cpu);
	if (p && may_cache(m, (unsigned int)cpu, key)) {
		refill_pcp(m, p, key, nr_pages, false);
		pcp_unlock(p);
		return;
	}
	if (p)
		pcp_unlock(p);
	refill_bypass(m, key, nr_pages, cpu);
}

void memcg7_refill(struct memcg7 *m, void *key, unsigned long nr_pages)
{
	if (nr_pages > m->batch)
		refill_bypass(m, key, nr_pages, pcs_this_cpu(m->d));
	else if (m->owned)
		refill_owned(m, key, (unsigned int)nr_pages);
	else
		refill_locked(m, key, (unsigned int)nr_pages);
}

/* ---- drains ------------------------------------------------------------- */

/* is_memcg_drain_needed(): lockless snapshot, under the caller's RCU. */
static bool drain_needed(const struct memcg7 *m, struct memcg7_pcp *p,
			 void *root)
{
	for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++) {
		/* Acquire pairs with the release install in memcg7_refill(). */
		void *key = pcs_load(&p->cached[i], PCS_ACQUIRE);

		if (key && pcs_load(&p->nr_pages[i], PCS_RELAXED) &&
		    m->ops->in_subtree(key, root))
			return true;
	}
	return false;
}

/*
 * Locked variant: drain_local_memcg_stock(), run by the drainer.  Release
 * pairs with the relaxed test in memcg7_drain_all(): a drainer that sees
 * the flag clear also sees the emptied slots (a stale read only costs a
 * redundant drain).
 */
static void drain_locked(const struct memcg7 *m, struct memcg7_pcp *p)
{
	pcp_lock(p);
	drain_pcp(m, p);
	pcs_store(&p->flushing, false, PCS_RELEASE);
	pcp_unlock(p);
}

/*
 * schedule_drain_work(): isolated CPUs are skipped, the flag left set;
 * the owner variant queues the work (the caller's own CPU runs it now).
 */
static void schedule_drain(struct memcg7 *m, unsigned int cpu,
			   struct memcg7_pcp *p, bool local)
{
	if (!local && pcstock_cpu_isolated(m->d, cpu)) {
		pcs_fetch_add(&p->st[ST_ISOLATED_SKIPS], 1, PCS_RELAXED);
		if (m->isolated_fix)
			pcs_store(&p->flushing, false, PCS_RELAXED);
		return;
	}
	if (!m->owned) {
		drain_locked(m, p);
		return;
	}
	queue_work(m, cpu);
	if (local)
		run_work(m, p);
}

bool memcg7_drain_all(struct memcg7 *m, void *root)
{
	int curcpu;

	if (pthread_mutex_trylock(&m->drain_lock))
		return false;
	curcpu = pcs_this_cpu(m->d);
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct memcg7_pcp *p = pcp_of(m, cpu);

		if (!pcstock_cpu_online(m->d, cpu))
			continue;
		if (pcs_load(&p->flushing, PCS_RELAXED)) {
			pcs_fetch_add(&p->st[ST_FLUSHING_SKIPS], 1,
				      PCS_RELAXED);
			continue;
		}
		if (!drain_needed(m, p, root))
			continue;
		/* test_and_set_bit(): the xchg orders like the kernel's. */
		if (pcs_xchg(&p->flushing, true, PCS_ACQ_REL))
			continue;
		schedule_drain(m, cpu, p, (int)cpu == curcpu);
	}
	pthread_mutex_unlock(&m->drain_lock);
	return true;
}

void memcg7_drain_key(struct memcg7 *m, void *key,
		      struct memcg7_dead *dead)
{
	if (m->owned) {
		/* The epoch's release pairs with the acquire in run_work(). */
		pthread_mutex_lock(&m->dead_lock);
		m->ops->get(key);
		dead->key = key;
		dead->epoch = pcs_load(&m->epoch, PCS_RELAXED) + 1;
		dead->next = m->dead;
		m->dead = dead;
		pcs_store(&m->epoch, dead->epoch, PCS_RELEASE);
		pthread_mutex_unlock(&m->dead_lock);
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
			queue_work(m, cpu);
		run_own_work(m);
		reap(m);
		return;
	}
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct memcg7_pcp *p = pcp_of(m, cpu);

		pcp_lock(p);
		for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++)
			if (pcs_load(&p->cached[i], PCS_RELAXED) == key)
				drain_slot(m, p, i);
		pcp_unlock(p);
	}
}

/* ---- readers ------------------------------------------------------------ */

unsigned long memcg7_pages(struct memcg7 *m, void *root)
{
	unsigned long sum = 0;

	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct memcg7_pcp *p = pcp_of(m, cpu);

		for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++) {
			/* Acquire: as in drain_needed(). */
			void *key = pcs_load(&p->cached[i], PCS_ACQUIRE);

			if (key && m->ops->in_subtree(key, root))
				sum += pcs_load(&p->nr_pages[i], PCS_RELAXED);
		}
	}
	return sum;
}

void memcg7_stats(const struct memcg7 *m, struct pcstock_memcg7_stats *st)
{
	unsigned long v[ST_NR] = { 0 };

	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct memcg7_pcp *p = pcp_of(m, cpu);

		for (unsigned int s = 0; s < ST_NR; s++)
			v[s] += pcs_load(&p->st[s], PCS_RELAXED);
	}
	*st = (struct pcstock_memcg7_stats){
		.hits = v[ST_HITS],
		.misses = v[ST_MISSES],
		.refills = v[ST_REFILLS],
		.bypasses = v[ST_BYPASSES],
		.evictions = v[ST_EVICTIONS],
		.slot_drains = v[ST_SLOT_DRAINS],
		.drained_pages = v[ST_DRAINED_PAGES],
		.isolated_skips = v[ST_ISOLATED_SKIPS],
		.flushing_skips = v[ST_FLUSHING_SKIPS],
	};
}

bool memcg7_owned(const struct memcg7 *m)
{
	return m->owned;
}

bool memcg7_slot(struct memcg7 *m, unsigned int cpu, unsigned int idx,
		 void **key, unsigned int *nr_pages)
{
	struct memcg7_pcp *p;

	if (cpu >= m->nr_cpus || idx >= MEMCG7_NR_SLOTS)
		return false;
	p = pcp_of(m, cpu);
	*key = pcs_load(&p->cached[idx], PCS_RELAXED);
	*nr_pages = pcs_load(&p->nr_pages[idx], PCS_RELAXED);
	return true;
}

bool memcg7_flushing(struct memcg7 *m, unsigned int cpu)
{
	return cpu < m->nr_cpus &&
	       pcs_load(&pcp_of(m, cpu)->flushing, PCS_RELAXED);
}
