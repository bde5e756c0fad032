// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_stock.c - schedule-explorer scenarios for the stock layer.
 */
#include <stddef.h>

#include "explore.h"

const struct explore_scenario *const explore_stock_scenarios[] = {
	NULL,
};
