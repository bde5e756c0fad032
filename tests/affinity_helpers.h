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

/* Bind the calling thread to OS CPU @os (pin_here()'s *@old undoes it). */
static inline void pin_to(int os)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(os, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
}

/*
 * The first two OS CPUs of *@all, the thread's affinity (saved for
 * unpin()), in *@a and *@b: skips the case when it may run on one only
 * (no move to make).
 */
static inline void two_cpus_or_skip(cpu_set_t *all, int *a, int *b)
{
	*a = *b = -1;
	assert_int_equal(sched_getaffinity(0, sizeof(*all), all), 0);
	for (int os = 0; os < CPU_SETSIZE && *b < 0; os++) {
		if (!CPU_ISSET(os, all))
			continue;
		if (*a < 0)
			*a = os;
		else
			*b = os;
	}
	if (*b < 0)
		skip();
}

#endif /* PCSTOCK_TESTS_AFFINITY_HELPERS_H */
