// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_limits.c - the limit writers, sequentially, on a 4-CPU SIM domain
 * (hierarchy_fixture.h): memory.max as cgroup v2 writes it (the kernel's
 * memory_max_write(): reclaim, then OOM) and as v1 does
 * (mem_cgroup_resize_max(): -EBUSY), memsw.max against memory.max, and
 * the limits written as strings.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_fixture.h"

static void test_set_max_v2(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group_stats st;

	assert_int_equal(pcstock_group_charge(a, 100, 0), 0);
	/* unconditional, then 16 fruitless reclaims and the OOM callback */
	assert_int_equal(pcstock_group_set_max(a, 50), 0);
	pcstock_group_stats(a, &st);
	assert_int_equal(st.max, 50);
	assert_int_equal(st.usage, 100);
	assert_int_equal(fx.reclaim_calls, PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_int_equal(fx.oom_calls, 1);
	assert_int_equal(st.events[PCSTOCK_EVENT_OOM], 1);
	/* reclaim that works brings usage under the new limit */
	fx.reclaim_calls = fx.oom_calls = 0;
	fx.free_from = a;
	fx.held = 100;
	assert_int_equal(pcstock_group_set_max(a, 30), 0);
	assert_int_equal(pcstock_group_usage(a), 30);
	assert_int_equal(fx.reclaim_calls, 1);
	assert_int_equal(fx.oom_calls, 0);
	pcstock_group_uncharge(a, fx.held);
	assert_int_equal(pcstock_group_set_max(fx.root, 1), -EINVAL);
	assert_int_equal(pcstock_group_set_max(a, PCSTOCK_COUNTER_MAX + 1),
			 -EINVAL);
	rmgroup(a);
}

static void test_set_max_strict_and_memsw(void **state)
{
	struct pcstock_group *a;

	a = mkgroup(fx.root, "a");
	assert_int_equal(pcstock_group_set_memsw_max(a, 10), -EOPNOTSUPP);
	assert_int_equal(pcstock_group_charge(a, 100, 0), 0);
	assert_int_equal(pcstock_group_set_max_strict(a, 50), -EBUSY);
	assert_int_equal(pcstock_counter_max(pcstock_group_memory(a)),
			 PCSTOCK_COUNTER_MAX);
	assert_int_equal(fx.reclaim_calls, 1);
	assert_int_equal(pcstock_group_set_max_strict(a, 100), 0);
	pcstock_group_uncharge(a, 100);
	rmgroup(a);

	assert_int_equal(tree_open(fx.policy, true, false), 0);
	a = mkgroup(fx.root, "a");
	/* memory.max <= memsw.max: memory first when lowering */
	assert_int_equal(pcstock_group_set_memsw_max(a, 200), -EINVAL);
	assert_int_equal(pcstock_group_set_max_strict(a, 150), 0);
	assert_int_equal(pcstock_group_set_memsw_max(a, 200), 0);
	assert_int_equal(pcstock_group_set_max_strict(a, 201), -EINVAL);
	assert_int_equal(pcstock_group_set_memsw_max(a, 149), -EINVAL);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_MEMSW_MAX,
						   "max"),
			 0);
	rmgroup(a);
}

/*
 * memsw.max equal to memory.max is allowed from either side (v1 refuses
 * memsw < memory only), and a charge fills both exactly.
 */
static void test_memsw_limit_equal_to_memory(void **state)
{
	struct pcstock_group *a;

	assert_int_equal(tree_open(fx.policy, true, false), 0);
	a = mkgroup(fx.root, "a");
	assert_int_equal(pcstock_group_set_max_strict(a, 150), 0);
	assert_int_equal(pcstock_group_set_memsw_max(a, 150), 0);
	assert_int_equal(pcstock_group_set_max_strict(a, 150), 0);
	assert_int_equal(pcstock_group_set_memsw_max(a, 149), -EINVAL);
	assert_int_equal(pcstock_group_set_max_strict(a, 151), -EINVAL);
	assert_true(BATCH <= 150);
	assert_int_equal(pcstock_group_charge(a, 150, 0), 0);
	assert_int_equal(pcstock_group_charge(a, 1, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_int_equal(pcstock_group_usage(a), 150);
	assert_int_equal(pcstock_counter_read(pcstock_group_memsw(a)), 150);
	pcstock_group_uncharge(a, 150);
	rmgroup(a);
}

static void test_write_limit_strings(void **state)
{
	struct pcstock_group *a = mkgroup(fx.root, "a");
	struct pcstock_group_stats st;

	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_MAX,
						   " 100M\n"),
			 0);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_LOW, "1G"),
			 0);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_MIN,
						   "8192"),
			 0);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_HIGH,
						   "max"),
			 0);
	pcstock_group_stats(a, &st);
	assert_int_equal(st.max, MB(100));
	assert_int_equal(st.low, MB(1024));
	assert_int_equal(st.min, 2);
	assert_int_equal(st.high, PCSTOCK_COUNTER_MAX);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_MAX, "1Q"),
			 -EINVAL);
	assert_int_equal(pcstock_group_write_limit(a, PCSTOCK_LIMIT_MAX, "-1"),
			 -EINVAL);
	assert_int_equal(pcstock_group_write_limit(a, 99, "1"), -EINVAL);
	assert_int_equal(pcstock_group_write_limit(fx.root, PCSTOCK_LIMIT_MAX,
						   "max"),
			 -EINVAL);
	rmgroup(a);
}

int main(void)
{
	static const struct case_def cases[] = {
		ONCE(test_set_max_v2),
		ONCE(test_set_max_strict_and_memsw),
		PER_POLICY(test_memsw_limit_equal_to_memory),
		ONCE(test_write_limit_strings),
	};

	return run_cases("test_limits", cases,
			 sizeof(cases) / sizeof(cases[0]));
}
