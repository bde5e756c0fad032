/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: atomic_long_t and xchg() on C11 atomics.
 *
 * Every operation goes through pcstock's own wrappers (src/atomic.h), so
 * in an explorer build (PCSTOCK_EXPLORE, KPC_EXPLORE) each is a scheduling
 * point and, with PCSTOCK_EXPLORE_WMM, an access of the weak-memory model,
 * exactly like pcstock's own atomics.  In other builds the wrappers are
 * plain <stdatomic.h> calls.
 *
 * Memory orders follow the kernel's atomic_t.txt: read, set and the
 * non-returning add/sub are relaxed; the value-returning RMWs and xchg()
 * are fully ordered, which atomic_t.txt defines as smp_mb() before and
 * after a relaxed RMW: a seq_cst fence on each side here.  (A C11 seq_cst
 * RMW alone is weaker: a relaxed load after it may still read an old
 * value, so set_max()'s re-read of usage could miss a racing charge; the
 * explorer's weak mode reports exactly that false alarm without the
 * fences.)
 *
 * Each atomic_t and atomic_long_t operation begins with a preemption
 * point (linux/preempt.h), where pcstock-kcheck --migrate may run another
 * CPU's operation; xchg() of a plain field does not (the limit's
 * exchange is the driver's own operation, never interrupted).
 */
#ifndef KPC_SHIM_LINUX_ATOMIC_H
#define KPC_SHIM_LINUX_ATOMIC_H

#include <linux/compiler.h>
#include <linux/preempt.h>
#include <linux/types.h>

#include "../../../src/atomic.h" /* pcstock's own wrappers */

/* A fully ordered RMW: smp_mb(); relaxed RMW; smp_mb(). */
#define kpc_fully_ordered(rmw)                                               \
	__extension__({                                                      \
		__typeof__(rmw) kpc_r_;                                      \
		pcs_fence(memory_order_seq_cst);                             \
		kpc_r_ = (rmw);                                              \
		pcs_fence(memory_order_seq_cst);                             \
		kpc_r_;                                                      \
	})

/*
 * KPC_ATOMIC_TYPE(atomic_t, atomic, int): the type and the operations both
 * atomic_t and atomic_long_t have, on a value of type @val.
 */
#define KPC_ATOMIC_TYPE(type, pfx, val)                                      \
	typedef struct {                                                     \
		_Atomic val counter;                                         \
	} type;                                                              \
									     \
	static inline val pfx##_read(const type *v)                          \
	{                                                                    \
		kpc_preempt_point();                                         \
		return pcs_load((_Atomic val *)&v->counter, PCS_RELAXED);    \
	}                                                                    \
	static inline void pfx##_set(type *v, val i)                         \
	{                                                                    \
		kpc_preempt_point();                                         \
		pcs_store(&v->counter, i, PCS_RELAXED);                      \
	}                                                                    \
	static inline void pfx##_add(val i, type *v)                         \
	{                                                                    \
		kpc_preempt_point();                                         \
		(void)pcs_fetch_add(&v->counter, i, PCS_RELAXED);            \
	}                                                                    \
	static inline void pfx##_sub(val i, type *v)                         \
	{                                                                    \
		kpc_preempt_point();                                         \
		(void)pcs_fetch_sub(&v->counter, i, PCS_RELAXED);            \
	}                                                                    \
	static inline val pfx##_add_return(val i, type *v)                   \
	{                                                                    \
		kpc_preempt_point();                                         \
		return kpc_fully_ordered(pcs_fetch_add(&v->counter, i,       \
						       PCS_RELAXED)) + i;    \
	}                                                                    \
	static inline val pfx##_sub_return(val i, type *v)                   \
	{                                                                    \
		kpc_preempt_point();                                         \
		return kpc_fully_ordered(pcs_fetch_sub(&v->counter, i,       \
						       PCS_RELAXED)) - i;    \
	}                                                                    \
	static inline val pfx##_xchg(type *v, val i)                         \
	{                                                                    \
		kpc_preempt_point();                                         \
		return kpc_fully_ordered(pcs_xchg(&v->counter, i,            \
						  PCS_RELAXED));             \
	}                                                                    \
	/* Fully ordered when it succeeds; a failure only reloads *old. */  \
	static inline bool pfx##_try_cmpxchg(type *v, val *old, val new)    \
	{                                                                    \
		bool ok;                                                     \
									     \
		kpc_preempt_point();                                         \
		pcs_fence(memory_order_seq_cst);                             \
		ok = pcs_cas(&v->counter, old, new, PCS_RELAXED,             \
			     PCS_RELAXED);                                   \
		if (ok)                                                      \
			pcs_fence(memory_order_seq_cst);                     \
		return ok;                                                   \
	}

KPC_ATOMIC_TYPE(atomic_long_t, atomic_long, long)
KPC_ATOMIC_TYPE(atomic_t, atomic, int)	/* the stock series' slot */

#define ATOMIC_LONG_INIT(i) { (i) }
#define ATOMIC_INIT(i) { (i) }

/*
 * Not a kernel function: what kernel/extract.sh's try_charge_relaxed_add
 * mutation puts in place of a fully ordered add, a planted memory-order
 * bug for the explorer to find.
 */
static inline long kpc_atomic_long_add_return_relaxed(long i,
						      atomic_long_t *v)
{
	return pcs_fetch_add(&v->counter, i, PCS_RELAXED) + i;
}

/*
 * Not a kernel function: the refill of kernel/extract.sh's stock_cap_leaks
 * mutation, a planted bug: add @i to the slot, then cut a slot above @cap
 * back to @cap, dropping the excess (pages charged to the hierarchy that
 * nobody will ever uncharge).
 */
static inline void kpc_atomic_add_capped_leaky(int i, atomic_t *v, int cap)
{
	atomic_add(i, v);
	if (atomic_read(v) > cap)
		atomic_set(v, cap);
}

/*
 * Not kernel functions: kernel/extract.sh's stock_refill_split and
 * stock_drain_split mutations, planted atomicity bugs for the explorer:
 * the refill's add, and the drain's exchange, done as a read and a
 * separate write of the slot.
 */
static inline void kpc_atomic_add_split(int i, atomic_t *v)
{
	atomic_set(v, atomic_read(v) + i);
}

static inline int kpc_atomic_xchg_split(atomic_t *v, int i)
{
	int old = atomic_read(v);

	atomic_set(v, i);
	return old;
}

/*
 * xchg() on a plain field (the kernel's limit): a fully ordered exchange
 * of an object that is not declared _Atomic, taken as the _Atomic of its
 * type (the same size and representation here), which clang's
 * <stdatomic.h> requires and gcc's accepts either way.
 */
#define xchg(ptr, v)                                                         \
	kpc_fully_ordered(pcs_xchg(KPC_AS_ATOMIC(ptr), (v), PCS_RELAXED))

#endif
