// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * percpu.c - the per-CPU arena: one offset, the same object on every CPU.
 *
 * Layout.  At domain creation one virtual range of nr_cpus * stride bytes
 * is reserved with PROT_NONE (no memory, no commit charge); CPU c's region
 * is [base + c * stride, base + (c + 1) * stride).  All regions are
 * committed to the same length, `committed`, which grows a page at a time
 * by mprotect()ing the next page of every region read-write (and binding
 * it to the CPU's NUMA node on a real NUMA machine).  The arena never
 * shrinks and never moves, so pointers stay valid.
 *
 * The stride is 16 MiB, less when nr_cpus is so large that the reservation
 * would pass 16 GiB (256 KiB at PCSTOCK_MAX_CPUS): an allocation that does
 * not fit in what is left of a region fails with -ENOMEM.
 *
 * Each committed region is a mapping of its own (two with the PROT_NONE
 * rest), and Linux allows a process 65530 by default (vm.max_map_count).
 * So above PREMAP_CPUS CPUs the whole range is mapped read-write at once
 * with MAP_NORESERVE instead: one mapping, no guard pages, `committed` only
 * bookkeeping, and pages still cost memory only once touched.  Fresh pages
 * read as zero, so allocation clears only space handed out before, and
 * only where it is not zero already.
 *
 * Space within a region is handed out in 4-byte granules, first fit, from
 * two bitmaps: `used` (granule taken) and `start` (first granule of an
 * allocation), so that free() finds the extent of an allocation from its
 * handle alone.  A 4-byte object costs 4 bytes per CPU.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pcstock/percpu.h>

#include "atomic.h"
#include "internal.h"
#include "percpu_arena.h"

#define GRANULE 4U
#define REGION_MAX ((size_t)16 << 20)
#define ARENA_BUDGET ((size_t)16 << 30)
#define PREMAP_CPUS 8192U
#define LONG_BITS (8 * sizeof(unsigned long))

static_assert(PCSTOCK_PERCPU_MAX_SIZE % GRANULE == 0,
	      "the largest object is a whole number of granules");

static bool test_bit(const unsigned long *map, size_t i)
{
	return map[i / LONG_BITS] >> (i % LONG_BITS) & 1;
}

static void set_bit(unsigned long *map, size_t i)
{
	map[i / LONG_BITS] |= 1UL << (i % LONG_BITS);
}

static void clear_bit(unsigned long *map, size_t i)
{
	map[i / LONG_BITS] &= ~(1UL << (i % LONG_BITS));
}

/* The first set bit in [from, to), or @to. */
static size_t next_set_bit(const unsigned long *map, size_t from, size_t to)
{
	size_t i = from;

	while (i < to) {
		unsigned long w = map[i / LONG_BITS] >> (i % LONG_BITS);

		if (w)
			return PCS_MIN(i + (size_t)__builtin_ctzl(w), to);
		i = (i / LONG_BITS + 1) * LONG_BITS;
	}
	return to;
}

static size_t round_up(size_t x, size_t to)
{
	return (x + to - 1) / to * to;
}

/* The first clear bit in [from, to), or @to. */
static size_t next_clear_bit(const unsigned long *map, size_t from, size_t to)
{
	size_t i = from;

	while (i < to) {
		unsigned long w = ~map[i / LONG_BITS] >> (i % LONG_BITS);

		if (w)
			return PCS_MIN(i + (size_t)__builtin_ctzl(w), to);
		i = (i / LONG_BITS + 1) * LONG_BITS;
	}
	return to;
}

/*
 * First fit from @from: @n free granules at a multiple of @align, or
 * nr_granules.  A busy granule sends the search past the whole busy run,
 * a word of the bitmap at a time.
 */
static size_t find_free(const struct pcs_arena *a, size_t from, size_t n,
			size_t align)
{
	size_t i = round_up(from, align), busy;

	while (i + n <= a->nr_granules) {
		busy = next_set_bit(a->used, i, i + n);
		if (busy == i + n)
			return i;
		i = round_up(next_clear_bit(a->used, busy, a->nr_granules),
			     align);
	}
	return a->nr_granules;
}

/*
 * Single granules start at first_free, the lowest free granule.  Larger or
 * aligned requests start at fit_hint instead: a one-granule hole left by
 * alignment would otherwise pin first_free and make every such request
 * rescan all the space above it (quadratic when a tree of 100k groups is
 * built).  fit_hint only ever moves to where such a request found room and
 * back down on a free, and a search from it that fails is retried from
 * first_free, so no request fails while room exists.
 */
static size_t find_first_fit(struct pcs_arena *a, size_t n,
			     size_t align)
{
	size_t first;

	if (n == 1 && align == 1)
		return find_free(a, a->first_free, n, align);
	first = find_free(a, PCS_MAX(a->first_free, a->fit_hint), n, align);
	if (first == a->nr_granules && a->fit_hint > a->first_free)
		first = find_free(a, a->first_free, n, align);
	if (first != a->nr_granules)
		a->fit_hint = first;
	return first;
}

/*
 * Clear only what is not clear already: reading a page no one wrote maps
 * the shared zero page, writing it would cost a page of memory, which adds
 * up for a SIM domain of many CPUs of which few ever run.
 */
static void zero(void *p, size_t len)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++) {
		if (c[i]) {
			memset(p, 0, len);
			return;
		}
	}
}

int pcs_arena_init(struct pcs_arena *a, unsigned int nr_cpus,
		   hwloc_topology_t topo, const int *nodes,
		   unsigned int nr_nodes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), words;
	void *base;

	a->nr_cpus = nr_cpus;
	a->topo = topo;
	a->nodes = nodes;
	a->nr_nodes = nr_nodes;
	pthread_mutex_init(&a->lock, NULL);
	a->stride = REGION_MAX;
	if (a->stride > ARENA_BUDGET / nr_cpus)
		a->stride = ARENA_BUDGET / nr_cpus / page * page;
	a->chunk = page;
	a->nr_granules = a->stride / GRANULE;
	words = a->nr_granules / LONG_BITS;
	a->used = pcs_calloc(2 * words, sizeof(*a->used), "percpu-bitmap");
	if (!a->used)
		return -ENOMEM;
	a->start = a->used + words;
	a->premapped = nr_cpus > PREMAP_CPUS;
	if (PCS_FAULT("percpu-reserve"))
		return -ENOMEM;
	base = mmap(NULL, nr_cpus * a->stride,
		    a->premapped ? PROT_READ | PROT_WRITE : PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -ENOMEM;
	a->base = base;
	return 0;
}

void pcs_arena_fini(struct pcs_arena *a)
{
	if (!a->nr_cpus)
		return;
	if (a->base)
		munmap(a->base, a->nr_cpus * a->stride);
	free(a->used);
	pthread_mutex_destroy(&a->lock);
}

/* Place [p, p + len) of @cpu's region on its NUMA node, if that helps. */
static void region_bind(struct pcs_arena *a, unsigned int cpu, void *p,
			size_t len)
{
	hwloc_obj_t node;

	if (!a->topo)
		return;
	node = hwloc_get_obj_by_type(a->topo, HWLOC_OBJ_NUMANODE,
				     (unsigned int)a->nodes[cpu % a->nr_nodes]);
	/* A failure only costs locality: the page stays where it lands. */
	if (node)
		hwloc_set_area_membind(a->topo, p, len, node->nodeset,
				       HWLOC_MEMBIND_BIND,
				       HWLOC_MEMBIND_BYNODESET);
}

/* Commit every region up to @need bytes; all or nothing. */
static int arena_grow(struct pcs_arena *a, size_t need)
{
	size_t old = pcs_load(&a->committed, PCS_RELAXED);
	size_t len = round_up(need, a->chunk) - old;
	unsigned int cpu;

	for (cpu = 0; cpu < a->nr_cpus && !a->premapped; cpu++) {
		char *p = a->base + (size_t)cpu * a->stride + old;

		if (PCS_FAULT("percpu-grow") ||
		    mprotect(p, len, PROT_READ | PROT_WRITE))
			goto undo;
		region_bind(a, cpu, p, len);
	}
	/* Relaxed: a statistic; the memory itself is published by the lock. */
	pcs_store(&a->committed, old + len, PCS_RELAXED);
	return 0;
undo:
	/*
	 * Returning pages to PROT_NONE merges them back into the reserved
	 * mapping, so it needs no memory and cannot fail for want of it.
	 */
	while (cpu--)
		mprotect(a->base + (size_t)cpu * a->stride + old, len,
			 PROT_NONE);
	return -ENOMEM;
}

int pcs_arena_alloc(struct pcs_arena *a, size_t size, size_t align,
		    size_t *handle)
{
	size_t n, first, i, clear;
	unsigned int cpu;
	int err = 0;

	if (!handle || !size || size > PCSTOCK_PERCPU_MAX_SIZE ||
	    align > PCSTOCK_PERCPU_MAX_SIZE || (align & (align - 1)))
		return -EINVAL;
	if (!align)
		for (align = 1; align < size && align < 16; align *= 2)
			;
	n = round_up(size, GRANULE) / GRANULE;
	pthread_mutex_lock(&a->lock);
	first = find_first_fit(a, n, PCS_MAX(align / GRANULE, 1));
	if (first == a->nr_granules)
		err = -ENOMEM;
	else if ((first + n) * GRANULE > pcs_load(&a->committed, PCS_RELAXED))
		err = arena_grow(a, (first + n) * GRANULE);
	if (err)
		goto out;
	set_bit(a->start, first);
	for (i = first; i < first + n; i++)
		set_bit(a->used, i);
	/*
	 * Past the used run too: left on a granule that an aligned request
	 * took, first_free would make every later single-granule search
	 * rescan that run (one group's stock is one of each kind).
	 */
	if (first == a->first_free)
		a->first_free = next_clear_bit(a->used, first + n,
					       a->nr_granules);
	clear = (PCS_MIN(first + n, a->touched) - PCS_MIN(first, a->touched)) *
		GRANULE;
	for (cpu = 0; cpu < a->nr_cpus && clear; cpu++)
		zero(pcs_arena_ptr(a, first * GRANULE, cpu), clear);
	a->touched = PCS_MAX(a->touched, first + n);
	/* Relaxed: a statistic (pairs with nothing). */
	pcs_store(&a->in_use, pcs_load(&a->in_use, PCS_RELAXED) + n * GRANULE,
		  PCS_RELAXED);
	*handle = first * GRANULE;
out:
	pthread_mutex_unlock(&a->lock);
	return err;
}

void pcs_arena_free(struct pcs_arena *a, size_t handle)
{
	size_t first = handle / GRANULE, i;

	if (handle % GRANULE || first >= a->nr_granules)
		return;
	pthread_mutex_lock(&a->lock);
	if (!test_bit(a->start, first))
		goto out;
	clear_bit(a->start, first);
	i = first;
	do
		clear_bit(a->used, i++);
	while (i < a->nr_granules && test_bit(a->used, i) &&
	       !test_bit(a->start, i));
	a->first_free = PCS_MIN(a->first_free, first);
	a->fit_hint = PCS_MIN(a->fit_hint, first);
	/* Relaxed: a statistic (pairs with nothing). */
	pcs_store(&a->in_use,
		  pcs_load(&a->in_use, PCS_RELAXED) - (i - first) * GRANULE,
		  PCS_RELAXED);
out:
	pthread_mutex_unlock(&a->lock);
}

void pcs_arena_memory(const struct pcs_arena *a, size_t *reserved,
		      size_t *in_use)
{
	/* Relaxed: figures of the moment, each exact at some instant. */
	*reserved = pcs_load(&a->committed, PCS_RELAXED) * a->nr_cpus;
	*in_use = pcs_load(&a->in_use, PCS_RELAXED) * a->nr_cpus;
}
