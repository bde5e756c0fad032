// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgroupfs.c - the memory controller's cgroup files over a group:
 * pcstock_group_read() and pcstock_group_write().
 *
 * One table row per file: the interface it belongs to (a tree that tracks
 * failcnt is cgroup v1, as the kernel tracks it exactly on v1 hierarchies),
 * whether it needs memsw accounting or a non-root group, and what it shows.
 * Reads print into the caller's buffer with snprintf() semantics; writes go
 * through the group layer's setters (the limit writers parse the value the
 * way the kernel's handlers do, "max" or "-1" being "no limit").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <pcstock/hierarchy.h>

#include "counter_read.h"
#include "group.h"

enum cf_show {
	CF_USAGE,		/* usage in bytes */
	CF_LIMIT,		/* a limit: v2 "max" or bytes, v1 bytes */
	CF_PEAK,		/* local watermark; a write resets it */
	CF_WATERMARK,		/* global watermark; a write resets both */
	CF_FAILCNT,		/* failcnt; a write zeroes it */
	CF_EVENTS,		/* memory.events */
	CF_EVENTS_LOCAL,	/* memory.events.local */
	CF_STAT,		/* memory.stat */
};

#define CF_V1 0x1U		/* exists on v1 trees */
#define CF_V2 0x2U		/* exists on v2 trees */
#define CF_MEMSW 0x4U		/* the memsw counter; memsw trees only */
#define CF_NOT_ON_ROOT 0x8U	/* the kernel's CFTYPE_NOT_ON_ROOT */

struct cfile {
	const char *name;
	unsigned char flags;
	unsigned char show;		/* enum cf_show */
	unsigned char limit;		/* enum pcstock_limit, for CF_LIMIT */
};

#define V2 (CF_V2 | CF_NOT_ON_ROOT)

static const struct cfile files[] = {
	{ "memory.current", V2, CF_USAGE, 0 },
	{ "memory.min", V2, CF_LIMIT, PCSTOCK_LIMIT_MIN },
	{ "memory.low", V2, CF_LIMIT, PCSTOCK_LIMIT_LOW },
	{ "memory.high", V2, CF_LIMIT, PCSTOCK_LIMIT_HIGH },
	{ "memory.max", V2, CF_LIMIT, PCSTOCK_LIMIT_MAX },
	{ "memory.peak", V2, CF_PEAK, 0 },
	{ "memory.events", V2, CF_EVENTS, 0 },
	{ "memory.events.local", V2, CF_EVENTS_LOCAL, 0 },
	{ "memory.swap.current", V2 | CF_MEMSW, CF_USAGE, 0 },
	{ "memory.swap.max", V2 | CF_MEMSW, CF_LIMIT,
	  PCSTOCK_LIMIT_MEMSW_MAX },
	{ "memory.stat", CF_V1 | CF_V2, CF_STAT, 0 },
	{ "memory.usage_in_bytes", CF_V1, CF_USAGE, 0 },
	{ "memory.limit_in_bytes", CF_V1, CF_LIMIT,
	  PCSTOCK_LIMIT_MAX_STRICT },
	{ "memory.max_usage_in_bytes", CF_V1, CF_WATERMARK, 0 },
	{ "memory.failcnt", CF_V1, CF_FAILCNT, 0 },
	{ "memory.memsw.usage_in_bytes", CF_V1 | CF_MEMSW, CF_USAGE, 0 },
	{ "memory.memsw.limit_in_bytes", CF_V1 | CF_MEMSW, CF_LIMIT,
	  PCSTOCK_LIMIT_MEMSW_MAX },
	{ "memory.memsw.max_usage_in_bytes", CF_V1 | CF_MEMSW, CF_WATERMARK,
	  0 },
	{ "memory.memsw.failcnt", CF_V1 | CF_MEMSW, CF_FAILCNT, 0 },
};

static bool group_v1(const struct pcstock_group *g)
{
	return pcstock_counter_track_failcnt(pcstock_group_memory(g));
}

/* The row for @name as @g's tree shows it, or NULL (-ENOENT). */
static const struct cfile *cfile_find(const struct pcstock_group *g,
				      const char *name)
{
	unsigned int want = group_v1(g) ? CF_V1 : CF_V2;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const struct cfile *f = &files[i];

		if (strcmp(f->name, name))
			continue;
		if (!(f->flags & want) ||
		    ((f->flags & CF_MEMSW) && !pcstock_group_memsw(g)) ||
		    ((f->flags & CF_NOT_ON_ROOT) && !pcstock_group_parent(g)))
			return NULL;
		return f;
	}
	return NULL;
}

/* snprintf() into a buffer filled piece by piece. */
struct out {
	char *buf;
	size_t size;
	size_t len;		/* of the whole text, as snprintf counts */
};

static void __attribute__((format(printf, 2, 3)))
out_printf(struct out *o, const char *fmt, ...)
{
	bool room = o->len < o->size;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->len : NULL,
		      room ? o->size - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static unsigned long bytes(unsigned long nr_pages)
{
	return nr_pages * PCSTOCK_PAGE_SIZE;
}

static unsigned long limit_of(const struct pcstock_counter *c,
			      enum pcstock_limit which)
{
	switch (which) {
	case PCSTOCK_LIMIT_HIGH:
		return pcs_counter_high(c);
	case PCSTOCK_LIMIT_MIN:
		return pcs_counter_min(c);
	case PCSTOCK_LIMIT_LOW:
		return pcs_counter_low(c);
	default:
		return pcs_counter_max(c);
	}
}

static void show_events(struct out *o, const unsigned long *ev)
{
	/*
	 * The lines and order of v6.17, the series' base ("sock_throttled"
	 * came in v6.19).  "low" needs reclaim and "oom_group_kill"
	 * memory.oom.group's kills, which the caller's callbacks own.
	 */
	out_printf(o, "low 0\nhigh %lu\nmax %lu\noom %lu\noom_kill %lu\n",
		   ev[PCSTOCK_EVENT_HIGH], ev[PCSTOCK_EVENT_MAX],
		   ev[PCSTOCK_EVENT_OOM], ev[PCSTOCK_EVENT_OOM_KILL]);
	out_printf(o, "oom_group_kill 0\n");
}

static void show_stat(struct out *o, const struct pcstock_group *g,
		      const struct pcstock_group_stats *st)
{
	out_printf(o, "charged %lu\nstock %lu\nrefused %lu\n",
		   bytes(st->usage_exact),
		   bytes(pcstock_group_stock_pages(g)), st->refused);
	out_printf(o, "stock_hit %lu\nstock_miss %lu\nstock_refill %lu\n",
		   st->stock.hits, st->stock.misses, st->stock.refills);
	out_printf(o, "stock_drain %lu\nstock_drained %lu\nstock_trim %lu\n",
		   st->stock.drains, bytes(st->stock.drained_pages),
		   bytes(st->stock.trims));
}

ssize_t pcstock_group_read(const struct pcstock_group *g, const char *file,
			   char *buf, size_t size)
{
	struct out o = { .buf = buf, .size = size };
	const struct pcstock_counter *c;
	struct pcstock_group_stats st;
	const struct cfile *f;
	char val[32];

	if (!g || !file || (!buf && size))
		return -EINVAL;
	f = cfile_find(g, file);
	if (!f)
		return -ENOENT;
	c = f->flags & CF_MEMSW ? pcstock_group_memsw(g) :
				  pcstock_group_memory(g);
	switch ((enum cf_show)f->show) {
	case CF_USAGE:
		out_printf(&o, "%lu\n", bytes(pcs_counter_usage(c)));
		break;
	case CF_LIMIT:
		if (group_v1(g))	/* v1 prints the number, even unlimited */
			out_printf(&o, "%lu\n", bytes(limit_of(c, f->limit)));
		else if (pcstock_format_size(limit_of(c, f->limit), val,
					     sizeof(val)) > 0)
			out_printf(&o, "%s\n", val);
		break;
	case CF_PEAK:
		out_printf(&o, "%lu\n",
			   bytes(pcs_counter_local_watermark(c)));
		break;
	case CF_WATERMARK:
		out_printf(&o, "%lu\n", bytes(pcs_counter_watermark(c)));
		break;
	case CF_FAILCNT:
		out_printf(&o, "%lu\n", pcs_counter_failcnt(c));
		break;
	case CF_EVENTS:
	case CF_EVENTS_LOCAL:
	case CF_STAT:
		pcstock_group_stats(g, &st);
		if (f->show == CF_STAT)
			show_stat(&o, g, &st);
		else
			show_events(&o, f->show == CF_EVENTS ?
						st.events : st.events_local);
		break;
	}
	return (ssize_t)o.len;
}

int pcstock_group_write(struct pcstock_group *g, const char *file,
			const char *buf)
{
	struct pcstock_counter *c;
	const struct cfile *f;

	if (!g || !file || !buf)
		return -EINVAL;
	f = cfile_find(g, file);
	if (!f)
		return -ENOENT;
	/*
	 * kernfs: a cgroup file takes at most a page per write
	 * (atomic_write_len), else -E2BIG; a removed file's writes fail
	 * with -ENODEV before its handler runs.
	 */
	if (strnlen(buf, PCSTOCK_PAGE_SIZE + 1) > PCSTOCK_PAGE_SIZE)
		return -E2BIG;
	if (!pcstock_group_online(g))
		return -ENODEV;
	c = pcs_group_counter(g, f->flags & CF_MEMSW);
	switch ((enum cf_show)f->show) {
	case CF_LIMIT:
		return pcs_group_write_limit(g, f->limit, buf,
					     group_v1(g) ? "-1" : "max");
	case CF_PEAK:
		pcstock_counter_reset_local_watermark(c);
		return 0;
	case CF_WATERMARK:
		pcstock_counter_reset_watermark(c);
		return 0;
	case CF_FAILCNT:
		pcstock_counter_reset_failcnt(c);
		return 0;
	default:
		return -EACCES;		/* a read-only file */
	}
}
