// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_lists.c - the kernel explorer's scenario lists: the counter's
 * scenarios (tests/explore/explore_counter.c) run over the kernel's code
 * through kernel/adapter.c, their traces naming the kernel's fields; the
 * stock, group, memcg7, protect, limits and tree scenarios need pcstock's
 * other layers, which this explorer does not link.
 */
#include <stddef.h>

#include "explore.h"
#include "kpc.h"

/*
 * Traces name the kernel's fields ("mid.max"), not offsets into
 * pcstock's layout: the counter scenarios' pcstock_counter holds the
 * kernel's struct page_counter at its start (kernel/adapter.c).
 */
__attribute__((__constructor__)) static void kernel_fields(void)
{
	static struct explore_field fields[32];
	const struct kpc_field *f = kpc_unit()->fields;
	unsigned int i;

	for (i = 0; f[i].name && i + 1 < 32; i++) {
		fields[i].name = f[i].name;
		fields[i].offset = f[i].offset;
	}
	fields[i].name = NULL;
	explore_counter_fields = fields;
}

/* The stock explorers have the kernel's stock instead (explore_kstock.c). */
#ifndef KPC_EXPLORE_KSTOCK
const struct explore_scenario *const explore_stock_scenarios[] = { NULL };
#endif
const struct explore_scenario *const explore_group_scenarios[] = { NULL };
const struct explore_scenario *const explore_memcg7_scenarios[] = { NULL };
const struct explore_scenario *const explore_protect_scenarios[] = { NULL };
const struct explore_scenario *const explore_limits_scenarios[] = { NULL };
const struct explore_scenario *const explore_tree_scenarios[] = { NULL };
const struct explore_scenario *const explore_drain_scenarios[] = { NULL };
const struct explore_scenario *const explore_shm_scenarios[] = { NULL };
