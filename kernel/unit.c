// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * unit.c - one kernel tree's page_counter code, unmodified, as a kpc_unit.
 *
 * Compiled with -I<staged tree>/include -I<staged tree> after the shim
 * (kernel/shim) and pcstock's src/ (for src/atomic.h), this file includes
 * the kernel's mm/page_counter.c and the lib/ pieces kernel/extract.sh cut
 * out, so every static function of theirs (effective_protection()) is
 * reachable, and publishes them through struct kpc_unit.  What the kernel
 * does outside page_counter.c (memcontrol.c's in-place field writes, the
 * cgroup files' strstrip()) is written here, in our words, and says so.
 */
#include "kpc_tree.h"

/* page_counter_cancel()'s WARN_ONCE is about its "counter" (linux/bug.h). */
#define KPC_WARN_SUBJECT counter
#include <linux/page_counter.h>
#include <mm/page_counter.c>
#undef KPC_WARN_SUBJECT

#include <linux/percpu.h>

#include <lib/ctype.c>
#include <lib/kparse.c>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kpc.h"

#define KPC_EXPORT __attribute__((__visibility__("default")))

#ifndef CONFIG_MEMCG
#error "the unit is built with -DCONFIG_MEMCG (page_counter_calculate_protection)"
#endif

/*
 * A kpc_tree.h from before these macros would leave them 0 silently
 * (#if of an undefined name): a stale stage fails to build instead.
 */
#if !defined(KPC_TREE_HAS_PROTECTION_SUPPORT) ||                             \
	!defined(KPC_TREE_HAS_LOCAL_WATERMARK) ||                            \
	!defined(KPC_TREE_HAS_CALC_PROTECTION) ||                            \
	!defined(KPC_TREE_HAS_PROTECTION_CAP) ||                             \
	!defined(KPC_TREE_STOCK_PARTIAL) || !defined(KPC_TREE_OWN_STOCK) ||  \
	!defined(KPC_TREE_ID) || !defined(KPC_TREE_SOURCE) ||                \
	!defined(KPC_TREE_DESCRIBE) || !defined(KPC_TREE_FILES)
#error "kpc_tree.h lacks feature or identity macros: restage the tree"
#endif

/* ---- WARN_ONCE (linux/bug.h) ---- */

static kpc_warn_fn warn_fn;
static void *warn_arg;
static unsigned long warn_hits;
static bool warn_fired;

void kpc_warn(const void *subject, const char *fmt, ...)
{
	/* Static: the handler may keep @what, as pcstock's may. */
	static char msg[160];
	char *colon;
	long value = 0;
	unsigned long nr = 0;
	va_list ap;

	warn_hits++;
	if (warn_fired)
		return;
	warn_fired = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* "page_counter underflow: %ld nr_pages=%lu": what, value, pages. */
	colon = strchr(msg, ':');
	if (colon) {
		*colon = '\0';
		if (sscanf(colon + 1, " %ld nr_pages=%lu", &value, &nr) != 2)
			value = 0, nr = 0;
	}
	if (warn_fn)
		warn_fn(msg, subject, value, nr, warn_arg);
}

static void set_warn_handler(kpc_warn_fn fn, void *arg)
{
	warn_fn = fn;
	warn_arg = arg;
}

static unsigned long warn_count(void)
{
	return warn_hits;
}

static void warn_reset(void)
{
	warn_hits = 0;
	warn_fired = false;
}

/* ---- counters ---- */

#define PC(c) ((struct page_counter *)(c))

/*
 * A tree without protection_support (before v6.11's opt-in) propagates
 * protected usage on every counter: the argument has no kernel meaning
 * there, and the oracle passes true to both sides.
 */
static void init(void *c, void *parent, bool protection_support)
{
	memset(c, 0, sizeof(struct page_counter));
#if KPC_TREE_HAS_PROTECTION_SUPPORT
	page_counter_init(PC(c), PC(parent), protection_support);
#else
	(void)protection_support;
	page_counter_init(PC(c), PC(parent));
#endif
}

#if KPC_TREE_HAS_TRACK_FAILCNT
static void set_track_failcnt(void *c, bool track)
{
	PC(c)->track_failcnt = track;
}
#endif

static unsigned long read(void *c)
{
	return page_counter_read(PC(c));
}

static void charge(void *c, unsigned long nr_pages)
{
	page_counter_charge(PC(c), nr_pages);
}

static bool try_charge(void *c, unsigned long nr_pages, void **fail)
{
	struct page_counter *f = NULL;
	bool ok = page_counter_try_charge(PC(c), nr_pages, &f);

	if (!ok && fail)
		*fail = f;
	return ok;
}

static void cancel(void *c, unsigned long nr_pages)
{
	page_counter_cancel(PC(c), nr_pages);
}

static void uncharge(void *c, unsigned long nr_pages)
{
	page_counter_uncharge(PC(c), nr_pages);
}

static int set_max(void *c, unsigned long nr_pages)
{
	return page_counter_set_max(PC(c), nr_pages);
}

static void set_min(void *c, unsigned long nr_pages)
{
	page_counter_set_min(PC(c), nr_pages);
}

static void set_low(void *c, unsigned long nr_pages)
{
	page_counter_set_low(PC(c), nr_pages);
}

static void set_high(void *c, unsigned long nr_pages)
{
	page_counter_set_high(PC(c), nr_pages);
}

static void reset_watermark(void *c)
{
	page_counter_reset_watermark(PC(c));
}

/* memory_max_write(): the limit is exchanged in place. */
static unsigned long xchg_max(void *c, unsigned long nr_pages)
{
#ifdef KPC_MUTATE_XCHG_RETURNS_NEW
	(void)xchg(&PC(c)->max, nr_pages);
	return nr_pages;
#else
	return xchg(&PC(c)->max, nr_pages);
#endif
}

#if KPC_TREE_HAS_LOCAL_WATERMARK
/* peak_write(): the local peak restarts at the usage read once. */
static void reset_local_watermark(void *c)
{
	WRITE_ONCE(PC(c)->local_watermark, page_counter_read(PC(c)));
}
#endif

/* mem_cgroup_reset() for *.failcnt: a plain store of 0. */
static void reset_failcnt(void *c)
{
	PC(c)->failcnt = 0;
}

#if KPC_TREE_HAS_CALC_PROTECTION
static void calculate_protection(void *root, void *c, bool recursive)
{
	page_counter_calculate_protection(PC(root), PC(c), recursive);
}
#endif

/* The oracle's resync after an expected deviation (kpc.h). */
static void set_eprot(void *c, unsigned long emin, unsigned long elow)
{
	WRITE_ONCE(PC(c)->emin, emin);
	WRITE_ONCE(PC(c)->elow, elow);
}

static void *parent(void *c)
{
	return PC(c)->parent;
}

static void snap(void *c, struct kpc_snap *s)
{
	struct page_counter *p = PC(c);

	s->usage = atomic_long_read(&p->usage);
	s->failcnt = p->failcnt;
	s->emin = p->emin;
	s->elow = p->elow;
	s->min_usage = atomic_long_read(&p->min_usage);
	s->children_min_usage = atomic_long_read(&p->children_min_usage);
	s->low_usage = atomic_long_read(&p->low_usage);
	s->children_low_usage = atomic_long_read(&p->children_low_usage);
	s->watermark = p->watermark;
#if KPC_TREE_HAS_LOCAL_WATERMARK
	s->local_watermark = p->local_watermark;
#else
	s->local_watermark = 0;
#endif
	s->max = p->max;
	s->high = p->high;
	s->min = p->min;
	s->low = p->low;
#if KPC_TREE_HAS_PROTECTION_SUPPORT
	s->protection_support = p->protection_support;
#else
	s->protection_support = true;	/* always propagated (init()) */
#endif
#if KPC_TREE_HAS_TRACK_FAILCNT
	s->track_failcnt = p->track_failcnt;
#else
	s->track_failcnt = true;
#endif
}

/* ---- parsing ---- */

/*
 * A cgroup limit file's write handler (memory_max_write() and its
 * siblings, mem_cgroup_write() on v1): strip the buffer, then parse it.
 */
static int write_limit(const char *buf, const char *max_keyword,
		       unsigned long *nr_pages)
{
	size_t len = strlen(buf);
	char *copy = malloc(len + 1);
	int ret;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len + 1);
	ret = page_counter_memparse(strstrip(copy), max_keyword, nr_pages);
	free(copy);
	return ret;
}

/* ---- the stock series (linux/percpu.h) ---- */

unsigned int kpc_nr_cpus = 1;
#ifdef KPC_EXPLORE
_Thread_local unsigned int kpc_this_cpu;
#else
unsigned int kpc_this_cpu;
#endif
bool kpc_percpu_fail;

static void fail_next_alloc(void)
{
	kpc_percpu_fail = true;
}

/* ---- preemption points (linux/preempt.h) ---- */

kpc_preempt_fn kpc_preempt_hook;
unsigned int kpc_preempt_count;
static void *preempt_arg;

/*
 * Whatever runs at the point is another task: it starts with preemption
 * enabled, and the interrupted task's count is its own again afterwards.
 */
void kpc_preempt_at(void)
{
	unsigned int saved = kpc_preempt_count;

	kpc_preempt_count = 0;
	kpc_preempt_hook(saved == 0, preempt_arg);
	kpc_preempt_count = saved;
}

static void set_preempt_hook(kpc_preempt_fn fn, void *arg)
{
	preempt_arg = arg;
	kpc_preempt_hook = fn;
}

#if KPC_TREE_HAS_STOCK
static void set_cpus(unsigned int nr_cpus)
{
	kpc_nr_cpus = nr_cpus;
}

static void set_cpu(unsigned int cpu)
{
	kpc_this_cpu = cpu;
}

static int alloc_stock(void *c, unsigned int batch)
{
	return page_counter_alloc_stock(PC(c), batch);
}

static void free_stock(void *c)
{
	page_counter_free_stock(PC(c));
}

static bool try_charge_stock(void *c, unsigned long nr_pages, void **fail,
			     unsigned long *nr_charged)
{
	struct page_counter *f = NULL;
	bool ok = page_counter_try_charge_stock(PC(c), nr_pages, &f,
						nr_charged);

	if (fail)
		*fail = f;
	return ok;
}

static void drain_stock(void *c, unsigned int cpu)
{
	page_counter_drain_stock(PC(c), cpu);
}

static void discard_stock(void *c)
{
	free_percpu(PC(c)->stock);
	PC(c)->stock = NULL;
}

static long stock_pages(void *c, unsigned int cpu)
{
	if (!PC(c)->stock)
		return 0;
	return atomic_read(&per_cpu_ptr(PC(c)->stock, cpu)->nr_pages);
}
#endif

/* The kernel's field names, for the explorer's traces. */
#define FIELD(f) { #f, offsetof(struct page_counter, f) }
static const struct kpc_field fields[] = {
	FIELD(usage), FIELD(emin), FIELD(min_usage),
	FIELD(children_min_usage), FIELD(elow), FIELD(low_usage),
	FIELD(children_low_usage), FIELD(watermark),
#if KPC_TREE_HAS_LOCAL_WATERMARK
	FIELD(local_watermark),
#endif
	FIELD(failcnt), FIELD(min), FIELD(low), FIELD(high), FIELD(max),
	FIELD(parent),
#if KPC_TREE_HAS_STOCK
	FIELD(stock), FIELD(batch),
#endif
	{ NULL, 0 },
};
#undef FIELD

static const struct kpc_unit unit = {
	.abi = KPC_ABI,
	.version = KPC_TREE_VERSION,
	.mutation = KPC_TREE_MUTATION,
	.tree_id = KPC_TREE_ID,
	.source = KPC_TREE_SOURCE,
	.describe = KPC_TREE_DESCRIBE,
	.files = KPC_TREE_FILES,
	.features = (KPC_TREE_HAS_TRACK_FAILCNT ? KPC_F_TRACK_FAILCNT : 0) |
		    (KPC_TREE_HAS_STOCK ? KPC_F_STOCK : 0) |
		    (KPC_TREE_HAS_PROTECTION_SUPPORT ?
			     KPC_F_PROTECTION_SUPPORT : 0) |
		    (KPC_TREE_HAS_LOCAL_WATERMARK ? KPC_F_LOCAL_WATERMARK : 0) |
		    (KPC_TREE_HAS_CALC_PROTECTION ? KPC_F_CALC_PROTECTION : 0) |
		    (KPC_TREE_HAS_PROTECTION_CAP ? KPC_F_PROTECTION_CAP : 0) |
		    (KPC_TREE_STOCK_PARTIAL ? KPC_F_STOCK_PARTIAL : 0) |
		    (KPC_TREE_OWN_STOCK ? KPC_F_OWN_STOCK : 0),
	.counter_size = sizeof(struct page_counter),
	.counter_align = _Alignof(struct page_counter),
	.counter_max = PAGE_COUNTER_MAX,
	.init = init,
#if KPC_TREE_HAS_TRACK_FAILCNT
	.set_track_failcnt = set_track_failcnt,
#endif
	.read = read,
	.charge = charge,
	.try_charge = try_charge,
	.cancel = cancel,
	.uncharge = uncharge,
	.set_max = set_max,
	.set_min = set_min,
	.set_low = set_low,
	.set_high = set_high,
	.reset_watermark = reset_watermark,
	.xchg_max = xchg_max,
#if KPC_TREE_HAS_LOCAL_WATERMARK
	.reset_local_watermark = reset_local_watermark,
#endif
	.reset_failcnt = reset_failcnt,
#if KPC_TREE_HAS_CALC_PROTECTION
	.calculate_protection = calculate_protection,
	.effective_protection = effective_protection,
#endif
	.set_eprot = set_eprot,
	.parent = parent,
	.snap = snap,
	.memparse_pages = page_counter_memparse,
	.write_limit = write_limit,
	.set_warn_handler = set_warn_handler,
	.warn_count = warn_count,
	.warn_reset = warn_reset,
#if KPC_TREE_HAS_STOCK
	.set_cpus = set_cpus,
	.set_cpu = set_cpu,
	.alloc_stock = alloc_stock,
	.free_stock = free_stock,
	.try_charge_stock = try_charge_stock,
	.drain_stock = drain_stock,
	.stock_pages = stock_pages,
	.discard_stock = discard_stock,
#endif
	.fail_next_alloc = fail_next_alloc,
	.set_preempt_hook = set_preempt_hook,
	.fields = fields,
};

KPC_EXPORT const struct kpc_unit *kpc_unit(void)
{
	return &unit;
}
