/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: WARN_ONCE() reports to the unit (kernel/unit.c),
 * which counts every hit and hands the first one since the last reset to
 * the caller's handler, the way pcstock's own warning handler works.
 *
 * The unit names the object being warned about through KPC_WARN_SUBJECT,
 * an expression valid where the WARN_ONCE() stands (page_counter.c's only
 * one is in page_counter_cancel(), whose counter is "counter"); a tree that
 * renames it fails to build rather than reporting the wrong counter.
 */
#ifndef KPC_SHIM_LINUX_BUG_H
#define KPC_SHIM_LINUX_BUG_H

#include <stdbool.h>

void kpc_warn(const void *subject, const char *fmt, ...)
	__attribute__((__format__(__printf__, 2, 3)));

#ifndef KPC_WARN_SUBJECT
#define KPC_WARN_SUBJECT NULL
#endif

#define WARN_ONCE(cond, ...)                                                 \
	__extension__({                                                      \
		bool kpc_cond_ = !!(cond);                                   \
		if (kpc_cond_)                                               \
			kpc_warn((const void *)(KPC_WARN_SUBJECT),           \
				 __VA_ARGS__);                               \
		kpc_cond_;                                                   \
	})
#define WARN_ON_ONCE(cond) WARN_ONCE((cond), "WARN_ON_ONCE")
#define WARN_ON(cond) WARN_ONCE((cond), "WARN_ON")

#endif
