// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_counter.c - the counter layer against the kernel's mm/page_counter.c,
 * not against src/counter.c: every expected number here was worked out by
 * hand from the kernel's rules, and the cases pass over the kernel's own
 * code (below).  The case ids (T1, P1, E1, ...) are those of
 * docs/conformance.md, which states each case and its numbers.
 *
 * The same program, built as kernel_conformance (kernel/CMakeLists.txt,
 * PCSTOCK_TEST_KERNEL), runs against a kernel tree's own mm/page_counter.c
 * through kernel/adapter.c: a test that fails there is a wrong test.  Two
 * things are pcstock's alone and are left out there (test_counter_ops.c
 * has both): checks of which atomic accesses pcstock makes to its own
 * fields (OWN_ACCESSES; the kernel's fields sit elsewhere and its plain
 * accesses are not hooked), and the deliberate differences its header
 * lists.  A case is skipped on a tree that lacks what it tests
 * (counter_fixture.h's switches): a tree before v6.15 has no
 * track_failcnt flag and counts every failure (FAILCNT_FLAG 0), one before
 * 6.12.118 computes E5 to E7 the old way (PROTECTION_CAP 0).
 *
 * The cases are in two files of one program, around counter_fixture.c:
 * this one, docs/conformance.md's catalogue and the selftest tree's
 * numbers; and test_counter_ops.c, each operation's own edges (init,
 * warnings, try_charge, set_max, the setters, misuse, the kernel's
 * spellings), some of them run inside an operation, between two of its
 * atomic steps, through the test library's schedule-explorer hook.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "counter_fixture.h"

/* ---- T cases (docs/conformance.md) ---- */

static void t1_run(struct chain *t, struct pcstock_counter **fail)
{
	chain_init(t);
	assert_int_equal(pcstock_counter_set_max(&t->a, 10), 0);
	pcstock_counter_set_track_failcnt(&t->l, true);

	assert_true(pcstock_counter_try_charge(&t->l, 4, fail));
	assert_usage3(t, 4, 4, 4);
	assert_peaks(&t->r, 4, 4);
	assert_peaks(&t->a, 4, 4);
	assert_peaks(&t->l, 4, 4);

	*fail = NULL;
	assert_false(pcstock_counter_try_charge(&t->l, 7, fail));
}

static void test_T1_failing_ancestor_speculative_watermark(void **state)
{
	struct pcstock_counter *fail;
	struct chain t;

	t1_run(&t, &fail);
	assert_ptr_equal(fail, &t.a);
	assert_usage3(&t, 4, 4, 4);
	assert_int_equal(pcstock_counter_failcnt(&t.a), 1);
	assert_int_equal(pcstock_counter_failcnt(&t.l), 0);
	/* L saw the speculative 11 before A refused it. */
	assert_peaks(&t.l, 11, 11);
	assert_peaks(&t.a, 4, 4);
	assert_peaks(&t.r, 4, 4);
	assert_int_equal(pcstock_counter_failcnt(&t.r), 0);
	assert_int_equal(pcstock_warn_count(), 0);
}

static void test_T2_forced_overcharge_and_zero_page_try(void **state)
{
	struct pcstock_counter *fail;
	struct chain t;

	t1_run(&t, &fail);
	fail = NULL;
	assert_true(pcstock_counter_try_charge(&t.l, 0, &fail));
	assert_null(fail);

	pcstock_counter_charge(&t.l, 8);
	assert_usage3(&t, 12, 12, 12);
	assert_peaks(&t.r, 12, 12);
	assert_peaks(&t.a, 12, 12);
	assert_peaks(&t.l, 12, 12);

	assert_false(pcstock_counter_try_charge(&t.l, 0, &fail));
	assert_ptr_equal(fail, &t.a);
	assert_int_equal(pcstock_counter_failcnt(&t.a), 2);
	assert_usage3(&t, 12, 12, 12);
}

static void test_T3_set_max_boundary(void **state)
{
	struct pcstock_counter *fail;
	struct chain t;

	t1_run(&t, &fail);
	pcstock_counter_charge(&t.l, 8);
	assert_int_equal(pcstock_counter_set_max(&t.a, 11), -EBUSY);
	assert_int_equal(pcstock_counter_max(&t.a), 10);
	assert_int_equal(pcstock_counter_set_max(&t.a, 12), 0);
	assert_int_equal(pcstock_counter_max(&t.a), 12);
	/* At the limit, a zero-page attempt now passes again. */
	assert_true(pcstock_counter_try_charge(&t.l, 0, &fail));
}

static void test_T4_underflow_clamp_is_per_level(void **state)
{
	struct pcstock_counter x, y;

	pcstock_counter_init(&x, NULL, true);
	pcstock_counter_init(&y, &x, true);
	pcstock_counter_charge(&y, 3);
	pcstock_counter_cancel(&y, 5);
	assert_int_equal(pcstock_counter_read(&y), 0);
	assert_int_equal(pcstock_counter_read(&x), 3);
	assert_int_equal(pcstock_warn_count(), 1);
	assert_int_equal(warns.calls, 1);

	/* The uncharge variant, on fresh counters. */
	pcstock_warn_reset();
	warns.calls = 0;
	pcstock_counter_init(&x, NULL, true);
	pcstock_counter_init(&y, &x, true);
	pcstock_counter_charge(&y, 3);
	pcstock_counter_uncharge(&y, 5);
	assert_int_equal(pcstock_counter_read(&y), 0);
	assert_int_equal(pcstock_counter_read(&x), 0);
	assert_int_equal(pcstock_warn_count(), 2);
	assert_int_equal(warns.calls, 1);
}

static void test_T5_failcnt_flag_is_the_leafs(void **state)
{
	struct pcstock_counter *fail;
	struct chain t;

	ONLY_IF(FAILCNT_FLAG);

	chain_init(&t);
	assert_int_equal(pcstock_counter_set_max(&t.a, 1), 0);
	pcstock_counter_set_track_failcnt(&t.l, true);
	pcstock_counter_set_track_failcnt(&t.a, false);
	assert_false(pcstock_counter_try_charge(&t.l, 2, &fail));
	assert_ptr_equal(fail, &t.a);
	assert_int_equal(pcstock_counter_failcnt(&t.a), 1);
	assert_int_equal(pcstock_counter_failcnt(&t.l), 0);

	pcstock_counter_set_track_failcnt(&t.l, false);
	pcstock_counter_set_track_failcnt(&t.a, true);
	assert_false(pcstock_counter_try_charge(&t.l, 2, &fail));
	assert_ptr_equal(fail, &t.a);
	assert_int_equal(pcstock_counter_failcnt(&t.a), 1);
	assert_int_equal(pcstock_counter_failcnt(&t.l), 0);
	assert_int_equal(pcstock_counter_failcnt(&t.r), 0);
	assert_usage3(&t, 0, 0, 0);
}

static void test_T6_equality_succeeds(void **state)
{
	struct pcstock_counter *fail = NULL;
	struct pcstock_counter c;

	pcstock_counter_init(&c, NULL, true);
	assert_int_equal(pcstock_counter_set_max(&c, 10), 0);
	pcstock_counter_charge(&c, 6);
	assert_true(pcstock_counter_try_charge(&c, 4, &fail));
	assert_int_equal(pcstock_counter_read(&c), 10);
	assert_false(pcstock_counter_try_charge(&c, 1, &fail));
	assert_ptr_equal(fail, &c);
	assert_int_equal(pcstock_counter_read(&c), 10);
}

/* ---- P cases ---- */

static void test_P1_protection_bookkeeping(void **state)
{
	struct pcstock_counter r, p, c1, c2;

	pcstock_counter_init(&r, NULL, true);
	pcstock_counter_init(&p, &r, true);
	pcstock_counter_init(&c1, &p, true);
	pcstock_counter_init(&c2, &p, true);
	pcstock_counter_set_min(&c1, 75);
	pcstock_counter_set_min(&c2, 25);
	pcstock_counter_charge(&c1, 50);
	pcstock_counter_charge(&c2, 50);
	assert_int_equal(pcstock_counter_min_usage(&c1), 50);
	assert_int_equal(pcstock_counter_min_usage(&c2), 25);
	assert_int_equal(pcstock_counter_children_min_usage(&p), 75);
	assert_int_equal(pcstock_counter_children_min_usage(&r), 0);

	pcstock_counter_uncharge(&c1, 30);
	assert_int_equal(pcstock_counter_min_usage(&c1), 20);
	assert_int_equal(pcstock_counter_children_min_usage(&p), 45);

	pcstock_counter_set_min(&c1, 0);
	assert_int_equal(pcstock_counter_min_usage(&c1), 0);
	assert_int_equal(pcstock_counter_children_min_usage(&p), 25);
	/* low was never set: its bookkeeping stayed at 0 throughout. */
	assert_int_equal(pcstock_counter_low_usage(&c2), 0);
	assert_int_equal(pcstock_counter_children_low_usage(&p), 0);
}

static void test_P2_root_never_publishes(void **state)
{
	struct pcstock_counter root;

	pcstock_counter_init(&root, NULL, true);
	pcstock_counter_set_min(&root, 100);
	pcstock_counter_set_low(&root, 100);
	pcstock_counter_charge(&root, 40);
	assert_true(pcstock_counter_try_charge(&root, 10, NULL));
	assert_int_equal(pcstock_counter_min_usage(&root), 0);
	assert_int_equal(pcstock_counter_low_usage(&root), 0);
	assert_int_equal(pcstock_counter_children_min_usage(&root), 0);
	assert_int_equal(pcstock_counter_children_low_usage(&root), 0);
}

static void test_P3_no_protection_support_counter(void **state)
{
	struct pcstock_counter r, s;

	ONLY_IF(PROTECTION_FLAG);
	pcstock_counter_init(&r, NULL, false);
	pcstock_counter_init(&s, &r, false);
	pcstock_counter_set_min(&s, 30);
	pcstock_counter_set_low(&s, 20);
	/* Nothing charged yet: min(0, setting) = 0 published. */
	assert_int_equal(pcstock_counter_min_usage(&s), 0);

	pcstock_counter_charge(&s, 50);
	assert_true(pcstock_counter_try_charge(&s, 5, NULL));
	assert_int_equal(pcstock_counter_min_usage(&s), 0);
	assert_int_equal(pcstock_counter_low_usage(&s), 0);
	assert_int_equal(pcstock_counter_children_min_usage(&r), 0);

	/* set_min/low propagate whatever the flag says. */
	pcstock_counter_set_min(&s, 30);
	pcstock_counter_set_low(&s, 20);
	assert_int_equal(pcstock_counter_min_usage(&s), 30);
	assert_int_equal(pcstock_counter_low_usage(&s), 20);
	assert_int_equal(pcstock_counter_children_min_usage(&r), 30);
	assert_int_equal(pcstock_counter_children_low_usage(&r), 20);

	/* And uncharge leaves the published values alone again. */
	pcstock_counter_uncharge(&s, 50);
	assert_int_equal(pcstock_counter_read(&s), 5);
	assert_int_equal(pcstock_counter_min_usage(&s), 30);
	assert_int_equal(pcstock_counter_children_low_usage(&r), 20);
}

/* ---- E cases ---- */

static void test_E1_effective_protection_overcommit(void **state)
{
	ONLY_IF(CALC_PROTECTION);
	assert_int_equal(pcstock_effective_protection(12800, 38400, 19200,
						      12800, 19200, false),
			 8533);
	assert_int_equal(pcstock_effective_protection(12800, 38400, 6400,
						      12800, 19200, false),
			 4266);
	/* Overcommit wins over the recursive rule. */
	assert_int_equal(pcstock_effective_protection(12800, 38400, 19200,
						      12800, 19200, true),
			 8533);
}

static void test_E2_recursive_floating_protection(void **state)
{
	ONLY_IF(CALC_PROTECTION);
	assert_int_equal(pcstock_effective_protection(60, 200, 0, 100, 0, true),
			 30);
	assert_int_equal(pcstock_effective_protection(60, 200, 0, 100, 0,
						      false),
			 0);
	assert_int_equal(pcstock_effective_protection(140, 200, 0, 100, 0,
						      true),
			 70);
}

static void test_E3_mixed_protection(void **state)
{
	ONLY_IF(CALC_PROTECTION);
	assert_int_equal(pcstock_effective_protection(60, 200, 20, 100, 20,
						      true),
			 37);
	assert_int_equal(pcstock_effective_protection(60, 200, 20, 100, 20,
						      false),
			 20);
	assert_int_equal(pcstock_effective_protection(140, 200, 0, 100, 20,
						      true),
			 62);
}

static void test_E4_calculate_protection_edges(void **state)
{
	struct pcstock_counter r, a, b;

	ONLY_IF(CALC_PROTECTION);
	pcstock_counter_init(&r, NULL, true);
	pcstock_counter_init(&a, &r, true);
	pcstock_counter_init(&b, &a, true);
	pcstock_counter_set_min(&a, 100);
	pcstock_counter_set_low(&a, 60);
	pcstock_counter_set_min(&b, 100);
	pcstock_counter_charge(&b, 50);

	/* parent == root: the settings, not capped by usage (50). */
	pcstock_counter_calculate_protection(&r, &a, false);
	assert_int_equal(pcstock_counter_emin(&a), 100);
	assert_int_equal(pcstock_counter_elow(&a), 60);
	pcstock_counter_calculate_protection(&r, &b, false);
	assert_int_equal(pcstock_counter_emin(&b), 50);

	/* counter == root: untouched even though its settings changed. */
	pcstock_counter_set_min(&a, 7);
	pcstock_counter_calculate_protection(&a, &a, true);
	assert_int_equal(pcstock_counter_emin(&a), 100);
	assert_int_equal(pcstock_counter_elow(&a), 60);
	/* The root itself is never touched either. */
	pcstock_counter_calculate_protection(&r, &r, true);
	assert_int_equal(pcstock_counter_emin(&r), 0);

	/* usage == 0: previous values stay. */
	pcstock_counter_uncharge(&b, 50);
	pcstock_counter_calculate_protection(&r, &a, false);
	assert_int_equal(pcstock_counter_emin(&a), 100);
	pcstock_counter_calculate_protection(&r, &b, false);
	assert_int_equal(pcstock_counter_emin(&b), 50);

	/* min = PCM on a first-level child is copied as is. */
	pcstock_counter_charge(&a, 1);
	pcstock_counter_set_min(&a, PCSTOCK_COUNTER_MAX);
	pcstock_counter_calculate_protection(&r, &a, false);
	assert_int_equal(pcstock_counter_emin(&a), PCSTOCK_COUNTER_MAX);
}

/*
 * E5-E7 are the kernel's effective_protection() as fixed in 6.12.118 (the
 * 128-bit products and the cap on unprotected usage); a tree before the
 * fix computes E5 and E6 wrapped and E7 uncapped (PROTECTION_CAP 0).
 */
#if PCSTOCK_PAGE_SHIFT == 12
static void test_E5_recursive_no_wrap(void **state)
{
	struct pcstock_counter r, a, c;

	ONLY_IF(CALC_PROTECTION && PROTECTION_CAP);
	/*
	 * PCSTOCK_COUNTER_MAX * 262144 needs 69 bits: before the fix the
	 * product wrapped and the share came out as 68236357990461.
	 */
	assert_int_equal(pcstock_effective_protection(262144, 270336, 0,
						      PCSTOCK_COUNTER_MAX, 0,
						      true),
			 2183563455694784UL);

	/* The same numbers reached through a real tree. */
	pcstock_counter_init(&r, NULL, true);
	pcstock_counter_init(&a, &r, true);
	pcstock_counter_init(&c, &a, true);
	pcstock_counter_set_low(&a, PCSTOCK_COUNTER_MAX);
	pcstock_counter_charge(&c, 262144);
	pcstock_counter_charge(&a, 270336 - 262144);
	pcstock_counter_calculate_protection(&r, &a, true);
	pcstock_counter_calculate_protection(&r, &c, true);
	assert_int_equal(pcstock_counter_elow(&a), PCSTOCK_COUNTER_MAX);
	assert_int_equal(pcstock_counter_elow(&c), 2183563455694784UL);
}
#endif

/* Both shares with a product past 64 bits (2^80): exact, not wrapped to 0. */
static void test_E6_products_past_64_bits(void **state)
{
	ONLY_IF(CALC_PROTECTION && PROTECTION_CAP);
	/* Overcommitted: 2^40 * 2^40 / 2^41. */
	assert_int_equal(pcstock_effective_protection(1UL << 40, 1UL << 42,
						      1UL << 40, 1UL << 40,
						      1UL << 41, false),
			 1UL << 39);
	/* Floating: (2^40 - 0) * 2^40 / 2^41 on top of nothing protected. */
	assert_int_equal(pcstock_effective_protection(1UL << 40, 1UL << 41,
						      0, 1UL << 40, 0, true),
			 1UL << 39);
}

/*
 * A child that reads as using more than its parent (the usages are read
 * one by one) gets at most the parent's unclaimed protection: its
 * unprotected usage is capped at the parent's.  The reproducer
 * kernel_differential found on 6.12.118 (seed 1): before the fix the
 * child's elow was 268 * 70 / 6 = 3126, eleven times the parent's.
 */
static void test_E7_unprotected_usage_capped(void **state)
{
	struct pcstock_counter r, a, b, c;

	ONLY_IF(CALC_PROTECTION && PROTECTION_CAP);
	assert_int_equal(pcstock_effective_protection(70, 6, 0, 268, 0, true),
			 268);
	/* At the cap exactly, and just under it: the ratio as before. */
	assert_int_equal(pcstock_effective_protection(6, 6, 0, 268, 0, true),
			 268);
	assert_int_equal(pcstock_effective_protection(5, 6, 0, 268, 0, true),
			 223);
	/* The cap is on the unprotected part: 10 protected, 60 above it. */
	assert_int_equal(pcstock_effective_protection(70, 30, 10, 268, 10,
						      true),
			 10 + 258);

	/*
	 * The tree: usage reaches c (and so a's and b's), then a's own
	 * usage is cancelled below b's, as a racing uncharge can leave it.
	 */
	pcstock_counter_init(&r, NULL, true);
	pcstock_counter_init(&a, &r, true);
	pcstock_counter_init(&b, &a, true);
	pcstock_counter_init(&c, &b, true);
	pcstock_counter_charge(&c, 70);
	pcstock_counter_cancel(&a, 64);
	pcstock_counter_set_low(&a, 268);
	pcstock_counter_calculate_protection(&r, &a, true);
	pcstock_counter_calculate_protection(&r, &b, true);
	pcstock_counter_calculate_protection(&r, &c, true);
	assert_int_equal(pcstock_counter_elow(&a), 268);
	assert_int_equal(pcstock_counter_elow(&b), 268);
	/* c under b: b's usage 70 is its parent's, so no cap binds. */
	assert_int_equal(pcstock_counter_elow(&c), 268);
}

/*
 * ---- the selftest's protection tree (A to F) ----
 * test_memcg_min() and test_memcg_low() of the kernel's
 * tools/testing/selftests/cgroup/test_memcontrol.c; their first, exact
 * step (docs/conformance.md, "The selftest's protection tree").
 */

/* 4 KiB pages: 1M = 256 pages. */
#define MB(n) ((unsigned long)(n) * (1UL << 20) / PCSTOCK_PAGE_SIZE)

struct abcdef {
	struct pcstock_counter a, b, c, d, e, f;
};

static void abcdef_set(struct pcstock_counter *x, unsigned long prot)
{
	pcstock_counter_set_min(x, prot);
	pcstock_counter_set_low(x, prot);
}

static void abcdef_init(struct abcdef *t)
{
	pcstock_counter_init(&t->a, NULL, true);
	pcstock_counter_init(&t->b, &t->a, true);
	pcstock_counter_init(&t->c, &t->b, true);
	pcstock_counter_init(&t->d, &t->b, true);
	pcstock_counter_init(&t->e, &t->b, true);
	pcstock_counter_init(&t->f, &t->b, true);
	assert_int_equal(pcstock_counter_set_max(&t->a, MB(200)), 0);
	abcdef_set(&t->b, MB(50));
	abcdef_set(&t->c, MB(75));
	abcdef_set(&t->d, MB(25));
	abcdef_set(&t->e, 0);
	abcdef_set(&t->f, MB(500));
	assert_true(pcstock_counter_try_charge(&t->c, MB(50), NULL));
	assert_true(pcstock_counter_try_charge(&t->d, MB(50), NULL));
	assert_true(pcstock_counter_try_charge(&t->e, MB(50), NULL));
}

static void abcdef_walk(struct abcdef *t, bool recursive)
{
	struct pcstock_counter *order[] = { &t->a, &t->b, &t->c,
					    &t->d, &t->e, &t->f };
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		pcstock_counter_calculate_protection(&t->a, order[i],
						     recursive);
}

static void assert_eprot(const struct pcstock_counter *x, unsigned long v)
{
	assert_int_equal(pcstock_counter_emin(x), v);
	assert_int_equal(pcstock_counter_elow(x), v);
}

static void check_abcdef(bool recursive)
{
	struct abcdef t;

	abcdef_init(&t);
	/*
	 * A first pass with 1M in F gives F a non-zero effective value
	 * (256 * 12800 / 19456 = 168), so that "F untouched" below is
	 * observable.
	 */
	assert_true(pcstock_counter_try_charge(&t.f, MB(1), NULL));
	abcdef_walk(&t, recursive);
	if (PCSTOCK_PAGE_SHIFT == 12)
		assert_eprot(&t.f, 168);
	pcstock_counter_uncharge(&t.f, MB(1));
	assert_int_equal(pcstock_counter_min_usage(&t.f), 0);

	assert_int_equal(pcstock_counter_read(&t.b), MB(150));
	assert_int_equal(pcstock_counter_children_min_usage(&t.b), MB(75));
	assert_int_equal(pcstock_counter_children_low_usage(&t.b), MB(75));
	abcdef_walk(&t, recursive);
	assert_eprot(&t.a, 0);
	assert_eprot(&t.b, MB(50));
	if (PCSTOCK_PAGE_SHIFT == 12) {
		assert_eprot(&t.c, 8533);
		assert_eprot(&t.d, 4266);
		assert_eprot(&t.f, 168);
	}
	assert_eprot(&t.e, 0);
}

static void test_selftest_tree_numbers_non_recursive(void **state)
{
	ONLY_IF(CALC_PROTECTION);
	check_abcdef(false);
}

static void test_selftest_tree_numbers_recursive(void **state)
{
	ONLY_IF(CALC_PROTECTION);
	check_abcdef(true);
}


#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_T1_failing_ancestor_speculative_watermark),
		T(test_T2_forced_overcharge_and_zero_page_try),
		T(test_T3_set_max_boundary),
		T(test_T4_underflow_clamp_is_per_level),
		T(test_T5_failcnt_flag_is_the_leafs),
		T(test_T6_equality_succeeds),
		T(test_P1_protection_bookkeeping),
		T(test_P2_root_never_publishes),
		T(test_P3_no_protection_support_counter),
		T(test_E1_effective_protection_overcommit),
		T(test_E2_recursive_floating_protection),
		T(test_E3_mixed_protection),
		T(test_E4_calculate_protection_edges),
#if PCSTOCK_PAGE_SHIFT == 12
		T(test_E5_recursive_no_wrap),
#endif
		T(test_E6_products_past_64_bits),
		T(test_E7_unprotected_usage_capped),
		T(test_selftest_tree_numbers_non_recursive),
		T(test_selftest_tree_numbers_recursive),
	};
	int failed;

	failed = cmocka_run_group_tests_name("test_counter", tests, NULL, NULL);
	return failed + run_counter_ops_cases();
}
