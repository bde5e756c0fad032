// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_shm.c - the shared tree (pcstock/shared.h): groups, charges, the
 * checks an attach makes, every bad input's error, and processes (fork())
 * that attach, charge, leave, die mid-run and die holding the structure
 * lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <pcstock/shared.h>

#include "shm.h"
#include "shm_fixture.h"

/* ---- groups --------------------------------------------------------------------- */

static void test_groups_names_and_generations(void **state)
{
	struct pcstock_shm *s = create(4, 2, 0);
	pcstock_shm_gid a, b, c, found, again;

	(void)state;
	a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	b = mkgroup(s, a, "b");
	assert_int_equal(pcstock_shm_group_lookup(s, a, "b", &found), 0);
	assert_true(found == b);
	assert_int_equal(pcstock_shm_group_parent(s, b), a);
	assert_int_equal(pcstock_shm_group_parent(s, a), PCSTOCK_SHM_ROOT);
	assert_int_equal(pcstock_shm_group_create(s, a, "b", &found), -EEXIST);
	assert_int_equal(pcstock_shm_group_create(s, a, "", &found), -EINVAL);
	assert_int_equal(pcstock_shm_group_create(s, a, "x/y", &found),
			 -EINVAL);
	assert_int_equal(pcstock_shm_group_create(s, a, "..", &found),
			 -EINVAL);
	assert_int_equal(pcstock_shm_group_create(s, a,
		"0123456789012345678901234567890123456789012345678901234567890123",
		&found), -ENAMETOOLONG);
	/* Paths, as the private tree's lookup takes them. */
	assert_int_equal(pcstock_shm_group_lookup(s, PCSTOCK_SHM_ROOT, "a/b",
						  &found), 0);
	assert_true(found == b);
	assert_int_equal(pcstock_shm_group_lookup(s, PCSTOCK_SHM_ROOT, "a/x",
						  &found), -ENOENT);
	assert_int_equal(pcstock_shm_group_lookup(s, PCSTOCK_SHM_ROOT, "a//b",
						  &found), -EINVAL);
	assert_int_equal(pcstock_shm_group_lookup(s, PCSTOCK_SHM_ROOT, "a/",
						  &found), -EINVAL);
	assert_int_equal(pcstock_shm_group_lookup(s, PCSTOCK_SHM_ROOT, "/a",
						  &found), -EINVAL);
	assert_int_equal(pcstock_shm_group_lookup(s, PCSTOCK_SHM_ROOT, "a/..",
						  &found), -EINVAL);
	/* The same name under another parent is another group. */
	c = mkgroup(s, PCSTOCK_SHM_ROOT, "b");
	assert_true(c != b);
	/* Four slots, the root included: full. */
	assert_int_equal(pcstock_shm_group_create(s, b, "d", &found), -ENOSPC);
	assert_int_equal(pcstock_shm_group_destroy(s, a), -EBUSY);
	assert_int_equal(pcstock_shm_group_destroy(s, PCSTOCK_SHM_ROOT),
			 -EINVAL);
	assert_int_equal(pcstock_shm_group_destroy(s, b), 0);
	assert_int_equal(pcstock_shm_group_destroy(s, b), -ENOENT);
	assert_int_equal(pcstock_shm_group_lookup(s, a, "b", &found), -ENOENT);
	assert_int_equal(pcstock_shm_charge(s, b, 1, 0), -ENOENT);
	/* b's index is reused for a new group; b's gid stays dead. */
	again = mkgroup(s, a, "b2");
	assert_int_equal(shm_gid_index(again), shm_gid_index(b));
	assert_true(again != b);
	assert_int_equal(pcstock_shm_charge(s, b, 1, 0), -ENOENT);
	assert_int_equal(pcstock_shm_uncharge(s, b, 1), -ENOENT);
	assert_int_equal(pcstock_shm_charge(s, again, 1, 0), 0);
	assert_int_equal(pcstock_shm_usage(s, a), 1);
	assert_int_equal(pcstock_shm_detach(s), 0);
}

static void test_destroyed_group_keeps_charges_until_given_back(void **state)
{
	struct pcstock_shm *s = create(4, 2, 8);
	pcstock_shm_gid a, b, again;

	(void)state;
	a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	b = mkgroup(s, a, "b");
	assert_int_equal(pcstock_shm_charge(s, b, 3, 0), 0);
	assert_int_equal(pcstock_shm_stock_pages(s, b), 5);
	assert_int_equal(pcstock_shm_group_destroy(s, b), 0);
	/* The destroy drained the slots; the 3 pages stay charged. */
	assert_int_equal(pcstock_shm_stock_pages(s, b), 0);
	assert_int_equal(pcstock_shm_usage(s, a), 3);
	/* Not reusable while charged: the table is full. */
	assert_int_equal(pcstock_shm_group_create(s, a, "x", &again), 0);
	assert_int_equal(pcstock_shm_group_create(s, a, "y", &again),
			 -ENOSPC);
	/* Given back through the old gid, straight to the counters. */
	assert_int_equal(pcstock_shm_uncharge(s, b, 3), 0);
	assert_int_equal(pcstock_shm_stock_pages(s, b), 0);
	assert_int_equal(pcstock_shm_usage(s, a), 0);
	assert_int_equal(pcstock_shm_group_create(s, a, "y", &again), 0);
	assert_int_equal(shm_gid_index(again), shm_gid_index(b));
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/* ---- charges ------------------------------------------------------------------- */

static void test_charge_stock_and_limits(void **state)
{
	struct pcstock_shm *s = create(8, 2, 4);
	pcstock_shm_gid a, b;
	char buf[256];

	(void)state;
	run_on_cpu(0);
	a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	b = mkgroup(s, a, "b");
	assert_int_equal(pcstock_shm_set_limit(s, a, PCSTOCK_LIMIT_MAX, 10), 0);
	/* A miss charges the batch: 1 used, 3 in this CPU's slot. */
	assert_int_equal(pcstock_shm_charge(s, b, 1, 0), 0);
	assert_int_equal(pcstock_shm_usage(s, a), 4);
	assert_int_equal(pcstock_shm_stock_pages(s, b), 3);
	/* Hits. */
	assert_int_equal(pcstock_shm_charge(s, b, 3, 0), 0);
	assert_int_equal(pcstock_shm_stock_pages(s, b), 0);
	assert_int_equal(pcstock_shm_usage(s, a), 4);
	assert_int_equal(pcstock_shm_proc_charged(s, 0, b), 4);
	/* Uncharges refill the slot. */
	assert_int_equal(pcstock_shm_uncharge(s, b, 4), 0);
	assert_int_equal(pcstock_shm_stock_pages(s, b), 4);
	assert_int_equal(pcstock_shm_charge(s, b, 4, 0), 0);
	assert_int_equal(pcstock_shm_charge(s, b, 6, 0), 0);
	assert_int_equal(pcstock_shm_usage(s, a), 10);
	assert_int_equal(pcstock_shm_charge(s, b, 1, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_int_equal(pcstock_shm_charge(s, b, 1, 0), -ENOMEM);
	assert_true(pcstock_shm_events(s, a, PCSTOCK_EVENT_MAX) >= 1);
	/* NOFAIL charges over the limit, as __GFP_NOFAIL does. */
	assert_int_equal(pcstock_shm_charge(s, b, 1, PCSTOCK_CHARGE_NOFAIL),
			 0);
	assert_int_equal(pcstock_shm_usage(s, a), 11);
	assert_int_equal(pcstock_shm_set_limit(s, a, PCSTOCK_LIMIT_MAX, 5),
			 -EBUSY);
	assert_int_equal(pcstock_shm_uncharge(s, b, 11), 0);
	assert_int_equal(pcstock_shm_set_limit(s, a, PCSTOCK_LIMIT_MAX, 5), 0);
	/* 11 would overfill the slot: it empties up the tree with them. */
	assert_int_equal(pcstock_shm_usage(s, a), 0);
	assert_int_equal(pcstock_shm_set_limit(s, a, PCSTOCK_LIMIT_MAX_STRICT,
					       5), -EOPNOTSUPP);
	assert_int_equal(pcstock_shm_set_limit(s, a, PCSTOCK_LIMIT_HIGH, 3), 0);
	assert_int_equal(pcstock_shm_set_limit(s, b, PCSTOCK_LIMIT_MIN, 2), 0);
	assert_int_equal(pcstock_shm_charge(s, b, 3, 0), 0);
	assert_int_equal(pcstock_shm_read(s, a, "memory.max", buf,
					  sizeof(buf)), 6);
	assert_string_equal(buf, "20480\n");
	assert_true(pcstock_shm_read(s, a, "memory.current", buf,
				     sizeof(buf)) > 0);
	assert_string_equal(buf, "16384\n");
	assert_true(pcstock_shm_read(s, b, "memory.max", buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "max\n");
	assert_true(pcstock_shm_read(s, a, "memory.high", buf,
				     sizeof(buf)) > 0);
	assert_string_equal(buf, "12288\n");
	assert_true(pcstock_shm_read(s, a, "memory.events", buf,
				     sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\nmax "));
	assert_int_equal(pcstock_shm_read(s, a, "memory.bogus", buf,
					  sizeof(buf)), -ENOENT);
	assert_int_equal(pcstock_shm_read(s, a, "memory.events", buf, 4),
			 -ERANGE);
	/* The protected usage reached the parent's children sum. */
	assert_int_equal(pcstock_counter_children_min_usage(
				 &shm_group(s, shm_gid_index(a))->memory), 2);
	assert_int_equal(pcstock_shm_charge(s, b, 1, 0x80), -EINVAL);
	/*
	 * As a private tree's: no pages, or the root, charge nothing (0),
	 * and the root has no limits.
	 */
	{
		unsigned long root = pcstock_shm_usage(s, PCSTOCK_SHM_ROOT);

		assert_int_equal(pcstock_shm_charge(s, b, 0, 0), 0);
		assert_int_equal(pcstock_shm_uncharge(s, b, 0), 0);
		assert_int_equal(pcstock_shm_charge(s, PCSTOCK_SHM_ROOT, 1, 0),
				 0);
		assert_int_equal(pcstock_shm_uncharge(s, PCSTOCK_SHM_ROOT, 1),
				 0);
		assert_int_equal(pcstock_shm_usage(s, PCSTOCK_SHM_ROOT), root);
		assert_int_equal(pcstock_shm_set_limit(s, PCSTOCK_SHM_ROOT,
						       PCSTOCK_LIMIT_MAX, 1),
				 -EINVAL);
		/* ...nor v2 files (v1's limit file refuses the value). */
		assert_int_equal(pcstock_shm_write(s, PCSTOCK_SHM_ROOT,
						   "memory.high", "1"),
				 -ENOENT);
		assert_int_equal(pcstock_shm_write(s, PCSTOCK_SHM_ROOT,
						   "memory.limit_in_bytes",
						   "4096"),
				 -EINVAL);
	}
	run_anywhere();
	assert_int_equal(pcstock_shm_detach(s), 0);
}

static void test_files_and_protection(void **state)
{
	struct pcstock_shm *s = create(8, 2, 0);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	pcstock_shm_gid b = mkgroup(s, a, "b"), c = mkgroup(s, a, "c");
	unsigned long emin, elow;
	char buf[64];

	(void)state;
	assert_int_equal(pcstock_shm_write(s, a, "memory.max", "40K\n"), 0);
	assert_true(pcstock_shm_read(s, a, "memory.max", buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "40960\n");
	assert_int_equal(pcstock_shm_write(s, a, "memory.max", " max "), 0);
	assert_true(pcstock_shm_read(s, a, "memory.max", buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "max\n");
	/* v1 prints the bytes of "no limit" and parses -1 for it. */
	assert_true(pcstock_shm_read(s, a, "memory.limit_in_bytes", buf,
				     sizeof(buf)) > 0);
	snprintf(buf + 32, 32, "%lu\n",
		 PCSTOCK_COUNTER_MAX << PCSTOCK_PAGE_SHIFT);
	assert_string_equal(buf, buf + 32);
	assert_int_equal(pcstock_shm_write(s, a, "memory.limit_in_bytes",
					   "8K"), 0);
	assert_int_equal(pcstock_shm_write(s, a, "memory.limit_in_bytes",
					   "-1"), 0);
	assert_int_equal(pcstock_shm_write(s, a, "memory.max", "-1"), -EINVAL);
	assert_int_equal(pcstock_shm_write(s, a, "memory.max", "12X"), -EINVAL);
	assert_int_equal(pcstock_shm_write(s, a, "memory.current", "1"),
			 -EACCES);
	assert_int_equal(pcstock_shm_write(s, a, "memory.nope", "1"), -ENOENT);
	/* The kernel's memparse: 16E wraps to 0 pages. */
	assert_int_equal(pcstock_shm_write(s, a, "memory.high", "16E"), 0);
	assert_true(pcstock_shm_read(s, a, "memory.high", buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "0\n");
	assert_int_equal(pcstock_shm_charge(s, b, 8, 0), 0);
	assert_int_equal(pcstock_shm_uncharge(s, b, 8), 0);
	assert_true(pcstock_shm_read(s, a, "memory.peak", buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "32768\n");
	assert_int_equal(pcstock_shm_write(s, a, "memory.peak", "x"), 0);
	/* memory.peak shows the local watermark the write reset... */
	assert_true(pcstock_shm_read(s, a, "memory.peak", buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "0\n");
	/* ...and v1's file the global one, which it left alone. */
	assert_true(pcstock_shm_read(s, a, "memory.max_usage_in_bytes", buf,
				     sizeof(buf)) > 0);
	assert_string_equal(buf, "32768\n");
	assert_int_equal(pcstock_shm_write(s, a, "memory.max_usage_in_bytes",
					   ""), 0);
	assert_true(pcstock_shm_read(s, a, "memory.max_usage_in_bytes", buf,
				     sizeof(buf)) > 0);
	assert_string_equal(buf, "0\n");
	/* Overcommitted protection: shared in proportion (the kernel's). */
	assert_int_equal(pcstock_shm_write(s, a, "memory.min", "40K"), 0);
	assert_int_equal(pcstock_shm_write(s, b, "memory.min", "24K"), 0);
	assert_int_equal(pcstock_shm_write(s, c, "memory.min", "24K"), 0);
	assert_int_equal(pcstock_shm_charge(s, b, 8, 0), 0);
	assert_int_equal(pcstock_shm_charge(s, c, 8, 0), 0);
	assert_int_equal(pcstock_shm_calculate_protection(s, PCSTOCK_SHM_ROOT,
							  false), 0);
	assert_int_equal(pcstock_shm_effective_protection(s, a, &emin, &elow),
			 0);
	assert_int_equal(emin, 10);
	assert_int_equal(pcstock_shm_effective_protection(s, b, &emin, &elow),
			 0);
	assert_int_equal(emin, 5);
	assert_int_equal(elow, 0);
	assert_int_equal(pcstock_shm_effective_protection(s, c, &emin, &elow),
			 0);
	assert_int_equal(emin, 5);
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/*
 * Park 8 pages (the batch of the cases below) in CPU 1's slot of @g; false
 * on a machine with one CPU, where both ran on slot 0 (nothing to show).
 */
static bool park_on_cpu1(struct pcstock_shm *s, pcstock_shm_gid g)
{
	run_on_cpu(1);
	assert_int_equal(pcstock_shm_charge(s, g, 1, 0), 0);
	assert_int_equal(pcstock_shm_uncharge(s, g, 1), 0);
	run_on_cpu(0);
	if (pcstock_shm_stock_pages(s, g) == 8)
		return true;
	run_anywhere();
	pcstock_shm_detach(s);
	return false;
}

/*
 * cgroup v1's memory.failcnt: with track_failcnt, the level at which a
 * charge failed counts it (a private tree with the attribute does the
 * same); a write zeroes it; without the attribute it stays 0.
 */
static void test_failcnt(void **state)
{
	struct pcstock_shm_attr attr = { .max_groups = 8, .max_procs = 2,
					 .batch = PCSTOCK_SHM_NO_STOCK,
					 .track_failcnt = true };
	struct pcstock_shm *s, *v2 = create(8, 2, 0);
	pcstock_shm_gid a, b, a2;

	(void)state;
	assert_int_equal(pcstock_shm_create(NULL, &attr, &s), 0);
	a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	b = mkgroup(s, a, "b");
	a2 = mkgroup(v2, PCSTOCK_SHM_ROOT, "a");
	assert_int_equal(pcstock_shm_set_limit(s, a, PCSTOCK_LIMIT_MAX, 4), 0);
	assert_int_equal(pcstock_shm_set_limit(v2, a2, PCSTOCK_LIMIT_MAX, 4),
			 0);
	assert_int_equal(pcstock_shm_charge(s, b, 3, 0), 0);
	assert_int_equal(pcstock_shm_charge(s, b, 2, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_int_equal(pcstock_shm_charge(s, a, 5, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_int_equal(pcstock_shm_charge(v2, a2, 5, PCSTOCK_CHARGE_NOWAIT),
			 -ENOMEM);
	assert_file(s, a, "memory.failcnt", "2\n");
	assert_file(s, b, "memory.failcnt", "0\n");
	assert_file(v2, a2, "memory.failcnt", "0\n");
	assert_int_equal(pcstock_shm_write(s, a, "memory.failcnt", "0"), 0);
	assert_file(s, a, "memory.failcnt", "0\n");
	pcstock_shm_uncharge(s, b, 3);
	assert_int_equal(pcstock_shm_usage(s, PCSTOCK_SHM_ROOT), 0);
	assert_int_equal(pcstock_shm_detach(s), 0);
	assert_int_equal(pcstock_shm_detach(v2), 0);
}

/* A failing charge takes back what sits in another CPU's slot first. */
static void test_failing_charge_drains_every_cpu(void **state)
{
	struct pcstock_shm *s = create(8, 2, 8);
	pcstock_shm_gid a, b;

	(void)state;
	a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	b = mkgroup(s, a, "b");
	assert_int_equal(pcstock_shm_set_limit(s, a, PCSTOCK_LIMIT_MAX, 10), 0);
	if (!park_on_cpu1(s, b))
		skip();
	/* The stranding bound: a slot never holds more than the batch. */
	assert_true(pcstock_shm_stock_pages(s, b) <= 2 * 8);
	/* 8 pages parked on CPU 1; 10 fit only if they come back. */
	assert_int_equal(pcstock_shm_charge(s, b, 10, 0), 0);
	assert_int_equal(pcstock_shm_usage(s, a), 10);
	assert_int_equal(pcstock_shm_stock_pages(s, b), 0);
	run_anywhere();
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/* exact: a NOWAIT charge takes back other CPUs' slots before failing. */
static void test_exact_nowait_sees_every_slot(void **state)
{
	struct pcstock_shm_attr at = { .max_groups = 8, .max_procs = 2,
				       .nr_cpus = 2, .batch = 8 };
	struct pcstock_shm *s;
	pcstock_shm_gid a;

	(void)state;
	for (int exact = 0; exact < 2; exact++) {
		at.exact = exact;
		assert_int_equal(pcstock_shm_create(NULL, &at, &s), 0);
		a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
		assert_int_equal(pcstock_shm_set_limit(s, a, PCSTOCK_LIMIT_MAX,
						       10), 0);
		if (!park_on_cpu1(s, a))
			skip();
		assert_int_equal(pcstock_shm_charge(s, a, 10,
						    PCSTOCK_CHARGE_NOWAIT),
				 exact ? 0 : -ENOMEM);
		run_anywhere();
		assert_int_equal(pcstock_shm_detach(s), 0);
	}
}

/* ---- bad regions ------------------------------------------------------------------ */

/* A region's header rewritten at @off by @len bytes of @p. */
static void poke(int fd, off_t off, const void *p, size_t len)
{
	assert_int_equal(pwrite(fd, p, len, off), (ssize_t)len);
}

static void test_bad_regions(void **state)
{
	struct pcstock_shm *s = create(8, 2, 0), *w = NULL;
	struct shm_layout l;
	int fd = pcstock_shm_fd(s), junk;
	char bytes[8192];

	(void)state;
	assert_int_equal(pread(fd, &l, sizeof(l), 0), (ssize_t)sizeof(l));
	/* Another ABI, its checksum right: refused as such. */
	l.abi = PCSTOCK_SHM_ABI + 1;
	l.sum = shm_layout_sum(&l);
	poke(fd, 0, &l, sizeof(l));
	assert_int_equal(pcstock_shm_attach_fd(fd, &w), -EPROTONOSUPPORT);
	/* A corrupted byte: the checksum catches it. */
	l.abi = PCSTOCK_SHM_ABI;
	l.max_groups++;
	poke(fd, 0, &l, sizeof(l));
	assert_int_equal(pcstock_shm_attach_fd(fd, &w), -EBADMSG);
	/* A consistent header whose layout lies (sum recomputed). */
	l.sum = shm_layout_sum(&l);
	poke(fd, 0, &l, sizeof(l));
	assert_int_equal(pcstock_shm_attach_fd(fd, &w), -EBADMSG);
	l.max_groups--;
	l.sum = shm_layout_sum(&l);
	poke(fd, 0, &l, sizeof(l));
	assert_int_equal(pcstock_shm_attach_fd(fd, &w), 0);
	assert_int_equal(pcstock_shm_detach(w), 0);
	/* Not a region at all, and a truncated one. */
	junk = memfd_create("junk", MFD_CLOEXEC);
	memset(bytes, 0x5a, sizeof(bytes));
	poke(junk, 0, bytes, sizeof(bytes));
	assert_int_equal(pcstock_shm_attach_fd(junk, &w), -EBADMSG);
	assert_int_equal(ftruncate(junk, 0), 0);
	poke(junk, 0, &l, 16);
	assert_int_equal(pcstock_shm_attach_fd(junk, &w), -EBADMSG);
	/* The whole header, but smaller than it says. */
	assert_int_equal(ftruncate(junk, 0), 0);
	poke(junk, 0, &l, sizeof(l));
	assert_int_equal(ftruncate(junk, (off_t)(l.size / 2)), 0);
	assert_int_equal(pcstock_shm_attach_fd(junk, &w), -EMSGSIZE);
	close(junk);
	assert_int_equal(pcstock_shm_attach_fd(-1, &w), -EINVAL);
	assert_int_equal(pcstock_shm_attach_fd(fd, NULL), -EINVAL);
	assert_int_equal(pcstock_shm_detach(s), 0);
}

static void test_bad_attrs(void **state)
{
	struct pcstock_shm_attr a = { .max_groups = 1 };
	struct pcstock_shm *s;

	(void)state;
	assert_int_equal(pcstock_shm_create(NULL, &a, &s), -EINVAL);
	a.max_groups = 0;
	a.batch = PCSTOCK_STOCK_MAX_BATCH + 1;
	assert_int_equal(pcstock_shm_create(NULL, &a, &s), -EINVAL);
	a.batch = 0;
	a.max_procs = SHM_MAX_PROCS + 1;
	assert_int_equal(pcstock_shm_create(NULL, &a, &s), -EINVAL);
	/* shared.h's bounds: 2^20 groups at most. */
	a.max_procs = 0;
	a.max_groups = (1U << 20) + 1;
	assert_int_equal(pcstock_shm_create(NULL, &a, &s), -EINVAL);
	a.max_groups = 0;
	assert_int_equal(pcstock_shm_create("no-slash", NULL, &s), -EINVAL);
	assert_int_equal(pcstock_shm_create("/a/b", NULL, &s), -EINVAL);
	assert_int_equal(pcstock_shm_create(NULL, NULL, NULL), -EINVAL);
}

static void test_handles_misused(void **state)
{
	struct pcstock_shm *s = create(8, 2, 0), *w1, *w2, *w3;
	int fd = pcstock_shm_fd(s);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");

	(void)state;
	/* Two records: the creator's and one more. */
	assert_int_equal(pcstock_shm_attach_fd(fd, &w1), 0);
	assert_int_equal(pcstock_shm_attach_fd(fd, &w2), -EUSERS);
	assert_int_equal(pcstock_shm_detach(w1), 0);
	/* A detached handle used again. */
	assert_int_equal(pcstock_shm_detach(w1), -EBADF);
	assert_int_equal(pcstock_shm_charge(w1, a, 1, 0), -EBADF);
	assert_int_equal(pcstock_shm_uncharge(w1, a, 1), -EBADF);
	assert_int_equal(pcstock_shm_group_create(w1, a, "x", &a), -EBADF);
	assert_int_equal(pcstock_shm_recover(w1, NULL), -EBADF);
	assert_int_equal(pcstock_shm_fd(w1), -EBADF);
	assert_int_equal(pcstock_shm_charge(NULL, a, 1, 0), -EBADF);
	/* The freed record is taken again. */
	assert_int_equal(pcstock_shm_attach_fd(fd, &w3), 0);
	assert_int_equal(pcstock_shm_detach(w3), 0);
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/* ---- processes ------------------------------------------------------------------ */

static void test_fork_inherited_handle_and_own_attach(void **state)
{
	struct pcstock_shm *s = create(8, 4, 4);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	int fd = pcstock_shm_fd(s);
	pid_t pid;

	(void)state;
	pid = fork_checked();
	if (!pid) {
		struct pcstock_shm *w;

		/* The parent's handle is the parent's process. */
		if (pcstock_shm_charge(s, a, 1, 0) != -ECHILD ||
		    pcstock_shm_self(s) != -ECHILD)
			_exit(1);
		if (pcstock_shm_attach_fd(fd, &w) ||
		    pcstock_shm_charge(w, a, 5, 0) ||
		    pcstock_shm_self(w) == pcstock_shm_self(s))
			_exit(2);
		/* Leaves with 5 pages charged: its record stays. */
		_exit(pcstock_shm_detach(w) ? 3 : 0);
	}
	assert_int_equal(wait_child(pid), 0);
	/* Above the batch: charged alone, nothing for the slot. */
	assert_int_equal(pcstock_shm_usage(s, a), 5);
	assert_int_equal(pcstock_shm_proc_state(s, 1), PCSTOCK_SHM_PROC_LEFT);
	assert_int_equal(pcstock_shm_proc_charged(s, 1, a), 5);
	assert_int_equal(pcstock_shm_reap(s, 0, NULL), -EBUSY);
	{
		unsigned long pages;

		assert_int_equal(pcstock_shm_reap(s, 1, &pages), 0);
		assert_int_equal(pages, 5);
	}
	assert_int_equal(pcstock_shm_proc_state(s, 1), PCSTOCK_SHM_PROC_FREE);
	assert_int_equal(pcstock_shm_usage(s, a), 0);
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/* A child that charges, reports, then waits to be killed. */
static pid_t charging_child(int fd, pcstock_shm_gid g, unsigned long n,
			    int *ready)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork_checked();
	if (!pid) {
		struct pcstock_shm *w;
		char c = 1;

		close(p[0]);
		if (pcstock_shm_attach_fd(fd, &w) ||
		    pcstock_shm_charge(w, g, n, 0))
			c = 0;
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	*ready = p[0];
	return pid;
}

static void test_killed_process_recovered_and_reaped(void **state)
{
	struct pcstock_shm *s = create(8, 4, 4);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	pcstock_shm_gid b = mkgroup(s, a, "b");
	unsigned int dead;
	unsigned long pages;
	int ready;
	char c = 0;
	pid_t pid;

	(void)state;
	pid = charging_child(pcstock_shm_fd(s), b, 10, &ready);
	assert_int_equal(read(ready, &c, 1), 1);
	assert_int_equal(c, 1);
	close(ready);
	/* Alive: nothing to recover. */
	assert_int_equal(pcstock_shm_recover(s, &dead), 0);
	assert_int_equal(dead, 0);
	assert_int_equal(pcstock_shm_proc_pid(s, 1), pid);
	kill(pid, SIGKILL);
	assert_int_equal(wait_child(pid), 128 + SIGKILL);
	assert_int_equal(pcstock_shm_recover(s, &dead), 0);
	assert_int_equal(dead, 1);
	assert_int_equal(pcstock_shm_recoveries(s), 1);
	assert_int_equal(pcstock_shm_proc_state(s, 1), PCSTOCK_SHM_PROC_DEAD);
	assert_int_equal(pcstock_shm_proc_charged(s, 1, b), 10);
	assert_int_equal(pcstock_shm_reap(s, 1, &pages), 0);
	assert_int_equal(pages, 10);
	assert_int_equal(pcstock_shm_reap(s, 1, &pages), -EINVAL);
	pcstock_shm_drain(s, b);
	assert_int_equal(pcstock_shm_usage(s, a), 0);
	assert_int_equal(pcstock_shm_usage(s, PCSTOCK_SHM_ROOT), 0);
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/* A pidfd of a record's process: readable once it exits. */
static void test_pidfd_of_a_record(void **state)
{
	struct pcstock_shm *s = create(8, 4, 0);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	struct pollfd pfd = { .events = POLLIN };
	int ready;
	char c;
	pid_t pid;

	(void)state;
	pid = charging_child(pcstock_shm_fd(s), a, 1, &ready);
	assert_int_equal(read(ready, &c, 1), 1);
	close(ready);
	pfd.fd = pcstock_shm_proc_pidfd(s, 1);
	assert_true(pfd.fd >= 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	kill(pid, SIGKILL);
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	close(pfd.fd);
	assert_int_equal(pcstock_shm_proc_pidfd(s, 1), -ESRCH);
	assert_int_equal(pcstock_shm_proc_pidfd(s, 2), -EINVAL);
	assert_int_equal(wait_child(pid), 128 + SIGKILL);
	assert_int_equal(pcstock_shm_recover(s, NULL), 0);
	assert_int_equal(pcstock_shm_reap(s, 1, NULL), 0);
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/* A zombie (killed, not yet waited for) is dead too. */
static void test_zombie_counts_as_dead(void **state)
{
	struct pcstock_shm *s = create(8, 4, 0);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	unsigned int dead = 0;
	int ready;
	char c;
	pid_t pid;

	(void)state;
	pid = charging_child(pcstock_shm_fd(s), a, 2, &ready);
	assert_int_equal(read(ready, &c, 1), 1);
	close(ready);
	kill(pid, SIGKILL);
	for (int i = 0; i < 1000 && !dead; i++) {
		assert_int_equal(pcstock_shm_recover(s, &dead), 0);
		if (!dead)
			usleep(1000);
	}
	assert_int_equal(dead, 1);
	assert_int_equal(wait_child(pid), 128 + SIGKILL);
	assert_int_equal(pcstock_shm_reap(s, 1, NULL), 0);
	assert_int_equal(pcstock_shm_usage(s, a), 0);
	assert_int_equal(pcstock_shm_detach(s), 0);
}

/* The structure lock's holder dies: the next holder repairs and goes on. */
static void test_structure_lock_holder_dies(void **state)
{
	struct pcstock_shm *s = create(16, 4, 0);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	pcstock_shm_gid b = mkgroup(s, a, "b"), c, found;
	int fd = pcstock_shm_fd(s);
	pid_t pid;

	(void)state;
	pid = fork_checked();
	if (!pid) {
		struct pcstock_shm *w;

		if (pcstock_shm_attach_fd(fd, &w) || shm_tree_lock(w))
			_exit(1);
		/* Half a create: an index's fields written, never linked. */
		shm_group(w, 5)->parent = shm_gid_index(a);
		memcpy(shm_group(w, 5)->name, "half", 5);
		_exit(0);
	}
	assert_int_equal(wait_child(pid), 0);
	/* The lock comes back (EOWNERDEAD inside), repaired in a pause. */
	c = mkgroup(s, a, "c");
	assert_int_equal(pcstock_shm_recoveries(s), 1);
	assert_int_equal(pcstock_shm_group_lookup(s, a, "b", &found), 0);
	assert_true(found == b);
	assert_int_equal(pcstock_shm_group_lookup(s, a, "c", &found), 0);
	assert_true(found == c);
	assert_int_equal(pcstock_shm_group_lookup(s, a, "half", &found),
			 -ENOENT);
	/* The dead holder's record is found by the next recovery. */
	assert_int_equal(pcstock_shm_proc_state(s, 1), PCSTOCK_SHM_PROC_DEAD);
	assert_int_equal(pcstock_shm_reap(s, 1, NULL), 0);
	assert_int_equal(pcstock_shm_detach(s), 0);
}

static void test_attach_after_creator_died_or_left(void **state)
{
	char name[64];
	struct pcstock_shm *s, *w;
	pid_t pid;

	(void)state;
	snprintf(name, sizeof(name), "/pcstock-test-%d", (int)getpid());
	pcstock_shm_unlink(name);
	pid = fork_checked();
	if (!pid)
		/* Creates and dies without detaching. */
		_exit(pcstock_shm_create(name, NULL, &s) ? 1 : 0);
	assert_int_equal(wait_child(pid), 0);
	assert_int_equal(pcstock_shm_attach(name, &w), -EOWNERDEAD);
	/* Two supervisors on one name. */
	assert_int_equal(pcstock_shm_create(name, NULL, &s), -EEXIST);
	assert_int_equal(pcstock_shm_unlink(name), 0);
	assert_int_equal(pcstock_shm_attach(name, &w), -ENOENT);
	/* A creator that detached closes the region to newcomers. */
	assert_int_equal(pcstock_shm_create(name, NULL, &s), 0);
	assert_int_equal(pcstock_shm_attach(name, &w), 0);
	assert_int_equal(pcstock_shm_detach(s), 0);
	assert_int_equal(pcstock_shm_attach(name, &s), -EOWNERDEAD);
	assert_int_equal(pcstock_shm_detach(w), 0);
	assert_int_equal(pcstock_shm_unlink(name), 0);
}

/*
 * issue 33's trap across processes: an OOM callback kills a worker
 * asynchronously; the worker's pages are freed 3 ms later by another
 * process, into that process's CPU slot.  The waiting charge must see
 * them.
 */
static struct {
	pid_t freer;
	int go;
	int result;	/* what the callback returns once it let the freer go */
} oom_ctx;

static int oom_async(struct pcstock_shm *s, pcstock_shm_gid g, void *arg)
{
	char c = 1;

	(void)s;
	(void)g;
	(void)arg;
	if (oom_ctx.go < 0 || write(oom_ctx.go, &c, 1) != 1)
		return PCSTOCK_OOM_NONE;
	close(oom_ctx.go);
	oom_ctx.go = -1;
	return oom_ctx.result;
}

/*
 * @result: PCSTOCK_OOM_KILLED_ASYNC (a victim killed now, an OOM_KILL
 * event) or PCSTOCK_OOM_WAIT (an earlier victim still exiting, no event):
 * either way the charge waits for the pages and succeeds.
 */
static void async_victim_frees_in_another_process(int result)
{
	struct pcstock_shm *s = create(8, 4, 16);
	pcstock_shm_gid a = mkgroup(s, PCSTOCK_SHM_ROOT, "a");
	struct pcstock_shm_callbacks cb = { .oom = oom_async };
	int fd = pcstock_shm_fd(s), go[2], ready[2];
	pid_t pid;
	char c;

	assert_int_equal(pcstock_shm_set_limit(s, a, PCSTOCK_LIMIT_MAX, 8), 0);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	pid = fork_checked();
	if (!pid) {
		struct pcstock_shm *w;
		struct timespec ms3 = { 0, 3000000 };

		close(go[1]);
		close(ready[0]);
		run_on_cpu(1);
		if (pcstock_shm_attach_fd(fd, &w) ||
		    pcstock_shm_charge(w, a, 8, 0))
			_exit(1);
		c = 1;
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		nanosleep(&ms3, NULL);
		/* The victim's pages, freed the natural way. */
		_exit(pcstock_shm_uncharge(w, a, 8) ? 3 : 0);
	}
	close(go[0]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	oom_ctx.go = go[1];
	oom_ctx.result = result;
	run_on_cpu(0);
	assert_int_equal(pcstock_shm_set_callbacks(s, &cb), 0);
	assert_int_equal(pcstock_shm_charge(s, a, 4, 0), 0);
	assert_int_equal(wait_child(pid), 0);
	assert_int_equal(pcstock_shm_events(s, a, PCSTOCK_EVENT_OOM), 1);
	assert_int_equal(pcstock_shm_events(s, a, PCSTOCK_EVENT_OOM_KILL),
			 result == PCSTOCK_OOM_KILLED_ASYNC);
	assert_int_equal(pcstock_shm_usage(s, a), 4);
	run_anywhere();
	assert_int_equal(pcstock_shm_set_callbacks(s, NULL), 0);
	assert_int_equal(pcstock_shm_uncharge(s, a, 4), 0);
	assert_int_equal(pcstock_shm_detach(s), 0);
}

static void test_async_oom_victim_frees_in_another_process(void **state)
{
	(void)state;
	async_victim_frees_in_another_process(PCSTOCK_OOM_KILLED_ASYNC);
}

/* An OOM_WAIT (the victim already exiting) waits as the private tree does. */
static void test_oom_wait_waits_for_the_exiting_victim(void **state)
{
	(void)state;
	async_victim_frees_in_another_process(PCSTOCK_OOM_WAIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups_names_and_generations),
		cmocka_unit_test(test_destroyed_group_keeps_charges_until_given_back),
		cmocka_unit_test(test_charge_stock_and_limits),
		cmocka_unit_test(test_files_and_protection),
		cmocka_unit_test(test_failcnt),
		cmocka_unit_test(test_failing_charge_drains_every_cpu),
		cmocka_unit_test(test_exact_nowait_sees_every_slot),
		cmocka_unit_test(test_bad_regions),
		cmocka_unit_test(test_bad_attrs),
		cmocka_unit_test(test_handles_misused),
		cmocka_unit_test(test_fork_inherited_handle_and_own_attach),
		cmocka_unit_test(test_killed_process_recovered_and_reaped),
		cmocka_unit_test(test_pidfd_of_a_record),
		cmocka_unit_test(test_zombie_counts_as_dead),
		cmocka_unit_test(test_structure_lock_holder_dies),
		cmocka_unit_test(test_attach_after_creator_died_or_left),
		cmocka_unit_test(test_async_oom_victim_frees_in_another_process),
		cmocka_unit_test(test_oom_wait_waits_for_the_exiting_victim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
