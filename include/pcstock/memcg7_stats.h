/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/memcg7_stats.h - the statistics of a memcg7 tree's 7-slot cache.
 *
 * Included by pcstock/hierarchy.h, which reports them in
 * struct pcstock_tree_stats; a header of its own so that the private
 * memcg7 engine, which fills them, does not depend on the group layer.
 */
#ifndef PCSTOCK_MEMCG7_STATS_H
#define PCSTOCK_MEMCG7_STATS_H

#include <pcstock/common.h>

/**
 * struct pcstock_memcg7_stats - the 7-slot cache of a memcg7 tree
 * @hits: charges served from a slot
 * @misses: charges the cache could not serve
 * @refills: pages put in a slot (batch surplus or uncharge)
 * @bypasses: refills sent straight to the counters (oversize, lock busy,
 *	no CPU, offline group)
 * @evictions: round-robin victims drained to make room
 * @slot_drains: slots drained with pages in them (any reason)
 * @drained_pages: pages those drains returned
 * @isolated_skips: drain_all skipped an isolated CPU
 * @flushing_skips: drain_all skipped a CPU whose flushing flag was set
 */
struct pcstock_memcg7_stats {
	unsigned long hits;
	unsigned long misses;
	unsigned long refills;
	unsigned long bypasses;
	unsigned long evictions;
	unsigned long slot_drains;
	unsigned long drained_pages;
	unsigned long isolated_skips;
	unsigned long flushing_skips;
};

#endif /* PCSTOCK_MEMCG7_STATS_H */
