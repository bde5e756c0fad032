// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * group.c - groups: create, destroy, lookup, walks, path, in a memcg-like
 * tree over counters and stocks.
 *
 * The tree.  Each group links to its parent (immutable) and to its first child
 * and next sibling (RCU-published atomics).  Writers (create, destroy)
 * serialise on the tree's lock; readers walk under urcu-bp.  A link store is a
 * release and a walker's load an acquire, so a walker sees a new group
 * initialised.  An unlinked group keeps its sibling pointer, so a walker
 * standing on it carries on; it is freed by call_rcu after its refcount drops
 * to zero (while its tree is destroyed: by the destroyer, after one grace
 * period for all), and its refcount only drops to zero after it is unlinked
 * (the tree holds a reference while it is linked).  A child holds a reference
 * on its parent until it is freed, so a group's parent chain, counters
 * included, outlives it.
 *
 * TSan and RCU: see rcu.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include <pcstock/hierarchy.h>

#include "atomic.h"
#include "group.h"
#include "internal.h"
#include "policy.h"
#include "names.h"
#include "rcu.h"

/* ---- groups -------------------------------------------------------------- */

/* As cgroupfs: not "." or "..", no '/'; also no control characters. */
static bool name_valid(const char *name)
{
	size_t len = strnlen(name, PCSTOCK_GROUP_NAME_MAX + 1);

	if (!len || len > PCSTOCK_GROUP_NAME_MAX || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	for (const unsigned char *p = (const void *)name; *p; p++)
		if (*p == '/' || *p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/*
 * Under RCU or the tree lock: the child of @parent named @name[0..len), if
 * it is indexed (only online groups are).
 */
static struct pcstock_group *find_child(struct pcstock_group *parent,
					const char *name, size_t len)
{
	struct name_key *k = name_index_find(&parent->tree->names, parent,
					     parent->serial, name, len);

	return k ? (void *)((char *)k - offsetof(struct pcstock_group, key)) :
		   NULL;
}

/* Release publishes @g's initialisation; pairs with next_pre()'s loads. */
static void link_child(struct pcstock_group *parent, struct pcstock_group *g)
{
	struct pcstock_group *next = pcs_load(&parent->children, PCS_RELAXED);

	pcs_store(&g->sibling, next, PCS_RELAXED);
	if (next)
		next->prev = g;
	pcs_store(&parent->children, g, PCS_ORDER(HIER_LINK, PCS_RELEASE));
}

/*
 * O(1) with the writers' back link.  @g keeps its sibling pointer: a
 * walker standing on it carries on.
 */
static void unlink_child(struct pcstock_group *parent, struct pcstock_group *g)
{
	struct pcstock_group *next = pcs_load(&g->sibling, PCS_RELAXED);

	if (next)
		next->prev = g->prev;
	/* Release: @next's initialisation, as in link_child(). */
	pcs_store(g->prev ? &g->prev->sibling : &parent->children, next,
		  PCS_ORDER(HIER_UNLINK, PCS_RELEASE));
}

int pcstock_group_create(struct pcstock_group *parent, const char *name,
			 struct pcstock_group **out)
{
	return pcstock_group_create_data(parent, name, NULL, out);
}

int pcstock_group_create_data(struct pcstock_group *parent, const char *name,
			      void *data, struct pcstock_group **out)
{
	struct pcstock_tree *t;
	struct pcstock_group *g;
	int err = 0;

	if (!parent || !name || !out || !name_valid(name))
		return -EINVAL;
	t = parent->tree;
	g = pcs_group_alloc(t, name);
	if (!g)
		return -ENOMEM;
	pcs_group_init(g, t, parent);
	g->data = data;
	g->serial = pcs_fetch_add(&t->next_serial, 1, PCS_RELAXED) + 1;
	g->key = (struct name_key){ .parent = parent, .name = g->name,
				    .seed = parent->serial };
	if (t->ops->group_init)
		t->ops->group_init(g);

	pthread_mutex_lock(&t->lock);
	if (!pcs_load(&parent->online, PCS_RELAXED))
		err = -ENOENT;
	else if (find_child(parent, name, strlen(name)))
		err = -EEXIST;
	else
		err = name_index_add(&t->names, &g->key);
	if (!err) {
		pcstock_group_get(parent);
		pcstock_group_get(g);	/* the caller's; the first is the tree's */
		pcs_fetch_add(&t->nr_groups, 1, PCS_RELAXED);
		link_child(parent, g);
	}
	pthread_mutex_unlock(&t->lock);
	if (err) {
		pcs_group_free(g);
		return err;
	}
	*out = g;
	return 0;
}

int pcstock_group_destroy(struct pcstock_group *g)
{
	struct pcstock_tree *t;

	if (!g)
		return -EINVAL;
	if (group_is_root(g))
		return -EBUSY;
	t = g->tree;
	pthread_mutex_lock(&t->lock);
	if (!pcs_load(&g->online, PCS_RELAXED)) {
		pthread_mutex_unlock(&t->lock);
		return -ENOENT;
	}
	if (pcs_load(&g->children, PCS_RELAXED)) {
		pthread_mutex_unlock(&t->lock);
		return -EBUSY;
	}
	/*
	 * Hits stop before online clears: whoever sees it clear (acquire)
	 * sees no key either.  A hit that read the key just before is a
	 * charge that read online just before, as in the kernel.
	 */
	pcs_store(&g->hit_key, 0, PCS_RELAXED);
	/*
	 * Release pairs with the acquire loads in group_charge_slow() and
	 * m7_online() (policy_memcg7.c); memcg7 refills test it under the
	 * CPU lock that the drain below takes after this store (owner
	 * variant: before their CPU runs the drain the one below queues after
	 * it).
	 */
	pcs_store(&g->online, false, PCS_ORDER(HIER_OFFLINE, PCS_RELEASE));
	/*
	 * mem_cgroup_css_offline(): an offline group protects nothing, also
	 * while its pages are still held.  Under the tree lock, as the
	 * setters' online check (group_set_protection()).
	 */
	pcstock_counter_set_min(&g->memory, 0);
	pcstock_counter_set_low(&g->memory, 0);
	name_index_del(&t->names, &g->key);
	unlink_child(g->parent, g);
	pthread_mutex_unlock(&t->lock);

	if (t->ops->group_offline)
		t->ops->group_offline(g);
	pcstock_group_put(g);
	return 0;
}

int pcstock_group_lookup(struct pcstock_group *from, const char *path,
			 struct pcstock_group **out)
{
	struct pcstock_group *g = from;
	const char *p = path;
	int err = 0;

	if (!from || !path || !out)
		return -EINVAL;
	while (*p == '/')
		p++;
	rcu_lock();
	while (*p && g) {
		size_t len = strcspn(p, "/");

		g = find_child(g, p, len);
		p += len;
		if (*p == '/' && *++p == '/') {
			err = -EINVAL;
			break;
		}
	}
	if (!err && (!g ||
		     !pcs_load(&g->online,
			       PCS_ORDER(HIER_LOOKUP_ONLINE, PCS_ACQUIRE)) ||
		     !group_tryget(g)))
		err = -ENOENT;
	rcu_unlock();
	if (!err)
		*out = g;
	return err;
}

/* Deepest first descendant of @pos (or @pos): where a post-order starts. */
static struct pcstock_group *leftmost_leaf(struct pcstock_group *pos)
{
	struct pcstock_group *c;

	/* Acquires pair with the release stores in link_child(). */
	while ((c = pcs_load(&pos->children,
			     PCS_ORDER(HIER_LEFTMOST, PCS_ACQUIRE))))
		pos = c;
	return pos;
}

/* Post-order successor of @pos within @root's subtree, under RCU. */
static struct pcstock_group *next_post(struct pcstock_group *pos,
				       struct pcstock_group *root)
{
	struct pcstock_group *next;

	if (pos == root)
		return NULL;
	next = pcs_load(&pos->sibling, PCS_ORDER(HIER_NEXT_POST, PCS_ACQUIRE));
	return next ? leftmost_leaf(next) : pos->parent;
}

static int walk(struct pcstock_group *root, pcstock_walk_fn fn, void *arg,
		bool post)
{
	struct pcstock_group *pos;
	int ret = 0;

	if (!root || !fn)
		return 0;
	rcu_lock();
	for (pos = post ? leftmost_leaf(root) : root; pos;
	     pos = post ? next_post(pos, root) : next_pre(pos, root)) {
		ret = fn(pos, arg);
		if (ret)
			break;
	}
	rcu_unlock();
	return ret;
}

int pcstock_group_walk(struct pcstock_group *root, pcstock_walk_fn fn,
		       void *arg)
{
	return walk(root, fn, arg, false);
}

int pcstock_group_walk_post(struct pcstock_group *root, pcstock_walk_fn fn,
			    void *arg)
{
	return walk(root, fn, arg, true);
}

int pcstock_group_path(const struct pcstock_group *g, char *buf, size_t size)
{
	const struct pcstock_group *pos;
	size_t len = 0, end;

	if (!g || (!buf && size))
		return -EINVAL;
	for (pos = g; !group_is_root(pos); pos = pos->parent)
		len += 1 + strlen(pos->name);
	if (!len)
		len = 1;		/* the root: "/" */
	if (!size)
		return (int)len;
	/* Fill from the end; only what falls inside @buf is written. */
	end = len;
	for (pos = g; !group_is_root(pos); pos = pos->parent) {
		size_t n = strlen(pos->name);

		end -= n;
		for (size_t i = 0; i < n; i++)
			if (end + i < size - 1)
				buf[end + i] = pos->name[i];
		if (--end < size - 1)
			buf[end] = '/';
	}
	if (size > 1)
		buf[0] = '/';
	buf[PCS_MIN(len, size - 1)] = '\0';
	return (int)len;
}

void *pcstock_group_data(const struct pcstock_group *g)
{
	return g ? g->data : NULL;
}

const char *pcstock_group_name(const struct pcstock_group *g)
{
	return g ? g->name : NULL;
}

struct pcstock_group *pcstock_group_parent(const struct pcstock_group *g)
{
	return g ? g->parent : NULL;
}

struct pcstock_tree *pcstock_group_tree(const struct pcstock_group *g)
{
	return g ? g->tree : NULL;
}

bool pcstock_group_online(const struct pcstock_group *g)
{
	return g && pcs_load(&g->online, PCS_ORDER(HIER_ONLINE, PCS_ACQUIRE));
}

const struct pcstock_counter *
pcstock_group_memory(const struct pcstock_group *g)
{
	return g ? &g->memory : NULL;
}

const struct pcstock_counter *
pcstock_group_memsw(const struct pcstock_group *g)
{
	return g && g->tree->attr.memsw ? &g->memsw : NULL;
}
