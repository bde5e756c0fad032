/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stock_impl.h - what the per-counter stock's two files share (private):
 * the kinds' flags, the per-CPU accessors and the slot readings.
 * stock.c has the charge and uncharge paths and the drains; stock_ctl.c
 * the lifecycle, EXACT's switch and the readers.  See stock.c's top
 * comment for the policy and its memory ordering.
 */
#ifndef PCSTOCK_STOCK_IMPL_H
#define PCSTOCK_STOCK_IMPL_H

#include <stdbool.h>

#include <pcstock/stock.h>

#include "atomic.h"
#include "domain.h"
#include "internal.h"
#include "stock_hit.h"
#include "stock_steps.h"

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
	/*
	 * A policy's own steps (stock_steps.h), found through stock_link;
	 * always with STOCK_READ_DRAIN, so a drain dispatches after its read.
	 */
	STOCK_STEPS = 1U << 4,
};

/* What stock_link points to on a stock with STOCK_STEPS. */
struct pcs_stock_link {
	struct pcstock_cpu_hook *hook;
	const struct pcs_stock_steps *steps;
};

#define STOCK_DEFAULT_FLAGS                                                  \
	(STOCK_CAPPED | STOCK_READ_DRAIN | STOCK_UNCHARGE_REFILL)

/* stock_ctl.c: whether a kind's refill never takes a slot above batch. */
bool pcs_stock_kind_capped(enum pcstock_stock_policy kind);

static inline bool has_flag(const struct pcstock_counter *c,
			    enum stock_flags f)
{
	return c->stock_policy & f;
}

static inline const struct pcs_stock_steps *
steps_of(const struct pcstock_counter *c)
{
	return ((const struct pcs_stock_link *)c->stock_link)->steps;
}

static inline char *region_of(const struct pcstock_counter *c,
			      unsigned int cpu)
{
	return pcs_percpu_ptr(c->stock_domain, 0, cpu);
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

/* stock.c */
bool pcs_stock_charge_exact(struct pcstock_counter *c, unsigned long nr_pages,
			    struct pcstock_counter **fail,
			    unsigned long *nr_charged);

/* stock_ctl.c: EXACT's switch ("exact at the limit") */
unsigned long pcs_exact_hide_bound(const struct pcstock_counter *c);
bool pcs_exact_margins_at_least(const struct pcstock_counter *c,
				unsigned long room);
unsigned long pcs_exact_enter(struct pcstock_counter *c);
bool pcs_exact_charge(struct pcstock_counter *c, unsigned char state,
		      unsigned long nr_pages, struct pcstock_counter **fail,
		      unsigned long *nr_charged);

#endif /* PCSTOCK_STOCK_IMPL_H */
