// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_bad_inputs.c - a daemon author's bad and awkward inputs, as a table.
 *
 * Every case is one call with an input the library must refuse (or accept
 * as a no-op), the errno its kernel-doc promises, and after it the books
 * must be unchanged: the pages each group holds, its limits, and no
 * underflow warning.  The cases cover NULL arguments, the root, destroyed
 * groups, values above PCSTOCK_COUNTER_MAX, strings the kernel's parser
 * refuses for every limit (through pcstock_group_write_limit() and the
 * cgroupfs files), wrong-version and read-only files, unknown flags,
 * limits and policies, names breaking the rules, and paths with empty
 * components.  The suite runs it under ASan+UBSan too (.ci/run).
 *
 * The table keeps at least 190 such cases (one per input a daemon might
 * pass by mistake); the count is checked, so that none is lost silently.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <pcstock/counter.h>
#include <pcstock/cpu.h>
#include <pcstock/hierarchy.h>
#include <pcstock/stock.h>

#include "hierarchy_helpers.h"

#define HELD_G 7UL	/* pages g holds throughout */
#define HELD_DEAD 3UL	/* pages the destroyed group still holds */
#define G_MAX 1000UL	/* g's memory.max (pages) */
#define G_MEMSW 2000UL	/* g's memsw max */
#define G_HIGH 900UL
#define G_MIN 5UL
#define G_LOW 6UL

static struct {
	struct pcstock_domain *dom;
	struct pcstock_tree *tree;
	struct pcstock_group *root, *g, *parent, *child, *dead;
	unsigned int cases;
	char big[PCSTOCK_PAGE_SIZE + 2];
} F;

static int setup(void **state)
{
	struct pcstock_tree_attr attr = {
		.policy = PCSTOCK_TREE_DEFAULT,
		.memsw = true,
	};

	(void)state;
	if (sim_tree_open(2, &attr, &F.dom, &F.tree))
		return -1;
	F.root = pcstock_tree_root(F.tree);
	if (pcstock_group_create(F.root, "g", &F.g) ||
	    pcstock_group_create(F.root, "p", &F.parent) ||
	    pcstock_group_create(F.parent, "c", &F.child) ||
	    pcstock_group_create(F.root, "dead", &F.dead) ||
	    pcstock_group_set_max(F.g, G_MAX) ||
	    pcstock_group_set_memsw_max(F.g, G_MEMSW) ||
	    pcstock_group_set_high(F.g, G_HIGH) ||
	    pcstock_group_set_min(F.g, G_MIN) ||
	    pcstock_group_set_low(F.g, G_LOW) ||
	    pcstock_group_charge(F.g, HELD_G, 0) ||
	    pcstock_group_charge(F.dead, HELD_DEAD, 0) ||
	    pcstock_group_destroy(F.dead))
		return -1;
	memset(F.big, '1', sizeof(F.big) - 1);
	F.big[sizeof(F.big) - 1] = '\0';
	pcstock_warn_reset();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pcstock_group_uncharge_direct(F.g, HELD_G);
	pcstock_group_uncharge_direct(F.dead, HELD_DEAD);
	pcstock_group_destroy(F.child);
	pcstock_group_destroy(F.parent);
	pcstock_group_destroy(F.g);
	pcstock_group_put(F.child);
	pcstock_group_put(F.parent);
	pcstock_group_put(F.g);
	pcstock_group_put(F.dead);
	return sim_tree_close(F.dom, F.tree);
}

/* After every case: nothing was charged, lost or changed. */
static void books_unchanged(const char *what)
{
	const struct pcstock_counter *m = pcstock_group_memory(F.g);
	bool ok = pcstock_group_usage_exact(F.g) == HELD_G &&
		  pcstock_group_usage_exact(F.dead) == HELD_DEAD &&
		  pcstock_group_memsw_usage(F.g) >=  HELD_G &&
		  pcstock_counter_max(m) == G_MAX &&
		  pcstock_counter_high(m) == G_HIGH &&
		  pcstock_counter_min(m) == G_MIN &&
		  pcstock_counter_low(m) == G_LOW &&
		  pcstock_counter_max(pcstock_group_memsw(F.g)) == G_MEMSW &&
		  pcstock_group_online(F.g) && pcstock_group_online(F.child) &&
		  !pcstock_group_online(F.dead) && !pcstock_warn_count();

	if (!ok)
		fail_msg("case \"%s\": the books changed", what);
}

static void expect(const char *what, long got, long want)
{
	F.cases++;
	if (got != want)
		fail_msg("case \"%s\": returned %ld, want %ld", what, got,
			 want);
	books_unchanged(what);
}

/* ---- limit values --------------------------------------------------------- */

/*
 * Strings the kernel's page_counter_memparse() refuses (after strstrip()):
 * memparse() must consume all of it, and the keyword is exactly "max" (v2)
 * or "-1" (v1 files, not on this tree).
 */
static const char *const bad_values[] = {
	"abc", "-1", "1x", "max2", "maxx", "Max", "4096 4096", "0x", "0xg",
	"1KK", "1K2", "+", "--", "1.5G", "0b101", "\x01", "4096\t\x01",
	"\xd9\xa3", "max max", "1 K",
};
#define NR_BAD (sizeof(bad_values) / sizeof(bad_values[0]))

static const struct {
	enum pcstock_limit which;
	const char *file;	/* the v2 file for it */
} limits[] = {
	{ PCSTOCK_LIMIT_MAX, "memory.max" },
	{ PCSTOCK_LIMIT_MAX_STRICT, NULL },
	{ PCSTOCK_LIMIT_HIGH, "memory.high" },
	{ PCSTOCK_LIMIT_MIN, "memory.min" },
	{ PCSTOCK_LIMIT_LOW, "memory.low" },
	{ PCSTOCK_LIMIT_MEMSW_MAX, "memory.swap.max" },
};
#define NR_LIMITS (sizeof(limits) / sizeof(limits[0]))

static void test_bad_limit_values(void **state)
{
	char what[96];

	(void)state;
	for (size_t l = 0; l < NR_LIMITS; l++) {
		for (size_t i = 0; i < NR_BAD; i++) {
			snprintf(what, sizeof(what), "write_limit(%d, \"%s\")",
				 (int)limits[l].which, bad_values[i]);
			expect(what, pcstock_group_write_limit(F.g,
					limits[l].which, bad_values[i]),
			       -EINVAL);
			if (!limits[l].file)
				continue;
			snprintf(what, sizeof(what), "write(%s, \"%s\")",
				 limits[l].file, bad_values[i]);
			expect(what, pcstock_group_write(F.g, limits[l].file,
							 bad_values[i]),
			       -EINVAL);
		}
		/* A destroyed group's files are gone, whatever the value. */
		expect("write_limit(dead)", pcstock_group_write_limit(F.dead,
				limits[l].which, "abc"), -ENODEV);
		expect("write_limit(root)", pcstock_group_write_limit(F.root,
				limits[l].which, "max"), -EINVAL);
		expect("write_limit(NULL)", pcstock_group_write_limit(NULL,
				limits[l].which, "1"), -EINVAL);
		expect("write_limit(buf NULL)", pcstock_group_write_limit(F.g,
				limits[l].which, NULL), -EINVAL);
	}
	expect("write_limit(unknown)",
	       pcstock_group_write_limit(F.g, (enum pcstock_limit)99, "1"),
	       -EINVAL);
	expect("write_limit(negative)",
	       pcstock_group_write_limit(F.g, (enum pcstock_limit)-1, "1"),
	       -EINVAL);
}

/* The setters themselves: NULL, the root, destroyed, too large. */
typedef int (*setter_fn)(struct pcstock_group *g, unsigned long nr_pages);

static const struct {
	const char *name;
	setter_fn fn;
} setters[] = {
	{ "set_max", pcstock_group_set_max },
	{ "set_max_strict", pcstock_group_set_max_strict },
	{ "set_memsw_max", pcstock_group_set_memsw_max },
	{ "set_high", pcstock_group_set_high },
	{ "set_min", pcstock_group_set_min },
	{ "set_low", pcstock_group_set_low },
};

static void test_bad_setter_args(void **state)
{
	char what[64];

	(void)state;
	for (size_t i = 0; i < sizeof(setters) / sizeof(setters[0]); i++) {
#define SETTER_CASE(label, g, n, want)                                       \
	do {                                                                 \
		snprintf(what, sizeof(what), "%s(%s)", setters[i].name,      \
			 label);                                             \
		expect(what, setters[i].fn((g), (n)), (want));               \
	} while (0)
		SETTER_CASE("NULL", NULL, 1, -EINVAL);
		SETTER_CASE("root", F.root, 1, -EINVAL);
		SETTER_CASE("dead", F.dead, 1, -ENODEV);
		SETTER_CASE("dead, huge", F.dead, ULONG_MAX, -ENODEV);
		SETTER_CASE("MAX + 1", F.g, PCSTOCK_COUNTER_MAX + 1, -EINVAL);
		SETTER_CASE("ULONG_MAX", F.g, ULONG_MAX, -EINVAL);
		SETTER_CASE("LONG_MAX + 1", F.g, (unsigned long)LONG_MAX + 1,
			    -EINVAL);
#undef SETTER_CASE
	}
	/* v1's rule between the two maxima. */
	expect("set_memsw_max below memory.max",
	       pcstock_group_set_memsw_max(F.g, G_MAX - 1), -EINVAL);
	expect("set_max_strict above memsw.max",
	       pcstock_group_set_max_strict(F.g, G_MEMSW + 1), -EINVAL);
}

/* ---- charges ---------------------------------------------------------- */

static void test_bad_charges(void **state)
{
	static const unsigned int bad_flags[] = {
		0x8U, 0x10U, 0x80U, 0x100U, 0x80000000U, ~0U,
		PCSTOCK_CHARGE_NOWAIT | 0x40U,
	};
	static const unsigned long huge[] = {
		PCSTOCK_COUNTER_MAX + 1, ULONG_MAX, (unsigned long)LONG_MAX,
		(unsigned long)LONG_MAX + 1,
	};
	struct pcstock_group *gs[] = { NULL, F.g, F.dead, F.root };
	char what[64];

	(void)state;
	for (size_t i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]);
	     i++) {
		snprintf(what, sizeof(what), "charge(flags %#x)",
			 bad_flags[i]);
		expect(what, pcstock_group_charge(F.g, 1, bad_flags[i]),
		       -EINVAL);
	}
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		snprintf(what, sizeof(what), "charge(%lu)", huge[i]);
		expect(what, pcstock_group_charge(F.g, huge[i], 0), -EINVAL);
		snprintf(what, sizeof(what), "uncharge(%lu)", huge[i]);
		expect(what, pcstock_group_uncharge(F.g, huge[i]), -EINVAL);
		snprintf(what, sizeof(what), "uncharge_direct(%lu)", huge[i]);
		expect(what, pcstock_group_uncharge_direct(F.g, huge[i]),
		       -EINVAL);
		snprintf(what, sizeof(what), "uncharge(dead, %lu)", huge[i]);
		expect(what, pcstock_group_uncharge(F.dead, huge[i]),
		       -EINVAL);
	}
	expect("charge(NULL)", pcstock_group_charge(NULL, 1, 0), -EINVAL);
	expect("charge(dead)", pcstock_group_charge(F.dead, 1, 0), -ENOENT);
	expect("charge(dead, NOFAIL)",
	       pcstock_group_charge(F.dead, 1, PCSTOCK_CHARGE_NOFAIL),
	       -ENOENT);
	expect("uncharge(NULL)", pcstock_group_uncharge(NULL, 1), -EINVAL);
	expect("uncharge_direct(NULL)", pcstock_group_uncharge_direct(NULL, 1),
	       -EINVAL);
	/* Zero pages: a no-op for every group, the root included. */
	for (size_t i = 1; i < sizeof(gs) / sizeof(gs[0]); i++) {
		if (gs[i] != F.dead)
			expect("charge(0)", pcstock_group_charge(gs[i], 0, 0),
			       0);
		expect("uncharge(0)", pcstock_group_uncharge(gs[i], 0), 0);
		expect("uncharge_direct(0)",
		       pcstock_group_uncharge_direct(gs[i], 0), 0);
	}
	/* Harmless: NULL is left alone. */
	pcstock_group_drain_all(NULL);
	pcstock_group_get(NULL);
	pcstock_group_put(NULL);
	pcstock_group_calculate_protection(NULL);
	expect("NULL no-ops", 0, 0);
}

/* ---- topology ------------------------------------------------------------ */

static void test_bad_topology(void **state)
{
	static const char *const bad_names[] = {
		"", ".", "..", "a/b", "/", "a/", "/a", "\x01", "a\x1f", "\x7f",
		"tab\there", "new\nline",
	};
	struct pcstock_group *out = NULL;
	char what[64];

	(void)state;
	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]);
	     i++) {
		snprintf(what, sizeof(what), "create(name %zu)", i);
		expect(what, pcstock_group_create(F.g, bad_names[i], &out),
		       -EINVAL);
	}
	expect("create(name too long)",
	       pcstock_group_create(F.g, F.big, &out), -EINVAL);
	expect("create(NULL parent)", pcstock_group_create(NULL, "x", &out),
	       -EINVAL);
	expect("create(NULL name)", pcstock_group_create(F.g, NULL, &out),
	       -EINVAL);
	expect("create(NULL out)", pcstock_group_create(F.g, "x", NULL),
	       -EINVAL);
	expect("create(dead parent)",
	       pcstock_group_create(F.dead, "x", &out), -ENOENT);
	expect("create(taken)", pcstock_group_create(F.parent, "c", &out),
	       -EEXIST);
	expect("create(taken at root)", pcstock_group_create(F.root, "g",
							     &out), -EEXIST);
	expect("destroy(NULL)", pcstock_group_destroy(NULL), -EINVAL);
	expect("destroy(root)", pcstock_group_destroy(F.root), -EBUSY);
	expect("destroy(parent)", pcstock_group_destroy(F.parent), -EBUSY);
	expect("destroy(dead)", pcstock_group_destroy(F.dead), -ENOENT);
	expect("destroy(dead) again", pcstock_group_destroy(F.dead), -ENOENT);
	expect("tree_destroy(busy)", pcstock_tree_destroy(F.tree), -EBUSY);

	expect("lookup(NULL from)", pcstock_group_lookup(NULL, "g", &out),
	       -EINVAL);
	expect("lookup(NULL path)", pcstock_group_lookup(F.root, NULL, &out),
	       -EINVAL);
	expect("lookup(NULL out)", pcstock_group_lookup(F.root, "g", NULL),
	       -EINVAL);
	expect("lookup(nosuch)", pcstock_group_lookup(F.root, "nosuch", &out),
	       -ENOENT);
	expect("lookup(dead)", pcstock_group_lookup(F.root, "dead", &out),
	       -ENOENT);
	expect("lookup(p//c)", pcstock_group_lookup(F.root, "p//c", &out),
	       -EINVAL);
	expect("lookup(p/c/x)", pcstock_group_lookup(F.root, "p/c/x", &out),
	       -ENOENT);
	expect("lookup(prefix)", pcstock_group_lookup(F.root, "de", &out),
	       -ENOENT);
	expect("lookup(from dead)", pcstock_group_lookup(F.dead, "x", &out),
	       -ENOENT);
	/* Awkward but fine: leading slashes name the same path. */
	expect("lookup(//p/c)", pcstock_group_lookup(F.root, "//p/c", &out),
	       0);
	assert_ptr_equal(out, F.child);
	pcstock_group_put(out);
	expect("lookup(/p)", pcstock_group_lookup(F.root, "/p", &out), 0);
	assert_ptr_equal(out, F.parent);
	pcstock_group_put(out);
	expect("path(NULL)", pcstock_group_path(NULL, what, sizeof(what)),
	       -EINVAL);
	expect("path(NULL buf)", pcstock_group_path(F.g, NULL, 8), -EINVAL);
}

/* ---- the cgroupfs files ------------------------------------------------- */

static void test_bad_files(void **state)
{
	static const char *const read_only[] = {
		"memory.current", "memory.events", "memory.events.local",
		"memory.stat", "memory.swap.current",
	};
	static const char *const not_here[] = {
		"memory.limit_in_bytes", "memory.usage_in_bytes",
		"memory.failcnt", "memory.max_usage_in_bytes",
		"memory.memsw.limit_in_bytes", "memory.nosuch", "", "memory",
		"memory.max ", "Memory.max", "memory.max\n",
	};
	char buf[64], what[96];

	(void)state;
	for (size_t i = 0; i < sizeof(read_only) / sizeof(read_only[0]);
	     i++) {
		snprintf(what, sizeof(what), "write(%s)", read_only[i]);
		expect(what, pcstock_group_write(F.g, read_only[i], "0"),
		       -EACCES);
	}
	for (size_t i = 0; i < sizeof(not_here) / sizeof(not_here[0]); i++) {
		snprintf(what, sizeof(what), "write(\"%s\")", not_here[i]);
		expect(what, pcstock_group_write(F.g, not_here[i], "max"),
		       -ENOENT);
		snprintf(what, sizeof(what), "read(\"%s\")", not_here[i]);
		expect(what, pcstock_group_read(F.g, not_here[i], buf,
						sizeof(buf)), -ENOENT);
	}
	/* Not on the root (CFTYPE_NOT_ON_ROOT). */
	expect("write(root, memory.max)",
	       pcstock_group_write(F.root, "memory.max", "max"), -ENOENT);
	expect("read(root, memory.current)",
	       pcstock_group_read(F.root, "memory.current", buf, sizeof(buf)),
	       -ENOENT);
	expect("write(dead, memory.max)",
	       pcstock_group_write(F.dead, "memory.max", "max"), -ENODEV);
	expect("write(dead, memory.peak)",
	       pcstock_group_write(F.dead, "memory.peak", "0"), -ENODEV);
	expect("write(a page and one byte)",
	       pcstock_group_write(F.g, "memory.max", F.big), -E2BIG);
	expect("write(NULL g)", pcstock_group_write(NULL, "memory.max", "1"),
	       -EINVAL);
	expect("write(NULL file)", pcstock_group_write(F.g, NULL, "1"),
	       -EINVAL);
	expect("write(NULL buf)", pcstock_group_write(F.g, "memory.max",
						      NULL), -EINVAL);
	expect("read(NULL g)", pcstock_group_read(NULL, "memory.max", buf,
						  sizeof(buf)), -EINVAL);
	expect("read(NULL file)", pcstock_group_read(F.g, NULL, buf,
						     sizeof(buf)), -EINVAL);
	expect("read(NULL buf, size)", pcstock_group_read(F.g, "memory.max",
							  NULL, 8), -EINVAL);
	/* A NULL buffer of size 0 asks for the length: "1000 pages\n". */
	snprintf(what, sizeof(what), "%lu\n", G_MAX * PCSTOCK_PAGE_SIZE);
	expect("read(NULL buf, 0)", pcstock_group_read(F.g, "memory.max",
						       NULL, 0),
	       (long)strlen(what));
}

/* ---- trees and domains -------------------------------------------------- */

static void test_bad_trees(void **state)
{
	struct pcstock_tree_attr attr = { .policy = PCSTOCK_TREE_DEFAULT };
	struct pcstock_tree *t = NULL;
	enum pcstock_tree_policy p;

	(void)state;
	expect("tree_create(NULL domain)", pcstock_tree_create(NULL, &attr,
							       &t), -EINVAL);
	expect("tree_create(NULL out)", pcstock_tree_create(F.dom, &attr,
							    NULL), -EINVAL);
	attr.policy = (enum pcstock_tree_policy)99;
	expect("tree_create(policy 99)", pcstock_tree_create(F.dom, &attr,
							     &t), -EINVAL);
	attr.policy = PCSTOCK_TREE_DEFAULT;
	attr.batch = PCSTOCK_STOCK_MAX_BATCH + 1;
	expect("tree_create(batch too big)",
	       pcstock_tree_create(F.dom, &attr, &t), -EINVAL);
	attr.batch = UINT_MAX;
	expect("tree_create(batch UINT_MAX)",
	       pcstock_tree_create(F.dom, &attr, &t), -EINVAL);
	attr.policy = PCSTOCK_TREE_MEMCG7;
	attr.batch = 128;
	expect("tree_create(memcg7 batch 128)",
	       pcstock_tree_create(F.dom, &attr, &t), -EINVAL);
	/* Every registered policy refuses a batch above its max_batch. */
	for (int i = 0; i < PCSTOCK_TREE_NR_POLICIES; i++) {
		struct pcstock_policy_info info;

		attr.policy = (enum pcstock_tree_policy)i;
		expect("policy_info(registered)",
		       pcstock_tree_policy_info(attr.policy, &info), 0);
		attr.batch = info.max_batch + 1;
		expect("tree_create(batch above the policy's max_batch)",
		       pcstock_tree_create(F.dom, &attr, &t), -EINVAL);
	}
	expect("tree_destroy(NULL)", pcstock_tree_destroy(NULL), 0);
	expect("policy_parse(NULL)", pcstock_tree_policy_parse(NULL, &p),
	       -EINVAL);
	expect("policy_parse(NULL out)",
	       pcstock_tree_policy_parse("default", NULL), -EINVAL);
	expect("policy_parse(nosuch)", pcstock_tree_policy_parse("nosuch",
								  &p), -EINVAL);
	expect("policy_parse(\"\")", pcstock_tree_policy_parse("", &p),
	       -EINVAL);
}

/* Last: the table's count, at least 190. */
static void test_case_count(void **state)
{
	(void)state;
	print_message("%u bad-input cases\n", F.cases);
	assert_true(F.cases >= 190);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_limit_values),
		cmocka_unit_test(test_bad_setter_args),
		cmocka_unit_test(test_bad_charges),
		cmocka_unit_test(test_bad_topology),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_bad_trees),
		cmocka_unit_test(test_case_count),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
