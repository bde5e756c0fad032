/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcu.h - the library's read-side sections (urcu-bp) and what a TSan build
 * needs to see their grace periods.
 *
 * ThreadSanitizer cannot see liburcu's grace periods (liburcu is not
 * instrumented), so a TSan build tells it: every read-side unlock and every
 * call_rcu() releases one token that each RCU callback acquires before it
 * frees.  The edge is real: a callback runs after every reader that could
 * see the object has unlocked.
 *
 * The waits (pcs_rcu_barrier(), pcs_rcu_synchronize()) are counted in
 * pcs_rcu_waits, which tests read.
 *
 * Frees go through pcs_call_rcu().  In the shipped library it is liburcu's
 * call_rcu(), whose thread runs the callbacks.  In the schedule explorer's
 * build (PCSTOCK_EXPLORE_RCU) the callbacks wait on a list instead, and
 * pcs_rcu_barrier() runs them itself after a grace period: the explorer
 * does not schedule liburcu's call_rcu thread anyway, and that thread
 * sleeps 10 ms after each wake to batch its work, so each barrier (one per
 * schedule of a group scenario, at the tree's destroy) cost 10 to 20 ms.
 * The contract is liburcu's: a callback runs after a grace period that
 * began after its pcs_call_rcu(), and a barrier returns once every callback
 * queued before it has run (not those the callbacks queue).
 */
#ifndef PCSTOCK_RCU_H
#define PCSTOCK_RCU_H

/*
 * Not liburcu's _LGPL_SOURCE, which would inline the read-side sections
 * (saving a PLT call each): liburcu 0.13 places its bp reader records at
 * addresses that do not have the 128-byte alignment their type declares,
 * which is harmless on x86 inside the library but undefined behaviour
 * that UBSan reports as soon as the access is inlined into our code.
 */
#include <urcu-bp.h>

#include "atomic.h"	/* PCS_TSAN */

#ifdef PCS_TSAN
#include <sanitizer/tsan_interface.h>
extern char pcs_rcu_hb_token;
#define rcu_hb_release() __tsan_release(&pcs_rcu_hb_token)
#define rcu_hb_acquire() __tsan_acquire(&pcs_rcu_hb_token)
#else
#define rcu_hb_release() ((void)0)
#define rcu_hb_acquire() ((void)0)
#endif

/*
 * Grace periods the library waits for (barriers and synchronizations),
 * counted so that tests can bound what an operation waits for.
 */
extern atomic_ulong pcs_rcu_waits;

#ifdef PCSTOCK_EXPLORE_RCU
void pcs_rcu_defer(struct rcu_head *head, void (*fn)(struct rcu_head *));
void pcs_rcu_run_deferred(void);
#endif

/* Call @fn(@head) a grace period from now. */
static inline void pcs_call_rcu(struct rcu_head *head,
				void (*fn)(struct rcu_head *))
{
#ifdef PCSTOCK_EXPLORE_RCU
	pcs_rcu_defer(head, fn);
#else
	urcu_bp_call_rcu(head, fn);
#endif
}

static inline void pcs_rcu_barrier(void)
{
	pcs_fetch_add(&pcs_rcu_waits, 1, PCS_RELAXED);
#ifdef PCSTOCK_EXPLORE_RCU
	pcs_rcu_run_deferred();
#else
	urcu_bp_barrier();
#endif
}

static inline void pcs_rcu_synchronize(void)
{
	pcs_fetch_add(&pcs_rcu_waits, 1, PCS_RELAXED);
	urcu_bp_synchronize_rcu();
}

static inline void rcu_lock(void)
{
	urcu_bp_read_lock();
}

static inline void rcu_unlock(void)
{
	rcu_hb_release();
	urcu_bp_read_unlock();
}

#endif /* PCSTOCK_RCU_H */
