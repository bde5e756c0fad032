/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stock_fixture.h - the fixture of test_stock (test_stock.c,
 * test_stock_policies.c; include after <cmocka.h>): a 3-level tree
 * root <- mid <- leaf with a stock of BATCH pages on the leaf, on a SIM
 * domain of NR_CPUS CPUs, the main thread CPU 0 unless a case moves it;
 * each case runs once per stock policy, named "case/policy".
 */
#ifndef PCSTOCK_TESTS_STOCK_FIXTURE_H
#define PCSTOCK_TESTS_STOCK_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include <pcstock/counter.h>
#include <pcstock/cpu.h>
#include <pcstock/percpu.h>
#include <pcstock/stock.h>
/* The slot's encoding (the disable mark): the library's, not API. */
#define PCSTOCK_INLINE_TYPES_ONLY_
#include <pcstock/stock_inline.h>
#undef PCSTOCK_INLINE_TYPES_ONLY_

#include "atomic.h"
#include "internal.h"

/* test_stock_inline (tests/stock.cmake) must run the inline paths. */
#if defined(PCSTOCK_INLINE) && (!defined(pcstock_counter_try_charge_stock) || \
				!defined(pcstock_counter_uncharge_stock))
#error "PCSTOCK_INLINE did not select the inline fast paths"
#endif

#define NR_CPUS 4U
#define BATCH 16U
/* EXACT's own mark: the library's PCS_EXACT_MARK (src/stock_hit.h). */
#define EXACT_MARK (PCSTOCK_STOCK_MARK_ / 2)

struct fixture {
	enum pcstock_stock_policy policy;
	struct pcstock_domain *d;
	struct pcstock_counter root, mid, leaf;
};

extern struct fixture fx;
extern enum pcstock_stock_policy policy_default, policy_v4, policy_exact;

/* @state: the policy.  No case may leave an underflow behind. */
int setup(void **state);
/* The same with the leaf's stock of the largest batch. */
int setup_max_batch(void **state);
int teardown(void **state);

/* Run a case once per policy, named after each. */
#define EACH(f)                                                              \
	{ #f "/default", f, setup, teardown, &policy_default },              \
	{ #f "/v4", f, setup, teardown, &policy_v4 },                        \
	{ #f "/exact", f, setup, teardown, &policy_exact }
#define EXACT_ONLY(f) { #f "/exact", f, setup, teardown, &policy_exact }
#define V4_ONLY(f) { #f "/v4", f, setup, teardown, &policy_v4 }
/* DEFAULT and V4 only, set up by @s. */
#define DEFAULT_AND_V4(f, s)                                                 \
	{ #f "/default", f, s, teardown, &policy_default },                  \
	{ #f "/v4", f, s, teardown, &policy_v4 }

bool is_v4(void);
/* EXACT: stops stocking within nr_cpus × batch of a max. */
bool is_exact(void);
atomic_int *slot_ptr(const struct pcstock_counter *c, unsigned int cpu);
/* The leaf's slot on @cpu, as stored (marks included). */
int slot(unsigned int cpu);
void move_to(unsigned int cpu);
void assert_usage(unsigned long leaf, unsigned long mid, unsigned long root);
/* Charge through the stock, expecting success and @expect hierarchy pages. */
void charge_ok(unsigned long n, unsigned long expect);
/*
 * Each CPU in turn charges one page through the leaf's empty slot: a batch
 * charged, BATCH - 1 pages parked on every CPU.  Ends on the last CPU.
 */
void park_on_every_cpu(void);

/*
 * watch() - count the operations on the objects in [@obj, @obj + @size),
 * by kind, in watched[], from now until pcstock_explore_hook is reset
 */
extern unsigned int watched[PCS_OP_NR];
void watch(const void *obj, size_t size);
unsigned int watched_total(void);

/*
 * run_stock_policy_cases() - the cases of test_stock_policies.c, as a
 * group of their own after test_stock.c's (main()'s filter applies).
 * Return: the number of cases failed.
 */
int run_stock_policy_cases(void);

#endif /* PCSTOCK_TESTS_STOCK_FIXTURE_H */
