// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * run.c - the KUnit stand-in's runner (kunit/test.h): runs the program's
 * one suite and prints KTAP, as the kernel's KUnit would; exit 1 if a
 * case failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kunit/test.h"

void kunit_stand_in_fail(struct kunit *test, const char *file, int line,
			 const char *what, unsigned long long left,
			 unsigned long long right)
{
	test->failed = true;
	printf("    # %s: EXPECTATION FAILED at %s:%d\n"
	       "    Expected %s, but\n        left == %llu\n"
	       "        right == %llu\n", test->name, file, line, what, left,
	       right);
}

void *kunit_kcalloc(struct kunit *test, size_t n, size_t size, int gfp)
{
	(void)test;
	(void)gfp;
	return calloc(n, size);
}

int main(void)
{
	const struct kunit_suite *s = kunit_stand_in_suite;
	unsigned int n = 0, i, failed = 0;

	while (s->test_cases[n].run_case)
		n++;
	printf("KTAP version 1\n1..1\n    # Subtest: %s\n    1..%u\n",
	       s->name, n);
	for (i = 0; i < n; i++) {
		struct kunit test = { .name = s->test_cases[i].name };

		if (!setjmp(test.abort))
			s->test_cases[i].run_case(&test);
		printf("    %s %u %s\n", test.failed ? "not ok" : "ok", i + 1,
		       test.name);
		failed += test.failed;
	}
	printf("%s 1 %s\n", failed ? "not ok" : "ok", s->name);
	return failed ? 1 : 0;
}
