/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: preemption points for pcstock-kcheck --migrate.
 *
 * The unit keeps a preemption count (preempt_disable() raises it,
 * preempt_enable() lowers it).  Every shim atomic, every this_cpu_ptr()
 * and every preempt_enable() is a point at which the driver (kernel/
 * oracle.c) may run another simulated CPU's operation: with the count at
 * 0 the point is preemptible (the other operation may run on this CPU,
 * and the interrupted one may resume on another: a migration); above 0
 * only an operation of another CPU may run there, and the interrupted
 * one stays put.  Without a hook (kcheck's other modes, the explorer,
 * the conformance suite) a point costs one test of a NULL pointer.
 */
#ifndef KPC_SHIM_LINUX_PREEMPT_H
#define KPC_SHIM_LINUX_PREEMPT_H

#include <stdbool.h>

typedef void (*kpc_preempt_fn)(bool preemptible, void *arg);

extern kpc_preempt_fn kpc_preempt_hook;
extern unsigned int kpc_preempt_count;
void kpc_preempt_at(void);	/* unit.c: the hook, around a saved count */

static inline void kpc_preempt_point(void)
{
	if (kpc_preempt_hook)
		kpc_preempt_at();
}

#define preempt_disable() ((void)kpc_preempt_count++)
#define preempt_enable() ((void)kpc_preempt_count--, kpc_preempt_point())

#endif
