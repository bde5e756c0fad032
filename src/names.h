/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * names.h - a tree's name index: (parent, name) -> child, for lookups and
 * creates that cost O(1) whatever the number of siblings.
 *
 * One open-addressing table per tree (linear probing, tombstones), keyed by
 * the parent's address and the child's name, and placed by a hash of the
 * parent's seed and the name (name_hash()).  The seed is the parent's
 * serial number in its tree, never its address, so the same operations
 * build the same table in every run and every process: a test that needs
 * two names on one probe path can find them, and a replayed schedule
 * probes the same slots.  Unkeyed, as the kernel's dcache hash is not:
 * names chosen to collide slow the lookups of their parent, never their
 * results.  Readers run under RCU
 * (rcu.h) without locks; writers are serialised by the caller (the tree's
 * topology lock).  The table is rebuilt, never changed in size in place:
 * the rebuilt copy is published with a release store and the old one
 * freed after a grace period, so a reader keeps a consistent table for the
 * whole probe.
 */
#ifndef PCSTOCK_NAMES_H
#define PCSTOCK_NAMES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Embedded in each indexed object; every field immutable while indexed. */
struct name_key {
	const void *parent;
	const char *name;
	uint64_t seed;		/* the parent's (name_hash()) */
};

/* FNV-1a over @name[0..len), seeded with the parent's @seed. */
static inline size_t name_hash(uint64_t seed, const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 0x100000001b3ULL;
	}
	return (size_t)(h ^ (h >> 32));
}

struct name_slots;

struct name_index {
	_Atomic(struct name_slots *) slots;
};

/* Return: 0 or -ENOMEM. */
int name_index_init(struct name_index *ix);

/* No reader or writer may remain. */
void name_index_fini(struct name_index *ix);

/*
 * The key of @parent's child called @name[0..len), or NULL; @seed is
 * @parent's, as its children's keys carry it.  Under RCU or the writers'
 * lock; the object found may be going away (check it).
 */
struct name_key *name_index_find(struct name_index *ix, const void *parent,
				 uint64_t seed, const char *name, size_t len);

/* Writers' lock held, @k not indexed.  Return: 0 or -ENOMEM. */
int name_index_add(struct name_index *ix, struct name_key *k);

/* Writers' lock held, @k indexed. */
void name_index_del(struct name_index *ix, struct name_key *k);

#endif /* PCSTOCK_NAMES_H */
