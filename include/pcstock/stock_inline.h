/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/stock_inline.h - the stock's hit and uncharge fast paths, inline.
 *
 * Do not include this file directly.  A C program that defines
 * PCSTOCK_INLINE before including <pcstock/stock.h> (or <pcstock/pcstock.h>)
 * gets pcstock_counter_try_charge_stock() and
 * pcstock_counter_uncharge_stock() as static inline functions: a stock hit
 * is then about a dozen instructions in the caller, no call, no PLT (the
 * opt-in of liburcu's _LGPL_SOURCE).  Every other case (no cached CPU, a
 * slot that cannot serve, a disabled or unstocked counter) calls the
 * exported function, which redoes the checks and runs the whole algorithm.
 * The library builds its exported functions from the same inline code
 * (src/stock_hit.h), so results, statistics and memory ordering are the
 * same either way; a program that does not define PCSTOCK_INLINE, and every
 * C++ program, calls the exported functions, whose ABI is unchanged.
 *
 * The price of opting in: the program is compiled against this version's
 * layout of struct pcstock_counter, of the per-CPU statistics below and of
 * the thread's CPU cache (pcstock/cpu_cache.h), so it must run with the
 * library version it was built with (check pcstock_version_number() against
 * PCSTOCK_VERSION_NUMBER at start-up if it may not).  The names ending in
 * an underscore are exported for these functions only: they are no API.
 */
#ifndef PCSTOCK_STOCK_INLINE_TYPES_H
#define PCSTOCK_STOCK_INLINE_TYPES_H

#ifdef __cplusplus
#error "PCSTOCK_INLINE is C only: C++ calls the exported functions"
#endif

#include <stdatomic.h>
#include <stdbool.h>

#include <pcstock/common.h>
#include <pcstock/counter.h>
#include <pcstock/cpu_cache.h>	/* struct pcstock_cpu_cache_ */

/*
 * One CPU's statistics of one stocked counter (struct pcstock_stock_stats
 * sums them over CPUs).
 */
struct pcstock_stock_pcpu_ {
	_Atomic unsigned long hits;
	_Atomic unsigned long misses;
	_Atomic unsigned long refills;
	_Atomic unsigned long drains;
	_Atomic unsigned long drained_pages;
	_Atomic unsigned long trims;
};

/*
 * What a stocked counter has on each CPU, one per-CPU allocation: the
 * 4-byte slot, then that CPU's statistics, so a hit writes one line and
 * finds its statistics from the slot's address.  The counter's stock_slots
 * handle is the record's, its stock_stats handle the statistics'.
 */
struct pcstock_stock_rec_ {
	_Atomic int slot;
	struct pcstock_stock_pcpu_ stats;
};

/* stock_state while the stock takes and gives pages. */
#define PCSTOCK_STOCK_ENABLED_ 1

/*
 * The disable mark.  pcstock_counter_disable_stock() adds it to every slot with
 * one atomic RMW, keeping the pages there: a marked slot holds MARK + pages,
 * which is negative (a DEFAULT slot holds at most a batch,
 * PCSTOCK_STOCK_MAX_BATCH; a V4 slot is drained by the refill that takes it
 * past PCSTOCK_STOCK_V4_CEILING, 2^24, and would need some 16,000 racing
 * refills of the largest batch to get from there to 2^30), so the hit's "slot
 * - n >= 0" and the refill's "slot + n <= batch" (as unsigned) both fail on it
 * without another load.  Every addition to a slot is an RMW of the slot itself,
 * so it either lands before the mark (and stays with the pages, drained as
 * they are) or sees it: the disable handshake needs no second look at the
 * state.  A slot of an enabled stock is never negative.
 */
#define PCSTOCK_STOCK_MARK_ (-0x40000000)

/*
 * @c's record in the region of one CPU.  The per-CPU allocator aligns
 * every record as its type (the cast goes through void * so that clang's
 * -Wcast-align, which cannot know that, stays quiet in a user's build).
 */
static inline struct pcstock_stock_rec_ *
pcstock_inl_rec_(const struct pcstock_counter *c, char *region)
{
	return (struct pcstock_stock_rec_ *)(void *)(region + c->stock_slots);
}

#endif /* PCSTOCK_STOCK_INLINE_TYPES_H */

/*
 * The library's tests that override the access hooks take the types
 * above alone first.
 */
#if !defined(PCSTOCK_STOCK_INLINE_H) && !defined(PCSTOCK_INLINE_TYPES_ONLY_)
#define PCSTOCK_STOCK_INLINE_H

/*
 * The accesses, each overridable by the library's test variants (schedule
 * explorer, trace, planted bugs).  A statistic is lossy, updated without an
 * atomic RMW: on x86-64 one non-locked add to memory.
 */
#ifndef pcstock_inl_load_
#define pcstock_inl_load_(p, mo) atomic_load_explicit((p), (mo))
#endif
#ifndef pcstock_inl_cas_
#define pcstock_inl_cas_(p, expected, desired, mo_ok, mo_fail)               \
	atomic_compare_exchange_strong_explicit((p), (expected), (desired),  \
						(mo_ok), (mo_fail))
#endif
/*
 * Under ThreadSanitizer the increment is a relaxed load and store, which the
 * sanitizer sees, rather than an asm it cannot.  gcc spells the build
 * __SANITIZE_THREAD__, clang __has_feature(thread_sanitizer).
 */
#if defined(__SANITIZE_THREAD__)
#define PCSTOCK_INL_TSAN_ 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PCSTOCK_INL_TSAN_ 1
#endif
#endif
#ifndef pcstock_inl_stat_inc_
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PCSTOCK_INL_TSAN_)
#define pcstock_inl_stat_inc_(p)                                             \
	__asm__("addq $1, %0" : "+m"(*(p)))
#else
#define pcstock_inl_stat_inc_(p)                                             \
	atomic_store_explicit((p), atomic_load_explicit((p),                 \
		memory_order_relaxed) + 1, memory_order_relaxed)
#endif
#endif
#ifndef pcstock_inl_hit_stats_
/* The statistics a hit or refill of @c counts in: its record's. */
#define pcstock_inl_hit_stats_(c, rec) (&(rec)->stats)
#endif
#ifndef pcstock_inl_refill_cas_
/*
 * Every addition to a slot.  release: pairs with the acquire CAS of
 * pcstock_stock_take_() and the acquire exchange of a drain, so the
 * charge of the pages added happens before their uncharge.
 */
#define pcstock_inl_refill_cas_(slot, old, new)                              \
	pcstock_inl_cas_((slot), (old), (new), memory_order_release,         \
			 memory_order_relaxed)
#endif

/*
 * Take @nr pages from @c's slot in @region if it holds that many.  True on
 * a hit.  A marked (disabled) slot is negative and never serves here.  The
 * bound on @nr keeps old - nr in range; a constant @nr folds it away.
 */
static inline bool pcstock_stock_take_(struct pcstock_counter *c,
				       char *region, unsigned long nr)
{
	struct pcstock_stock_rec_ *rec = pcstock_inl_rec_(c, region);
	_Atomic int *slot = &rec->slot;
	int old, new;

	if (nr > PCSTOCK_STOCK_MAX_BATCH)
		return false;
	old = pcstock_inl_load_(slot, memory_order_relaxed);
	while ((new = old - (int)nr) >= 0) {
		/*
		 * acquire: pairs with the release of pcstock_inl_refill_cas_()
		 * (and of the V4 refill's addition), so the charge that put
		 * these pages in the slot happens before the caller's later
		 * uncharge of them.  A failed CAS reloads old.
		 */
		if (pcstock_inl_cas_(slot, &old, new, memory_order_acquire,
				     memory_order_relaxed)) {
			pcstock_inl_stat_inc_(
				&pcstock_inl_hit_stats_(c, rec)->hits);
			return true;
		}
	}
	return false;
}

/*
 * Put @nr pages (1..PCSTOCK_STOCK_MAX_BATCH) in @c's slot in @region if
 * the slot stays within @batch, the counter's stock_refill_batch (0 unless
 * an enabled DEFAULT stock, so that nothing fits then).  A marked slot is
 * negative: slot + @nr is then negative too, above every batch as
 * unsigned, and nothing is added.  False, untouched, otherwise.
 */
static inline bool pcstock_stock_give_at_(struct pcstock_counter *c,
					  char *region, unsigned int batch,
					  unsigned long nr)
{
	struct pcstock_stock_rec_ *rec = pcstock_inl_rec_(c, region);
	_Atomic int *slot = &rec->slot;
	int old, want;

	old = pcstock_inl_load_(slot, memory_order_relaxed);
	/*
	 * No overflow: old is at most a batch (MAX_BATCH) or, marked, at
	 * least PCSTOCK_STOCK_MARK_, and nr at most MAX_BATCH.
	 */
	do {
		want = old + (int)nr;
		if ((unsigned int)want > batch)
			return false;
	} while (!pcstock_inl_refill_cas_(slot, &old, want));
	pcstock_inl_stat_inc_(&pcstock_inl_hit_stats_(c, rec)->refills);
	return true;
}

/*
 * pcstock_stock_give_at_() the thread's cached CPU, if @hit_key is the
 * cache's.
 */
static inline bool pcstock_stock_give_(struct pcstock_counter *c,
				       unsigned long long hit_key,
				       unsigned int batch, unsigned long nr)
{
	const struct pcstock_cpu_cache_ *f = &pcstock_cpu_cache_;

	return f->hit_key == hit_key &&
	       pcstock_stock_give_at_(c, f->region, batch, nr);
}

#if defined(PCSTOCK_INLINE) && !defined(PCSTOCK_BUILDING_LIBRARY)
/* pcstock_counter_try_charge_stock(), its hit inline. */
static inline bool
pcstock_counter_try_charge_stock_inline_(struct pcstock_counter *c,
					 unsigned long nr_pages,
					 struct pcstock_counter **fail,
					 unsigned long *nr_charged)
{
	const struct pcstock_cpu_cache_ *f = &pcstock_cpu_cache_;

	if (f->hit_key == c->hit_key &&
	    pcstock_stock_take_(c, f->region, nr_pages)) {
		if (nr_charged)
			*nr_charged = 0;
		return true;
	}
	return (pcstock_counter_try_charge_stock)(c, nr_pages, fail,
						  nr_charged);
}

/* pcstock_counter_uncharge_stock(), its refill of the local slot inline. */
static inline void
pcstock_counter_uncharge_stock_inline_(struct pcstock_counter *c,
				       unsigned long nr_pages)
{
	/*
	 * No test of the batch first: a stock that does not refill has
	 * batch 0, where nothing fits.  A constant nr_pages folds the range
	 * test.
	 */
	if (nr_pages - 1 >= PCSTOCK_STOCK_MAX_BATCH ||
	    !pcstock_stock_give_(c, c->hit_key,
				 pcstock_inl_load_(&c->stock_refill_batch,
						   memory_order_relaxed),
				 nr_pages))
		(pcstock_counter_uncharge_stock)(c, nr_pages);
}

#define pcstock_counter_try_charge_stock(c, nr_pages, fail, nr_charged)      \
	pcstock_counter_try_charge_stock_inline_((c), (nr_pages), (fail),    \
						 (nr_charged))
#define pcstock_counter_uncharge_stock(c, nr_pages)                          \
	pcstock_counter_uncharge_stock_inline_((c), (nr_pages))
#endif /* PCSTOCK_INLINE */

#endif /* PCSTOCK_STOCK_INLINE_H */
