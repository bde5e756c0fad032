// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * memcg7.c - the pre-series memcg stock: 7 slots per CPU keyed by group.
 *
 * Kept as a comparison policy for the per-counter stock (stock.c): its
 * costs are the slot scan, evictions when more than 7 groups charge on one
 * CPU (a round-robin victim is drained whole), and drain_all draining every
 * group's slots of a CPU, not just the subtree's.
 *
 * Locking.  The kernel protects a CPU's cache with a local trylock: the
 * owner CPU is the only writer, and remote CPUs only read it (drains run
 * as work on the owner).  Simulated CPUs can be shared by several threads
 * and we have no workqueue, so each CPU's cache has a small spinlock: the
 * charge path only trylocks it (on failure it bypasses the cache, as the
 * kernel does), drains take it.  Remote readers (drain_needed, the page
 * count for usage_exact) read slots without it, with relaxed atomics, as
 * the kernel's READ_ONCE readers do: they see some recent state, and the
 * keys they see are kept alive by RCU (the caller's read section).
 *
 * The flushing flag reproduces FLUSHING_CACHED_CHARGE: set by drain_all
 * when it decides to drain a CPU, cleared by the drain.  When the CPU is
 * isolated the drain is skipped and, as in the kernel before the 2026 fix,
 * the flag stays set so every later drain_all skips that CPU; with
 * isolated_fix the flag is cleared instead.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>

#include <pcstock/percpu.h>

#include "atomic.h"
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

/* One CPU's cache; one cache line for the slots, as the kernel's. */
struct memcg7_pcp {
	alignas(PCSTOCK_CACHELINE) atomic_int lock;
	atomic_bool flushing;
	unsigned char drain_idx;	/* under lock */
	_Atomic(void *) cached[MEMCG7_NR_SLOTS];
	atomic_uint nr_pages[MEMCG7_NR_SLOTS];
	/* statistics, bumped with relaxed RMWs (several threads per CPU) */
	alignas(PCSTOCK_CACHELINE) atomic_ulong st[ST_NR];
};


struct memcg7 {
	struct pcstock_domain *d;
	size_t pcp;			/* arena handle of struct memcg7_pcp */
	unsigned int nr_cpus;
	unsigned int batch;
	bool isolated_fix;
	const struct memcg7_ops *ops;
	pthread_mutex_t drain_lock;	/* the kernel's percpu_charge_mutex */
	struct pcstock_cpu_hook *hook;
};

static struct memcg7_pcp *pcp_of(const struct memcg7 *m, unsigned int cpu)
{
	return pcstock_percpu_ptr(m->d, m->pcp, cpu);
}

static void stat_add(struct memcg7_pcp *p, enum memcg7_stat s,
		     unsigned long v)
{
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
		sched_yield();
}

/* Release pairs with the acquire CAS in pcp_trylock(). */
static void pcp_unlock(struct memcg7_pcp *p)
{
	pcs_store(&p->lock, 0, PCS_RELEASE);
}

/* drain_stock(stock, i): under the lock. */
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
		stat_add(p, ST_SLOT_DRAINS, 1);
		stat_add(p, ST_DRAINED_PAGES, nr);
	}
	pcs_store(&p->cached[i], NULL, PCS_RELAXED);
	m->ops->put(key);
}

static void drain_pcp(const struct memcg7 *m, struct memcg7_pcp *p)
{
	for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++)
		drain_slot(m, p, i);
}

static void hotplug_dead(struct pcstock_domain *d, unsigned int cpu,
			 void *arg)
{
	memcg7_drain_cpu(arg, cpu);
}

int memcg7_create(struct pcstock_domain *d, unsigned int batch,
		  bool isolated_fix, const struct memcg7_ops *ops,
		  struct memcg7 **out)
{
	struct memcg7 *m = pcs_calloc(1, sizeof(*m), "memcg7.cache");
	int err;

	if (!m)
		return -ENOMEM;
	m->d = d;
	m->nr_cpus = pcstock_domain_nr_cpus(d);
	m->batch = batch;
	m->isolated_fix = isolated_fix;
	m->ops = ops;
	err = pcstock_percpu_alloc(d, sizeof(struct memcg7_pcp),
				   alignof(struct memcg7_pcp), &m->pcp);
	if (err)
		goto free;
	err = pthread_mutex_init(&m->drain_lock, NULL) ? -ENOMEM : 0;
	if (err)
		goto free_pcp;
	err = pcstock_cpu_hook_add(d, hotplug_dead, m, &m->hook);
	if (err)
		goto destroy_mutex;
	*out = m;
	return 0;

destroy_mutex:
	pthread_mutex_destroy(&m->drain_lock);
free_pcp:
	pcstock_percpu_free(d, m->pcp);
free:
	free(m);
	return err;
}

void memcg7_destroy(struct memcg7 *m)
{
	if (!m)
		return;
	pcstock_cpu_hook_remove(m->d, m->hook);
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
		memcg7_drain_cpu(m, cpu);
	pthread_mutex_destroy(&m->drain_lock);
	pcstock_percpu_free(m->d, m->pcp);
	free(m);
}

/*
 * The current CPU's cache, locked, or NULL when the thread is no CPU of the
 * domain, the trylock fails (the kernel's local_trylock on the charge
 * path: a busy cache is bypassed, never waited for) or the CPU is offline.
 * A dead CPU runs nothing in the kernel, so its cache is never refilled
 * after memcg_hotplug_cpu_dead() drained it; a thread still entered on an
 * offline CPU bypasses the cache instead.  The flag is tested under the
 * lock, which the offline hook takes after clearing it: a refill either
 * precedes the hook's drain or sees the CPU offline.
 */
static struct memcg7_pcp *this_pcp_trylock(const struct memcg7 *m)
{
	int cpu = pcstock_this_cpu(m->d);
	struct memcg7_pcp *p;

	if (cpu < 0)
		return NULL;
	p = pcp_of(m, (unsigned int)cpu);
	if (!pcp_trylock(p))
		return NULL;
	if (pcstock_cpu_online(m->d, (unsigned int)cpu))
		return p;
	pcp_unlock(p);
	return NULL;
}

bool memcg7_consume(struct memcg7 *m, void *key, unsigned long nr_pages)
{
	struct memcg7_pcp *p;
	bool ok = false;

	if (nr_pages > m->batch)
		return false;
	p = this_pcp_trylock(m);
	if (!p)
		return false;
	/* A key occupies at most one slot: stop at the first match. */
	for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++) {
		unsigned int nr;

		if (pcs_load(&p->cached[i], PCS_RELAXED) != key)
			continue;
		nr = pcs_load(&p->nr_pages[i], PCS_RELAXED);
		if (nr >= nr_pages) {
			pcs_store(&p->nr_pages[i], nr - (unsigned int)nr_pages,
				  PCS_RELAXED);
			ok = true;
		}
		break;
	}
	stat_add(p, ok ? ST_HITS : ST_MISSES, 1);
	pcp_unlock(p);
	return ok;
}

void memcg7_refill(struct memcg7 *m, void *key, unsigned long nr_pages)
{
	struct memcg7_pcp *p = NULL;
	int empty = -1;
	unsigned int i;

	if (nr_pages <= m->batch)
		p = this_pcp_trylock(m);
	/*
	 * Not the kernel's: an offline key is refused under the lock, so the
	 * drain in the owner's destroy (which takes every CPU's lock after
	 * marking the key offline) cannot miss a slot.
	 */
	if (p && !m->ops->online(key)) {
		pcp_unlock(p);
		p = NULL;
	}
	if (!p) {
		m->ops->uncharge(key, nr_pages);
		if (nr_pages) {
			int cpu = pcstock_this_cpu(m->d);

			if (cpu >= 0)
				stat_add(pcp_of(m, (unsigned int)cpu),
					 ST_BYPASSES, 1);
		}
		return;
	}
	for (i = 0; i < MEMCG7_NR_SLOTS; i++) {
		void *cached = pcs_load(&p->cached[i], PCS_RELAXED);
		unsigned int nr;

		if (!cached && empty < 0)
			empty = (int)i;
		if (cached != key)
			continue;
		/* A slot that passes the batch is drained whole (S2). */
		nr = pcs_load(&p->nr_pages[i], PCS_RELAXED) +
		     (unsigned int)nr_pages;
		pcs_store(&p->nr_pages[i], nr, PCS_RELAXED);
		stat_add(p, ST_REFILLS, 1);
		if (nr > m->batch)
			drain_slot(m, p, i);
		goto out;
	}
	if (empty < 0) {
		/* Round-robin victim (c0cafe24d3f6), drained whole. */
		empty = p->drain_idx;
		p->drain_idx = (unsigned char)((p->drain_idx + 1) %
					       MEMCG7_NR_SLOTS);
		drain_slot(m, p, (unsigned int)empty);
		stat_add(p, ST_EVICTIONS, 1);
	}
	m->ops->get(key);
	/* Release: remote readers dereference the key (drain_needed()). */
	pcs_store(&p->cached[empty], key, PCS_RELEASE);
	pcs_store(&p->nr_pages[empty], (unsigned int)nr_pages, PCS_RELAXED);
	stat_add(p, ST_REFILLS, 1);
out:
	pcp_unlock(p);
}

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
 * drain_local_memcg_stock(): the work item.  Release pairs with the
 * relaxed test in memcg7_drain_all(): a drainer that sees the flag clear
 * also sees the emptied slots (a stale read only costs a redundant drain).
 */
static void drain_local(const struct memcg7 *m, struct memcg7_pcp *p)
{
	pcp_lock(p);
	drain_pcp(m, p);
	pcs_store(&p->flushing, false, PCS_RELEASE);
	pcp_unlock(p);
}

/* schedule_drain_work(): isolated CPUs are skipped, the flag left set. */
static void schedule_drain(const struct memcg7 *m, unsigned int cpu,
			   struct memcg7_pcp *p)
{
	if (pcstock_cpu_isolated(m->d, cpu)) {
		stat_add(p, ST_ISOLATED_SKIPS, 1);
		if (m->isolated_fix)
			pcs_store(&p->flushing, false, PCS_RELAXED);
		return;
	}
	drain_local(m, p);
}

bool memcg7_drain_all(struct memcg7 *m, void *root)
{
	int curcpu;

	if (pthread_mutex_trylock(&m->drain_lock))
		return false;
	curcpu = pcstock_this_cpu(m->d);
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct memcg7_pcp *p = pcp_of(m, cpu);

		if (!pcstock_cpu_online(m->d, cpu))
			continue;
		if (pcs_load(&p->flushing, PCS_RELAXED)) {
			stat_add(p, ST_FLUSHING_SKIPS, 1);
			continue;
		}
		if (!drain_needed(m, p, root))
			continue;
		/* test_and_set_bit(): the xchg orders like the kernel's. */
		if (pcs_xchg(&p->flushing, true, PCS_ACQ_REL))
			continue;
		if ((int)cpu == curcpu)
			drain_local(m, p);
		else
			schedule_drain(m, cpu, p);
	}
	pthread_mutex_unlock(&m->drain_lock);
	return true;
}

void memcg7_drain_cpu(struct memcg7 *m, unsigned int cpu)
{
	struct memcg7_pcp *p = pcp_of(m, cpu);

	if (!p)
		return;
	pcp_lock(p);
	drain_pcp(m, p);
	pcp_unlock(p);
}

void memcg7_drain_key(struct memcg7 *m, void *key)
{
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct memcg7_pcp *p = pcp_of(m, cpu);

		pcp_lock(p);
		for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++)
			if (pcs_load(&p->cached[i], PCS_RELAXED) == key)
				drain_slot(m, p, i);
		pcp_unlock(p);
	}
}

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
