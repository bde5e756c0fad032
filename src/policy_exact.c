// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * policy_exact.c - "exact": the per-counter stock that is exact at the
 * limit (PCSTOCK_STOCK_EXACT, stock.c), the fifth policy and the example
 * of writing one (docs/design.md).
 *
 * Every other stock policy charges a batch ahead and strands up to
 * nr_cpus x batch pages per counter: near max a charge then reclaims, or
 * fails after a drain, while pages sit idle in other CPUs' slots (the
 * series' review: 75 MiB per leaf at 300 CPUs, memcontrol03's premature
 * OOM).  As Linux's percpu_counter_limited_add() does for one counter,
 * this policy stocks freely while far from every limit and goes exact
 * near one, over the whole hierarchy:
 *
 *  - a counter's own misses watch the margin of every level above it: a
 *    margin below what its stock could hide (nr_cpus x batch) switches
 *    its stock off (every slot marked and drained; charges and uncharges
 *    exact) until a miss sees every level twice that far from max
 *    (stock.c, PCSTOCK_STOCK_EXACT);
 *  - the stocks of other groups under the level that refused a charge are
 *    theirs: make_room below switches every stock of that level's subtree
 *    to exact and drains it before the flow raises the max event,
 *    reclaims or fails, so no charge reclaims or fails for pages that sit
 *    in a stock.  The one exception is a batch another thread charged and
 *    has not yet put in its slot (at most one batch per charge in flight).
 *
 * The hit is the per-counter stock's inline hit, unchanged: a switched-off
 * stock's slots carry a mark that fails it, and the check sits on the miss
 * path.  So this file is the whole policy: its table and make_room.
 */
#include <pcstock/hierarchy.h>
#include <pcstock/stock.h>

#include "group.h"
#include "policy.h"
#include "rcu.h"

static bool exact_make_room(struct pcstock_group *over)
{
	struct pcstock_group *pos;
	unsigned long freed = 0;

	rcu_lock();
	for_each_in_subtree(pos, over) {
		freed += pcstock_counter_stock_go_exact(&pos->memory);
		freed += pcstock_counter_stock_go_exact(&pos->memsw);
	}
	rcu_unlock();
	return freed != 0;
}

const struct pcs_policy_ops pcs_policy_exact = {
	PCS_COUNTER_POLICY("exact", PCSTOCK_STOCK_EXACT, true),
	.exact_at_limit = true,
	.make_room = exact_make_room,
};
