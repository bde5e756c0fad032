/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memcg7_pcp.h - the layout of the memcg7 cache (memcg7.c, memcg7_ctl.c)
 * and the helpers both files inline.
 */
#ifndef PCSTOCK_MEMCG7_PCP_H
#define PCSTOCK_MEMCG7_PCP_H

#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>

#include "atomic.h"
#include "domain.h"
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

static inline struct memcg7_pcp *pcp_of(const struct memcg7 *m,
				       unsigned int cpu)
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
static inline bool pcp_trylock(struct memcg7_pcp *p)
{
	int unlocked = 0;

	return pcs_cas(&p->lock, &unlocked, 1,
		       PCS_ORDER(M7_TRYLOCK, PCS_ACQUIRE), PCS_RELAXED);
}

static inline void pcp_lock(struct memcg7_pcp *p)
{
	while (!pcp_trylock(p))
		pcs_spin_yield();
}

/* Release pairs with the acquire CAS in pcp_trylock(). */
static inline void pcp_unlock(struct memcg7_pcp *p)
{
	pcs_store(&p->lock, 0, PCS_ORDER(M7_UNLOCK, PCS_RELEASE));
}

/* drain_stock() of slot @i, and of all slots (memcg7.c). */
void pcs_m7_drain_slot(const struct memcg7 *m, struct memcg7_pcp *p,
		       unsigned int i);
void pcs_m7_drain_pcp(const struct memcg7 *m, struct memcg7_pcp *p);
/* Owner variant: run @p's queued drain, if any (memcg7_ctl.c). */
void pcs_m7_run_work(struct memcg7 *m, struct memcg7_pcp *p);

/* The owner's check at each operation: a relaxed load of the hot line. */
static inline void owner_work(struct memcg7 *m, struct memcg7_pcp *p)
{
	if (pcs_load(&p->work, PCS_RELAXED))
		pcs_m7_run_work(m, p);
}

#endif /* PCSTOCK_MEMCG7_PCP_H */
