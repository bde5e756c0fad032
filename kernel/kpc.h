/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kpc.h - the kernel unit's interface: a kernel tree's page_counter code,
 * built unmodified over the shim (kernel/shim), seen through a table of
 * functions in pcstock's own words.
 *
 * The unit (kernel/unit.c compiled against one staged tree) is either
 * linked in (the conformance adapter) or loaded as a plugin by
 * pcstock-kcheck; either way kpc_unit() returns its table.  Counters are
 * opaque blocks of @counter_size bytes, aligned to @counter_align, which
 * the caller allocates; init zeroes them first (the kernel's counters live
 * in zeroed allocations).
 */
#ifndef PCSTOCK_KPC_H
#define PCSTOCK_KPC_H

#include <stdbool.h>
#include <stddef.h>

#define KPC_ABI 1

/* Features of the tree (struct kpc_unit.features). */
#define KPC_F_TRACK_FAILCNT 0x1U	/* v6.15+: failcnt is opt-in */
#define KPC_F_STOCK 0x2U		/* the per-counter stock series */

/* Every field of a counter, as the kernel holds it. */
struct kpc_snap {
	long usage;
	unsigned long failcnt;
	unsigned long emin, elow;
	long min_usage, children_min_usage;
	long low_usage, children_low_usage;
	unsigned long watermark, local_watermark;
	unsigned long max, high, min, low;
	bool protection_support;
	bool track_failcnt;	/* always true before v6.15 */
};

typedef void (*kpc_warn_fn)(const char *what, const void *counter,
			    long value, unsigned long nr_pages, void *arg);

struct kpc_unit {
	unsigned int abi;		/* KPC_ABI */
	const char *version;		/* "6.12.117" */
	const char *mutation;		/* planted bug, or "none" */
	unsigned int features;		/* KPC_F_* */
	size_t counter_size, counter_align;
	unsigned long counter_max;	/* PAGE_COUNTER_MAX */

	void (*init)(void *c, void *parent, bool protection_support);
	/* NULL without KPC_F_TRACK_FAILCNT (failcnt always counted). */
	void (*set_track_failcnt)(void *c, bool track);
	unsigned long (*read)(void *c);
	void (*charge)(void *c, unsigned long nr_pages);
	bool (*try_charge)(void *c, unsigned long nr_pages, void **fail);
	void (*cancel)(void *c, unsigned long nr_pages);
	void (*uncharge)(void *c, unsigned long nr_pages);
	int (*set_max)(void *c, unsigned long nr_pages);
	void (*set_min)(void *c, unsigned long nr_pages);
	void (*set_low)(void *c, unsigned long nr_pages);
	void (*set_high)(void *c, unsigned long nr_pages);
	void (*reset_watermark)(void *c);
	/* The field writes memcontrol.c does in place (cgroup files). */
	unsigned long (*xchg_max)(void *c, unsigned long nr_pages);
	void (*reset_local_watermark)(void *c);
	void (*reset_failcnt)(void *c);
	void (*calculate_protection)(void *root, void *c, bool recursive);
	unsigned long (*effective_protection)(unsigned long usage,
					      unsigned long parent_usage,
					      unsigned long setting,
					      unsigned long parent_effective,
					      unsigned long siblings_protected,
					      bool recursive);
	void *(*parent)(void *c);
	void (*snap)(void *c, struct kpc_snap *s);

	int (*memparse_pages)(const char *buf, const char *max_keyword,
			      unsigned long *nr_pages);
	/* A limit file's write: strstrip() then page_counter_memparse(). */
	int (*write_limit)(const char *buf, const char *max_keyword,
			   unsigned long *nr_pages);

	void (*set_warn_handler)(kpc_warn_fn fn, void *arg);
	unsigned long (*warn_count)(void);
	void (*warn_reset)(void);

	/*
	 * The stock series (KPC_F_STOCK; NULL without it).  CPUs are
	 * simulated: set_cpus() before the first alloc_stock(), set_cpu()
	 * is the CPU this_cpu_ptr() means from then on.
	 */
	void (*set_cpus)(unsigned int nr_cpus);
	void (*set_cpu)(unsigned int cpu);
	int (*alloc_stock)(void *c, unsigned int batch);
	void (*free_stock)(void *c);
	bool (*try_charge_stock)(void *c, unsigned long nr_pages, void **fail,
				 unsigned long *nr_charged);
	void (*drain_stock)(void *c, unsigned int cpu);
	long (*stock_pages)(void *c, unsigned int cpu);
};

const struct kpc_unit *kpc_unit(void);

#endif /* PCSTOCK_KPC_H */
