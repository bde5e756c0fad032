// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_cgroupfs.c - pcstock_group_read() and pcstock_group_write() against
 * the kernel's cgroupfs behaviour (Documentation/admin-guide/cgroup-v2.rst,
 * cgroup-v1/memory.rst; pcstock's table of the files: docs/design.md §5):
 * every file on a v2 and a v1 tree, values in bytes, "max" (v2) for no
 * limit, an empty write, -EBUSY from v1's limit_in_bytes, the memory.peak
 * reset, hierarchical and local events, and snprintf-like reads.
 *
 * The trees use the "none" policy, so every value is exact.  A case whose
 * comment names a mutant ("Mutant F11: ...") came from the mutation study
 * (docs/mutation.md, by that id) and fails on it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcstock/hierarchy.h>

#include "hierarchy_helpers.h"

#define PAGE PCSTOCK_PAGE_SIZE

static struct pcstock_domain *dom;
static struct pcstock_tree *tree;
static struct pcstock_group *root;
static struct pcstock_group *victim;	/* reclaim uncharges from here */
static unsigned long victim_pages;	/* ... at most this many */
static unsigned int reclaim_calls, oom_calls;
static bool oom_kills;			/* OOM "kills" victim's pages */

static long reclaim_cb(struct pcstock_group *g, unsigned long nr_pages,
		       void *arg)
{
	unsigned long n = nr_pages < victim_pages ? nr_pages : victim_pages;

	reclaim_calls++;
	if (oom_kills)		/* only the OOM callback frees */
		return 0;
	if (n) {
		victim_pages -= n;
		pcstock_group_uncharge(victim, n);
	}
	return (long)n;
}

static int oom_cb(struct pcstock_group *g, void *arg)
{
	oom_calls++;
	if (!oom_kills || !victim_pages)
		return PCSTOCK_OOM_NONE;
	pcstock_group_uncharge(victim, victim_pages);
	victim_pages = 0;
	return PCSTOCK_OOM_KILLED;
}

static int open_tree(bool v1, bool memsw)
{
	struct pcstock_tree_attr attr = {
		.policy = PCSTOCK_TREE_NONE,
		.memsw = memsw,
		.track_failcnt = v1,
		.reclaim = reclaim_cb,
		.oom = oom_cb,
	};

	victim = NULL;
	victim_pages = reclaim_calls = oom_calls = 0;
	oom_kills = false;
	if (sim_tree_open(2, &attr, &dom, &tree))
		return -1;
	root = pcstock_tree_root(tree);
	return 0;
}

static int setup_v2(void **state)
{
	return open_tree(false, false);
}

static int setup_v2_memsw(void **state)
{
	return open_tree(false, true);
}

static int setup_v1(void **state)
{
	return open_tree(true, true);
}

static int teardown(void **state)
{
	return sim_tree_close(dom, tree);
}

/* The file's whole text, checked to be what the length says. */
static const char *rd(struct pcstock_group *g, const char *file)
{
	static char buf[512];
	ssize_t n = pcstock_group_read(g, file, buf, sizeof(buf));

	if (n < 0)
		fail_msg("%s: %zd", file, n);
	assert_true((size_t)n < sizeof(buf));
	assert_int_equal(strlen(buf), n);
	return buf;
}

static void assert_bytes(struct pcstock_group *g, const char *file,
			 unsigned long nr_pages)
{
	char want[32];

	snprintf(want, sizeof(want), "%lu\n", nr_pages * PAGE);
	assert_string_equal(rd(g, file), want);
}

static void assert_events(struct pcstock_group *g, const char *file,
			  unsigned long high, unsigned long max,
			  unsigned long oom, unsigned long oom_kill)
{
	char want[128];

	snprintf(want, sizeof(want),
		 "low 0\nhigh %lu\nmax %lu\noom %lu\noom_kill %lu\n"
		 "oom_group_kill 0\n",
		 high, max, oom, oom_kill);
	assert_string_equal(rd(g, file), want);
}

/* A value of memory.stat. */
static unsigned long stat_of(struct pcstock_group *g, const char *key)
{
	const char *text = rd(g, "memory.stat"), *p = text;
	size_t len = strlen(key);

	for (; *p; p = strchr(p, '\n') + 1)
		if (!strncmp(p, key, len) && p[len] == ' ')
			return strtoul(p + len + 1, NULL, 10);
	fail_msg("no %s in memory.stat:\n%s", key, text);
	return 0;
}

/* ---- v2 ---------------------------------------------------------------- */

static void test_v2_usage_and_limits(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");
	static const char *const limits[] = { "memory.min", "memory.low",
					      "memory.high", "memory.max" };

	assert_int_equal(pcstock_group_charge(g, 10, 0), 0);
	assert_bytes(g, "memory.current", 10);
	assert_string_equal(rd(g, "memory.min"), "0\n");
	assert_string_equal(rd(g, "memory.low"), "0\n");
	assert_string_equal(rd(g, "memory.high"), "max\n");
	assert_string_equal(rd(g, "memory.max"), "max\n");
	for (int i = 0; i < 4; i++) {
		/* memparse grammar, whitespace stripped, bytes back */
		assert_int_equal(pcstock_group_write(g, limits[i], " 1M\n"),
				 0);
		assert_string_equal(rd(g, limits[i]), "1048576\n");
		assert_int_equal(pcstock_group_write(g, limits[i], "max\n"),
				 0);
		assert_string_equal(rd(g, limits[i]), "max\n");
		/* not page-aligned: floored, as the kernel does */
		assert_int_equal(pcstock_group_write(g, limits[i], "4097"), 0);
		assert_bytes(g, limits[i], 1);
		assert_int_equal(pcstock_group_write(g, limits[i], "12x"),
				 -EINVAL);
		assert_int_equal(pcstock_group_write(g, limits[i], "-1"),
				 -EINVAL);
		assert_bytes(g, limits[i], 1);
		assert_int_equal(pcstock_group_write(g, limits[i], "max"), 0);
	}
	assert_int_equal(pcstock_group_write(g, "memory.current", "0"),
			 -EACCES);
	pcstock_group_uncharge(g, 10);
	rmgroup(g);
}

/*
 * memory.max below usage: swapped in, then reclaim, then OOM until it stops
 * making progress; never -EBUSY.  An empty write means 0.
 */
static void test_v2_max_swaps_in_then_reclaims_and_ooms(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");

	assert_int_equal(pcstock_group_charge(g, 20, 0), 0);
	victim = g;
	victim_pages = 4;		/* reclaim can free 4 of the 12 */
	assert_int_equal(pcstock_group_write(g, "memory.max", "32K"), 0);
	assert_bytes(g, "memory.max", 8);
	assert_true(reclaim_calls >= 2);
	assert_int_equal(oom_calls, 1);	/* no progress: one OOM */
	assert_bytes(g, "memory.current", 16);
	assert_events(g, "memory.events", 0, 0, 1, 0);

	/* An empty write is 0; now the OOM "kill" frees everything. */
	victim_pages = 16;
	reclaim_calls = 0;
	oom_calls = 0;
	oom_kills = true;
	assert_int_equal(pcstock_group_write(g, "memory.max", ""), 0);
	assert_string_equal(rd(g, "memory.max"), "0\n");
	assert_bytes(g, "memory.current", 0);
	assert_int_equal(pcstock_group_charge(g, 1, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	rmgroup(g);
}

/*
 * The strings a daemon author sent from a configuration file (docs/daemon.md,
 * step 2): the files parse them as the kernel's memory.max does, not as the
 * strict pcstock_parse_size() a configuration is read with.
 */
static void test_v2_max_parses_like_the_kernel(void **state)
{
	static const struct {
		const char *text;
		const char *file_value;	/* what memory.max then shows */
		int strict_err;		/* pcstock_parse_size(), page-aligned */
	} cases[] = {
		{ "", "0\n", -EINVAL },
		{ "K", "0\n", -EINVAL },
		{ "1k", "0\n", -EINVAL },
		{ "020000", "8192\n", -EINVAL },	/* octal; decimal 20000 */
		{ " 8K\n", "8192\n", 0 },
	};
	struct pcstock_group *g = mkgroup(root, "g");
	unsigned long pages;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(pcstock_group_write(g, "memory.max",
						     cases[i].text), 0);
		assert_string_equal(rd(g, "memory.max"), cases[i].file_value);
		assert_int_equal(pcstock_parse_size(cases[i].text,
						    PCSTOCK_PARSE_PAGE_ALIGNED,
						    &pages),
				 cases[i].strict_err);
	}
	assert_int_equal(pcstock_parse_size("020000", 0, &pages), 0);
	assert_int_equal(pages, 20000 / PCSTOCK_PAGE_SIZE);
	rmgroup(g);
}

static void test_v2_peak_write_resets_local_watermark(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");
	struct pcstock_group_stats st;

	assert_int_equal(pcstock_group_charge(g, 10, 0), 0);
	pcstock_group_uncharge(g, 8);
	assert_bytes(g, "memory.peak", 10);
	/* Any content resets it, to the current usage. */
	assert_int_equal(pcstock_group_write(g, "memory.peak", "reset\n"), 0);
	assert_bytes(g, "memory.peak", 2);
	assert_int_equal(pcstock_group_charge(g, 3, 0), 0);
	assert_bytes(g, "memory.peak", 5);
	assert_int_equal(pcstock_group_write(g, "memory.peak", ""), 0);
	assert_bytes(g, "memory.peak", 5);
	/* The global watermark is never reset by a v2 write. */
	pcstock_group_stats(g, &st);
	assert_int_equal(st.watermark, 10);
	pcstock_group_uncharge(g, 5);
	rmgroup(g);
}

/*
 * memory.events is hierarchical (this group and its descendants, root
 * excluded), memory.events.local this group only.
 */
static void test_v2_events_hierarchical_and_local(void **state)
{
	struct pcstock_group *p = mkgroup(root, "p");
	struct pcstock_group *g = mkgroup(p, "g");
	struct pcstock_group *c = mkgroup(g, "c");
	unsigned long max, high;

	assert_int_equal(pcstock_group_write(g, "memory.max", "8K"), 0);
	assert_int_equal(pcstock_group_charge(c, 3, 0), -ENOMEM);
	/*
	 * max on g (the over-limit group), once per attempt: the first, the
	 * retry after the drain and 16 retries (docs/daemon.md, policy.md); then oom
	 */
	max = pcstock_group_events(g, PCSTOCK_EVENT_MAX);
	assert_int_equal(max, 2 + PCSTOCK_MAX_RECLAIM_RETRIES);
	assert_events(g, "memory.events", 0, max, 1, 0);
	assert_events(g, "memory.events.local", 0, max, 1, 0);
	assert_events(p, "memory.events", 0, max, 1, 0);
	assert_events(p, "memory.events.local", 0, 0, 0, 0);
	assert_events(c, "memory.events", 0, 0, 0, 0);
	assert_events(c, "memory.events.local", 0, 0, 0, 0);

	/* An OOM that kills: oom_kill counted with oom. */
	assert_int_equal(pcstock_group_charge(c, 2, 0), 0);
	victim = c;
	victim_pages = 2;
	oom_kills = true;
	assert_int_equal(pcstock_group_write(g, "memory.max", "0"), 0);
	assert_events(g, "memory.events", 0, max, 2, 1);
	assert_events(p, "memory.events", 0, max, 2, 1);

	/* high: over-high reclaim raises it on each level above high */
	assert_int_equal(pcstock_group_write(g, "memory.max", "max"), 0);
	assert_int_equal(pcstock_group_write(c, "memory.high", "4K"), 0);
	assert_int_equal(pcstock_group_charge(c, 2, 0), 0);
	pcstock_handle_over_high();
	high = pcstock_group_events(c, PCSTOCK_EVENT_HIGH);
	assert_true(high > 0);
	assert_events(c, "memory.events.local", high, 0, 0, 0);
	assert_events(p, "memory.events", high, max, 2, 1);
	assert_events(p, "memory.events.local", 0, 0, 0, 0);
	pcstock_group_uncharge(c, 2);
	rmgroup(c);
	rmgroup(g);
	rmgroup(p);
}

/*
 * memory.events of v6.17 (the series' base): low, high, max, oom,
 * oom_kill, oom_group_kill, in that order; sock_throttled came in v6.19.
 */
static void test_v2_events_lines_of_v6_17(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");
	static const char *const files[] = { "memory.events",
					     "memory.events.local" };

	for (int i = 0; i < 2; i++)
		assert_string_equal(rd(g, files[i]),
				    "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"
				    "oom_group_kill 0\n");
	rmgroup(g);
}

static const char *const v2_limits[] = { "memory.min", "memory.low",
					  "memory.high", "memory.max" };

/*
 * The handlers strstrip() with the kernel's ctype (lib/ctype.c), where the
 * spaces are \t \n \v \f \r, ' ' and Latin-1's no-break space 0xA0, and
 * nothing else (0x85 and the other C1 bytes are not).
 */
static void test_v2_limit_strip_is_the_kernels(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");

	for (int i = 0; i < 4; i++) {
		const char *f = v2_limits[i];

		assert_int_equal(pcstock_group_write(g, f, "4096\xa0"), 0);
		assert_bytes(g, f, 1);
		assert_int_equal(pcstock_group_write(g, f,
						     "\xa0 \t\v\f\r\n8K\xa0\n"),
				 0);
		assert_bytes(g, f, 2);
		assert_int_equal(pcstock_group_write(g, f, "\xa0max\xa0"), 0);
		assert_string_equal(rd(g, f), "max\n");
		assert_int_equal(pcstock_group_write(g, f, "\xa0\t"), 0);
		assert_string_equal(rd(g, f), "0\n");	/* empty: 0 */
		/* not spaces: left in place, so memparse refuses them */
		assert_int_equal(pcstock_group_write(g, f, "4096\x85"),
				 -EINVAL);
		assert_int_equal(pcstock_group_write(g, f, "\x1c" "4096"),
				 -EINVAL);
		assert_int_equal(pcstock_group_write(g, f, "4\xa0" "096"),
				 -EINVAL);
		assert_string_equal(rd(g, f), "0\n");
		assert_int_equal(pcstock_group_write(g, f, "max"), 0);
	}
	/* the string API strips the same way */
	assert_int_equal(pcstock_group_write_limit(g, PCSTOCK_LIMIT_MAX,
						   "\xa0" "12288\xa0"),
			 0);
	assert_bytes(g, "memory.max", 3);
	rmgroup(g);
}

/* "0x", @zeros zeros, "1000": one page whatever the length. */
static char *long_value(size_t zeros)
{
	char *s = malloc(zeros + 7);

	assert_non_null(s);
	memcpy(s, "0x", 2);
	memset(s + 2, '0', zeros);
	memcpy(s + 2 + zeros, "1000", 5);
	return s;
}

/*
 * kernfs hands the handler the whole write, up to a page
 * (atomic_write_len = PAGE_SIZE for cgroup files; longer is -E2BIG), so
 * leading zeros do not make a value too long.
 */
static void test_v2_limit_values_up_to_a_page(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");
	char *v67 = long_value(61);
	char *page = long_value(PAGE - 6);
	char *over = long_value(PAGE - 5);

	assert_int_equal(strlen(v67), 67);
	assert_int_equal(strlen(page), PAGE);
	for (int i = 0; i < 4; i++) {
		const char *f = v2_limits[i];

		assert_int_equal(pcstock_group_write(g, f, v67), 0);
		assert_bytes(g, f, 1);
		assert_int_equal(pcstock_group_write(g, f, "max"), 0);
		assert_int_equal(pcstock_group_write(g, f, page), 0);
		assert_bytes(g, f, 1);
		assert_int_equal(pcstock_group_write(g, f, "max"), 0);
		assert_int_equal(pcstock_group_write(g, f, over), -E2BIG);
		assert_string_equal(rd(g, f), "max\n");
	}
	/* not a file: pcstock_group_write_limit() has no kernfs cap */
	assert_int_equal(pcstock_group_write_limit(g, PCSTOCK_LIMIT_MAX, over),
			 0);
	assert_bytes(g, "memory.max", 1);
	free(v67);
	free(page);
	free(over);
	rmgroup(g);
}

/*
 * A destroyed group's files are gone: a write through a reference the
 * caller still holds (the kernel's open file) is -ENODEV, as kernfs
 * returns, and runs no reclaim and no OOM.  Reads still work (ours).
 */
static void test_v2_destroyed_group_refuses_writes(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");
	static const char *const others[] = { "memory.peak", "memory.max" };

	assert_int_equal(pcstock_group_write(g, "memory.min", "4K"), 0);
	assert_int_equal(pcstock_group_charge(g, 20, 0), 0);
	assert_int_equal(pcstock_group_destroy(g), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pcstock_group_write(g, v2_limits[i], "0"),
				 -ENODEV);
		assert_int_equal(pcstock_group_write(g, v2_limits[i], "bad"),
				 -ENODEV);
	}
	assert_int_equal(pcstock_group_write(g, others[0], "reset"), -ENODEV);
	assert_int_equal(pcstock_group_write_limit(g, PCSTOCK_LIMIT_MAX, "0"),
			 -ENODEV);
	assert_int_equal(pcstock_group_set_max(g, 0), -ENODEV);
	assert_int_equal(pcstock_group_set_high(g, 0), -ENODEV);
	assert_int_equal(pcstock_group_set_low(g, 1), -ENODEV);
	assert_int_equal(reclaim_calls, 0);
	assert_int_equal(oom_calls, 0);
	assert_string_equal(rd(g, others[1]), "max\n");
	assert_string_equal(rd(g, "memory.high"), "max\n");
	assert_string_equal(rd(g, "memory.min"), "0\n");	/* offline */
	assert_bytes(g, "memory.current", 20);
	assert_events(g, "memory.events", 0, 0, 0, 0);
	pcstock_group_uncharge(g, 20);
	pcstock_group_put(g);
}

static void test_v2_stat(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");

	assert_int_equal(pcstock_group_charge(g, 5, 0), 0);
	assert_int_equal(pcstock_group_write(g, "memory.max", "20K"), 0);
	assert_int_equal(pcstock_group_charge(g, 1, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_int_equal(stat_of(g, "charged"), 5 * PAGE);
	assert_int_equal(stat_of(g, "stock"), 0);
	assert_int_equal(stat_of(g, "refused"), 1);
	assert_int_equal(stat_of(g, "stock_hit"), 0);
	assert_int_equal(stat_of(g, "stock_miss"), 0);
	assert_int_equal(stat_of(g, "stock_drain"), 0);
	/* memory.stat exists on the root, the other v2 files do not. */
	assert_int_equal(stat_of(root, "charged"), 5 * PAGE);
	assert_int_equal(pcstock_group_write(g, "memory.stat", "1"), -EACCES);
	pcstock_group_uncharge(g, 5);
	rmgroup(g);
}

static void test_v2_swap_files_on_memsw_trees(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");

	assert_int_equal(pcstock_group_charge(g, 3, 0), 0);
	assert_bytes(g, "memory.swap.current", 3);
	assert_string_equal(rd(g, "memory.swap.max"), "max\n");
	/* memsw includes memory: not below memory.max */
	assert_int_equal(pcstock_group_write(g, "memory.swap.max", "2M"),
			 -EINVAL);
	assert_int_equal(pcstock_group_write(g, "memory.max", "1M"), 0);
	assert_int_equal(pcstock_group_write(g, "memory.swap.max", "2M"), 0);
	assert_string_equal(rd(g, "memory.swap.max"), "2097152\n");
	assert_int_equal(pcstock_group_write(g, "memory.swap.max", "512K"),
			 -EINVAL);
	assert_int_equal(pcstock_group_write(g, "memory.swap.current", "0"),
			 -EACCES);
	assert_int_equal(pcstock_group_read(g, "memory.memsw.usage_in_bytes",
					    NULL, 0),
			 -ENOENT);
	pcstock_group_uncharge(g, 3);
	rmgroup(g);
}

static void test_v2_names_that_do_not_exist(void **state)
{
	static const char *const absent[] = {
		"memory.swap.current", "memory.swap.max",	/* no memsw */
		"memory.usage_in_bytes", "memory.limit_in_bytes",
		"memory.max_usage_in_bytes", "memory.failcnt",
		"memory.memsw.limit_in_bytes", "memory.memsw.failcnt",
		"memory.nonsense", "", "memory.max\n", "MEMORY.MAX",
	};
	static const char *const not_on_root[] = {
		"memory.current", "memory.min", "memory.low", "memory.high",
		"memory.max", "memory.peak", "memory.events",
		"memory.events.local",
	};
	struct pcstock_group *g = mkgroup(root, "g");
	char buf[8];

	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		assert_int_equal(pcstock_group_read(g, absent[i], buf,
						    sizeof(buf)),
				 -ENOENT);
		assert_int_equal(pcstock_group_write(g, absent[i], "0"),
				 -ENOENT);
	}
	for (size_t i = 0; i < sizeof(not_on_root) / sizeof(not_on_root[0]);
	     i++) {
		assert_int_equal(pcstock_group_read(root, not_on_root[i], buf,
						    sizeof(buf)),
				 -ENOENT);
		assert_int_equal(pcstock_group_write(root, not_on_root[i], "0"),
				 -ENOENT);
	}
	assert_int_equal(pcstock_group_read(NULL, "memory.max", buf, 8),
			 -EINVAL);
	assert_int_equal(pcstock_group_read(g, NULL, buf, 8), -EINVAL);
	assert_int_equal(pcstock_group_read(g, "memory.max", NULL, 8),
			 -EINVAL);
	assert_int_equal(pcstock_group_write(NULL, "memory.max", "0"),
			 -EINVAL);
	assert_int_equal(pcstock_group_write(g, NULL, "0"), -EINVAL);
	assert_int_equal(pcstock_group_write(g, "memory.max", NULL), -EINVAL);
	rmgroup(g);
}

/* Too small a buffer: snprintf's length, the text truncated. */
static void test_read_is_snprintf_like(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");
	char buf[4] = "xyz";

	assert_int_equal(pcstock_group_read(g, "memory.max", NULL, 0), 4);
	assert_int_equal(pcstock_group_read(g, "memory.max", buf, 3), 4);
	assert_string_equal(buf, "ma");
	assert_int_equal(pcstock_group_read(g, "memory.max", buf, 1), 4);
	assert_string_equal(buf, "");
	/* Several pieces (events) truncate the same way. */
	{
		char big[128], small[10];
		ssize_t n = pcstock_group_read(g, "memory.events", big,
					       sizeof(big));

		assert_int_equal(pcstock_group_read(g, "memory.events", small,
						    sizeof(small)),
				 n);
		assert_memory_equal(small, big, sizeof(small) - 1);
		assert_int_equal(small[sizeof(small) - 1], '\0');
	}
	rmgroup(g);
}

/* ---- v1 ---------------------------------------------------------------- */

static void test_v1_usage_limits_and_ebusy(void **state)
{
	struct pcstock_group *g = mkgroup(root, "g");
	char unlimited[32];

	/* v1 prints the number, even for no limit (PAGE_COUNTER_MAX). */
	snprintf(unlimited, sizeof(unlimited), "%lu\n",
		 PCSTOCK_COUNTER_MAX * PAGE);
	assert_string_equal(rd(g, "memory.limit_in_bytes"), unlimited);
	assert_string_equal(rd(g, "memory.memsw.limit_in_bytes"), unlimited);
	assert_int_equal(pcstock_group_charge(g, 10, 0), 0);
	assert_bytes(g, "memory.usage_in_bytes", 10);
	assert_bytes(g, "memory.memsw.usage_in_bytes", 10);
	assert_bytes(root, "memory.usage_in_bytes", 10);

	assert_int_equal(pcstock_group_write(g, "memory.limit_in_bytes",
					     "64K"), 0);
	assert_bytes(g, "memory.limit_in_bytes", 16);
	/* memory.limit may not exceed memsw.limit, nor memsw go below it */
	assert_int_equal(pcstock_group_write(g, "memory.memsw.limit_in_bytes",
					     "32K"), -EINVAL);
	assert_int_equal(pcstock_group_write(g, "memory.memsw.limit_in_bytes",
					     "128K"), 0);
	assert_int_equal(pcstock_group_write(g, "memory.limit_in_bytes",
					     "256K"), -EINVAL);
	/* Below usage with nothing to reclaim: -EBUSY, limit unchanged. */
	assert_int_equal(pcstock_group_write(g, "memory.limit_in_bytes",
					     "16K"), -EBUSY);
	assert_bytes(g, "memory.limit_in_bytes", 16);
	assert_int_equal(pcstock_group_write(g, "memory.limit_in_bytes", ""),
			 -EBUSY);
	/* ... and success once reclaim frees enough. */
	victim = g;
	victim_pages = 6;
	assert_int_equal(pcstock_group_write(g, "memory.limit_in_bytes",
					     "16K"), 0);
	assert_bytes(g, "memory.usage_in_bytes", 4);
	/* "-1" is v1's "no limit"; "max" is not v1 grammar. */
	assert_int_equal(pcstock_group_write(g, "memory.limit_in_bytes",
					     "max"), -EINVAL);
	assert_int_equal(pcstock_group_write(g, "memory.memsw.limit_in_bytes",
					     "-1"), 0);
	assert_int_equal(pcstock_group_write(g, "memory.limit_in_bytes",
					     "-1\n"), 0);
	assert_string_equal(rd(g, "memory.limit_in_bytes"), unlimited);
	/* The root has the file, but its limit cannot be set. */
	assert_int_equal(pcstock_group_write(root, "memory.limit_in_bytes",
					     "1M"), -EINVAL);
	assert_int_equal(pcstock_group_write(g, "memory.usage_in_bytes", "0"),
			 -EACCES);
	pcstock_group_uncharge(g, 4);
	rmgroup(g);
}

/*
 * v1 as v2: the kernel's strstrip() (0xA0 is a space) before memparse with
 * "-1", and -ENODEV for every write to a destroyed group's files.
 */
static void test_v1_strip_and_destroyed_group(void **state)
{
	static const char *const writable[] = {
		"memory.limit_in_bytes", "memory.memsw.limit_in_bytes",
		"memory.max_usage_in_bytes", "memory.failcnt",
		"memory.memsw.max_usage_in_bytes", "memory.memsw.failcnt",
	};
	struct pcstock_group *g = mkgroup(root, "g");

	assert_int_equal(pcstock_group_write(g, "memory.limit_in_bytes",
					     "\xa0-1\xa0"), 0);
	assert_int_equal(pcstock_group_write(g, "memory.limit_in_bytes",
					     "\t8192\xa0\n"), 0);
	assert_bytes(g, "memory.limit_in_bytes", 2);
	assert_int_equal(pcstock_group_charge(g, 2, 0), 0);
	assert_int_equal(pcstock_group_destroy(g), 0);
	for (size_t i = 0; i < sizeof(writable) / sizeof(writable[0]); i++)
		assert_int_equal(pcstock_group_write(g, writable[i], "0"),
				 -ENODEV);
	assert_int_equal(reclaim_calls, 0);
	assert_bytes(g, "memory.limit_in_bytes", 2);
	assert_bytes(g, "memory.max_usage_in_bytes", 2);
	pcstock_group_uncharge(g, 2);
	pcstock_group_put(g);
}

static void test_v1_max_usage_and_failcnt_reset(void **state)
{
	static const char *const prefix[] = { "memory.", "memory.memsw." };
	struct pcstock_group *g = mkgroup(root, "g");
	char file[64];

	assert_int_equal(pcstock_group_charge(g, 10, 0), 0);
	pcstock_group_uncharge(g, 7);
	assert_int_equal(pcstock_group_write(g, "memory.limit_in_bytes",
					     "16K"), 0);
	assert_int_equal(pcstock_group_write(g, "memory.memsw.limit_in_bytes",
					     "1M"), 0);
	/* 2 failed charges; only memory counts them (mainline) */
	assert_int_equal(pcstock_group_charge(g, 2, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_int_equal(pcstock_group_charge(g, 2, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_string_equal(rd(g, "memory.failcnt"), "2\n");
	assert_string_equal(rd(g, "memory.memsw.failcnt"), "0\n");
	for (int i = 0; i < 2; i++) {
		snprintf(file, sizeof(file), "%smax_usage_in_bytes",
			 prefix[i]);
		assert_bytes(g, file, 10);
		/* Any write resets it (content ignored), to the usage. */
		assert_int_equal(pcstock_group_write(g, file, "whatever"), 0);
		assert_bytes(g, file, 3);
		snprintf(file, sizeof(file), "%sfailcnt", prefix[i]);
		assert_int_equal(pcstock_group_write(g, file, "0"), 0);
		assert_string_equal(rd(g, file), "0\n");
	}
	/* Counting resumes after the reset. */
	assert_int_equal(pcstock_group_charge(g, 2, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_string_equal(rd(g, "memory.failcnt"), "1\n");
	pcstock_group_uncharge(g, 3);
	rmgroup(g);
}

static void test_v1_names_that_do_not_exist(void **state)
{
	static const char *const absent[] = {
		"memory.current", "memory.min", "memory.low", "memory.high",
		"memory.max", "memory.peak", "memory.events",
		"memory.events.local", "memory.swap.current",
		"memory.swap.max",
	};
	struct pcstock_group *g = mkgroup(root, "g");

	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		assert_int_equal(pcstock_group_read(g, absent[i], NULL, 0),
				 -ENOENT);
		assert_int_equal(pcstock_group_write(g, absent[i], "0"),
				 -ENOENT);
	}
	assert_true(stat_of(g, "refused") == 0);
	rmgroup(g);
}

/* A v1 tree without memsw has no memsw files. */
static void test_v1_without_memsw(void **state)
{
	struct pcstock_group *g;

	assert_int_equal(teardown(state), 0);
	assert_int_equal(open_tree(true, false), 0);
	g = mkgroup(root, "g");
	assert_int_equal(pcstock_group_read(g, "memory.memsw.usage_in_bytes",
					    NULL, 0),
			 -ENOENT);
	assert_string_equal(rd(g, "memory.failcnt"), "0\n");
	rmgroup(g);
}

/*
 * v1's files all exist on the root (no CFTYPE_NOT_ON_ROOT in the legacy
 * table), their counters and resets included.  Mutant F11: memory.failcnt
 * flagged not-on-root.
 */
static void test_v1_files_on_root(void **state)
{
	static const char *const files[] = {
		"memory.usage_in_bytes", "memory.limit_in_bytes",
		"memory.max_usage_in_bytes", "memory.failcnt",
		"memory.memsw.usage_in_bytes", "memory.memsw.limit_in_bytes",
		"memory.memsw.max_usage_in_bytes", "memory.memsw.failcnt",
		"memory.stat",
	};
	char buf[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		assert_true(pcstock_group_read(root, files[i], buf,
					       sizeof(buf)) > 0);
	assert_int_equal(pcstock_group_write(root, "memory.failcnt", "0"), 0);
	assert_int_equal(pcstock_group_write(root, "memory.memsw.failcnt",
					     "0"), 0);
	assert_int_equal(pcstock_group_write(root,
					     "memory.max_usage_in_bytes", "0"),
			 0);
}

#define V2(fn) cmocka_unit_test_setup_teardown(fn, setup_v2, teardown)
#define V2S(fn) cmocka_unit_test_setup_teardown(fn, setup_v2_memsw, teardown)
#define V1(fn) cmocka_unit_test_setup_teardown(fn, setup_v1, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		V2(test_v2_usage_and_limits),
		V2(test_v2_max_swaps_in_then_reclaims_and_ooms),
		V2(test_v2_max_parses_like_the_kernel),
		V2(test_v2_peak_write_resets_local_watermark),
		V2(test_v2_events_hierarchical_and_local),
		V2(test_v2_events_lines_of_v6_17),
		V2(test_v2_limit_strip_is_the_kernels),
		V2(test_v2_limit_values_up_to_a_page),
		V2(test_v2_destroyed_group_refuses_writes),
		V2(test_v2_stat),
		V2S(test_v2_swap_files_on_memsw_trees),
		V2(test_v2_names_that_do_not_exist),
		V2(test_read_is_snprintf_like),
		V1(test_v1_usage_limits_and_ebusy),
		V1(test_v1_strip_and_destroyed_group),
		V1(test_v1_max_usage_and_failcnt_reset),
		V1(test_v1_names_that_do_not_exist),
		V1(test_v1_without_memsw),
		V1(test_v1_files_on_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
