// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stock_ctl.c - the per-counter stock's control: allocation, disable and
 * free, EXACT's switch between stocking and exact, and the readers.
 * The policy and its memory ordering are in stock.c's top comment.
 */
#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>

#include <pcstock/cpu.h>
#include <pcstock/percpu.h>
#include <pcstock/stock.h>

#include "stock_impl.h"

static const unsigned char kind_flags[] = {
	[PCSTOCK_STOCK_DEFAULT] = STOCK_DEFAULT_FLAGS,
	[PCSTOCK_STOCK_V4] = 0,
	[PCSTOCK_STOCK_EXACT] = STOCK_DEFAULT_FLAGS | STOCK_AT_LIMIT,
};

bool pcs_stock_kind_capped(enum pcstock_stock_policy kind)
{
	return (unsigned int)kind < sizeof(kind_flags) &&
	       (kind_flags[kind] & STOCK_CAPPED);
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
	c->hit_key = 0;
	pcstock_percpu_free(d, c->stock_slots);
	c->stock_domain = NULL;
	c->stock_slots = 0;
	c->stock_stats = 0;
	pcs_store(&c->stock_batch, 0, PCS_RELAXED);
	if (has_flag(c, STOCK_STEPS))
		free(c->stock_link);
	c->stock_policy = 0;
	c->stock_link = NULL;
}

/* The registration pcstock_cpu_hook_remove() needs. */
static struct pcstock_cpu_hook *stock_hook(const struct pcstock_counter *c)
{
	if (has_flag(c, STOCK_STEPS))
		return ((struct pcs_stock_link *)c->stock_link)->hook;
	return c->stock_link;
}

bool pcs_stock_steps_any(const struct pcs_stock_steps *s)
{
	return s && (s->take || s->refill_size || s->refill || s->drain ||
		     s->trim);
}

int pcstock_counter_alloc_stock(struct pcstock_counter *c,
				struct pcstock_domain *d, unsigned int batch,
				enum pcstock_stock_policy policy)
{
	return pcs_counter_alloc_stock_steps(c, d, batch, policy, NULL);
}

/*
 * A stock with steps of its own (stock_steps.h) gets a hit key that no CPU
 * cache holds, so every call of it takes the uncached paths, where the
 * steps run: its domain's hit key with bit 62 set.  Those are below 2^32
 * (domain.h), and the RSEQ entry's test cannot match either: the high half
 * of key ^ w would be cpu_id ^ 2^30, which is neither a CPU nor the empty
 * tag's 2^31.
 */
#define STEPS_HIT_KEY_BIT (1ULL << 62)

int pcs_counter_alloc_stock_steps(struct pcstock_counter *c,
				  struct pcstock_domain *d, unsigned int batch,
				  enum pcstock_stock_policy policy,
				  const struct pcs_stock_steps *steps)
{
	struct pcs_stock_link *link = NULL;
	struct pcstock_cpu_hook *hook;
	int ret;

	if (!c || !d || !batch || batch > PCSTOCK_STOCK_MAX_BATCH)
		return -EINVAL;
	if ((unsigned int)policy >= sizeof(kind_flags))
		return -EINVAL;
	if (pcs_load(&c->stock_state, PCS_RELAXED) != STOCK_NONE)
		return -EBUSY;
	if (pcs_stock_steps_any(steps)) {
		link = malloc(sizeof(*link));
		if (!link)
			return -ENOMEM;
		link->hook = NULL;
		link->steps = steps;
	}

	ret = pcstock_percpu_alloc(d, sizeof(struct pcstock_stock_rec_),
				   alignof(struct pcstock_stock_rec_),
				   &c->stock_slots);
	if (ret) {
		free(link);
		return ret;
	}
	c->stock_stats = c->stock_slots +
			 offsetof(struct pcstock_stock_rec_, stats);
	c->stock_domain = d;
	pcs_store(&c->stock_batch, batch, PCS_RELAXED);
	c->stock_policy = kind_flags[policy];
	if (link) {
		c->stock_policy |= STOCK_STEPS | STOCK_READ_DRAIN;
		c->stock_link = link;
	}
	/*
	 * Enabled before the hook exists: an offline racing with us may
	 * call it as soon as pcstock_cpu_hook_add() publishes it.
	 */
	pcs_store(&c->stock_state, STOCK_ENABLED, PCS_RELAXED);
	pcs_store(&c->stock_refill_batch,
		  has_flag(c, STOCK_UNCHARGE_REFILL) ? batch : 0, PCS_RELAXED);
	c->hit_key = link ? d->hit_key | STEPS_HIT_KEY_BIT : d->hit_key;
	ret = pcstock_cpu_hook_add(d, stock_cpu_offline, c, &hook);
	if (ret) {
		stock_release(c);
		return ret;
	}
	if (link)
		link->hook = hook;
	else
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
	/* Once per slot: only the CAS's winner gets here. */
	mark_all(c, PCSTOCK_STOCK_MARK_);
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
	pcstock_cpu_hook_remove(c->stock_domain, stock_hook(c));
	drain_every_cpu(c);
	pcs_domain_users_add(c->stock_domain, -1);
	stock_release(c);
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
 * Only the winner of a state CAS switches, so switches never overlap, and each
 * is acq_rel so that a switch's marks (or lifts) happen before the next
 * switch's lifts (or marks) in every slot's modification order.  A disable may
 * land in the middle of a switch (it CASes any live state to DISABLED) and
 * adds its own mark: a slot then carries both marks (exact_slot_pages() reads
 * each combination) until a LEAVING switch lifts its own.  As a switch adds or
 * lifts the exact mark once per slot, and the disable's mark is never lifted,
 * a slot the disable has marked stays negative for good: the disable's
 * guarantee holds.  The switch's last CAS fails on DISABLED and leaves the
 * marks. Drains of an EXACT stock keep a slot's marks as they are
 * (slot_take_all()): an exchange that writes one mark back could undo a lift
 * or a second mark.
 */

/* What the counter's slots can hide: nr_cpus × batch. */
unsigned long pcs_exact_hide_bound(const struct pcstock_counter *c)
{
	return (unsigned long)nr_cpus(c) *
	       pcs_load(&c->stock_batch, PCS_RELAXED);
}

/* Whether every level from @c up has at least @room pages below its max. */
bool pcs_exact_margins_at_least(const struct pcstock_counter *c,
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
unsigned long pcs_exact_enter(struct pcstock_counter *c)
{
	unsigned char state = STOCK_ENABLED;
	unsigned long nr = 0;

	if (!pcs_cas(&c->stock_state, &state, STOCK_ENTERING,
		     PCS_ORDER(STOCK_EXACT_ENTER, PCS_ACQ_REL), PCS_RELAXED))
		return 0;
	pcs_store(&c->stock_refill_batch, 0, PCS_RELAXED);
	mark_all(c, PCS_EXACT_MARK);
	/* Each drain reads its slot after the mark: nothing is missed. */
	nr = drain_every_cpu(c);
	state = STOCK_ENTERING;
	pcs_cas(&c->stock_state, &state, STOCK_EXACT,
		PCS_ORDER(STOCK_EXACT_ENTERED, PCS_ACQ_REL), PCS_RELAXED);
	return nr;
}

/* EXACT -> ENABLED, unless a disable lands meanwhile. */
static void exact_leave(struct pcstock_counter *c)
{
	unsigned char state = STOCK_EXACT;

	if (!pcs_cas(&c->stock_state, &state, STOCK_LEAVING,
		     PCS_ORDER(STOCK_EXACT_LEAVE, PCS_ACQ_REL), PCS_RELAXED))
		return;
	mark_all(c, -PCS_EXACT_MARK);
	pcs_store(&c->stock_refill_batch,
		  pcs_load(&c->stock_batch, PCS_RELAXED), PCS_RELAXED);
	state = STOCK_LEAVING;
	/* Disabled meanwhile: its marks stand, and so must its batch 0. */
	if (!pcs_cas(&c->stock_state, &state, STOCK_ENABLED,
		     PCS_ORDER(STOCK_EXACT_LEFT, PCS_ACQ_REL), PCS_RELAXED))
		pcs_store(&c->stock_refill_batch, 0, PCS_RELAXED);
}

/*
 * The exact charge of an EXACT stock (a miss of @state that does not
 * stock), with the switches and the drain before a failure.
 */
__attribute__((noinline)) bool
pcs_exact_charge(struct pcstock_counter *c, unsigned char state,
	     unsigned long nr_pages, struct pcstock_counter **fail,
	     unsigned long *nr_charged)
{
	unsigned long hide = pcs_exact_hide_bound(c);

	if (state == STOCK_ENABLED) {
		if (!pcs_exact_margins_at_least(c, hide))
			pcs_exact_enter(c);
	} else if (state == STOCK_EXACT && pcs_exact_margins_at_least(c, 2 * hide)) {
		exact_leave(c);
	}
	if (pcs_stock_charge_exact(c, nr_pages, fail, nr_charged))
		return true;
	if (!drain_every_cpu(c))
		return false;
	return pcs_stock_charge_exact(c, nr_pages, fail, nr_charged);
}

unsigned long pcstock_counter_stock_go_exact(struct pcstock_counter *c)
{
	unsigned long nr = 0;

	if (!c || pcs_load(&c->stock_state, PCS_RELAXED) == STOCK_NONE)
		return 0;
	if (has_flag(c, STOCK_AT_LIMIT))
		nr = pcs_exact_enter(c);
	return nr + drain_every_cpu(c);
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
