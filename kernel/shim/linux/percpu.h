/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: per-CPU data for simulated CPUs.
 *
 * A per-CPU object is an array of kpc_nr_cpus elements; this_cpu_ptr()
 * picks the element of kpc_this_cpu, the CPU the driver (pcstock-kcheck)
 * says the caller is on.  The driver switches CPUs between operations
 * and, with --migrate, at the preemption points of linux/preempt.h:
 * this_cpu_ptr() is one (before it reads the CPU), get_cpu() and
 * put_cpu() are preempt_disable() and preempt_enable().
 * alloc_percpu() fails when the driver asks (kpc_percpu_fail): the
 * series' allocation-failure fallback.
 */
#ifndef KPC_SHIM_LINUX_PERCPU_H
#define KPC_SHIM_LINUX_PERCPU_H

#include <stdlib.h>

#include <linux/preempt.h>

extern unsigned int kpc_nr_cpus;
/* In the explorer each thread is on its own simulated CPU. */
#ifdef KPC_EXPLORE
extern _Thread_local unsigned int kpc_this_cpu;
#else
extern unsigned int kpc_this_cpu;
#endif
extern bool kpc_percpu_fail;	/* the next alloc_percpu() returns NULL */

static inline void *kpc_alloc_percpu(size_t size)
{
	if (kpc_percpu_fail) {
		kpc_percpu_fail = false;
		return NULL;
	}
	return calloc(kpc_nr_cpus, size);
}

#define __percpu
#define alloc_percpu(type) ((type *)kpc_alloc_percpu(sizeof(type)))
#define free_percpu(ptr) free(ptr)
#define per_cpu_ptr(ptr, cpu) (&(ptr)[(cpu)])
#define this_cpu_ptr(ptr)                                                    \
	(kpc_preempt_point(), per_cpu_ptr((ptr), kpc_this_cpu))
#define smp_processor_id() ((int)kpc_this_cpu)
#define get_cpu() (preempt_disable(), smp_processor_id())
#define put_cpu() preempt_enable()
#define for_each_possible_cpu(cpu)                                           \
	for ((cpu) = 0; (unsigned int)(cpu) < kpc_nr_cpus; (cpu)++)

#endif
