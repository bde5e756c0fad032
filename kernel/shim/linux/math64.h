/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pcstock kernel shim: 64-bit division helpers (native on 64-bit hosts). */
#ifndef KPC_SHIM_LINUX_MATH64_H
#define KPC_SHIM_LINUX_MATH64_H

#include <linux/types.h>

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

#endif
