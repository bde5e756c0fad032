// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shm.c - a shared tree's groups: the name index, create, lookup,
 * destroy, the recycling of a destroyed group's index, and the repair of
 * the structure after a lock holder's death.
 *
 * The group table is the truth: every step of a create or destroy leaves
 * it consistent, so that what it derives (the child lists, the name
 * index) can be rebuilt from it (shm_rebuild_structure()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <pcstock/shared.h>

#include "internal.h"
#include "names.h"
#include "shm.h"

static int valid_name(const char *name)
{
	size_t n;

	if (!name)
		return -EINVAL;
	n = strlen(name);
	if (!n || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return -EINVAL;
	if (n > PCSTOCK_SHM_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- the name index --------------------------------------------------------------- */

/*
 * Open addressing over (parent index, name), linear probing.  A bucket is
 * 0 (empty), NAME_TOMB (a removed name) or gid + 1 of a group; lookups
 * are lock-free and confirm every candidate against the group table.  The
 * hash is the private tree's (names.h), seeded with the parent's index.
 */
#define NAME_TOMB UINT64_MAX

static bool is_named(struct pcstock_shm *s, uint64_t entry, uint32_t parent,
		     const char *name, size_t len, unsigned int want_state)
{
	pcstock_shm_gid gid = entry - 1;
	struct shm_group *g;

	if (shm_gid_index(gid) >= s->max_groups)
		return false;
	g = shm_group(s, shm_gid_index(gid));
	return pcs_load(&g->state, PCS_ACQUIRE) == want_state &&
	       pcs_load(&g->gen, PCS_RELAXED) == shm_gid_gen(gid) &&
	       g->parent == parent && g->name_len == len &&
	       !memcmp(g->name, name, len);
}

static int name_find(struct pcstock_shm *s, uint32_t parent, const char *name,
		     pcstock_shm_gid *out)
{
	uint32_t mask = s->h->l.name_mask;
	size_t len = strlen(name);
	uint64_t h = name_hash(parent, name, strlen(name));

	for (uint32_t n = 0; n <= mask; n++) {
		atomic_ulong *b = &shm_names(s)[(h + n) & mask];
		uint64_t e = pcs_load(b, PCS_ACQUIRE);

		if (!e)
			return -ENOENT;
		if (e != NAME_TOMB &&
		    is_named(s, e, parent, name, len, GROUP_ONLINE)) {
			*out = e - 1;
			return 0;
		}
	}
	return -ENOENT;
}

/* Tree lock held. */
static int name_insert(struct pcstock_shm *s, uint32_t parent, const char *name,
		       pcstock_shm_gid gid)
{
	uint32_t mask = s->h->l.name_mask;
	uint64_t h = name_hash(parent, name, strlen(name));

	for (uint32_t n = 0; n <= mask; n++) {
		atomic_ulong *b = &shm_names(s)[(h + n) & mask];
		uint64_t e = pcs_load(b, PCS_RELAXED);

		if (!e || e == NAME_TOMB) {
			/* Release: the group's fields before its entry. */
			pcs_store(b, gid + 1, PCS_RELEASE);
			return 0;
		}
	}
	return -ENOSPC;
}

/* Tree lock held. */
static void name_remove(struct pcstock_shm *s, uint32_t parent,
			const char *name, pcstock_shm_gid gid)
{
	uint32_t mask = s->h->l.name_mask;
	uint64_t h = name_hash(parent, name, strlen(name));

	for (uint32_t n = 0; n <= mask; n++) {
		atomic_ulong *b = &shm_names(s)[(h + n) & mask];
		uint64_t e = pcs_load(b, PCS_RELAXED);

		if (!e)
			return;
		if (e == gid + 1) {
			pcs_store(b, NAME_TOMB, PCS_RELEASE);
			return;
		}
	}
}

/* ---- structure: create, destroy, recycle, repair ------------------------------------- */

static void list_unlink(struct pcstock_shm *s, uint32_t parent, uint32_t i)
{
	struct shm_group *p = shm_group(s, parent);
	atomic_uint *link = &p->first_child;
	uint32_t k;

	for (uint32_t n = 0; n < s->max_groups; n++) {
		k = pcs_load(link, PCS_RELAXED);
		if (k == SHM_NO_INDEX)
			return;
		if (k == i) {
			pcs_store(link,
				  pcs_load(&shm_group(s, i)->next_sibling,
					   PCS_RELAXED),
				  PCS_RELEASE);
			return;
		}
		link = &shm_group(s, k)->next_sibling;
	}
}

/*
 * May group @i (OFFLINE) take a new name?  Only once nothing refers to
 * its pages: usage 0, no slot, no figure, no child (tree lock held).
 */
static bool recyclable(struct pcstock_shm *s, uint32_t i)
{
	struct shm_group *g = shm_group(s, i);

	if (pcs_load(&g->state, PCS_RELAXED) != GROUP_OFFLINE ||
	    pcs_load(&g->memory.usage, PCS_RELAXED) ||
	    pcs_load(&g->first_child, PCS_RELAXED) != SHM_NO_INDEX)
		return false;
	for (unsigned int c = 0; c < s->nr_cpus; c++)
		if (pcs_load(shm_slot(s, c, i), PCS_RELAXED))
			return false;
	for (unsigned int p = 0; p <= s->max_procs; p++)
		if (pcs_load(shm_figure(s, p, i), PCS_RELAXED))
			return false;
	return true;
}

/* A FREE index, recycling an OFFLINE one if none is (tree lock held). */
static int take_index(struct pcstock_shm *s, uint32_t *out)
{
	uint32_t n = s->max_groups, start = s->h->next_free;

	if (start < 1 || start >= n)
		start = 1;
	for (uint32_t k = 0; k < n - 1; k++) {
		uint32_t i = 1 + (start - 1 + k) % (n - 1);

		if (pcs_load(&shm_group(s, i)->state, PCS_RELAXED) ==
		    GROUP_FREE) {
			*out = i;
			s->h->next_free = i + 1;
			return 0;
		}
	}
	for (uint32_t i = 1; i < n; i++) {
		struct shm_group *g = shm_group(s, i);

		if (!recyclable(s, i))
			continue;
		/*
		 * Old gids still pass group_of() for uncharges: close the
		 * door, wait for every window that may have passed it, then
		 * look again (a late uncharge would show as usage).
		 */
		pcs_store(&g->state, GROUP_FREE, PCS_SEQ_CST);
		shm_synchronize(s);
		if (pcs_load(&g->memory.usage, PCS_RELAXED)) {
			pcs_store(&g->state, GROUP_OFFLINE, PCS_RELEASE);
			continue;
		}
		list_unlink(s, g->parent, i);
		*out = i;
		return 0;
	}
	return -ENOSPC;
}

int pcstock_shm_group_create(struct pcstock_shm *s, pcstock_shm_gid parent,
			     const char *name, pcstock_shm_gid *out)
{
	struct shm_group *p, *g;
	pcstock_shm_gid gid, dup;
	uint32_t i, pi = shm_gid_index(parent), gen;
	int err = shm_check(s);

	if (err)
		return err;
	if (!out)
		return -EINVAL;
	err = valid_name(name);
	if (err)
		return err;
	err = shm_tree_lock(s);
	if (err)
		return err;
	shm_enter(s);
	p = group_of(s, parent, false);
	shm_exit(s);
	if (!p) {
		err = -ENOENT;
		goto out;
	}
	if (!name_find(s, pi, name, &dup)) {
		err = -EEXIST;
		goto out;
	}
	err = take_index(s, &i);
	if (err)
		goto out;
	g = shm_group(s, i);
	/*
	 * Every step leaves the table consistent for a repair: the group is
	 * FREE (invisible) until its last store.
	 */
	gen = pcs_load(&g->gen, PCS_RELAXED) + 1;
	if (!gen || gen == shm_gid_gen(PCSTOCK_SHM_ROOT))
		gen = 2;
	pcstock_counter_init(&g->memory, NULL, true);
	/* As mem_cgroup_css_alloc() (and a private tree): no high. */
	pcstock_counter_set_high(&g->memory, PCSTOCK_COUNTER_MAX);
	pcstock_counter_set_track_failcnt(&g->memory,
					  s->h->l.track_failcnt != 0);
	g->parent_rel = (char *)&p->memory - (char *)&g->memory;
	g->parent = pi;
	pcs_store(&g->first_child, SHM_NO_INDEX, PCS_RELAXED);
	for (int e = 0; e < PCSTOCK_NR_EVENTS; e++) {
		pcs_store(&g->events[e], 0, PCS_RELAXED);
		pcs_store(&g->events_local[e], 0, PCS_RELAXED);
	}
	g->name_len = (uint32_t)strlen(name);
	memcpy(g->name, name, g->name_len + 1);
	pcs_store(&g->gen, gen, PCS_RELAXED);
	gid = shm_make_gid(gen, i);
	err = name_insert(s, pi, name, gid);
	if (err)
		goto out;
	pcs_store(&g->next_sibling, pcs_load(&p->first_child, PCS_RELAXED),
		  PCS_RELAXED);
	pcs_store(&p->first_child, i, PCS_RELEASE);
	/* Release: every field above before the group is online. */
	pcs_store(&g->state, GROUP_ONLINE, PCS_RELEASE);
	pcs_store(shm_key_of(s, i), shm_key(gen, i, true), PCS_RELEASE);
	*out = gid;
out:
	shm_tree_unlock(s);
	return err;
}

int pcstock_shm_group_lookup(struct pcstock_shm *s, pcstock_shm_gid parent,
			     const char *path, pcstock_shm_gid *out)
{
	char name[PCSTOCK_SHM_NAME_MAX + 1];
	pcstock_shm_gid at = parent;
	int err = shm_check(s);

	if (err)
		return err;
	if (!out || !path || !*path)
		return -EINVAL;
	/* One component at a time, each a lock-free lookup under the last. */
	while (*path) {
		size_t len = strcspn(path, "/");

		if (len > PCSTOCK_SHM_NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, path, len);
		name[len] = '\0';
		if (valid_name(name))
			return -EINVAL;
		shm_enter(s);
		err = group_of(s, at, false) ?
			      name_find(s, shm_gid_index(at), name, &at) :
			      -ENOENT;
		shm_exit(s);
		if (err)
			return err;
		path += len;
		if (*path == '/' && !*++path)
			return -EINVAL;
	}
	*out = at;
	return 0;
}

pcstock_shm_gid pcstock_shm_group_parent(struct pcstock_shm *s,
					 pcstock_shm_gid g)
{
	struct shm_group *grp, *p;
	pcstock_shm_gid out = 0;

	if (shm_check(s))
		return 0;
	shm_enter(s);
	grp = group_of(s, g, true);
	if (grp && grp->parent != SHM_NO_INDEX) {
		p = shm_group(s, grp->parent);
		out = shm_make_gid(pcs_load(&p->gen, PCS_RELAXED), grp->parent);
	}
	shm_exit(s);
	return out;
}

int pcstock_shm_group_destroy(struct pcstock_shm *s, pcstock_shm_gid g)
{
	struct shm_group *grp;
	uint32_t i = shm_gid_index(g);
	int err = shm_check(s);

	if (err)
		return err;
	if (!i)
		return -EINVAL;
	err = shm_tree_lock(s);
	if (err)
		return err;
	shm_enter(s);
	grp = group_of(s, g, false);
	shm_exit(s);
	if (!grp) {
		err = -ENOENT;
		goto out;
	}
	for (uint32_t k = pcs_load(&grp->first_child, PCS_RELAXED);
	     k != SHM_NO_INDEX;
	     k = pcs_load(&shm_group(s, k)->next_sibling, PCS_RELAXED))
		if (pcs_load(&shm_group(s, k)->state, PCS_RELAXED) ==
		    GROUP_ONLINE) {
			err = -EBUSY;
			goto out;
		}
	/*
	 * Offline first (new charges see it), then the name, then wait for
	 * every window that saw it online (an uncharge may be refilling a
	 * slot, a setter writing its protection), then drain: nothing stays
	 * in an offline group's slots.  And, as the private tree's destroy
	 * (mem_cgroup_css_offline()), an offline group protects nothing,
	 * also while its pages are still held.
	 */
	pcs_store(shm_key_of(s, i), shm_key(shm_gid_gen(g), i, false),
		  PCS_SEQ_CST);
	pcs_store(&grp->state, GROUP_OFFLINE, PCS_SEQ_CST);
	name_remove(s, grp->parent, grp->name, g);
	shm_synchronize(s);
	shm_counter_clear_protection(s, i);
	shm_drain_index(s, i);
out:
	shm_tree_unlock(s);
	return err;
}

void shm_walk_subtree(struct pcstock_shm *s, uint32_t top,
		      void (*fn)(struct pcstock_shm *s, uint32_t i, void *arg),
		      void *arg)
{
	uint32_t i = top;

	/* Pre-order by the links alone, no stack; bounded by the table. */
	for (uint32_t n = 0; n < s->max_groups; n++) {
		struct shm_group *g = shm_group(s, i);
		uint32_t next;

		if (pcs_load(&g->state, PCS_ACQUIRE) != GROUP_FREE)
			fn(s, i, arg);
		next = pcs_load(&g->first_child, PCS_ACQUIRE);
		while (next == SHM_NO_INDEX) {
			if (i == top)
				return;
			next = pcs_load(&shm_group(s, i)->next_sibling,
					PCS_ACQUIRE);
			if (next == SHM_NO_INDEX) {
				i = shm_group(s, i)->parent;
				if (i >= s->max_groups)
					return;
			}
		}
		i = next;
	}
}

/*
 * After a structure-lock holder's death (inside a pause, both locks
 * held): the child lists and the name index are derived again from the
 * group table, and offline groups' slots drained.
 */
void shm_rebuild_structure(struct pcstock_shm *s)
{
	uint32_t mask = s->h->l.name_mask;

	for (uint32_t i = 0; i <= mask; i++)
		pcs_store(&shm_names(s)[i], 0, PCS_RELAXED);
	for (uint32_t i = 0; i < s->max_groups; i++)
		pcs_store(&shm_group(s, i)->first_child, SHM_NO_INDEX,
			  PCS_RELAXED);
	for (uint32_t i = 1; i < s->max_groups; i++) {
		struct shm_group *g = shm_group(s, i);
		unsigned int st = pcs_load(&g->state, PCS_RELAXED);
		struct shm_group *p;

		/* Within the recovery's pause: the keys keep its mark. */
		pcs_store(shm_key_of(s, i),
			  shm_key(pcs_load(&g->gen, PCS_RELAXED), i,
				  st == GROUP_ONLINE) | SHM_KEY_FROZEN,
			  PCS_RELAXED);
		if (st == GROUP_FREE || g->parent >= s->max_groups)
			continue;
		p = shm_group(s, g->parent);
		pcs_store(&g->next_sibling,
			  pcs_load(&p->first_child, PCS_RELAXED), PCS_RELAXED);
		pcs_store(&p->first_child, i, PCS_RELAXED);
		if (st == GROUP_ONLINE)
			name_insert(s, g->parent, g->name,
				    shm_make_gid(pcs_load(&g->gen, PCS_RELAXED),
						 i));
	}
}
