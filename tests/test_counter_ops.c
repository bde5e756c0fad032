// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_counter_ops.c - the counter's operations one by one, a part of
 * test_counter (test_counter.c runs these cases after the catalogue's,
 * docs/conformance.md, on the same fixture, counter_fixture.c): init and the
 * constants, the warning handler, try_charge with failcnt and the
 * underflow clamp, set_max's handshake, the setters, watermarks and
 * getters, misuse, and the kernel's spellings.  Built as
 * kernel_conformance too: see test_counter.c.
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
 * A hook that charges @c by @nr once, after set_max() exchanged the limit
 * and just before it reads usage again (page_counter_set_max()'s check
 * that no charge grew usage meanwhile).  It also counts the writes to
 * max, to tell a retry from the raise shortcut.
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
	/* Over the limit: even a zero-page try fails (T2). */
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

int run_counter_ops_cases(void)
{
	const struct CMUnitTest tests[] = {
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

	return cmocka_run_group_tests_name("test_counter_ops", tests, NULL,
					   NULL);
}
