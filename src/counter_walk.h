/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * counter_walk.h - the counter's per-level steps and its walks up the
 * ancestors, written once for two kinds of parent link (private).
 *
 * A private counter names its parent with a pointer (struct
 * pcstock_counter's parent field); a counter in a shared region (shm.c)
 * cannot, since each process maps the region at its own address, so its
 * link is an offset that the region's code turns into a pointer.  The
 * kernel's semantics (counter.c's file comment, pcstock/counter.h) must
 * not fork into two copies, so the walks live here and are compiled once
 * per kind of link.
 *
 * The first part (guarded) holds the per-level steps, which never follow
 * a link.  The second part is a template: define, before including,
 *   PCW_PARENT(c)  the parent of counter c, or NULL for a root;
 *   PCW_NAME(x)    the name to give the walk x (a prefix, so that two
 *                  kinds can live in one program);
 *   PCW_WARN(c, value, nr_pages)  the underflow report (counter.c's);
 *   PCW_CANCEL     the one-level cancel the walks call (optional: the
 *                  template's own; counter.c names its exported one).
 * The functions keep the linkage they had in counter.c (the per-level
 * steps static, the walks inlined into counter.c's exported functions),
 * so that the compiled code is the one counter.c had before the split.
 */
#ifndef PCSTOCK_COUNTER_WALK_STEPS_H
#define PCSTOCK_COUNTER_WALK_STEPS_H

#include <stdbool.h>

#include <pcstock/counter.h>

#include "atomic.h"
#include "counter_read.h"

/* Each includer uses a subset: the rest must not warn. */
#define PCW_UNUSED __attribute__((unused))

PCW_UNUSED static unsigned long min_ul(unsigned long a, unsigned long b)
{
	return a < b ? a : b;
}

/*
 * Wrapping long arithmetic, as the kernel (built with -fno-strict-overflow)
 * has it: do it in unsigned long and convert back (gcc and clang define the
 * conversion as modulo 2^64).
 */
PCW_UNUSED static long add_return(atomic_long *v, unsigned long nr, memory_order mo)
{
	return (long)((unsigned long)pcs_fetch_add(v, (long)nr, mo) + nr);
}

PCW_UNUSED static long sub_return(atomic_long *v, unsigned long nr, memory_order mo)
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
PCW_UNUSED static void propagate_one(atomic_ulong *setting, atomic_long *published,
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

/*
 * Racy, lossy peak tracking (the kernel's READ_ONCE/WRITE_ONCE pair): a
 * concurrent higher value can be overwritten by a lower one; the error is
 * bounded by the racing charges' sizes.  The global watermark is only
 * looked at when the local one moved, which is sound because both are reset
 * together and the global is never below the local.  `new` is compared as
 * unsigned, as the kernel's long/unsigned long comparison does.
 */
PCW_UNUSED static void update_watermarks(struct pcstock_counter *c, long new)
{
	unsigned long v = (unsigned long)new;

	if (v > pcs_load(&c->local_watermark, PCS_RELAXED)) {
		pcs_store(&c->local_watermark, v, PCS_RELAXED);
		if (v > pcs_load(&c->watermark, PCS_RELAXED))
			pcs_store(&c->watermark, v, PCS_RELAXED);
	}
}

#endif /* PCSTOCK_COUNTER_WALK_STEPS_H */

/* ---- the walks (a template: see the file comment) ------------------------ */

#ifndef PCW_CANCEL
#define PCW_CANCEL PCW_NAME(cancel)
#endif

PCW_UNUSED static void PCW_NAME(propagate)(struct pcstock_counter *c,
				      unsigned long usage)
{
	struct pcstock_counter *parent = PCW_PARENT(c);

	/* The root never publishes: its own min/low_usage stay 0. */
	if (!parent)
		return;
	propagate_one(&c->min, &c->min_usage, &parent->children_min_usage,
		      usage);
	propagate_one(&c->low, &c->low_usage, &parent->children_low_usage,
		      usage);
}

PCW_UNUSED static inline void PCW_NAME(cancel)(struct pcstock_counter *c, unsigned long nr_pages)
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
		PCW_WARN(c, new, nr_pages);
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
		PCW_NAME(propagate)(c, (unsigned long)new);
}

PCW_UNUSED static inline void PCW_NAME(charge)(struct pcstock_counter *c, unsigned long nr_pages)
{
	/* The leaf's flag decides for every level. */
	bool protection = c->protection_support;
	struct pcstock_counter *p;

	for (p = c; p; p = PCW_PARENT(p)) {
		/*
		 * Fully ordered in the kernel (atomic_long_add_return), so
		 * seq_cst here.  Partner: the seq_cst usage loads of
		 * pcstock_counter_set_max(); a forced charge is outside the
		 * set_max guarantee, but the setter still sees it in order.
		 */
		long new = add_return(&p->usage, nr_pages,
				      PCS_ORDER(COUNTER_CHARGE, PCS_SEQ_CST));

		if (protection)
			PCW_NAME(propagate)(p, (unsigned long)new);
		update_watermarks(p, new);
	}
}

PCW_UNUSED static inline bool PCW_NAME(try_charge)(struct pcstock_counter *c,
				unsigned long nr_pages,
				struct pcstock_counter **fail)
{
	bool protection = c->protection_support;
	bool track = c->track_failcnt;
	struct pcstock_counter *p, *q;

	for (p = c; p; p = PCW_PARENT(p)) {
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
			for (q = c; q != p; q = PCW_PARENT(q))
				PCW_CANCEL(q, nr_pages);
			return false;
		}
		if (protection)
			PCW_NAME(propagate)(p, (unsigned long)new);
		/* Raised by the speculative value even if a level above fails. */
		update_watermarks(p, new);
	}
	return true;
}

PCW_UNUSED static inline void PCW_NAME(uncharge)(struct pcstock_counter *c,
			      unsigned long nr_pages)
{
	struct pcstock_counter *p;

	for (p = c; p; p = PCW_PARENT(p))
		PCW_CANCEL(p, nr_pages);
}

PCW_UNUSED static inline void PCW_NAME(set_protection)(struct pcstock_counter *c, atomic_ulong *setting,
			   unsigned long nr_pages)
{
	struct pcstock_counter *p;

	pcs_store(setting, nr_pages, PCS_RELAXED);
	/* Unconditional: does not look at protection_support. */
	for (p = c; p; p = PCW_PARENT(p))
		PCW_NAME(propagate)(p, pcs_counter_usage(p));
}

PCW_UNUSED static inline void PCW_NAME(calculate_protection)(struct pcstock_counter *root,
					  struct pcstock_counter *c,
					  bool recursive)
{
	struct pcstock_counter *parent = PCW_PARENT(c);
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

#undef PCW_PARENT
#undef PCW_NAME
#undef PCW_WARN
#undef PCW_CANCEL
