// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * counter.c - the kernel's page_counter, semantics of mainline v6.15+.
 *
 * Memory ordering (docs/design.md, "Memory ordering").  The kernel's
 * value-returning atomics are fully ordered.  The one place that relies on it
 * is the try_charge() / set_max() handshake, a store-buffering pattern: the
 * charger does RMW(usage) then load(max), the setter xchg(max) then
 * load(usage), and at least one of them must see the other.  We make all four
 * accesses seq_cst: seq_cst operations form one total order consistent with
 * program order, so either the charger's RMW precedes the setter's xchg (and
 * the setter's later seq_cst load of usage sees it) or the other way round
 * (and the charger's seq_cst load of max sees the new limit).  On x86 that
 * costs nothing beyond the locked RMW itself; a trailing seq_cst fence would
 * add an mfence per level.  Every other access is relaxed, as READ_ONCE /
 * WRITE_ONCE / void atomics are in the kernel, except the RMWs the kernel
 * makes fully ordered, which stay seq_cst.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcstock/counter.h>

#include "atomic.h"
#include "counter_read.h"

#include "internal.h"

/* Test-build hooks (never in the installed library). */
#ifdef PCSTOCK_EXPLORE
void (*_Atomic pcstock_explore_hook)(enum pcs_atomic_op op, const void *obj);
#endif
#ifdef PCSTOCK_TRACE
void (*_Atomic pcstock_trace_hook)(enum pcs_atomic_op op, const void *obj);
#endif
#ifdef PCSTOCK_FAULT_INJECT
bool (*pcstock_fault_hook)(const char *site);
#endif

static_assert(offsetof(struct pcstock_counter, usage) == 0,
	      "usage opens the counter's first cache line");
static_assert(offsetof(struct pcstock_counter, emin) == PCSTOCK_CACHELINE,
	      "nothing but usage and failcnt shares usage's cache line");
static_assert(offsetof(struct pcstock_counter, parent) ==
		      2 * PCSTOCK_CACHELINE,
	      "limits start their own cache line");
static_assert(offsetof(struct pcstock_counter, stock_domain) ==
		      3 * PCSTOCK_CACHELINE,
	      "the stock descriptor starts its own cache line");
static_assert(sizeof(struct pcstock_counter) == 4 * PCSTOCK_CACHELINE,
	      "the stock descriptor, hit keys included, fits its line");
static_assert(sizeof(long) == sizeof(unsigned long) &&
		      ATOMIC_LONG_LOCK_FREE == 2,
	      "counters need lock-free atomic long");

/* ---- documented aborts ---------------------------------------------------- */

void pcs_die(const char *fmt, ...)
{
	va_list ap;

	fputs("pcstock: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* ---- one-time warning ---------------------------------------------------- */

static pcstock_warn_fn warn_fn;
static void *warn_arg;
static atomic_bool warn_done;
static atomic_ulong warn_count;

void pcstock_set_warn_handler(pcstock_warn_fn fn, void *arg)
{
	warn_fn = fn;
	warn_arg = arg;
}

unsigned long pcstock_warn_count(void)
{
	return pcs_load(&warn_count, PCS_RELAXED);
}

void pcstock_warn_reset(void)
{
	pcs_store(&warn_count, 0, PCS_RELAXED);
	pcs_store(&warn_done, false, PCS_RELAXED);
}

/* Inlined at each caller, as when it had one. */
static inline __attribute__((always_inline)) void
warn_underflow(const struct pcstock_counter *c, long value,
			   unsigned long nr_pages)
{
	pcs_fetch_add(&warn_count, 1, PCS_RELAXED);
	/* WARN_ONCE: the exchange elects exactly one reporter. */
	if (!pcs_xchg(&warn_done, true, PCS_RELAXED) && warn_fn)
		warn_fn("page_counter underflow", c, value, nr_pages, warn_arg);
}

/* The walks, over pointer links (counter_walk.h). */
#define PCW_PARENT(c) ((c)->parent)
#define PCW_NAME(x) priv_##x
#define PCW_WARN(c, value, nr_pages) warn_underflow((c), (value), (nr_pages))
#define PCW_CANCEL pcstock_counter_cancel
#include "counter_walk.h"

void pcs_counter_warn_underflow(const struct pcstock_counter *c, long value,
				unsigned long nr_pages)
{
	warn_underflow(c, value, nr_pages);
}

/* ---- lifecycle ------------------------------------------------------------ */

void pcstock_counter_init(struct pcstock_counter *c,
			  struct pcstock_counter *parent,
			  bool protection_support)
{
	/*
	 * The kernel initialises four fields and relies on kzalloc for the
	 * rest; a struct embedded anywhere needs every field set.  Lock-free
	 * atomics of these types have no hidden state, so zero bytes are a
	 * valid zero value.  Every link is checked when it is made, so no
	 * chain can already hold a cycle that would stop this walk.
	 */
	for (const struct pcstock_counter *p = parent; p; p = p->parent)
		if (p == c)
			pcs_die("pcstock_counter_init(): counter %p would be "
				"its own ancestor", (void *)c);
	memset(c, 0, sizeof(*c));
	atomic_init(&c->max, PCSTOCK_COUNTER_MAX);
	c->parent = parent;
	c->protection_support = protection_support;
	c->track_failcnt = false;
}

void pcstock_counter_set_track_failcnt(struct pcstock_counter *c, bool track)
{
	c->track_failcnt = track;
}

unsigned long pcstock_counter_read(const struct pcstock_counter *c)
{
	return pcs_counter_usage(c);
}

/* ---- charging ------------------------------------------------------------- */

/*
 * Out of line, as before the walks moved to counter_walk.h: uncharge and a
 * failed try_charge call it per level, and the instruction counts of
 * those paths (scripts/callgrind-fastpath) stay what they were.
 */
__attribute__((noinline))
void pcstock_counter_cancel(struct pcstock_counter *c, unsigned long nr_pages)
{
	priv_cancel(c, nr_pages);
}

void pcstock_counter_charge(struct pcstock_counter *c, unsigned long nr_pages)
{
	priv_charge(c, nr_pages);
}

bool pcstock_counter_try_charge(struct pcstock_counter *c,
				unsigned long nr_pages,
				struct pcstock_counter **fail)
{
	return priv_try_charge(c, nr_pages, fail);
}

void pcstock_counter_uncharge(struct pcstock_counter *c,
			      unsigned long nr_pages)
{
	priv_uncharge(c, nr_pages);
}

/* ---- limits and settings ----------------------------------------------------- */

int pcstock_counter_set_max(struct pcstock_counter *c, unsigned long nr_pages)
{
	for (;;) {
		unsigned long old, usage;

		/*
		 * seq_cst loads and exchange: the setter's half of the
		 * handshake with try_charge()'s seq_cst add and max load.
		 */
		usage = (unsigned long)pcs_load(&c->usage,
				PCS_ORDER(COUNTER_SET_USAGE, PCS_SEQ_CST));
		if (usage > nr_pages)
			return -EBUSY;
		old = pcs_xchg(&c->max, nr_pages,
			       PCS_ORDER(COUNTER_SET_MAX, PCS_SEQ_CST));
		/*
		 * Done if nobody charged meanwhile, or if the limit went up:
		 * a charger that read the old limit is bounded by it, hence
		 * by the new one.
		 */
		if ((unsigned long)pcs_load(&c->usage,
					    PCS_ORDER(COUNTER_RECHECK,
						      PCS_SEQ_CST)) <= usage ||
		    nr_pages >= old)
			return 0;
		/* Usage grew while lowering: restore (plain store) and retry. */
		pcs_store(&c->max, old, PCS_RELAXED);
		pcs_spin_yield();
	}
}

void pcstock_counter_set_min(struct pcstock_counter *c, unsigned long nr_pages)
{
	priv_set_protection(c, &c->min, nr_pages);
}

void pcstock_counter_set_low(struct pcstock_counter *c, unsigned long nr_pages)
{
	priv_set_protection(c, &c->low, nr_pages);
}

void pcstock_counter_set_high(struct pcstock_counter *c,
			      unsigned long nr_pages)
{
	pcs_store(&c->high, nr_pages, PCS_RELAXED);
}

void pcstock_counter_reset_watermark(struct pcstock_counter *c)
{
	unsigned long usage = pcs_counter_usage(c);

	/* Local first, so that local <= global holds in program order. */
	pcs_store(&c->local_watermark, usage, PCS_RELAXED);
	pcs_store(&c->watermark, usage, PCS_RELAXED);
}

unsigned long pcstock_counter_xchg_max(struct pcstock_counter *c,
				       unsigned long nr_pages)
{
	unsigned long old;

	/*
	 * Fully ordered, as the kernel's xchg on the field: pairs with
	 * try_charge()'s add to usage followed by its read of max (the
	 * store-buffering handshake of pcstock_counter_set_max()), so a
	 * caller that reads usage after this sees every charge that missed
	 * the new limit.  A seq_cst exchange alone is not a fence: a
	 * relaxed read of usage after it (pcstock_counter_read(),
	 * memory.max's reclaim loop) may still miss such a charge; the
	 * fence after it, as the kernel's smp_mb() after its xchg, may not
	 * (explorer: counter-xchg).
	 */
	old = pcs_xchg(&c->max, nr_pages,
		       PCS_ORDER(COUNTER_XCHG_MAX, PCS_SEQ_CST));
	pcs_fence(PCS_ORDER(COUNTER_XCHG_FENCE, PCS_SEQ_CST));
	return old;
}

void pcstock_counter_reset_local_watermark(struct pcstock_counter *c)
{
	pcs_store(&c->local_watermark, pcs_counter_usage(c), PCS_RELAXED);
}

void pcstock_counter_reset_failcnt(struct pcstock_counter *c)
{
	/* Lossy against a racing failure, as the kernel's plain store. */
	pcs_store(&c->failcnt, 0, PCS_RELAXED);
}

/* ---- protection ------------------------------------------------------------------ */

/*
 * @a * @b / @d without losing the product's high half: the kernel's
 * mul_u64_u64_div_u64().  Every caller below guarantees the quotient fits
 * (it is at most @a or at most @b), so it is never truncated.
 */
static unsigned long mul_div_ul(unsigned long a, unsigned long b,
				unsigned long d)
{
	return (unsigned long)((unsigned __int128)a * b / d);
}

unsigned long pcstock_effective_protection(unsigned long usage,
					   unsigned long parent_usage,
					   unsigned long setting,
					   unsigned long parent_effective,
					   unsigned long siblings_protected,
					   bool recursive)
{
	unsigned long protected = min_ul(usage, setting);
	unsigned long parent_unclaimed, parent_unprotected, unprotected;
	unsigned long ep;

	/*
	 * Overcommitted parent budget: share it in proportion to utilised
	 * protection.  The divisor exceeds parent_effective, so it is never
	 * 0 and the share is below @protected.
	 */
	if (siblings_protected > parent_effective)
		return mul_div_ul(protected, parent_effective,
				  siblings_protected);

	ep = protected;
	if (!recursive)
		return ep;
	/*
	 * Float the unclaimed rest in proportion to unprotected usage.  The
	 * guards keep the divisor positive despite non-atomic reads.  Those
	 * reads can also show a child using more than its parent; the
	 * child's unprotected usage is then capped at the parent's, so its
	 * share never exceeds parent_unclaimed (6.12.118's fix, which also
	 * took the products to 128 bits: nothing here wraps any more).
	 */
	if (parent_effective > siblings_protected &&
	    parent_usage > siblings_protected && usage > protected) {
		parent_unclaimed = parent_effective - siblings_protected;
		parent_unprotected = parent_usage - siblings_protected;
		unprotected = min_ul(usage - protected, parent_unprotected);
		ep += mul_div_ul(parent_unclaimed, unprotected,
				 parent_unprotected);
	}
	return ep;
}

void pcstock_counter_calculate_protection(struct pcstock_counter *root,
					  struct pcstock_counter *c,
					  bool recursive)
{
	priv_calculate_protection(root, c, recursive);
}

/* ---- readers ------------------------------------------------------------------- */

/* The exported readers are the inline ones (counter_read.h), called. */
#define DEFINE_READER(field)                                                  \
	unsigned long pcstock_counter_##field(const struct pcstock_counter *c) \
	{                                                                     \
		return pcs_counter_##field(c);                                \
	}

DEFINE_READER(max)
DEFINE_READER(high)
DEFINE_READER(min)
DEFINE_READER(low)
DEFINE_READER(watermark)
DEFINE_READER(local_watermark)
DEFINE_READER(failcnt)
DEFINE_READER(emin)
DEFINE_READER(elow)
DEFINE_READER(min_usage)
DEFINE_READER(low_usage)
DEFINE_READER(children_min_usage)
DEFINE_READER(children_low_usage)

struct pcstock_counter *pcstock_counter_parent(const struct pcstock_counter *c)
{
	return c->parent;
}

bool pcstock_counter_protection_support(const struct pcstock_counter *c)
{
	return c->protection_support;
}

bool pcstock_counter_track_failcnt(const struct pcstock_counter *c)
{
	return c->track_failcnt;
}
