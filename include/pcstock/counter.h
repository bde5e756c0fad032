/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/counter.h - the Linux kernel's page_counter, ported to userspace.
 *
 * A counter holds a number of pages charged to it and, hierarchically, to
 * every ancestor.  Semantics follow mainline (v6.15+) mm/page_counter.c,
 * but for the differences listed below, including the races the kernel
 * tolerates:
 *
 *  - try_charge() adds speculatively at each level, so a failed attempt can
 *    raise watermarks of the levels below the failing one to a value that
 *    was never committed, and concurrent observers can see usage > max;
 *  - failcnt and the watermarks are updated with a lossy read-compare-store;
 *  - cancel() clamps a negative level to 0 with a separate store (a charge
 *    landing in between can be lost) and reports the underflow once through
 *    the warning handler;
 *  - set_max() restores the old limit with a plain store.
 *
 * Every value is in pages of PCSTOCK_PAGE_SIZE bytes.  The counter performs
 * no allocation, takes no lock and never blocks.
 *
 * Deliberate differences from the kernel (each pinned by a test):
 *  - pcstock_counter_init() zeroes the whole struct (the kernel relies on a
 *    zeroed allocation); high is therefore 0 until the owner sets it, as
 *    with kzalloc in the kernel.
 *  - pcstock_counter_try_charge() accepts fail == NULL (the kernel requires
 *    a pointer); memparse() rejects NULL arguments with -EINVAL.
 *  - the one-time underflow WARN is a callback (pcstock_set_warn_handler())
 *    instead of a kernel log line; every underflow is counted.
 *  - pcstock_counter_init() with a parent chain containing the counter
 *    aborts with a message (the kernel would loop for ever in a charge).
 *  - pcstock_effective_protection() follows the 6.12.118 stable fix
 *    (128-bit products, a child's unprotected usage capped at its
 *    parent's), where mainline and older trees wrap the products.
 */
#ifndef PCSTOCK_COUNTER_H
#define PCSTOCK_COUNTER_H

#include <stdbool.h>
#include <stddef.h>

#include <pcstock/common.h>

/*
 * C++ sees struct pcstock_counter's layout only: every field is private to
 * the C library, which alone touches them.  Each atomic type has the size
 * and alignment of its plain type on the ABIs pcstock supports, which
 * tests/consumer's C++ consumer checks field by field.
 */
#ifdef __cplusplus
#define PCSTOCK_ATOMIC(type) type
#define PCSTOCK_ALIGNED(n) alignas(n)
#else
#include <stdatomic.h>
#define PCSTOCK_ATOMIC(type) _Atomic(type)
#define PCSTOCK_ALIGNED(n) _Alignas(n)
#endif

PCSTOCK_EXTERN_C_BEGIN

struct pcstock_domain;

/**
 * struct pcstock_counter - a hierarchical page counter
 *
 * Public so that it can be embedded (it needs no allocation); every field
 * is private: use the functions below.  Layout (static-asserted in
 * counter.c): @usage and @failcnt share the first cache line, which every
 * charge writes; protection bookkeeping and watermarks (written on charges
 * too, but not read by try_charge's limit check) take the second; limits,
 * the parent link and flags (read-mostly) the third; the per-CPU stock
 * descriptor (pcstock/stock.h) the fourth.
 */
struct pcstock_counter {
	/* Hot: every charge and uncharge. */
	PCSTOCK_ALIGNED(PCSTOCK_CACHELINE) PCSTOCK_ATOMIC(long) usage;
	PCSTOCK_ATOMIC(unsigned long) failcnt;

	/* Protection and peaks. */
	PCSTOCK_ALIGNED(PCSTOCK_CACHELINE) PCSTOCK_ATOMIC(unsigned long) emin;
	PCSTOCK_ATOMIC(long) min_usage;
	PCSTOCK_ATOMIC(long) children_min_usage;
	PCSTOCK_ATOMIC(unsigned long) elow;
	PCSTOCK_ATOMIC(long) low_usage;
	PCSTOCK_ATOMIC(long) children_low_usage;
	PCSTOCK_ATOMIC(unsigned long) watermark;
	PCSTOCK_ATOMIC(unsigned long) local_watermark;

	/* Read-mostly: limits, tree link, flags. */
	PCSTOCK_ALIGNED(PCSTOCK_CACHELINE) struct pcstock_counter *parent;
	PCSTOCK_ATOMIC(unsigned long) max;
	PCSTOCK_ATOMIC(unsigned long) high;
	PCSTOCK_ATOMIC(unsigned long) min;
	PCSTOCK_ATOMIC(unsigned long) low;
	bool protection_support;
	bool track_failcnt;

	/* Per-CPU stock (pcstock/stock.h); all zero while unstocked. */
	PCSTOCK_ALIGNED(PCSTOCK_CACHELINE) struct pcstock_domain *stock_domain;
	size_t stock_slots;		/* arena handle: 4-byte slot, statistics */
	size_t stock_stats;		/* handle of the statistics in it */
	PCSTOCK_ATOMIC(unsigned int) stock_batch;
	PCSTOCK_ATOMIC(unsigned char) stock_state;
	unsigned char stock_policy;
	void *stock_link;		/* stock layer's private bookkeeping */
	/*
	 * The hit paths' two loads: the domain's hit key while the stock exists
	 * (0 while unstocked), and the most pages an uncharge may put in a
	 * slot: batch while ENABLED with a kind that refills on uncharge
	 * (DEFAULT, and EXACT outside its exact state), else 0.
	 */
	unsigned long long hit_key;
	PCSTOCK_ATOMIC(unsigned int) stock_refill_batch;
};

/**
 * pcstock_counter_init() - initialise a counter
 * @c: the counter
 * @parent: its parent, or NULL for a root
 * @protection_support: maintain the min/low usage bookkeeping on charges
 *
 * Zeroes every field, then sets max to PCSTOCK_COUNTER_MAX, the parent and
 * the protection flag.  high, min and low start at 0 and failcnt tracking
 * off (the kernel's behaviour for a zeroed allocation).
 *
 * A @parent that is @c itself or has @c among its ancestors would make
 * every charge walk a cycle for ever (as it would in the kernel).  The
 * function returns void, as the kernel's does, so this programming error
 * is a documented abort: a message on stderr naming the counter, then
 * abort().  The check walks @parent's chain once (O(depth)).
 *
 * Context: must not race with any other use of @c.
 */
PCSTOCK_API void pcstock_counter_init(struct pcstock_counter *c,
				      struct pcstock_counter *parent,
				      bool protection_support);

/**
 * pcstock_counter_set_track_failcnt() - count failed try_charge attempts
 * @c: the counter
 * @track: whether try_charge() started at @c increments failcnt on the
 *         level that refuses the charge
 *
 * The flag is read from the *leaf* a try_charge() starts at, never from
 * the failing level (kernel v6.15+ semantics; memcg sets it for cgroup v1).
 *
 * Context: set before charging starts.
 */
PCSTOCK_API void pcstock_counter_set_track_failcnt(struct pcstock_counter *c,
						   bool track);

/**
 * pcstock_counter_read() - current usage in pages
 * @c: the counter
 *
 * A relaxed snapshot.  A reader racing with the underflow clamp of
 * pcstock_counter_cancel() can briefly see a negative value cast to a huge
 * unsigned number, as in the kernel.
 *
 * Return: the usage, including every descendant's charges.
 */
PCSTOCK_API unsigned long pcstock_counter_read(const struct pcstock_counter *c);

/**
 * pcstock_counter_charge() - charge unconditionally
 * @c: the leaf to charge
 * @nr_pages: pages to add at @c and every ancestor
 *
 * Ignores max at every level (the kernel's forced charge).  Updates the
 * protection bookkeeping (when @c has protection support, for all levels)
 * and the watermarks.
 *
 * Context: any thread, lock-free.
 */
PCSTOCK_API void pcstock_counter_charge(struct pcstock_counter *c,
					unsigned long nr_pages);

/**
 * pcstock_counter_try_charge() - charge if every level stays within max
 * @c: the leaf to charge
 * @nr_pages: pages to add at @c and every ancestor
 * @fail: set to the first level (counting from @c) whose usage would exceed
 *        its max; written only on failure; may be NULL
 *
 * Each level is added to first and checked afterwards (speculative add), so
 * observers may transiently see usage above max, and a failed attempt
 * leaves the levels below the failing one with watermarks raised to the
 * speculative value.  On failure the failing level is undone with a relaxed
 * subtraction and the levels below it with pcstock_counter_cancel(); levels
 * above it are never touched.  failcnt of the failing level is incremented
 * iff @c tracks failcnt.  Usage equal to max succeeds.  nr_pages == 0
 * succeeds iff no level is currently above its max.
 *
 * Context: any thread, lock-free.  Pairs with pcstock_counter_set_max():
 * when set_max() returns 0 with limit M, no concurrent successful
 * try_charge() leaves committed usage above M.
 *
 * Return: true if charged at every level, false otherwise.
 */
PCSTOCK_API bool pcstock_counter_try_charge(struct pcstock_counter *c,
					    unsigned long nr_pages,
					    struct pcstock_counter **fail);

/**
 * pcstock_counter_cancel() - uncharge one level only
 * @c: the counter
 * @nr_pages: pages to remove from @c (not from its ancestors)
 *
 * If the result is negative, @c is set to 0 and the underflow is reported
 * through the warning handler (once per process) and counted by
 * pcstock_warn_count().  Protection bookkeeping follows @c's own flag.
 *
 * Context: any thread, lock-free.
 */
PCSTOCK_API void pcstock_counter_cancel(struct pcstock_counter *c,
					unsigned long nr_pages);

/**
 * pcstock_counter_uncharge() - uncharge @c and every ancestor
 * @c: the leaf
 * @nr_pages: pages to remove at every level
 *
 * pcstock_counter_cancel() at each level: each clamps independently.
 *
 * Context: any thread, lock-free.
 */
PCSTOCK_API void pcstock_counter_uncharge(struct pcstock_counter *c,
					  unsigned long nr_pages);

/**
 * pcstock_counter_set_max() - set the hard limit if usage allows it
 * @c: the counter (one level; no ancestor walk)
 * @nr_pages: the new limit
 *
 * Fails if usage is above @nr_pages (equal is accepted).  Otherwise
 * exchanges the limit and, if usage grew meanwhile and the limit was being
 * lowered, restores the old limit and retries.  Values above
 * PCSTOCK_COUNTER_MAX are accepted as in the kernel.
 *
 * Context: callers must serialise set_max() on the same counter (as the
 * kernel's memcg_max_mutex does); concurrent chargers are fine.  May yield
 * the CPU while retrying.
 *
 * Return: 0, or -EBUSY if usage exceeds @nr_pages.
 */
PCSTOCK_API int pcstock_counter_set_max(struct pcstock_counter *c,
					unsigned long nr_pages);

/**
 * pcstock_counter_set_min() - set hard protection (memory.min)
 * @c: the counter
 * @nr_pages: the new setting
 *
 * Stores the setting and republishes the protected usage of @c and every
 * ancestor, whatever their protection_support flags.
 *
 * Context: callers serialise setters of the same counter.
 */
PCSTOCK_API void pcstock_counter_set_min(struct pcstock_counter *c,
					 unsigned long nr_pages);

/**
 * pcstock_counter_set_low() - set best-effort protection (memory.low)
 * @c: the counter
 * @nr_pages: the new setting
 *
 * As pcstock_counter_set_min() for the low setting.
 *
 * Context: callers serialise setters of the same counter.
 */
PCSTOCK_API void pcstock_counter_set_low(struct pcstock_counter *c,
					 unsigned long nr_pages);

/**
 * pcstock_counter_set_high() - store the high threshold
 * @c: the counter
 * @nr_pages: the new threshold
 *
 * The counter itself never checks high; it is data for the owner (the
 * group layer throttles with it).
 *
 * Context: any thread.
 */
PCSTOCK_API void pcstock_counter_set_high(struct pcstock_counter *c,
					  unsigned long nr_pages);

/**
 * pcstock_counter_reset_watermark() - restart peak tracking at current usage
 * @c: the counter
 *
 * Reads usage once and stores it to the local watermark, then to the
 * global one.
 *
 * Context: any thread; racing charges may be lost from the new peak.
 */
PCSTOCK_API void pcstock_counter_reset_watermark(struct pcstock_counter *c);

/**
 * pcstock_counter_xchg_max() - set the hard limit unconditionally
 * @c: the counter (one level)
 * @nr_pages: the new limit, even below the current usage
 *
 * The kernel has no function for this: cgroup v2's memory.max write
 * exchanges the field directly and then reclaims until usage fits.  The
 * exchange is fully ordered, so it keeps pcstock_counter_set_max()'s
 * handshake with try_charge(): a charge either sees the new limit or is
 * seen by a usage read made after this call.
 *
 * Context: any thread; concurrent chargers are fine.
 *
 * Return: the previous limit.
 */
PCSTOCK_API unsigned long pcstock_counter_xchg_max(struct pcstock_counter *c,
						   unsigned long nr_pages);

/**
 * pcstock_counter_reset_local_watermark() - restart the local peak only
 * @c: the counter
 *
 * Stores the current usage to the local watermark and leaves the global
 * one alone: the counter half of a cgroup v2 memory.peak write (the
 * kernel's per-open-file bookkeeping is the caller's business).
 *
 * Context: any thread; racing charges may be lost from the new peak.
 */
PCSTOCK_API void
pcstock_counter_reset_local_watermark(struct pcstock_counter *c);

/**
 * pcstock_counter_reset_failcnt() - zero the failure count
 * @c: the counter
 *
 * A cgroup v1 *.failcnt (or hugetlb v1) write, which the kernel does with a
 * plain store to the field: a failure counted concurrently may be lost.
 *
 * Context: any thread.
 */
PCSTOCK_API void pcstock_counter_reset_failcnt(struct pcstock_counter *c);

/**
 * pcstock_counter_memparse() - parse a limit string as the kernel does
 * @buf: NUL-terminated input, e.g. "100M", "0x1000", "max"
 * @max_keyword: the string meaning "no limit" ("max" for cgroup v2, "-1"
 *               for v1); matched exactly and case-sensitively
 * @nr_pages: result in pages, floored and capped at PCSTOCK_COUNTER_MAX
 *
 * Kernel memparse() grammar: no whitespace or sign; 0x/0X followed by a hex
 * digit selects base 16, another leading 0 base 8, else base 10; at most one
 * suffix of K, M, G, T, P or E (either case, powers of 1024); digits and
 * suffix shifts wrap modulo 2^64 without an error ("16E" is 0 pages); an
 * empty string or a bare suffix is 0.  Anything left after that is an error.
 *
 * Context: any thread; @nr_pages is written only on success.
 *
 * Return: 0, or -EINVAL for malformed input or a NULL argument.
 */
PCSTOCK_API int pcstock_counter_memparse(const char *buf,
					 const char *max_keyword,
					 unsigned long *nr_pages);

/* pcstock_parse_size() flag: refuse sizes that are not whole pages. */
#define PCSTOCK_PARSE_PAGE_ALIGNED 0x1U

/**
 * pcstock_parse_size() - parse a size from a configuration file (ours)
 * @buf: NUL-terminated input: "max", or decimal digits with at most one
 *	binary suffix K, M, G, T, P or E (either case); whitespace around it
 *	is ignored
 * @flags: 0 or PCSTOCK_PARSE_PAGE_ALIGNED
 * @nr_pages: result in pages ("max": PCSTOCK_COUNTER_MAX); a size that is
 *	not a multiple of PCSTOCK_PAGE_SIZE is floored unless @flags refuses
 *	it
 *
 * Strict where pcstock_counter_memparse() is faithful: an empty string,
 * a sign, a base prefix, trailing characters and overflow are errors
 * rather than 0 or a wrapped value.
 *
 * Context: any thread; @nr_pages is written only on success.
 *
 * Return: 0; -EINVAL (NULL argument, unknown flag, empty or malformed
 * input, not page-aligned with PCSTOCK_PARSE_PAGE_ALIGNED); -ERANGE (more
 * than 2^64 - 1 bytes or PCSTOCK_COUNTER_MAX pages).
 */
PCSTOCK_API int pcstock_parse_size(const char *buf, unsigned int flags,
				   unsigned long *nr_pages);

/**
 * pcstock_format_size() - print a page count as cgroupfs does
 * @nr_pages: the value
 * @buf: destination, may be NULL if @size is 0
 * @size: bytes available in @buf, terminator included
 *
 * Prints "max" for PCSTOCK_COUNTER_MAX (or more), else the size in bytes,
 * truncating like snprintf().
 *
 * Context: any thread.
 *
 * Return: the length of the full text (excluding the terminator).
 */
PCSTOCK_API int pcstock_format_size(unsigned long nr_pages, char *buf,
				    size_t size);

/**
 * pcstock_effective_protection() - one level of the protection distribution
 * @usage: the child's usage
 * @parent_usage: its parent's usage
 * @setting: the child's min or low setting
 * @parent_effective: the parent's emin or elow
 * @siblings_protected: the parent's children_min_usage or children_low_usage
 * @recursive: distribute the parent's unclaimed protection (cgroup2's
 *             memory_recursiveprot)
 *
 * The kernel's effective_protection() as of 6.12.118 (the stable fix
 * "avoid integer overflow in effective_protection()"): both proportional
 * shares are computed with a 128-bit product, so none wraps, and in the
 * recursive term the child's unprotected usage is capped at the parent's,
 * so a child that racy reads show using more than its parent gets at most
 * the parent's unclaimed protection.  Kernels before the fix compute the
 * products in 64 bits (wrapping near PCSTOCK_COUNTER_MAX) and without the
 * cap; pcstock follows the fixed kernel (docs/kcheck.md, "Kernel versions").
 *
 * Return: the child's effective protection in pages.
 */
PCSTOCK_API unsigned long
pcstock_effective_protection(unsigned long usage, unsigned long parent_usage,
			     unsigned long setting,
			     unsigned long parent_effective,
			     unsigned long siblings_protected, bool recursive);

/**
 * pcstock_counter_calculate_protection() - update emin/elow of one counter
 * @root: the reclaim root (its own emin/elow are never updated)
 * @c: a counter in @root's subtree
 * @recursive: recursive protection (see pcstock_effective_protection())
 *
 * Must be called top-down over the subtree (parents before children): it
 * reads the parent's emin/elow computed earlier in the same walk.  A
 * counter with zero usage keeps its previous values; a direct child of
 * @root gets its min/low settings unchanged (not capped by usage).
 *
 * Context: callers serialise walks over the same subtree.
 */
PCSTOCK_API void pcstock_counter_calculate_protection(
	struct pcstock_counter *root, struct pcstock_counter *c,
	bool recursive);

/* Readers: relaxed snapshots of single fields. */
PCSTOCK_API unsigned long pcstock_counter_max(const struct pcstock_counter *c);
PCSTOCK_API unsigned long pcstock_counter_high(const struct pcstock_counter *c);
PCSTOCK_API unsigned long pcstock_counter_min(const struct pcstock_counter *c);
PCSTOCK_API unsigned long pcstock_counter_low(const struct pcstock_counter *c);
PCSTOCK_API unsigned long
pcstock_counter_watermark(const struct pcstock_counter *c);
PCSTOCK_API unsigned long
pcstock_counter_local_watermark(const struct pcstock_counter *c);
PCSTOCK_API unsigned long
pcstock_counter_failcnt(const struct pcstock_counter *c);
PCSTOCK_API unsigned long pcstock_counter_emin(const struct pcstock_counter *c);
PCSTOCK_API unsigned long pcstock_counter_elow(const struct pcstock_counter *c);
PCSTOCK_API unsigned long
pcstock_counter_min_usage(const struct pcstock_counter *c);
PCSTOCK_API unsigned long
pcstock_counter_low_usage(const struct pcstock_counter *c);
PCSTOCK_API unsigned long
pcstock_counter_children_min_usage(const struct pcstock_counter *c);
PCSTOCK_API unsigned long
pcstock_counter_children_low_usage(const struct pcstock_counter *c);
PCSTOCK_API struct pcstock_counter *
pcstock_counter_parent(const struct pcstock_counter *c);
PCSTOCK_API bool
pcstock_counter_protection_support(const struct pcstock_counter *c);
PCSTOCK_API bool pcstock_counter_track_failcnt(const struct pcstock_counter *c);

/**
 * typedef pcstock_warn_fn - receives the library's one-time warnings
 * @what: a short description, e.g. "page_counter underflow"
 * @c: the counter concerned
 * @value: the offending value (the negative usage for an underflow)
 * @nr_pages: the operation's page count
 * @arg: the pointer given to pcstock_set_warn_handler()
 */
typedef void (*pcstock_warn_fn)(const char *what,
				const struct pcstock_counter *c, long value,
				unsigned long nr_pages, void *arg);

/**
 * pcstock_set_warn_handler() - where the one-time underflow warning goes
 * @fn: the handler, or NULL for none (the default: the library never
 *      prints)
 * @arg: passed to @fn
 *
 * Like the kernel's WARN_ONCE, the handler runs for the first underflow in
 * the process only (until pcstock_warn_reset()); every underflow is counted.
 * The handler may run on any charging thread and must not call back into
 * the counter being warned about.
 *
 * Context: set it before charging starts.
 */
PCSTOCK_API void pcstock_set_warn_handler(pcstock_warn_fn fn, void *arg);

/**
 * pcstock_warn_count() - underflows seen since start or the last reset
 *
 * Return: the number of levels clamped to 0 by pcstock_counter_cancel().
 */
PCSTOCK_API unsigned long pcstock_warn_count(void);

/**
 * pcstock_warn_reset() - zero the count and re-arm the one-time handler
 *
 * For tests and long-running tools that want to see the next underflow.
 */
PCSTOCK_API void pcstock_warn_reset(void);

PCSTOCK_EXTERN_C_END

#endif /* PCSTOCK_COUNTER_H */
