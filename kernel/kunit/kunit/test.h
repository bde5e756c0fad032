/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kunit/test.h - a small stand-in for the kernel's KUnit, in our words:
 * just what pcstock-kcheck's KUnit cases use (kernel/repro.c), so that a
 * case it writes compiles and runs here against the shim and a staged
 * tree, as it would in a kernel tree's KUnit harness.  Not the kernel's
 * API in full: one suite per program, expectations on integers,
 * kunit_kcalloc() without freeing.
 */
#ifndef PCSTOCK_KUNIT_TEST_H
#define PCSTOCK_KUNIT_TEST_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>

#ifndef GFP_KERNEL
#define GFP_KERNEL 0
#endif

struct kunit {
	const char *name;
	bool failed;
	jmp_buf abort;		/* a failed assertion ends the case */
};

struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
};

struct kunit_suite {
	const char *name;
	struct kunit_case *test_cases;
};

#define KUNIT_CASE(fn) { .run_case = fn, .name = #fn }

/* The one suite of the program (kernel/kunit/run.c runs it). */
extern struct kunit_suite *const kunit_stand_in_suite;
#define kunit_test_suite(s) struct kunit_suite *const kunit_stand_in_suite = &(s)

void kunit_stand_in_fail(struct kunit *test, const char *file, int line,
			 const char *what, unsigned long long left,
			 unsigned long long right);
void *kunit_kcalloc(struct kunit *test, size_t n, size_t size, int gfp);

#define KUNIT_EXPECT_EQ(test, left, right)                                   \
	do {                                                                 \
		unsigned long long l_ = (unsigned long long)(left);          \
		unsigned long long r_ = (unsigned long long)(right);         \
		if (l_ != r_)                                                \
			kunit_stand_in_fail(test, __FILE__, __LINE__,        \
					    #left " == " #right, l_, r_);    \
	} while (0)

#define KUNIT_ASSERT_NOT_NULL(test, ptr)                                     \
	do {                                                                 \
		if (!(ptr)) {                                                \
			kunit_stand_in_fail(test, __FILE__, __LINE__,        \
					    #ptr " != NULL", 0, 0);          \
			longjmp((test)->abort, 1);                           \
		}                                                            \
	} while (0)

#endif /* PCSTOCK_KUNIT_TEST_H */
