// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_lists.c - the kernel explorer's scenario lists: the counter's
 * scenarios (tests/explore/explore_counter.c) run over the kernel's code
 * through kernel/adapter.c; the stock, group, memcg7 and protect scenarios need
 * pcstock's other layers, which this explorer does not link.
 */
#include <stddef.h>

#include "explore.h"

/* The stock explorers have the kernel's stock instead (explore_kstock.c). */
#ifndef KPC_EXPLORE_KSTOCK
const struct explore_scenario *const explore_stock_scenarios[] = { NULL };
#endif
const struct explore_scenario *const explore_group_scenarios[] = { NULL };
const struct explore_scenario *const explore_memcg7_scenarios[] = { NULL };
const struct explore_scenario *const explore_protect_scenarios[] = { NULL };
