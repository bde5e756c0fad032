/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stock_steps.h - the per-counter stock's steps, for a policy that
 * overrides some of them (private).
 *
 * A stock policy that is a kind of the per-counter stock (policy.h's
 * PCS_COUNTER_POLICY()) may replace any of the steps below in its table
 * (struct pcs_policy_ops' @steps) and stays per-counter: its counters
 * then carry the table's steps (pcs_counter_alloc_stock_steps()), and a
 * NULL step is its kind's own (the pcs_stock_step_*() functions here,
 * which an override may call).  The steps are never on the hit paths of
 * the kinds without them: a counter with steps gets a stock key that no
 * thread's CPU cache holds, so every charge and uncharge of it goes
 * through the uncached path, which runs them (@take serves its hits).
 *
 * Every step runs on a slot the caller found through the counter's
 * domain; a slot is only ever changed by atomic RMWs (stock.c's top
 * comment), an addition is a release and a removal an acquire.
 *
 * A slot's value is its pages, plus a negative mark while the stock is
 * disabled (PCSTOCK_STOCK_MARK_), and for an EXACT kind a second mark of
 * its own: pcs_step_pages() reads the pages of any value, and a step that
 * removes pages keeps the marks (a CAS of value - pages, not an exchange
 * with 0).  What a step reaches, besides atomic.h's accessors: the slot and
 * statistics of a region, pcs_slot_at() and pcs_stats_at() (stock_hit.h),
 * a CPU's slot, pcs_step_slot_of(), and these functions.  Statistics a
 * step keeps, in the CPU's struct stock_cpu_stats (pcs_stat_add()): @take
 * counts a hit (hits) when it serves; @refill counts a refill (refills)
 * when it keeps any page; @drain and @trim count through
 * pcs_step_drained() and pcs_stock_trim_steps(), which also uncharge.
 */
#ifndef PCSTOCK_STOCK_STEPS_H
#define PCSTOCK_STOCK_STEPS_H

#include <stdatomic.h>
#include <stdbool.h>

#include <pcstock/stock.h>

struct pcstock_counter;
struct pcstock_domain;
struct pcstock_stock_pcpu_;	/* a CPU's statistics (pcstock/stock_inline.h) */

/**
 * struct pcs_stock_steps - the per-counter stock's steps
 * @take: take @nr pages from the slot in @region, whose value must be
 *	negative (a disabled stock's, @marked) or not as asked; true if it
 *	did.  @marked: the stock is disabled or exact and the charge may
 *	still take pages already in the slot, keeping its marks; else only an
 *	unmarked slot serves.  Serves every charge of up to a slot: the hit,
 *	counted as one.  The removal is an acquire (pairs with @refill's
 *	release).
 * @refill_size: the pages a miss of @nr charges up the hierarchy, the
 *	surplus going to @refill: from @nr (no refill) to @nr + @batch (a
 *	surplus of at most a batch, which @refill can hold); a value
 *	outside that range aborts with a message naming the step (the
 *	explorer reports it as a violation).  @batch is the counter's.
 *	Default: @batch, or @nr when that is more.
 * @refill: add @nr pages, already charged, to the slot in @region, never
 *	taking it above @batch; what does not fit goes to @trim (through
 *	pcs_stock_trim_steps(), so that a policy's own @trim runs), and a
 *	marked slot takes nothing (its pages go up the same way).  The
 *	addition is a release (pairs with @take's and @drain's acquire).
 *	Also called by an uncharge of up to @batch pages when the kind
 *	refills on uncharge: a policy declaring uncharges_refill keeps such
 *	pages whenever the slot has room for them under @batch.
 * @drain: empty @cpu's slot (pcs_step_slot_of()), last read as @seen
 *	(not empty), keeping its marks; uncharge and count the pages with
 *	pcs_step_drained(), and return them.  The removal is an acquire.
 * @trim: @nr pages that could not stay in a slot go back up (uncharged),
 *	and are counted as trimmed in that CPU's statistics @st.
 */
struct pcs_stock_steps {
	bool (*take)(struct pcstock_counter *c, char *region, unsigned long nr,
		     bool marked);
	unsigned long (*refill_size)(struct pcstock_counter *c,
				     unsigned int batch, unsigned long nr);
	void (*refill)(struct pcstock_counter *c, char *region,
		       unsigned int batch, unsigned long nr);
	unsigned long (*drain)(struct pcstock_counter *c, unsigned int cpu,
			       int seen);
	void (*trim)(struct pcstock_counter *c, struct pcstock_stock_pcpu_ *st,
		     unsigned long nr);
};

/* Whether @s overrides any step (an all-NULL table is the kind itself). */
bool pcs_stock_steps_any(const struct pcs_stock_steps *s);

/*
 * pcstock_counter_alloc_stock() with @steps (NULL, or none set: the kind
 * alone).  @steps must outlive the stock (a policy's constant table).
 */
int pcs_counter_alloc_stock_steps(struct pcstock_counter *c,
				  struct pcstock_domain *d, unsigned int batch,
				  enum pcstock_stock_policy kind,
				  const struct pcs_stock_steps *steps);

/* What a step may call (stock.c). */
/* @cpu's slot of @c (a step that gets a region uses pcs_slot_at()). */
atomic_int *pcs_step_slot_of(struct pcstock_counter *c, unsigned int cpu);
/* The pages slot value @v of @c stands for, its marks aside. */
unsigned long pcs_step_pages(const struct pcstock_counter *c, int v);
/* Uncharge @nr pages a drain took from @cpu's slot and count them: @nr. */
unsigned long pcs_step_drained(struct pcstock_counter *c, unsigned int cpu,
			       unsigned long nr);
/*
 * Send @nr pages a refill could not keep up through @c's trim step (a
 * policy's own, or its kind's), counted in @st.
 */
void pcs_stock_trim_steps(struct pcstock_counter *c,
			  struct pcstock_stock_pcpu_ *st, unsigned long nr);

/* The kinds' own steps (stock.c), the defaults of a NULL member. */
bool pcs_stock_step_take(struct pcstock_counter *c, char *region,
			 unsigned long nr, bool marked);
unsigned long pcs_stock_step_refill_size(struct pcstock_counter *c,
					 unsigned int batch, unsigned long nr);
void pcs_stock_step_refill(struct pcstock_counter *c, char *region,
			   unsigned int batch, unsigned long nr);
unsigned long pcs_stock_step_drain(struct pcstock_counter *c, unsigned int cpu,
				   int seen);
void pcs_stock_step_trim(struct pcstock_counter *c,
			 struct pcstock_stock_pcpu_ *st, unsigned long nr);

#endif /* PCSTOCK_STOCK_STEPS_H */
