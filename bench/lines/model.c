// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * model.c - the line model itself (lines.h): a directory of the cache
 * lines the simulated CPUs touch, the trace hook that feeds it the
 * library's accesses, the names of the lines it reports and the
 * synthetic topology that places the CPUs in packages.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <hwloc.h>

#include "lines.h"

/* ---- the directory ------------------------------------------------------ */

static struct lm_line *dir_slot(struct lm_line *tab, size_t cap,
				uintptr_t tag)
{
	size_t i = (size_t)(tag * 0x9E3779B97F4A7C15ULL) & (cap - 1);

	while (tab[i].tag && tab[i].tag != tag)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int dir_grow(struct lm_dir *d)
{
	size_t cap = d->cap ? 2 * d->cap : 4096, i;
	struct lm_line *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (i = 0; i < d->cap; i++)
		if (d->tab[i].tag)
			*dir_slot(tab, cap, d->tab[i].tag) = d->tab[i];
	free(d->tab);
	d->tab = tab;
	d->cap = cap;
	return 0;
}

struct lm_line *dir_find(struct lm_dir *d, uintptr_t tag)
{
	struct lm_line *l;

	if (2 * (d->used + 1) > d->cap && dir_grow(d))
		abort();	/* the model cannot go on without its table */
	l = dir_slot(d->tab, d->cap, tag);
	if (!l->tag) {
		l->tag = tag;
		l->owner = -1;
		l->first = -1;
		d->used++;
	}
	return l;
}

/* Count a transfer; 1: same package, 2: cross package. */
static unsigned int dir_transfer(struct lm_dir *d, struct lm_line *l,
				 unsigned int to, unsigned int from)
{
	bool remote = d->pkg[to] != d->pkg[from];

	d->xfer++;
	d->xfer_remote += remote;
	l->xfer++;
	l->xfer_remote += remote;
	return 1 + remote;
}

/*
 * One access of @cpu to the line holding @addr.  A read of a line that
 * another CPU holds modified is a transfer (perf c2c's HITM) and leaves
 * both with a shared copy; a write (store or RMW, failed CAS included:
 * x86 takes the line exclusive either way) by a CPU holding no copy of a
 * line that others hold is a transfer, from the modified holder if any,
 * else from a sharer in the writer's package if any.  A write
 * invalidates every other copy; a write by a sharer (an upgrade) moves no
 * data and counts its invalidations only.  A line nobody holds comes from
 * memory: no transfer.  Return: 0, or, when the access waits for another
 * core (a transfer, or an upgrade's invalidations), 1 if every core it
 * waits for is in its package, else 2; *@lp: the line.
 */
unsigned int dir_access(struct lm_dir *d, unsigned int cpu, uintptr_t addr,
			bool write, struct lm_line **lp)
{
	struct lm_line *l = dir_find(d, addr / LM_LINE);
	unsigned int w = cpu / 64, i;
	uint64_t bit = 1ULL << (cpu % 64), o;
	bool have = l->sharers[w] & bit;
	int src = l->owner, cand;
	unsigned int wait = 0;

	*lp = l;
	d->accesses++;
	l->acc++;
	if (l->first < 0)
		l->first = (int)cpu;
	if (!write) {
		if (have)
			return 0;
		l->sharers[w] |= bit;
		l->owner = -1;
		if (src < 0)
			return 0;
		return dir_transfer(d, l, cpu, (unsigned int)src);
	}
	if (l->owner == (int)cpu)
		return 0;
	for (i = 0; i < LM_WORDS; i++) {
		o = l->sharers[i] & ~(i == w ? bit : 0);
		d->inval += (unsigned long)__builtin_popcountll(o);
		for (; have && o && wait < 2; o &= o - 1) {
			cand = (int)(i * 64 + (unsigned)__builtin_ctzll(o));
			wait = d->pkg[cand] == d->pkg[cpu] ? 1 : 2;
		}
		for (; !have && o && (src < 0 || d->pkg[src] != d->pkg[cpu]);
		     o &= o - 1) {
			cand = (int)(i * 64 + (unsigned)__builtin_ctzll(o));
			if (src < 0 || d->pkg[cand] == d->pkg[cpu])
				src = cand;
		}
		l->sharers[i] = 0;
	}
	l->sharers[w] = bit;
	l->owner = (int)cpu;
	return src >= 0 ? dir_transfer(d, l, cpu, (unsigned int)src) : wait;
}

/*
 * Would @cpu's access (@write: store or RMW) to @l wait for another core:
 * a transfer, or an upgrade's invalidations?  dir_access()'s rule, without
 * applying it.
 */
bool dir_waits(const struct lm_line *l, unsigned int cpu, bool write)
{
	unsigned int w = cpu / 64, i;
	uint64_t bit = 1ULL << (cpu % 64);

	if (!write)
		return !(l->sharers[w] & bit) && l->owner >= 0;
	if (l->owner == (int)cpu)
		return false;
	for (i = 0; i < LM_WORDS; i++)
		if (l->sharers[i] & ~(i == w ? bit : 0))
			return true;
	return false;
}

/* Keep every line's state, forget what was counted (after a warm-up). */
void dir_zero(struct lm_dir *d)
{
	size_t i;

	for (i = 0; i < d->cap; i++) {
		d->tab[i].xfer = 0;
		d->tab[i].xfer_remote = 0;
		d->tab[i].acc = 0;
	}
	d->xfer = d->xfer_remote = d->inval = d->accesses = 0;
	d->stores = 0;
}

void dir_clear(struct lm_dir *d)
{
	free(d->tab);
	d->tab = NULL;
	d->cap = d->used = 0;
	dir_zero(d);
}

/* The @n most transferred lines, most first. */
unsigned int dir_hottest(const struct lm_dir *d, struct lm_line *out,
			 unsigned int n)
{
	unsigned int k = 0, j;
	size_t i;

	for (i = 0; i < d->cap; i++) {
		if (!d->tab[i].tag || !d->tab[i].xfer)
			continue;
		for (j = k < n ? k++ : n; j > 0 &&
		     out[j - 1].xfer < d->tab[i].xfer; j--)
			if (j < n)
				out[j] = out[j - 1];
		if (j < n)
			out[j] = d->tab[i];
	}
	return k;
}

/* ---- the trace ---------------------------------------------------------- */

struct lm_dir dir;
_Thread_local int sim_cpu = -1;
struct lm_queue *pending;

void trace_access(enum pcs_atomic_op op, const void *obj)
{
	struct lm_queue *q;
	struct lm_line *l;
	uintptr_t *v;

	if (sim_cpu < 0 || !obj)
		return;
	if (!pending) {
		dir_access(&dir, (unsigned int)sim_cpu, (uintptr_t)obj,
			   op != PCS_OP_LOAD, &l);
		dir.stores += op == PCS_OP_STORE;
		return;
	}
	q = &pending[sim_cpu];
	if (q->nr == q->room) {
		v = realloc(q->v, (q->room * 2 + 64) * sizeof(*v));
		if (!v)
			abort();	/* the replay cannot drop an access */
		q->v = v;
		q->room = q->room * 2 + 64;
	}
	/* Bits 0 and 1 do not change the line (LM_LINE > 3). */
	q->v[q->nr++] = ((uintptr_t)obj & ~(uintptr_t)3) |
			(op != PCS_OP_LOAD) | (op == PCS_OP_STORE) << 1;
}

/* ---- naming lines ------------------------------------------------------- */

void owner_add(const struct pcstock_counter *c, const char *label, void *arg)
{
	struct lm_owners *ow = arg;
	struct lm_owner *v;

	if (ow->nr == ow->room) {
		v = realloc(ow->v, (ow->room * 2 + 16) * sizeof(*v));
		if (!v)
			return;
		ow->v = v;
		ow->room = ow->room * 2 + 16;
	}
	ow->v[ow->nr].c = c;
	snprintf(ow->v[ow->nr].label, sizeof(ow->v[0].label), "%s", label);
	ow->nr++;
}

static bool in_line(const void *p, uintptr_t tag)
{
	return (uintptr_t)p / LM_LINE == tag;
}

/*
 * What line @tag holds: one of a counter's four lines (pcstock/counter.h
 * lays them out), or a stock slot or statistics of some CPU (the bench
 * peeks at the counter's arena handles for this name only), else the CPU
 * that touched it first.
 */
void line_name(const struct lm_owners *ow, const struct lm_line *l,
	       unsigned int nr_cpus, char *buf, size_t len)
{
	static const char *const part[] = {
		"usage", "protection", "limits", "stock descriptor",
	};
	const struct pcstock_counter *c;
	uintptr_t base;
	unsigned int i, cpu;
	bool slot, stats;

	for (i = 0; i < ow->nr; i++) {
		c = ow->v[i].c;
		base = (uintptr_t)c / LM_LINE;
		if (l->tag >= base && l->tag < base + 4) {
			snprintf(buf, len, "%s %s", ow->v[i].label,
				 part[l->tag - base]);
			return;
		}
		/* A group's memory counter opens it (group.c). */
		if (l->tag >= base + 4 && l->tag < base + 12) {
			snprintf(buf, len, "%s group +%#x", ow->v[i].label,
				 (unsigned int)(l->tag - base) * LM_LINE);
			return;
		}
	}
	for (i = 0; i < ow->nr; i++) {
		c = ow->v[i].c;
		if (!c->stock_domain)
			continue;
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			slot = in_line(pcstock_percpu_ptr(c->stock_domain,
							  c->stock_slots, cpu),
				       l->tag);
			stats = in_line(pcstock_percpu_ptr(c->stock_domain,
							   c->stock_stats,
							   cpu),
					l->tag);
			if (!slot && !stats)
				continue;
			snprintf(buf, len, "stock %s of cpu %u (%s)",
				 slot && stats ? "slot+stats" :
				 slot ? "slot" : "stats", cpu, ow->v[i].label);
			return;
		}
	}
	snprintf(buf, len, "unnamed line first used by cpu %d", l->first);
	if (ow->ring && l->tag >= (uintptr_t)ow->ring / LM_LINE &&
	    l->tag < (uintptr_t)(ow->ring + nr_cpus) / LM_LINE)
		snprintf(buf, len, "sock ring of cpu %u",
			 (unsigned int)((l->tag * LM_LINE -
					 (uintptr_t)ow->ring) /
					sizeof(*ow->ring)));
}

/* ---- topology ----------------------------------------------------------- */

/*
 * The topology for @n CPUs: the user's, else two packages of n / 4 cores
 * of two threads each when n is a multiple of 4 and at least 16 (n = 224
 * is the LKP machine, package:2 core:56 pu:2), else one package of n
 * cores (this machine's shape at 2).
 */
void topo_string(const char *user, unsigned int n, char *buf, size_t len)
{
	if (user)
		snprintf(buf, len, "%s", user);
	else if (n >= 16 && n % 4 == 0)
		snprintf(buf, len, "package:2 core:%u pu:2", n / 4);
	else
		snprintf(buf, len, "package:1 core:%u pu:1", n);
}

/* Simulated CPU i is PU P#i: its package's logical index, for each CPU. */
int topo_place(const char *desc, unsigned int n, int *pkg)
{
	hwloc_topology_t t;
	hwloc_obj_t pu, p;
	unsigned int i;
	int ret = 0;

	if (hwloc_topology_init(&t))
		return -ENOMEM;
	if (hwloc_topology_set_synthetic(t, desc) || hwloc_topology_load(t)) {
		hwloc_topology_destroy(t);
		return -EINVAL;
	}
	for (i = 0; i < n && !ret; i++) {
		pu = hwloc_get_pu_obj_by_os_index(t, i);
		if (!pu) {
			ret = -ERANGE;
			break;
		}
		p = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, pu);
		pkg[i] = p ? (int)p->logical_index : 0;
	}
	hwloc_topology_destroy(t);
	return ret;
}
