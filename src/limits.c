// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * limits.c - the limit writers: memory.max (v2 and v1), memory.high,
 * memsw.max, memory.min and memory.low, the parse of their files' values,
 * and the effective protection.
 */
#include <pthread.h>
#include <string.h>

#include <pcstock/hierarchy.h>

#include "atomic.h"
#include "counter_read.h"
#include "group.h"
#include "internal.h"
#include "rcu.h"

/* ---- limits ------------------------------------------------------------ */

/*
 * A destroyed group's files are gone (kernfs: -ENODEV on a file still
 * open).  Checked before the value, as kernfs before the handler.
 */
static int check_online(const struct pcstock_group *g)
{
	if (!g || group_is_root(g))
		return -EINVAL;
	return pcs_load(&g->online, PCS_RELAXED) ? 0 : -ENODEV;
}

static int check_limit(const struct pcstock_group *g, unsigned long nr_pages)
{
	int err = check_online(g);

	if (err)
		return err;
	return nr_pages <= PCSTOCK_COUNTER_MAX ? 0 : -EINVAL;
}

/*
 * The limit writers that reclaim: from inside a reclaim or OOM callback
 * they would recurse into the callbacks or wait for the OOM lock the
 * thread holds.
 */
static int check_reclaiming_limit(struct pcstock_group *g,
				  unsigned long nr_pages)
{
	if (pcs_in_callback)
		return -EDEADLK;
	return check_limit(g, nr_pages);
}

/*
 * The v2 writers' loop head: pages above @limit, the first time after a
 * drain of the stock (which may be all it takes).
 */
static unsigned long excess_after_drain(struct pcstock_group *g,
					unsigned long limit, bool *drained)
{
	unsigned long usage = pcs_counter_usage(&g->memory);

	if (usage > limit && !*drained) {
		pcstock_group_drain_all(g);
		*drained = true;
		usage = pcs_counter_usage(&g->memory);
	}
	return usage > limit ? usage - limit : 0;
}

int pcstock_group_set_max(struct pcstock_group *g, unsigned long nr_pages)
{
	int nr_reclaims = PCSTOCK_MAX_RECLAIM_RETRIES;
	unsigned int rounds = 0, oom_calls = 0;
	unsigned long excess;
	bool drained = false;
	int err;

	err = check_reclaiming_limit(g, nr_pages);
	if (err)
		return err;
	/*
	 * memory_max_write(): an unconditional xchg.  Fully ordered (see the
	 * counter), so either a racing charge sees the new limit or the
	 * usage read below sees the charge.
	 */
	pcstock_counter_xchg_max(&g->memory, nr_pages);
	while ((excess = excess_after_drain(g, nr_pages, &drained))) {
		if (nr_reclaims) {
			if (!reclaim_progress(pcs_call_reclaim(g, excess),
					      &rounds))
				nr_reclaims--;
			continue;
		}
		if (!pcs_group_oom(g, 0, &oom_calls))
			break;
	}
	return 0;
}

int pcstock_group_set_high(struct pcstock_group *g, unsigned long nr_pages)
{
	int nr_retries = PCSTOCK_MAX_RECLAIM_RETRIES;
	unsigned int rounds = 0;
	unsigned long excess;
	bool drained = false;
	int err;

	err = check_reclaiming_limit(g, nr_pages);
	if (err)
		return err;
	pcstock_counter_set_high(&g->memory, nr_pages);
	while ((excess = excess_after_drain(g, nr_pages, &drained)))
		if (!reclaim_progress(pcs_call_reclaim(g, excess), &rounds) &&
		    !nr_retries--)
			break;
	return 0;
}

/*
 * mem_cgroup_resize_max(): v1, under the limit mutex, memory.max may not
 * exceed memsw.max; -EBUSY once a drain and then reclaim stop helping.
 */
static int resize_max(struct pcstock_group *g, unsigned long nr_pages,
		      bool memsw)
{
	struct pcstock_tree *t = g->tree;
	unsigned int rounds = 0;
	bool drained = false;
	int ret;

	for (;;) {
		pthread_mutex_lock(&t->limit_lock);
		if (t->attr.memsw &&
		    (memsw ? nr_pages < pcs_counter_max(&g->memory) :
			     nr_pages > pcs_counter_max(&g->memsw))) {
			pthread_mutex_unlock(&t->limit_lock);
			return -EINVAL;
		}
		ret = pcstock_counter_set_max(memsw ? &g->memsw : &g->memory,
					      nr_pages);
		pthread_mutex_unlock(&t->limit_lock);
		if (!ret)
			return 0;
		if (!drained) {
			pcstock_group_drain_all(g);
			drained = true;
			continue;
		}
		if (!reclaim_progress(pcs_call_reclaim(g, 1), &rounds))
			return -EBUSY;
	}
}

int pcstock_group_set_max_strict(struct pcstock_group *g,
				 unsigned long nr_pages)
{
	int err;

	err = check_reclaiming_limit(g, nr_pages);
	if (err)
		return err;
	return resize_max(g, nr_pages, false);
}

int pcstock_group_set_memsw_max(struct pcstock_group *g,
				unsigned long nr_pages)
{
	int err;

	err = check_reclaiming_limit(g, nr_pages);
	if (err)
		return err;
	if (!g->tree->attr.memsw)
		return -EOPNOTSUPP;
	return resize_max(g, nr_pages, true);
}

/*
 * memory.min and memory.low: the online check and the store under the tree
 * lock, so that a setter racing pcstock_group_destroy() either sees the
 * group offline or stores before destroy's reset to 0 (the kernel's
 * css_offline runs after the file's last writer).
 */
static int group_set_protection(struct pcstock_group *g,
				unsigned long nr_pages,
				void (*set)(struct pcstock_counter *,
					    unsigned long))
{
	int err = check_limit(g, nr_pages);

	if (err)
		return err;
	pthread_mutex_lock(&g->tree->lock);
	if (pcs_load(&g->online, PCS_RELAXED))
		set(&g->memory, nr_pages);
	else
		err = -ENODEV;
	pthread_mutex_unlock(&g->tree->lock);
	return err;
}

int pcstock_group_set_min(struct pcstock_group *g, unsigned long nr_pages)
{
	return group_set_protection(g, nr_pages, pcstock_counter_set_min);
}

int pcstock_group_set_low(struct pcstock_group *g, unsigned long nr_pages)
{
	return group_set_protection(g, nr_pages, pcstock_counter_set_low);
}

int pcs_group_write_limit(struct pcstock_group *g, enum pcstock_limit which,
			  const char *buf, const char *max_keyword)
{
	static int (*const setters[])(struct pcstock_group *, unsigned long) = {
		[PCSTOCK_LIMIT_MAX] = pcstock_group_set_max,
		[PCSTOCK_LIMIT_MAX_STRICT] = pcstock_group_set_max_strict,
		[PCSTOCK_LIMIT_HIGH] = pcstock_group_set_high,
		[PCSTOCK_LIMIT_MIN] = pcstock_group_set_min,
		[PCSTOCK_LIMIT_LOW] = pcstock_group_set_low,
		[PCSTOCK_LIMIT_MEMSW_MAX] = pcstock_group_set_memsw_max,
	};
	unsigned long nr_pages;
	size_t len;
	int err;

	if (!buf || (unsigned int)which >= sizeof(setters) /
						 sizeof(setters[0]))
		return -EINVAL;
	err = check_online(g);
	if (err)
		return err;
	/* strstrip(), then memparse over the whole value, any length */
	buf = pcs_strstrip(buf, &len);
	err = pcs_memparse_n(buf, len, max_keyword, &nr_pages);
	if (err)
		return err;
	return setters[which](g, nr_pages);
}

int pcstock_group_write_limit(struct pcstock_group *g,
			      enum pcstock_limit which, const char *buf)
{
	return pcs_group_write_limit(g, which, buf, "max");
}

struct pcstock_counter *pcs_group_counter(struct pcstock_group *g,
					  bool memsw)
{
	if (!memsw)
		return &g->memory;
	return g->tree->attr.memsw ? &g->memsw : NULL;
}

void pcstock_group_calculate_protection(struct pcstock_group *g)
{
	struct pcstock_group *pos;

	if (!g)
		return;
	rcu_lock();
	for_each_in_subtree(pos, g)
		pcstock_counter_calculate_protection(
			&g->memory, &pos->memory,
			g->tree->attr.recursive_protection);
	rcu_unlock();
}
