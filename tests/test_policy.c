// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_policy.c - the registry of stock policies (src/policy.c): every
 * registered table passes pcs_policy_check() and reports what it declares;
 * tables that break an invariant are refused; a table that leaves out
 * max_batch accepts every batch; and a per-counter policy that replaces one
 * step of the stock (src/stock_steps.h) stays per-counter and has that
 * step run by the stock's own calls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include <pcstock/cpu.h>
#include <pcstock/hierarchy.h>
#include <pcstock/stock.h>

#include "atomic.h"
#include "policy.h"

static void test_registry_tables_pass_their_check(void **state)
{
	(void)state;
	for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
		const struct pcs_policy_ops *ops;
		struct pcstock_policy_info info;

		ops = pcs_policy_ops((enum pcstock_tree_policy)p);
		/* NULL: the table failed pcs_policy_check(). */
		assert_non_null(ops);
		assert_null(pcs_policy_check(ops));
		assert_int_equal(pcstock_tree_policy_info(
					 (enum pcstock_tree_policy)p, &info),
				 0);
		assert_string_equal(info.name, ops->name);
		assert_int_equal(info.stocks, ops->stocks);
		assert_int_equal(info.per_counter, ops->per_counter);
		assert_int_equal(info.exact_at_limit, ops->exact_at_limit);
		assert_int_equal(info.group_batch, ops->group_batch);
		assert_int_equal(info.uncharges_refill, ops->uncharges_refill);
		assert_true(info.max_batch > 0);
		assert_true(info.max_batch <= PCSTOCK_STOCK_MAX_BATCH);
	}
}

/*
 * Every public entry that takes an enum pcstock_tree_policy refuses the
 * values from PCSTOCK_TREE_NR_POLICIES up, the first past the last policy
 * included, as documented: pcstock_tree_create() and
 * pcstock_tree_policy_info() with -EINVAL, their out arguments untouched,
 * pcstock_tree_policy_name() with NULL; and the refused tree holds
 * nothing (its domain is free to go).  The registry is an array of
 * PCSTOCK_TREE_NR_POLICIES entries: a range check that let its size
 * through would read past its end, which a bounds-checked build of the
 * library traps on (tests/hierarchy.cmake).
 */
static void test_values_past_the_last_policy_refused(void **state)
{
	const enum pcstock_tree_policy bad[] = {
		PCSTOCK_TREE_NR_POLICIES,
		(enum pcstock_tree_policy)(PCSTOCK_TREE_NR_POLICIES + 1),
		(enum pcstock_tree_policy)INT_MAX,
		(enum pcstock_tree_policy)UINT_MAX,
	};
	const struct pcstock_domain_attr attr = { .nr_cpus = 2,
						  .mode = PCSTOCK_CPU_SIM };
	struct pcstock_policy_info info, before;
	struct pcstock_tree *made;
	struct pcstock_domain *d;

	(void)state;
	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	assert_int_equal(pcstock_tree_create(d, NULL, &made), 0);
	memset(&before, 0xa5, sizeof(before));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pcstock_tree_attr ta = { .policy = bad[i] };
		struct pcstock_tree *t = made;

		assert_int_equal(pcstock_tree_create(d, &ta, &t), -EINVAL);
		assert_ptr_equal(t, made);
		memcpy(&info, &before, sizeof(info));
		assert_int_equal(pcstock_tree_policy_info(bad[i], &info),
				 -EINVAL);
		assert_memory_equal(&info, &before, sizeof(info));
		assert_null(pcstock_tree_policy_name(bad[i]));
	}
	/* No tree was made: once the one made is gone, nothing holds d. */
	assert_int_equal(pcstock_tree_destroy(made), 0);
	assert_int_equal(pcstock_domain_destroy(d), 0);
}

static bool drain_stub(struct pcstock_group *g)
{
	(void)g;
	return true;
}

static bool room_stub(struct pcstock_group *g)
{
	(void)g;
	return false;
}

static void refill_stub(struct pcstock_group *g, unsigned long nr_pages)
{
	(void)g;
	(void)nr_pages;
}

static unsigned long size_stub(struct pcstock_counter *c, unsigned int batch,
			       unsigned long nr)
{
	(void)c;
	(void)batch;
	return nr;
}

static void test_check_refuses_broken_tables(void **state)
{
	const struct pcs_policy_ops ok = { .name = "ok" };
	const struct pcs_policy_ops bad[] = {
		{ .name = NULL },
		{ .name = "" },
		{ .name = "big", .max_batch = PCSTOCK_STOCK_MAX_BATCH + 1 },
		{ .name = "gb", .stocks = true, .drain_all = drain_stub,
		  .group_batch = true },
		{ .name = "st", .stocks = true },
		{ .name = "dr", .drain_all = drain_stub },
		{ .name = "ex", .exact_at_limit = true },
		{ .name = "mr", .make_room = room_stub },
		{ .name = "ur", .uncharges_refill = true },
		{ .name = "steps", .steps.refill_size = size_stub },
		{ .name = "pc", .per_counter = true, .stocks = true,
		  .drain_all = drain_stub },
		{ PCS_COUNTER_POLICY("pcgb", PCSTOCK_STOCK_DEFAULT, true),
		  .group_batch = true, .refill = refill_stub },
		{ .name = "state", .group_state_size = PCS_GROUP_STATE_MAX + 1 },
	};
	const struct pcs_policy_ops good[] = {
		{ PCS_COUNTER_POLICY("c", PCSTOCK_STOCK_DEFAULT, true),
		  .steps.refill_size = size_stub },
		{ .name = "m7", .stocks = true, .drain_all = drain_stub,
		  .group_batch = true, .refill = refill_stub },
		{ .name = "state", .group_state_size = PCS_GROUP_STATE_MAX },
	};

	(void)state;
	assert_null(pcs_policy_check(&ok));
	assert_non_null(pcs_policy_check(NULL));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_non_null(pcs_policy_check(&bad[i]));
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_null(pcs_policy_check(&good[i]));
}

/* src/policy.h: "only @name is required"; no max_batch is the default. */
static void test_max_batch_left_out_accepts_every_batch(void **state)
{
	const struct pcs_policy_ops ops = { .name = "bare" };

	(void)state;
	assert_int_equal(pcs_policy_max_batch(&ops), PCSTOCK_STOCK_MAX_BATCH);
}

/* A policy's step, counted: the largest refill it allows is 2 pages. */
static unsigned int steps_called;

static unsigned long small_refill(struct pcstock_counter *c,
				  unsigned int batch, unsigned long nr)
{
	(void)c;
	(void)batch;
	steps_called++;
	return nr < 2 ? 2 : nr;
}

static const struct pcs_stock_steps small_steps = {
	.refill_size = small_refill,
};

static void test_one_step_replaced_runs_in_the_stock(void **state)
{
	const struct pcstock_domain_attr attr = { .nr_cpus = 2,
						  .mode = PCSTOCK_CPU_SIM };
	struct pcstock_counter parent, c;
	struct pcstock_domain *d;
	unsigned long charged = 99;

	(void)state;
	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	assert_int_equal(pcstock_cpu_enter(d, 0), 0);
	pcstock_counter_init(&parent, NULL, false);
	pcstock_counter_init(&c, &parent, false);
	assert_int_equal(pcs_counter_alloc_stock_steps(&c, d, 64,
						       PCSTOCK_STOCK_DEFAULT,
						       &small_steps),
			 0);
	/* A miss charges what the step says, 2, not the batch, 64. */
	assert_true(pcstock_counter_try_charge_stock(&c, 1, NULL, &charged));
	assert_int_equal(steps_called, 1);
	assert_int_equal(charged, 2);
	assert_int_equal(pcstock_counter_read(&parent), 2);
	assert_int_equal(pcstock_counter_stock_pages(&c), 1);
	/* The next charge is a hit from the slot (the kind's take). */
	assert_true(pcstock_counter_try_charge_stock(&c, 1, NULL, &charged));
	assert_int_equal(charged, 0);
	assert_int_equal(steps_called, 1);
	/* An uncharge refills the slot (the kind's refill), a drain empties. */
	pcstock_counter_uncharge_stock(&c, 2);
	assert_int_equal(pcstock_counter_stock_pages(&c), 2);
	assert_int_equal(pcstock_counter_drain_stock(&c, 0), 2);
	assert_int_equal(pcstock_counter_read(&parent), 0);
	pcstock_counter_free_stock(&c);
	pcstock_cpu_exit(d);
	pcstock_domain_destroy(d);
}

/*
 * A drain step written only with what stock_steps.h offers a step: the
 * CPU's slot, the pages of a value and the drained count.  A CAS of value
 * - pages keeps the marks, so after the stock's disable the slot stays
 * marked and empty.
 */
static unsigned int own_drains;

static unsigned long own_drain(struct pcstock_counter *c, unsigned int cpu,
			       int seen)
{
	atomic_int *slot = pcs_step_slot_of(c, cpu);
	int v = seen;

	own_drains++;
	while (pcs_step_pages(c, v)) {
		unsigned long nr = pcs_step_pages(c, v);

		if (pcs_cas(slot, &v, v - (int)nr, PCS_ACQUIRE, PCS_RELAXED))
			return pcs_step_drained(c, cpu, nr);
	}
	return 0;
}

static const struct pcs_stock_steps drain_steps = { .drain = own_drain };

static void test_step_helpers_drain_and_keep_marks(void **state)
{
	const struct pcstock_domain_attr attr = { .nr_cpus = 2,
						  .mode = PCSTOCK_CPU_SIM };
	struct pcstock_counter parent, c;
	struct pcstock_stock_stats st;
	struct pcstock_domain *d;

	(void)state;
	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	assert_int_equal(pcstock_cpu_enter(d, 0), 0);
	pcstock_counter_init(&parent, NULL, false);
	pcstock_counter_init(&c, &parent, false);
	assert_int_equal(pcs_counter_alloc_stock_steps(&c, d, 8,
						       PCSTOCK_STOCK_DEFAULT,
						       &drain_steps), 0);
	/* A miss charges the batch and keeps 7 in CPU 0's slot. */
	assert_true(pcstock_counter_try_charge_stock(&c, 1, NULL, NULL));
	assert_int_equal(pcstock_counter_stock_pages(&c), 7);
	assert_int_equal(pcstock_counter_drain_stock(&c, 0), 7);
	assert_int_equal(own_drains, 1);
	assert_int_equal(pcstock_counter_read(&parent), 1);
	pcstock_counter_stock_stats(&c, &st);
	assert_int_equal(st.drains, 1);
	assert_int_equal(st.drained_pages, 7);
	/*
	 * Refill 1 through an uncharge, then disable (the slot marked, its
	 * page kept) and drain it with the step: empty, still marked.
	 */
	pcstock_counter_uncharge_stock(&c, 1);
	assert_int_equal(pcstock_counter_stock_pages(&c), 1);
	pcstock_counter_disable_stock(&c);
	assert_int_equal(pcstock_counter_drain_stock(&c, 0), 1);
	assert_int_equal(own_drains, 2);
	assert_int_equal(pcstock_counter_stock_pages(&c), 0);
	assert_int_equal(pcstock_counter_read(&parent), 0);
	assert_true(pcs_load(pcs_step_slot_of(&c, 0), PCS_RELAXED) < 0);
	pcstock_counter_free_stock(&c);
	pcstock_cpu_exit(d);
	pcstock_domain_destroy(d);
}

/*
 * Every policy's per-group state: as many bytes as its table declares,
 * zeroed, aligned for any type, past the group's name, for the root and
 * every other group; none (NULL) when it declares none.  A policy with a
 * group_init may have written its non-root groups' state there (plain's
 * slot): those are checked zeroed only when it has none.
 */
static void check_group_state(const struct pcs_policy_ops *ops,
			      const struct pcstock_group *g)
{
	bool zeroed = !ops->group_init || !pcstock_group_parent(g);

	const unsigned char *st = pcs_group_state(g);

	if (!ops->group_state_size) {
		assert_null(st);
		return;
	}
	assert_non_null(st);
	assert_int_equal((uintptr_t)st % _Alignof(max_align_t), 0);
	assert_true(st >= (const unsigned char *)g->name + strlen(g->name) + 1);
	for (size_t i = 0; zeroed && i < ops->group_state_size; i++)
		assert_int_equal(st[i], 0);
}

static void test_group_state_as_declared(void **state)
{
	const struct pcstock_domain_attr attr = { .nr_cpus = 2,
						  .mode = PCSTOCK_CPU_SIM };
	struct pcstock_domain *d;

	(void)state;
	assert_int_equal(pcstock_domain_create(&attr, &d), 0);
	for (int p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
		const struct pcs_policy_ops *ops =
			pcs_policy_ops((enum pcstock_tree_policy)p);
		struct pcstock_tree_attr ta = {
			.policy = (enum pcstock_tree_policy)p, .batch = 4 };
		struct pcstock_group *a, *b;
		struct pcstock_tree *t;

		assert_int_equal(pcstock_tree_create(d, &ta, &t), 0);
		check_group_state(ops, pcstock_tree_root(t));
		/* Names of every length around the alignment. */
		assert_int_equal(pcstock_group_create(pcstock_tree_root(t),
						      "a", &a), 0);
		assert_int_equal(pcstock_group_create(a, "bbbbbbbbbbbbbbb",
						      &b), 0);
		check_group_state(ops, a);
		check_group_state(ops, b);
		assert_ptr_not_equal(pcs_group_state(a), pcs_group_state(b) ?
				     pcs_group_state(b) : (void *)1);
		assert_int_equal(pcstock_group_destroy(b), 0);
		pcstock_group_put(b);
		assert_int_equal(pcstock_group_destroy(a), 0);
		pcstock_group_put(a);
		pcstock_tree_destroy(t);
	}
	pcstock_domain_destroy(d);
}

/* @argv[1]: a cmocka test filter (a pattern of the names below). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_tables_pass_their_check),
		cmocka_unit_test(test_values_past_the_last_policy_refused),
		cmocka_unit_test(test_check_refuses_broken_tables),
		cmocka_unit_test(test_max_batch_left_out_accepts_every_batch),
		cmocka_unit_test(test_one_step_replaced_runs_in_the_stock),
		cmocka_unit_test(test_group_state_as_declared),
		cmocka_unit_test(test_step_helpers_drain_and_keep_marks),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
