// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_counter.c - the counter layer against the spec (kernel-page-counter.md
 * §1, §2, §5.3, §7), not against src/counter.c: every expected number here is
 * taken from the spec or derived from its formulas by hand.
 *
 * Some cases use the test library's schedule-explorer hook (every atomic of
 * the library calls it) to run code *inside* an operation, between two of
 * its atomic steps, which is how a sequential test reaches the set_max()
 * handshake paths.
 *
 * The same file, built as kernel_conformance (kernel/CMakeLists.txt,
 * PCSTOCK_TEST_KERNEL), runs against a kernel tree's own mm/page_counter.c
 * through kernel/adapter.c: a test that fails there is a wrong test.  Two
 * things are pcstock's alone and are left out there: checks of which
 * atomic accesses pcstock makes to its own fields (OWN_ACCESSES; the
 * kernel's fields sit elsewhere and its plain accesses are not hooked),
 * and the deliberate differences its header lists.  A tree before v6.15
 * has no track_failcnt flag and counts every failure (FAILCNT_FLAG 0).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <string.h>

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

/* Skip a test that is pcstock's alone (see above) when @cond is false. */
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

/* ---- fixtures ---- */

struct warn_log {
	unsigned int calls;
	const char *what;
	const struct pcstock_counter *c;
	long value;
	unsigned long nr_pages;
};

static struct warn_log warns;

static void record_warn(const char *what, const struct pcstock_counter *c,
			long value, unsigned long nr_pages, void *arg)
{
	struct warn_log *log = arg;

	log->calls++;
	log->what = what;
	log->c = c;
	log->value = value;
	log->nr_pages = nr_pages;
}

static int setup(void **state)
{
	memset(&warns, 0, sizeof(warns));
	pcstock_set_warn_handler(record_warn, &warns);
	pcstock_warn_reset();
	pcstock_explore_hook = NULL;
	return 0;
}

static int teardown(void **state)
{
	pcstock_explore_hook = NULL;
	pcstock_set_warn_handler(NULL, NULL);
	pcstock_warn_reset();
	return 0;
}

/* R <- A <- L, every counter with protection support, limits unset. */
struct chain {
	struct pcstock_counter r, a, l;
};

static void chain_init(struct chain *t)
{
	pcstock_counter_init(&t->r, NULL, true);
	pcstock_counter_init(&t->a, &t->r, true);
	pcstock_counter_init(&t->l, &t->a, true);
}

static void assert_usage3(const struct chain *t, unsigned long r,
			  unsigned long a, unsigned long l)
{
	assert_int_equal(pcstock_counter_read(&t->r), r);
	assert_int_equal(pcstock_counter_read(&t->a), a);
	assert_int_equal(pcstock_counter_read(&t->l), l);
}

static void assert_peaks(const struct pcstock_counter *c, unsigned long global,
			 unsigned long local)
{
	assert_int_equal(pcstock_counter_watermark(c), global);
	if (LOCAL_WATERMARK)
		assert_int_equal(pcstock_counter_local_watermark(c), local);
}

/* ---- §7 T cases ---- */

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

/* ---- §7 P cases ---- */

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

/* ---- §7 E cases ---- */

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

/* ---- §5.3 protection numbers ---- */

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

static void test_protection_5_3_numbers_non_recursive(void **state)
{
	ONLY_IF(CALC_PROTECTION);
	check_abcdef(false);
}

static void test_protection_5_3_numbers_recursive(void **state)
{
	ONLY_IF(CALC_PROTECTION);
	check_abcdef(true);
}

/* ---- init, constants, warnings ---- */

static void test_init_zeroes_everything(void **state)
{
	struct pcstock_counter parent, c;

	pcstock_counter_init(&parent, NULL, false);
	memset(&c, 0xa5, sizeof(c));
	pcstock_counter_init(&c, &parent, true);
	assert_int_equal(pcstock_counter_read(&c), 0);
	assert_int_equal(pcstock_counter_max(&c), PCSTOCK_COUNTER_MAX);
	assert_int_equal(pcstock_counter_high(&c), 0);
	assert_int_equal(pcstock_counter_min(&c), 0);
	assert_int_equal(pcstock_counter_low(&c), 0);
	assert_peaks(&c, 0, 0);
	assert_int_equal(pcstock_counter_failcnt(&c), 0);
	assert_int_equal(pcstock_counter_emin(&c), 0);
	assert_int_equal(pcstock_counter_elow(&c), 0);
	assert_int_equal(pcstock_counter_min_usage(&c), 0);
	assert_int_equal(pcstock_counter_low_usage(&c), 0);
	assert_int_equal(pcstock_counter_children_min_usage(&c), 0);
	assert_int_equal(pcstock_counter_children_low_usage(&c), 0);
	assert_ptr_equal(pcstock_counter_parent(&c), &parent);
	assert_true(pcstock_counter_protection_support(&c));
	assert_int_equal(pcstock_counter_track_failcnt(&c), !FAILCNT_FLAG);
	assert_null(pcstock_counter_parent(&parent));
	/* A tree without the flag propagates protection everywhere. */
	assert_int_equal(pcstock_counter_protection_support(&parent),
			 !PROTECTION_FLAG);
}

static void test_counter_max_constant(void **state)
{
	assert_int_equal(PCSTOCK_COUNTER_MAX,
			 (unsigned long)LONG_MAX / PCSTOCK_PAGE_SIZE);
#if PCSTOCK_PAGE_SHIFT == 12
	assert_int_equal(PCSTOCK_PAGE_SIZE, 4096);
	assert_int_equal(PCSTOCK_COUNTER_MAX, 2251799813685247UL);
	assert_int_equal(PCSTOCK_COUNTER_MAX, (1UL << 51) - 1);
#endif
	/* Any count up to the maximum converts to bytes in a signed long. */
	assert_true(PCSTOCK_COUNTER_MAX * PCSTOCK_PAGE_SIZE <=
		    (unsigned long)LONG_MAX);
}

static void test_warn_handler_once_count_every_reset_rearms(void **state)
{
	struct pcstock_counter c;

	pcstock_counter_init(&c, NULL, true);
	pcstock_counter_charge(&c, 3);
	pcstock_counter_cancel(&c, 5);
	assert_int_equal(warns.calls, 1);
	assert_string_equal(warns.what, "page_counter underflow");
	assert_ptr_equal(warns.c, &c);
	assert_int_equal(warns.value, -2);
	assert_int_equal(warns.nr_pages, 5);
	assert_int_equal(pcstock_warn_count(), 1);

	pcstock_counter_cancel(&c, 1);
	pcstock_counter_uncharge(&c, 2);
	assert_int_equal(warns.calls, 1);
	assert_int_equal(pcstock_warn_count(), 3);

	pcstock_warn_reset();
	assert_int_equal(pcstock_warn_count(), 0);
	pcstock_counter_cancel(&c, 9);
	assert_int_equal(warns.calls, 2);
	assert_int_equal(warns.value, -9);
	assert_int_equal(warns.nr_pages, 9);
	assert_int_equal(pcstock_warn_count(), 1);

	/* Without a handler underflows are still counted. */
	pcstock_set_warn_handler(NULL, NULL);
	pcstock_warn_reset();
	pcstock_counter_cancel(&c, 1);
	assert_int_equal(pcstock_warn_count(), 1);
	assert_int_equal(warns.calls, 2);
	assert_int_equal(pcstock_counter_read(&c), 0);
}

static void test_no_warning_without_underflow(void **state)
{
	struct pcstock_counter c;

	pcstock_counter_init(&c, NULL, true);
	pcstock_counter_charge(&c, 5);
	pcstock_counter_cancel(&c, 5);
	assert_int_equal(pcstock_counter_read(&c), 0);
	assert_int_equal(pcstock_warn_count(), 0);
	assert_int_equal(warns.calls, 0);
}

/* ---- try_charge, failcnt, clamp ---- */

static void test_try_charge_null_fail(void **state)
{
	struct chain t;

	chain_init(&t);
	assert_int_equal(pcstock_counter_set_max(&t.r, 5), 0);
	pcstock_counter_set_track_failcnt(&t.l, true);
	assert_true(pcstock_counter_try_charge(&t.l, 5, NULL));
	assert_false(pcstock_counter_try_charge(&t.l, 1, NULL));
	assert_usage3(&t, 5, 5, 5);
	assert_int_equal(pcstock_counter_failcnt(&t.r), 1);
	assert_peaks(&t.l, 6, 6);
	assert_peaks(&t.a, 6, 6);
	assert_peaks(&t.r, 5, 5);
}

static void test_try_charge_fail_at_leaf_touches_nothing_above(void **state)
{
	struct pcstock_counter *fail = NULL;
	struct chain t;

	chain_init(&t);
	assert_int_equal(pcstock_counter_set_max(&t.l, 3), 0);
	assert_false(pcstock_counter_try_charge(&t.l, 4, &fail));
	assert_ptr_equal(fail, &t.l);
	assert_usage3(&t, 0, 0, 0);
	assert_peaks(&t.l, 0, 0);
	assert_peaks(&t.a, 0, 0);
	/* failcnt tracking is off by default (always on before v6.15). */
	assert_int_equal(pcstock_counter_failcnt(&t.l), !FAILCNT_FLAG);
}

static void test_try_charge_wraps_and_compares_unsigned(void **state)
{
	struct pcstock_counter *fail = NULL;
	struct pcstock_counter c;

	pcstock_counter_init(&c, NULL, true);
	/* 2^63 pages: negative as a long, but compared as unsigned: > PCM. */
	assert_false(pcstock_counter_try_charge(&c, 1UL << 63, &fail));
	assert_ptr_equal(fail, &c);
	assert_int_equal(pcstock_counter_read(&c), 0);
	assert_peaks(&c, 0, 0);
	/* A limit above LONG_MAX is not negative either. */
	assert_int_equal(pcstock_counter_set_max(&c, ULONG_MAX), 0);
	assert_true(pcstock_counter_try_charge(&c, 5, &fail));
	/* ULONG_MAX pages wraps to minus one page, as the kernel's long. */
	assert_true(pcstock_counter_try_charge(&c, ULONG_MAX, &fail));
	assert_int_equal(pcstock_counter_read(&c), 4);
	assert_peaks(&c, 5, 5);
	assert_int_equal(pcstock_warn_count(), 0);
}

static void test_failcnt_only_with_leaf_track_flag(void **state)
{
	struct chain t;

	ONLY_IF(FAILCNT_FLAG);

	chain_init(&t);
	assert_int_equal(pcstock_counter_set_max(&t.r, 0), 0);
	/* Only the failing level, never the leaf, tracks: nothing counted. */
	pcstock_counter_set_track_failcnt(&t.r, true);
	pcstock_counter_set_track_failcnt(&t.a, true);
	assert_false(pcstock_counter_try_charge(&t.l, 1, NULL));
	assert_int_equal(pcstock_counter_failcnt(&t.r), 0);
	/* Started at A, whose flag is set: counted on R. */
	assert_false(pcstock_counter_try_charge(&t.a, 1, NULL));
	assert_int_equal(pcstock_counter_failcnt(&t.r), 1);
	assert_int_equal(pcstock_counter_failcnt(&t.a), 0);
	assert_true(pcstock_counter_track_failcnt(&t.a));
	assert_false(pcstock_counter_track_failcnt(&t.l));
}

static void test_uncharge_clamps_each_level_alone(void **state)
{
	struct chain t;

	chain_init(&t);
	pcstock_counter_charge(&t.r, 5);
	pcstock_counter_charge(&t.a, 1);
	pcstock_counter_charge(&t.l, 2);
	assert_usage3(&t, 8, 3, 2);
	pcstock_counter_uncharge(&t.l, 4);
	/* L and A clamp to 0; R has enough and keeps 4. */
	assert_usage3(&t, 4, 0, 0);
	assert_int_equal(pcstock_warn_count(), 2);
	assert_int_equal(warns.calls, 1);
	assert_ptr_equal(warns.c, &t.l);
	assert_int_equal(warns.value, -2);
}

static void test_protection_flag_leaf_for_charge_own_for_cancel(void **state)
{
	struct pcstock_counter r, p, leaf;

	ONLY_IF(PROTECTION_FLAG);
	pcstock_counter_init(&r, NULL, true);
	pcstock_counter_init(&p, &r, true);
	pcstock_counter_init(&leaf, &p, false);
	pcstock_counter_set_min(&p, 100);
	pcstock_counter_set_min(&leaf, 100);

	/* The leaf has no support: no level is republished by its charges. */
	pcstock_counter_charge(&leaf, 10);
	assert_true(pcstock_counter_try_charge(&leaf, 10, NULL));
	assert_int_equal(pcstock_counter_min_usage(&leaf), 0);
	assert_int_equal(pcstock_counter_min_usage(&p), 0);

	/* uncharge: cancel at each level follows that level's flag. */
	pcstock_counter_uncharge(&leaf, 5);
	assert_int_equal(pcstock_counter_min_usage(&leaf), 0);
	assert_int_equal(pcstock_counter_min_usage(&p), 15);
	assert_int_equal(pcstock_counter_children_min_usage(&r), 15);
	assert_int_equal(pcstock_counter_children_min_usage(&p), 0);

	/* P's own charges do publish, P having support. */
	pcstock_counter_charge(&p, 3);
	assert_int_equal(pcstock_counter_min_usage(&p), 18);
}

/* ---- set_max ---- */

/*
 * A hook that charges @c by @nr right after set_max() exchanged the limit,
 * i.e. at the setter's re-read of usage (spec §2.6 step 4), once.  It also
 * counts the writes to max, to tell a retry from the raise shortcut.
 */
static struct {
	struct pcstock_counter *c;
	unsigned long nr;
	bool armed, exchanged;
	unsigned int xchgs, stores;
} grow;

static void grow_after_xchg(enum pcs_atomic_op op, const void *obj)
{
	if (obj == &grow.c->max && op == PCS_OP_XCHG)
		grow.xchgs++;
	if (obj == &grow.c->max && op == PCS_OP_STORE)
		grow.stores++;
	if (!grow.armed)
		return;
	if (op == PCS_OP_XCHG && obj == &grow.c->max) {
		grow.exchanged = true;
	} else if (grow.exchanged && op == PCS_OP_LOAD &&
		   obj == &grow.c->usage) {
		grow.armed = false;
		pcstock_counter_charge(grow.c, grow.nr);
	}
}

static int set_max_with_growth(struct pcstock_counter *c, unsigned long max,
			       unsigned long nr)
{
	memset(&grow, 0, sizeof(grow));
	grow.c = c;
	grow.nr = nr;
	grow.armed = true;
	pcstock_explore_hook = grow_after_xchg;
	return pcstock_counter_set_max(c, max);
}

static void test_set_max_equality_and_ebusy(void **state)
{
	struct pcstock_counter c;

	pcstock_counter_init(&c, NULL, true);
	pcstock_counter_charge(&c, 12);
	assert_int_equal(pcstock_counter_set_max(&c, 12), 0);
	assert_int_equal(pcstock_counter_max(&c), 12);
	assert_int_equal(pcstock_counter_set_max(&c, 11), -EBUSY);
	assert_int_equal(pcstock_counter_max(&c), 12);
	assert_int_equal(pcstock_counter_set_max(&c, 0), -EBUSY);
	/* Values above PCM are accepted. */
	assert_int_equal(pcstock_counter_set_max(&c, ULONG_MAX), 0);
	assert_int_equal(pcstock_counter_max(&c), ULONG_MAX);
}

static void test_set_max_raise_shortcut(void **state)
{
	struct pcstock_counter c;

	ONLY_IF(OWN_ACCESSES);

	pcstock_counter_init(&c, NULL, true);
	assert_int_equal(pcstock_counter_set_max(&c, 10), 0);
	pcstock_counter_charge(&c, 5);
	/* Usage grows 5 -> 8 during a raise 10 -> 20: no retry. */
	assert_int_equal(set_max_with_growth(&c, 20, 3), 0);
	assert_false(grow.armed);
	assert_int_equal(grow.xchgs, 1);
	assert_int_equal(grow.stores, 0);
	assert_int_equal(pcstock_counter_max(&c), 20);
	assert_int_equal(pcstock_counter_read(&c), 8);
	/* Raising to the same value counts as a raise too. */
	assert_int_equal(set_max_with_growth(&c, 20, 1), 0);
	assert_int_equal(grow.xchgs, 1);
	assert_int_equal(grow.stores, 0);
}

static void test_set_max_lower_retries_on_growth(void **state)
{
	struct pcstock_counter c;

	ONLY_IF(OWN_ACCESSES);

	pcstock_counter_init(&c, NULL, true);
	assert_int_equal(pcstock_counter_set_max(&c, 10), 0);
	pcstock_counter_charge(&c, 5);
	/* 10 -> 7 while usage grows 5 -> 6: restore, retry, succeed. */
	assert_int_equal(set_max_with_growth(&c, 7, 1), 0);
	assert_false(grow.armed);
	assert_int_equal(grow.xchgs, 2);
	assert_int_equal(grow.stores, 1);
	assert_int_equal(pcstock_counter_max(&c), 7);

	/* 7 -> 6 while usage grows 6 -> 9: restore, retry, -EBUSY. */
	assert_int_equal(set_max_with_growth(&c, 6, 3), -EBUSY);
	assert_int_equal(grow.xchgs, 1);
	assert_int_equal(grow.stores, 1);
	assert_int_equal(pcstock_counter_max(&c), 7);
	assert_int_equal(pcstock_counter_read(&c), 9);
}

/* ---- settings, watermarks, getters ---- */

static void test_set_min_low_propagation_unconditional(void **state)
{
	struct pcstock_counter r, p, c;

	pcstock_counter_init(&r, NULL, false);
	pcstock_counter_init(&p, &r, false);
	pcstock_counter_init(&c, &p, false);
	pcstock_counter_charge(&c, 50);
	pcstock_counter_set_min(&p, 10);
	pcstock_counter_set_low(&p, 70);
	assert_int_equal(pcstock_counter_min_usage(&p), 10);
	assert_int_equal(pcstock_counter_low_usage(&p), 50);
	assert_int_equal(pcstock_counter_children_min_usage(&r), 10);
	assert_int_equal(pcstock_counter_children_low_usage(&r), 50);

	/* c's setter walks up through p, republishing p too. */
	pcstock_counter_charge(&c, 10);
	pcstock_counter_set_min(&c, 30);
	assert_int_equal(pcstock_counter_min(&c), 30);
	assert_int_equal(pcstock_counter_min_usage(&c), 30);
	assert_int_equal(pcstock_counter_children_min_usage(&p), 30);
	assert_int_equal(pcstock_counter_low_usage(&p), 60);
	assert_int_equal(pcstock_counter_children_low_usage(&r), 60);
	pcstock_counter_set_low(&c, 5);
	assert_int_equal(pcstock_counter_low(&c), 5);
	assert_int_equal(pcstock_counter_children_low_usage(&p), 5);
}

/* Objects of the first operations of kind record_op, in order. */
static enum pcs_atomic_op record_op = PCS_OP_STORE;
static const void *store_order[4];
static unsigned int nr_stores;

static void record_stores(enum pcs_atomic_op op, const void *obj)
{
	if (op == record_op && nr_stores < 4)
		store_order[nr_stores++] = obj;
}

static void test_reset_watermark(void **state)
{
	struct pcstock_counter p, c;

	pcstock_counter_init(&p, NULL, true);
	pcstock_counter_init(&c, &p, true);
	pcstock_counter_charge(&c, 10);
	pcstock_counter_uncharge(&c, 7);
	assert_peaks(&c, 10, 10);

	nr_stores = 0;
	pcstock_explore_hook = record_stores;
	pcstock_counter_reset_watermark(&c);
	pcstock_explore_hook = NULL;
	if (OWN_ACCESSES) {
		assert_int_equal(nr_stores, 2);
		assert_ptr_equal(store_order[0], &c.local_watermark);
		assert_ptr_equal(store_order[1], &c.watermark);
	}
	assert_peaks(&c, 3, 3);
	/* Local: the parent is not reset. */
	assert_peaks(&p, 10, 10);

	pcstock_counter_charge(&c, 2);
	assert_peaks(&c, 5, 5);
}

static void test_local_watermark_below_global(void **state)
{
	struct pcstock_counter c;

	pcstock_counter_init(&c, NULL, true);
	pcstock_counter_charge(&c, 10);
	pcstock_counter_uncharge(&c, 8);
	pcstock_counter_reset_watermark(&c);
	pcstock_counter_charge(&c, 4);
	assert_peaks(&c, 6, 6);
	pcstock_counter_charge(&c, 6);
	assert_peaks(&c, 12, 12);
}

/* memory.peak: only the local peak restarts; global and parents keep. */
static void test_reset_local_watermark(void **state)
{
	struct pcstock_counter p, c;

	ONLY_IF(LOCAL_WATERMARK);
	pcstock_counter_init(&p, NULL, true);
	pcstock_counter_init(&c, &p, true);
	pcstock_counter_charge(&c, 10);
	pcstock_counter_uncharge(&c, 7);

	nr_stores = 0;
	pcstock_explore_hook = record_stores;
	pcstock_counter_reset_local_watermark(&c);
	pcstock_explore_hook = NULL;
	if (OWN_ACCESSES) {
		assert_int_equal(nr_stores, 1);
		assert_ptr_equal(store_order[0], &c.local_watermark);
	}
	assert_peaks(&c, 10, 3);
	assert_peaks(&p, 10, 10);

	/* Charges raise the local peak; the global one only above 10. */
	pcstock_counter_charge(&c, 4);
	assert_peaks(&c, 10, 7);
	pcstock_counter_charge(&c, 5);
	assert_peaks(&c, 12, 12);
}

/* v1 failcnt write: zero, then counting resumes; other levels untouched. */
static void test_reset_failcnt(void **state)
{
	struct pcstock_counter p, c;

	pcstock_counter_init(&p, NULL, false);
	pcstock_counter_init(&c, &p, false);
	pcstock_counter_set_track_failcnt(&c, true);
	assert_int_equal(pcstock_counter_set_max(&c, 2), 0);
	assert_int_equal(pcstock_counter_set_max(&p, 2), 0);
	assert_false(pcstock_counter_try_charge(&c, 3, NULL));
	assert_false(pcstock_counter_try_charge(&c, 3, NULL));
	assert_int_equal(pcstock_counter_failcnt(&c), 2);
	/* A level-p failure needs c to fit: c's max 2, p's max 1. */
	assert_int_equal(pcstock_counter_set_max(&p, 1), 0);
	assert_false(pcstock_counter_try_charge(&c, 2, NULL));
	assert_int_equal(pcstock_counter_failcnt(&p), 1);

	pcstock_counter_reset_failcnt(&c);
	assert_int_equal(pcstock_counter_failcnt(&c), 0);
	assert_int_equal(pcstock_counter_failcnt(&p), 1);
	assert_false(pcstock_counter_try_charge(&c, 3, NULL));
	assert_int_equal(pcstock_counter_failcnt(&c), 1);
	assert_int_equal(pcstock_counter_read(&c), 0);
}

/*
 * The v2 memory.max write: below usage is accepted (set_max says -EBUSY),
 * one exchange of the field; the old value comes back.
 */
static void test_xchg_max_unconditional(void **state)
{
	struct pcstock_counter p, c;

	pcstock_counter_init(&p, NULL, false);
	pcstock_counter_init(&c, &p, false);
	pcstock_counter_charge(&c, 10);
	assert_int_equal(pcstock_counter_set_max(&c, 5), -EBUSY);

	nr_stores = 0;
	record_op = PCS_OP_XCHG;
	pcstock_explore_hook = record_stores;
	assert_int_equal(pcstock_counter_xchg_max(&c, 5), PCSTOCK_COUNTER_MAX);
	pcstock_explore_hook = NULL;
	record_op = PCS_OP_STORE;
	if (OWN_ACCESSES) {
		assert_int_equal(nr_stores, 1);
		assert_ptr_equal(store_order[0], &c.max);
	}

	assert_int_equal(pcstock_counter_max(&c), 5);
	assert_int_equal(pcstock_counter_read(&c), 10);
	/* Over the limit: even a zero-page try fails (§7 T2). */
	assert_false(pcstock_counter_try_charge(&c, 0, NULL));
	pcstock_counter_uncharge(&c, 5);
	assert_true(pcstock_counter_try_charge(&c, 0, NULL));
	assert_false(pcstock_counter_try_charge(&c, 1, NULL));
	/* Values above the maximum are stored as given, like set_max. */
	assert_int_equal(pcstock_counter_xchg_max(&c, ULONG_MAX), 5);
	assert_int_equal(pcstock_counter_max(&c), ULONG_MAX);
	assert_int_equal(pcstock_counter_max(&p), PCSTOCK_COUNTER_MAX);
}

static void test_getters(void **state)
{
	struct pcstock_counter p, c;

	pcstock_counter_init(&p, NULL, false);
	pcstock_counter_init(&c, &p, true);
	pcstock_counter_set_high(&c, 77);
	pcstock_counter_set_min(&c, 33);
	pcstock_counter_set_low(&c, 44);
	assert_int_equal(pcstock_counter_set_max(&c, 99), 0);
	pcstock_counter_set_track_failcnt(&c, true);
	assert_int_equal(pcstock_counter_high(&c), 77);
	assert_int_equal(pcstock_counter_min(&c), 33);
	assert_int_equal(pcstock_counter_low(&c), 44);
	assert_int_equal(pcstock_counter_max(&c), 99);
	assert_true(pcstock_counter_track_failcnt(&c));
	assert_ptr_equal(pcstock_counter_parent(&c), &p);
	/* set_high is data only: no check, no walk. */
	pcstock_counter_set_high(&c, 0);
	assert_true(pcstock_counter_try_charge(&c, 20, NULL));
	assert_int_equal(pcstock_counter_high(&c), 0);
	assert_int_equal(pcstock_counter_high(&p), 0);
	assert_int_equal(pcstock_counter_read(&p), 20);
	assert_int_equal(pcstock_counter_min_usage(&c), 20);
	assert_int_equal(pcstock_counter_low_usage(&c), 20);
}

/* ---- misuse ---- */

#include "abort_helpers.h"

static struct pcstock_counter cyc_a, cyc_b;

static void init_self_parent(void *arg)
{
	pcstock_counter_init(&cyc_a, &cyc_a, false);
}

static void init_cycle(void *arg)
{
	pcstock_counter_init(&cyc_a, NULL, false);
	pcstock_counter_init(&cyc_b, &cyc_a, false);
	pcstock_counter_init(&cyc_a, &cyc_b, false);	/* a -> b -> a */
}

/* A counter made its own ancestor is a documented abort, not a hang. */
static void test_init_cycle_aborts(void **state)
{
	ONLY_IF(!DELIBERATE_DIFFERENCE);
	expect_abort(init_self_parent, NULL, "would be its own ancestor");
	expect_abort(init_cycle, NULL, "would be its own ancestor");
	/* re-parenting that makes no cycle is fine */
	pcstock_counter_init(&cyc_a, NULL, false);
	pcstock_counter_init(&cyc_b, &cyc_a, false);
	pcstock_counter_init(&cyc_b, NULL, false);
	pcstock_counter_init(&cyc_a, &cyc_b, false);
	assert_ptr_equal(pcstock_counter_parent(&cyc_a), &cyc_b);
}

/* ---- kernel spellings ---- */

#include <pcstock/kernel_compat.h>

static void test_kernel_compat_spellings(void **state)
{
	struct page_counter root, child;
	struct page_counter *fail = NULL;
	unsigned long pages = 0;

	ONLY_IF(CALC_PROTECTION && LOCAL_WATERMARK);
	page_counter_init(&root, NULL, true);
	page_counter_init(&child, &root, true);
	assert_int_equal(page_counter_set_max(&root, 8), 0);
	page_counter_set_min(&child, 2);
	page_counter_set_low(&child, 3);
	page_counter_set_high(&child, PAGE_COUNTER_MAX);
	assert_true(page_counter_try_charge(&child, 8, &fail));
	assert_false(page_counter_try_charge(&child, 1, &fail));
	assert_ptr_equal(fail, &root);
	page_counter_charge(&child, 1);
	assert_int_equal(page_counter_read(&root), 9);
	page_counter_cancel(&child, 1);
	page_counter_uncharge(&child, 3);
	assert_int_equal(page_counter_read(&child), 5);
	assert_int_equal(page_counter_read(&root), 6);
	page_counter_reset_watermark(&child);
	assert_int_equal(pcstock_counter_watermark(&child), 5);
	page_counter_calculate_protection(&root, &child, false);
	assert_int_equal(pcstock_counter_emin(&child), 2);
	assert_int_equal(page_counter_memparse("max", "max", &pages), 0);
	assert_int_equal(pages, PAGE_COUNTER_MAX);
	assert_int_equal(pcstock_counter_high(&child), PAGE_COUNTER_MAX);
	assert_int_equal(page_counter_xchg_max(&child, 4), PAGE_COUNTER_MAX);
	assert_int_equal(pcstock_counter_max(&child), 4);
	page_counter_reset_local_watermark(&child);
	assert_int_equal(pcstock_counter_local_watermark(&child), 5);
	page_counter_reset_failcnt(&root);
	assert_int_equal(pcstock_counter_failcnt(&root), 0);
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
		T(test_protection_5_3_numbers_non_recursive),
		T(test_protection_5_3_numbers_recursive),
		T(test_init_zeroes_everything),
		T(test_counter_max_constant),
		T(test_warn_handler_once_count_every_reset_rearms),
		T(test_no_warning_without_underflow),
		T(test_try_charge_null_fail),
		T(test_try_charge_fail_at_leaf_touches_nothing_above),
		T(test_try_charge_wraps_and_compares_unsigned),
		T(test_failcnt_only_with_leaf_track_flag),
		T(test_uncharge_clamps_each_level_alone),
		T(test_protection_flag_leaf_for_charge_own_for_cancel),
		T(test_set_max_equality_and_ebusy),
		T(test_set_max_raise_shortcut),
		T(test_set_max_lower_retries_on_growth),
		T(test_set_min_low_propagation_unconditional),
		T(test_reset_watermark),
		T(test_local_watermark_below_global),
		T(test_reset_local_watermark),
		T(test_reset_failcnt),
		T(test_xchg_max_unconditional),
		T(test_getters),
		T(test_kernel_compat_spellings),
		T(test_init_cycle_aborts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
