/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memcg7_fake.h - a fake owner of memcg7's keys (src/memcg7.h), for the
 * tests that run the cache alone: test_memcg7.c and the explorer's
 * memcg7 scenarios (tests/explore/explore_memcg7.c).  The cache sees a key
 * only through struct memcg7_ops; a struct memcg7_fake records what the
 * cache did to it.
 */
#ifndef PCSTOCK_TESTS_MEMCG7_FAKE_H
#define PCSTOCK_TESTS_MEMCG7_FAKE_H

#include <stdbool.h>

#include "memcg7.h"

/*
 * struct memcg7_fake - a key; zeroed, an online key that records
 * @uncharged: pages the cache gave back through ops->uncharge
 * @refs: references the cache holds (ops->get minus ops->put)
 * @offline: ops->online's answer negated, as a destroyed group's
 * @on_uncharge: NULL, or called after each uncharge of this key, from
 *               inside the cache (a key that dies in a drain)
 *
 * A test may keep its own books beside one: a struct whose first member
 * is a struct memcg7_fake is a key too (a pointer to a struct points to
 * its first member).
 */
struct memcg7_fake {
	unsigned long uncharged;
	long refs;
	bool offline;
	void (*on_uncharge)(struct memcg7_fake *k);
};

/* Its ops: @in_subtree is true for the key itself only (no hierarchy). */
extern const struct memcg7_ops memcg7_fake_ops;

#endif /* PCSTOCK_TESTS_MEMCG7_FAKE_H */
