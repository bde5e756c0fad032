// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shm_files.c - a shared tree's cgroup files (v2 and v1 memory files, as
 * the kernel formats and parses them), its effective protection and its
 * readers (usage, events, stock).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pcstock/shared.h>

#include "counter_read.h"
#include "internal.h"
#include "shm.h"

/* The files a shared group has, and how each is shown or set. */
enum shm_show {
	SHOW_USAGE, SHOW_LIMIT, SHOW_PEAK, SHOW_EVENTS, SHOW_EVENTS_LOCAL,
	SHOW_FAILCNT
};

struct shm_file {
	const char *name;
	unsigned char show;		/* enum shm_show */
	bool v1;			/* bytes for "no limit", keyword -1 */
	signed char limit;		/* enum pcstock_limit, or -1 */
};

static const struct shm_file files[] = {
	{ "memory.current", SHOW_USAGE, false, -1 },
	{ "memory.min", SHOW_LIMIT, false, PCSTOCK_LIMIT_MIN },
	{ "memory.low", SHOW_LIMIT, false, PCSTOCK_LIMIT_LOW },
	{ "memory.high", SHOW_LIMIT, false, PCSTOCK_LIMIT_HIGH },
	{ "memory.max", SHOW_LIMIT, false, PCSTOCK_LIMIT_MAX },
	{ "memory.peak", SHOW_PEAK, false, -1 },
	{ "memory.events", SHOW_EVENTS, false, -1 },
	{ "memory.events.local", SHOW_EVENTS_LOCAL, false, -1 },
	{ "memory.usage_in_bytes", SHOW_USAGE, true, -1 },
	{ "memory.limit_in_bytes", SHOW_LIMIT, true, PCSTOCK_LIMIT_MAX },
	{ "memory.max_usage_in_bytes", SHOW_PEAK, true, -1 },
	{ "memory.failcnt", SHOW_FAILCNT, true, -1 },
};

static const struct shm_file *find_file(const char *name)
{
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!strcmp(files[i].name, name))
			return &files[i];
	return NULL;
}

/* The checks every file call starts with; 0 and *@out, or an errno. */
static int open_file(const struct pcstock_shm *s, const char *file,
		     const void *buf, const struct shm_file **out)
{
	int err = shm_check(s);

	if (err)
		return err;
	if (!file || !buf)
		return -EINVAL;
	*out = find_file(file);
	return *out ? 0 : -ENOENT;
}

static unsigned long limit_of(const struct pcstock_counter *m, int which)
{
	switch (which) {
	case PCSTOCK_LIMIT_MIN:
		return pcs_counter_min(m);
	case PCSTOCK_LIMIT_LOW:
		return pcs_counter_low(m);
	case PCSTOCK_LIMIT_HIGH:
		return pcs_counter_high(m);
	default:
		return pcs_counter_max(m);
	}
}

/* @f's value in @m (a count for failcnt, else pages). */
static unsigned long value_of(const struct pcstock_counter *m,
			      const struct shm_file *f)
{
	switch (f->show) {
	case SHOW_FAILCNT:
		return pcs_counter_failcnt(m);
	case SHOW_USAGE:
		return pcs_counter_usage(m);
	case SHOW_PEAK:
		/* v2's memory.peak: the local watermark its write resets. */
		return f->v1 ? pcs_counter_watermark(m) :
			       pcs_counter_local_watermark(m);
	default:
		return limit_of(m, f->limit);
	}
}

ssize_t pcstock_shm_read(struct pcstock_shm *s, pcstock_shm_gid gid,
			 const char *file, char *buf, size_t size)
{
	const struct shm_file *f;
	struct shm_group *g;
	unsigned long ev[PCSTOCK_NR_EVENTS], v = 0;
	int n, err = open_file(s, file, buf, &f);

	if (err)
		return err;
	/* As a private tree's root (CFTYPE_NOT_ON_ROOT): v1's files only. */
	if (!f->v1 && !shm_gid_index(gid))
		return -ENOENT;
	/*
	 * Everything read inside the window: after it, the gid's index may
	 * hold another group.
	 */
	shm_enter(s);
	g = group_of(s, gid, false);
	if (g) {
		for (int e = 0; e < PCSTOCK_NR_EVENTS; e++)
			ev[e] = pcs_load(f->show == SHOW_EVENTS_LOCAL ?
						 &g->events_local[e] :
						 &g->events[e],
					 PCS_RELAXED);
		v = value_of(&g->memory, f);
	}
	shm_exit(s);
	if (!g)
		return -ENOENT;
	if (f->show == SHOW_EVENTS || f->show == SHOW_EVENTS_LOCAL)
		/* The kernel's lines; "low" needs reclaim, never raised. */
		n = snprintf(buf, size,
			     "low 0\nhigh %lu\nmax %lu\noom %lu\noom_kill %lu\n"
			     "oom_group_kill 0\n",
			     ev[PCSTOCK_EVENT_HIGH], ev[PCSTOCK_EVENT_MAX],
			     ev[PCSTOCK_EVENT_OOM], ev[PCSTOCK_EVENT_OOM_KILL]);
	else if (f->show == SHOW_FAILCNT)
		n = snprintf(buf, size, "%lu\n", v);
	else if (f->show == SHOW_LIMIT && !f->v1 && v >= PCSTOCK_COUNTER_MAX)
		/* v2 shows "max" for no limit on all four; v1 bytes. */
		n = snprintf(buf, size, "max\n");
	else
		n = snprintf(buf, size, "%lu\n", v << PCSTOCK_PAGE_SHIFT);
	if (n < 0 || (size_t)n >= size)
		return -ERANGE;
	return n;
}

/*
 * A write to memory.peak resets the local watermark, to
 * memory.max_usage_in_bytes both, to memory.failcnt the count; what was
 * written is ignored, as in the kernel.
 */
static int reset(struct pcstock_shm *s, pcstock_shm_gid gid,
		 const struct shm_file *f)
{
	struct shm_group *g;

	shm_enter(s);
	g = group_of(s, gid, false);
	if (g && f->show == SHOW_FAILCNT)
		pcstock_counter_reset_failcnt(&g->memory);
	else if (g && f->v1)
		pcstock_counter_reset_watermark(&g->memory);
	else if (g)
		pcstock_counter_reset_local_watermark(&g->memory);
	shm_exit(s);
	return g ? 0 : -ENOENT;
}

int pcstock_shm_write(struct pcstock_shm *s, pcstock_shm_gid gid,
		      const char *file, const char *buf)
{
	const struct shm_file *f;
	unsigned long pages;
	size_t len;
	int err = open_file(s, file, buf, &f);

	if (err)
		return err;
	if (!f->v1 && !shm_gid_index(gid))
		return -ENOENT;		/* the root's: as in pcstock_shm_read() */
	if (f->show == SHOW_PEAK || f->show == SHOW_FAILCNT)
		return reset(s, gid, f);
	if (f->limit < 0)
		return -EACCES;
	/* As a private tree's: strstrip(), then memparse, any length. */
	buf = pcs_strstrip(buf, &len);
	err = pcs_memparse_n(buf, len, f->v1 ? "-1" : "max", &pages);
	if (err)
		return err;
	return pcstock_shm_set_limit(s, gid, (enum pcstock_limit)f->limit,
				     pages);
}

struct calc {
	struct pcstock_counter *root;
	bool recursive;
};

static void calc_one(struct pcstock_shm *s, uint32_t i, void *arg)
{
	struct calc *c = arg;

	shm_enter(s);
	shm_calc_protection(c->root, &shm_group(s, i)->memory, c->recursive);
	shm_exit(s);
}

int pcstock_shm_calculate_protection(struct pcstock_shm *s,
				     pcstock_shm_gid gid, bool recursive)
{
	struct calc c = { .recursive = recursive };
	struct shm_group *g;
	int err = shm_check(s);

	if (err)
		return err;
	shm_enter(s);
	g = group_of(s, gid, false);
	shm_exit(s);
	if (!g)
		return -ENOENT;
	c.root = &g->memory;
	/* Parents first: each level reads its parent's fresh values. */
	shm_walk_subtree(s, shm_gid_index(gid), calc_one, &c);
	return 0;
}

int pcstock_shm_effective_protection(struct pcstock_shm *s,
				     pcstock_shm_gid gid, unsigned long *emin,
				     unsigned long *elow)
{
	struct shm_group *g;
	int err = shm_check(s);

	if (err)
		return err;
	if (!emin || !elow)
		return -EINVAL;
	shm_enter(s);
	g = group_of(s, gid, true);
	if (g) {
		*emin = pcs_counter_emin(&g->memory);
		*elow = pcs_counter_elow(&g->memory);
	}
	shm_exit(s);
	return g ? 0 : -ENOENT;
}

/* ---- readers ---------------------------------------------------------------------- */

unsigned long pcstock_shm_usage(struct pcstock_shm *s, pcstock_shm_gid gid)
{
	struct shm_group *g;
	unsigned long v = 0;

	if (shm_check(s))
		return 0;
	shm_enter(s);
	g = group_of(s, gid, true);
	if (g)
		v = pcs_counter_usage(&g->memory);
	shm_exit(s);
	return v;
}

unsigned long pcstock_shm_events(struct pcstock_shm *s, pcstock_shm_gid gid,
				 enum pcstock_event ev)
{
	struct shm_group *g;
	unsigned long v = 0;

	if (shm_check(s) || (unsigned int)ev >= PCSTOCK_NR_EVENTS)
		return 0;
	shm_enter(s);
	g = group_of(s, gid, true);
	if (g)
		v = pcs_load(&g->events[ev], PCS_RELAXED);
	shm_exit(s);
	return v;
}

unsigned long pcstock_shm_stock_pages(struct pcstock_shm *s, pcstock_shm_gid gid)
{
	unsigned long v = 0;

	if (shm_check(s) || shm_gid_index(gid) >= s->max_groups)
		return 0;
	for (unsigned int c = 0; c < s->nr_cpus && s->batch; c++)
		v += pcs_load(shm_slot(s, c, shm_gid_index(gid)), PCS_RELAXED);
	return v;
}
