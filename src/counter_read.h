/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * counter_read.h - the counter's readers, inline, for the library's own
 * slow paths (private).  The kernel's page_counter_read() is an inline
 * function; the exported pcstock_counter_*() readers (counter.c) are these,
 * one call away, for users.  Every read is a relaxed load: a snapshot that
 * may be stale by the time it is used, as in the kernel.
 */
#ifndef PCSTOCK_COUNTER_READ_H
#define PCSTOCK_COUNTER_READ_H

#include <pcstock/counter.h>

#include "atomic.h"

#define PCS_COUNTER_READER(field, type)                                      \
	static inline unsigned long pcs_counter_##field(                     \
		const struct pcstock_counter *c)                             \
	{                                                                    \
		return (unsigned long)(type)pcs_load(&c->field, PCS_RELAXED); \
	}

/* pcs_counter_usage(): the kernel's page_counter_read(). */
PCS_COUNTER_READER(usage, long)
PCS_COUNTER_READER(max, unsigned long)
PCS_COUNTER_READER(high, unsigned long)
PCS_COUNTER_READER(min, unsigned long)
PCS_COUNTER_READER(low, unsigned long)
PCS_COUNTER_READER(watermark, unsigned long)
PCS_COUNTER_READER(local_watermark, unsigned long)
PCS_COUNTER_READER(failcnt, unsigned long)
PCS_COUNTER_READER(emin, unsigned long)
PCS_COUNTER_READER(elow, unsigned long)
PCS_COUNTER_READER(min_usage, long)
PCS_COUNTER_READER(low_usage, long)
PCS_COUNTER_READER(children_min_usage, long)
PCS_COUNTER_READER(children_low_usage, long)

#undef PCS_COUNTER_READER

#endif /* PCSTOCK_COUNTER_READ_H */
