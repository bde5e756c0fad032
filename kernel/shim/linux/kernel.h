/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: min()/max() and the few kernel.h declarations the
 * extracted sources use.  min() and max() evaluate each argument once and,
 * like the kernel's, refuse (at compile time) arguments of different
 * types: a tree that compares mixed types fails to build here as there.
 */
#ifndef KPC_SHIM_LINUX_KERNEL_H
#define KPC_SHIM_LINUX_KERNEL_H

#include <linux/compiler.h>
#include <linux/limits.h>
#include <errno.h>
#include <linux/types.h>

#define kpc_minmax_(a, b, op)                                                \
	__extension__({                                                      \
		__typeof__(a) kpc_a_ = (a);                                  \
		__typeof__(b) kpc_b_ = (b);                                  \
		_Static_assert(__builtin_types_compatible_p(                 \
				       __typeof__(kpc_a_),                   \
				       __typeof__(kpc_b_)),                  \
			       "min()/max() of different types");            \
		kpc_a_ op kpc_b_ ? kpc_a_ : kpc_b_;                          \
	})
#define min(a, b) kpc_minmax_((a), (b), <)
#define max(a, b) kpc_minmax_((a), (b), >)
#define min_t(type, a, b) min((type)(a), (type)(b))
#define max_t(type, a, b) max((type)(a), (type)(b))

#ifndef ULLONG_MAX
#define ULLONG_MAX (~0ULL)
#endif

unsigned long long memparse(const char *ptr, char **retptr);
unsigned long long simple_strtoull(const char *cp, char **endp,
				   unsigned int base);

#endif
