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
#include "memcg7_pcp.h"

/*
 * drain_stock(stock, i): by the owner or a borrower (owner variant), under
 * the lock (locked variant).
 */
void pcs_m7_drain_slot(const struct memcg7 *m, struct memcg7_pcp *p,
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

void pcs_m7_drain_pcp(const struct memcg7 *m, struct memcg7_pcp *p)
{
	for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++)
		pcs_m7_drain_slot(m, p, i);
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
	return pcp_trylock(p) ? p : NULL;
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

	*cpu = pcs_tls_entered.hit_key == m->d->hit_key ? pcs_tls_entered.cpu : -1;
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
bool memcg7_consume_owned(struct memcg7 *m, void *key,
			  unsigned long nr_pages)
{
	struct memcg7_pcp *p;
	bool ok;
	int cpu;

	if (nr_pages > m->batch)
		return false;
	p = this_pcp_owned(m, &cpu);
	if (!p)
		return false;
	ok = consume_slot(p, key, (unsigned int)nr_pages);
	stat_add(true, p, ok ? ST_HITS : ST_MISSES, 1);
	return ok;
}

/* The locked variant's hit: trylock, or bypass a busy cache. */
bool memcg7_consume_locked(struct memcg7 *m, void *key,
			   unsigned long nr_pages)
{
	struct memcg7_pcp *p;
	bool ok;
	int cpu;

	if (nr_pages > m->batch)
		return false;
	p = this_pcp_trylock(m, &cpu);
	if (!p)
		return false;
	ok = consume_slot(p, key, (unsigned int)nr_pages);
	stat_add(false, p, ok ? ST_HITS : ST_MISSES, 1);
	pcp_unlock(p);
	return ok;
}

bool memcg7_consume(struct memcg7 *m, void *key, unsigned long nr_pages)
{
	return m->owned ? memcg7_consume_owned(m, key, nr_pages) :
			  memcg7_consume_locked(m, key, nr_pages);
}

bool memcg7_is_owned(const struct memcg7 *m)
{
	return m->owned;
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
 * the acquire in pcs_m7_run_work()), so a refill either precedes the
 * drain this CPU will run or, having run it, sees the flag.
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
		/*
		 * A slot that passes the batch is drained whole, as the
		 * kernel's refill_stock() does: 60 then 5 with a batch of 64
		 * uncharges all 65 (test_memcg7).
		 */
		nr = pcs_load(&p->nr_pages[i], PCS_RELAXED) + nr_pages;
		pcs_store(&p->nr_pages[i], (uint8_t)nr, PCS_RELAXED);
		stat_add(owned, p, ST_REFILLS, 1);
		if (nr > m->batch)
			pcs_m7_drain_slot(m, p, i);
		return;
	}
	if (empty < 0) {
		/* Round-robin victim (c0cafe24d3f6), drained whole. */
		empty = p->drain_idx;
		p->drain_idx = (unsigned char)((p->drain_idx + 1) %
					       MEMCG7_NR_SLOTS);
		pcs_m7_drain_slot(m, p, (unsigned int)empty);
		stat_add(owned, p, ST_EVICTIONS, 1);
	}
	if (!owned)
		m->ops->get(key);
	/* Release: remote readers dereference the key (drain_needed()). */
	pcs_store(&p->cached[empty], key, PCS_ORDER(M7_INSTALL, PCS_RELEASE));
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

/* ---- readers ------------------------------------------------------------ */

unsigned long memcg7_pages(struct memcg7 *m, void *root)
{
	unsigned long sum = 0;

	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		struct memcg7_pcp *p = pcp_of(m, cpu);

		for (unsigned int i = 0; i < MEMCG7_NR_SLOTS; i++) {
			/* Acquire: as in drain_needed(). */
			void *key = pcs_load(&p->cached[i],
				PCS_ORDER(M7_PAGES_KEY, PCS_ACQUIRE));

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
