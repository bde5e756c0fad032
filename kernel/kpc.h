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
#include <stdio.h>
#include <string.h>

#define KPC_ABI 4

/* Features of the tree (struct kpc_unit.features). */
#define KPC_F_TRACK_FAILCNT 0x1U	/* v6.15+: failcnt is opt-in */
#define KPC_F_STOCK 0x2U		/* the per-counter stock series */
/* init() takes protection_support (without it: always propagated). */
#define KPC_F_PROTECTION_SUPPORT 0x4U
#define KPC_F_LOCAL_WATERMARK 0x8U	/* memory.peak's local_watermark */
/* page_counter_calculate_protection(), effective_protection() */
#define KPC_F_CALC_PROTECTION 0x10U
/* effective_protection() caps unprotected usage (6.12.118's fix) */
#define KPC_F_PROTECTION_CAP 0x20U
/* a per-counter stock is mentioned, but its functions were not found */
#define KPC_F_STOCK_PARTIAL 0x40U
/* the stock is pcstock's own rendering (kernel/own_stock.c) */
#define KPC_F_OWN_STOCK 0x80U

/* A field of the kernel's struct page_counter (tables end with NULL). */
struct kpc_field {
	const char *name;
	size_t offset;
};

/* Every field of a counter, as the kernel holds it. */
struct kpc_snap {
	long usage;
	unsigned long failcnt;
	unsigned long emin, elow;
	long min_usage, children_min_usage;
	long low_usage, children_low_usage;
	unsigned long watermark;
	unsigned long local_watermark;	/* 0 without KPC_F_LOCAL_WATERMARK */
	unsigned long max, high, min, low;
	bool protection_support;	/* true without the field */
	bool track_failcnt;	/* always true before v6.15 */
};

typedef void (*kpc_warn_fn)(const char *what, const void *counter,
			    long value, unsigned long nr_pages, void *arg);

struct kpc_unit {
	unsigned int abi;		/* KPC_ABI */
	const char *version;		/* "6.12.117" */
	const char *mutation;		/* planted bug, or "none" */
	const char *tree_id;		/* hash of the extracted files */
	const char *source;		/* the tree or tarball, as given */
	const char *describe;		/* git describe, or "" */
	const char *files;		/* "path hash\n" per extracted file */
	unsigned int features;		/* KPC_F_* */
	size_t counter_size, counter_align;
	unsigned long counter_max;	/* PAGE_COUNTER_MAX */

	/* @protection_support is ignored without KPC_F_PROTECTION_SUPPORT. */
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
	/* NULL without KPC_F_LOCAL_WATERMARK. */
	void (*reset_local_watermark)(void *c);
	void (*reset_failcnt)(void *c);
	/* These three NULL without KPC_F_CALC_PROTECTION. */
	void (*calculate_protection)(void *root, void *c, bool recursive);
	unsigned long (*effective_protection)(unsigned long usage,
					      unsigned long parent_usage,
					      unsigned long setting,
					      unsigned long parent_effective,
					      unsigned long siblings_protected,
					      bool recursive);
	/*
	 * Not a kernel operation: overwrite the effective protection, so
	 * that the oracle can resync after an expected deviation.
	 */
	void (*set_eprot)(void *c, unsigned long emin, unsigned long elow);
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
	/*
	 * After a crash in the kernel's code: release @c's per-CPU stock
	 * memory without running any of that code (no drain), so that the
	 * next case starts from a clean heap.
	 */
	void (*discard_stock)(void *c);

	/* The next alloc_percpu() fails (the series' fallback is tried). */
	void (*fail_next_alloc)(void);
	/*
	 * Call @fn at every preemption point of the kernel's code (the
	 * shim's atomics, this_cpu_ptr(), preempt_enable(); see
	 * shim/linux/preempt.h), @preemptible when the preemption count
	 * is 0; NULL: none.
	 */
	void (*set_preempt_hook)(void (*fn)(bool preemptible, void *arg),
				 void *arg);
	const struct kpc_field *fields;	/* struct page_counter's */
};

const struct kpc_unit *kpc_unit(void);

/*
 * The exit status of a program that cannot use its unit: it could not be
 * built or loaded, or it was built from another tree than the one the
 * test expects (kpc_tree_mismatch()).
 */
#define KPC_EXIT_UNIT 3

/* The environment variable naming an expected-tree file. */
#define KPC_EXPECT_TREE_ENV "PCSTOCK_KPC_EXPECT_TREE"

/*
 * kpc_tree_mismatch() - whether @k was built from another tree than the
 * one @file names: its first token is the expected KPC_TREE_ID.  Tests
 * must never run against a unit (or a binary linking one) left from
 * another tree.  Return: false when they match; true, with the reason in
 * @why, when they differ or @file cannot be read.
 */
static inline bool kpc_tree_mismatch(const struct kpc_unit *k,
				     const char *file, char *why, size_t len)
{
	char want[65];
	FILE *f = fopen(file, "r");
	int n;

	if (!f) {
		snprintf(why, len, "no expected-tree file %s", file);
		return true;
	}
	n = fscanf(f, "%64s", want);
	fclose(f);
	if (n != 1) {
		snprintf(why, len, "no tree id in %s", file);
		return true;
	}
	if (!strcmp(want, k->tree_id))
		return false;
	snprintf(why, len, "unit's tree %s, %s expects %s", k->tree_id, file,
		 want);
	return true;
}

#endif /* PCSTOCK_KPC_H */
