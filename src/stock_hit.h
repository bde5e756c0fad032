/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stock_hit.h - the stock's hit paths, inlined by the counter-level calls
 * (stock.c) and by the group calls (hierarchy.c), so both layers run one
 * copy of each.
 *
 * A hit is the thread's cached region (pcs_tls_fast, domain.h) compared by
 * key with the counter's, one add for the slot's address, and the slot's
 * CAS.  Anything else (no cached region, another domain, an RSEQ domain, a
 * slot that cannot serve, a disabled stock, V4 uncharges) returns false
 * and the caller takes its slow path, which finds the CPU the long way,
 * refreshes the cache and runs the whole algorithm (stock.c).
 */
#ifndef PCSTOCK_STOCK_HIT_H
#define PCSTOCK_STOCK_HIT_H

#include <stdbool.h>

#include <pcstock/stock.h>

#include "atomic.h"
#include "domain.h"

enum stock_state {
	STOCK_NONE = 0,
	STOCK_ENABLED,
	STOCK_DISABLED,
};

/* One CPU's statistics, a second per-CPU allocation next to the slots. */
struct stock_cpu_stats {
	atomic_ulong hits;
	atomic_ulong misses;
	atomic_ulong refills;
	atomic_ulong drains;
	atomic_ulong drained_pages;
	atomic_ulong trims;
};

/* Out of line, so the hit paths that may reach them keep no frame. */
void pcs_stock_trim(struct pcstock_counter *c, struct stock_cpu_stats *st,
		    unsigned long nr);
void pcs_stock_refill_raced(struct pcstock_counter *c, char *region);

/* @c's slot and statistics in the region of one CPU. */
static inline atomic_int *pcs_slot_at(const struct pcstock_counter *c,
				      char *region)
{
	return (atomic_int *)(region + c->stock_slots);
}

static inline struct stock_cpu_stats *
pcs_stats_at(const struct pcstock_counter *c, char *region)
{
	return (struct stock_cpu_stats *)(region + c->stock_stats);
}

/*
 * Lossy statistic: no RMW, so the hit path stays at one locked instruction.
 * A thread sharing this CPU can overwrite the update (documented in
 * struct pcstock_stock_stats).
 */
static inline void pcs_stat_add(atomic_ulong *v, unsigned long n)
{
	pcs_store(v, pcs_load(v, PCS_RELAXED) + n, PCS_RELAXED);
}

/*
 * Take @nr pages from @slot if it holds that many.  A slot is never
 * negative: compare as unsigned, no sign extension.
 */
static inline bool pcs_slot_take(atomic_int *slot, unsigned long nr)
{
	int old = pcs_load(slot, PCS_RELAXED);

	while ((unsigned int)old >= nr) {
		/*
		 * acquire: pairs with the release addition in
		 * pcs_refill_capped() or refill_v4() (stock.c), so the charge
		 * that put these pages in the slot happens before our
		 * caller's later uncharge of them.  A failed CAS reloads old.
		 */
		if (pcs_cas(slot, &old, old - (int)nr, PCS_ACQUIRE,
			    PCS_RELAXED))
			return true;
	}
	return false;
}

/*
 * The disable/refill handshake, a store-buffering pattern:
 * pcstock_counter_disable_stock() stores DISABLED and its caller then
 * drains (reading each slot); a refill adds to a slot and then reads the
 * state.  All four accesses are seq_cst, so either the drain sees the
 * pages or the refiller sees DISABLED and drains them itself: once a
 * disable + drain and every call racing with it have returned, no slot
 * holds pages (a destroyed group's stock is back with its ancestors).
 */
static inline void pcs_refill_recheck(struct pcstock_counter *c,
				      char *region)
{
#ifdef PCSTOCK_MUTATE_NO_DISABLE_RECHECK
	/*
	 * Planted bug, test builds only (tests/explore.cmake): a refill that
	 * raced a disable leaves its pages in a destroyed group's slot.  The
	 * schedule explorer's group scenarios must catch it.
	 */
	(void)c;
	(void)region;
#elif defined(PCSTOCK_MUTATE_RELAXED_RECHECK)
	/* Planted bug, test builds only: the handshake's load weakened. */
	if (pcs_load(&c->stock_state, PCS_RELAXED) != STOCK_ENABLED)
		pcs_stock_refill_raced(c, region);
#else
	if (pcs_load(&c->stock_state, PCS_SEQ_CST) != STOCK_ENABLED)
		pcs_stock_refill_raced(c, region);
#endif
}

/*
 * Replace @slot's value *@old with @new, else reload *@old: every addition
 * to a slot.  release: pairs with the acquire CAS in pcs_slot_take(), the
 * acquire exchange in pcstock_counter_drain_stock() and the acquire of a
 * later flush in pcs_refill_capped(): the charge of the pages added happens
 * before their uncharge.  acquire: a flush takes the slot's pages out as a
 * drain does, so it pairs with the release that put them there before
 * pcs_stock_trim() uncharges them.  seq_cst: the refill half of the disable
 * handshake (see pcs_refill_recheck()); the same locked instruction on x86.
 */
static inline bool pcs_slot_refill(atomic_int *slot, int *old, int new)
{
#ifdef PCSTOCK_MUTATE_PLAIN_REFILL
	/*
	 * Planted bug, test builds only (tests/explore.cmake): a plain store
	 * instead of the CAS loses a concurrent drain or consume.  The
	 * schedule explorer must catch it.
	 */
	pcs_store(slot, new, PCS_RELEASE);
	return true;
#else
	return pcs_cas(slot, old, new, PCS_SEQ_CST, PCS_RELAXED);
#endif
}

/*
 * DEFAULT: put @nr pages in the slot of the CPU whose region is @region
 * without ever taking it above @batch.  If they do not fit, the whole slot
 * goes back up the hierarchy with them (mainline's refill_stock()): a CPU
 * that only ever receives pages, the consumer of a cross-CPU flow, then
 * pays one hierarchical uncharge per batch instead of one per call, as it
 * would if the slot were kept full and only the excess sent up.
 */
static inline void pcs_refill_capped(struct pcstock_counter *c, char *region,
				     int batch, int nr)
{
	atomic_int *slot = pcs_slot_at(c, region);
	struct stock_cpu_stats *st =
		pcs_stats_at(c, region);
	int old = pcs_load(slot, PCS_RELAXED);
	int want, new;

	/* No overflow: old and nr are at most batch <= INT_MAX / 2. */
	do {
		want = old + nr;
		new = want > batch ? 0 : want;
	} while (!pcs_slot_refill(slot, &old, new));

	if (new != want) {
		pcs_stock_trim(c, st, (unsigned long)want);
	} else if (new > old) {
		pcs_stat_add(&st->refills, 1);
		pcs_refill_recheck(c, region);
	}
}

/* A hit on the CPU whose region is @region: true if @nr pages were taken. */
static inline bool pcs_stock_take_at(struct pcstock_counter *c, char *region,
				     unsigned long nr)
{
	struct stock_cpu_stats *st;

	if (!pcs_slot_take(pcs_slot_at(c, region), nr))
		return false;
	st = pcs_stats_at(c, region);
#ifdef PCSTOCK_MUTATE_SHARED_HIT_STAT
	/*
	 * Planted cost bug, bench builds only (bench/CMakeLists.txt): every
	 * CPU counts its hits in CPU 0's statistics, one line written by
	 * all.  The line model must show it (tests/bench.cmake).
	 */
	st = pcs_percpu_ptr(c->stock_domain, c->stock_stats, 0);
#endif
	pcs_stat_add(&st->hits, 1);
	return true;
}

/*
 * The charge hit: @key is the counter's (or, for a group, its own, which
 * is the memory counter's while the group may take hits).  True if @nr
 * pages were taken from the slot of the thread's cached CPU.
 */
static inline bool pcs_stock_take(struct pcstock_counter *c,
				  unsigned long long key, unsigned long nr)
{
	const struct pcs_cpu_fast *f = &pcs_tls_fast;

	return f->key == key && pcs_stock_take_at(c, f->region, nr);
}

/*
 * Whether an uncharge of @nr pages may go into a slot, given @batch, @c's
 * stock_refill_batch: 1..batch pages of an enabled DEFAULT stock.  The
 * others (0 pages, more than batch, V4, disabled, unstocked) go straight
 * up the hierarchy.
 */
static inline bool pcs_stock_refills(unsigned int batch, unsigned long nr)
{
	return nr - 1 < batch;
}

/*
 * The uncharge into the stock, for @nr pages that pcs_stock_refills():
 * true if they went into the slot of the thread's cached CPU and fit.  A
 * slot they do not fit (the slow path flushes it up with them) and a
 * thread with no cached region for @key return false untouched.
 */
static inline bool pcs_stock_give(struct pcstock_counter *c,
				  unsigned long long key, unsigned int batch,
				  unsigned long nr)
{
	const struct pcs_cpu_fast *f = &pcs_tls_fast;
	atomic_int *slot;
	char *region;
	int old, want;

	if (f->key != key)
		return false;
	/* Once: the seq_cst CAS would make the compiler reload it. */
	region = f->region;
	slot = pcs_slot_at(c, region);
	old = pcs_load(slot, PCS_RELAXED);
	/*
	 * No overflow: nr and old (a DEFAULT slot) are at most batch <=
	 * INT_MAX / 2.
	 */
	do {
		want = old + (int)nr;
		if ((unsigned int)want > batch)
			return false;
	} while (!pcs_slot_refill(slot, &old, want));
	pcs_stat_add(&pcs_stats_at(c, region)->refills, 1);
	pcs_refill_recheck(c, region);
	return true;
}

#endif /* PCSTOCK_STOCK_HIT_H */
