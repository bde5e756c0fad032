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
void (*pcstock_explore_hook)(enum pcs_atomic_op op, const void *obj);
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

static void warn_underflow(const struct pcstock_counter *c, long value,
			   unsigned long nr_pages)
{
	pcs_fetch_add(&warn_count, 1, PCS_RELAXED);
	/* WARN_ONCE: the exchange elects exactly one reporter. */
	if (!pcs_xchg(&warn_done, true, PCS_RELAXED) && warn_fn)
		warn_fn("page_counter underflow", c, value, nr_pages, warn_arg);
}

/* ---- helpers ------------------------------------------------------------ */

static unsigned long min_ul(unsigned long a, unsigned long b)
{
	return a < b ? a : b;
}

/*
 * Wrapping long arithmetic, as the kernel (built with -fno-strict-overflow)
 * has it: do it in unsigned long and convert back (gcc and clang define the
 * conversion as modulo 2^64).
 */
static long add_return(atomic_long *v, unsigned long nr, memory_order mo)
{
	return (long)((unsigned long)pcs_fetch_add(v, (long)nr, mo) + nr);
}

static long sub_return(atomic_long *v, unsigned long nr, memory_order mo)
{
	return (long)((unsigned long)pcs_fetch_sub(v, (long)nr, mo) - nr);
}

/*
 * Publish min(usage, setting) as this counter's protected usage and add the
 * change to the parent's children sum.  The exchange makes each publisher's
 * delta relative to the value it actually replaced, so the parent's sum stays
 * exact at quiescence whatever the interleaving; the published value itself
 * may be stale when two publishers race (accepted upstream).
 */
static void propagate_one(atomic_ulong *setting, atomic_long *published,
			  atomic_long *children_sum, unsigned long usage)
{
	unsigned long protected, old;
	long delta;

	protected = min_ul(usage, pcs_load(setting, PCS_RELAXED));
	old = (unsigned long)pcs_load(published, PCS_RELAXED);
	if (protected == old)
		return;
	/*
	 * Fully ordered in the kernel (atomic_long_xchg), so seq_cst here.
	 * What matters is the atomicity, against the other publishers'
	 * exchanges of this field; no load in the library relies on its
	 * ordering.
	 */
	old = (unsigned long)pcs_xchg(published, (long)protected,
				      PCS_ORDER(COUNTER_PROTECT, PCS_SEQ_CST));
	delta = (long)(protected - old);
	if (delta)
		pcs_fetch_add(children_sum, delta, PCS_RELAXED);
}

static void propagate_protected_usage(struct pcstock_counter *c,
				      unsigned long usage)
{
	struct pcstock_counter *parent = c->parent;

	/* The root never publishes: its own min/low_usage stay 0. */
	if (!parent)
		return;
	propagate_one(&c->min, &c->min_usage, &parent->children_min_usage,
		      usage);
	propagate_one(&c->low, &c->low_usage, &parent->children_low_usage,
		      usage);
}

/*
 * Racy, lossy peak tracking (the kernel's READ_ONCE/WRITE_ONCE pair): a
 * concurrent higher value can be overwritten by a lower one; the error is
 * bounded by the racing charges' sizes.  The global watermark is only
 * looked at when the local one moved, which is sound because both are reset
 * together and the global is never below the local.  `new` is compared as
 * unsigned, as the kernel's long/unsigned long comparison does.
 */
static void update_watermarks(struct pcstock_counter *c, long new)
{
	unsigned long v = (unsigned long)new;

	if (v > pcs_load(&c->local_watermark, PCS_RELAXED)) {
		pcs_store(&c->local_watermark, v, PCS_RELAXED);
		if (v > pcs_load(&c->watermark, PCS_RELAXED))
			pcs_store(&c->watermark, v, PCS_RELAXED);
	}
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

void pcstock_counter_cancel(struct pcstock_counter *c, unsigned long nr_pages)
{
	/*
	 * Fully ordered in the kernel (atomic_long_sub_return), so seq_cst
	 * here.  Its partner: the seq_cst usage loads of
	 * pcstock_counter_set_max(), which then see usage only after the
	 * decrement (a stale, larger value can only make set_max refuse).
	 */
	long new = sub_return(&c->usage, nr_pages,
			      PCS_ORDER(COUNTER_CANCEL, PCS_SEQ_CST));

	if (new < 0) {
		warn_underflow(c, new, nr_pages);
		/*
		 * Clamp this level only, with a separate store: a charge that
		 * lands between the subtraction and this store is lost.  The
		 * kernel accepts that because an underflow is already a bug;
		 * leaving the level negative would make it look over its
		 * limit forever.
		 */
		new = 0;
		pcs_store(&c->usage, 0, PCS_RELAXED);
	}
	/* Cancel looks at this level's own flag, unlike the charge paths. */
	if (c->protection_support)
		propagate_protected_usage(c, (unsigned long)new);
}

void pcstock_counter_charge(struct pcstock_counter *c, unsigned long nr_pages)
{
	/* The leaf's flag decides for every level. */
	bool protection = c->protection_support;
	struct pcstock_counter *p;

	for (p = c; p; p = p->parent) {
		/*
		 * Fully ordered in the kernel (atomic_long_add_return), so
		 * seq_cst here.  Partner: the seq_cst usage loads of
		 * pcstock_counter_set_max(); a forced charge is outside the
		 * set_max guarantee, but the setter still sees it in order.
		 */
		long new = add_return(&p->usage, nr_pages,
				      PCS_ORDER(COUNTER_CHARGE, PCS_SEQ_CST));

		if (protection)
			propagate_protected_usage(p, (unsigned long)new);
		update_watermarks(p, new);
	}
}

bool pcstock_counter_try_charge(struct pcstock_counter *c,
				unsigned long nr_pages,
				struct pcstock_counter **fail)
{
	bool protection = c->protection_support;
	bool track = c->track_failcnt;
	struct pcstock_counter *p, *q;

	for (p = c; p; p = p->parent) {
		/*
		 * Speculative add, then the limit check.  seq_cst: pairs with
		 * the seq_cst exchange of max and the seq_cst usage loads in
		 * pcstock_counter_set_max() (see the file comment).
		 */
		long new = add_return(&p->usage, nr_pages,
				      PCS_ORDER(COUNTER_TRY_ADD, PCS_SEQ_CST));

		if ((unsigned long)new > pcs_load(&p->max,
				PCS_ORDER(COUNTER_TRY_MAX, PCS_SEQ_CST))) {
			/* Undo this level with a relaxed subtraction ... */
			pcs_fetch_sub(&p->usage, (long)nr_pages, PCS_RELAXED);
			/*
			 * ... count the failure on the failing level if the
			 * leaf asks for it: a lossy increment, as the kernel's
			 * data_race() one (concurrent failures may count
			 * once) ...
			 */
			if (track) {
				struct pcstock_counter *counted = p;
				pcs_store(&counted->failcnt,
					  pcs_load(&counted->failcnt,
						   PCS_RELAXED) + 1,
					  PCS_RELAXED);
			}
			if (fail)
				*fail = p;
			/* ... and cancel the levels below it. */
			for (q = c; q != p; q = q->parent)
				pcstock_counter_cancel(q, nr_pages);
			return false;
		}
		if (protection)
			propagate_protected_usage(p, (unsigned long)new);
		/* Raised by the speculative value even if a level above fails. */
		update_watermarks(p, new);
	}
	return true;
}

void pcstock_counter_uncharge(struct pcstock_counter *c,
			      unsigned long nr_pages)
{
	struct pcstock_counter *p;

	for (p = c; p; p = p->parent)
		pcstock_counter_cancel(p, nr_pages);
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

static void set_protection(struct pcstock_counter *c, atomic_ulong *setting,
			   unsigned long nr_pages)
{
	struct pcstock_counter *p;

	pcs_store(setting, nr_pages, PCS_RELAXED);
	/* Unconditional: does not look at protection_support. */
	for (p = c; p; p = p->parent)
		propagate_protected_usage(p, pcs_counter_usage(p));
}

void pcstock_counter_set_min(struct pcstock_counter *c, unsigned long nr_pages)
{
	set_protection(c, &c->min, nr_pages);
}

void pcstock_counter_set_low(struct pcstock_counter *c, unsigned long nr_pages)
{
	set_protection(c, &c->low, nr_pages);
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
	struct pcstock_counter *parent = c->parent;
	unsigned long usage, parent_usage;

	/* The reclaim target's own values are left stale on purpose. */
	if (c == root)
		return;
	usage = pcs_counter_usage(c);
	if (!usage)
		return;
	if (parent == root) {
		pcs_store(&c->emin, pcs_load(&c->min, PCS_RELAXED), PCS_RELAXED);
		pcs_store(&c->elow, pcs_load(&c->low, PCS_RELAXED), PCS_RELAXED);
		return;
	}
	parent_usage = pcs_counter_usage(parent);
	pcs_store(&c->emin,
		  pcstock_effective_protection(
			  usage, parent_usage, pcs_load(&c->min, PCS_RELAXED),
			  pcs_load(&parent->emin, PCS_RELAXED),
			  (unsigned long)pcs_load(&parent->children_min_usage,
						  PCS_RELAXED),
			  recursive),
		  PCS_RELAXED);
	pcs_store(&c->elow,
		  pcstock_effective_protection(
			  usage, parent_usage, pcs_load(&c->low, PCS_RELAXED),
			  pcs_load(&parent->elow, PCS_RELAXED),
			  (unsigned long)pcs_load(&parent->children_low_usage,
						  PCS_RELAXED),
			  recursive),
		  PCS_RELAXED);
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
