/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/cpu_cache.h - the calling thread's CPU cache, the CPU layer's
 * part of the opt-in inline fast paths.
 *
 * Do not include this file directly: pcstock/stock_inline.h does.  It is
 * the CPU layer's counterpart of the kernel's per-CPU offset, kept apart
 * from the stock so that the stock's inline code can read it while the
 * CPU layer, which sets it, knows nothing of stocks.  The names ending in
 * an underscore are exported for the inline fast paths only: they are no
 * API, and their layout is that of the library version the program was
 * built with (see pcstock/stock_inline.h).
 */
#ifndef PCSTOCK_CPU_CACHE_H
#define PCSTOCK_CPU_CACHE_H

#ifdef __cplusplus
#error "pcstock/cpu_cache.h is C only: C++ calls the exported functions"
#endif

#include <pcstock/common.h>

/*
 * The calling thread's CPU cache: the region of the per-CPU arena of the CPU
 * the thread is, in the domain whose hit key is @hit_key (the kernel's per-CPU
 * offset).  A slot's address is region + the counter's slot handle.  Set and
 * reset by the library only.
 *
 * RSEQ domains, whose CPU is the OS CPU the thread runs on, have their own
 * entry, used by the library's hit paths only: @rseq_region is the region
 * of a domain's CPU for one OS CPU, valid while the key compared XOR the
 * first 8 bytes of the thread's rseq area (@rseq_area: cpu_id_start and
 * cpu_id) equals @rseq_tag (see the library's domain.h).
 */
struct pcstock_cpu_cache_ {
	unsigned long long hit_key;
	char *region;
	unsigned long long rseq_tag;
	char *rseq_region;
	const void *rseq_area;
};

/* Initial-exec, as the library's own: one %fs-relative load. */
extern PCSTOCK_API _Thread_local struct pcstock_cpu_cache_ pcstock_cpu_cache_
	__attribute__((tls_model("initial-exec")));

#endif /* PCSTOCK_CPU_CACHE_H */
