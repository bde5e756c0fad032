/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * percpu_arena.h - the per-CPU arena (percpu.c), a struct the CPU layer
 * embeds in each domain.
 *
 * The arena knows CPUs only by number: it is given how many there are
 * and, to place each CPU's region on its NUMA node, the node of each.  It
 * knows nothing of domains, threads or modes; the CPU layer's public
 * pcstock_percpu_*() functions are its wrappers.
 */
#ifndef PCSTOCK_PERCPU_ARENA_H
#define PCSTOCK_PERCPU_ARENA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <hwloc.h>

struct pcs_arena {
	/* Read on every hot-path address: the first two words. */
	char *base;		/* CPU c's region at base + c * stride */
	size_t stride;
	unsigned int nr_cpus;

	/*
	 * NUMA placement: CPU c's region is bound to the NUMA node of
	 * logical index nodes[c % nr_nodes] of @topo; none without @topo.
	 * Both belong to the caller and outlive the arena.
	 */
	hwloc_topology_t topo;
	const int *nodes;
	unsigned int nr_nodes;

	/*
	 * Bookkeeping, written under lock; the two sizes are per region and
	 * read without the lock.
	 */
	pthread_mutex_t lock;
	size_t chunk;		/* growth step: one page */
	bool premapped;		/* mapped read-write at once (many CPUs) */
	size_t nr_granules;	/* granules in a region */
	size_t first_free;	/* no free granule below this one */
	size_t fit_hint;	/* where multi-granule/aligned searches start */
	size_t touched;		/* granules from here on never handed out */
	unsigned long *used;	/* granule bitmaps */
	unsigned long *start;
	_Atomic size_t committed;
	_Atomic size_t in_use;
};

/*
 * Reserve the arena of @nr_cpus CPUs, bound as struct pcs_arena says when
 * @topo is not NULL.  Return: 0 or -ENOMEM.  pcs_arena_fini() undoes it,
 * also after a failed or missing init of a zeroed struct.
 */
int pcs_arena_init(struct pcs_arena *a, unsigned int nr_cpus,
		   hwloc_topology_t topo, const int *nodes,
		   unsigned int nr_nodes);
void pcs_arena_fini(struct pcs_arena *a);

/* pcstock_percpu_alloc() and pcstock_percpu_free(), but for the NULL @d. */
int pcs_arena_alloc(struct pcs_arena *a, size_t size, size_t align,
		    size_t *handle);
void pcs_arena_free(struct pcs_arena *a, size_t handle);

/* Bytes committed and handed out, over all CPUs. */
void pcs_arena_memory(const struct pcs_arena *a, size_t *reserved,
		      size_t *in_use);

/* The object of @handle on @cpu, without a range check. */
static inline void *pcs_arena_ptr(const struct pcs_arena *a, size_t handle,
				  unsigned int cpu)
{
	return a->base + (size_t)cpu * a->stride + handle;
}

#endif /* PCSTOCK_PERCPU_ARENA_H */
