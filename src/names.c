// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * names.c - the name index of a tree (see names.h).
 *
 * Load: a table is rebuilt when live entries plus tombstones would pass
 * half of its slots, to the smallest power of two (at least MIN_SLOTS)
 * that keeps the live entries at or below a quarter.  Probes therefore
 * always end on an empty slot, a rebuild costs O(slots) once per
 * slots / 4 changes at least, and the table shrinks again after mass
 * deletions.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "atomic.h"
#include "internal.h"
#include "names.h"
#include "rcu.h"

#define MIN_SLOTS 16U

/* A deleted entry: probes go on past it. */
static struct name_key tombstone;
#define TOMBSTONE (&tombstone)

struct name_slots {
	size_t mask;		/* slots - 1 */
	size_t used;		/* live + tombstones (writers only) */
	size_t live;		/* writers only */
	struct rcu_head rcu;
	_Atomic(struct name_key *) slot[];
};

static bool key_is(const struct name_key *k, const void *parent,
		   const char *name, size_t len)
{
	return k->parent == parent && !strncmp(k->name, name, len) &&
	       !k->name[len];
}

static struct name_slots *slots_alloc(size_t n)
{
	struct name_slots *s;

	s = pcs_calloc(1, sizeof(*s) + n * sizeof(s->slot[0]), "names.slots");
	if (s)
		s->mask = n - 1;
	return s;
}

int name_index_init(struct name_index *ix)
{
	struct name_slots *s = slots_alloc(MIN_SLOTS);

	if (!s)
		return -ENOMEM;
	pcs_store(&ix->slots, s, PCS_RELAXED);
	return 0;
}

void name_index_fini(struct name_index *ix)
{
	free(pcs_load(&ix->slots, PCS_RELAXED));
}

struct name_key *name_index_find(struct name_index *ix, const void *parent,
				 uint64_t seed, const char *name, size_t len)
{
	/* Pairs with the release store in rebuild(). */
	struct name_slots *s =
		pcs_load(&ix->slots, PCS_ORDER(NAMES_FIND_TABLE, PCS_ACQUIRE));
	size_t i = name_hash(seed, name, len) & s->mask;
	struct name_key *k;

	/* Acquire pairs with the release store in name_index_add(). */
	for (; (k = pcs_load(&s->slot[i],
			     PCS_ORDER(NAMES_FIND_KEY, PCS_ACQUIRE)));
	     i = (i + 1) & s->mask)
		if (k != TOMBSTONE && key_is(k, parent, name, len))
			return k;
	return NULL;
}

/* The slot @k goes to in @s: the first empty or deleted one of its probe. */
static size_t free_slot(struct name_slots *s, const struct name_key *k)
{
	size_t i = name_hash(k->seed, k->name, strlen(k->name)) & s->mask;
	struct name_key *cur;

	while ((cur = pcs_load(&s->slot[i], PCS_RELAXED)) && cur != TOMBSTONE)
		i = (i + 1) & s->mask;
	return i;
}

static void slots_free_rcu(struct rcu_head *head)
{
	rcu_hb_acquire();
	free((char *)head - offsetof(struct name_slots, rcu));
}

/* A copy of @old's live entries in a table sized for them (see top). */
static int rebuild(struct name_index *ix, struct name_slots *old)
{
	size_t n = MIN_SLOTS;
	struct name_slots *s;

	while (n / 4 < old->live + 1)
		n *= 2;
	s = slots_alloc(n);
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i <= old->mask; i++) {
		struct name_key *k = pcs_load(&old->slot[i], PCS_RELAXED);

		if (k && k != TOMBSTONE) {
			/* Unpublished: the release below orders these. */
			pcs_store(&s->slot[free_slot(s, k)], k, PCS_RELAXED);
			s->live++;
		}
	}
	s->used = s->live;
	/* Release pairs with the acquire in name_index_find(). */
	pcs_store(&ix->slots, s, PCS_ORDER(NAMES_REBUILD, PCS_RELEASE));
	rcu_hb_release();
	pcs_call_rcu(&old->rcu, slots_free_rcu);
	return 0;
}

int name_index_add(struct name_index *ix, struct name_key *k)
{
	struct name_slots *s = pcs_load(&ix->slots, PCS_RELAXED);
	size_t i;

	if ((s->used + 1) * 2 > s->mask + 1) {
		int err = rebuild(ix, s);

		/* Without a rebuild, go on while an empty slot remains. */
		if (err && s->used + 1 > s->mask)
			return err;
		s = pcs_load(&ix->slots, PCS_RELAXED);
	}
	i = free_slot(s, k);
	if (!pcs_load(&s->slot[i], PCS_RELAXED))
		s->used++;
	s->live++;
	/* Release publishes *k; pairs with the acquire in name_index_find(). */
	pcs_store(&s->slot[i], k, PCS_ORDER(NAMES_ADD, PCS_RELEASE));
	return 0;
}

void name_index_del(struct name_index *ix, struct name_key *k)
{
	struct name_slots *s = pcs_load(&ix->slots, PCS_RELAXED);
	size_t i = name_hash(k->seed, k->name, strlen(k->name)) & s->mask;

	while (pcs_load(&s->slot[i], PCS_RELAXED) != k)
		i = (i + 1) & s->mask;
	/*
	 * Relaxed: a reader that still finds @k gets an object its owner
	 * has already marked as going away, and checks for that.
	 */
	pcs_store(&s->slot[i], TOMBSTONE, PCS_RELAXED);
	s->live--;
}
