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
 */
#ifndef PCSTOCK_STOCK_STEPS_H
#define PCSTOCK_STOCK_STEPS_H

#include <stdbool.h>

#include <pcstock/stock.h>

struct pcstock_counter;
struct pcstock_domain;
struct pcstock_stock_pcpu_;	/* a CPU's statistics (pcstock/stock_inline.h) */

/**
 * struct pcs_stock_steps - the per-counter stock's steps
 * @take: take @nr pages from the slot in @region, whose value must be
 *	negative (a disabled stock's, @marked) or not as asked; true if it
 *	did.  Serves every charge of up to a slot: the hit.  The removal is
 *	an acquire (pairs with @refill's release).
 * @refill_size: the pages a miss of @nr charges up the hierarchy, the
 *	surplus going to @refill: from @nr (no refill) to @nr + @batch (a
 *	surplus of at most a batch, which @refill can hold); a value
 *	outside that range aborts with a message naming the step (the
 *	explorer reports it as a violation).  @batch is the counter's.
 *	Default: @batch, or @nr when that is more.
 * @refill: add @nr pages, already charged, to the slot in @region, never
 *	taking it above @batch; what does not fit goes to @trim, and a
 *	marked slot takes nothing (the pages go up).  The addition is a
 *	release (pairs with @take's and @drain's acquire).  Also called by an
 *	uncharge of up to @batch pages when the kind refills on uncharge.
 * @drain: empty @cpu's slot, last read as @seen (not empty), keeping its
 *	marks, uncharge the pages and count them; return them.  The
 *	removal is an acquire.
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
