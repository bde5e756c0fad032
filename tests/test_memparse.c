// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_memparse.c - pcstock_counter_memparse() against the kernel's
 * page_counter_memparse(): the table of docs/conformance.md, "memparse"
 * (4 KiB pages, keyword "max"), one case per input.
 *
 * Each accepted input is stated twice: as the byte count the grammar gives
 * (so the case holds for any PCSTOCK_PAGE_SHIFT) and, for 4 KiB pages, as
 * the table's page count.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include <pcstock/counter.h>

#define PCM PCSTOCK_COUNTER_MAX

/* Poison, to see that failures leave the result alone. */
#define UNTOUCHED 0x5a5a5a5aUL

static unsigned long pages_of(unsigned long long bytes)
{
	unsigned long long pages = bytes / PCSTOCK_PAGE_SIZE;

	return pages < PCM ? (unsigned long)pages : PCM;
}

static void check_kw(const char *in, const char *kw, unsigned long long bytes,
		     unsigned long table_pages)
{
	unsigned long got = UNTOUCHED;

	assert_int_equal(pcstock_counter_memparse(in, kw, &got), 0);
	assert_int_equal(got, pages_of(bytes));
	if (PCSTOCK_PAGE_SHIFT == 12)
		assert_int_equal(got, table_pages);
}

static void check(const char *in, unsigned long long bytes,
		  unsigned long table_pages)
{
	check_kw(in, "max", bytes, table_pages);
}

static void check_einval(const char *in)
{
	unsigned long got = UNTOUCHED;

	assert_int_equal(pcstock_counter_memparse(in, "max", &got), -EINVAL);
	assert_int_equal(got, UNTOUCHED);
}

static void check_keyword(const char *in, const char *kw)
{
	unsigned long got = 0;

	assert_int_equal(pcstock_counter_memparse(in, kw, &got), 0);
	assert_int_equal(got, PCM);
}

#define E60 (1ULL << 60)

/* Accepted rows. */
static void test_memparse_max_keyword(void **state)
{
	check_keyword("max", "max");
}

static void test_memparse_empty_is_zero(void **state)
{
	check("", 0, 0);
}

static void test_memparse_4095_floors_to_zero(void **state)
{
	check("4095", 4095, 0);
}

static void test_memparse_4096_one_page(void **state)
{
	check("4096", 4096, 1);
}

static void test_memparse_8191_one_page(void **state)
{
	check("8191", 8191, 1);
}

static void test_memparse_1k_zero(void **state)
{
	check("1k", 1024, 0);
}

static void test_memparse_4K_one_page(void **state)
{
	check("4K", 4096, 1);
}

static void test_memparse_4k_one_page(void **state)
{
	check("4k", 4096, 1);
}

static void test_memparse_1M(void **state)
{
	check("1M", 1ULL << 20, 256);
}

static void test_memparse_1m(void **state)
{
	check("1m", 1ULL << 20, 256);
}

static void test_memparse_100M(void **state)
{
	check("100M", 100ULL << 20, 25600);
}

static void test_memparse_1G(void **state)
{
	check("1G", 1ULL << 30, 262144);
}

static void test_memparse_1T(void **state)
{
	check("1T", 1ULL << 40, 268435456);
}

/* P (2^50) and p: a shift of 50, between T's 40 and E's 60. */
static void test_memparse_1P(void **state)
{
	check("1P", 1ULL << 50, 274877906944UL);
	check("3p", 3ULL << 50, 3 * 274877906944UL);
}

static void test_memparse_1E(void **state)
{
	check("1E", E60, 281474976710656UL);
}

static void test_memparse_8E_capped_at_max(void **state)
{
	check("8E", 8 * E60, PCM);
}

static void test_memparse_16E_wraps_to_zero(void **state)
{
	check("16E", 0, 0);
}

static void test_memparse_long_max_capped(void **state)
{
	check("9223372036854775807", 9223372036854775807ULL, PCM);
}

static void test_memparse_u64_max_capped(void **state)
{
	check("18446744073709551615", 18446744073709551615ULL, PCM);
}

static void test_memparse_2_pow_64_wraps_to_zero(void **state)
{
	check("18446744073709551616", 0, 0);
}

static void test_memparse_hex_lower_prefix(void **state)
{
	check("0x1000", 4096, 1);
}

static void test_memparse_hex_upper_prefix(void **state)
{
	check("0X1000", 4096, 1);
}

static void test_memparse_octal(void **state)
{
	check("010000", 4096, 1);
}

static void test_memparse_bare_m_is_zero(void **state)
{
	check("m", 0, 0);
}

static void test_memparse_bare_k_is_zero(void **state)
{
	check("k", 0, 0);
}

static void test_memparse_minus_one_keyword_v1(void **state)
{
	unsigned long got = UNTOUCHED;

	check_keyword("-1", "-1");
	/* With the v1 keyword, "max" is an ordinary (malformed) number. */
	assert_int_equal(pcstock_counter_memparse("max", "-1", &got), -EINVAL);
	assert_int_equal(got, UNTOUCHED);
	check_kw("4096", "-1", 4096, 1);
}

/* Rejected rows. */
static void test_memparse_rejects_0x_alone(void **state)
{
	check_einval("0x");
}

static void test_memparse_rejects_08(void **state)
{
	check_einval("08");
}

static void test_memparse_rejects_1KB(void **state)
{
	check_einval("1KB");
}

static void test_memparse_rejects_leading_space(void **state)
{
	check_einval(" 1M");
}

static void test_memparse_rejects_trailing_space(void **state)
{
	check_einval("1M ");
}

static void test_memparse_rejects_minus_one(void **state)
{
	check_einval("-1");
}

static void test_memparse_rejects_plus_sign(void **state)
{
	check_einval("+4096");
}

static void test_memparse_rejects_MAX(void **state)
{
	check_einval("MAX");
}

static void test_memparse_rejects_max_newline(void **state)
{
	check_einval("max\n");
}

static void test_memparse_rejects_fraction(void **state)
{
	check_einval("1.5G");
}

static void test_memparse_null_arguments(void **state)
{
	unsigned long got = UNTOUCHED;

	assert_int_equal(pcstock_counter_memparse(NULL, "max", &got), -EINVAL);
	assert_int_equal(pcstock_counter_memparse("1M", NULL, &got), -EINVAL);
	assert_int_equal(got, UNTOUCHED);
	assert_int_equal(pcstock_counter_memparse("1M", "max", NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memparse_max_keyword),
		cmocka_unit_test(test_memparse_empty_is_zero),
		cmocka_unit_test(test_memparse_4095_floors_to_zero),
		cmocka_unit_test(test_memparse_4096_one_page),
		cmocka_unit_test(test_memparse_8191_one_page),
		cmocka_unit_test(test_memparse_1k_zero),
		cmocka_unit_test(test_memparse_4K_one_page),
		cmocka_unit_test(test_memparse_4k_one_page),
		cmocka_unit_test(test_memparse_1M),
		cmocka_unit_test(test_memparse_1m),
		cmocka_unit_test(test_memparse_100M),
		cmocka_unit_test(test_memparse_1G),
		cmocka_unit_test(test_memparse_1T),
		cmocka_unit_test(test_memparse_1P),
		cmocka_unit_test(test_memparse_1E),
		cmocka_unit_test(test_memparse_8E_capped_at_max),
		cmocka_unit_test(test_memparse_16E_wraps_to_zero),
		cmocka_unit_test(test_memparse_long_max_capped),
		cmocka_unit_test(test_memparse_u64_max_capped),
		cmocka_unit_test(test_memparse_2_pow_64_wraps_to_zero),
		cmocka_unit_test(test_memparse_hex_lower_prefix),
		cmocka_unit_test(test_memparse_hex_upper_prefix),
		cmocka_unit_test(test_memparse_octal),
		cmocka_unit_test(test_memparse_bare_m_is_zero),
		cmocka_unit_test(test_memparse_bare_k_is_zero),
		cmocka_unit_test(test_memparse_minus_one_keyword_v1),
		cmocka_unit_test(test_memparse_rejects_0x_alone),
		cmocka_unit_test(test_memparse_rejects_08),
		cmocka_unit_test(test_memparse_rejects_1KB),
		cmocka_unit_test(test_memparse_rejects_leading_space),
		cmocka_unit_test(test_memparse_rejects_trailing_space),
		cmocka_unit_test(test_memparse_rejects_minus_one),
		cmocka_unit_test(test_memparse_rejects_plus_sign),
		cmocka_unit_test(test_memparse_rejects_MAX),
		cmocka_unit_test(test_memparse_rejects_max_newline),
		cmocka_unit_test(test_memparse_rejects_fraction),
		cmocka_unit_test(test_memparse_null_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
