/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * atomic.h - every atomic access pcstock performs goes through these macros.
 *
 * They are thin type-generic wrappers over C11 <stdatomic.h>, with the
 * memory order always spelled out at the call site (and, for anything
 * stronger than relaxed, a comment there naming the partner access).
 *
 * In a schedule-explorer build (PCSTOCK_EXPLORE defined; a test-only
 * library variant, never the installed one) each wrapper first calls
 * pcstock_explore_hook, a scheduling point at which the explorer may switch
 * to another simulated CPU.  The hook receives the operation and the address
 * of the object, so an interleaving can be printed and replayed.  With
 * PCSTOCK_EXPLORE_WMM as well (the explorer's own library variants) the
 * explorer then performs the access itself, through its weak-memory model.
 *
 * In a trace build (PCSTOCK_TRACE defined; the library variant linked into
 * pcstock-bench's --lines model only) each wrapper first calls
 * pcstock_trace_hook with the same two arguments, so that the cache-line
 * model (bench/lines/model.c) sees every shared-memory access the library
 * makes.
 * In every other build both hooks compile to nothing.
 */
#ifndef PCSTOCK_ATOMIC_H
#define PCSTOCK_ATOMIC_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

/* PCS_TSAN: a ThreadSanitizer build (gcc, then clang's spelling). */
#if defined(__SANITIZE_THREAD__)
#define PCS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PCS_TSAN 1
#endif
#endif

enum pcs_atomic_op {
	PCS_OP_LOAD,
	PCS_OP_STORE,
	PCS_OP_ADD,
	PCS_OP_SUB,
	PCS_OP_XCHG,
	PCS_OP_CAS,
	PCS_OP_FENCE,
	PCS_OP_YIELD,	/* a spin-wait backing off: no memory access */
	PCS_OP_NR
};

#ifdef PCSTOCK_TRACE
/*
 * Set by the line model; NULL means "not tracing".  Atomic because threads
 * the model does not trace (liburcu's call_rcu thread) read it too.
 */
extern void (*_Atomic pcstock_trace_hook)(enum pcs_atomic_op op,
					   const void *obj);

static inline void pcs_trace(enum pcs_atomic_op op, const void *obj)
{
	/* Relaxed: no partner; the hook finds its own state (model.c). */
	void (*hook)(enum pcs_atomic_op, const void *) =
		atomic_load_explicit(&pcstock_trace_hook, memory_order_relaxed);

	if (hook)
		hook(op, obj);
}
#define PCS_TRACE(op, obj) pcs_trace((op), (obj))
#else
#define PCS_TRACE(op, obj) ((void)0)
#endif

#ifdef PCSTOCK_EXPLORE
/*
 * Set by the explorer and the tests; NULL means "no scheduling", so plain
 * tests work.  Atomic: threads no test drives read it too (liburcu's
 * call_rcu thread, freeing a group while a test sets the hook), and
 * relaxed, loaded once per point: the hook finds its own state, and no
 * load of it may order anything for ThreadSanitizer.
 */
extern void (*_Atomic pcstock_explore_hook)(enum pcs_atomic_op op,
					     const void *obj);

static inline void pcs_explore_point(enum pcs_atomic_op op, const void *obj)
{
	void (*hook)(enum pcs_atomic_op, const void *) =
		atomic_load_explicit(&pcstock_explore_hook,
				     memory_order_relaxed);

	if (hook)
		hook(op, obj);
}

/* Whether a hook is set (the explorer's runs, or a test's). */
static inline bool pcs_explore_hooked(void)
{
	return atomic_load_explicit(&pcstock_explore_hook,
				    memory_order_relaxed) != NULL;
}
#define PCS_POINT(op, obj)                                                   \
	(PCS_TRACE((op), (obj)), pcs_explore_point((op), (obj)))
#else
#define PCS_POINT(op, obj) PCS_TRACE((op), (obj))
#endif

#ifdef PCSTOCK_EXPLORE_WMM
/*
 * Weak-memory exploration (tests/explore/explore_wmm.c; explorer-only
 * library variants).  After the scheduling point every access is carried
 * out by the explorer's memory model, which may hand a load an older value
 * than memory holds.  Values travel as uint64_t (pointers through
 * uintptr_t).  pcs_cas() is a GNU statement expression: gcc and clang, test
 * builds only.
 */
#include <stdint.h>

uint64_t pcstock_explore_wmm(enum pcs_atomic_op op, void *obj, size_t size,
			     uint64_t val, uint64_t *expected,
			     memory_order mo, memory_order mo_fail);

/*
 * The unqualified type of *p, as gcc's own <stdatomic.h> spells it; the
 * model masks a value to the object's size (a negative int arrives sign
 * extended).
 */
#define PCS_WMM_T(p) __typeof__((void)0, *(p))
#define pcs_wmm_in(p, v) ((uint64_t)(uintptr_t)(PCS_WMM_T(p))(v))
#define pcs_wmm_out(p, u) ((PCS_WMM_T(p))(uintptr_t)(u))
#define pcs_wmm_obj(p) ((void *)(uintptr_t)(p))
#define pcs_wmm(op, p, v, mo)                                                \
	(PCS_POINT((op), (p)),                                               \
	 pcs_wmm_out((p), pcstock_explore_wmm((op), pcs_wmm_obj(p),          \
					      sizeof(*(p)),                  \
					      pcs_wmm_in((p), (v)), NULL,    \
					      (mo), (mo))))

#define pcs_load(p, mo) pcs_wmm(PCS_OP_LOAD, (p), 0, (mo))
#define pcs_store(p, v, mo) ((void)pcs_wmm(PCS_OP_STORE, (p), (v), (mo)))
#define pcs_fetch_add(p, v, mo) pcs_wmm(PCS_OP_ADD, (p), (v), (mo))
#define pcs_fetch_sub(p, v, mo) pcs_wmm(PCS_OP_SUB, (p), (v), (mo))
#define pcs_xchg(p, v, mo) pcs_wmm(PCS_OP_XCHG, (p), (v), (mo))
#define pcs_cas(p, expected, desired, mo_ok, mo_fail)                        \
	__extension__({                                                      \
		uint64_t pcs_e_ = pcs_wmm_in((p), *(expected));              \
		bool pcs_ok_;                                                \
		PCS_POINT(PCS_OP_CAS, (p));                                  \
		pcs_ok_ = pcstock_explore_wmm(PCS_OP_CAS, pcs_wmm_obj(p),    \
					      sizeof(*(p)),                  \
					      pcs_wmm_in((p), (desired)),    \
					      &pcs_e_, (mo_ok), (mo_fail));  \
		*(expected) = pcs_wmm_out((p), pcs_e_);                      \
		pcs_ok_;                                                     \
	})
#define pcs_fence(mo)                                                        \
	(PCS_POINT(PCS_OP_FENCE, NULL),                                      \
	 (void)pcstock_explore_wmm(PCS_OP_FENCE, NULL, 0, 0, NULL, (mo),     \
				   (mo)))
#else /* !PCSTOCK_EXPLORE_WMM */
#define pcs_load(p, mo) (PCS_POINT(PCS_OP_LOAD, (p)), atomic_load_explicit((p), (mo)))
#define pcs_store(p, v, mo)                                                  \
	(PCS_POINT(PCS_OP_STORE, (p)), atomic_store_explicit((p), (v), (mo)))
/* fetch_add/fetch_sub return the value *before* the operation. */
#define pcs_fetch_add(p, v, mo)                                              \
	(PCS_POINT(PCS_OP_ADD, (p)), atomic_fetch_add_explicit((p), (v), (mo)))
#define pcs_fetch_sub(p, v, mo)                                              \
	(PCS_POINT(PCS_OP_SUB, (p)), atomic_fetch_sub_explicit((p), (v), (mo)))
#define pcs_xchg(p, v, mo)                                                   \
	(PCS_POINT(PCS_OP_XCHG, (p)), atomic_exchange_explicit((p), (v), (mo)))
/* Strong CAS; on failure *(expected) is reloaded. */
#define pcs_cas(p, expected, desired, mo_ok, mo_fail)                        \
	(PCS_POINT(PCS_OP_CAS, (p)),                                         \
	 atomic_compare_exchange_strong_explicit((p), (expected), (desired), \
						 (mo_ok), (mo_fail)))
#ifdef PCS_TSAN
/*
 * TSan does not model fences (gcc refuses one under -Werror=tsan).  In a
 * TSan build a fence is a seq_cst RMW of a private word instead: the same
 * full barrier on the hardware; TSan's happens-before comes from the
 * release/acquire pairs the fences sit next to.
 */
static inline void pcs_tsan_fence(void)
{
	static atomic_int word;

	atomic_fetch_add_explicit(&word, 0, memory_order_seq_cst);
}
#define pcs_fence(mo)                                                        \
	(PCS_POINT(PCS_OP_FENCE, NULL), (void)(mo), pcs_tsan_fence())
#else
#define pcs_fence(mo) (PCS_POINT(PCS_OP_FENCE, NULL), atomic_thread_fence(mo))
#endif
#endif /* PCSTOCK_EXPLORE_WMM */

/*
 * A lossy statistic: @p += @n without an atomic RMW, so a hit path stays
 * at one locked instruction; a thread sharing the CPU can overwrite the
 * update.  On x86-64 one non-locked add to memory (an aligned 8-byte
 * access, so readers see the old or the new value); elsewhere, and
 * wherever the accesses are observed (explorer, trace, TSan), a relaxed
 * load and store.
 */
#if defined(__x86_64__) && !defined(PCSTOCK_EXPLORE) &&                    \
	!defined(PCSTOCK_TRACE) && !defined(PCS_TSAN)
#define pcs_stat_add(p, n)                                                   \
	__asm__("addq %1, %0"                                                \
		: "+m"(*(unsigned long *)(p))                                \
		: "er"((unsigned long)(n)))
#else
#define pcs_stat_add(p, n)                                                   \
	pcs_store((p), pcs_load((p), PCS_RELAXED) + (n), PCS_RELAXED)
#endif

/*
 * The back-off of a spin-wait on another thread (a lock holder, a
 * writer): sched_yield(), after a scheduling point that tells the
 * explorer this thread waits, so PCT, which otherwise always runs the
 * highest-priority thread, lets the others run.
 */
#define pcs_spin_yield() (PCS_POINT(PCS_OP_YIELD, NULL), (void)sched_yield())

#define PCS_RELAXED memory_order_relaxed
#define PCS_ACQUIRE memory_order_acquire
#define PCS_RELEASE memory_order_release
#define PCS_ACQ_REL memory_order_acq_rel
#define PCS_SEQ_CST memory_order_seq_cst

/*
 * PCS_ORDER(TAG, mo): the order @mo, at the one access site named TAG (a
 * module prefix and what the order is for: M7_WORK, COUNTER_TRY_MAX).
 * A build that defines PCSTOCK_ORDER_<TAG> as another order
 * (-DPCSTOCK_ORDER_M7_WORK=PCS_RELAXED) gives that site its order: this
 * is how a test library plants a weakened order (tests/mutants/orders.txt,
 * docs/mutation.md).  Any other build gets @mo itself, token for token.
 *
 * The kernel's IS_ENABLED() trick: a defined override expands to a
 * memory_order_* name, which pastes into one of the PCS_ORDER_IS_* below;
 * their comma makes it the second argument PCS_ORDER_2ND_() picks.  The
 * undefined PCSTOCK_ORDER_<TAG> pastes into a name that is no macro, one
 * argument, and @mo is the second.
 */
#define PCS_ORDER_OF_(tag, mo)                                               \
	PCS_ORDER_PICK_(PCS_ORDER_CAT_(PCS_ORDER_IS_, PCSTOCK_ORDER_##tag), mo)
#ifdef PCSTOCK_EXPLORE_WMM
/*
 * The explorer's variants also name the site to the model, which notes
 * the tags its explored threads reach in weak memory (pcstock-explore
 * --site-coverage; tests/explore/explore_wmm.c).  Every access there goes
 * through pcstock_explore_wmm(), which takes the names given since the
 * last access; a relaxed access without a tag gives none.
 */
memory_order pcstock_explore_site(const char *tag, memory_order mo);
#define PCS_ORDER(tag, mo) pcstock_explore_site(#tag, PCS_ORDER_OF_(tag, mo))
#else
#define PCS_ORDER(tag, mo) PCS_ORDER_OF_(tag, mo)
#endif
#define PCS_ORDER_CAT_(a, b) PCS_ORDER_CAT2_(a, b)
#define PCS_ORDER_CAT2_(a, b) a##b
#define PCS_ORDER_PICK_(probe, mo) PCS_ORDER_2ND_(probe, mo, ~)
#define PCS_ORDER_2ND_(a, b, ...) b
#define PCS_ORDER_IS_memory_order_relaxed ~, memory_order_relaxed
#define PCS_ORDER_IS_memory_order_acquire ~, memory_order_acquire
#define PCS_ORDER_IS_memory_order_release ~, memory_order_release
#define PCS_ORDER_IS_memory_order_acq_rel ~, memory_order_acq_rel
#define PCS_ORDER_IS_memory_order_seq_cst ~, memory_order_seq_cst

#endif /* PCSTOCK_ATOMIC_H */
