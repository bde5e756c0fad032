// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * adapter.c - pcstock's counter API (pcstock/counter.h) over a kernel
 * unit, so that the counter's conformance tests (tests/test_counter.c,
 * test_counter_ops.c) run against the kernel's own mm/page_counter.c.
 *
 * Each struct pcstock_counter's storage holds the kernel's struct
 * page_counter (smaller; checked on every init), so a counter's address,
 * its parent pointer and try_charge()'s failing level mean the same on
 * both sides.  Only what the tests call is adapted.  What the kernel has
 * no function for (xchg_max, the local watermark and failcnt resets) is
 * the unit's version of memcontrol.c's in-place writes.
 *
 * A tree may lack a function (6.1: the local watermark, the protection
 * calculation); the tests skip what the tree lacks (kpc_tree.h), and a
 * call that reaches an absent one anyway says so and aborts, but for the
 * local watermark's reset, which has nothing to reset (it reads 0).
 *
 * Before main() the binary checks it was built from the tree the test
 * expects (PCSTOCK_KPC_EXPECT_TREE, kpc_tree_mismatch()) and exits with
 * KPC_EXIT_UNIT if not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <pcstock/counter.h>

#include "atomic.h"
#include "kpc.h"

#define K (kpc_unit())

/* The tests' schedule hook: the shim's atomics call it (src/atomic.h). */
void (*_Atomic pcstock_explore_hook)(enum pcs_atomic_op op, const void *obj);

__attribute__((__constructor__)) static void check_tree(void)
{
	const char *file = getenv(KPC_EXPECT_TREE_ENV);
	char why[512];

	if (file && *file && kpc_tree_mismatch(K, file, why, sizeof(why))) {
		fprintf(stderr, "unit built from another tree (%s); rebuild\n",
			why);
		exit(KPC_EXIT_UNIT);
	}
}

static void absent(const char *fn)
{
	fprintf(stderr, "adapter: kernel %s has no %s(): a test of it should"
		" have been skipped\n", K->version, fn);
	abort();
}

static struct pcstock_counter *ours(void *c)
{
	return c;
}

static void snap(const struct pcstock_counter *c, struct kpc_snap *s)
{
	K->snap((void *)c, s);
}

void pcstock_counter_init(struct pcstock_counter *c,
			  struct pcstock_counter *parent,
			  bool protection_support)
{
	if (K->counter_size > sizeof(*c) ||
	    K->counter_align > _Alignof(struct pcstock_counter)) {
		fprintf(stderr, "adapter: the kernel's counter does not fit\n");
		abort();
	}
	K->init(c, parent, protection_support);
}

void pcstock_counter_set_track_failcnt(struct pcstock_counter *c,
				       bool track)
{
	if (K->set_track_failcnt)
		K->set_track_failcnt(c, track);
}

unsigned long pcstock_counter_read(const struct pcstock_counter *c)
{
	return K->read((void *)c);
}

void pcstock_counter_charge(struct pcstock_counter *c, unsigned long nr)
{
	K->charge(c, nr);
}

bool pcstock_counter_try_charge(struct pcstock_counter *c, unsigned long nr,
				struct pcstock_counter **fail)
{
	void *f = NULL;
	bool ok = K->try_charge(c, nr, &f);

	if (!ok && fail)
		*fail = ours(f);
	return ok;
}

void pcstock_counter_cancel(struct pcstock_counter *c, unsigned long nr)
{
	K->cancel(c, nr);
}

void pcstock_counter_uncharge(struct pcstock_counter *c, unsigned long nr)
{
	K->uncharge(c, nr);
}

int pcstock_counter_set_max(struct pcstock_counter *c, unsigned long nr)
{
	return K->set_max(c, nr);
}

void pcstock_counter_set_min(struct pcstock_counter *c, unsigned long nr)
{
	K->set_min(c, nr);
}

void pcstock_counter_set_low(struct pcstock_counter *c, unsigned long nr)
{
	K->set_low(c, nr);
}

void pcstock_counter_set_high(struct pcstock_counter *c, unsigned long nr)
{
	K->set_high(c, nr);
}

void pcstock_counter_reset_watermark(struct pcstock_counter *c)
{
	K->reset_watermark(c);
}

unsigned long pcstock_counter_xchg_max(struct pcstock_counter *c,
				       unsigned long nr)
{
	return K->xchg_max(c, nr);
}

void pcstock_counter_reset_local_watermark(struct pcstock_counter *c)
{
	if (K->reset_local_watermark)
		K->reset_local_watermark(c);
}

void pcstock_counter_reset_failcnt(struct pcstock_counter *c)
{
	K->reset_failcnt(c);
}

int pcstock_counter_memparse(const char *buf, const char *max_keyword,
			     unsigned long *nr_pages)
{
	return K->memparse_pages(buf, max_keyword, nr_pages);
}

unsigned long pcstock_effective_protection(unsigned long usage,
					   unsigned long parent_usage,
					   unsigned long setting,
					   unsigned long parent_effective,
					   unsigned long siblings_protected,
					   bool recursive)
{
	if (!K->effective_protection)
		absent("effective_protection");
	return K->effective_protection(usage, parent_usage, setting,
				       parent_effective, siblings_protected,
				       recursive);
}

void pcstock_counter_calculate_protection(struct pcstock_counter *root,
					  struct pcstock_counter *c,
					  bool recursive)
{
	if (!K->calculate_protection)
		absent("page_counter_calculate_protection");
	K->calculate_protection(root, c, recursive);
}

#define GETTER(name, field)                                                  \
	unsigned long pcstock_counter_##name(const struct pcstock_counter *c) \
	{                                                                    \
		struct kpc_snap s;                                           \
									     \
		snap(c, &s);                                                 \
		return (unsigned long)s.field;                               \
	}

GETTER(max, max)
GETTER(high, high)
GETTER(min, min)
GETTER(low, low)
GETTER(watermark, watermark)
GETTER(local_watermark, local_watermark)
GETTER(failcnt, failcnt)
GETTER(emin, emin)
GETTER(elow, elow)
GETTER(min_usage, min_usage)
GETTER(low_usage, low_usage)
GETTER(children_min_usage, children_min_usage)
GETTER(children_low_usage, children_low_usage)

struct pcstock_counter *pcstock_counter_parent(const struct pcstock_counter *c)
{
	return ours(K->parent((void *)c));
}

bool pcstock_counter_protection_support(const struct pcstock_counter *c)
{
	struct kpc_snap s;

	snap(c, &s);
	return s.protection_support;
}

/* Before v6.15 every failure is counted: the flag is always on. */
bool pcstock_counter_track_failcnt(const struct pcstock_counter *c)
{
	struct kpc_snap s;

	snap(c, &s);
	return s.track_failcnt;
}

/* ---- warnings ---- */

static pcstock_warn_fn warn_fn;
static void *warn_arg;

static void bridge(const char *what, const void *counter, long value,
		   unsigned long nr_pages, void *arg)
{
	(void)arg;
	if (warn_fn)
		warn_fn(what, counter, value, nr_pages, warn_arg);
}

void pcstock_set_warn_handler(pcstock_warn_fn fn, void *arg)
{
	warn_fn = fn;
	warn_arg = arg;
	K->set_warn_handler(bridge, NULL);
}

unsigned long pcstock_warn_count(void)
{
	return K->warn_count();
}

void pcstock_warn_reset(void)
{
	K->warn_reset();
}
