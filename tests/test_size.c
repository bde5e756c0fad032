// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_size.c - pcstock_parse_size() and pcstock_format_size(), the strict
 * helpers for configuration files, as tables: every accepted input with
 * its byte count (so the table holds for any PCSTOCK_PAGE_SHIFT), every
 * refused one with its errno.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pcstock/counter.h>

#define PAGE PCSTOCK_PAGE_SIZE
#define PCM PCSTOCK_COUNTER_MAX
#define UNTOUCHED 0x5a5a5a5aUL

struct accept {
	const char *in;
	unsigned int flags;
	unsigned long long bytes;	/* ~0ULL: "max" */
};

static const struct accept accepted[] = {
	{ "0", 0, 0 },
	{ "max", 0, ~0ULL },
	{ "  max\n", 0, ~0ULL },
	{ "4096", 0, 4096 },
	{ "4095", 0, 4095 },		/* floored to 0 pages */
	{ "8191", 0, 8191 },
	{ "010", 0, 10 },		/* decimal, not octal */
	{ "1k", 0, 1024 },
	{ "4K", 0, 4096 },
	{ "512M", 0, 512ULL << 20 },
	{ "512m\n", 0, 512ULL << 20 },
	{ "\t 2G ", 0, 2ULL << 30 },
	{ "1T", 0, 1ULL << 40 },
	{ "1P", 0, 1ULL << 50 },
	{ "1E", 0, 1ULL << 60 },
	{ "64K", PCSTOCK_PARSE_PAGE_ALIGNED, 64ULL << 10 },
	{ "0", PCSTOCK_PARSE_PAGE_ALIGNED, 0 },
	{ "max", PCSTOCK_PARSE_PAGE_ALIGNED, ~0ULL },
};

struct refuse {
	const char *in;
	unsigned int flags;
	int err;
};

static const struct refuse refused[] = {
	{ "", 0, -EINVAL },			/* memparse: 0 */
	{ " \n", 0, -EINVAL },
	{ "K", 0, -EINVAL },			/* memparse: 0 */
	{ "12x", 0, -EINVAL },
	{ "12 K", 0, -EINVAL },
	{ "1KB", 0, -EINVAL },
	{ "1K1", 0, -EINVAL },
	{ "1.5G", 0, -EINVAL },
	{ "-1", 0, -EINVAL },
	{ "+1", 0, -EINVAL },
	{ "0x1000", 0, -EINVAL },		/* memparse: 4096 */
	{ "MAX", 0, -EINVAL },
	{ "max1", 0, -EINVAL },
	{ "1 2", 0, -EINVAL },
	{ "16E", 0, -ERANGE },			/* memparse: wraps to 0 */
	{ "18446744073709551616", 0, -ERANGE },	/* memparse: wraps to 0 */
	{ "99999999999999999999999", 0, -ERANGE },
	{ "8E", 0, -ERANGE },			/* 2^63 bytes > max pages */
	{ "4095", PCSTOCK_PARSE_PAGE_ALIGNED, -EINVAL },
	{ "4097", PCSTOCK_PARSE_PAGE_ALIGNED, -EINVAL },
	{ "1k", PCSTOCK_PARSE_PAGE_ALIGNED, -EINVAL },
	{ "4096", 0x2, -EINVAL },		/* unknown flag */
};

static void test_parse_size_accepts(void **state)
{
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
		const struct accept *a = &accepted[i];
		unsigned long got = UNTOUCHED;
		unsigned long want = a->bytes == ~0ULL ?
					     PCM :
					     (unsigned long)(a->bytes / PAGE);

		print_message("accept \"%s\" flags %u\n", a->in, a->flags);
		assert_int_equal(pcstock_parse_size(a->in, a->flags, &got), 0);
		assert_int_equal(got, want);
	}
}

static void test_parse_size_refuses(void **state)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const struct refuse *r = &refused[i];
		unsigned long got = UNTOUCHED;

		print_message("refuse \"%s\" flags %u\n", r->in, r->flags);
		assert_int_equal(pcstock_parse_size(r->in, r->flags, &got),
				 r->err);
		assert_int_equal(got, UNTOUCHED);
	}
}

/* The largest size that fits and the first that does not. */
static void test_parse_size_range_edge(void **state)
{
	char buf[32];
	unsigned long got = 0;

	snprintf(buf, sizeof(buf), "%llu",
		 (unsigned long long)PCM * PAGE + PAGE - 1);
	assert_int_equal(pcstock_parse_size(buf, 0, &got), 0);
	assert_int_equal(got, PCM);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(PCM + 1) * PAGE);
	assert_int_equal(pcstock_parse_size(buf, 0, &got), -ERANGE);
	assert_int_equal(got, PCM);
}

static void test_parse_size_null(void **state)
{
	unsigned long got = UNTOUCHED;

	assert_int_equal(pcstock_parse_size(NULL, 0, &got), -EINVAL);
	assert_int_equal(pcstock_parse_size("1", 0, NULL), -EINVAL);
	assert_int_equal(got, UNTOUCHED);
}

struct fmt {
	unsigned long nr_pages;
	const char *out;	/* NULL: the byte count */
};

static void test_format_size_table(void **state)
{
	static const struct fmt table[] = {
		{ 0, "0" }, { 1, NULL }, { 12345, NULL },
		{ PCM - 1, NULL }, { PCM, "max" }, { PCM + 1, "max" },
		{ ~0UL, "max" },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		char want[32], got[32];
		unsigned long back = UNTOUCHED;

		if (table[i].out)
			snprintf(want, sizeof(want), "%s", table[i].out);
		else
			snprintf(want, sizeof(want), "%lu",
				 table[i].nr_pages * PAGE);
		assert_int_equal(pcstock_format_size(table[i].nr_pages, got,
						     sizeof(got)),
				 strlen(want));
		assert_string_equal(got, want);
		/* What is printed parses back (strictly, page-aligned). */
		assert_int_equal(pcstock_parse_size(got,
						    PCSTOCK_PARSE_PAGE_ALIGNED,
						    &back), 0);
		assert_int_equal(back, table[i].nr_pages < PCM ?
					       table[i].nr_pages : PCM);
	}
}

/* snprintf semantics: the full length, truncated text, NULL with 0. */
static void test_format_size_truncates(void **state)
{
	char buf[4] = "xxx";

	assert_int_equal(pcstock_format_size(PCM, NULL, 0), 3);
	assert_int_equal(pcstock_format_size(PCM, buf, 3), 3);
	assert_string_equal(buf, "ma");
	assert_int_equal(pcstock_format_size(3, buf, sizeof(buf)),
			 snprintf(NULL, 0, "%lu", 3 * PAGE));
	assert_int_equal(strlen(buf), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size_accepts),
		cmocka_unit_test(test_parse_size_refuses),
		cmocka_unit_test(test_parse_size_range_edge),
		cmocka_unit_test(test_parse_size_null),
		cmocka_unit_test(test_format_size_table),
		cmocka_unit_test(test_format_size_truncates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
