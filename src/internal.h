/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * internal.h - private helpers shared by the library's layers.
 *
 * Allocation goes through pcs_malloc()/pcs_calloc()/pcs_aligned_alloc() so
 * that test builds (PCSTOCK_FAULT_INJECT) can make any allocation site fail
 * and check that the error path returns -ENOMEM and leaks nothing.  Code
 * that obtains memory another way (mmap, hwloc) tests PCS_FAULT(site)
 * itself before the call.
 */
#ifndef PCSTOCK_INTERNAL_H
#define PCSTOCK_INTERNAL_H

#include <stdbool.h>
#include <stdlib.h>

#ifdef PCSTOCK_FAULT_INJECT
/*
 * Set by tests: called at every allocation site with its name; returning
 * true makes that allocation fail.  NULL means no injection.
 */
extern bool (*pcstock_fault_hook)(const char *site);
#define PCS_FAULT(site) (pcstock_fault_hook && pcstock_fault_hook(site))
#else
#define PCS_FAULT(site) false
#endif

static inline void *pcs_malloc(size_t size, const char *site)
{
	return PCS_FAULT(site) ? NULL : malloc(size);
}

static inline void *pcs_calloc(size_t n, size_t size, const char *site)
{
	return PCS_FAULT(site) ? NULL : calloc(n, size);
}

/* @size is rounded up to a multiple of @align, as aligned_alloc needs. */
static inline void *pcs_aligned_alloc(size_t align, size_t size,
				      const char *site)
{
	if (PCS_FAULT(site))
		return NULL;
	return aligned_alloc(align, (size + align - 1) / align * align);
}

/*
 * A documented abort: misuse that would otherwise corrupt memory or hang
 * (a counter made its own ancestor, a reference dropped twice).  Prints
 * "pcstock: " and the message to stderr, then abort()s.
 */
__attribute__((noreturn, format(printf, 1, 2)))
void pcs_die(const char *fmt, ...);

/* counter.c's underflow report (the kernel's WARN_ONCE), for shm.c's walks. */
struct pcstock_counter;
void pcs_counter_warn_underflow(const struct pcstock_counter *c, long value,
				unsigned long nr_pages);

struct pcstock_domain;
/*
 * Trees and stocked counters count themselves as users of their domain, so
 * that pcstock_domain_destroy() refuses to free it under them.
 */
void pcs_domain_users_add(struct pcstock_domain *d, int delta);

/*
 * pcstock_counter_memparse() over the @len bytes at @buf (no terminator
 * needed; a NUL among them is an error): what the cgroup files parse
 * after their strstrip().  No NULL checks.
 */
int pcs_memparse_n(const char *buf, size_t len, const char *max_keyword,
		   unsigned long *nr_pages);

/*
 * The kernel's strstrip() of a cgroup file's write: the start of @buf past
 * the kernel's whitespace (isspace() of lib/ctype.c: \t \n \v \f \r, ' ',
 * 0xA0), and in *@len the length of the rest without its trailing
 * whitespace.  No NULL checks.
 */
const char *pcs_strstrip(const char *buf, size_t *len);

/*
 * Depth of callbacks on this thread, of any tree, private or shared (as
 * the kernel's PF_MEMALLOC is the task's): charges inside them are
 * forced, and uncharges inside them skip the stock.  Enter and exit
 * around every reclaim or OOM callback (reclaim.c).
 */
extern _Thread_local unsigned int pcs_in_callback
	__attribute__((tls_model("initial-exec")));
void pcs_callback_enter(void);
void pcs_callback_exit(void);

/* PAGE_ALLOC_COSTLY_ORDER: "small" charges are at most 8 pages. */
#define COSTLY_ORDER 3U
#define COSTLY_PAGES (1UL << COSTLY_ORDER)

/*
 * get_order(nr_pages * PAGE_SIZE): the smallest order whose 2^order pages
 * hold @nr_pages (0 for 0 and 1 page).  Both trees' failure loops.
 */
static inline unsigned int pages_order(unsigned long nr_pages)
{
	unsigned int order = 0;

	while ((1UL << order) < nr_pages)
		order++;
	return order;
}

#define PCS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PCS_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif /* PCSTOCK_INTERNAL_H */
