// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stock.c - the per-counter per-CPU charge stock.
 *
 * Each stocked counter owns one atomic_int slot per CPU of a domain, in the
 * domain's per-CPU arena, holding pages already charged to the hierarchy
 * but not yet handed out.  Two policies share the code:
 *
 *  V4       the series as posted (v4 3/5): consume with a CAS loop on this
 *           CPU's slot; on a miss charge max(batch, n) and add the surplus
 *           to the slot of the CPU the caller is on *then*; fall back to an
 *           exact charge; drain with an unconditional exchange; uncharges
 *           go straight up the hierarchy; nothing caps a slot.
 *  DEFAULT  the same charge path with the review findings fixed: every
 *           addition to a slot is one CAS that never takes it above batch
 *           (an addition that would overflow empties the slot instead and
 *           sends its pages up with the new ones, as mainline's
 *           refill_stock() does; counted as trims), so no slot ever holds
 *           more than batch; a drain reads before it exchanges; uncharges
 *           of up to batch pages refill the local slot (the netperf
 *           -73.9 % report); larger charges and uncharges bypass the
 *           stock.
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
 * calls (documented contract); disable is.  A call that read ENABLED just
 * before a disable may still refill once; it then re-reads the state and
 * drains its own refill if it lost the race (refill_recheck()), so a disable
 * followed by a drain of every CPU leaves no page behind once the racing
 * calls have returned.
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

static_assert(PCSTOCK_STOCK_MAX_BATCH <= INT_MAX / 2,
	      "a full slot plus a batch must fit in an int");

/* ---- per-CPU access ------------------------------------------------------- */

static inline int this_cpu(const struct pcstock_counter *c)
{
	return pcs_this_cpu(c->stock_domain);
}

static inline atomic_int *slot_of(const struct pcstock_counter *c,
				  unsigned int cpu)
{
	return pcs_percpu_ptr(c->stock_domain, c->stock_slots, cpu);
}

static inline struct stock_cpu_stats *stats_of(const struct pcstock_counter *c,
					       unsigned int cpu)
{
	return pcs_percpu_ptr(c->stock_domain, c->stock_stats, cpu);
}

static inline unsigned int nr_cpus(const struct pcstock_counter *c)
{
	return pcs_nr_cpus(c->stock_domain);
}

/*
 * Lossy statistic: no RMW, so the hit path stays at one locked instruction.
 * A thread sharing this CPU can overwrite the update (documented in
 * struct pcstock_stock_stats).
 */
static inline void stat_add(atomic_ulong *v, unsigned long n)
{
	pcs_store(v, pcs_load(v, PCS_RELAXED) + n, PCS_RELAXED);
}

/* ---- slot operations ------------------------------------------------------ */

/*
 * Pages that could not stay in a slot (the flushed slot's and the ones
 * being added) go back up.  The flushing CAS in refill_capped() acquired
 * the slot's pages, so their charges happen before this uncharge.
 */
static __attribute__((noinline)) void trim(struct pcstock_counter *c,
					   struct stock_cpu_stats *st,
					   unsigned long nr)
{
	pcstock_counter_uncharge(c, nr);
	stat_add(&st->trims, nr);
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
static __attribute__((noinline, unused)) void refill_raced_disable(
	struct pcstock_counter *c, unsigned int cpu)
{
	pcstock_counter_drain_stock(c, cpu);
}

static inline void refill_recheck(struct pcstock_counter *c, unsigned int cpu)
{
#ifdef PCSTOCK_MUTATE_NO_DISABLE_RECHECK
	/*
	 * Planted bug, test builds only (tests/explore.cmake): a refill that
	 * raced a disable leaves its pages in a destroyed group's slot.  The
	 * schedule explorer's group scenarios must catch it.
	 */
	(void)c;
	(void)cpu;
#else
	if (pcs_load(&c->stock_state, PCS_SEQ_CST) != STOCK_ENABLED)
		refill_raced_disable(c, cpu);
#endif
}

/*
 * DEFAULT: put @nr pages in @cpu's slot without ever taking it above
 * @batch.  If they do not fit, the whole slot goes back up the hierarchy
 * with them (mainline's refill_stock()): a CPU that only ever receives
 * pages, the consumer of a cross-CPU flow, then pays one hierarchical
 * uncharge per batch instead of one per call, as it would if the slot
 * were kept full and only the excess sent up.
 */
static inline void refill_capped(struct pcstock_counter *c, unsigned int cpu,
				 int batch, int nr)
{
	struct pcstock_domain *d = c->stock_domain;
	atomic_int *slot = pcs_percpu_ptr(d, c->stock_slots, cpu);
	struct stock_cpu_stats *st = pcs_percpu_ptr(d, c->stock_stats, cpu);
	int old = pcs_load(slot, PCS_RELAXED);
	int want, new;

	/* No overflow: old and nr are at most batch <= INT_MAX / 2. */
#ifdef PCSTOCK_MUTATE_PLAIN_REFILL
	/*
	 * Planted bug, test builds only (tests/explore.cmake): a plain store
	 * instead of the CAS loses a concurrent drain or consume.  The
	 * schedule explorer must catch it.
	 */
	want = old + nr;
	new = want > batch ? 0 : want;
	pcs_store(slot, new, PCS_RELEASE);
#else
	do {
		want = old + nr;
		new = want > batch ? 0 : want;
		/*
		 * release: pairs with the acquire CAS in charge_on(), the
		 * acquire exchange in pcstock_counter_drain_stock() and the
		 * acquire of a later flush here: the charge of the pages we
		 * add happens before their uncharge.  acquire: a flush takes
		 * the slot's pages out as a drain does, so it pairs with the
		 * release that put them there before trim() uncharges them.
		 * seq_cst: the refill half of the disable handshake (see
		 * refill_recheck()); the same locked instruction on x86.
		 */
	} while (!pcs_cas(slot, &old, new, PCS_SEQ_CST, PCS_RELAXED));
#endif

	if (new != want) {
		trim(c, st, (unsigned long)want);
	} else if (new > old) {
		stat_add(&st->refills, 1);
		refill_recheck(c, cpu);
	}
}

/* V4: atomic_add of the surplus, no cap. */
static void refill_v4(struct pcstock_counter *c, unsigned int cpu,
		      unsigned long nr)
{
	/*
	 * release: pairs with the acquire CAS in charge_on() and the acquire
	 * exchange in pcstock_counter_drain_stock().  seq_cst: the refill
	 * half of the disable handshake (refill_recheck(); the series has no
	 * disable, ours covers both policies).
	 */
	pcs_fetch_add(slot_of(c, cpu), (int)nr, PCS_SEQ_CST);
	stat_add(&stats_of(c, cpu)->refills, 1);
	refill_recheck(c, cpu);
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
	pcstock_percpu_free(d, c->stock_stats);
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
	if (policy != PCSTOCK_STOCK_DEFAULT && policy != PCSTOCK_STOCK_V4)
		return -EINVAL;
	if (pcs_load(&c->stock_state, PCS_RELAXED) != STOCK_NONE)
		return -EBUSY;

	ret = pcstock_percpu_alloc(d, sizeof(atomic_int), alignof(atomic_int),
				   &c->stock_slots);
	if (ret)
		return ret;
	ret = pcstock_percpu_alloc(d, sizeof(struct stock_cpu_stats),
				   alignof(struct stock_cpu_stats),
				   &c->stock_stats);
	if (ret) {
		pcstock_percpu_free(d, c->stock_slots);
		c->stock_slots = 0;
		return ret;
	}
	c->stock_domain = d;
	pcs_store(&c->stock_batch, batch, PCS_RELAXED);
	c->stock_policy = (unsigned char)policy;
	/*
	 * Enabled before the hook exists: an offline racing with us may
	 * call it as soon as pcstock_cpu_hook_add() publishes it.
	 */
	pcs_store(&c->stock_state, STOCK_ENABLED, PCS_RELAXED);
	ret = pcstock_cpu_hook_add(d, stock_cpu_offline, c, &hook);
	if (ret) {
		stock_release(c);
		return ret;
	}
	c->stock_link = hook;
	return 0;
}

void pcstock_counter_disable_stock(struct pcstock_counter *c)
{
	unsigned char expected = STOCK_ENABLED;

	if (!c)
		return;
	/*
	 * seq_cst: the disable half of the handshake with refills (see
	 * refill_recheck()); the caller's drain comes next.
	 */
	pcs_cas(&c->stock_state, &expected, STOCK_DISABLED, PCS_SEQ_CST,
		PCS_RELAXED);
}

void pcstock_counter_free_stock(struct pcstock_counter *c)
{
	unsigned int cpu, n;

	if (!c || pcs_load(&c->stock_state, PCS_RELAXED) == STOCK_NONE)
		return;
	/* After this returns the offline hook cannot touch @c any more. */
	pcstock_cpu_hook_remove(c->stock_domain, c->stock_link);
	n = nr_cpus(c);
	for (cpu = 0; cpu < n; cpu++)
		pcstock_counter_drain_stock(c, cpu);
	stock_release(c);
}

/* ---- charging ------------------------------------------------------------- */

unsigned long pcstock_counter_drain_stock(struct pcstock_counter *c,
					  unsigned int cpu)
{
	struct stock_cpu_stats *st;
	atomic_int *slot;
	int nr;

	if (!c || pcs_load(&c->stock_state, PCS_RELAXED) == STOCK_NONE ||
	    cpu >= nr_cpus(c))
		return 0;
	slot = slot_of(c, cpu);
	/*
	 * DEFAULT reads first (the v4 review point): an empty slot then
	 * costs a shared read instead of pulling the owner's line
	 * exclusive.  Best effort: the slot may fill right after the read,
	 * as it may right after an exchange.
	 */
	if (c->stock_policy == PCSTOCK_STOCK_DEFAULT &&
	    !pcs_load(slot, PCS_SEQ_CST))
		return 0;
	/*
	 * acquire: pairs with the release addition in refill_capped() or
	 * refill_v4(), so the charge that created these pages happens
	 * before the uncharge below.  seq_cst (as the read above): the drain
	 * half of the disable handshake (refill_recheck()).
	 */
#ifdef PCSTOCK_MUTATE_READ_ZERO_DRAIN
	/*
	 * Planted bug, test builds only (tests/explore.cmake): read, then
	 * store 0, so what the owner adds or takes in between is lost or
	 * counted twice.  The schedule explorer must catch it.
	 */
	nr = pcs_load(slot, PCS_ACQUIRE);
	pcs_store(slot, 0, PCS_RELAXED);
#else
	nr = pcs_xchg(slot, 0, PCS_SEQ_CST);
#endif
	if (nr <= 0)
		return 0;
	pcstock_counter_uncharge(c, (unsigned long)nr);
	/*
	 * Remote drains of one CPU may run concurrently and are not the
	 * hot path: real RMWs keep these two figures exact.
	 */
	st = stats_of(c, cpu);
	pcs_fetch_add(&st->drains, 1, PCS_RELAXED);
	pcs_fetch_add(&st->drained_pages, (unsigned long)nr, PCS_RELAXED);
	return (unsigned long)nr;
}

/*
 * The plain call: unstocked counter, no CPU, large or disabled refill.
 * Out of line, as every call the hit paths make: a call left inline would
 * make them save registers on entry, hit or not.
 */
static __attribute__((noinline)) bool
charge_exact(struct pcstock_counter *c, unsigned long nr_pages,
	     struct pcstock_counter **fail, unsigned long *nr_charged)
{
	if (!pcstock_counter_try_charge(c, nr_pages, fail))
		return false;
	if (nr_charged)
		*nr_charged = nr_pages;
	return true;
}

/*
 * The slot of @cpu could not serve @nr_pages: charge max(batch, n) and
 * keep the surplus, else exactly n.
 */
static __attribute__((noinline)) bool
charge_miss(struct pcstock_counter *c, unsigned int cpu,
	    unsigned long nr_pages, struct pcstock_counter **fail,
	    unsigned long *nr_charged)
{
	unsigned char state = pcs_load(&c->stock_state, PCS_RELAXED);
	unsigned int batch = pcs_load(&c->stock_batch, PCS_RELAXED);
	int now;

	stat_add(&stats_of(c, cpu)->misses, 1);
	/* V4: charge = max(batch, n), exact if that is n: the same test. */
	if (state != STOCK_ENABLED || nr_pages >= batch ||
	    !pcstock_counter_try_charge(c, batch, fail))
		return charge_exact(c, nr_pages, fail, nr_charged);

	/* The CPU we are on now, which may not be @cpu. */
	now = this_cpu(c);
	if (now < 0)
		pcstock_counter_uncharge(c, batch - nr_pages);
	else if (c->stock_policy == PCSTOCK_STOCK_V4)
		refill_v4(c, (unsigned int)now, batch - nr_pages);
	else
		refill_capped(c, (unsigned int)now, (int)batch,
			      (int)(batch - nr_pages));
	if (nr_charged)
		*nr_charged = batch;
	return true;
}

/* Consume from @cpu's slot (-1: no CPU), else go to the hierarchy. */
static inline bool charge_on(struct pcstock_counter *c, int cpu,
			     unsigned long nr_pages,
			     struct pcstock_counter **fail,
			     unsigned long *nr_charged)
{
	struct pcstock_domain *d = c->stock_domain;
	struct stock_cpu_stats *st;
	atomic_int *slot;
	int old;

	if (cpu < 0)
		return charge_exact(c, nr_pages, fail, nr_charged);
	/* Both addresses before the CAS, which the compiler cannot cross. */
	slot = pcs_percpu_ptr(d, c->stock_slots, (unsigned int)cpu);
	st = pcs_percpu_ptr(d, c->stock_stats, (unsigned int)cpu);
	old = pcs_load(slot, PCS_RELAXED);
	/* A slot is never negative: compare as unsigned, no sign extension. */
	while ((unsigned int)old >= nr_pages) {
		/*
		 * acquire: pairs with the release addition in
		 * refill_capped() or refill_v4(), so the charge that put
		 * these pages in the slot happens before our caller's later
		 * uncharge of them.  A failed CAS reloads old.
		 */
		if (pcs_cas(slot, &old, old - (int)nr_pages, PCS_ACQUIRE,
			    PCS_RELAXED)) {
			stat_add(&st->hits, 1);
			if (nr_charged)
				*nr_charged = 0;
			return true;
		}
	}
	return charge_miss(c, (unsigned int)cpu, nr_pages, fail, nr_charged);
}

/*
 * SIM and PINNED domains keep the caller's CPU in a thread-local that
 * pcs_this_cpu() reads inline.  The other modes may call out to find it
 * (sched_getcpu(), first-use assignment), which would cost the hit path a
 * stack frame, so the stocked calls send them through an out-of-line copy.
 */
static inline bool cpu_is_thread_local(const struct pcstock_domain *d)
{
	return d->mode == PCSTOCK_CPU_SIM || d->mode == PCSTOCK_CPU_PINNED;
}

static __attribute__((noinline)) bool
charge_other_mode(struct pcstock_counter *c, unsigned long nr_pages,
		  struct pcstock_counter **fail, unsigned long *nr_charged)
{
	return charge_on(c, this_cpu(c), nr_pages, fail, nr_charged);
}

bool pcstock_counter_try_charge_stock(struct pcstock_counter *c,
				      unsigned long nr_pages,
				      struct pcstock_counter **fail,
				      unsigned long *nr_charged)
{
	/* Set by alloc and cleared by free, never concurrently with us. */
	struct pcstock_domain *d = c->stock_domain;

	if (!d)
		return charge_exact(c, nr_pages, fail, nr_charged);
	if (!cpu_is_thread_local(d))
		return charge_other_mode(c, nr_pages, fail, nr_charged);
	return charge_on(c, pcs_this_cpu(d), nr_pages, fail, nr_charged);
}

/* Refill @cpu's slot (-1: no CPU, straight up) with @nr_pages <= batch. */
static inline void uncharge_on(struct pcstock_counter *c, int cpu,
			       unsigned int batch, unsigned long nr_pages)
{
	if (cpu < 0)
		pcstock_counter_uncharge(c, nr_pages);
	else
		refill_capped(c, (unsigned int)cpu, (int)batch, (int)nr_pages);
}

static __attribute__((noinline)) void
uncharge_other_mode(struct pcstock_counter *c, unsigned int batch,
		    unsigned long nr_pages)
{
	uncharge_on(c, this_cpu(c), batch, nr_pages);
}

void pcstock_counter_uncharge_stock(struct pcstock_counter *c,
				    unsigned long nr_pages)
{
	struct pcstock_domain *d = c->stock_domain;
	unsigned int batch = pcs_load(&c->stock_batch, PCS_RELAXED);

	/* An unstocked counter has batch 0: only nr_pages 0 gets past it. */
	if (nr_pages > batch || !d ||
	    pcs_load(&c->stock_state, PCS_RELAXED) != STOCK_ENABLED ||
	    c->stock_policy != PCSTOCK_STOCK_DEFAULT)
		pcstock_counter_uncharge(c, nr_pages);
	else if (!cpu_is_thread_local(d))
		uncharge_other_mode(c, batch, nr_pages);
	else
		uncharge_on(c, pcs_this_cpu(d), batch, nr_pages);
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
		sum += (unsigned int)pcs_load(slot_of(c, cpu), PCS_RELAXED);
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
