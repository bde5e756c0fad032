/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: cache-line layout helpers, for a 64-byte line
 * (the padding changes the struct's layout only, never its behaviour).
 */
#ifndef KPC_SHIM_LINUX_CACHE_H
#define KPC_SHIM_LINUX_CACHE_H

#define L1_CACHE_BYTES 64
#define SMP_CACHE_BYTES L1_CACHE_BYTES
#define ____cacheline_aligned __attribute__((__aligned__(SMP_CACHE_BYTES)))
#define ____cacheline_aligned_in_smp ____cacheline_aligned
#define ____cacheline_internodealigned_in_smp ____cacheline_aligned
/* An empty member aligned to the next line: what follows starts there. */
#define CACHELINE_PADDING(name)                                              \
	struct {                                                             \
	} name ____cacheline_aligned

#endif
