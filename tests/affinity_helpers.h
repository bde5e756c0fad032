/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinity_helpers.h - keep a test on one OS CPU (include after <cmocka.h>,
 * with _GNU_SOURCE defined before the first system header).  On an RSEQ
 * domain, the one pcstock_domain_create(NULL) gives, every call then sees
 * the same slot.
 */
#ifndef PCSTOCK_TESTS_AFFINITY_HELPERS_H
#define PCSTOCK_TESTS_AFFINITY_HELPERS_H

#include <sched.h>

/* Bind the calling thread to the OS CPU it runs on; *@old for unpin(). */
static inline void pin_here(cpu_set_t *old)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	assert_true(cpu >= 0);
	assert_int_equal(sched_getaffinity(0, sizeof(*old), old), 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
}

/* Give the thread back the affinity pin_here() saved in *@old. */
static inline void unpin(const cpu_set_t *old)
{
	assert_int_equal(sched_setaffinity(0, sizeof(*old), old), 0);
}

#endif /* PCSTOCK_TESTS_AFFINITY_HELPERS_H */
