/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/percpu.h - the per-CPU arena of a domain.
 *
 * The kernel's alloc_percpu() idea in userspace: every CPU of a domain owns
 * a region of the arena, and an allocation is one handle naming the same
 * offset in every region.  The layout is CPU-major, so a 4-byte object
 * costs 4 bytes per CPU and objects of different CPUs never share a cache
 * line (regions are at least 4 KiB apart).  Memory is zeroed on allocation,
 * freed space is reused, and each CPU's region is placed on that CPU's NUMA
 * node where hwloc can do it.
 *
 * Capacity: each CPU's region holds 16 MiB, or 16 GiB / nr_cpus when that
 * is less (a page multiple; 256 KiB at PCSTOCK_MAX_CPUS), fixed at domain
 * creation; an allocation that does not fit what is free fails with
 * -ENOMEM.  Regions grow a page at a time as allocations need it and never
 * shrink.  Space is counted in 4-byte units: a 1-byte object costs 4 bytes
 * per CPU, and pcstock_domain_memory()'s in_use counts these units.
 */
#ifndef PCSTOCK_PERCPU_H
#define PCSTOCK_PERCPU_H

#include <stddef.h>

#include <pcstock/common.h>

PCSTOCK_EXTERN_C_BEGIN

struct pcstock_domain;

/* The largest size and alignment of one per-CPU allocation. */
#define PCSTOCK_PERCPU_MAX_SIZE 4096U

/**
 * pcstock_percpu_alloc() - allocate a zeroed object on every CPU
 * @d: the domain
 * @size: bytes per CPU, 1..PCSTOCK_PERCPU_MAX_SIZE
 * @align: power of two, 1..PCSTOCK_PERCPU_MAX_SIZE (0 means natural
 *         alignment for @size, at most 16)
 * @handle: receives the handle
 *
 * Context: any thread; serialised internally.
 *
 * The object's address on a CPU is the same offset in every CPU's region:
 * pcstock_percpu_ptr(d, *handle, cpu).  Bytes beyond @size (up to the next
 * 4-byte unit) belong to the object too; writing past them is a bug.
 *
 * Return: 0; -EINVAL for a bad size, alignment or NULL argument; -ENOMEM
 * when the regions are full or cannot grow.
 */
PCSTOCK_API int pcstock_percpu_alloc(struct pcstock_domain *d, size_t size,
				     size_t align, size_t *handle);

/**
 * pcstock_percpu_ptr() - the object of @handle on @cpu
 * @d: the domain
 * @handle: from pcstock_percpu_alloc()
 * @cpu: 0..nr_cpus-1
 *
 * Context: any thread, lock-free; one multiply-add.
 *
 * Return: the address (stable until the handle is freed), or NULL for an
 * out-of-range @cpu or a NULL @d.  A handle that is not from
 * pcstock_percpu_alloc() gives an address that is not yours.
 */
PCSTOCK_API void *pcstock_percpu_ptr(struct pcstock_domain *d, size_t handle,
				     unsigned int cpu);

/**
 * pcstock_percpu_free() - free an allocation on every CPU
 * @d: the domain
 * @handle: from pcstock_percpu_alloc()
 *
 * A handle that names no live allocation (never allocated, freed already,
 * not the start of an object) is ignored.
 *
 * Context: nothing may use the objects any more; serialised internally.
 */
PCSTOCK_API void pcstock_percpu_free(struct pcstock_domain *d, size_t handle);

PCSTOCK_EXTERN_C_END

#endif /* PCSTOCK_PERCPU_H */
