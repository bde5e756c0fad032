// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stock_fixture.c - test_stock's fixture (stock_fixture.h): the tree, its
 * setup and teardown, and the helpers every case uses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "stock_fixture.h"

struct fixture fx;
enum pcstock_stock_policy policy_default = PCSTOCK_STOCK_DEFAULT;
enum pcstock_stock_policy policy_v4 = PCSTOCK_STOCK_V4;
enum pcstock_stock_policy policy_exact = PCSTOCK_STOCK_EXACT;

static void hooks_off(void)
{
	pcstock_explore_hook = NULL;
	pcstock_fault_hook = NULL;
}

static int setup_batch(void **state, unsigned int batch)
{
	struct pcstock_domain_attr attr = { NR_CPUS, PCSTOCK_CPU_SIM, NULL };

	hooks_off();
	pcstock_warn_reset();
	fx.policy = *(enum pcstock_stock_policy *)*state;
	if (pcstock_domain_create(&attr, &fx.d))
		return -1;
	pcstock_counter_init(&fx.root, NULL, false);
	pcstock_counter_init(&fx.mid, &fx.root, false);
	pcstock_counter_init(&fx.leaf, &fx.mid, false);
	pcstock_counter_set_track_failcnt(&fx.leaf, true);
	if (pcstock_counter_alloc_stock(&fx.leaf, fx.d, batch, fx.policy) ||
	    pcstock_cpu_enter(fx.d, 0))
		return -1;
	*state = &fx;
	return 0;
}

int setup(void **state)
{
	return setup_batch(state, BATCH);
}

int setup_max_batch(void **state)
{
	return setup_batch(state, PCSTOCK_STOCK_MAX_BATCH);
}

int teardown(void **state)
{
	(void)state;
	hooks_off();
	pcstock_cpu_exit(fx.d);
	pcstock_counter_free_stock(&fx.leaf);
	pcstock_domain_destroy(fx.d);
	/* No case may leave an underflow behind. */
	return pcstock_warn_count() ? -1 : 0;
}

bool is_v4(void)
{
	return fx.policy == PCSTOCK_STOCK_V4;
}

bool is_exact(void)
{
	return fx.policy == PCSTOCK_STOCK_EXACT;
}

atomic_int *slot_ptr(const struct pcstock_counter *c, unsigned int cpu)
{
	return pcstock_percpu_ptr(fx.d, c->stock_slots, cpu);
}

int slot(unsigned int cpu)
{
	return atomic_load(slot_ptr(&fx.leaf, cpu));
}

void move_to(unsigned int cpu)
{
	assert_int_equal(pcstock_cpu_exit(fx.d), 0);
	assert_int_equal(pcstock_cpu_enter(fx.d, cpu), 0);
}

void assert_usage(unsigned long leaf, unsigned long mid, unsigned long root)
{
	assert_int_equal(pcstock_counter_read(&fx.leaf), leaf);
	assert_int_equal(pcstock_counter_read(&fx.mid), mid);
	assert_int_equal(pcstock_counter_read(&fx.root), root);
}

void charge_ok(unsigned long n, unsigned long expect)
{
	unsigned long charged = ~0UL;

	assert_true(pcstock_counter_try_charge_stock(&fx.leaf, n, NULL,
						     &charged));
	assert_int_equal(charged, expect);
}

void park_on_every_cpu(void)
{
	for (unsigned int cpu = 0; cpu < NR_CPUS; cpu++) {
		move_to(cpu);
		charge_ok(1, BATCH);
	}
}

/* ---- explore-hook helpers ------------------------------------------------ */

/* Operations seen on the objects in [lo, hi), by kind. */
static const char *watch_lo, *watch_hi;
unsigned int watched[PCS_OP_NR];

static void watch_hook(enum pcs_atomic_op op, const void *obj)
{
	const char *p = obj;

	if (p >= watch_lo && p < watch_hi)
		watched[op]++;
}

void watch(const void *obj, size_t size)
{
	memset(watched, 0, sizeof(watched));
	watch_lo = obj;
	watch_hi = watch_lo + size;
	pcstock_explore_hook = watch_hook;
}

unsigned int watched_total(void)
{
	unsigned int op, n = 0;

	for (op = 0; op < PCS_OP_NR; op++)
		n += watched[op];
	return n;
}
