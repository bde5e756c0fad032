/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * counter_fixture.h - the fixture of test_counter (test_counter.c,
 * test_counter_ops.c; include after <cmocka.h>): a recording warning
 * handler, the R <- A <- L chain most cases use, and the switches that
 * leave out what is pcstock's alone when the same files run against a
 * kernel tree's mm/page_counter.c (kernel_conformance, PCSTOCK_TEST_KERNEL;
 * see test_counter.c).
 */
#ifndef PCSTOCK_TESTS_COUNTER_FIXTURE_H
#define PCSTOCK_TESTS_COUNTER_FIXTURE_H

#include <pcstock/counter.h>

#include "atomic.h"

#ifdef PCSTOCK_TEST_KERNEL
#include "kpc_tree.h"
#define OWN_ACCESSES 0
#define FAILCNT_FLAG KPC_TREE_HAS_TRACK_FAILCNT
#define CALC_PROTECTION KPC_TREE_HAS_CALC_PROTECTION
#define PROTECTION_CAP KPC_TREE_HAS_PROTECTION_CAP
#define PROTECTION_FLAG KPC_TREE_HAS_PROTECTION_SUPPORT
#define LOCAL_WATERMARK KPC_TREE_HAS_LOCAL_WATERMARK
#else
#define OWN_ACCESSES 1
#define FAILCNT_FLAG 1
#define CALC_PROTECTION 1
#define PROTECTION_CAP 1
#define PROTECTION_FLAG 1
#define LOCAL_WATERMARK 1
#endif

/* Skip a test that is pcstock's alone (test_counter.c) when @cond is false. */
#define ONLY_IF(cond)                                                        \
	do {                                                                 \
		if (!(cond))                                                 \
			skip();                                              \
	} while (0)

#ifdef PCSTOCK_TEST_KERNEL
#define DELIBERATE_DIFFERENCE 1
#else
#define DELIBERATE_DIFFERENCE 0
#endif

struct warn_log {
	unsigned int calls;
	const char *what;
	const struct pcstock_counter *c;
	long value;
	unsigned long nr_pages;
};

/* What the warning handler saw since the case's setup. */
extern struct warn_log warns;

int setup(void **state);
int teardown(void **state);

/* R <- A <- L, every counter with protection support, limits unset. */
struct chain {
	struct pcstock_counter r, a, l;
};

void chain_init(struct chain *t);
void assert_usage3(const struct chain *t, unsigned long r, unsigned long a,
		   unsigned long l);
/* The global watermark, and the local one where the tree has it. */
void assert_peaks(const struct pcstock_counter *c, unsigned long global,
		  unsigned long local);

/*
 * run_counter_ops_cases() - the cases of test_counter_ops.c, as a group of
 * their own after test_counter.c's.  Return: the number of cases failed.
 */
int run_counter_ops_cases(void);

#endif /* PCSTOCK_TESTS_COUNTER_FIXTURE_H */
