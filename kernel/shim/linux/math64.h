/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: 64-bit division helpers (native on 64-bit hosts).
 *
 * mul_u64_u64_div_u64() (a * b / c with the product kept whole) is what
 * 6.12.118's effective_protection() computes its shares with.  The
 * product is taken in 128 bits here.  A quotient that does not fit in 64
 * bits (or a zero divisor) is, on x86, a divide error: the kernel's
 * 128-by-64 div instruction traps (#DE) and the task oopses.  The shim
 * renders the trap as a message naming it and an abort(), so a tree that
 * reaches it fails loudly instead of returning a truncated quotient.
 */
#ifndef KPC_SHIM_LINUX_MATH64_H
#define KPC_SHIM_LINUX_MATH64_H

#include <stdio.h>
#include <stdlib.h>

#include <linux/types.h>

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 mul_u64_u64_div_u64(u64 a, u64 b, u64 c)
{
	unsigned __int128 q;

	if (!c) {
		fprintf(stderr, "divide error: mul_u64_u64_div_u64(%llu, %llu,"
			" 0) divides by zero\n", a, b);
		abort();
	}
	q = (unsigned __int128)a * b / c;
	if (q >> 64) {
		fprintf(stderr, "divide error: mul_u64_u64_div_u64(%llu, %llu,"
			" %llu) overflows 64 bits\n", a, b, c);
		abort();
	}
	return (u64)q;
}

#endif
