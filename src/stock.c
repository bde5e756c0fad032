// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stock.c - the per-counter per-CPU charge stock.
 *
 * Each stocked counter owns one atomic_int slot per CPU of a domain, in the
 * domain's per-CPU arena, holding pages already charged to the hierarchy
 * but not yet handed out.  The kinds share the code, told apart by one
 * flag per review finding of the series (enum stock_flags): V4 has none,
 * DEFAULT all three, EXACT those and its own.
 *
 *  V4       the series as posted (v4 3/5): consume with a CAS loop on this
 *           CPU's slot; on a miss charge max(batch, n) and add the surplus
 *           to the slot of the CPU the caller is on *then*; fall back to an
 *           exact charge; drain with an unconditional exchange; uncharges
 *           go straight up the hierarchy; nothing caps a slot below
 *           PCSTOCK_STOCK_V4_CEILING (ours, far above any batch: a refill
 *           past it drains the slot, so the int never nears the mark).
 *  DEFAULT  the same charge path with the review findings fixed: every
 *           addition to a slot is one CAS that never takes it above batch
 *           (an addition that would overflow empties the slot instead and
 *           sends its pages up with the new ones, as mainline's
 *           refill_stock() does; counted as trims), so no slot ever holds
 *           more than batch; a drain reads before it exchanges; uncharges
 *           of up to batch pages refill the local slot (the netperf
 *           -73.9 % report); larger charges and uncharges bypass the
 *           stock.
 *  EXACT    DEFAULT while every level of the ancestry is far from its max,
 *           no stock near it (see "exact at the limit" below).  Its checks
 *           and switches are on the miss path only: its hit and its
 *           uncharge into the slot are DEFAULT's, with no code added.
 *
 * Memory ordering.  A page in a slot was charged to usage by whoever put it
 * there; whoever takes it out may uncharge it.  If that uncharge could land
 * before the charge in usage's modification order, usage would go
 * transiently negative, be clamped to 0 by pcstock_counter_cancel() and the
 * charge would be lost for good.  So every addition to a slot is a release
 * and every removal (the consume CAS, the drain exchange, the flush of an
 * overflowing slot) an acquire: the charge then happens before the
 * uncharge, and coherence orders the two RMWs on usage the same way.
 *
 * The slot of a CPU is only ever changed by atomic read-modify-writes, so a
 * thread that migrates between reading its CPU and touching the slot (or
 * two threads sharing one simulated CPU) only costs locality, never pages.
 * The statistics are not: they are bumped with a relaxed load and store to
 * keep the hit path at one locked instruction, and a thread sharing its CPU
 * can lose an update.
 *
 * Lifecycle state (stock_state): NONE means the counter is plain and every
 * stocked call is the plain call; ENABLED; DISABLED stops additions to the
 * slots (charges exact, uncharges straight up) while consumption of what is
 * left and drains go on.  alloc and free are not concurrent with stocked
 * calls (documented contract); disable is.  A disable marks every slot
 * (PCSTOCK_STOCK_MARK_, pcstock/stock_inline.h) with one RMW that keeps its
 * pages: a call that read ENABLED just before may still try to refill, but
 * its addition is an RMW of the same slot, so it either lands before the
 * mark (and its pages are drained with the others) or sees the mark and
 * sends its pages up instead (V4, whose addition cannot look first, drains
 * the slot after it).  So a disable followed by a drain of every CPU leaves
 * no page behind, and no later call puts one back.  A drain keeps the mark:
 * if its exchange took a marked value it puts the mark back, and takes
 * what was added in between too.
 */
#include <assert.h>
#include <stddef.h>

#include <pcstock/cpu.h>
#include <pcstock/percpu.h>
#include <pcstock/stock.h>

#include "stock_impl.h"

static_assert(PCSTOCK_STOCK_MAX_BATCH <= INT_MAX / 2,
	      "a full slot plus a batch must fit in an int");
static_assert(PCSTOCK_STOCK_V4_CEILING + 16000ULL * PCSTOCK_STOCK_MAX_BATCH <
		      -(long long)PCSTOCK_STOCK_MARK_,
	      "a V4 slot past its ceiling needs 16,000 racing refills to "
	      "reach the mark");


/* ---- per-CPU access ------------------------------------------------------- */


/* Out of line, so that the other modes' this_region() stays small. */
static __attribute__((noinline)) int rseq_cpu(struct pcstock_domain *d,
					      bool cache)
{
	return pcs_rseq_cpu_cache(d, cache);
}

/*
 * The region of the CPU the caller is (NULL: none), found the long way;
 * with @cache, kept for the hit paths (an RSEQ domain's in the cache's
 * RSEQ entry, with the OS CPU it is valid for: see domain.h).
 */
static inline __attribute__((always_inline)) char *
this_region(const struct pcstock_counter *c, bool cache)
{
	struct pcstock_domain *d = c->stock_domain;
	int cpu;

	if (d->mode == PCSTOCK_CPU_RSEQ) {
		cpu = rseq_cpu(d, cache);
	} else {
		cpu = pcs_this_cpu(d);
		if (cache && cpu >= 0)
			pcs_fast_set(d, (unsigned int)cpu);
	}
	return cpu < 0 ? NULL : region_of(c, (unsigned int)cpu);
}


/* ---- slot operations ------------------------------------------------------ */

/*
 * Pages that could not stay in a slot (the flushed slot's and the ones
 * being added) go back up.  The flushing CAS in pcs_refill_capped()
 * acquired the slot's pages, so their charges happen before this uncharge.
 */
__attribute__((noinline)) void pcs_stock_step_trim(struct pcstock_counter *c,
						   struct stock_cpu_stats *st,
						   unsigned long nr)
{
	pcstock_counter_uncharge(c, nr);
	pcs_stat_add(&st->trims, nr);
}

/* A policy's step (stock_steps.h), or its kind's own. */
#define STEP(c, name)                                                        \
	(steps_of(c)->name ? steps_of(c)->name : pcs_stock_step_##name)

void pcs_stock_trim_steps(struct pcstock_counter *c,
			  struct stock_cpu_stats *st, unsigned long nr)
{
	STEP(c, trim)(c, st, nr);
}

static unsigned long slot_drain(struct pcstock_counter *c, unsigned int cpu,
			       int seen);

/*
 * V4: atomic_add of the surplus, capped only by PCSTOCK_STOCK_V4_CEILING
 * (ours): an addition that takes the slot past it drains the slot, so no
 * sequence of refills can carry a slot into the mark's range.
 */
static inline __attribute__((always_inline)) void
refill_v4(struct pcstock_counter *c, char *region, unsigned long nr)
{
	/*
	 * release: pairs with the acquire CAS in pcstock_stock_take_() and
	 * the acquire exchange of a drain.  The series has no disable; ours
	 * covers both policies: an addition to a marked slot put the pages
	 * in a disabled stock, so this call drains it, pages and mark kept
	 * apart as any drain does.
	 */
	int old = pcs_fetch_add(pcs_slot_at(c, region), (int)nr,
				PCS_ORDER(STOCK_V4_REFILL, PCS_RELEASE));

	pcs_stat_add(&pcs_stats_at(c, region)->refills, 1);
	/* No overflow: old is below the mark's 2^30, nr at most MAX_BATCH. */
	if (old < 0 || old + (int)nr > (int)PCSTOCK_STOCK_V4_CEILING)
		slot_drain(c, pcs_region_cpu(c->stock_domain, region), old);
}

/* ---- charging ------------------------------------------------------------- */


/*
 * Take every page out of @slot, last seen as @seen, and leave its marks as
 * they are: an EXACT stock lifts its own mark (exact_leave()), which an
 * exchange writing a mark back could undo or double.  acquire: as the
 * exchanges of slot_drain().
 */
static unsigned long slot_take_all(atomic_int *slot, int seen)
{
	int v = seen;

	while (exact_slot_pages(v)) {
		if (pcs_cas(slot, &v, v - (int)exact_slot_pages(v),
			    PCS_ORDER(STOCK_TAKE_ALL, PCS_ACQUIRE),
			    PCS_RELAXED))
			return exact_slot_pages(v);
	}
	return 0;
}

/* Uncharge the @nr pages a drain took from @cpu's slot, and count them. */
static unsigned long drained(struct pcstock_counter *c, unsigned int cpu,
			     unsigned long nr)
{
	struct stock_cpu_stats *st;

	if (!nr)
		return 0;
	pcstock_counter_uncharge(c, nr);
	/*
	 * Remote drains of one CPU may run concurrently and are not the
	 * hot path: real RMWs keep these two figures exact.
	 */
	st = stats_of(c, cpu);
	pcs_fetch_add(&st->drains, 1, PCS_RELAXED);
	pcs_fetch_add(&st->drained_pages, nr, PCS_RELAXED);
	return nr;
}

/*
 * Empty @cpu's slot of @c, whose value was last seen as @seen (0 if not
 * read), keeping its mark, and uncharge the pages.  The exchanges are
 * acquires: they pair with the release addition in pcs_refill_capped(),
 * pcstock_stock_give_() or refill_v4(), so the charge that created these
 * pages happens before the uncharge below.
 */
static unsigned long slot_drain(struct pcstock_counter *c, unsigned int cpu,
				int seen)
{
	atomic_int *slot = slot_of(c, cpu);
	unsigned long nr;
	int old;

	old = pcs_xchg(slot, seen < 0 ? PCSTOCK_STOCK_MARK_ : 0,
		       PCS_ORDER(STOCK_DRAIN, PCS_ACQUIRE));
	nr = slot_pages(old);
	/*
	 * Marked, but we wrote 0: put the mark back, with whatever was added
	 * or taken meanwhile (an unmarked slot served as any slot does).
	 */
	if (old < 0 && seen >= 0)
		nr += slot_pages(pcs_xchg(slot, PCSTOCK_STOCK_MARK_,
				PCS_ORDER(STOCK_REMARK, PCS_ACQUIRE)));
	return drained(c, cpu, nr);
}

atomic_int *pcs_step_slot_of(struct pcstock_counter *c, unsigned int cpu)
{
	return slot_of(c, cpu);
}

unsigned long pcs_step_pages(const struct pcstock_counter *c, int v)
{
	return pages_of(c, v);
}

unsigned long pcs_step_drained(struct pcstock_counter *c, unsigned int cpu,
			       unsigned long nr)
{
	return drained(c, cpu, nr);
}

unsigned long pcstock_counter_drain_stock(struct pcstock_counter *c,
					  unsigned int cpu)
{
	int seen = 0;

	if (!c || pcs_load(&c->stock_state, PCS_RELAXED) == STOCK_NONE ||
	    cpu >= nr_cpus(c))
		return 0;
	/*
	 * DEFAULT reads first (the v4 review point): an empty slot then
	 * costs a shared read instead of pulling the owner's line
	 * exclusive.  Best effort: the slot may fill right after the read,
	 * as it may right after an exchange.  V4 exchanges unconditionally,
	 * as the series does.  The disable's own drain cannot miss pages:
	 * its read comes after its mark, an RMW of the same slot.
	 */
	if (has_flag(c, STOCK_READ_DRAIN)) {
		seen = pcs_load(slot_of(c, cpu), PCS_RELAXED);
		/* An empty slot first: drain_all's common case, one test. */
		if (!seen || !pages_of(c, seen))
			return 0;
		/*
		 * EXACT keeps the slot's marks (slot_take_all()); a policy's
		 * own steps drain their way (a stock with steps always reads
		 * first: one test here for both).
		 */
		if (has_flag(c, STOCK_AT_LIMIT | STOCK_STEPS))
			return has_flag(c, STOCK_STEPS) ?
				       STEP(c, drain)(c, cpu, seen) :
				       pcs_stock_step_drain(c, cpu, seen);
	}
	return slot_drain(c, cpu, seen);
}

unsigned long pcs_stock_step_drain(struct pcstock_counter *c, unsigned int cpu,
				   int seen)
{
	if (has_flag(c, STOCK_AT_LIMIT))
		return drained(c, cpu, slot_take_all(slot_of(c, cpu), seen));
	return slot_drain(c, cpu, seen);
}

/* The plain call: unstocked counter, no CPU, large or disabled refill. */
bool pcs_stock_charge_exact(struct pcstock_counter *c, unsigned long nr_pages,
			 struct pcstock_counter **fail,
			 unsigned long *nr_charged)
{
	if (!pcstock_counter_try_charge(c, nr_pages, fail))
		return false;
	if (nr_charged)
		*nr_charged = nr_pages;
	return true;
}

/*
 * Take @nr pages from the slot in @region if it holds them and is @marked
 * or not as asked: a disabled stock's pages are still consumed from its
 * marked slot, the mark kept; and V4 serves any charge its slot covers
 * (the series' try_charge_stock(): old >= n), while its slot may hold
 * more than the largest batch, beyond which pcstock_stock_take_() stops.
 * acquire: as pcstock_stock_take_().
 */
static inline __attribute__((always_inline)) bool
take_pages(struct pcstock_counter *c, char *region, unsigned long nr,
	   bool marked)
{
	atomic_int *slot = pcs_slot_at(c, region);
	int old = pcs_load(slot, PCS_RELAXED);

	/* (int)nr: nr is at most the pages of a slot. */
	while ((old < 0) == marked && pages_of(c, old) >= nr) {
		if (pcs_cas(slot, &old, old - (int)nr,
			    PCS_ORDER(STOCK_TAKE, PCS_ACQUIRE), PCS_RELAXED)) {
			pcs_stat_add(&pcs_stats_at(c, region)->hits, 1);
			return true;
		}
	}
	return false;
}

bool pcs_stock_step_take(struct pcstock_counter *c, char *region,
			 unsigned long nr, bool marked)
{
	return take_pages(c, region, nr, marked);
}

/* V4: charge = max(batch, n), exact if that is n. */
unsigned long pcs_stock_step_refill_size(struct pcstock_counter *c,
					 unsigned int batch, unsigned long nr)
{
	(void)c;
	return nr >= batch ? nr : batch;
}

void pcs_stock_step_refill(struct pcstock_counter *c, char *region,
			   unsigned int batch, unsigned long nr)
{
	if (!has_flag(c, STOCK_CAPPED))
		refill_v4(c, region, nr);
	else
		pcs_refill_capped_as(c, region, (int)batch, (int)nr,
				     has_flag(c, STOCK_STEPS));
}

/*
 * The surplus of a batch charge, @batch - @nr_pages, for the slot in @now,
 * by a capped kind other than DEFAULT: an EXACT stock keeps it only while
 * every margin stays above what its slots can hide, and else sends it
 * back up and goes exact.
 */
static __attribute__((noinline)) bool
refill_at_limit(struct pcstock_counter *c, char *now, unsigned int batch,
		unsigned long nr_pages, unsigned long *nr_charged)
{
	if (has_flag(c, STOCK_AT_LIMIT) &&
	    !pcs_exact_margins_at_least(c, pcs_exact_hide_bound(c))) {
		pcstock_counter_uncharge(c, batch - nr_pages);
		pcs_exact_enter(c);
		if (nr_charged)
			*nr_charged = nr_pages;
		return true;
	}
	pcs_refill_capped(c, now, (int)batch, (int)(batch - nr_pages));
	if (nr_charged)
		*nr_charged = batch;
	return true;
}

/*
 * The slot in @region could not serve @nr_pages: charge max(batch, n) and
 * keep the surplus, else exactly n.
 */
static __attribute__((noinline)) bool
slot_miss(struct pcstock_counter *c, char *region, unsigned long nr_pages,
	  struct pcstock_counter **fail, unsigned long *nr_charged)
{
	unsigned char state = pcs_load(&c->stock_state, PCS_RELAXED);
	unsigned int batch = pcs_load(&c->stock_batch, PCS_RELAXED);
	char *now;

	if ((state != STOCK_ENABLED || nr_pages > PCSTOCK_STOCK_MAX_BATCH) &&
	    take_pages(c, region, nr_pages, state != STOCK_ENABLED)) {
		if (nr_charged)
			*nr_charged = 0;
		return true;
	}
	pcs_stat_add(&pcs_stats_at(c, region)->misses, 1);
	/* V4: charge = max(batch, n), exact if that is n: the same test. */
	if (state != STOCK_ENABLED || nr_pages >= batch ||
	    !pcstock_counter_try_charge(c, batch, fail)) {
		if (has_flag(c, STOCK_AT_LIMIT))
			return pcs_exact_charge(c, state, nr_pages, fail,
					    nr_charged);
		return pcs_stock_charge_exact(c, nr_pages, fail, nr_charged);
	}

	/* The CPU we are on now, which may not be @region's. */
	now = this_region(c, false);
	if (!now) {
		/* No slot to keep the surplus in: @nr_pages stay charged. */
		pcstock_counter_uncharge(c, batch - nr_pages);
		batch = (unsigned int)nr_pages;
	} else if (c->stock_policy == STOCK_DEFAULT_FLAGS)
		pcs_refill_capped(c, now, (int)batch, (int)(batch - nr_pages));
	else if (!has_flag(c, STOCK_CAPPED))
		refill_v4(c, now, batch - nr_pages);
	else
		return refill_at_limit(c, now, batch, nr_pages, nr_charged);
	if (nr_charged)
		*nr_charged = batch;
	return true;
}

/*
 * charge_on() for a stock with a policy's steps (stock_steps.h): slot_miss()
 * with each step asked of the policy, and the take serving the hits too.
 */
static __attribute__((noinline)) bool
charge_steps(struct pcstock_counter *c, char *region, unsigned long nr_pages,
	     struct pcstock_counter **fail, unsigned long *nr_charged)
{
	unsigned char state = pcs_load(&c->stock_state, PCS_RELAXED);
	unsigned int batch = pcs_load(&c->stock_batch, PCS_RELAXED);
	unsigned long size = nr_pages;
	char *now;

	if (STEP(c, take)(c, region, nr_pages, state != STOCK_ENABLED)) {
		if (nr_charged)
			*nr_charged = 0;
		return true;
	}
	pcs_stat_add(&pcs_stats_at(c, region)->misses, 1);
	if (state == STOCK_ENABLED) {
		size = STEP(c, refill_size)(c, batch, nr_pages);
		/*
		 * The step's contract (stock_steps.h): the request, plus a
		 * surplus of at most a batch, which @refill can hold.  A
		 * policy that breaks it is a bug to report, not to absorb.
		 */
		if (size < nr_pages || size - nr_pages > batch)
			pcs_die("stock policy's refill_size(batch %u, nr %lu)"
				" returned %lu, outside [nr, nr + batch]",
				batch, nr_pages, size);
	}
	if (size <= nr_pages || !pcstock_counter_try_charge(c, size, fail)) {
		if (has_flag(c, STOCK_AT_LIMIT))
			return pcs_exact_charge(c, state, nr_pages, fail,
						nr_charged);
		return pcs_stock_charge_exact(c, nr_pages, fail, nr_charged);
	}
	/* The CPU we are on now, which may not be @region's. */
	now = this_region(c, false);
	if (now && has_flag(c, STOCK_AT_LIMIT) &&
	    !pcs_exact_margins_at_least(c, pcs_exact_hide_bound(c))) {
		pcstock_counter_uncharge(c, size - nr_pages);
		pcs_exact_enter(c);
		size = nr_pages;
	} else if (now) {
		STEP(c, refill)(c, now, batch, size - nr_pages);
	} else {
		/* No slot to keep the surplus in: @nr_pages stay charged. */
		pcstock_counter_uncharge(c, size - nr_pages);
		size = nr_pages;
	}
	if (nr_charged)
		*nr_charged = size;
	return true;
}

/* Charge through the slot of the CPU whose region is @region. */
static inline bool charge_on(struct pcstock_counter *c, char *region,
			     unsigned long nr_pages,
			     struct pcstock_counter **fail,
			     unsigned long *nr_charged)
{
	if (!pcstock_stock_take_(c, region, nr_pages))
		return slot_miss(c, region, nr_pages, fail, nr_charged);
	if (nr_charged)
		*nr_charged = 0;
	return true;
}

/*
 * The miss of a thread whose cached region served the try: the region read
 * again here, so that the hit keeps no register for it.
 */
static __attribute__((noinline)) bool
slot_miss_cached(struct pcstock_counter *c, unsigned long nr_pages,
		 struct pcstock_counter **fail, unsigned long *nr_charged)
{
	return slot_miss(c, pcstock_cpu_cache_.region, nr_pages, fail,
			 nr_charged);
}

/*
 * No cached region for this counter's domain (first call, another domain,
 * RSEQ, no CPU) or an unstocked counter.
 */
static __attribute__((noinline)) bool
charge_uncached(struct pcstock_counter *c, unsigned long nr_pages,
		struct pcstock_counter **fail, unsigned long *nr_charged)
{
	char *region;

	/* Set by alloc and cleared by free, never concurrently with us. */
	if (!c->stock_domain)
		return pcs_stock_charge_exact(c, nr_pages, fail, nr_charged);
	region = this_region(c, true);
	if (!region)
		return pcs_stock_charge_exact(c, nr_pages, fail, nr_charged);
	/* A stock with steps never has a cached region: all its calls. */
	if (has_flag(c, STOCK_STEPS))
		return charge_steps(c, region, nr_pages, fail, nr_charged);
	return charge_on(c, region, nr_pages, fail, nr_charged);
}

bool pcstock_counter_try_charge_stock(struct pcstock_counter *c,
				      unsigned long nr_pages,
				      struct pcstock_counter **fail,
				      unsigned long *nr_charged)
{
	const struct pcstock_cpu_cache_ *f = &pcstock_cpu_cache_;

	if (f->hit_key != c->hit_key)
		return charge_uncached(c, nr_pages, fail, nr_charged);
	/* take_()'s own range test, first: then the slot is one add. */
	if (nr_pages > PCSTOCK_STOCK_MAX_BATCH ||
	    !pcstock_stock_take_(c, f->region, nr_pages))
		return slot_miss_cached(c, nr_pages, fail, nr_charged);
	if (nr_charged)
		*nr_charged = 0;
	return true;
}

/*
 * An uncharge that may refill, by a thread with no cached region: RSEQ,
 * the first call in a domain, or inside a group's reclaim or OOM callback,
 * where the pages go straight up (domain.h's pcs_tls_uncached).
 */
static __attribute__((noinline)) void
uncharge_uncached(struct pcstock_counter *c, unsigned int batch,
		  unsigned long nr_pages)
{
	char *region = pcs_tls_uncached ? NULL : this_region(c, true);

	if (!region)
		pcstock_counter_uncharge(c, nr_pages);
	else if (has_flag(c, STOCK_STEPS))	/* always here (charge_steps()) */
		STEP(c, refill)(c, region, batch, nr_pages);
	else
		pcs_refill_capped(c, region, (int)batch, (int)nr_pages);
}

/*
 * An uncharge that may refill but did not fit the cached CPU's slot (which
 * is then flushed up with the pages; a marked slot sends them up alone),
 * or found no cached region.
 */
static __attribute__((noinline)) void
uncharge_slow(struct pcstock_counter *c, unsigned int batch,
	      unsigned long nr_pages)
{
	const struct pcstock_cpu_cache_ *f = &pcstock_cpu_cache_;

	if (f->hit_key != c->hit_key)
		uncharge_uncached(c, batch, nr_pages);
	else
		pcs_refill_capped(c, f->region, (int)batch, (int)nr_pages);
}

/*
 * The batch is tested first, unlike in the inline path: a stock that does
 * not refill (V4, disabled) goes straight up, at the cost of its policy.
 */
void pcstock_counter_uncharge_stock(struct pcstock_counter *c,
				    unsigned long nr_pages)
{
	unsigned int batch = pcs_load(&c->stock_refill_batch, PCS_RELAXED);

	if (!pcstock_stock_refills_(batch, nr_pages))
		pcstock_counter_uncharge(c, nr_pages);
	else if (!pcs_stock_give(c, c->hit_key, batch, nr_pages))
		uncharge_slow(c, batch, nr_pages);
}
