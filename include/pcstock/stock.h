/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/stock.h - the per-CPU charge stock inside a counter.
 *
 * The 2026 "move stock from mem_cgroup to page_counter" series (v4): each
 * stocked counter owns a 4-byte atomic slot per CPU of a domain holding
 * pages already charged to the hierarchy but not handed out.  A small
 * charge is served from the calling CPU's slot without touching any
 * counter; a miss charges a whole batch and parks the surplus in the slot.
 * Any thread can drain any CPU's slot with an atomic exchange.
 *
 * A hit finds the calling CPU's slot through a per-thread cache of that
 * CPU's region of the domain's per-CPU arena (the kernel's per-CPU offset):
 * a compare, an add and the slot's CAS.  The cache holds the domain of the
 * thread's last stocked call, so a thread's first stocked call in a domain
 * and its first after a call in another domain find the CPU the long way.
 * An RSEQ domain's CPU, the OS CPU the thread runs on, has its own entry,
 * checked against the rseq area's cpu_id at each hit of the group API
 * (pcstock/hierarchy.h) and each uncharge: a thread that migrated finds
 * its new CPU the long way; the counter-level charge always does.
 *
 * Invariant at every quiescent point, for every counter:
 *   usage == pages held by callers (through it and its descendants)
 *            + the stock of it and its descendants,
 * and the stock of one counter is at most pcstock_counter_stock_bound().
 */
#ifndef PCSTOCK_STOCK_H
#define PCSTOCK_STOCK_H

#include <stdbool.h>

#include <pcstock/common.h>
#include <pcstock/counter.h>
#include <pcstock/cpu.h>

PCSTOCK_EXTERN_C_BEGIN

/**
 * enum pcstock_stock_policy - which stock algorithm a counter runs
 * @PCSTOCK_STOCK_DEFAULT: the series with its review findings fixed: no
 *	slot ever holds more than batch (an addition that would overflow
 *	empties the slot and sends its pages up with the new ones, as
 *	mainline's refill_stock() does); a drain reads before it exchanges;
 *	uncharges of up to batch pages refill the local slot; charges and
 *	uncharges above batch bypass the stock.
 * @PCSTOCK_STOCK_V4: exactly the series as posted (v4 3/5): CAS consume,
 *	greedy max(batch, n) refill with the surplus added to the then
 *	current CPU's slot (no cap below PCSTOCK_STOCK_V4_CEILING, ours),
 *	exact fallback, unconditional exchange drain, uncharges straight to
 *	the hierarchy.
 * @PCSTOCK_STOCK_EXACT: exact at the limit (ours, in the spirit of the
 *	kernel's percpu_counter_limited_add()): DEFAULT while every level of
 *	the counter's ancestry is far from its max; near it, no stock.  A
 *	miss that finds some level's margin (max - usage) below what the
 *	slots can hide, pcstock_counter_stock_bound() = nr_cpus × batch, or
 *	whose batch charge fails, turns the stock off: every slot is marked
 *	as by pcstock_counter_disable_stock() and drained, the surplus goes
 *	back up, and charges and uncharges are exact.  A miss that finds
 *	every margin at least twice the bound turns it back on (hysteresis:
 *	usage moves by at least the bound between two round trips, each
 *	O(nr_cpus) atomics).  An exact charge that fails drains every slot
 *	and, if that found pages, tries once more (so it may add up to 3 to
 *	failcnt), so no charge fails for pages in the counter's own stock.
 *	The check is on the miss path: the hit is DEFAULT's.  Stranding
 *	bound: at most the bound in stock, as DEFAULT, and none once a miss
 *	has seen a level within the bound of its max, until a miss sees
 *	every level twice as far; so none while within the bound of max at
 *	a level whose usage changes only through this counter's own charges
 *	(max unchanged).  Stocks of other counters under a common ancestor
 *	are theirs: the caller drains them (pcstock_counter_stock_go_exact())
 *	before it treats a failure at that ancestor as final.
 */
enum pcstock_stock_policy {
	PCSTOCK_STOCK_DEFAULT = 0,
	PCSTOCK_STOCK_V4,
	PCSTOCK_STOCK_EXACT,
};

/* The largest batch a stock accepts (a slot is a 4-byte int). */
#define PCSTOCK_STOCK_MAX_BATCH 65536U

/*
 * V4's slot has no cap in the series; ours stops at this many pages (2^24,
 * 256 of the largest batches): a refill that takes a V4 slot past it
 * drains the slot, its pages going up with the refill's (counted as a
 * drain).  Far above any slot a fair run builds, it only bounds the
 * adversarial sequences (a thread that always misses on one CPU and
 * refills another) that would otherwise carry the 4-byte slot into the
 * disable mark's range and then overflow it.  A deviation from the kernel.
 */
#define PCSTOCK_STOCK_V4_CEILING 0x1000000U

/**
 * struct pcstock_stock_stats - stock statistics, summed over CPUs
 * @hits: charges served from a slot
 * @misses: stocked charges that went to the hierarchy
 * @refills: surpluses (from a batch charge or an uncharge) put in a slot
 * @drains: drains that found pages (also a V4 refill's past
 *	PCSTOCK_STOCK_V4_CEILING)
 * @drained_pages: pages returned by drains
 * @trims: pages sent back up because a slot would have exceeded batch
 *	(DEFAULT)
 *
 * Kept per CPU and updated without atomic RMWs, so two threads sharing one
 * CPU can lose an update: the figures are exact only when each CPU has one
 * thread.
 */
struct pcstock_stock_stats {
	unsigned long hits;
	unsigned long misses;
	unsigned long refills;
	unsigned long drains;
	unsigned long drained_pages;
	unsigned long trims;
};

/**
 * pcstock_counter_alloc_stock() - give a counter a per-CPU stock
 * @c: an initialised counter
 * @d: the domain whose CPUs own the slots; must outlive the stock
 * @batch: 1..PCSTOCK_STOCK_MAX_BATCH pages (the kernel uses 64)
 * @policy: enum pcstock_stock_policy
 *
 * Registers an offline hook: taking a CPU of @d offline drains its slot.
 * On failure the counter keeps working unstocked: every stocked call then
 * behaves exactly like the plain counter call.
 *
 * Context: before the counter is shared, or with no concurrent stocked
 * call on it.
 *
 * Return: 0; -EINVAL (NULL, batch out of range, unknown policy); -EBUSY if
 * @c already has a stock; -ENOMEM.
 */
PCSTOCK_API int pcstock_counter_alloc_stock(struct pcstock_counter *c,
					    struct pcstock_domain *d,
					    unsigned int batch,
					    enum pcstock_stock_policy policy);

/**
 * pcstock_counter_disable_stock() - stop putting pages in the stock
 * @c: the counter (unstocked or already disabled is fine)
 *
 * Later charges and uncharges go to the hierarchy; pages already in slots
 * stay there until drained (drains still work) and are still consumed by
 * stocked charges.  Every slot is marked with one atomic RMW, so a call
 * racing the disable either puts its pages in a slot before the mark (a
 * drain after the disable then takes them) or puts none: once this
 * returns, a drain of every CPU leaves the stock empty for good.
 * Idempotent; O(CPUs of the domain).
 *
 * Context: any thread.
 */
PCSTOCK_API void pcstock_counter_disable_stock(struct pcstock_counter *c);

/**
 * pcstock_counter_free_stock() - drain every CPU and free the stock
 * @c: the counter (unstocked is fine)
 *
 * Idempotent.  Afterwards @c is a plain counter again.
 *
 * Context: no concurrent stocked call on @c.
 */
PCSTOCK_API void pcstock_counter_free_stock(struct pcstock_counter *c);

/**
 * pcstock_counter_drain_stock() - return one CPU's stock to the hierarchy
 * @c: the counter
 * @cpu: any CPU of the domain (remote drains are fine)
 *
 * Context: any thread, concurrently with charges on that CPU.
 *
 * Return: the pages uncharged (0 if none, unstocked, or @cpu out of range).
 */
PCSTOCK_API unsigned long pcstock_counter_drain_stock(struct pcstock_counter *c,
						      unsigned int cpu);

/**
 * pcstock_counter_try_charge_stock() - charge through the calling CPU's stock
 * @c: the leaf, not NULL (the hit path checks nothing, as the counter's
 *     own charge and uncharge)
 * @nr_pages: pages wanted (0 is a hit that takes nothing)
 * @fail: as pcstock_counter_try_charge(), written by a failed attempt: on
 *        failure it names the level that refused the exact charge; a
 *        failed greedy attempt also writes it even when the exact charge
 *        then succeeds (as v4 does); may be NULL
 * @nr_charged: receives the pages charged to the hierarchy by this call:
 *              0 on a stock hit, else the pages that stay charged (batch,
 *              or @nr_pages when the surplus went back up: a charge
 *              exact at the limit, or a thread that was no CPU of the
 *              domain any more when it came to keep the surplus);
 *              untouched on failure; may be NULL
 *
 * A hit takes the pages from this CPU's slot, whenever it holds
 * @nr_pages (a V4 slot may hold more than PCSTOCK_STOCK_MAX_BATCH pages,
 * and serves charges that large too).  A miss tries the greedy
 * max(batch, nr_pages) and keeps the surplus in the slot of the CPU the
 * caller is on afterwards; if that fails it tries exactly @nr_pages (so
 * one call can add 2 to failcnt, as in the kernel).  @nr_pages >= batch
 * and a disabled stock charge exactly.  A thread that is no CPU of the
 * domain, or an unstocked counter, charges exactly @nr_pages through
 * pcstock_counter_try_charge().  A hit succeeds even above max: its pages
 * were charged earlier.
 *
 * Context: any thread, lock-free.
 *
 * Return: true if the caller now holds @nr_pages more pages.
 */
PCSTOCK_API bool pcstock_counter_try_charge_stock(struct pcstock_counter *c,
						  unsigned long nr_pages,
						  struct pcstock_counter **fail,
						  unsigned long *nr_charged);

/**
 * pcstock_counter_uncharge_stock() - give pages back through the stock
 * @c: the leaf, not NULL (as above)
 * @nr_pages: pages the caller held
 *
 * DEFAULT: up to batch pages refill this CPU's slot; if the slot would
 * then hold more than batch, it is emptied and its pages go up the
 * hierarchy with @nr_pages (one hierarchical uncharge per batch for a CPU
 * that only receives pages).  Larger uncharges, a disabled stock, a
 * thread that is no CPU of the domain and a thread inside a group's
 * reclaim or OOM callback (see pcstock_reclaim_fn) go up directly.  V4:
 * always pcstock_counter_uncharge().  EXACT: as DEFAULT while its stock
 * is on, else straight up.
 *
 * Context: any thread, lock-free.
 */
PCSTOCK_API void pcstock_counter_uncharge_stock(struct pcstock_counter *c,
						unsigned long nr_pages);

/**
 * pcstock_counter_stock_go_exact() - make @c's stock hide nothing now
 * @c: the counter (unstocked is fine)
 *
 * PCSTOCK_STOCK_EXACT: switches an enabled stock to exact, as a miss near
 * max does (mark and drain every CPU), until one of @c's own misses finds
 * every level of its ancestry at least twice pcstock_counter_stock_bound()
 * below its max.  Every kind: then drains every CPU.  For a caller whose
 * charge failed at a common ancestor of stocked counters: calling this on
 * each stocked counter under that ancestor before reclaiming (or failing)
 * leaves no page of the ancestor's usage in an EXACT stock, and keeps
 * those stocks from filling again while the ancestor is near its max.
 *
 * Context: any thread, concurrently with stocked calls on @c; O(CPUs).
 *
 * Return: the pages uncharged from the slots.
 */
PCSTOCK_API unsigned long
pcstock_counter_stock_go_exact(struct pcstock_counter *c);

/**
 * pcstock_counter_stock_pages() - pages currently held in @c's slots
 *
 * Return: the sum over CPUs, a snapshot (0 if unstocked).
 */
PCSTOCK_API unsigned long
pcstock_counter_stock_pages(const struct pcstock_counter *c);

/**
 * pcstock_counter_stock_bound() - the most pages @c's stock can hide
 *
 * Return: nr_cpus × batch (0 if unstocked).  V4 can exceed it transiently
 * and, by the racing-refill growth, persistently (the review finding
 * DEFAULT fixes).
 */
PCSTOCK_API unsigned long
pcstock_counter_stock_bound(const struct pcstock_counter *c);

/** pcstock_counter_stock_batch() - the batch, 0 if unstocked */
PCSTOCK_API unsigned int
pcstock_counter_stock_batch(const struct pcstock_counter *c);

/**
 * pcstock_counter_stock_stats() - statistics summed over CPUs
 * @c: the counter
 * @st: receives them (all 0 if unstocked)
 */
PCSTOCK_API void pcstock_counter_stock_stats(const struct pcstock_counter *c,
					     struct pcstock_stock_stats *st);

PCSTOCK_EXTERN_C_END

/* The opt-in inline fast paths (C only): see pcstock/stock_inline.h. */
#ifdef PCSTOCK_INLINE
#include <pcstock/stock_inline.h>
#endif

#endif /* PCSTOCK_STOCK_H */
