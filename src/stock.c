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
#include <errno.h>
#include <stdalign.h>
#include <stddef.h>

#include <pcstock/cpu.h>
#include <pcstock/percpu.h>
#include <pcstock/stock.h>

#include "atomic.h"
#include "domain.h"
#include "internal.h"
#include "stock_hit.h"

static_assert(PCSTOCK_STOCK_MAX_BATCH <= INT_MAX / 2,
	      "a full slot plus a batch must fit in an int");
static_assert(PCSTOCK_STOCK_V4_CEILING + 16000ULL * PCSTOCK_STOCK_MAX_BATCH <
		      -(long long)PCSTOCK_STOCK_MARK_,
	      "a V4 slot past its ceiling needs 16,000 racing refills to "
	      "reach the mark");

/*
 * What a kind of stock does, in c->stock_policy: one flag per review
 * finding of the series, so that V4 is "no flags", DEFAULT "all three", and
 * each fix can be measured on its own.
 */
enum stock_flags {
	/* A refill never takes a slot above batch (else refill_v4()). */
	STOCK_CAPPED = 1U << 0,
	/* A drain reads the slot before it exchanges (skips an empty one). */
	STOCK_READ_DRAIN = 1U << 1,
	/* Uncharges of up to batch pages refill the local slot. */
	STOCK_UNCHARGE_REFILL = 1U << 2,
	/* Stops stocking near max (EXACT: see "exact at the limit"). */
	STOCK_AT_LIMIT = 1U << 3,
};

#define STOCK_DEFAULT_FLAGS                                                  \
	(STOCK_CAPPED | STOCK_READ_DRAIN | STOCK_UNCHARGE_REFILL)

static const unsigned char kind_flags[] = {
	[PCSTOCK_STOCK_DEFAULT] = STOCK_DEFAULT_FLAGS,
	[PCSTOCK_STOCK_V4] = 0,
	[PCSTOCK_STOCK_EXACT] = STOCK_DEFAULT_FLAGS | STOCK_AT_LIMIT,
};

static inline bool has_flag(const struct pcstock_counter *c,
			    enum stock_flags f)
{
	return c->stock_policy & f;
}

/* ---- per-CPU access ------------------------------------------------------- */

static inline char *region_of(const struct pcstock_counter *c,
			      unsigned int cpu)
{
	return pcs_percpu_ptr(c->stock_domain, 0, cpu);
}

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

static inline atomic_int *slot_of(const struct pcstock_counter *c,
				  unsigned int cpu)
{
	return pcs_slot_at(c, region_of(c, cpu));
}

static inline struct stock_cpu_stats *stats_of(const struct pcstock_counter *c,
					       unsigned int cpu)
{
	return pcs_stats_at(c, region_of(c, cpu));
}

static inline unsigned int nr_cpus(const struct pcstock_counter *c)
{
	return pcs_nr_cpus(c->stock_domain);
}

/* ---- slot operations ------------------------------------------------------ */

/*
 * Pages that could not stay in a slot (the flushed slot's and the ones
 * being added) go back up.  The flushing CAS in pcs_refill_capped()
 * acquired the slot's pages, so their charges happen before this uncharge.
 */
__attribute__((noinline)) void pcs_stock_trim(struct pcstock_counter *c,
					      struct stock_cpu_stats *st,
					      unsigned long nr)
{
	pcstock_counter_uncharge(c, nr);
	pcs_stat_add(&st->trims, nr);
}

static unsigned long slot_drain(struct pcstock_counter *c, unsigned int cpu,
			       int seen);

/*
 * V4: atomic_add of the surplus, capped only by PCSTOCK_STOCK_V4_CEILING
 * (ours): an addition that takes the slot past it drains the slot, so no
 * sequence of refills can carry a slot into the mark's range.
 */
static void refill_v4(struct pcstock_counter *c, char *region,
		      unsigned long nr)
{
	/*
	 * release: pairs with the acquire CAS in pcstock_stock_take_() and
	 * the acquire exchange of a drain.  The series has no disable; ours
	 * covers both policies: an addition to a marked slot put the pages
	 * in a disabled stock, so this call drains it, pages and mark kept
	 * apart as any drain does.
	 */
	int old = pcs_fetch_add(pcs_slot_at(c, region), (int)nr, PCS_RELEASE);

	pcs_stat_add(&pcs_stats_at(c, region)->refills, 1);
	/* No overflow: old is below the mark's 2^30, nr at most MAX_BATCH. */
	if (old < 0 || old + (int)nr > (int)PCSTOCK_STOCK_V4_CEILING)
		slot_drain(c, pcs_region_cpu(c->stock_domain, region), old);
}

/* ---- lifecycle ------------------------------------------------------------ */

static void stock_cpu_offline(struct pcstock_domain *d, unsigned int cpu,
			      void *arg)
{
	(void)d;
	pcstock_counter_drain_stock(arg, cpu);
}

/* Back to the plain counter (alloc failure and free_stock()). */
static void stock_release(struct pcstock_counter *c)
{
	struct pcstock_domain *d = c->stock_domain;

	pcs_store(&c->stock_state, STOCK_NONE, PCS_RELAXED);
	pcs_store(&c->stock_refill_batch, 0, PCS_RELAXED);
	c->stock_key = 0;
	pcstock_percpu_free(d, c->stock_slots);
	c->stock_domain = NULL;
	c->stock_slots = 0;
	c->stock_stats = 0;
	pcs_store(&c->stock_batch, 0, PCS_RELAXED);
	c->stock_policy = 0;
	c->stock_link = NULL;
}

int pcstock_counter_alloc_stock(struct pcstock_counter *c,
				struct pcstock_domain *d, unsigned int batch,
				enum pcstock_stock_policy policy)
{
	struct pcstock_cpu_hook *hook;
	int ret;

	if (!c || !d || !batch || batch > PCSTOCK_STOCK_MAX_BATCH)
		return -EINVAL;
	if ((unsigned int)policy >= sizeof(kind_flags))
		return -EINVAL;
	if (pcs_load(&c->stock_state, PCS_RELAXED) != STOCK_NONE)
		return -EBUSY;

	ret = pcstock_percpu_alloc(d, sizeof(struct pcstock_stock_rec_),
				   alignof(struct pcstock_stock_rec_),
				   &c->stock_slots);
	if (ret)
		return ret;
	c->stock_stats = c->stock_slots +
			 offsetof(struct pcstock_stock_rec_, stats);
	c->stock_domain = d;
	pcs_store(&c->stock_batch, batch, PCS_RELAXED);
	c->stock_policy = kind_flags[policy];
	/*
	 * Enabled before the hook exists: an offline racing with us may
	 * call it as soon as pcstock_cpu_hook_add() publishes it.
	 */
	pcs_store(&c->stock_state, STOCK_ENABLED, PCS_RELAXED);
	pcs_store(&c->stock_refill_batch,
		  has_flag(c, STOCK_UNCHARGE_REFILL) ? batch : 0, PCS_RELAXED);
	c->stock_key = d->id;
	ret = pcstock_cpu_hook_add(d, stock_cpu_offline, c, &hook);
	if (ret) {
		stock_release(c);
		return ret;
	}
	c->stock_link = hook;
	pcs_domain_users_add(d, 1);
	return 0;
}

/*
 * Add @mark (the mark, or its opposite to lift one) to every slot of @c.
 * Each is an RMW, so no concurrent addition or consumption is lost;
 * relaxed: a mark carries no pages, and the RMW continues any release
 * sequence.
 */
static void mark_all(struct pcstock_counter *c, int mark)
{
	unsigned int cpu, n = nr_cpus(c);

	for (cpu = 0; cpu < n; cpu++)
		pcs_fetch_add(slot_of(c, cpu), mark, PCS_RELAXED);
}

void pcstock_counter_disable_stock(struct pcstock_counter *c)
{
	unsigned char state = STOCK_ENABLED;

	if (!c)
		return;
	/*
	 * From any live state: an EXACT stock may be switching (see "exact
	 * at the limit"), and its switch's last CAS then fails.  A failed
	 * CAS reloads the state.
	 */
	while (!pcs_cas(&c->stock_state, &state, STOCK_DISABLED, PCS_RELAXED,
			PCS_RELAXED)) {
		if (state == STOCK_NONE || state == STOCK_DISABLED)
			return;
	}
	/* Uncharges that read the old refill batch find the mark. */
	pcs_store(&c->stock_refill_batch, 0, PCS_RELAXED);
#ifndef PCSTOCK_MUTATE_NO_DISABLE_MARK
	/* Once per slot: only the CAS's winner gets here. */
	mark_all(c, PCSTOCK_STOCK_MARK_);
#else
	/*
	 * Planted bug, test builds only (tests/explore.cmake): no mark, so
	 * a refill racing a group's destroy strands its pages in the
	 * offline group's slot.  The schedule explorer must catch it.
	 */
	(void)mark_all;
#endif
}

/* Drain every CPU's slot of @c; the pages uncharged. */
static unsigned long drain_every_cpu(struct pcstock_counter *c)
{
	unsigned int cpu, n = nr_cpus(c);
	unsigned long nr = 0;

	for (cpu = 0; cpu < n; cpu++)
		nr += pcstock_counter_drain_stock(c, cpu);
	return nr;
}

void pcstock_counter_free_stock(struct pcstock_counter *c)
{
	if (!c || pcs_load(&c->stock_state, PCS_RELAXED) == STOCK_NONE)
		return;
	/* After this returns the offline hook cannot touch @c any more. */
	pcstock_cpu_hook_remove(c->stock_domain, c->stock_link);
	drain_every_cpu(c);
	pcs_domain_users_add(c->stock_domain, -1);
	stock_release(c);
}

/* ---- charging ------------------------------------------------------------- */

/* The pages a slot's value stands for. */
static inline unsigned long slot_pages(int v)
{
	return (unsigned long)(v < 0 ? v - PCSTOCK_STOCK_MARK_ : v);
}

/*
 * The same for an EXACT stock, whose slot may carry its own mark, the
 * disable's or both over at most a batch of pages: three ranges apart.
 */
static inline unsigned long exact_slot_pages(int v)
{
	if (v >= 0)
		return (unsigned long)v;
	if (v >= PCS_EXACT_MARK)
		return (unsigned long)(v - PCS_EXACT_MARK);
	if (v >= PCSTOCK_STOCK_MARK_)
		return (unsigned long)(v - PCSTOCK_STOCK_MARK_);
	return (unsigned long)(v - PCSTOCK_STOCK_MARK_ - PCS_EXACT_MARK);
}

static inline unsigned long pages_of(const struct pcstock_counter *c, int v)
{
	return has_flag(c, STOCK_AT_LIMIT) ? exact_slot_pages(v) :
					     slot_pages(v);
}

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
			    PCS_ACQUIRE, PCS_RELAXED))
			return exact_slot_pages(v);
	}
	return 0;
}

/*
 * Empty @cpu's slot of @c, whose value was last seen as @seen (0 if not
 * read), keeping its mark, and uncharge the pages.  The exchanges are
 * acquires: they pair with the release addition in pcs_refill_capped(),
 * pcstock_stock_give_() or refill_v4(), so the charge that created these
 * pages happens before the uncharge below.
 */
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

static unsigned long slot_drain(struct pcstock_counter *c, unsigned int cpu,
				int seen)
{
	atomic_int *slot = slot_of(c, cpu);
	unsigned long nr;
	int old;

#ifdef PCSTOCK_MUTATE_READ_ZERO_DRAIN
	/*
	 * Planted bug, test builds only (tests/explore.cmake): read, then
	 * store 0, so what the owner adds or takes in between is lost or
	 * counted twice.  The schedule explorer must catch it.
	 */
	(void)seen;
	old = pcs_load(slot, PCS_ACQUIRE);
	pcs_store(slot, 0, PCS_RELAXED);
	nr = slot_pages(old);
#elif defined(PCSTOCK_MUTATE_RELAXED_DRAIN)
	/*
	 * Planted bug, test builds only (tests/explore.cmake): the drain's
	 * exchange weakened, so its uncharge may not see what the refiller
	 * published before its release (stock-protect-default --weak).
	 */
	old = pcs_xchg(slot, seen < 0 ? PCSTOCK_STOCK_MARK_ : 0, PCS_RELAXED);
	nr = slot_pages(old);
	if (old < 0 && seen >= 0)
		nr += slot_pages(pcs_xchg(slot, PCSTOCK_STOCK_MARK_,
					  PCS_RELAXED));
#else
	old = pcs_xchg(slot, seen < 0 ? PCSTOCK_STOCK_MARK_ : 0, PCS_ACQUIRE);
	nr = slot_pages(old);
	/*
	 * Marked, but we wrote 0: put the mark back, with whatever was added
	 * or taken meanwhile (an unmarked slot served as any slot does).
	 */
	if (old < 0 && seen >= 0)
#ifdef PCSTOCK_MUTATE_RELAXED_REMARK	/* planted bug, explorer only */
		nr += slot_pages(pcs_xchg(slot, PCSTOCK_STOCK_MARK_,
					  PCS_RELAXED));
#else
		nr += slot_pages(pcs_xchg(slot, PCSTOCK_STOCK_MARK_,
					  PCS_ACQUIRE));
#endif
#endif
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
		/* EXACT keeps the slot's marks (slot_take_all()). */
		if (has_flag(c, STOCK_AT_LIMIT))
			return drained(c, cpu,
				       slot_take_all(slot_of(c, cpu), seen));
	}
	return slot_drain(c, cpu, seen);
}

/* The plain call: unstocked counter, no CPU, large or disabled refill. */
static bool charge_exact(struct pcstock_counter *c, unsigned long nr_pages,
			 struct pcstock_counter **fail,
			 unsigned long *nr_charged)
{
	if (!pcstock_counter_try_charge(c, nr_pages, fail))
		return false;
	if (nr_charged)
		*nr_charged = nr_pages;
	return true;
}

/* ---- exact at the limit (EXACT) ------------------------------------------ */

/*
 * An EXACT stock is a DEFAULT stock while every level of its counter's
 * ancestry is far from its max, and no stock near it, in the spirit of
 * percpu_counter_limited_add(): what the slots can hide, nr_cpus × batch
 * (DEFAULT caps a slot at batch), is the distance at which they matter.
 * Its mark is its own, PCS_EXACT_MARK (stock_hit.h), so that a disable
 * landing while it is exact adds the disable's on top of it.
 *
 *  - A miss that finds some level's margin (max - usage) below that bound
 *    (after its batch charge, or before an exact one), or whose greedy
 *    charge fails, switches the counter to exact: ENABLED -> ENTERING,
 *    the refill batch to 0, one mark on every slot (the disable's, so hits
 *    and refills fail there), every slot drained, ENTERING -> EXACT.
 *  - While ENTERING, EXACT or LEAVING, charges are exact (after taking
 *    what a marked slot still holds, as a disabled stock does) and
 *    uncharges go up: the refill batch is 0 and the slots are marked.
 *  - A miss of an EXACT stock that finds every margin at least twice the
 *    bound switches back: EXACT -> LEAVING, the mark lifted from every
 *    slot, the refill batch restored, LEAVING -> ENABLED.  The factor two
 *    is the hysteresis: a round trip costs O(nr_cpus) RMWs, and between
 *    two, usage moves by at least nr_cpus × batch pages.
 *  - An exact charge that fails drains every slot and, if that found
 *    pages, tries once more: no charge fails for pages in this counter's
 *    own stock.
 *
 * Only the winner of a state CAS switches, so switches never overlap, and
 * each is acq_rel so that a switch's marks (or lifts) happen before the
 * next switch's lifts (or marks) in every slot's modification order.  A
 * disable may land in the middle of a switch (it CASes any live state to
 * DISABLED) and adds its own mark: a slot then carries both marks
 * (exact_slot_pages() reads each combination) until a LEAVING switch
 * lifts its own.  As a switch adds or lifts the exact mark once per slot,
 * and the disable's mark is never lifted, a slot the disable has marked
 * stays negative for good: the disable's guarantee holds.  The switch's last CAS fails on DISABLED and leaves the marks.
 * Drains of an EXACT stock keep a slot's marks as they are
 * (slot_take_all()): an exchange that writes one mark back could undo a
 * lift or a second mark.
 */

/* What the counter's slots can hide: nr_cpus × batch. */
static unsigned long hide_bound(const struct pcstock_counter *c)
{
	return (unsigned long)nr_cpus(c) *
	       pcs_load(&c->stock_batch, PCS_RELAXED);
}

/* Whether every level from @c up has at least @room pages below its max. */
static bool margins_at_least(const struct pcstock_counter *c,
			     unsigned long room)
{
	for (; c; c = c->parent) {
		long usage = pcs_load(&c->usage, PCS_RELAXED);
		unsigned long max = pcs_load(&c->max, PCS_RELAXED);
		unsigned long u = usage < 0 ? 0 : (unsigned long)usage;

		if (u > max || max - u < room)
			return false;
	}
	return true;
}

/* ENABLED -> EXACT; the pages drained (0 if another thread switches). */
static unsigned long exact_enter(struct pcstock_counter *c)
{
	unsigned char state = STOCK_ENABLED;
	unsigned long nr = 0;

	if (!pcs_cas(&c->stock_state, &state, STOCK_ENTERING, PCS_ACQ_REL,
		     PCS_RELAXED))
		return 0;
	pcs_store(&c->stock_refill_batch, 0, PCS_RELAXED);
	mark_all(c, PCS_EXACT_MARK);
#ifndef PCSTOCK_MUTATE_EXACT_NO_DRAIN
	/* Each drain reads its slot after the mark: nothing is missed. */
	nr = drain_every_cpu(c);
#else
	/*
	 * Planted bug, test builds only (tests/stock.cmake): the slots are
	 * marked but not drained, so an exact counter near its max keeps
	 * up to nr_cpus × batch pages in stock.  test_stock must catch it.
	 */
#endif
	state = STOCK_ENTERING;
	pcs_cas(&c->stock_state, &state, STOCK_EXACT, PCS_ACQ_REL,
		PCS_RELAXED);
	return nr;
}

/* EXACT -> ENABLED, unless a disable lands meanwhile. */
static void exact_leave(struct pcstock_counter *c)
{
	unsigned char state = STOCK_EXACT;

	if (!pcs_cas(&c->stock_state, &state, STOCK_LEAVING, PCS_ACQ_REL,
		     PCS_RELAXED))
		return;
	mark_all(c, -PCS_EXACT_MARK);
	pcs_store(&c->stock_refill_batch,
		  pcs_load(&c->stock_batch, PCS_RELAXED), PCS_RELAXED);
	state = STOCK_LEAVING;
	/* Disabled meanwhile: its marks stand, and so must its batch 0. */
	if (!pcs_cas(&c->stock_state, &state, STOCK_ENABLED, PCS_ACQ_REL,
		     PCS_RELAXED))
		pcs_store(&c->stock_refill_batch, 0, PCS_RELAXED);
}

/*
 * The exact charge of an EXACT stock (a miss of @state that does not
 * stock), with the switches and the drain before a failure.
 */
static __attribute__((noinline)) bool
exact_charge(struct pcstock_counter *c, unsigned char state,
	     unsigned long nr_pages, struct pcstock_counter **fail,
	     unsigned long *nr_charged)
{
	unsigned long hide = hide_bound(c);

	if (state == STOCK_ENABLED) {
		if (!margins_at_least(c, hide))
			exact_enter(c);
	} else if (state == STOCK_EXACT && margins_at_least(c, 2 * hide)) {
		exact_leave(c);
	}
	if (charge_exact(c, nr_pages, fail, nr_charged))
		return true;
	if (!drain_every_cpu(c))
		return false;
	return charge_exact(c, nr_pages, fail, nr_charged);
}

unsigned long pcstock_counter_stock_go_exact(struct pcstock_counter *c)
{
	unsigned long nr = 0;

	if (!c || pcs_load(&c->stock_state, PCS_RELAXED) == STOCK_NONE)
		return 0;
	if (has_flag(c, STOCK_AT_LIMIT))
		nr = exact_enter(c);
	return nr + drain_every_cpu(c);
}

/*
 * Take @nr pages from the slot in @region if it holds them and is @marked
 * or not as asked: a disabled stock's pages are still consumed from its
 * marked slot, the mark kept; and V4 serves any charge its slot covers
 * (the series' try_charge_stock(): old >= n), while its slot may hold
 * more than the largest batch, beyond which pcstock_stock_take_() stops.
 * acquire: as pcstock_stock_take_().
 */
static bool take_pages(struct pcstock_counter *c, char *region,
		       unsigned long nr, bool marked)
{
	atomic_int *slot = pcs_slot_at(c, region);
	int old = pcs_load(slot, PCS_RELAXED);

	/* (int)nr: nr is at most the pages of a slot. */
	while ((old < 0) == marked && pages_of(c, old) >= nr) {
		if (pcs_cas(slot, &old, old - (int)nr, PCS_ACQUIRE,
			    PCS_RELAXED)) {
			pcs_stat_add(&pcs_stats_at(c, region)->hits, 1);
			return true;
		}
	}
	return false;
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
	unsigned long charged = batch;

	if (!has_flag(c, STOCK_AT_LIMIT) ||
	    margins_at_least(c, hide_bound(c))) {
		pcs_refill_capped(c, now, (int)batch,
				  (int)(batch - nr_pages));
	} else {
		pcstock_counter_uncharge(c, batch - nr_pages);
		exact_enter(c);
		charged = nr_pages;
	}
	if (nr_charged)
		*nr_charged = charged;
	return true;
}

/*
 * The slot in @region could not serve @nr_pages: charge max(batch, n) and
 * keep the surplus, else exactly n.
 */
static __attribute__((noinline)) bool
charge_miss(struct pcstock_counter *c, char *region, unsigned long nr_pages,
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
			return exact_charge(c, state, nr_pages, fail,
					    nr_charged);
		return charge_exact(c, nr_pages, fail, nr_charged);
	}

	/* The CPU we are on now, which may not be @region's. */
	now = this_region(c, false);
	if (!now)
		pcstock_counter_uncharge(c, batch - nr_pages);
	else if (c->stock_policy == STOCK_DEFAULT_FLAGS)
		pcs_refill_capped(c, now, (int)batch, (int)(batch - nr_pages));
	else if (!has_flag(c, STOCK_CAPPED))
		refill_v4(c, now, batch - nr_pages);
	else
		return refill_at_limit(c, now, batch, nr_pages, nr_charged);
	if (nr_charged)
		*nr_charged = batch;
	return true;
}

/* Charge through the slot of the CPU whose region is @region. */
static inline bool charge_on(struct pcstock_counter *c, char *region,
			     unsigned long nr_pages,
			     struct pcstock_counter **fail,
			     unsigned long *nr_charged)
{
	if (!pcstock_stock_take_(c, region, nr_pages))
		return charge_miss(c, region, nr_pages, fail, nr_charged);
	if (nr_charged)
		*nr_charged = 0;
	return true;
}

/*
 * The miss of a thread whose cached region served the try: the region read
 * again here, so that the hit keeps no register for it.
 */
static __attribute__((noinline)) bool
charge_miss_cached(struct pcstock_counter *c, unsigned long nr_pages,
		   struct pcstock_counter **fail, unsigned long *nr_charged)
{
	return charge_miss(c, pcstock_cpu_cache_.region, nr_pages, fail,
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
		return charge_exact(c, nr_pages, fail, nr_charged);
	region = this_region(c, true);
	if (!region)
		return charge_exact(c, nr_pages, fail, nr_charged);
	return charge_on(c, region, nr_pages, fail, nr_charged);
}

bool pcstock_counter_try_charge_stock(struct pcstock_counter *c,
				      unsigned long nr_pages,
				      struct pcstock_counter **fail,
				      unsigned long *nr_charged)
{
	const struct pcstock_cpu_cache_ *f = &pcstock_cpu_cache_;

	if (f->key != c->stock_key)
		return charge_uncached(c, nr_pages, fail, nr_charged);
	/* take_()'s own range test, first: then the slot is one add. */
	if (nr_pages > PCSTOCK_STOCK_MAX_BATCH ||
	    !pcstock_stock_take_(c, f->region, nr_pages))
		return charge_miss_cached(c, nr_pages, fail, nr_charged);
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

	if (region)
		pcs_refill_capped(c, region, (int)batch, (int)nr_pages);
	else
		pcstock_counter_uncharge(c, nr_pages);
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

	if (f->key != c->stock_key)
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
	else if (!pcs_stock_give(c, c->stock_key, batch, nr_pages))
		uncharge_slow(c, batch, nr_pages);
}

/* ---- readers -------------------------------------------------------------- */

unsigned long pcstock_counter_stock_pages(const struct pcstock_counter *c)
{
	unsigned long sum = 0;
	unsigned int cpu, n;

	if (!c || pcs_load(&c->stock_state, PCS_RELAXED) == STOCK_NONE)
		return 0;
	n = nr_cpus(c);
	for (cpu = 0; cpu < n; cpu++)
		sum += pages_of(c, pcs_load(slot_of(c, cpu), PCS_RELAXED));
	return sum;
}

unsigned long pcstock_counter_stock_bound(const struct pcstock_counter *c)
{
	if (!c || pcs_load(&c->stock_state, PCS_RELAXED) == STOCK_NONE)
		return 0;
	return (unsigned long)nr_cpus(c) * pcstock_counter_stock_batch(c);
}

unsigned int pcstock_counter_stock_batch(const struct pcstock_counter *c)
{
	if (!c)
		return 0;
	return pcs_load(&c->stock_batch, PCS_RELAXED);
}

void pcstock_counter_stock_stats(const struct pcstock_counter *c,
				 struct pcstock_stock_stats *st)
{
	const struct stock_cpu_stats *s;
	unsigned int cpu, n;

	if (!st)
		return;
	*st = (struct pcstock_stock_stats){ 0 };
	if (!c || pcs_load(&c->stock_state, PCS_RELAXED) == STOCK_NONE)
		return;
	n = nr_cpus(c);
	for (cpu = 0; cpu < n; cpu++) {
		s = stats_of(c, cpu);
		st->hits += pcs_load(&s->hits, PCS_RELAXED);
		st->misses += pcs_load(&s->misses, PCS_RELAXED);
		st->refills += pcs_load(&s->refills, PCS_RELAXED);
		st->drains += pcs_load(&s->drains, PCS_RELAXED);
		st->drained_pages += pcs_load(&s->drained_pages, PCS_RELAXED);
		st->trims += pcs_load(&s->trims, PCS_RELAXED);
	}
}
