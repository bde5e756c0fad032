/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: per-CPU data for simulated CPUs.
 *
 * A per-CPU object is an array of kpc_nr_cpus elements; this_cpu_ptr()
 * picks the element of kpc_this_cpu, the CPU the driver (pcstock-kcheck)
 * says the caller is on.  Preemption, interrupts and migration do not
 * exist here: the driver switches CPUs between operations only, so
 * preempt_disable() has nothing to do.
 */
#ifndef KPC_SHIM_LINUX_PERCPU_H
#define KPC_SHIM_LINUX_PERCPU_H

#include <stdlib.h>

extern unsigned int kpc_nr_cpus;
extern unsigned int kpc_this_cpu;

#define __percpu
#define alloc_percpu(type)                                                   \
	((type *)calloc(kpc_nr_cpus, sizeof(type)))
#define free_percpu(ptr) free(ptr)
#define per_cpu_ptr(ptr, cpu) (&(ptr)[(cpu)])
#define this_cpu_ptr(ptr) per_cpu_ptr((ptr), kpc_this_cpu)
#define for_each_possible_cpu(cpu)                                           \
	for ((cpu) = 0; (unsigned int)(cpu) < kpc_nr_cpus; (cpu)++)
#define preempt_disable() ((void)0)
#define preempt_enable() ((void)0)

#endif
