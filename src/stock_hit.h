/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stock_hit.h - the stock's hit paths, inlined by the counter-level calls
 * (stock.c) and by the group calls (charge.c), so both layers run one
 * copy of each: the public inline fast paths of pcstock/stock_inline.h,
 * compiled here with the library's access wrappers.
 *
 * A hit is the thread's cached region (pcstock_cpu_cache_, domain.h)
 * compared by hit key with the counter's (for an RSEQ domain, also the rseq
 * area's OS CPU with the one the region was cached for), one add for the
 * slot's address, and the slot's CAS; its statistic sits right after the
 * slot.  Anything else (no cached region, another domain or OS CPU, a
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
#include "stock_steps.h"	/* pcs_stock_trim_steps() */

/* The stock's types; its inline code follows, with our access hooks. */
#define PCSTOCK_INLINE_TYPES_ONLY_
#include <pcstock/stock_inline.h>
#undef PCSTOCK_INLINE_TYPES_ONLY_

enum stock_state {
	STOCK_NONE = 0,
	STOCK_ENABLED = PCSTOCK_STOCK_ENABLED_,
	STOCK_DISABLED,
	/* An EXACT stock's switches and exact state (stock.c). */
	STOCK_ENTERING,
	STOCK_EXACT,
	STOCK_LEAVING,
};

/*
 * An EXACT stock's own mark (stock.c, "exact at the limit"): half the
 * disable's, so that a slot carrying both, plus a batch, is still far
 * above INT_MIN and the hit's "slot - n" cannot overflow; negative, so
 * hits and refills fail on it as on the disable's.
 */
#define PCS_EXACT_MARK (PCSTOCK_STOCK_MARK_ / 2)

/* One CPU's statistics, right after its slot (pcstock/stock_inline.h). */
#define stock_cpu_stats pcstock_stock_pcpu_

/*
 * Out of line, so the hit paths that may reach them keep no frame: the
 * kinds' trim step (stock_steps.h), pages that could not stay in a slot
 * go up, counted in its CPU's statistics @st.
 */
void pcs_stock_step_trim(struct pcstock_counter *c,
			 struct stock_cpu_stats *st, unsigned long nr);

/* @c's slot and statistics in the region of one CPU. */
static inline atomic_int *pcs_slot_at(const struct pcstock_counter *c,
				      char *region)
{
	return &pcstock_inl_rec_(c, region)->slot;
}

static inline struct stock_cpu_stats *
pcs_stats_at(const struct pcstock_counter *c, char *region)
{
	return (struct stock_cpu_stats *)(void *)(region + c->stock_stats);
}

/*
 * Replace @slot's value *@old with @new, else reload *@old: every addition
 * to a slot.  release: pairs with the acquire CAS in pcstock_stock_take_(),
 * the acquire exchange of a drain and the acquire of a later flush in
 * pcs_refill_capped(): the charge of the pages added happens before their
 * uncharge.  acquire: a flush takes the slot's pages out as a drain does,
 * so it pairs with the release that put them there before
 * pcs_stock_step_trim() uncharges them.
 */
static inline bool pcs_slot_refill(atomic_int *slot, int *old, int new)
{
	return pcs_cas(slot, old, new, PCS_ORDER(HIT_REFILL, PCS_ACQ_REL),
		       PCS_RELAXED);
}

/*
 * The library compiles the public inline fast paths with its own access
 * wrappers (atomic.h: explorer, trace and weak-memory variants see every
 * access) and its planted-bug hooks, so there is one copy of each.
 */
#define pcstock_inl_load_(p, mo) pcs_load((p), (mo))
/* Its one ordered CAS here is pcstock_stock_take_()'s: the site HIT_TAKE. */
#define pcstock_inl_cas_(p, expected, desired, mo_ok, mo_fail)               \
	pcs_cas((p), (expected), (desired), PCS_ORDER(HIT_TAKE, mo_ok),      \
		(mo_fail))
#define pcstock_inl_stat_inc_(p) pcs_stat_add((p), 1)
#define pcstock_inl_refill_cas_(slot, old, new)                              \
	pcs_slot_refill((slot), (old), (new))
#include <pcstock/stock_inline.h>

/*
 * Whether an uncharge of @nr pages may go into a slot, @batch being the
 * counter's stock_refill_batch (0 unless the stock is enabled and of a kind
 * that refills on uncharge: DEFAULT, EXACT while not in its exact state).
 */
static inline bool pcstock_stock_refills_(unsigned int batch,
					  unsigned long nr)
{
	return nr - 1 < batch;
}

/*
 * DEFAULT: put @nr pages in the slot of the CPU whose region is @region
 * without ever taking it above @batch.  If they do not fit, the whole slot
 * goes back up the hierarchy with them (mainline's refill_stock()): a CPU
 * that only ever receives pages, the consumer of a cross-CPU flow, then
 * pays one hierarchical uncharge per batch instead of one per call, as it
 * would if the slot were kept full and only the excess sent up.  A marked
 * slot (a disabled stock) takes nothing: the pages go up alone.  With
 * @steps (a stock with a policy's steps, stock_steps.h) the trim is the
 * policy's; the kinds' callers pass false, which folds the test away.
 */
static inline void pcs_refill_capped_as(struct pcstock_counter *c,
					char *region, int batch, int nr,
					bool steps)
{
	atomic_int *slot = pcs_slot_at(c, region);
	struct stock_cpu_stats *st = pcs_stats_at(c, region);
	int old = pcs_load(slot, PCS_RELAXED);
	int want, new;

	/* No overflow: old and nr are at most batch <= MAX_BATCH. */
	do {
		if (old < 0) {
			pcstock_counter_uncharge(c, (unsigned long)nr);
			return;
		}
		want = old + nr;
		new = want > batch ? 0 : want;
	} while (!pcs_slot_refill(slot, &old, new));

	if (new != want && steps)
		pcs_stock_trim_steps(c, st, (unsigned long)want);
	else if (new != want)
		pcs_stock_step_trim(c, st, (unsigned long)want);
	else if (new > old)
		pcs_stat_add(&st->refills, 1);
}

/* The kinds' own, trimmed by pcs_stock_step_trim(). */
static inline void pcs_refill_capped(struct pcstock_counter *c, char *region,
				     int batch, int nr)
{
	pcs_refill_capped_as(c, region, batch, nr, false);
}

/*
 * @region, in a register: the slot's address is then one add from the
 * counter's handle in memory, which keeps the slot's address out of the
 * register the CAS needs (gcc otherwise adds the region from memory to the
 * handle, then moves the sum out: one more instruction on every hit).
 */
static inline char *pcs_in_reg(char *region)
{
	__asm__("" : "+r"(region));
	return region;
}

/*
 * Whether the thread's RSEQ entry serves @hit_key's domain on the OS CPU
 * the thread runs on now.  The thread may migrate right after: the slot is
 * then another CPU's, which costs locality, never pages (every slot
 * operation is an atomic RMW that any CPU may make).
 */
static inline bool pcs_rseq_cached(const struct pcstock_cpu_cache_ *f,
				   unsigned long long hit_key)
{
	return pcs_rseq_xor(hit_key, f->rseq_area) == f->rseq_tag;
}

/*
 * The charge hit: @hit_key is the counter's (or, for a group, its own,
 * which is the memory counter's while the group may take hits).  True if @nr
 * pages were taken from the slot of the thread's cached CPU.  The RSEQ
 * entry is only looked at when the other misses: its test costs the other
 * modes' hits nothing.
 */
static inline bool pcs_stock_take(struct pcstock_counter *c,
				  unsigned long long hit_key, unsigned long nr)
{
	const struct pcstock_cpu_cache_ *f = &pcstock_cpu_cache_;

	/* take_()'s own range test, first: then the slot is one add. */
	if (nr > PCSTOCK_STOCK_MAX_BATCH)
		return false;
	if (f->hit_key == hit_key)
		return pcstock_stock_take_(c, pcs_in_reg(f->region), nr);
	return pcs_rseq_cached(f, hit_key) &&
	       pcstock_stock_take_(c, pcs_in_reg(f->rseq_region), nr);
}

/* The uncharge's refill of the cached CPU's slot, as pcs_stock_take(). */
static inline bool pcs_stock_give(struct pcstock_counter *c,
				  unsigned long long hit_key, unsigned int batch,
				  unsigned long nr)
{
	const struct pcstock_cpu_cache_ *f = &pcstock_cpu_cache_;

	if (f->hit_key == hit_key)
		return pcstock_stock_give_at_(c, pcs_in_reg(f->region), batch,
					      nr);
	return pcs_rseq_cached(f, hit_key) &&
	       pcstock_stock_give_at_(c, pcs_in_reg(f->rseq_region), batch,
				      nr);
}

#endif /* PCSTOCK_STOCK_HIT_H */
