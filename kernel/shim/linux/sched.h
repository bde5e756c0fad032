/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: cond_resched() gives the CPU away, as a spin-wait's
 * back-off does in pcstock (a scheduling point in explorer builds).
 */
#ifndef KPC_SHIM_LINUX_SCHED_H
#define KPC_SHIM_LINUX_SCHED_H

#ifdef KPC_EXPLORE
#include "../../../src/atomic.h" /* pcstock's own wrappers */
#define cond_resched() pcs_spin_yield()
#else
#include <sched.h>
#define cond_resched() ((void)sched_yield())
#endif

#endif
