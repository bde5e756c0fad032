/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: integer limits, from the C library's.  The C
 * library's own headers include <linux/limits.h> too: they get the
 * system's (include_next) as well as these lines.
 */
#ifndef KPC_SHIM_LINUX_LIMITS_H
#define KPC_SHIM_LINUX_LIMITS_H

#include_next <linux/limits.h>
#include <limits.h>

#define BITS_PER_LONG (__SIZEOF_LONG__ * 8)

#endif
