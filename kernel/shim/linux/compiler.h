/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: the compiler annotations kernel sources use.
 *
 * READ_ONCE() and WRITE_ONCE() are volatile accesses, as in the kernel: a
 * single load or store the compiler may neither tear, fuse nor omit.  In an
 * explorer build (KPC_EXPLORE) they are relaxed atomics through pcstock's
 * src/atomic.h instead, so that each one is a scheduling point.
 */
#ifndef KPC_SHIM_LINUX_COMPILER_H
#define KPC_SHIM_LINUX_COMPILER_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A plain object's address as that of the _Atomic of its type, for the
 * C11 atomics (clang's take _Atomic objects only).
 */
#define KPC_AS_ATOMIC(p) ((_Atomic __typeof__(*(p)) *)(p))

#ifdef KPC_EXPLORE
#include "../../../src/atomic.h" /* pcstock's own wrappers */
#define READ_ONCE(x) pcs_load(KPC_AS_ATOMIC(&(x)), PCS_RELAXED)
#define WRITE_ONCE(x, v) pcs_store(KPC_AS_ATOMIC(&(x)), (v), PCS_RELAXED)
#else
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)                                                     \
	do {                                                                 \
		*(volatile __typeof__(x) *)&(x) = (v);                       \
	} while (0)
#endif

/*
 * IS_ENABLED(CONFIG_X): 1 when the build defines CONFIG_X to 1, else 0.
 * A defined option turns the placeholder into "0," which shifts the 1
 * into the second argument's place.
 */
#define KPC_PLACEHOLDER_1 0,
#define kpc_second_(ignored, val, ...) val
#define kpc_second(args) kpc_second_ args
#define kpc_is_set_(junk_or_0comma) kpc_second((junk_or_0comma 1, 0))
#define kpc_is_set(val) kpc_is_set_(KPC_PLACEHOLDER_##val)
#define IS_ENABLED(option) kpc_is_set(option)

/* A racy access the kernel tolerates on purpose: a plain access here. */
#define data_race(expr) (expr)

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define noinline __attribute__((__noinline__))
/* glibc's <sys/cdefs.h> has its own, to the same effect: ours wins. */
#undef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
#define fallthrough __attribute__((__fallthrough__))
#define __must_check __attribute__((__warn_unused_result__))

#endif
